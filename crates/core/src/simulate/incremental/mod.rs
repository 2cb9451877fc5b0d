//! The incremental fluid engine.
//!
//! Max-min rates have a structure that progressive filling reveals: resources saturate in the
//! order of their *level* (the rate they give the flows they freeze), and every flow runs at the
//! level of its *bottleneck*, the first resource on its path to saturate. Flows that share a
//! bottleneck share a rate, so the state is kept per bottleneck *group*, not per flow:
//!
//! - a group's level, and a virtual clock counting the bytes any of its members has sent since the
//!   group formed; a member finishes when the clock reaches its target, so a level change costs
//!   nothing per member, and each group keeps a heap of its members' targets;
//! - a sparse matrix of *cells*: the flows of group `s` that cross resource `r`, with their count.
//!   A resource's level depends on its row only (the flows crossing it, grouped by the level they
//!   are frozen at elsewhere); a level change reaches the resources of its group's column only.
//!
//! An event (flows finishing or entering the sharing) re-runs progressive filling over the
//! resources it can affect, in level order as the original does (a sweep): a resource is taken up
//! only when an input of its row changes, at the lower of its old level (where it used to
//! saturate) and its new water level; the cascade stops where a level comes out unchanged. Groups
//! nothing reached keep their level, and their members are never looked at. The water level of a
//! resource is computed from its row exactly as progressive filling would find it, so the rates
//! are the from-scratch ones up to rounding; `Engine::Reference` is the oracle of the tests.
//!
//! Resources outside every group (unsaturated) are not swept: their load is kept up to date, and
//! one whose load goes over its capacity is swept again from the solution just found (which is the
//! max-min solution of the network without that resource's limit), until none is over.
//!
//! What an event costs is what it changes, and on a crossbar that is most of the solution: every
//! host link is a bottleneck, a flow ending raises its group's level, which raises the load its
//! members put on the links at their other end, which lowers those groups' levels, and so on
//! through the whole bipartite graph. On an all-to-all of random sizes an event changes the level
//! of about half of the groups (22 of them at 992 flows, 107 at 16,002: about flows^0.6, counted in
//! `Prediction::level_changes`), and each change reaches every resource its members cross (a
//! column of about n/4 cells for n hosts), so an event costs about as much as progressive filling
//! from scratch. Keeping one rate per group, as here, no engine can do with less than the level
//! changes, about flows^1.6 in all; this one, which follows each change to the resources it reaches,
//! grows as about flows^2 on crossbars, and as flows^0.6–0.9 on random networks and fat trees,
//! where an event stays local (`benchmarks/simulate_scale.py`).
//!
//! [`Sharing`] keeps the max-min solution from event to event. Its state is here; its parts
//! are in `cells` (the sparse matrix of cells and its hashing), `groups` (bottleneck groups,
//! their levels, clocks and finish times), `events` (flows entering and leaving, the update
//! after them), `rebuild` (progressive filling from scratch, then the groups it implies) and
//! `sweep` (the sweep and its cascade, and the unsaturated resources going over capacity);
//! `verify` checks every update in test builds. [`Incremental`] (in `engine`) drives it.

mod cells;
mod engine;
mod events;
mod groups;
mod queue;
mod rebuild;
mod sweep;
#[cfg(test)]
mod tests;
#[cfg(test)]
mod verify;

pub(super) use engine::Incremental;

use std::collections::{BinaryHeap, HashMap};
use std::hash::BuildHasherDefault;

use super::filling::{Due, Share};
use super::problem::Problem;
use cells::{Cell, PairHasher, Tally};
use queue::Queue;

/// Relative tolerance of the sweep: a resource saturates when its water level is within it of
/// the level being swept, a group's flows stay in it when their level is within it of the
/// saturating resource's, and an unsaturated resource is over its capacity beyond it.
const SWEEP_TOL: f64 = 1e-12;

/// Relative change under which a group keeps its level: rounding noise in a recomputed level must
/// not set off a cascade of recomputations that change nothing.
const LEVEL_TOL: f64 = 1e-13;

/// Relative margin below its capacity from which an unsaturated resource's load is recomputed
/// exactly and compared with it: loads are kept as sums of increments, whose rounding errors
/// stay far below this.
const NEAR_FULL: f64 = 1e-9;

/// No group.
const NONE: u32 = u32::MAX;

/// The group of a flow admitted since the last update, not yet in any cell.
const ARRIVING: u32 = u32::MAX - 1;

/// Max-min sharing of the network among the flows in it, kept from event to event.
struct Sharing<'a> {
    problem: &'a Problem,
    /// The pseudo-group of flows that entered the sharing and have no bottleneck yet; its id is
    /// the number of resources.
    fresh: u32,
    // Per flow.
    group: Vec<u32>,
    /// The group's clock value at which the flow is done (for a fresh flow: its bytes left).
    target: Vec<f64>,
    /// Where the flow's path starts in `slot`.
    path_start: Vec<u32>,
    /// Per (flow, path position): the flow's index in its cell's list.
    slot: Vec<u32>,
    /// Bumped whenever a flow's group or target changes, to invalidate heap entries.
    stamp: Vec<u32>,
    active: Vec<u32>,
    active_pos: Vec<u32>,
    // Per group (a resource, or `fresh`).
    level: Vec<f64>,
    count: Vec<u32>,
    clock: Vec<f64>,
    clock_at: Vec<f64>,
    members: Vec<BinaryHeap<Due>>,
    /// The largest target a member has had since the group formed (a bound on its last finish).
    last_target: Vec<f64>,
    /// Groups whose level or members changed since their finish time was last queued.
    changed: Vec<u32>,
    changed_flag: Vec<bool>,
    // Per resource.
    /// Sum of the rates of the flows crossing it (kept to spot unsaturated resources going over).
    load: Vec<f64>,
    row: Vec<Vec<u32>>,
    col: Vec<Vec<u32>>,
    cells: Vec<Cell>,
    tallies: Vec<Tally>,
    free_cells: Vec<u32>,
    index: HashMap<u64, u32, BuildHasherDefault<PairHasher>>,
    /// Each group's next finish time.
    finishes: Queue,
    // What the next update has to look at.
    pending: Vec<u32>,
    /// Whether the cells (and the loads) are laid out; see `drop_cells`.
    cells_built: bool,
    /// Flows that entered the sharing since the last update (their group is `ARRIVING`), and
    /// how many left it.
    arrivals: Vec<u32>,
    departures: usize,
    // Scratch of the rebuild, per resource and in all.
    rb_len: Vec<u32>,
    rb_start: Vec<u32>,
    rb_fill: Vec<u32>,
    rb_left: Vec<f64>,
    rb_count: Vec<u32>,
    rb_version: Vec<u64>,
    rb_share: Vec<f64>,
    rb_flows: Vec<u32>,
    rb_used: Vec<u32>,
    rb_lists: Vec<u32>,
    rb_bottleneck: Vec<u32>,
    rb_heap: BinaryHeap<Share>,
    // The sweep. Per-resource marks hold the number of the pass (or step) that set them, so that
    // nothing is cleared between passes.
    pass: u32,
    /// Saturated in this pass (its level is final).
    settled_in: Vec<u32>,
    /// Passed its old level in this pass without saturating (its members are unfrozen).
    vacated_in: Vec<u32>,
    /// Resources to take up in this pass, by key.
    queue: Queue,
    /// Unsaturated resources whose load rose, to compare with their capacity after the pass.
    check: Vec<u32>,
    checked_in: Vec<u32>,
    /// Resources whose row changed in the current step, with how far their water level may
    /// have dropped (see `touch`).
    touched: Vec<u32>,
    touched_in: Vec<u32>,
    touched_rise: Vec<f64>,
    touched_unbound: Vec<u32>,
    touched_was: Vec<f64>,
    step: u32,
    capture: Vec<u32>,
    demands: Vec<(f64, u32)>,
    /// Rebuilds and sweeps done, for the tests and the profile.
    rebuilds: u64,
    sweeps: u64,
    /// Groups whose level was set, each counted once per update (see
    /// `Prediction::level_changes`), and the update in which each group was last counted.
    level_changes: u64,
    level_counted_in: Vec<u32>,
    updates: u32,
}

impl<'a> Sharing<'a> {
    fn new(problem: &'a Problem) -> Self {
        let n = problem.flows.len();
        let resources = problem.capacities.len();
        let groups = resources + 1;
        let mut path_start = Vec::with_capacity(n);
        let mut total = 0u32;
        for f in &problem.flows {
            path_start.push(total);
            total += f.path.len() as u32;
        }
        Sharing {
            problem,
            fresh: resources as u32,
            group: vec![NONE; n],
            target: vec![0.0; n],
            path_start,
            slot: vec![0; total as usize],
            stamp: vec![0; n],
            active: Vec::new(),
            active_pos: vec![NONE; n],
            level: vec![f64::INFINITY; groups],
            count: vec![0; groups],
            clock: vec![0.0; groups],
            clock_at: vec![0.0; groups],
            members: (0..groups).map(|_| BinaryHeap::new()).collect(),
            last_target: vec![f64::NEG_INFINITY; groups],
            changed: Vec::new(),
            changed_flag: vec![false; groups],
            load: vec![0.0; resources],
            row: vec![Vec::new(); resources],
            col: vec![Vec::new(); groups],
            cells: Vec::new(),
            tallies: Vec::new(),
            free_cells: Vec::new(),
            index: HashMap::default(),
            finishes: Queue::new(groups),
            pending: Vec::new(),
            cells_built: false,
            arrivals: Vec::new(),
            departures: 0,
            rb_len: vec![0; resources],
            rb_start: vec![0; resources],
            rb_fill: vec![0; resources],
            rb_left: vec![0.0; resources],
            rb_count: vec![0; resources],
            rb_version: vec![0; resources],
            rb_share: vec![0.0; resources],
            rb_flows: Vec::new(),
            rb_used: Vec::new(),
            rb_lists: Vec::new(),
            rb_bottleneck: Vec::new(),
            rb_heap: BinaryHeap::new(),
            pass: 0,
            settled_in: vec![0; groups],
            vacated_in: vec![0; groups],
            queue: Queue::new(groups),
            check: Vec::new(),
            checked_in: vec![0; resources],
            touched: Vec::new(),
            touched_in: vec![0; groups],
            touched_rise: vec![0.0; groups],
            touched_unbound: vec![0; groups],
            touched_was: vec![0.0; groups],
            step: 1,
            capture: Vec::new(),
            demands: Vec::new(),
            rebuilds: 0,
            sweeps: 0,
            level_changes: 0,
            level_counted_in: vec![0; groups],
            updates: 0,
        }
    }

    fn path(&self, i: u32) -> &'a [u32] {
        let problem: &'a Problem = self.problem;
        &problem.flows[i as usize].path
    }
}

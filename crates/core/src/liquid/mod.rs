//! Exact search for liquid schedules (Gabrielyan & Hersch, paper 000 §3–6, paper 001 §3).
//!
//! A *traffic* is a list of transfers, each the set of resources (links) of its path. Every
//! resource `r` has `k_r` *slots*: it carries up to `k_r` transfers at once (an uplink ten times
//! faster than the hosts below it has ten). A frame is a set of transfers that puts no more
//! transfers on a resource than it has slots; with one slot everywhere this is the paper's "no
//! resource used twice". The *frame bound* Λ is the largest `⌈n_r / k_r⌉` over resources carrying
//! `n_r` transfers, the *bottlenecks* are the resources reaching it, and a schedule of Λ frames is
//! *liquid* (in frames; whether it is liquid in time is the caller's question, since frames may
//! last different times). A *team* is a frame using every bottleneck, and a frame is *full* when
//! no other remaining transfer fits in it (some resource of its path has no free slot).
//!
//! The search builds the schedule frame by frame. With `k` frames left, a resource carrying
//! `n_r > (k − 1)·k_r` remaining transfers is *critical*: this frame must carry at least
//! `n_r − (k − 1)·k_r` of them (with one slot: every remaining frame must use it). Each frame is a
//! full simultaneity of the remaining traffic meeting every critical demand — a full team of the
//! reduced traffic (Theorem 2 and §6.3). With `k = Λ − depth` this is the paper's liquid search;
//! with a larger target length the same search decides whether a schedule of that length exists,
//! which is how the optimum is found when no liquid schedule exists (paper 000 Fig. 7).
//!
//! Frames are enumerated by binary fission of categories (includer, depot, excluder), each full
//! simultaneity once (§4). Blank and idle categories are pruned (§4); with the skeleton speed-up
//! the transfers that use a critical resource are decided first and the resulting skeleton teams
//! are then extended by the other transfers (§5). Every reduction can be switched off, and
//! category nodes are counted, so the search-space reductions of paper 000 Fig. 6 can be measured.
//!
//! Beyond the paper, sub-traffics proven to have no schedule in `k` frames are remembered
//! (`memo`), so a set of frames reached in another order is not searched twice, and the branching
//! order is guided: the critical resource with the fewest candidates first, and among candidates
//! the transfers on the most loaded resources first.

use std::collections::HashMap;
use std::time::{Duration, Instant};

mod bounds;
mod symmetry;

use crate::coloring::{dsatur_until, first_fit};
use crate::error::{CoreError, CoreResult};
use crate::slots::{checked_slots, frames_for};
use bounds::Conflicts;
use symmetry::Group;

/// Which reductions the search uses, and its budgets.
#[derive(Debug, Clone)]
pub struct SearchOptions {
    /// Prune blank categories: an excluded transfer that nothing left in the depot conflicts
    /// with could always be added, so no full simultaneity is covered (§4).
    pub blank: bool,
    /// Prune idle categories: includer and depot together miss a critical resource (§4).
    pub idle: bool,
    /// Decide the skeleton (transfers on critical resources) first, then extend (§5).
    pub skeleton: bool,
    /// Frames are teams of the reduced traffic (Theorem 2), not only of the original one (§6.2).
    pub reduced: bool,
    /// Frames are full teams only (§6.3); off, every team is tried.
    pub full: bool,
    /// Remember sub-traffics that have no schedule in the frames left.
    pub memo: bool,
    /// Branch on the most constrained critical resource and the most loaded transfers first;
    /// off, branch on the lowest transfer index, as a plain fission does.
    pub guided: bool,
    /// When no liquid schedule exists, go on to find (and prove) the optimal length.
    pub optimize: bool,
    /// Stop after this many category nodes.
    pub node_limit: Option<u64>,
    /// Stop after this many seconds.
    pub time_limit: Option<f64>,
    /// Memory given to remembered sub-traffics, in bytes.
    pub memo_bytes: usize,
    /// Node budget of the first attempt of a search with restarts (traffics with slots); it
    /// doubles at each restart.
    pub first_attempt_nodes: u64,
    /// Prove lengths beyond Λ by transfers that conflict with every transfer of a bottleneck,
    /// before the search and at every node whose frames left a resource needs all of.
    pub bounds: bool,
    /// Automorphisms of the network (each a permutation of the resources: `perm[r]` is the image
    /// of `r`), the elements of a group acting freely on the transfers. When they are, and Λ is a
    /// multiple of the group's order, a liquid schedule whose frames the group covers is
    /// searched first (see `symmetry`). Elements that are not automorphisms of the traffic are
    /// ignored as a whole.
    pub symmetry: Vec<Vec<u32>>,
    /// Node budget of the symmetric attempt (it also gets at most half the time budget).
    pub symmetric_nodes: u64,
}

impl Default for SearchOptions {
    fn default() -> Self {
        SearchOptions {
            blank: true,
            idle: true,
            skeleton: true,
            reduced: true,
            full: true,
            memo: true,
            guided: true,
            optimize: true,
            node_limit: None,
            time_limit: None,
            memo_bytes: 256 << 20,
            first_attempt_nodes: 20_000,
            bounds: true,
            symmetry: Vec::new(),
            symmetric_nodes: 2_000_000,
        }
    }
}

/// Why a search ended before it was complete.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Budget {
    Nodes,
    Time,
}

/// Where the returned schedule comes from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Source {
    /// The exact search found it.
    Search,
    /// The deepest partial schedule of the search, completed by DSatur.
    Completion,
    /// DSatur on the whole traffic.
    Dsatur,
    /// The search found it, group by group, with the frames a symmetry group covers.
    Symmetric,
    /// The deepest partial schedule, completed greedily when DSatur did not fit in the budget.
    FirstFit,
}

/// Result of [`liquid_schedule`].
#[derive(Debug, Clone)]
pub struct SearchResult {
    /// Frames, each a sorted list of transfer indices.
    pub frames: Vec<Vec<u32>>,
    /// Duration Λ of the traffic.
    pub duration: u32,
    /// No schedule is shorter than this (proven: Λ, or more when lengths were exhausted).
    pub lower_bound: u32,
    /// The schedule has Λ frames.
    pub liquid: bool,
    /// The length equals the proven lower bound.
    pub optimal: bool,
    /// Category nodes explored (all fission steps, all target lengths).
    pub nodes: u64,
    /// Frames placed in the schedule tree (nodes of paper 000 Fig. 9).
    pub frames_tried: u64,
    /// Sub-traffics skipped because they were already known to have no schedule.
    pub memo_hits: u64,
    /// Set when a budget ran out; the schedule is then the best one known.
    pub stopped_by: Option<Budget>,
    pub source: Source,
    /// Attempts abandoned for a fresh one (traffics with slots only).
    pub restarts: u64,
    /// Largest memory the search's own tables took (remembered sub-traffics, per-frame state),
    /// in bytes; the remembered sub-traffics never exceed `memo_bytes`.
    pub memory_bytes: u64,
    /// Order of the symmetry group used (1 when none was).
    pub symmetry_order: u32,
}

/// Result of [`count_full_teams`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct TeamCount {
    /// Full teams of the traffic found.
    pub teams: u64,
    /// Category nodes explored.
    pub nodes: u64,
    /// False when the node limit stopped the enumeration.
    pub complete: bool,
}

/// The transfers of a traffic as resource lists, with the transfers and slots of each resource.
struct Traffic {
    paths: Vec<Vec<u32>>,
    users: Vec<Vec<u32>>,
    slots: Vec<u32>,
    /// Every resource has one slot: a skeleton transfer is then always blocked by the critical
    /// resource it uses, which spares the search some bookkeeping.
    unit: bool,
    words: usize,
    /// Transfers with the same path, in increasing index, for each transfer that has such
    /// copies (empty otherwise): the search treats copies as interchangeable.
    copies: Vec<std::sync::Arc<[u32]>>,
    /// Some transfer has a copy.
    has_copies: bool,
}

impl Traffic {
    fn new(paths: &[Vec<u32>], resources: usize, slots: &[u32]) -> CoreResult<Self> {
        if paths.len() > u32::MAX as usize / 2 {
            return Err(CoreError::TooLarge(format!("{} transfers", paths.len())));
        }
        let slots = checked_slots(slots, resources)?;
        let mut users: Vec<Vec<u32>> = vec![Vec::new(); resources];
        let mut clean = Vec::with_capacity(paths.len());
        for (t, path) in paths.iter().enumerate() {
            let mut p = path.clone();
            p.sort_unstable();
            p.dedup();
            for &r in &p {
                let slot = users.get_mut(r as usize).ok_or_else(|| {
                    CoreError::InvalidInput(format!(
                        "transfer {t} uses resource {r} but there are {resources}"
                    ))
                })?;
                slot.push(t as u32);
            }
            clean.push(p);
        }
        let copies = copies_of(&clean);
        Ok(Traffic {
            words: paths.len().div_ceil(64),
            has_copies: copies.iter().any(|c| !c.is_empty()),
            copies,
            paths: clean,
            users,
            unit: slots.iter().all(|&k| k == 1),
            slots,
        })
    }

    fn len(&self) -> usize {
        self.paths.len()
    }

    fn loads(&self) -> Vec<u32> {
        self.users.iter().map(|u| u.len() as u32).collect()
    }

    /// The frame bound Λ: the most frames one resource needs, `⌈n_r / k_r⌉`.
    fn duration(&self) -> u32 {
        self.users
            .iter()
            .zip(&self.slots)
            .map(|(u, &k)| frames_for(u.len() as u32, k))
            .max()
            .unwrap_or(0)
    }

    /// Branching weight of transfer `t`: the frames its resources still need, summed.
    fn weight(&self, t: u32, load: &[u32]) -> u64 {
        self.paths[t as usize]
            .iter()
            .map(|&r| frames_for(load[r as usize], self.slots[r as usize]) as u64)
            .sum()
    }
}

/// For each transfer, the transfers with the same (sorted) path, itself included, when there
/// are at least two; an empty list otherwise.
fn copies_of(paths: &[Vec<u32>]) -> Vec<std::sync::Arc<[u32]>> {
    let mut by_path: HashMap<&[u32], Vec<u32>> = HashMap::new();
    for (t, p) in paths.iter().enumerate() {
        by_path.entry(p.as_slice()).or_default().push(t as u32);
    }
    let none: std::sync::Arc<[u32]> = std::sync::Arc::from(Vec::new());
    let mut copies = vec![none; paths.len()];
    for group in by_path.into_values() {
        if group.len() > 1 {
            let shared: std::sync::Arc<[u32]> = std::sync::Arc::from(group);
            for &t in shared.iter() {
                copies[t as usize] = shared.clone();
            }
        }
    }
    copies
}

/// The copies of transfer `t` (empty when it has none).
#[inline]
fn tr_copies(traffic: &Traffic, t: u32) -> &[u32] {
    &traffic.copies[t as usize]
}

#[inline]
fn has(bits: &[u64], t: u32) -> bool {
    bits[(t / 64) as usize] & (1 << (t % 64)) != 0
}

#[inline]
fn put(bits: &mut [u64], t: u32) {
    bits[(t / 64) as usize] |= 1 << (t % 64);
}

#[inline]
fn take(bits: &mut [u64], t: u32) {
    bits[(t / 64) as usize] &= !(1 << (t % 64));
}

fn members(bits: &[u64]) -> impl Iterator<Item = u32> + '_ {
    bits.iter().enumerate().flat_map(|(w, &word)| {
        let mut rest = word;
        std::iter::from_fn(move || {
            if rest == 0 {
                return None;
            }
            let b = rest.trailing_zeros();
            rest &= rest - 1;
            Some((w * 64) as u32 + b)
        })
    })
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Outcome {
    /// A schedule was completed; the search state holds it.
    Found,
    /// This subtree holds no schedule.
    Exhausted,
    /// A budget ran out.
    Stopped,
}

/// What to do with each frame the fission yields.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Mode {
    /// Place it and search the rest of the schedule.
    Schedule,
    /// Count it and go on (full-team enumeration of paper 000 Fig. 6).
    Count,
}

/// The fission state of one frame of the schedule tree. Kept per depth and reused, so the
/// search allocates only when it first reaches a depth.
#[derive(Default)]
struct Level {
    /// Critical resources of this frame.
    critical: Vec<u32>,
    /// Transfers this frame must put on each resource (0 unless critical).
    demand: Vec<u32>,
    /// Remaining transfers outside the skeleton on each resource (with slots and the skeleton
    /// speed-up only: they may still fill a resource once the skeleton team is complete).
    outside: Vec<u32>,
    /// Remaining transfers in branching order (dropped while deeper levels run, and rebuilt,
    /// identically, if the search comes back).
    order: Vec<u32>,
    depot: Vec<u64>,
    /// Depot transfers using each resource.
    depot_load: Vec<u32>,
    /// Transfers of the includer on each resource.
    used: Vec<u32>,
    includer: Vec<u32>,
    excluder: Vec<u32>,
    /// Transfers taken out of the depot, in order, so that they can be put back.
    log: Vec<u32>,
    /// Critical resources whose demand the includer does not meet yet.
    uncovered: usize,
    /// Where the excluder of the current phase starts (the skeleton phase's excluder is
    /// satisfied once the skeleton team is complete).
    excluder_start: usize,
}

/// Frames left and remaining transfers of a sub-traffic with no schedule.
type FailedState = (u32, Box<[u64]>);

struct Search<'a> {
    traffic: &'a Traffic,
    opts: &'a SearchOptions,
    mode: Mode,
    /// Target length of the schedule.
    target: u32,
    /// Original loads (the bottlenecks of the whole traffic, for the naive search).
    load0: Vec<u32>,
    rem: Vec<u64>,
    rem_count: usize,
    load: Vec<u32>,
    frames: Vec<Vec<u32>>,
    best_partial: Vec<Vec<u32>>,
    /// Scratch of the branching order: remaining transfers with their weights, and a count
    /// per weight.
    weighted: Vec<(u32, u32)>,
    /// Branching weight of every remaining transfer at the current level (computed with the
    /// order; a level that is returned to computes its order, and so these, again).
    weight_now: Vec<u32>,
    per_weight: Vec<u32>,
    levels: Vec<Level>,
    /// Sub-traffics with no schedule in `k` frames, by a hash of `(k, remaining)`.
    failed: HashMap<u64, Vec<FailedState>>,
    failed_count: usize,
    memo_capacity: usize,
    nodes: u64,
    frames_tried: u64,
    memo_hits: u64,
    teams_counted: u64,
    deadline: Option<Instant>,
    stopped_by: Option<Budget>,
    /// Restarts (traffics with slots): the node count at which this attempt gives up, whether
    /// it did, and the tie-break of this attempt (0: transfer index).
    attempt_end: Option<u64>,
    restart_due: bool,
    salt: u32,
    restarts: u64,
    /// Copies of a path are interchangeable: merged when scheduling (not when counting teams,
    /// which counts every set of transfers).
    interchangeable: bool,
    /// Scratch of the tight-resource test (when `opts.bounds`, scheduling, and the traffic is
    /// small enough for it: see `TIGHT_TEST_TRANSFERS`).
    conflicts: Option<Conflicts>,
    /// Symmetric search: every frame placed comes with its images under the group.
    group: Option<&'a Group>,
}

impl<'a> Search<'a> {
    fn new(
        traffic: &'a Traffic,
        opts: &'a SearchOptions,
        mode: Mode,
        deadline: Option<Instant>,
    ) -> Self {
        let n = traffic.len();
        let mut rem = vec![0u64; traffic.words];
        for t in 0..n as u32 {
            put(&mut rem, t);
        }
        let load = traffic.loads();
        Search {
            traffic,
            opts,
            mode,
            target: 0,
            load0: load.clone(),
            rem,
            rem_count: n,
            load,
            frames: Vec::new(),
            best_partial: Vec::new(),
            weighted: Vec::new(),
            weight_now: if opts.guided { vec![0; n] } else { Vec::new() },
            per_weight: Vec::new(),
            levels: Vec::new(),
            failed: HashMap::new(),
            failed_count: 0,
            memo_capacity: opts.memo_bytes / (traffic.words.max(1) * 8 + 48),
            nodes: 0,
            frames_tried: 0,
            memo_hits: 0,
            teams_counted: 0,
            deadline,
            stopped_by: None,
            attempt_end: None,
            restart_due: false,
            salt: 0,
            restarts: 0,
            interchangeable: mode == Mode::Schedule && traffic.has_copies,
            conflicts: (opts.bounds && mode == Mode::Schedule && n <= TIGHT_TEST_TRANSFERS)
                .then(|| Conflicts::new(traffic)),
            group: None,
        }
    }

    /// Tie-break key of transfer `t` in this attempt: its index, or a fixed bijective mix of it.
    #[inline]
    fn tie(&self, t: u32) -> u32 {
        if self.salt == 0 {
            t
        } else {
            (t ^ self.salt).wrapping_mul(0x9E37_79B9)
        }
    }

    /// Every transfer remaining again, for a fresh attempt.
    fn reset(&mut self) {
        self.rem.iter_mut().for_each(|w| *w = 0);
        for t in 0..self.traffic.len() as u32 {
            put(&mut self.rem, t);
        }
        self.rem_count = self.traffic.len();
        self.load = self.traffic.loads();
        self.frames.clear();
    }

    /// Count a category node; false when a budget has run out.
    fn visit(&mut self) -> bool {
        self.nodes += 1;
        if let Some(limit) = self.opts.node_limit {
            if self.nodes > limit {
                self.stopped_by = Some(Budget::Nodes);
                return false;
            }
        }
        if self.nodes.is_multiple_of(256) {
            if let Some(deadline) = self.deadline {
                if Instant::now() >= deadline {
                    self.stopped_by = Some(Budget::Time);
                    return false;
                }
            }
        }
        if self.attempt_end.is_some_and(|end| self.nodes > end) {
            self.restart_due = true;
            return false;
        }
        true
    }

    /// Search a schedule of the remaining traffic in the frames left at `depth`.
    fn level(&mut self, depth: usize) -> Outcome {
        if self.rem_count == 0 {
            return Outcome::Found;
        }
        let k = self.target.saturating_sub(depth as u32);
        if k == 0 {
            return Outcome::Exhausted;
        }
        // A level costs time in proportion to the remaining traffic, far more than a node on
        // large traffics: the clock is read at every one, not only every 256 nodes.
        if self.deadline.is_some_and(|d| Instant::now() >= d) {
            self.stopped_by = Some(Budget::Time);
            return Outcome::Stopped;
        }
        if self.opts.reduced
            && self
                .load
                .iter()
                .zip(&self.traffic.slots)
                .any(|(&l, &s)| l as u64 > k as u64 * s as u64)
        {
            return Outcome::Exhausted;
        }
        if let Some(scratch) = self.conflicts.as_mut() {
            if bounds::tight_resource_blocked(self.traffic, &self.rem, &self.load, k, scratch) {
                return Outcome::Exhausted;
            }
        }
        let key = if self.opts.memo {
            rem_hash(k, &self.rem)
        } else {
            0
        };
        if self.opts.memo && self.known_to_fail(key, k) {
            self.memo_hits += 1;
            return Outcome::Exhausted;
        }
        self.prepare_level(depth, k);
        let out = self.category(depth, self.opts.skeleton, 0);
        if out == Outcome::Exhausted && self.opts.memo && self.failed_count < self.memo_capacity {
            let entry = (k, self.rem.clone().into_boxed_slice());
            self.failed.entry(key).or_default().push(entry);
            self.failed_count += 1;
        }
        out
    }

    fn known_to_fail(&self, key: u64, k: u32) -> bool {
        self.failed.get(&key).is_some_and(|entries| {
            entries
                .iter()
                .any(|(kk, rem)| *kk == k && rem[..] == self.rem[..])
        })
    }

    /// Critical resources, branching order and the prim-category (or the skeleton's) at `depth`.
    fn prepare_level(&mut self, depth: usize, k: u32) {
        while self.levels.len() <= depth {
            self.levels.push(Level::default());
        }
        let tr = self.traffic;
        let resources = tr.users.len();
        let mut lv = std::mem::take(&mut self.levels[depth]);
        lv.critical.clear();
        lv.demand.clear();
        lv.demand.resize(resources, 0);
        for r in 0..resources {
            let slots = tr.slots[r];
            let demand = if self.opts.reduced {
                // What the k − 1 frames after this one cannot carry.
                self.load[r].saturating_sub((k - 1).saturating_mul(slots))
            } else {
                // Teams of the original traffic: its bottlenecks used in every frame.
                u32::from(frames_for(self.load0[r], slots) == self.target && self.load[r] > 0)
            };
            if demand > 0 {
                lv.critical.push(r as u32);
                lv.demand[r] = demand;
            }
        }
        self.fill_order(&mut lv.order);
        lv.depot.clear();
        lv.depot.resize(tr.words, 0);
        lv.depot_load.clear();
        lv.depot_load.resize(resources, 0);
        lv.used.clear();
        lv.used.resize(resources, 0);
        lv.outside.clear();
        let count_outside = self.opts.skeleton && !tr.unit;
        if count_outside {
            lv.outside.resize(resources, 0);
        }
        for t in members(&self.rem) {
            let path = &tr.paths[t as usize];
            if !self.opts.skeleton || path.iter().any(|&r| lv.demand[r as usize] > 0) {
                put(&mut lv.depot, t);
                for &r in path {
                    lv.depot_load[r as usize] += 1;
                }
            } else if count_outside {
                for &r in path {
                    lv.outside[r as usize] += 1;
                }
            }
        }
        lv.includer.clear();
        lv.excluder.clear();
        lv.log.clear();
        lv.uncovered = lv.critical.len();
        lv.excluder_start = 0;
        self.levels[depth] = lv;
    }

    /// The remaining transfers in branching order: guided, by decreasing weight (transfers on
    /// the most loaded resources first: they are the ones that turn critical), ties by index;
    /// otherwise by index. Weights are small integers, so a counting sort does it in linear time.
    fn fill_order(&mut self, order: &mut Vec<u32>) {
        order.clear();
        if !self.opts.guided {
            order.extend(members(&self.rem));
            return;
        }
        let tr = self.traffic;
        self.weighted.clear();
        let mut heaviest = 0u32;
        for t in members(&self.rem) {
            let w = u32::try_from(tr.weight(t, &self.load)).unwrap_or(u32::MAX);
            heaviest = heaviest.max(w);
            self.weighted.push((t, w));
            self.weight_now[t as usize] = w;
        }
        if self.salt != 0 || heaviest as usize > 4 * self.weighted.len() + 1024 {
            // Another tie-break, or weights too spread for counting: sort instead.
            let salt = self.salt;
            let tie = |t: u32| {
                if salt == 0 {
                    t
                } else {
                    (t ^ salt).wrapping_mul(0x9E37_79B9)
                }
            };
            self.weighted
                .sort_unstable_by_key(|&(t, w)| (std::cmp::Reverse(w), tie(t)));
            order.extend(self.weighted.iter().map(|&(t, _)| t));
            return;
        }
        let counts = &mut self.per_weight;
        counts.clear();
        counts.resize(heaviest as usize + 1, 0);
        for &(_, w) in &self.weighted {
            counts[w as usize] += 1;
        }
        // Start of each weight's run, heaviest first.
        let mut start = 0u32;
        for w in (0..=heaviest as usize).rev() {
            let n = counts[w];
            counts[w] = start;
            start += n;
        }
        order.resize(self.weighted.len(), 0);
        for &(t, w) in &self.weighted {
            order[counts[w as usize] as usize] = t;
            counts[w as usize] += 1;
        }
    }

    /// Explore the category of `depth` and its negative descendants (iteratively, so the
    /// recursion depth is the includer size, not the depot size); positive sub-categories
    /// recurse. `skeleton_phase`: the depot holds only skeleton transfers. `cursor`: every
    /// transfer before it in the branching order is out of the depot.
    fn category(&mut self, depth: usize, skeleton_phase: bool, mut cursor: usize) -> Outcome {
        let log_mark = self.levels[depth].log.len();
        let excluder_mark = self.levels[depth].excluder.len();
        let outcome = loop {
            if !self.visit() {
                break Outcome::Stopped;
            }
            if self.pruned(depth, skeleton_phase) {
                break Outcome::Exhausted;
            }
            let Some((x, next_cursor)) = self.branch_transfer(depth, cursor) else {
                break self.leaf(depth, skeleton_phase);
            };
            let out = self.positive(depth, x, skeleton_phase, next_cursor);
            if out != Outcome::Exhausted {
                break out;
            }
            // Negative sub-category: x moves from the depot to the excluder, and so do its
            // copies: a frame with a later copy instead of x was the positive branch's.
            self.remove_from_depot(depth, x);
            if self.interchangeable {
                self.remove_copies_from_depot(depth, x);
            }
            self.levels[depth].excluder.push(x);
            cursor = next_cursor;
        };
        if outcome == Outcome::Exhausted {
            self.restore_depot(depth, log_mark);
            self.levels[depth].excluder.truncate(excluder_mark);
        }
        outcome
    }

    /// Blank or idle category (when those prunings are on).
    fn pruned(&self, depth: usize, skeleton_phase: bool) -> bool {
        let lv = &self.levels[depth];
        if self.opts.idle && lv.uncovered > 0 {
            // Even the whole depot cannot meet a critical demand.
            let idle = lv.critical.iter().any(|&c| {
                let c = c as usize;
                lv.used[c] + lv.depot_load[c] < lv.demand[c]
            });
            if idle || (!self.traffic.unit && self.demand_out_of_reach(lv)) {
                return true;
            }
        }
        self.opts.blank && self.opts.full && self.has_unreachable_excluded(lv, skeleton_phase)
    }

    /// With slots: a critical resource whose demand the depot cannot meet once the free slots
    /// of the other resources are counted. The depot transfers on `c` that share another
    /// resource `d` can add at most `d`'s free slots; grouping each transfer under one such `d`
    /// bounds what `c` can still get. Two groupings are tried — under the first other critical
    /// resource of the path (uplinks that must balance each other), and under the other resource
    /// with the fewest free slots (one transfer per host) — and the smaller bound is kept. (With
    /// one slot everywhere a depot transfer's resources are all free, and this never says more
    /// than the idle test.)
    fn demand_out_of_reach(&self, lv: &Level) -> bool {
        let tr = self.traffic;
        let free = |r: u32| tr.slots[r as usize] - lv.used[r as usize];
        let mut by_critical: Vec<(u32, u32)> = Vec::new();
        let mut by_tightest: Vec<(u32, u32)> = Vec::new();
        let count =
            |groups: &mut Vec<(u32, u32)>, d: u32| match groups.iter_mut().find(|(r, _)| *r == d) {
                Some((_, n)) => *n += 1,
                None => groups.push((d, 1)),
            };
        let reach = |alone: u32, groups: &[(u32, u32)]| -> u32 {
            alone + groups.iter().map(|&(d, n)| n.min(free(d))).sum::<u32>()
        };
        lv.critical.iter().any(|&c| {
            if lv.used[c as usize] >= lv.demand[c as usize] {
                return false;
            }
            by_critical.clear();
            by_tightest.clear();
            let (mut alone_critical, mut alone_tightest) = (0u32, 0u32);
            for &t in &tr.users[c as usize] {
                if !has(&lv.depot, t) {
                    continue;
                }
                let path = &tr.paths[t as usize];
                match path
                    .iter()
                    .copied()
                    .find(|&r| r != c && lv.demand[r as usize] > 0)
                {
                    None => alone_critical += 1,
                    Some(d) => count(&mut by_critical, d),
                }
                match path
                    .iter()
                    .copied()
                    .filter(|&r| r != c)
                    .min_by_key(|&r| free(r))
                {
                    None => alone_tightest += 1,
                    Some(d) => count(&mut by_tightest, d),
                }
            }
            let most = reach(alone_critical, &by_critical).min(reach(alone_tightest, &by_tightest));
            lv.used[c as usize] + most < lv.demand[c as usize]
        })
    }

    /// An excluded transfer that will fit whatever joins the includer: no resource of its path
    /// can run out of slots, even if every depot transfer on it joins (and, in the skeleton
    /// phase with slots, every transfer the extension may add).
    fn has_unreachable_excluded(&self, lv: &Level, skeleton_phase: bool) -> bool {
        let tr = self.traffic;
        let outside = skeleton_phase && !lv.outside.is_empty();
        lv.excluder[lv.excluder_start..].iter().any(|&e| {
            tr.paths[e as usize].iter().all(|&r| {
                let r = r as usize;
                let later = if outside { lv.outside[r] } else { 0 };
                lv.used[r] + lv.depot_load[r] + later < tr.slots[r]
            })
        })
    }

    /// The transfer to split the category on, and the cursor for what follows; None when the
    /// depot is empty.
    fn branch_transfer(&self, depth: usize, cursor: usize) -> Option<(u32, usize)> {
        let lv = &self.levels[depth];
        if self.opts.guided && lv.uncovered > 0 {
            // The uncovered critical resource with the fewest candidates, as in exact cover.
            // Slack: depot candidates beyond what the demand still needs.
            let best = lv
                .critical
                .iter()
                .copied()
                .filter(|&c| {
                    let c = c as usize;
                    lv.used[c] < lv.demand[c] && lv.depot_load[c] > 0
                })
                .min_by_key(|&c| {
                    let c = c as usize;
                    let need = lv.demand[c] - lv.used[c];
                    (lv.depot_load[c].saturating_sub(need), c)
                });
            if let Some(c) = best {
                let tr = self.traffic;
                let x = tr.users[c as usize]
                    .iter()
                    .copied()
                    .filter(|&t| has(&lv.depot, t))
                    .max_by_key(|&t| (self.weight_now[t as usize], std::cmp::Reverse(self.tie(t))))
                    .expect("a critical resource with depot load has a depot transfer");
                return Some((self.first_copy_in_depot(lv, x), cursor));
            }
        }
        let order = &lv.order;
        let i = (cursor..order.len()).find(|&i| has(&lv.depot, order[i]))?;
        let x = order[i];
        if self.interchangeable && !tr_copies(self.traffic, x).is_empty() {
            // The lowest copy stands for x; x itself may still be in the depot afterwards, so
            // the cursor stays on it.
            return Some((self.first_copy_in_depot(lv, x), i));
        }
        Some((x, i + 1))
    }

    /// The lowest-index copy of `x` still in the depot (x when copies are not merged), so that
    /// each frame holds the lowest copies of every path and the remaining copies are always
    /// the highest ones: permutations of identical transfers are never searched.
    fn first_copy_in_depot(&self, lv: &Level, x: u32) -> u32 {
        if !self.interchangeable {
            return x;
        }
        tr_copies(self.traffic, x)
            .iter()
            .copied()
            .find(|&t| has(&lv.depot, t))
            .unwrap_or(x)
    }

    /// Take every copy of `x` still in the depot out of it.
    fn remove_copies_from_depot(&mut self, depth: usize, x: u32) {
        let tr = self.traffic;
        for &t in tr_copies(tr, x).iter() {
            if has(&self.levels[depth].depot, t) {
                self.remove_from_depot(depth, t);
            }
        }
    }

    /// Take `x` out of the depot, logging it.
    fn remove_from_depot(&mut self, depth: usize, x: u32) {
        let tr = self.traffic;
        let lv = &mut self.levels[depth];
        take(&mut lv.depot, x);
        for &r in &tr.paths[x as usize] {
            lv.depot_load[r as usize] -= 1;
        }
        lv.log.push(x);
    }

    /// Put back every transfer logged after `mark`.
    fn restore_depot(&mut self, depth: usize, mark: usize) {
        let tr = self.traffic;
        let lv = &mut self.levels[depth];
        while lv.log.len() > mark {
            let t = lv.log.pop().expect("log longer than mark");
            put(&mut lv.depot, t);
            for &r in &tr.paths[t as usize] {
                lv.depot_load[r as usize] += 1;
            }
        }
    }

    /// Positive sub-category: `x` joins the includer; the transfers of every resource it fills
    /// leave the depot.
    fn positive(&mut self, depth: usize, x: u32, skeleton_phase: bool, cursor: usize) -> Outcome {
        let tr = self.traffic;
        let mark = self.levels[depth].log.len();
        self.remove_from_depot(depth, x);
        for &r in &tr.paths[x as usize] {
            if self.levels[depth].used[r as usize] + 1 < tr.slots[r as usize] {
                continue;
            }
            for &t in &tr.users[r as usize] {
                if has(&self.levels[depth].depot, t) {
                    self.remove_from_depot(depth, t);
                }
            }
        }
        self.set_used(depth, x, true);
        self.levels[depth].includer.push(x);
        let out = self.category(depth, skeleton_phase, cursor);
        if out == Outcome::Exhausted {
            self.levels[depth].includer.pop();
            self.set_used(depth, x, false);
            self.restore_depot(depth, mark);
        }
        out
    }

    /// Count `x` on its resources (or take it off), keeping track of the demands met.
    fn set_used(&mut self, depth: usize, x: u32, used: bool) {
        let tr = self.traffic;
        let lv = &mut self.levels[depth];
        for &r in &tr.paths[x as usize] {
            let r = r as usize;
            let met_before = lv.demand[r] > 0 && lv.used[r] >= lv.demand[r];
            if used {
                lv.used[r] += 1;
            } else {
                lv.used[r] -= 1;
            }
            let met_after = lv.demand[r] > 0 && lv.used[r] >= lv.demand[r];
            if met_after && !met_before {
                lv.uncovered -= 1;
            } else if met_before && !met_after {
                lv.uncovered += 1;
            }
        }
    }

    /// The depot is empty: the includer is a candidate frame, or the skeleton team to extend.
    fn leaf(&mut self, depth: usize, skeleton_phase: bool) -> Outcome {
        let lv = &self.levels[depth];
        if lv.uncovered > 0 {
            return Outcome::Exhausted;
        }
        if self.opts.full && self.has_unreachable_excluded(lv, skeleton_phase) {
            return Outcome::Exhausted;
        }
        if skeleton_phase {
            return self.extend_skeleton_team(depth);
        }
        match self.mode {
            Mode::Count => {
                self.teams_counted += 1;
                Outcome::Exhausted
            }
            Mode::Schedule => self.place_frame(depth),
        }
    }

    /// Category of a complete skeleton team: depot = remaining transfers outside the skeleton
    /// that fit beside it (§5, step 2). With one slot everywhere, every excluded skeleton
    /// transfer is blocked by the critical resource it uses, so only the extension's excluded
    /// transfers are checked for fullness; with slots, so are the skeleton's still unblocked.
    fn extend_skeleton_team(&mut self, depth: usize) -> Outcome {
        let tr = self.traffic;
        let start = {
            let lv = &mut self.levels[depth];
            let start = lv.log.len();
            let all_blocked = tr.unit
                || lv.excluder.iter().all(|&e| {
                    tr.paths[e as usize]
                        .iter()
                        .any(|&r| lv.used[r as usize] == tr.slots[r as usize])
                });
            lv.excluder_start = if all_blocked { lv.excluder.len() } else { 0 };
            start
        };
        let mut added = Vec::new();
        for t in members(&self.rem) {
            let lv = &self.levels[depth];
            let path = &tr.paths[t as usize];
            let outside_skeleton = !path.iter().any(|&r| lv.demand[r as usize] > 0);
            if outside_skeleton
                && path
                    .iter()
                    .all(|&r| lv.used[r as usize] < tr.slots[r as usize])
            {
                added.push(t);
            }
        }
        {
            let lv = &mut self.levels[depth];
            for &t in &added {
                put(&mut lv.depot, t);
                for &r in &tr.paths[t as usize] {
                    lv.depot_load[r as usize] += 1;
                }
            }
        }
        let out = self.category(depth, false, 0);
        if out == Outcome::Exhausted {
            let lv = &mut self.levels[depth];
            debug_assert_eq!(lv.log.len(), start);
            for &t in &added {
                take(&mut lv.depot, t);
                for &r in &tr.paths[t as usize] {
                    lv.depot_load[r as usize] -= 1;
                }
            }
            lv.excluder_start = 0;
        }
        out
    }

    /// Use the includer of `depth` as the next frame (with its images, in a symmetric search)
    /// and search the rest.
    fn place_frame(&mut self, depth: usize) -> Outcome {
        let tr = self.traffic;
        let mut frame = self.levels[depth].includer.clone();
        frame.sort_unstable();
        let mut placed = vec![frame];
        if let Some(group) = self.group {
            for image in &group.images {
                let mut f: Vec<u32> = placed[0].iter().map(|&t| image[t as usize]).collect();
                f.sort_unstable();
                placed.push(f);
            }
        }
        let count = placed.len();
        for frame in placed {
            for &t in &frame {
                take(&mut self.rem, t);
                for &r in &tr.paths[t as usize] {
                    self.load[r as usize] -= 1;
                }
            }
            self.rem_count -= frame.len();
            self.frames.push(frame);
        }
        self.frames_tried += 1;
        // This level's branching order is not needed while the deeper levels run.
        let order_len = self.levels[depth].order.len();
        self.levels[depth].order = Vec::new();
        let out = self.level(depth + count);
        if out != Outcome::Found && self.frames.len() > self.best_partial.len() {
            // The deepest partial schedule so far (the deeper ones saved theirs on the way back).
            self.best_partial = self.frames.clone();
        }
        if out == Outcome::Exhausted {
            for _ in 0..count {
                let frame = self.frames.pop().expect("frame was pushed");
                for &t in &frame {
                    put(&mut self.rem, t);
                    for &r in &tr.paths[t as usize] {
                        self.load[r as usize] += 1;
                    }
                }
                self.rem_count += frame.len();
            }
            // Remaining transfers and loads are as they were: the same order again.
            let mut order = Vec::with_capacity(order_len);
            self.fill_order(&mut order);
            debug_assert_eq!(order.len(), order_len);
            self.levels[depth].order = order;
        }
        out
    }

    /// Bytes held by the remembered sub-traffics and the per-frame state.
    fn memory_bytes(&self) -> u64 {
        let memo = self.failed_count * (self.traffic.words * 8 + 48);
        let levels: usize = self
            .levels
            .iter()
            .map(|lv| {
                4 * (lv.critical.capacity()
                    + lv.demand.capacity()
                    + lv.outside.capacity()
                    + lv.order.capacity()
                    + lv.depot_load.capacity()
                    + lv.used.capacity()
                    + lv.includer.capacity()
                    + lv.excluder.capacity()
                    + lv.log.capacity())
                    + 8 * lv.depot.capacity()
            })
            .sum();
        let frames: usize = self.frames.iter().map(|f| 4 * f.capacity()).sum::<usize>()
            + self.best_partial.iter().map(|f| 4 * f.capacity()).sum::<usize>();
        (memo + levels + frames) as u64
    }

    /// Search a schedule of at most `target` frames from the whole traffic.
    fn run(&mut self, target: u32) -> Outcome {
        self.target = target;
        self.frames.clear();
        self.best_partial.clear();
        self.level(0)
    }
}

/// Traffics up to this many transfers test tight resources at every level. On larger ones the
/// test costs about as much as the level itself (every bottleneck of an all-to-all is tight at
/// every level of a liquid schedule), and what it proves is proven before the search by the
/// bound on the whole traffic.
const TIGHT_TEST_TRANSFERS: usize = 8192;

/// Traffics up to this many transfers recurse on the caller's stack (a few KiB per transfer
/// at most); larger ones get a thread of their own, since starting one costs about 0.1 ms.
const INLINE_TRANSFERS: usize = 1024;

/// A 64-bit hash of `(k, remaining)` (FNV-1a over the words, then a final mix).
fn rem_hash(k: u32, rem: &[u64]) -> u64 {
    let mut h = 0xcbf2_9ce4_8422_2325u64 ^ k as u64;
    for &w in rem {
        h = (h ^ w).wrapping_mul(0x0000_0100_0000_01b3);
        h ^= h >> 29;
    }
    h
}

/// Run `f` where the stack is deep enough for one recursion level per transfer.
fn with_deep_stack<T: Send>(transfers: usize, f: impl FnOnce() -> T + Send) -> CoreResult<T> {
    if transfers <= INLINE_TRANSFERS {
        return Ok(f());
    }
    std::thread::scope(|s| {
        let handle = std::thread::Builder::new()
            .stack_size(256 << 20)
            .spawn_scoped(s, f)
            .map_err(|e| CoreError::Internal(format!("cannot start the search thread: {e}")))?;
        handle
            .join()
            .map_err(|_| CoreError::Internal("the search thread panicked".into()))
    })
}

/// Share of the time budget the search itself may use; the rest is for completing the best
/// partial schedule when the search did not finish.
const SEARCH_SHARE: f64 = 0.85;

/// When the search must stop and when the answer must be out.
#[derive(Clone, Copy)]
struct Deadlines {
    search: Option<Instant>,
    answer: Option<Instant>,
}

/// Find a liquid schedule of `paths` (each transfer's resource indices, all below `resources`,
/// whose slot counts are `slots`; empty means one slot each), or prove there is none and search
/// the optimal length (when `opts.optimize`).
///
/// When a budget runs out the best schedule known is returned — the deepest partial schedule
/// of the search completed by DSatur (or, when DSatur would not fit in the time left, by a
/// greedy first fit), or DSatur's — with the proven lower bound. A time limit counts from the
/// call and covers the completion.
pub fn liquid_schedule(
    paths: &[Vec<u32>],
    resources: usize,
    slots: &[u32],
    opts: &SearchOptions,
) -> CoreResult<SearchResult> {
    let start = Instant::now();
    if let Some(t) = opts.time_limit {
        if !(t.is_finite() && t >= 0.0) {
            return Err(CoreError::InvalidInput(format!(
                "time limit must be a non-negative number of seconds, got {t}"
            )));
        }
    }
    let traffic = Traffic::new(paths, resources, slots)?;
    let deadlines = Deadlines {
        search: opts
            .time_limit
            .map(|t| start + Duration::from_secs_f64(t * SEARCH_SHARE)),
        answer: opts.time_limit.map(|t| start + Duration::from_secs_f64(t)),
    };
    with_deep_stack(traffic.len(), || search_schedule(&traffic, opts, deadlines))?
}

fn search_schedule(
    traffic: &Traffic,
    opts: &SearchOptions,
    deadlines: Deadlines,
) -> CoreResult<SearchResult> {
    let lambda = traffic.duration();
    let bound = if opts.bounds {
        bounds::extra_frames_bound(traffic)
    } else {
        lambda
    };
    let mut result = SearchResult {
        frames: Vec::new(),
        duration: lambda,
        lower_bound: bound,
        liquid: false,
        optimal: false,
        nodes: 0,
        frames_tried: 0,
        memo_hits: 0,
        stopped_by: None,
        source: Source::Search,
        restarts: 0,
        memory_bytes: 0,
        symmetry_order: 1,
    };
    let mut node_limit = opts.node_limit;
    let mut search_deadline = deadlines.search;
    if bound == lambda && !opts.symmetry.is_empty() {
        if let Some(group) = Group::of_traffic(traffic, &opts.symmetry) {
            if (lambda as usize).is_multiple_of(group.order()) {
                let found = symmetric_schedule(traffic, &group, opts, search_deadline)?;
                result.nodes = found.nodes;
                result.memory_bytes = found.memory_bytes;
                if let Some(frames) = found.frames {
                    result.frames = frames;
                    result.source = Source::Symmetric;
                    result.symmetry_order = group.order() as u32;
                    return Ok(finish(result, lambda));
                }
                node_limit = node_limit.map(|n| n.saturating_sub(found.nodes));
                if node_limit == Some(0) {
                    // The whole node budget went to the symmetric attempt.
                    search_deadline = Some(Instant::now());
                }
            }
        }
    }
    let plain_opts;
    let opts = if node_limit != opts.node_limit {
        plain_opts = SearchOptions {
            node_limit,
            ..opts.clone()
        };
        &plain_opts
    } else {
        opts
    };
    let mut search = Search::new(traffic, opts, Mode::Schedule, search_deadline);
    search.nodes = result.nodes;
    // The incumbent is computed only when the liquid search does not settle the question.
    let mut incumbent: Option<(Vec<Vec<u32>>, Source)> = None;
    let mut target = bound;
    if bound > lambda && !opts.optimize {
        // No liquid schedule exists, and the optimum is not asked for.
        incumbent = Some(best_known(traffic, &[], deadlines.answer));
    } else {
        // With slots, a frame is a count to meet on several resources at once, and the search
        // is heavy-tailed: attempts with a doubling node budget and another tie-break each,
        // keeping the sub-traffics proven to fail, settle what one long attempt may not. The
        // last attempt always runs to the end, so proofs stay complete. Uniform traffics search
        // in one attempt.
        let restarts = !traffic.unit;
        let mut attempt_nodes = opts.first_attempt_nodes.max(1);
        search.attempt_end = restarts.then(|| search.nodes.saturating_add(attempt_nodes));
        let mut outcome = search.run(target);
        loop {
            match outcome {
                Outcome::Stopped if search.restart_due => {
                    search.restart_due = false;
                    search.salt = search.salt.wrapping_add(0x6D2B_79F5) | 1;
                    attempt_nodes = attempt_nodes.saturating_mul(2);
                    search.attempt_end = Some(search.nodes.saturating_add(attempt_nodes));
                    search.reset();
                    search.restarts += 1;
                    outcome = search.level(0);
                }
                Outcome::Found => {
                    result.frames = std::mem::take(&mut search.frames);
                    result.lower_bound = target
                        .min(result.frames.len() as u32)
                        .max(result.lower_bound);
                    result.source = Source::Search;
                    break;
                }
                Outcome::Exhausted => {
                    result.lower_bound = target + 1;
                    let best = incumbent.get_or_insert_with(|| {
                        best_known(traffic, &search.best_partial, deadlines.answer)
                    });
                    if !opts.optimize || best.0.len() as u32 <= result.lower_bound {
                        break;
                    }
                    target += 1;
                    attempt_nodes = opts.first_attempt_nodes.max(1);
                    search.attempt_end =
                        restarts.then(|| search.nodes.saturating_add(attempt_nodes));
                    outcome = search.run(target);
                }
                Outcome::Stopped => {
                    result.stopped_by = search.stopped_by;
                    // The deepest partial schedule completed, or DSatur alone when it is
                    // shorter and there is time for it.
                    let partial = best_known(traffic, &search.best_partial, deadlines.answer);
                    let whole = match &incumbent {
                        Some(_) => None,
                        None if search.best_partial.is_empty() => None,
                        None => dsatur_until(&traffic.paths, traffic.users.len(), &traffic.slots, deadlines.answer)
                            .expect("paths and slots were validated")
                            .map(|frames| (frames, Source::Dsatur)),
                    };
                    for candidate in [Some(partial), whole].into_iter().flatten() {
                        match &incumbent {
                            Some(best) if best.0.len() <= candidate.0.len() => {}
                            _ => incumbent = Some(candidate),
                        }
                    }
                    break;
                }
            }
        }
    }
    if result.frames.is_empty() && traffic.len() > 0 {
        let (frames, source) =
            incumbent.expect("an incumbent exists when the search did not find one");
        result.frames = frames;
        result.source = source;
    }
    result.nodes = search.nodes;
    result.frames_tried = search.frames_tried;
    result.memo_hits = search.memo_hits;
    result.restarts = search.restarts;
    result.memory_bytes = result.memory_bytes.max(search.memory_bytes());
    Ok(finish(result, lambda))
}

/// Sorted frames, and the claims that follow from the length.
fn finish(mut result: SearchResult, lambda: u32) -> SearchResult {
    for f in &mut result.frames {
        f.sort_unstable();
    }
    let length = result.frames.len() as u32;
    result.liquid = length == lambda;
    result.optimal = length <= result.lower_bound;
    result.lower_bound = result.lower_bound.min(length);
    result
}

/// What the symmetric attempt found, and what it cost.
struct SymmetricOutcome {
    frames: Option<Vec<Vec<u32>>>,
    nodes: u64,
    memory_bytes: u64,
}

/// Search a liquid schedule group by group under `group` (see `symmetry`), within
/// `opts.symmetric_nodes` nodes, the node limit, and half the time left.
fn symmetric_schedule(
    traffic: &Traffic,
    group: &Group,
    opts: &SearchOptions,
    deadline: Option<Instant>,
) -> CoreResult<SymmetricOutcome> {
    let marked = group.with_orbit_resources(traffic)?;
    let nodes = opts
        .node_limit
        .map_or(opts.symmetric_nodes, |n| n.min(opts.symmetric_nodes));
    let sym_opts = SearchOptions {
        node_limit: Some(nodes),
        ..opts.clone()
    };
    let now = Instant::now();
    let half = deadline.map(|d| now + d.saturating_duration_since(now) / 2);
    let mut search = Search::new(&marked, &sym_opts, Mode::Schedule, half);
    search.group = Some(group);
    let out = search.run(traffic.duration());
    Ok(SymmetricOutcome {
        frames: (out == Outcome::Found).then(|| std::mem::take(&mut search.frames)),
        nodes: search.nodes,
        memory_bytes: search.memory_bytes(),
    })
}

/// `partial` completed on the transfers it leaves out (the whole traffic when empty): by
/// DSatur if it finishes by `deadline`, else by a greedy first fit, which is near-linear.
fn best_known(
    traffic: &Traffic,
    partial: &[Vec<u32>],
    deadline: Option<Instant>,
) -> (Vec<Vec<u32>>, Source) {
    let mut placed = vec![false; traffic.len()];
    for f in partial {
        for &t in f {
            placed[t as usize] = true;
        }
    }
    let left: Vec<u32> = (0..traffic.len() as u32)
        .filter(|&t| !placed[t as usize])
        .collect();
    let left_paths: Vec<Vec<u32>> = left
        .iter()
        .map(|&t| traffic.paths[t as usize].clone())
        .collect();
    let resources = traffic.users.len();
    let (rest, greedy) = match dsatur_until(&left_paths, resources, &traffic.slots, deadline)
        .expect("paths and slots were validated")
    {
        Some(rest) => (rest, false),
        None => (
            first_fit(&left_paths, resources, &traffic.slots)
                .expect("paths and slots were validated"),
            true,
        ),
    };
    let mut frames = partial.to_vec();
    frames.extend(
        rest.into_iter()
            .map(|f| f.into_iter().map(|i| left[i as usize]).collect()),
    );
    let source = match (greedy, partial.is_empty()) {
        (true, _) => Source::FirstFit,
        (false, true) => Source::Dsatur,
        (false, false) => Source::Completion,
    };
    (frames, source)
}

/// Enumerate the full teams of the whole traffic (the first frame of the search) and count
/// them and the category nodes explored, with the reductions of `opts` (paper 000 Fig. 6).
/// `opts.node_limit` bounds the work.
pub fn count_full_teams(
    paths: &[Vec<u32>],
    resources: usize,
    slots: &[u32],
    opts: &SearchOptions,
) -> CoreResult<TeamCount> {
    let traffic = Traffic::new(paths, resources, slots)?;
    with_deep_stack(traffic.len(), || {
        let mut search = Search::new(&traffic, opts, Mode::Count, None);
        let lambda = traffic.duration();
        let out = search.run(lambda);
        TeamCount {
            teams: search.teams_counted,
            nodes: search.nodes,
            complete: out != Outcome::Stopped,
        }
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testing::{
        brute_force_frames, is_valid_schedule, is_valid_with_slots, random_slot_traffic,
        two_switch_paths, Rng,
    };

    /// Every reduction off: the plain fission over teams of the whole traffic.
    fn naive() -> SearchOptions {
        SearchOptions {
            blank: false,
            idle: false,
            skeleton: false,
            reduced: false,
            full: false,
            memo: false,
            guided: false,
            ..SearchOptions::default()
        }
    }

    #[test]
    fn two_switch_is_liquid_in_six_frames() {
        let paths = two_switch_paths();
        let r = liquid_schedule(&paths, 12, &[], &SearchOptions::default()).unwrap();
        assert_eq!(r.duration, 6);
        assert_eq!(r.frames.len(), 6);
        assert!(r.liquid && r.optimal);
        assert!(is_valid_schedule(&paths, &r.frames));
        assert_eq!(r.source, Source::Search);
    }

    #[test]
    fn every_reduction_switched_off_still_finds_it() {
        let paths = two_switch_paths();
        let r = liquid_schedule(&paths, 12, &[], &naive()).unwrap();
        assert!(r.liquid && is_valid_schedule(&paths, &r.frames));
    }

    #[test]
    fn fig7_triangle_has_no_liquid_schedule() {
        // Three transfers, each on two of three links: every pair conflicts, Λ = 2.
        let paths = vec![vec![0, 1], vec![1, 2], vec![2, 0]];
        let r = liquid_schedule(&paths, 3, &[], &SearchOptions::default()).unwrap();
        assert_eq!(r.duration, 2);
        assert_eq!(r.frames.len(), 3);
        assert!(!r.liquid && r.optimal);
        assert_eq!(r.lower_bound, 3);
        assert!(is_valid_schedule(&paths, &r.frames));
    }

    #[test]
    fn without_optimize_the_proof_stops_at_lambda_plus_one() {
        let paths = vec![
            vec![0, 1],
            vec![1, 2],
            vec![2, 0],
            vec![3, 4],
            vec![4, 5],
            vec![5, 3],
        ];
        let opts = SearchOptions {
            optimize: false,
            ..SearchOptions::default()
        };
        let r = liquid_schedule(&paths, 6, &[], &opts).unwrap();
        assert_eq!(r.lower_bound, 3);
        assert!(is_valid_schedule(&paths, &r.frames));
    }

    #[test]
    fn agrees_with_brute_force_on_small_traffics() {
        // One slot everywhere; the Python property tests cover random topologies.
        let mut rng = Rng(12345);
        for _ in 0..300 {
            let (paths, slots) = random_slot_traffic(&mut rng);
            let resources = slots.len();
            let best = brute_force_frames(&paths, &vec![1; resources]);
            for opts in [
                SearchOptions::default(),
                SearchOptions {
                    memo: false,
                    guided: false,
                    skeleton: false,
                    ..SearchOptions::default()
                },
            ] {
                let r = liquid_schedule(&paths, resources, &[], &opts).unwrap();
                assert!(is_valid_schedule(&paths, &r.frames), "{paths:?}");
                assert_eq!(r.frames.len(), best, "{paths:?}");
                assert!(r.optimal);
            }
        }
    }

    /// The full-team enumeration with no pruning and a plain order.
    fn unpruned() -> SearchOptions {
        SearchOptions {
            blank: false,
            idle: false,
            skeleton: false,
            guided: false,
            ..SearchOptions::default()
        }
    }

    #[test]
    fn team_counts_do_not_depend_on_the_reductions() {
        let paths = two_switch_paths();
        let a = count_full_teams(&paths, 12, &[], &SearchOptions::default()).unwrap();
        let b = count_full_teams(&paths, 12, &[], &unpruned()).unwrap();
        assert_eq!(a.teams, b.teams);
        assert!(a.teams > 0 && a.complete && b.complete);
        assert!(a.nodes < b.nodes);
    }

    #[test]
    fn node_budget_returns_a_valid_schedule() {
        let paths = two_switch_paths();
        let opts = SearchOptions {
            node_limit: Some(3),
            ..SearchOptions::default()
        };
        let r = liquid_schedule(&paths, 12, &[], &opts).unwrap();
        assert_eq!(r.stopped_by, Some(Budget::Nodes));
        assert!(is_valid_schedule(&paths, &r.frames));
        assert_eq!(r.lower_bound, 6);
    }

    #[test]
    fn empty_traffic_has_an_empty_schedule() {
        let r = liquid_schedule(&[], 3, &[], &SearchOptions::default()).unwrap();
        assert!(r.frames.is_empty() && r.liquid && r.optimal);
    }

    #[test]
    fn slots_agree_with_brute_force() {
        let mut rng = Rng(987654321);
        for _ in 0..400 {
            let (paths, slots) = random_slot_traffic(&mut rng);
            let best = brute_force_frames(&paths, &slots);
            let resources = slots.len();
            for opts in [
                SearchOptions::default(),
                SearchOptions {
                    memo: false,
                    guided: false,
                    ..SearchOptions::default()
                },
                SearchOptions {
                    skeleton: false,
                    ..SearchOptions::default()
                },
                naive(),
            ] {
                let r = liquid_schedule(&paths, resources, &slots, &opts).unwrap();
                assert!(
                    is_valid_with_slots(&paths, &slots, &r.frames),
                    "{paths:?} {slots:?}"
                );
                assert_eq!(r.frames.len(), best, "{paths:?} {slots:?} {opts:?}");
                assert!(r.optimal);
                assert_eq!(r.liquid, best as u32 == r.duration);
            }
        }
    }

    #[test]
    fn restarts_keep_the_search_exact() {
        // Attempts of 1, 2, 4, ... nodes: many restarts, and still the optimum with its proof.
        let mut rng = Rng(31337);
        let opts = SearchOptions {
            first_attempt_nodes: 1,
            ..SearchOptions::default()
        };
        let mut restarted = 0;
        for _ in 0..300 {
            let (paths, slots) = random_slot_traffic(&mut rng);
            if slots.iter().all(|&k| k == 1) {
                continue;
            }
            let r = liquid_schedule(&paths, slots.len(), &slots, &opts).unwrap();
            assert!(is_valid_with_slots(&paths, &slots, &r.frames));
            assert_eq!(
                r.frames.len(),
                brute_force_frames(&paths, &slots),
                "{paths:?} {slots:?}"
            );
            assert!(r.optimal && r.stopped_by.is_none());
            restarted += (r.restarts > 0) as u32;
        }
        assert!(restarted > 50);
    }

    #[test]
    fn three_shared_uplinks_that_must_balance_are_solved() {
        // Paper 002, 8 × 3 hosts, both directions of an uplink on one resource of 8 slots:
        // resources 0-23 host uplinks, 24-47 host downlinks, 48-50 the edge uplinks.
        let mut paths = Vec::new();
        for i in 0..24u32 {
            for j in 0..24u32 {
                if i != j {
                    let mut p = vec![i, 24 + j];
                    if i / 8 != j / 8 {
                        p.extend([48 + i / 8, 48 + j / 8]);
                        p.sort_unstable();
                    }
                    paths.push(p);
                }
            }
        }
        let mut slots = vec![1u32; 48];
        slots.extend([8, 8, 8]);
        let r = liquid_schedule(&paths, 51, &slots, &SearchOptions::default()).unwrap();
        assert_eq!((r.duration, r.frames.len()), (32, 32));
        assert!(r.liquid && r.optimal && is_valid_with_slots(&paths, &slots, &r.frames));
    }

    #[test]
    fn an_uplink_with_ten_slots_is_not_a_bottleneck() {
        // Paper 002's hierarchy, 4 hosts on each of 2 edge switches, all-to-all: resources
        // 0-7 host uplinks, 8-15 host downlinks, 16 e1>root and 17 root>e2, 18 e2>root and
        // 19 root>e1 (10 slots each: 1 Gbit/s over 100 Mbit/s hosts).
        let mut paths = Vec::new();
        for i in 0..8u32 {
            for j in 0..8u32 {
                if i == j {
                    continue;
                }
                let mut p = vec![i, 8 + j];
                if i < 4 && j >= 4 {
                    p.extend([16, 17]);
                }
                if i >= 4 && j < 4 {
                    p.extend([18, 19]);
                }
                paths.push(p);
            }
        }
        let mut slots = vec![1u32; 16];
        slots.extend([10, 10, 10, 10]);
        let r = liquid_schedule(&paths, 20, &slots, &SearchOptions::default()).unwrap();
        assert_eq!(r.duration, 7);
        assert_eq!(r.frames.len(), 7);
        assert!(r.liquid && r.optimal);
        assert!(is_valid_with_slots(&paths, &slots, &r.frames));
        // With one slot the uplinks carry 16 transfers each: 16 frames.
        let one = liquid_schedule(&paths, 20, &[], &SearchOptions::default()).unwrap();
        assert_eq!(one.frames.len(), 16);
    }

    #[test]
    fn team_counts_with_slots_do_not_depend_on_the_reductions() {
        let mut rng = Rng(4242);
        for _ in 0..200 {
            let (paths, slots) = random_slot_traffic(&mut rng);
            let resources = slots.len();
            let a = count_full_teams(&paths, resources, &slots, &SearchOptions::default()).unwrap();
            let b = count_full_teams(&paths, resources, &slots, &unpruned()).unwrap();
            assert_eq!(a.teams, b.teams, "{paths:?} {slots:?}");
        }
    }

    #[test]
    fn bad_slots_are_an_error() {
        for slots in [vec![1u32], vec![1, 0]] {
            assert!(matches!(
                liquid_schedule(&[vec![0]], 2, &slots, &SearchOptions::default()),
                Err(CoreError::InvalidInput(_))
            ));
        }
    }

    #[test]
    fn copies_agree_with_brute_force() {
        // Random traffics whose transfers are repeated 1-3 times: merging copies must change
        // nothing but the work.
        let mut rng = Rng(2718281);
        for _ in 0..300 {
            let (distinct, slots) = random_slot_traffic(&mut rng);
            let mut paths = Vec::new();
            for p in distinct.iter().take(4) {
                for _ in 0..1 + rng.below(3) {
                    paths.push(p.clone());
                }
            }
            let best = brute_force_frames(&paths, &slots);
            for opts in [
                SearchOptions::default(),
                SearchOptions {
                    bounds: false,
                    ..SearchOptions::default()
                },
            ] {
                let r = liquid_schedule(&paths, slots.len(), &slots, &opts).unwrap();
                assert!(is_valid_with_slots(&paths, &slots, &r.frames), "{paths:?} {slots:?}");
                assert_eq!(r.frames.len(), best, "{paths:?} {slots:?}");
                assert!(r.optimal);
            }
        }
    }

    #[test]
    fn a_transfer_conflicting_with_a_full_bottleneck_raises_the_bound() {
        // Resource 0 carries three transfers (Λ = 3); transfer 3 uses resources 1 and 2, which
        // every transfer of resource 0 also uses one of: a fourth frame is needed.
        let paths = vec![vec![0, 1], vec![0, 1], vec![0, 2], vec![1, 2]];
        let traffic = Traffic::new(&paths, 3, &[]).unwrap();
        assert_eq!(traffic.duration(), 3);
        assert_eq!(bounds::extra_frames_bound(&traffic), 4);
        let r = liquid_schedule(&paths, 3, &[], &SearchOptions::default()).unwrap();
        assert_eq!((r.frames.len(), r.lower_bound, r.optimal), (4, 4, true));
        // With two slots on resource 1, transfer 3 fits beside a transfer of resource 0.
        let traffic = Traffic::new(&paths, 3, &[1, 2, 1]).unwrap();
        assert_eq!(bounds::extra_frames_bound(&traffic), 3);
        assert_eq!(brute_force_frames(&paths, &[1, 2, 1]), 3);
    }

    #[test]
    fn the_bound_never_exceeds_the_optimum() {
        let mut rng = Rng(5550123);
        for _ in 0..400 {
            let (paths, slots) = random_slot_traffic(&mut rng);
            let traffic = Traffic::new(&paths, slots.len(), &slots).unwrap();
            assert!(
                bounds::extra_frames_bound(&traffic) as usize <= brute_force_frames(&paths, &slots),
                "{paths:?} {slots:?}"
            );
        }
    }

    /// A one-way ring of `n` switches with a host each, all-to-all: resources `0..n` ring
    /// links (`i` from switch `i` to `i + 1`), `n..2n` host uplinks, `2n..3n` downlinks.
    fn ring_all_to_all(n: u32) -> Vec<Vec<u32>> {
        let mut paths = Vec::new();
        for s in 0..n {
            for d in 0..n {
                if s != d {
                    let mut p = vec![n + s, 2 * n + d];
                    let mut x = s;
                    while x != d {
                        p.push(x);
                        x = (x + 1) % n;
                    }
                    p.sort_unstable();
                    paths.push(p);
                }
            }
        }
        paths
    }

    /// The rotation of the ring by `k`, as a permutation of its resources.
    fn rotation(n: u32, k: u32) -> Vec<u32> {
        (0..3 * n).map(|r| (r / n) * n + (r % n + k) % n).collect()
    }

    #[test]
    fn rotations_of_a_ring_cover_its_frames() {
        // n = 5: Λ = 1 + 2 + 3 + 4 = 10 on each ring link, twice the order of the rotations.
        let n = 5;
        let paths = ring_all_to_all(n);
        let group: Vec<Vec<u32>> = (0..n).map(|k| rotation(n, k)).collect();
        let opts = SearchOptions {
            symmetry: group.clone(),
            ..SearchOptions::default()
        };
        let r = liquid_schedule(&paths, 3 * n as usize, &[], &opts).unwrap();
        assert_eq!(r.duration, 10);
        assert!(r.liquid && r.optimal && is_valid_schedule(&paths, &r.frames));
        assert_eq!((r.source, r.symmetry_order), (Source::Symmetric, 5));
        // Every frame's rotations are frames of the schedule.
        let as_paths = |frame: &[u32], rot: &[u32]| {
            let mut f: Vec<Vec<u32>> = frame
                .iter()
                .map(|&t| {
                    let mut p: Vec<u32> = paths[t as usize].iter().map(|&x| rot[x as usize]).collect();
                    p.sort_unstable();
                    p
                })
                .collect();
            f.sort();
            f
        };
        let frames: Vec<Vec<Vec<u32>>> = r.frames.iter().map(|f| as_paths(f, &group[0])).collect();
        for f in &r.frames {
            for rot in &group {
                assert!(frames.contains(&as_paths(f, rot)));
            }
        }
    }

    #[test]
    fn a_permutation_that_is_no_automorphism_is_ignored() {
        let n = 4;
        let paths = ring_all_to_all(n);
        let mut wrong = rotation(n, 0);
        wrong.swap(0, n as usize);
        let opts = SearchOptions {
            symmetry: vec![wrong],
            ..SearchOptions::default()
        };
        let r = liquid_schedule(&paths, 3 * n as usize, &[], &opts).unwrap();
        assert_eq!(r.symmetry_order, 1);
        assert!(r.liquid && is_valid_schedule(&paths, &r.frames));
    }

    #[test]
    fn a_time_budget_of_zero_still_returns_a_schedule() {
        let paths = ring_all_to_all(6);
        let opts = SearchOptions {
            time_limit: Some(0.0),
            ..SearchOptions::default()
        };
        let r = liquid_schedule(&paths, 18, &[], &opts).unwrap();
        assert!(r.stopped_by.is_none_or(|b| b == Budget::Time));
        assert!(is_valid_schedule(&paths, &r.frames));
    }

    #[test]
    fn bad_input_is_an_error() {
        assert!(matches!(
            liquid_schedule(&[vec![5]], 2, &[], &SearchOptions::default()),
            Err(CoreError::InvalidInput(_))
        ));
        let opts = SearchOptions {
            time_limit: Some(f64::NAN),
            ..SearchOptions::default()
        };
        assert!(matches!(
            liquid_schedule(&[vec![0]], 2, &[], &opts),
            Err(CoreError::InvalidInput(_))
        ));
    }
}

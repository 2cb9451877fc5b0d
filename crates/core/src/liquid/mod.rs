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
//!
//! The parts: `traffic` (the transfers and resources as the search sees them), `search` (the
//! schedule tree: levels, backtracking, budgets), `fission` (branching: the frames of a level by
//! fission of categories, pruning, branching order), `memo` (sub-traffics known to fail),
//! `bounds` (lower bounds beyond Λ), `symmetry` (frames a group of automorphisms covers),
//! `orbit_cover` (a cover of a group's orbits by frames its subgroups fix), `solve` (target
//! lengths, restarts, the orbit cover and the symmetric attempt first), `completion` (a partial schedule
//! completed by DSatur or first fit) and `result` (what a search returns).

use std::time::{Duration, Instant};

mod bounds;
mod completion;
mod fission;
mod memo;
mod orbit_cover;
mod result;
mod search;
mod solve;
mod symmetry;
mod traffic;

pub use orbit_cover::OrbitStructure;
pub use result::{Budget, SearchResult, Source, TeamCount};

use crate::error::{CoreError, CoreResult};
use crate::interrupt::Interrupt;
use search::{Mode, Outcome, Search};
use solve::search_schedule;
use traffic::Traffic;

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
    /// A group acting on the transfers with every orbit a copy of it, and subgroups: when
    /// given, a liquid schedule made of frames these subgroups fix is searched first (see
    /// `orbit_cover`), within `symmetric_nodes` nodes and half the time budget.
    pub orbits: Option<OrbitStructure>,
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
            orbits: None,
        }
    }
}

/// Traffics up to this many transfers recurse on the caller's stack (a few KiB per transfer
/// at most); larger ones get a thread of their own, since starting one costs about 0.1 ms.
const INLINE_TRANSFERS: usize = 1024;

/// Run `f` where the stack is deep enough for one recursion level per transfer (on a thread
/// of its own, watched for `interrupt`, when the caller's stack may not be).
fn with_deep_stack<T: Send>(
    transfers: usize,
    interrupt: &Interrupt,
    f: impl FnOnce() -> T + Send,
) -> CoreResult<T> {
    if transfers <= INLINE_TRANSFERS {
        return Ok(f());
    }
    interrupt.run_on_thread(256 << 20, f)
}

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
    liquid_schedule_with(paths, resources, slots, opts, &Interrupt::never())
}

/// [`liquid_schedule`], stopped with [`CoreError::Interrupted`] when `interrupt` fires (it is
/// probed every few thousand category nodes, at every level of a large traffic and while the
/// best schedule known is completed).
pub fn liquid_schedule_with(
    paths: &[Vec<u32>],
    resources: usize,
    slots: &[u32],
    opts: &SearchOptions,
    interrupt: &Interrupt,
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
        // The rest of the budget is for completing the best partial schedule, should the
        // search not finish.
        search: opts.time_limit.map(|t| {
            start + Duration::from_secs_f64(t - completion::completion_reserve(t, &traffic))
        }),
        answer: opts.time_limit.map(|t| start + Duration::from_secs_f64(t)),
    };
    with_deep_stack(traffic.len(), interrupt, || {
        search_schedule(&traffic, opts, deadlines, interrupt)
    })?
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
    count_full_teams_with(paths, resources, slots, opts, &Interrupt::never())
}

/// [`count_full_teams`], stopped with [`CoreError::Interrupted`] when `interrupt` fires.
pub fn count_full_teams_with(
    paths: &[Vec<u32>],
    resources: usize,
    slots: &[u32],
    opts: &SearchOptions,
    interrupt: &Interrupt,
) -> CoreResult<TeamCount> {
    let traffic = Traffic::new(paths, resources, slots)?;
    with_deep_stack(traffic.len(), interrupt, || {
        let mut search = Search::new(&traffic, opts, Mode::Count, None, interrupt);
        let lambda = traffic.duration();
        let out = search.run(lambda);
        interrupt.check()?;
        Ok(TeamCount {
            teams: search.teams_counted,
            nodes: search.nodes,
            complete: out != Outcome::Stopped,
        })
    })?
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A one-way ring of `n` switches with a host each, all-to-all: resources `0..n` ring
    /// links (`i` from switch `i` to `i + 1`), `n..2n` host uplinks, `2n..3n` downlinks.
    pub(super) fn ring_all_to_all(n: u32) -> Vec<Vec<u32>> {
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

    #[test]
    fn empty_traffic_has_an_empty_schedule() {
        let r = liquid_schedule(&[], 3, &[], &SearchOptions::default()).unwrap();
        assert!(r.frames.is_empty() && r.liquid && r.optimal);
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

    /// A probe that says "stop" at its `n`-th call and after.
    fn fires_at(n: u32) -> impl Fn() -> bool + Sync {
        let calls = std::sync::atomic::AtomicU32::new(0);
        move || calls.fetch_add(1, std::sync::atomic::Ordering::Relaxed) + 1 >= n
    }

    #[test]
    fn an_interrupt_stops_the_count_of_teams_and_a_silent_one_changes_nothing() {
        // Ring of 11: more category nodes than two probe intervals.
        let paths = ring_all_to_all(11);
        let opts = SearchOptions::default();
        let plain = count_full_teams(&paths, 33, &[], &opts).unwrap();
        assert!(plain.nodes > 2 * crate::interrupt::EVERY as u64);
        let stop = fires_at(1);
        assert_eq!(
            count_full_teams_with(&paths, 33, &[], &opts, &Interrupt::new(&stop)).unwrap_err(),
            CoreError::Interrupted
        );
        let quiet = || false;
        let again = count_full_teams_with(&paths, 33, &[], &opts, &Interrupt::new(&quiet)).unwrap();
        assert_eq!((again.teams, again.nodes), (plain.teams, plain.nodes));
    }

    #[test]
    fn an_interrupt_reaches_a_search_on_its_own_thread() {
        // More transfers than INLINE_TRANSFERS: the search runs on a worker, which cannot call
        // the probe; the waiting thread does, and the worker sees the flag. The probe fires at
        // its second call, so at least one is made while the worker runs.
        let paths = ring_all_to_all(34);
        assert!(paths.len() > INLINE_TRANSFERS);
        let stop = fires_at(2);
        let r = liquid_schedule_with(
            &paths,
            3 * 34,
            &[],
            &SearchOptions::default(),
            &Interrupt::new(&stop),
        );
        assert_eq!(r.unwrap_err(), CoreError::Interrupted);
    }
}

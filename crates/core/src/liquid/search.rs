//! The search itself: the schedule tree, one level per frame. A level finds the critical
//! resources and their demands for the frames left, gives up when a bound or the memo says the
//! remaining traffic has no schedule in them, and otherwise enumerates its frames by fission
//! (`fission`); each frame is placed and the next level searched, and taken back when that
//! fails (backtracking). Category nodes are counted against the node, time and restart budgets.

use std::collections::HashMap;
use std::time::Instant;

use super::bounds::{self, Conflicts};
use super::memo::{rem_hash, FailedState};
use super::symmetry::Group;
use super::traffic::{members, put, take, Traffic};
use super::{Budget, SearchOptions};
use crate::interrupt::{Interrupt, EVERY};
use crate::slots::frames_for;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Outcome {
    /// A schedule was completed; the search state holds it.
    Found,
    /// This subtree holds no schedule.
    Exhausted,
    /// A budget ran out.
    Stopped,
}

/// What to do with each frame the fission yields.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Mode {
    /// Place it and search the rest of the schedule.
    Schedule,
    /// Count it and go on (full-team enumeration of paper 000 Fig. 6).
    Count,
}

/// The fission state of one frame of the schedule tree. Kept per depth and reused, so the
/// search allocates only when it first reaches a depth.
#[derive(Default)]
pub(super) struct Level {
    /// Critical resources of this frame.
    pub(super) critical: Vec<u32>,
    /// Transfers this frame must put on each resource (0 unless critical).
    pub(super) demand: Vec<u32>,
    /// Remaining transfers outside the skeleton on each resource (with slots and the skeleton
    /// speed-up only: they may still fill a resource once the skeleton team is complete).
    pub(super) outside: Vec<u32>,
    /// Remaining transfers in branching order (dropped while deeper levels run, and rebuilt,
    /// identically, if the search comes back).
    pub(super) order: Vec<u32>,
    pub(super) depot: Vec<u64>,
    /// Depot transfers using each resource.
    pub(super) depot_load: Vec<u32>,
    /// Transfers of the includer on each resource.
    pub(super) used: Vec<u32>,
    pub(super) includer: Vec<u32>,
    pub(super) excluder: Vec<u32>,
    /// Transfers taken out of the depot, in order, so that they can be put back.
    pub(super) log: Vec<u32>,
    /// Critical resources whose demand the includer does not meet yet.
    pub(super) uncovered: usize,
    /// Where the excluder of the current phase starts (the skeleton phase's excluder is
    /// satisfied once the skeleton team is complete).
    pub(super) excluder_start: usize,
}

pub(super) struct Search<'a> {
    pub(super) traffic: &'a Traffic,
    pub(super) opts: &'a SearchOptions,
    pub(super) mode: Mode,
    /// Target length of the schedule.
    pub(super) target: u32,
    /// Original loads (the bottlenecks of the whole traffic, for the naive search).
    pub(super) load0: Vec<u32>,
    pub(super) rem: Vec<u64>,
    pub(super) rem_count: usize,
    pub(super) load: Vec<u32>,
    pub(super) frames: Vec<Vec<u32>>,
    pub(super) best_partial: Vec<Vec<u32>>,
    /// Scratch of the branching order: remaining transfers with their weights, and a count
    /// per weight.
    pub(super) weighted: Vec<(u32, u32)>,
    /// Branching weight of every remaining transfer at the current level (computed with the
    /// order; a level that is returned to computes its order, and so these, again).
    pub(super) weight_now: Vec<u32>,
    pub(super) per_weight: Vec<u32>,
    pub(super) levels: Vec<Level>,
    /// Sub-traffics with no schedule in `k` frames, by a hash of `(k, remaining)`.
    pub(super) failed: HashMap<u64, Vec<FailedState>>,
    pub(super) failed_count: usize,
    pub(super) memo_capacity: usize,
    pub(super) nodes: u64,
    pub(super) frames_tried: u64,
    pub(super) memo_hits: u64,
    pub(super) teams_counted: u64,
    pub(super) deadline: Option<Instant>,
    pub(super) stopped_by: Option<Budget>,
    /// Restarts (traffics with slots): the node count at which this attempt gives up, whether
    /// it did, and the tie-break of this attempt (0: transfer index).
    pub(super) attempt_end: Option<u64>,
    pub(super) restart_due: bool,
    pub(super) salt: u32,
    pub(super) restarts: u64,
    /// Copies of a path are interchangeable: merged when scheduling (not when counting teams,
    /// which counts every set of transfers).
    pub(super) interchangeable: bool,
    /// Scratch of the tight-resource test (when `opts.bounds`, scheduling, and the traffic is
    /// small enough for it: see `TIGHT_TEST_TRANSFERS`).
    pub(super) conflicts: Option<Conflicts>,
    /// Symmetric search: every frame placed comes with its images under the group.
    pub(super) group: Option<&'a Group>,
    /// Probed every `EVERY` nodes and at every level of a large traffic; when it fires the
    /// search stops as if a budget had run out, and the caller returns the interruption.
    pub(super) interrupt: &'a Interrupt<'a>,
}

impl<'a> Search<'a> {
    pub(super) fn new(
        traffic: &'a Traffic,
        opts: &'a SearchOptions,
        mode: Mode,
        deadline: Option<Instant>,
        interrupt: &'a Interrupt<'a>,
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
            interrupt,
        }
    }

    /// Tie-break key of transfer `t` in this attempt: its index, or a fixed bijective mix of it.
    #[inline]
    pub(super) fn tie(&self, t: u32) -> u32 {
        if self.salt == 0 {
            t
        } else {
            (t ^ self.salt).wrapping_mul(0x9E37_79B9)
        }
    }

    /// Every transfer remaining again, for a fresh attempt.
    pub(super) fn reset(&mut self) {
        self.rem.iter_mut().for_each(|w| *w = 0);
        for t in 0..self.traffic.len() as u32 {
            put(&mut self.rem, t);
        }
        self.rem_count = self.traffic.len();
        self.load = self.traffic.loads();
        self.frames.clear();
    }

    /// Count a category node; false when a budget has run out.
    pub(super) fn visit(&mut self) -> bool {
        self.nodes += 1;
        if let Some(limit) = self.opts.node_limit {
            if self.nodes > limit {
                self.stopped_by = Some(Budget::Nodes);
                return false;
            }
        }
        if self.nodes.is_multiple_of(256) {
            self.report_progress();
            if self.budget_spent() {
                return false;
            }
        }
        if self.nodes.is_multiple_of(EVERY as u64) && self.interrupt.is_set() {
            return false;
        }
        if self.attempt_end.is_some_and(|end| self.nodes > end) {
            self.restart_due = true;
            return false;
        }
        true
    }

    /// Tell the caller watching the search how far it is (every 256 nodes and every large
    /// level).
    fn report_progress(&self) {
        self.interrupt
            .report(|p| p.record(self.nodes, self.frames.len()));
    }

    /// Whether the time budget ran out or the caller asked to stop, recorded as the reason.
    fn budget_spent(&mut self) -> bool {
        if self.deadline.is_some_and(|d| Instant::now() >= d) {
            self.stopped_by = Some(Budget::Time);
            return true;
        }
        if self.interrupt.stop_requested() {
            self.stopped_by = Some(Budget::Request);
            return true;
        }
        false
    }

    /// Search a schedule of the remaining traffic in the frames left at `depth`.
    pub(super) fn level(&mut self, depth: usize) -> Outcome {
        if self.rem_count == 0 {
            return Outcome::Found;
        }
        let k = self.target.saturating_sub(depth as u32);
        if k == 0 {
            return Outcome::Exhausted;
        }
        // A level costs time in proportion to the remaining traffic, far more than a node on
        // large traffics: the clock is read at every one, not only every 256 nodes.
        // Small levels are many: the nodes' reports (every 256) serve for them.
        if self.rem_count >= LARGE_LEVEL {
            self.report_progress();
        }
        if self.budget_spent() {
            return Outcome::Stopped;
        }
        // Likewise the interrupt, when a level costs more than a probe.
        if self.rem_count >= LARGE_LEVEL && self.interrupt.is_set() {
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

    /// Use the includer of `depth` as the next frame (with its images, in a symmetric search)
    /// and search the rest.
    pub(super) fn place_frame(&mut self, depth: usize) -> Outcome {
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
    pub(super) fn memory_bytes(&self) -> u64 {
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
            + self
                .best_partial
                .iter()
                .map(|f| 4 * f.capacity())
                .sum::<usize>();
        (memo + levels + frames) as u64
    }

    /// Search a schedule of at most `target` frames from the whole traffic.
    pub(super) fn run(&mut self, target: u32) -> Outcome {
        self.interrupt.report(|p| p.aim(target));
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

/// Remaining transfers from which a level costs far more than a probe of the interrupt.
const LARGE_LEVEL: usize = 1024;

#[cfg(test)]
mod tests {
    use crate::liquid::{liquid_schedule, Budget, SearchOptions};
    use crate::testing::{is_valid_schedule, two_switch_paths};

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
}

//! Branching: the frames of one level enumerated by binary fission of categories (includer,
//! depot, excluder), each full simultaneity once (paper 000 §4). A category splits on one depot
//! transfer into a positive sub-category (it joins the includer, and the transfers of every
//! resource it fills leave the depot) and a negative one (it joins the excluder). Blank and idle
//! categories are pruned, the skeleton (transfers on critical resources) is decided first and
//! then extended (§5), copies of a path are merged, and the branching order is guided by
//! weights: the critical resource with the fewest candidates first, then the transfers on the
//! most loaded resources.

use super::search::{Level, Mode, Outcome, Search};
use super::traffic::{has, members, put, take, tr_copies};

impl Search<'_> {
    /// The remaining transfers in branching order: guided, by decreasing weight (transfers on
    /// the most loaded resources first: they are the ones that turn critical), ties by index;
    /// otherwise by index. Weights are small integers, so a counting sort does it in linear time.
    pub(super) fn fill_order(&mut self, order: &mut Vec<u32>) {
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
    pub(super) fn category(
        &mut self,
        depth: usize,
        skeleton_phase: bool,
        mut cursor: usize,
    ) -> Outcome {
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
}

#[cfg(test)]
mod tests {
    use crate::liquid::{count_full_teams, liquid_schedule, SearchOptions};
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
    fn every_reduction_switched_off_still_finds_it() {
        let paths = two_switch_paths();
        let r = liquid_schedule(&paths, 12, &[], &naive()).unwrap();
        assert!(r.liquid && is_valid_schedule(&paths, &r.frames));
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
                assert!(
                    is_valid_with_slots(&paths, &slots, &r.frames),
                    "{paths:?} {slots:?}"
                );
                assert_eq!(r.frames.len(), best, "{paths:?} {slots:?}");
                assert!(r.optimal);
            }
        }
    }
}

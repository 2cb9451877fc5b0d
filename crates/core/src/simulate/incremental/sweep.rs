//! The sweep: progressive filling over only the resources an event can reach, in level order,
//! each taken up at a bound of the level where it next matters; the cascade of saturations and
//! vacated groups, and the unsaturated resources whose load goes over their capacity.

use super::cells::{cell_key, Tally};
use super::{Sharing, LEVEL_TOL, NEAR_FULL, SWEEP_TOL};

impl<'a> Sharing<'a> {
    /// Whether group `s`'s flows count as unfrozen in the current sweep (they take the water
    /// level of any resource they cross): fresh flows, and flows of a group that has passed its
    /// old level without saturating and not saturated since.
    fn unfrozen(&self, s: u32) -> bool {
        s == self.fresh
            || (self.vacated_in[s as usize] == self.pass
                && self.settled_in[s as usize] != self.pass)
    }

    /// The level at which resource `q` saturates given the levels of the groups crossing it:
    /// the water level `L` with Σ min(demand, L) = capacity, where a flow's demand is its group's
    /// level, unbounded for its own members and unfrozen flows; +inf when it cannot fill up.
    /// This is the fair share progressive filling finds for `q` once every group below `L` is
    /// frozen.
    ///
    /// It is found by iterating `L ← (capacity - Σ_{d<L} d) / #{d ≥ L}` from `start`, a lower
    /// bound (the key `q` came out of the queue with): from below, every step stays below the
    /// water level and takes in at least one more demand, and a close bound needs one pass over
    /// the row, no sort. Returns `(L, true)`, or, as soon as a step passes `limit`, that step's
    /// value, a lower bound, and `false`: beyond `limit` the sweep only needs a bound.
    ///
    /// The first step is taken during the pass over the row that gathers the demands, in the same
    /// order (so with the same rounding) as the later steps take theirs from the gathered list:
    /// it is most often the last, and the demands are then gone through once, not twice.
    fn water_level_from(&mut self, q: u32, start: f64, limit: f64) -> (f64, bool) {
        let cap = self.problem.capacities[q as usize];
        let mut level = if start.is_finite() {
            start.max(0.0)
        } else {
            0.0
        };
        let mut unbounded = 0u64;
        let mut capped = 0u64;
        let mut capped_load = 0.0;
        let (mut below, mut below_n, mut next_demand) = (0.0, 0u64, f64::INFINITY);
        let mut demands = std::mem::take(&mut self.demands);
        demands.clear();
        for &id in &self.row[q as usize] {
            let Tally {
                group: s, flows: n, ..
            } = self.tallies[id as usize];
            if s == q || self.unfrozen(s) {
                unbounded += n as u64;
            } else {
                let d = self.level[s as usize];
                capped_load += d * n as f64;
                capped += n as u64;
                demands.push((d, n));
                if d < level {
                    below += d * n as f64;
                    below_n += n as u64;
                } else if d < next_demand {
                    next_demand = d;
                }
            }
        }
        let total = unbounded + capped;
        let result = if unbounded == 0 && capped_load <= cap * (1.0 + SWEEP_TOL) {
            (f64::INFINITY, true)
        } else {
            let mut restarted = false;
            let mut gathered = true;
            loop {
                if !std::mem::replace(&mut gathered, false) {
                    (below, below_n, next_demand) = (0.0, 0u64, f64::INFINITY);
                    for &(d, n) in &demands {
                        if d < level {
                            below += d * n as f64;
                            below_n += n as u64;
                        } else if d < next_demand {
                            next_demand = d;
                        }
                    }
                }
                let step = if below_n < total {
                    ((cap - below) / (total - below_n) as f64).max(0.0)
                } else {
                    0.0
                };
                if step < level && !restarted && level > 0.0 {
                    // The start was above the water level (rounding): from zero.
                    restarted = true;
                    level = 0.0;
                    continue;
                }
                if below_n == total {
                    // Every demand below the level: cannot happen from below the water level.
                    break (level, true);
                }
                if step <= next_demand {
                    break (step, true);
                }
                if step > limit {
                    break (step, false);
                }
                level = step;
            }
        };
        self.demands = demands;
        result
    }

    /// Queue resource `q` at `key`, a lower bound of the level at which it next matters (where it
    /// saturates, or where its group passes its old level). Keys are bounds, not exact levels, so
    /// that a change to a row costs nothing until the resource comes up: its water level is
    /// computed when it is taken out of the queue, once however many changes reached it.
    fn push(&mut self, q: u32, key: f64) {
        let qu = q as usize;
        if self.settled_in[qu] == self.pass || !key.is_finite() {
            return;
        }
        self.queue.push(q, key);
    }

    /// Resource `r`'s row changed: capped demands on it rose by `rise` in all, and `unbound` of
    /// its flows, capped at `was` until now, became unfrozen. Either can lower its water level,
    /// so that its key must be lowered to stay a bound; other changes (flows moving to a lower
    /// bottleneck, members leaving) only raise it.
    pub(super) fn touch(&mut self, r: u32, rise: f64, unbound: u32, was: f64) {
        let ru = r as usize;
        if self.touched_in[ru] != self.step {
            self.touched_in[ru] = self.step;
            self.touched_rise[ru] = 0.0;
            self.touched_unbound[ru] = 0;
            self.touched_was[ru] = 0.0;
            self.touched.push(r);
        }
        self.touched_rise[ru] += rise;
        self.touched_unbound[ru] += unbound;
        self.touched_was[ru] += unbound as f64 * was;
    }

    /// Queue again the resources whose row changed in this step; note the unsaturated ones for
    /// the capacity check. A resource whose water level may have dropped gets a new bound: if
    /// its old key (or its group's level, when not queued) was `b`, capped demands rose by `D`
    /// and `a` flows capped at `d_1 … d_a` became unfrozen, its water level is at least
    /// `(m b + Σ d_k - D) / (m + a)` with `m` its members (below `b` the load falls by at least
    /// `m` per unit of level, as its members are never capped; an unfrozen flow adds at most
    /// `L - d_k` at level `L`). A clean group whose water level can only have risen is queued at
    /// its old level, where it would otherwise have saturated.
    fn flush_touched(&mut self, floor: f64) {
        let touched = std::mem::take(&mut self.touched);
        for &r in &touched {
            let ru = r as usize;
            if self.settled_in[ru] == self.pass {
                continue;
            }
            let queued = self.queue.contains(r);
            if self.count[ru] > 0 || queued {
                let (rise, unbound) = (self.touched_rise[ru], self.touched_unbound[ru]);
                if rise > 0.0 || unbound > 0 {
                    let base = if queued {
                        self.queue.key(r)
                    } else {
                        self.level[ru]
                    };
                    let m = self.count[ru] as f64;
                    let bound = if m > 0.0 {
                        (m * base + self.touched_was[ru] - rise) / (m + unbound as f64)
                    } else {
                        floor
                    };
                    self.push(r, bound.max(floor));
                } else if !queued {
                    self.push(r, self.level[ru]);
                }
            } else if self.checked_in[ru] != self.pass {
                self.checked_in[ru] = self.pass;
                self.check.push(r);
            }
        }
        self.touched = touched;
        self.touched.clear();
        self.step = self.step.wrapping_add(1);
    }

    /// Move flow `i` into group `g` at `t`. Its demand on the other resources of its path drops
    /// to `g`'s level (it moves to a lower bottleneck, or from no level at all).
    fn move_to(&mut self, i: u32, g: u32, t: f64) {
        let rem = self.leave(i, t);
        self.join(i, g, t, rem);
        for &p in self.path(i) {
            if p != g {
                self.touch(p, 0.0, 0, 0.0);
            }
        }
    }

    /// Resource `q` saturates at `level`: it leads a group of its own members and of every
    /// unfrozen flow crossing it (they move in), and the resources its change reaches are taken
    /// up again.
    fn saturate(&mut self, q: u32, level: f64, t: f64) {
        let qu = q as usize;
        self.settled_in[qu] = self.pass;
        let had = self.count[qu] > 0;
        let old = self.level[qu];
        let mut capture = std::mem::take(&mut self.capture);
        capture.clear();
        for &id in &self.row[qu] {
            let s = self.tallies[id as usize].group;
            if s != q
                && (self.unfrozen(s)
                    || (self.settled_in[s as usize] != self.pass
                        && self.level[s as usize] > level * (1.0 + SWEEP_TOL)))
            {
                capture.push(s);
            }
        }
        if !had {
            self.level[qu] = level;
        } else if (level - old).abs() > LEVEL_TOL * old {
            self.set_level(q, level, t);
        }
        for &s in &capture {
            while let Some(&id) = self.index.get(&cell_key(q, s)) {
                let (i, _) = *self.cells[id as usize]
                    .flows
                    .last()
                    .expect("cells are not empty");
                self.move_to(i, q, t);
            }
            if s != self.fresh {
                self.touch(s, 0.0, 0, 0.0);
            }
        }
        self.capture = capture;
        if self.count[qu] == 0 {
            // Saturated by flows that all stay within the tolerance of its level: no group.
            self.level[qu] = f64::INFINITY;
        } else if !had {
            self.count_level_change(q);
        }
        self.flush_touched(level);
    }

    /// Group `q` passes its old level without saturating: its members are unfrozen from here on,
    /// which raises their demand on the resources they cross. Those of its members that cross a
    /// resource already saturated in this sweep, at a level tied with `q`'s (they were left in
    /// `q` as frozen at the same level), are frozen there: they move to that resource's group.
    fn vacate(&mut self, q: u32, t: f64) {
        let qu = q as usize;
        self.vacated_in[qu] = self.pass;
        let mut tied = std::mem::take(&mut self.capture);
        tied.clear();
        for k in 0..self.col[qu].len() {
            let Tally {
                res: r, flows: n, ..
            } = self.tallies[self.col[qu][k] as usize];
            if r == q {
                continue;
            }
            let ru = r as usize;
            if self.settled_in[ru] == self.pass {
                tied.push(r);
            } else if self.count[ru] > 0 || self.queue.contains(r) {
                // (The load of an unsaturated resource is the same until `q` settles.)
                self.touch(r, 0.0, n, self.level[qu]);
            }
        }
        for &r in &tied {
            while let Some(&id) = self.index.get(&cell_key(r, q)) {
                let (i, _) = *self.cells[id as usize]
                    .flows
                    .last()
                    .expect("cells are not empty");
                self.move_to(i, r, t);
            }
        }
        self.capture = tied;
        self.flush_touched(self.level[qu]);
    }

    /// The smallest key in the queue (+inf when empty).
    fn next_key(&self) -> f64 {
        self.queue.peek().map_or(f64::INFINITY, |(key, _)| key)
    }

    /// Progressive filling over the resources the pending changes can reach.
    pub(super) fn sweep(&mut self, t: f64) {
        self.sweeps += 1;
        let mut rounds = 0;
        let max_pops = 64 * (self.problem.capacities.len() + 16) as u64;
        loop {
            self.pass = self.pass.wrapping_add(1);
            let mut pending = std::mem::take(&mut self.pending);
            pending.sort_unstable();
            pending.dedup();
            for &q in &pending {
                // Fresh flows or a lifted limit lower its water level: look at it first. A flow
                // gone raises it: it matters from its group's old level on.
                let lowered = self.count[q as usize] == 0
                    || self.index.contains_key(&cell_key(q, self.fresh))
                    || rounds > 0;
                self.push(q, if lowered { 0.0 } else { self.level[q as usize] });
            }
            pending.clear();
            self.pending = pending;
            let mut pops = 0u64;
            loop {
                let key = self.next_key();
                if !key.is_finite() {
                    break;
                }
                let Some((_, q)) = self.queue.pop() else {
                    break;
                };
                let qu = q as usize;
                pops += 1;
                if pops > max_pops {
                    // Rounding that keeps two resources trading places: settle it from scratch.
                    self.queue.clear();
                    self.rebuild(t);
                    return;
                }
                // The key was a bound: act now only if nothing queued comes before, and work
                // the water level out only as far as that needs.
                let next = self.next_key();
                let stop = next.max(key * (1.0 + SWEEP_TOL));
                let leads = self.count[qu] > 0 && self.vacated_in[qu] != self.pass;
                let old = if leads { self.level[qu] } else { f64::INFINITY };
                let enough = if old <= stop {
                    old * (1.0 + SWEEP_TOL)
                } else {
                    stop
                };
                let (level, exact) = self.water_level_from(q, key, enough);
                if !level.is_finite() {
                    continue;
                }
                if exact && level <= enough {
                    self.saturate(q, level, t);
                } else if old <= stop {
                    self.vacate(q, t);
                    // Members gone to tied resources only raise its water level: still a bound.
                    self.push(q, level);
                } else {
                    self.push(q, level.min(old));
                }
            }
            // Unsaturated resources whose load rose: any over its capacity is swept in from the
            // solution just found.
            let check = std::mem::take(&mut self.check);
            for &r in &check {
                let ru = r as usize;
                let cap = self.problem.capacities[ru];
                if self.count[ru] > 0 || self.load[ru] <= cap * (1.0 - NEAR_FULL) {
                    continue;
                }
                self.load[ru] = self.exact_load(r);
                if self.load[ru] > cap * (1.0 + SWEEP_TOL) {
                    self.pending.push(r);
                }
            }
            self.check = check;
            self.check.clear();
            if self.count[self.fresh as usize] > 0 && self.pending.is_empty() {
                // A fresh flow that no resource took: cannot happen with positive capacities,
                // but never leave a flow without a rate.
                self.rebuild(t);
                return;
            }
            if self.pending.is_empty() {
                return;
            }
            rounds += 1;
            if rounds > 64 {
                self.rebuild(t);
                return;
            }
        }
    }
}

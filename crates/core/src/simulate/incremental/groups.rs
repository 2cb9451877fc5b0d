//! Bottleneck groups: a flow joins and leaves one, each group runs at its level and counts its
//! members' progress on a virtual clock, and queues its next finish time.

use super::{Sharing, NEAR_FULL, NONE};
use crate::simulate::filling::Least;

impl<'a> Sharing<'a> {
    pub(super) fn mark_changed(&mut self, g: u32) {
        if !self.changed_flag[g as usize] {
            self.changed_flag[g as usize] = true;
            self.changed.push(g);
        }
    }

    /// Group `g`'s level was set in this update: count it, once per update however many passes
    /// of the sweep set it, so that the count is of rates that changed.
    pub(super) fn count_level_change(&mut self, g: u32) {
        if self.level_counted_in[g as usize] != self.updates {
            self.level_counted_in[g as usize] = self.updates;
            self.level_changes += 1;
        }
    }

    /// Rate of the members of group `g` (0 for fresh flows, which have none yet).
    pub(super) fn rate_of(&self, g: u32) -> f64 {
        if g == self.fresh {
            0.0
        } else {
            self.level[g as usize]
        }
    }

    pub(super) fn clock_now(&self, g: u32, t: f64) -> f64 {
        let g = g as usize;
        if t == self.clock_at[g] {
            self.clock[g]
        } else {
            self.clock[g] + self.level[g] * (t - self.clock_at[g])
        }
    }

    /// Flow `i` joins group `g` at `t` with `rem` bytes left.
    pub(super) fn join(&mut self, i: u32, g: u32, t: f64, rem: f64) {
        let gu = g as usize;
        if g != self.fresh && self.count[gu] == 0 {
            // A group that forms starts its clock at zero, so that targets stay small numbers.
            self.clock[gu] = 0.0;
            self.clock_at[gu] = t;
        }
        if self.cells_built {
            let rate = self.rate_of(g);
            for (k, &q) in self.path(i).iter().enumerate() {
                self.cell_add(i, k as u32, q, g);
                self.load[q as usize] += rate;
            }
        }
        self.count[gu] += 1;
        self.group[i as usize] = g;
        self.stamp[i as usize] = self.stamp[i as usize].wrapping_add(1);
        if g == self.fresh {
            self.target[i as usize] = rem;
        } else {
            let target = self.clock_now(g, t) + rem;
            self.target[i as usize] = target;
            self.last_target[gu] = self.last_target[gu].max(target);
            self.members[gu].push(Least(target, i, self.stamp[i as usize]));
            self.mark_changed(g);
        }
    }

    /// Flow `i` leaves its group at `t`; its bytes left.
    pub(super) fn leave(&mut self, i: u32, t: f64) -> f64 {
        let g = self.group[i as usize];
        let gu = g as usize;
        let rem = if g == self.fresh {
            self.target[i as usize]
        } else {
            self.target[i as usize] - self.clock_now(g, t)
        };
        if self.cells_built {
            let rate = self.rate_of(g);
            for (k, &q) in self.path(i).iter().enumerate() {
                self.cell_remove(i, k as u32, q, g);
                self.load[q as usize] = if self.row[q as usize].is_empty() {
                    0.0
                } else {
                    self.load[q as usize] - rate
                };
            }
        }
        self.count[gu] -= 1;
        self.group[i as usize] = NONE;
        self.stamp[i as usize] = self.stamp[i as usize].wrapping_add(1);
        if g != self.fresh {
            if self.count[gu] == 0 {
                self.level[gu] = f64::INFINITY;
                self.clock[gu] = 0.0;
                self.clock_at[gu] = t;
                self.last_target[gu] = f64::NEG_INFINITY;
                self.members[gu].clear();
            }
            self.mark_changed(g);
        }
        rem.max(0.0)
    }

    /// Group `g` (with members) runs at `level` from `t` on. The loads of the resources its
    /// members cross change with it; those in the sweep are told how far their water level may
    /// have dropped, unsaturated ones that near their capacity are noted for the capacity check.
    /// One pass over the column does both: it is the sweep's main cost per changed group.
    pub(super) fn set_level(&mut self, g: u32, level: f64, t: f64) {
        let gu = g as usize;
        self.clock[gu] = self.clock_now(g, t);
        self.clock_at[gu] = t;
        let delta = level - self.level[gu];
        self.level[gu] = level;
        self.count_level_change(g);
        self.mark_changed(g);
        let rise = delta.max(0.0);
        for k in 0..self.col[gu].len() {
            let tally = self.tallies[self.col[gu][k] as usize];
            let (r, n) = (tally.res, tally.flows as f64);
            let ru = r as usize;
            self.load[ru] += n * delta;
            if r == g {
                continue;
            }
            if self.count[ru] > 0 || self.queue.contains(r) {
                self.touch(r, n * rise, 0, 0.0);
            } else if delta > 0.0
                && self.checked_in[ru] != self.pass
                && self.load[ru] > self.problem.capacities[ru] * (1.0 - NEAR_FULL)
            {
                self.checked_in[ru] = self.pass;
                self.check.push(r);
            }
        }
    }

    /// Queue group `g`'s next finish time (its earliest target at its level).
    pub(super) fn queue_finish(&mut self, g: u32) {
        let gu = g as usize;
        if self.count[gu] == 0 || self.level[gu] <= 0.0 || self.level[gu].is_nan() {
            self.finishes.remove(g);
            return;
        }
        let (group, stamp) = (&self.group, &self.stamp);
        let heap = &mut self.members[gu];
        if heap.len() > 2 * self.count[gu] as usize + 16 {
            heap.retain(|&Least(_, i, s)| group[i as usize] == g && stamp[i as usize] == s);
        }
        while let Some(&Least(_, i, s)) = heap.peek() {
            if group[i as usize] == g && stamp[i as usize] == s {
                break;
            }
            heap.pop();
        }
        match heap.peek() {
            Some(&Least(target, _, _)) => {
                let at = self.clock_at[gu] + (target - self.clock[gu]) / self.level[gu];
                self.finishes.set(g, at);
            }
            None => self.finishes.remove(g),
        }
    }
}

//! Events of the sharing: flows entering it, the next finish, flows done taken out, and the
//! update of the rates after them (a sweep, or a rebuild when much changed); the utilisation
//! recorded between events.

use super::{Sharing, ARRIVING, NONE};
use crate::simulate::filling::{Least, EPS};
use crate::simulate::models::Grid;

impl<'a> Sharing<'a> {
    /// Flow `i` enters the sharing. It is placed in the cells at the next update, and only if
    /// that update is a sweep: when a rebuild follows (a frame starting, say), it would leave
    /// them at once.
    pub(super) fn admit(&mut self, i: u32) {
        self.active_pos[i as usize] = self.active.len() as u32;
        self.active.push(i);
        self.group[i as usize] = ARRIVING;
        self.target[i as usize] = self.problem.flows[i as usize].size_bytes;
        self.arrivals.push(i);
    }

    /// When the next flow finishes (+inf when none will).
    pub(super) fn next_finish(&self) -> f64 {
        self.finishes.peek().map_or(f64::INFINITY, |(at, _)| at)
    }

    /// Take out the flows done at `t` (within the tolerance of the reference engine), into
    /// `out`.
    pub(super) fn take_finished(&mut self, t: f64, out: &mut Vec<u32>) {
        let horizon = t + EPS * t.max(1e-300);
        while let Some((at, g)) = self.finishes.peek() {
            if at > horizon {
                break;
            }
            self.finishes.pop();
            let gu = g as usize;
            let last = self.clock_at[gu] + (self.last_target[gu] - self.clock[gu]) / self.level[gu];
            if last <= horizon {
                // Every member is due (flows of equal sizes finishing together): take them all
                // without a logarithm each.
                let members = std::mem::take(&mut self.members[gu]).into_vec();
                for &Least(_, i, s) in &members {
                    if self.group[i as usize] == g && self.stamp[i as usize] == s {
                        self.finish_flow(i, t, out);
                    }
                }
                continue;
            }
            while let Some(&Least(target, i, s)) = self.members[gu].peek() {
                if self.group[i as usize] != g || self.stamp[i as usize] != s {
                    self.members[gu].pop();
                    continue;
                }
                let rem = target - self.clock_now(g, t);
                let due = self.clock_at[gu] + (target - self.clock[gu]) / self.level[gu];
                let size = self.problem.flows[i as usize].size_bytes;
                if !(rem <= EPS * size.max(1.0) || due <= horizon) {
                    break;
                }
                self.members[gu].pop();
                self.finish_flow(i, t, out);
            }
            // Its next member may be due later: queue it again whatever happens next.
            self.mark_changed(g);
            self.queue_finish(g);
        }
    }

    /// Flow `i` leaves the sharing, done at `t`.
    fn finish_flow(&mut self, i: u32, t: f64, out: &mut Vec<u32>) {
        self.leave(i, t);
        let pos = self.active_pos[i as usize] as usize;
        self.active.swap_remove(pos);
        if let Some(&j) = self.active.get(pos) {
            self.active_pos[j as usize] = pos as u32;
        }
        self.active_pos[i as usize] = NONE;
        for &q in self.path(i) {
            if self.count[q as usize] > 0 {
                self.pending.push(q);
            }
        }
        out.push(i);
        self.departures += 1;
    }

    /// New rates after the flows that entered or left since the last update.
    pub(super) fn update(&mut self, t: f64) {
        // Progressive filling from scratch costs no more than a sweep when most flows are new
        // or gone, nor than laying out the cells for a sweep when a good part of them are.
        self.updates = self.updates.wrapping_add(1);
        let changes = self.arrivals.len() + self.departures;
        let before = self.active.len() + self.departures;
        let share = if self.cells_built { 2 } else { 4 };
        if changes > 0 && share * changes >= before {
            self.rebuild(t);
        } else {
            if !self.cells_built {
                self.build_cells();
            }
            let arrivals = std::mem::take(&mut self.arrivals);
            for &i in &arrivals {
                self.join(i, self.fresh, t, self.target[i as usize]);
                self.pending.extend_from_slice(self.path(i));
            }
            self.arrivals = arrivals;
            if !self.pending.is_empty() {
                self.sweep(t);
            }
        }
        self.pending.clear();
        self.arrivals.clear();
        self.departures = 0;
        #[cfg(test)]
        self.verify(t);
        while let Some(g) = self.changed.pop() {
            self.changed_flag[g as usize] = false;
            self.queue_finish(g);
        }
    }

    pub(super) fn record(&mut self, grid: &mut Grid, t0: f64, t1: f64) {
        let caps = &self.problem.capacities;
        if self.cells_built {
            for (q, row) in self.row.iter().enumerate() {
                if !row.is_empty() {
                    grid.add(q, t0, t1, self.exact_load(q as u32) / caps[q]);
                }
            }
            return;
        }
        let mut used = std::mem::take(&mut self.rb_used);
        used.clear();
        for &i in &self.active {
            let rate = self.rate_of(self.group[i as usize]);
            for &q in self.path(i) {
                let q = q as usize;
                if self.rb_len[q] == 0 {
                    self.rb_len[q] = 1;
                    self.rb_left[q] = 0.0;
                    used.push(q as u32);
                }
                self.rb_left[q] += rate;
            }
        }
        for &q in &used {
            let q = q as usize;
            grid.add(q, t0, t1, self.rb_left[q] / caps[q]);
            self.rb_len[q] = 0;
        }
        self.rb_used = used;
    }
}

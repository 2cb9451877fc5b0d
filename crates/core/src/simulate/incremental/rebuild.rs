//! The rebuild: progressive filling from scratch over the active flows, then the bottleneck
//! groups it implies, moving only the flows whose bottleneck changed.

use super::{Sharing, ARRIVING, NONE};
use crate::simulate::filling::Least;

impl<'a> Sharing<'a> {
    /// Progressive filling from scratch (the reference engine's, over the active flows), then
    /// the groups it implies: flows whose bottleneck is unchanged stay in their group, only the
    /// others move, so that a rebuild after a small change (a sender's next flow starting among
    /// few others) costs little more than the filling. The cells are dropped, to be laid out
    /// again only if a sweep follows. The per-resource lists of the filling are laid out in
    /// scratch arrays over the resources in use only: a frame starting on a large network must
    /// not cost allocations or passes over every resource.
    pub(super) fn rebuild(&mut self, t: f64) {
        self.rebuilds += 1;
        if self.cells_built {
            self.drop_cells();
        }
        let mut flows = std::mem::take(&mut self.rb_flows);
        let mut used = std::mem::take(&mut self.rb_used);
        let mut lists = std::mem::take(&mut self.rb_lists);
        let mut bottleneck = std::mem::take(&mut self.rb_bottleneck);
        let mut heap = std::mem::take(&mut self.rb_heap);
        flows.clear();
        flows.extend_from_slice(&self.active);
        // Flows of each resource in use, as slices of `lists`; clocks read at `t`, so that
        // levels may change under the members that stay.
        used.clear();
        for &i in &flows {
            let g = self.group[i as usize];
            if g != ARRIVING && g != self.fresh && self.clock_at[g as usize] != t {
                self.clock[g as usize] = self.clock_now(g, t);
                self.clock_at[g as usize] = t;
            }
            for &q in self.path(i) {
                let q = q as usize;
                if self.rb_len[q] == 0 {
                    used.push(q as u32);
                }
                self.rb_len[q] += 1;
            }
        }
        let mut at = 0u32;
        for &q in &used {
            let q = q as usize;
            self.rb_start[q] = at;
            self.rb_fill[q] = at;
            at += self.rb_len[q];
        }
        lists.clear();
        lists.resize(at as usize, 0);
        for (x, &i) in flows.iter().enumerate() {
            for &q in self.path(i) {
                let q = q as usize;
                lists[self.rb_fill[q] as usize] = x as u32;
                self.rb_fill[q] += 1;
            }
        }
        let caps = &self.problem.capacities;
        heap.clear();
        for &q in &used {
            let q = q as usize;
            self.rb_left[q] = caps[q];
            self.rb_count[q] = self.rb_len[q];
            self.rb_version[q] = 0;
            self.rb_share[q] = f64::NAN;
            heap.push(Least(caps[q] / self.rb_len[q] as f64, q as u32, 0));
        }
        bottleneck.clear();
        bottleneck.resize(flows.len(), NONE);
        while let Some(Least(share, r, v)) = heap.pop() {
            let r = r as usize;
            if v != self.rb_version[r] || self.rb_count[r] == 0 {
                continue;
            }
            let start = self.rb_start[r] as usize;
            for &x in &lists[start..start + self.rb_len[r] as usize] {
                let x = x as usize;
                if bottleneck[x] != NONE {
                    continue;
                }
                bottleneck[x] = r as u32;
                self.rb_share[r] = share;
                for &q in self.path(flows[x]) {
                    let q = q as usize;
                    self.rb_left[q] = (self.rb_left[q] - share).max(0.0);
                    self.rb_count[q] -= 1;
                    self.rb_version[q] += 1;
                    if self.rb_count[q] > 0 && q != r {
                        let key = self.rb_left[q] / self.rb_count[q] as f64;
                        heap.push(Least(key, q as u32, self.rb_version[q]));
                    }
                }
            }
        }
        for (x, &i) in flows.iter().enumerate() {
            let (old, new) = (self.group[i as usize], bottleneck[x]);
            if old == ARRIVING {
                self.join(i, new, t, self.target[i as usize]);
            } else if old != new {
                let rem = self.leave(i, t);
                self.join(i, new, t, rem);
            }
        }
        // The new levels (every clock reads `t`, so members that stay keep their targets).
        for &q in &used {
            let (qu, share) = (q as usize, self.rb_share[q as usize]);
            if self.count[qu] > 0 && self.level[qu] != share {
                self.level[qu] = share;
                self.count_level_change(q);
                self.mark_changed(q);
            }
        }
        self.arrivals.clear();
        for &q in &used {
            self.rb_len[q as usize] = 0;
        }
        self.rb_flows = flows;
        self.rb_used = used;
        self.rb_lists = lists;
        self.rb_bottleneck = bottleneck;
        self.rb_heap = heap;
    }
}

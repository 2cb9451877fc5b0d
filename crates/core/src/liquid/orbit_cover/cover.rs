//! The search of the orbit cover: an exact cover of the group's orbits by frame orbits, each
//! frame built bottleneck by bottleneck, and the orbits off the bottlenecks packed at the end.

use std::collections::HashSet;
use std::rc::Rc;
use std::time::Instant;

use super::group::Regular;
use super::items::{fits_alone, subgroup_items, usage_of, SubgroupItems};
use crate::interrupt::{Interrupt, EVERY};
use crate::liquid::traffic::Traffic;

/// Node budget of the first attempt; it doubles at each attempt.
const FIRST_ATTEMPT_NODES: u64 = 2_000;

/// A fixed mix of an attempt's number and a key, for the orders of attempts after the first.
fn mix(attempt: u64, key: u64) -> u64 {
    (key ^ attempt.wrapping_mul(0x9E37_79B9_7F4A_7C15)).wrapping_mul(0xBF58_476D_1CE4_E5B9)
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Outcome {
    Found,
    Exhausted,
    Stopped,
}

/// A frame orbit placed: its subgroup and the items of its frame.
struct Placed {
    subgroup: usize,
    items: Vec<(u32, u32)>,
    used: Vec<u32>,
}

pub(super) struct Cover<'a> {
    tr: &'a Traffic,
    group: &'a Regular,
    target: u32,
    bottlenecks: Vec<u32>,
    /// Orbits that use a bottleneck, by decreasing use of them (the cover's branching order).
    bottleneck_orbits: Vec<u32>,
    /// Transfers of each whole orbit on each resource it uses.
    orbit_load: Vec<Vec<(u32, u32)>>,
    /// The fewest frames a frame orbit holding each orbit costs.
    least_cost: Vec<u32>,
    /// Transfers of the uncovered orbits that use a bottleneck, on each resource.
    rem_load: Vec<u32>,
    items: Vec<Option<Rc<SubgroupItems>>>,
    uncovered: Vec<bool>,
    placed: Vec<Placed>,
    /// The frame being built at each depth: its items, resources used and orbits in it.
    building: Vec<Placed>,
    in_frame: Vec<bool>,
    failed: HashSet<Vec<u64>>,
    memo_capacity: usize,
    packs: u64,
    /// This attempt's number: the first tries subgroups and candidates in the given order.
    attempt: u64,
    /// The subgroups in the order this attempt tries them.
    subgroup_order: Vec<usize>,
    pub(super) nodes: u64,
    node_limit: u64,
    /// The node count at which this attempt gives up.
    attempt_end: u64,
    deadline: Option<Instant>,
    interrupt: &'a Interrupt<'a>,
}

impl<'a> Cover<'a> {
    pub(super) fn new(
        tr: &'a Traffic,
        group: &'a Regular,
        node_limit: u64,
        memo_bytes: usize,
        deadline: Option<Instant>,
        interrupt: &'a Interrupt<'a>,
    ) -> Self {
        let target = tr.duration();
        let load = tr.loads();
        let bottleneck: Vec<bool> = load
            .iter()
            .zip(&tr.slots)
            .map(|(&l, &k)| l > 0 && l as u64 == target as u64 * k as u64)
            .collect();
        let bottlenecks = (0..load.len() as u32)
            .filter(|&r| bottleneck[r as usize])
            .collect();
        let mut orbit_load = Vec::with_capacity(group.orbits);
        let mut use_of = Vec::with_capacity(group.orbits);
        for o in 0..group.orbits as u32 {
            let usage = usage_of((0..group.order as u32).map(|e| group.transfer(o, e)), tr);
            use_of.push(
                usage
                    .iter()
                    .filter(|(r, _)| bottleneck[*r as usize])
                    .map(|(_, c)| c)
                    .sum::<u32>(),
            );
            orbit_load.push(usage);
        }
        let mut bottleneck_orbits: Vec<u32> = (0..group.orbits as u32)
            .filter(|&o| use_of[o as usize] > 0)
            .collect();
        // The fewest frames a frame orbit holding each orbit costs: |H/K| for the largest
        // subgroup K whose orbits of it fit in a frame (all of them do or none: they are images
        // of each other).
        let least_cost: Vec<u32> = (0..group.orbits as u32)
            .map(|o| {
                group
                    .subgroups
                    .iter()
                    .filter(|k| {
                        fits_alone(&usage_of(k.iter().map(|&x| group.transfer(o, x)), tr), tr)
                    })
                    .map(|k| (group.order / k.len()) as u32)
                    .min()
                    .unwrap_or(u32::MAX)
            })
            .collect();
        // The hardest first: orbits that only small subgroups fix in a frame cost many frames,
        // which the end of the schedule may not have left (12 × 12 torus: 6,501 nodes this way,
        // none found in 10⁶ by bottleneck use alone).
        bottleneck_orbits.sort_by_key(|&o| {
            let o = o as usize;
            (
                std::cmp::Reverse(least_cost[o]),
                std::cmp::Reverse(use_of[o]),
                o,
            )
        });
        // Orbits that use no bottleneck are packed into frames placed, not into frames to come:
        // only the others' loads must fit in the frames left.
        let mut rem_load = vec![0u32; load.len()];
        for &o in &bottleneck_orbits {
            for &(r, c) in &orbit_load[o as usize] {
                rem_load[r as usize] += c;
            }
        }
        let words = group.orbits.div_ceil(64).max(1);
        Cover {
            tr,
            group,
            target,
            bottlenecks,
            bottleneck_orbits,
            orbit_load,
            rem_load,
            least_cost,
            items: (0..group.subgroups.len()).map(|_| None).collect(),
            uncovered: vec![true; group.orbits],
            placed: Vec::new(),
            building: Vec::new(),
            in_frame: vec![false; group.orbits],
            failed: HashSet::new(),
            memo_capacity: memo_bytes / (words * 8 + 48),
            packs: 0,
            subgroup_order: (0..group.subgroups.len()).collect(),
            attempt: 0,
            nodes: 0,
            node_limit,
            attempt_end: u64::MAX,
            deadline,
            interrupt,
        }
    }

    /// Search a cover in attempts; true when one is found (then `frames` gives it).
    pub(super) fn run(&mut self) -> bool {
        // Which subgroup to try first among those of one size decides how soon a cover is
        // found, and a poor choice can trap the search: attempts of doubling budgets, each with
        // the subgroups of a size in another order, keep the failures proven (complete searches
        // of sets of orbits) from one attempt to the next.
        let mut attempt_nodes = FIRST_ATTEMPT_NODES;
        for attempt in 0u64.. {
            self.order_subgroups(attempt);
            self.attempt_end = self.nodes.saturating_add(attempt_nodes);
            match self.cover(0) {
                Outcome::Found => return true,
                Outcome::Stopped if self.nodes < self.node_limit => {
                    attempt_nodes = attempt_nodes.saturating_mul(2);
                }
                Outcome::Exhausted | Outcome::Stopped => return false,
            }
        }
        unreachable!("attempts end with a cover or a spent budget")
    }

    /// The subgroups largest first; among those of one size, as given in attempt 0 and in an
    /// order mixed by `attempt` after it.
    fn order_subgroups(&mut self, attempt: u64) {
        let subgroups = &self.group.subgroups;
        self.attempt = attempt;
        self.subgroup_order = (0..subgroups.len()).collect();
        if attempt > 0 {
            self.subgroup_order.sort_by_key(|&k| {
                (
                    std::cmp::Reverse(subgroups[k].len()),
                    mix(attempt, k as u64),
                )
            });
        }
    }

    /// Count a node; false when a budget ran out (this attempt's included) or the interrupt
    /// fired.
    fn visit(&mut self) -> bool {
        self.nodes += 1;
        if self.nodes > self.node_limit || self.nodes > self.attempt_end {
            return false;
        }
        if self.nodes.is_multiple_of(256)
            && (self.deadline.is_some_and(|d| Instant::now() >= d)
                || self.interrupt.stop_requested())
        {
            self.node_limit = 0;
            return false;
        }
        if self.nodes.is_multiple_of(EVERY as u64) && self.interrupt.is_set() {
            self.node_limit = 0;
            return false;
        }
        true
    }

    /// The items of subgroup `ki`, made on first use.
    fn items_of(&mut self, ki: usize) -> Rc<SubgroupItems> {
        if let Some(items) = &self.items[ki] {
            return items.clone();
        }
        let items = Rc::new(subgroup_items(self.group, self.tr, ki, &self.bottlenecks));
        self.items[ki] = Some(items.clone());
        items
    }

    /// Cover the uncovered orbits with frame orbits, `used` frames spent so far.
    fn cover(&mut self, used: u32) -> Outcome {
        if !self.visit() {
            return Outcome::Stopped;
        }
        let next = self
            .bottleneck_orbits
            .iter()
            .copied()
            .find(|&o| self.uncovered[o as usize]);
        let Some(orbit) = next else {
            let rest: Vec<u32> = (0..self.group.orbits as u32)
                .filter(|&o| self.uncovered[o as usize])
                .collect();
            self.packs += 1;
            return self.pack(&rest);
        };
        let key = self.uncovered_key();
        if self.failed.contains(&key) {
            return Outcome::Exhausted;
        }
        let packs = self.packs;
        for idx in 0..self.subgroup_order.len() {
            let ki = self.subgroup_order[idx];
            let cost = (self.group.order / self.group.subgroups[ki].len()) as u32;
            if used + cost > self.target {
                continue;
            }
            let items = self.items_of(ki);
            if items.of_orbit[orbit as usize].is_empty() {
                continue;
            }
            self.building.push(Placed {
                subgroup: ki,
                items: Vec::new(),
                used: vec![0; self.tr.users.len()],
            });
            self.add(&items, orbit, 0);
            let out = self.extend(&items, cost, used);
            self.remove(&items, orbit, 0);
            self.building.pop();
            if out != Outcome::Exhausted {
                return out;
            }
        }
        if self.packs == packs && self.failed.len() < self.memo_capacity {
            self.failed.insert(key);
        }
        Outcome::Exhausted
    }

    fn uncovered_key(&self) -> Vec<u64> {
        let mut key = vec![0u64; self.group.orbits.div_ceil(64).max(1)];
        for (o, &u) in self.uncovered.iter().enumerate() {
            if u {
                key[o / 64] |= 1 << (o % 64);
            }
        }
        key
    }

    /// Whether item `i` of `orbit` fits in the frame being built.
    #[inline]
    fn fits(&self, items: &SubgroupItems, orbit: u32, i: u32, used: &[u32]) -> bool {
        items.of_orbit[orbit as usize][i as usize]
            .usage
            .iter()
            .all(|&(r, c)| used[r as usize] + c <= self.tr.slots[r as usize])
    }

    fn add(&mut self, items: &SubgroupItems, orbit: u32, i: u32) {
        let frame = self.building.last_mut().expect("a frame is being built");
        for &(r, c) in &items.of_orbit[orbit as usize][i as usize].usage {
            frame.used[r as usize] += c;
        }
        frame.items.push((orbit, i));
        self.in_frame[orbit as usize] = true;
    }

    fn remove(&mut self, items: &SubgroupItems, orbit: u32, i: u32) {
        let frame = self.building.last_mut().expect("a frame is being built");
        for &(r, c) in &items.of_orbit[orbit as usize][i as usize].usage {
            frame.used[r as usize] -= c;
        }
        frame.items.pop();
        self.in_frame[orbit as usize] = false;
    }

    /// Fill the bottlenecks of the frame being built, the one with the fewest fitting items
    /// first; each full frame is placed and the rest covered.
    fn extend(&mut self, items: &SubgroupItems, cost: u32, used: u32) -> Outcome {
        if !self.visit() {
            return Outcome::Stopped;
        }
        let mut best: Option<(u32, usize)> = None;
        {
            let frame = self.building.last().expect("a frame is being built");
            for &r in &items.bottlenecks {
                if frame.used[r as usize] >= self.tr.slots[r as usize] {
                    continue;
                }
                let limit = best.map_or(usize::MAX, |b| b.1);
                let mut count = 0;
                for &(o, i) in &items.by_resource[r as usize] {
                    if self.uncovered[o as usize]
                        && !self.in_frame[o as usize]
                        && self.fits(items, o, i, &frame.used)
                    {
                        count += 1;
                        if count >= limit {
                            break;
                        }
                    }
                }
                if count == 0 {
                    return Outcome::Exhausted;
                }
                if count < limit {
                    best = Some((r, count));
                }
            }
        }
        let Some((r, _)) = best else {
            return self.place(cost, used);
        };
        let candidates = items.by_resource[r as usize].len();
        // Attempts after the first start the candidates at another place.
        let start = if self.attempt == 0 {
            0
        } else {
            (mix(self.attempt, r as u64 + 1) % candidates as u64) as usize
        };
        for step in 0..candidates {
            let (o, i) = items.by_resource[r as usize][(start + step) % candidates];
            let frame = self.building.last().expect("a frame is being built");
            if !self.uncovered[o as usize]
                || self.in_frame[o as usize]
                || !self.fits(items, o, i, &frame.used)
            {
                continue;
            }
            self.add(items, o, i);
            let out = self.extend(items, cost, used);
            self.remove(items, o, i);
            if out != Outcome::Exhausted {
                return out;
            }
        }
        Outcome::Exhausted
    }

    /// Place the frame orbit of the frame just built and cover the rest; taken back unless found.
    fn place(&mut self, cost: u32, used: u32) -> Outcome {
        let frame = self.building.last().expect("a frame is being built");
        let placed = Placed {
            subgroup: frame.subgroup,
            items: frame.items.clone(),
            used: frame.used.clone(),
        };
        let orbits: Vec<u32> = placed.items.iter().map(|&(o, _)| o).collect();
        for &o in &orbits {
            self.uncovered[o as usize] = false;
            for &(r, c) in &self.orbit_load[o as usize] {
                self.rem_load[r as usize] -= c;
            }
        }
        let left = self.target - used - cost;
        let fits = self
            .rem_load
            .iter()
            .zip(&self.tr.slots)
            .all(|(&l, &k)| l as u64 <= left as u64 * k as u64)
            && self
                .bottleneck_orbits
                .iter()
                .all(|&o| !self.uncovered[o as usize] || self.least_cost[o as usize] <= left);
        // The frames being built below this one start afresh.
        let saved = std::mem::replace(&mut self.in_frame, vec![false; self.group.orbits]);
        self.placed.push(placed);
        let out = if fits {
            self.cover(used + cost)
        } else {
            Outcome::Exhausted
        };
        self.in_frame = saved;
        if out != Outcome::Found {
            self.placed.pop();
            for &o in &orbits {
                self.uncovered[o as usize] = true;
                for &(r, c) in &self.orbit_load[o as usize] {
                    self.rem_load[r as usize] += c;
                }
            }
        }
        out
    }

    /// Put each orbit of `rest` (none uses a bottleneck) into a frame orbit placed, as one
    /// item of that frame orbit's subgroup.
    fn pack(&mut self, rest: &[u32]) -> Outcome {
        let Some((&orbit, rest)) = rest.split_first() else {
            return Outcome::Found;
        };
        if !self.visit() {
            return Outcome::Stopped;
        }
        for p in 0..self.placed.len() {
            let items = self.items_of(self.placed[p].subgroup);
            for i in 0..items.of_orbit[orbit as usize].len() as u32 {
                if !self.fits(&items, orbit, i, &self.placed[p].used) {
                    continue;
                }
                for &(r, c) in &items.of_orbit[orbit as usize][i as usize].usage {
                    self.placed[p].used[r as usize] += c;
                }
                self.placed[p].items.push((orbit, i));
                self.uncovered[orbit as usize] = false;
                let out = self.pack(rest);
                if out == Outcome::Found {
                    return out;
                }
                self.uncovered[orbit as usize] = true;
                self.placed[p].items.pop();
                for &(r, c) in &items.of_orbit[orbit as usize][i as usize].usage {
                    self.placed[p].used[r as usize] -= c;
                }
                if out == Outcome::Stopped {
                    return out;
                }
            }
        }
        Outcome::Exhausted
    }

    /// The frames of the frame orbits placed: each frame's image under one element of every
    /// coset of its subgroup.
    pub(super) fn frames(&mut self) -> Vec<Vec<u32>> {
        let g = self.group;
        let mut frames = Vec::new();
        for p in 0..self.placed.len() {
            let items = self.items_of(self.placed[p].subgroup);
            let k = &g.subgroups[self.placed[p].subgroup];
            let mut coset_seen = vec![false; g.order];
            for x in 0..g.order as u32 {
                if coset_seen[x as usize] {
                    continue;
                }
                for &y in k {
                    coset_seen[g.apply(x, y) as usize] = true;
                }
                let mut frame = Vec::new();
                for &(o, i) in &self.placed[p].items {
                    for &e in &items.of_orbit[o as usize][i as usize].elements {
                        frame.push(g.transfer(o, g.apply(x, e)));
                    }
                }
                frame.sort_unstable();
                frames.push(frame);
            }
        }
        frames
    }

    pub(super) fn memory_bytes(&self) -> u64 {
        let words = self.group.orbits.div_ceil(64).max(1);
        let memo = self.failed.len() * (words * 8 + 48);
        let items: usize = self
            .items
            .iter()
            .flatten()
            .map(|s| {
                s.of_orbit
                    .iter()
                    .flatten()
                    .map(|i| 4 * i.elements.len() + 8 * i.usage.len() + 48)
                    .sum::<usize>()
                    + s.by_resource
                        .iter()
                        .map(|v| 8 * v.len() + 24)
                        .sum::<usize>()
            })
            .sum();
        (memo + items + 4 * self.group.transfer_at.len()) as u64
    }
}

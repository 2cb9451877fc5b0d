//! Orbit cover: a liquid schedule made of frames that subgroups of a symmetry group fix.
//!
//! A group `H` of network automorphisms acts on the transfers; every orbit is a copy of `H`
//! (the action is regular on each orbit: transfer `(o, e)` is element `e` applied to the
//! representative of orbit `o`), as the translations of a torus act on an all-to-all. Take a
//! normal subgroup `K` and a frame `F` that is a union of `K`-orbits (`F` is fixed by `K`),
//! holding at most one `K`-orbit of each `H`-orbit. Its images `g F`, one per coset `g K`, are
//! then `|H / K|` disjoint frames, and together they hold the whole of every `H`-orbit `F`
//! touches. A schedule is thus a partition of the `H`-orbits into such *frame orbits*, each
//! costing `|H / K|` frames. When every frame fills every bottleneck (each resource whose load
//! is Λ times its slots), the schedule has Λ frames: it is liquid.
//!
//! The search is an exact cover of the `H`-orbits. It takes the uncovered orbit whose cheapest
//! frame orbit costs most frames (then the one that uses the bottlenecks most), and gives up a
//! branch where an orbit's cheapest frame orbit would not fit in the frames left. For each
//! subgroup (largest first, fewest frames) it builds frames that contain one fixed `K`-orbit of
//! that orbit (any other is an image of it: the frame orbit is the same), filling the
//! bottleneck with the fewest fitting `K`-orbits first; given the resources' images, one
//! bottleneck of each `K`-orbit of them is enough to look at. Once no uncovered orbit touches a
//! bottleneck, the rest are packed into the frame orbits placed, each as one `K`-orbit of the
//! frame orbit's subgroup. Sets of uncovered orbits that have no cover are remembered (those
//! whose failure did not involve packing, which depends on the frames placed). Attempts of
//! doubling node budgets try subgroups of one size and candidates in other orders, keeping
//! what the earlier ones proved.
//!
//! The group is given, not derived: every claim about it is checked (a group table, subgroups
//! that are normal subgroups, every transfer an element of exactly one orbit), and the schedule
//! built is validated against the traffic before it is returned, so a wrong group (elements
//! that are not automorphisms) can only make the cover fail, never return a wrong schedule.
//! Finding no cover proves nothing; the plain search runs afterwards.

use std::collections::HashSet;
use std::rc::Rc;
use std::time::Instant;

use super::traffic::Traffic;
use crate::error::{CoreError, CoreResult};
use crate::interrupt::{Interrupt, EVERY};

/// Node budget of the first attempt; it doubles at each attempt.
const FIRST_ATTEMPT_NODES: u64 = 2_000;

/// A fixed mix of an attempt's number and a key, for the orders of attempts after the first.
fn mix(attempt: u64, key: u64) -> u64 {
    (key ^ attempt.wrapping_mul(0x9E37_79B9_7F4A_7C15)).wrapping_mul(0xBF58_476D_1CE4_E5B9)
}

/// A group acting regularly on each orbit of the transfers, and the subgroups whose fixed
/// frames the orbit cover may use.
#[derive(Debug, Clone, Default)]
pub struct OrbitStructure {
    /// Orbit of each transfer, numbered from 0.
    pub orbit: Vec<u32>,
    /// Element of each transfer: the one that maps its orbit's representative to it.
    pub element: Vec<u32>,
    /// The group's table: `product[a * order + b]` is the element `a ∘ b` (`b` first).
    pub product: Vec<u32>,
    /// Subgroups, each as the list of its elements.
    pub subgroups: Vec<Vec<u32>>,
    /// The image of every resource under every element: `resource_images[g * resources + r]`
    /// (empty: not given). A frame a subgroup fixes fills a bottleneck when it fills its images,
    /// so the cover then looks at one bottleneck of each of the subgroup's orbits.
    pub resource_images: Vec<u32>,
}

/// What the orbit cover found, and what it cost.
pub(super) struct CoverOutcome {
    pub(super) frames: Option<Vec<Vec<u32>>>,
    pub(super) nodes: u64,
    pub(super) memory_bytes: u64,
    pub(super) order: u32,
}

/// Search a liquid schedule of `tr` as a cover of the orbits of `structure` within `nodes`
/// nodes and until `deadline`. `Err` when the structure is malformed or the interrupt fired.
pub(super) fn orbit_cover(
    tr: &Traffic,
    structure: &OrbitStructure,
    nodes: u64,
    memo_bytes: usize,
    deadline: Option<Instant>,
    interrupt: &Interrupt,
) -> CoreResult<CoverOutcome> {
    let group = Regular::new(tr.len(), tr.users.len(), structure)?;
    let order = group.order as u32;
    let mut cover = Cover::new(tr, &group, nodes, memo_bytes, deadline, interrupt);
    // Which subgroup to try first among those of one size decides how soon a cover is found,
    // and a poor choice can trap the search: attempts of doubling budgets, each with the
    // subgroups of a size in another order, keep the failures proven (complete searches of
    // sets of orbits) from one attempt to the next.
    let mut attempt_nodes = FIRST_ATTEMPT_NODES;
    let mut found = false;
    for attempt in 0u64.. {
        cover.order_subgroups(attempt);
        cover.attempt_end = cover.nodes.saturating_add(attempt_nodes);
        match cover.cover(0) {
            Outcome::Found => {
                found = true;
                break;
            }
            Outcome::Exhausted => break,
            Outcome::Stopped if cover.nodes < cover.node_limit => {
                attempt_nodes = attempt_nodes.saturating_mul(2);
            }
            Outcome::Stopped => break,
        }
    }
    interrupt.check()?;
    let frames = found.then(|| cover.frames()).filter(|f| is_liquid(tr, f));
    Ok(CoverOutcome {
        frames,
        nodes: cover.nodes,
        memory_bytes: cover.memory_bytes(),
        order,
    })
}

/// The structure, checked: the transfer at each (orbit, element), the group's table and its
/// normal subgroups, largest first.
struct Regular {
    order: usize,
    orbits: usize,
    transfer_at: Vec<u32>,
    product: Vec<u32>,
    subgroups: Vec<Vec<u32>>,
    resource_images: Vec<u32>,
}

impl Regular {
    fn new(transfers: usize, transfers_resources: usize, s: &OrbitStructure) -> CoreResult<Self> {
        let invalid = |m: String| Err(CoreError::InvalidInput(format!("orbit structure: {m}")));
        let order = (s.product.len() as f64).sqrt().round() as usize;
        if order == 0 || order * order != s.product.len() {
            return invalid(format!("a group table of {} entries", s.product.len()));
        }
        if s.orbit.len() != transfers || s.element.len() != transfers {
            return invalid(format!(
                "{} orbits and {} elements for {transfers} transfers",
                s.orbit.len(),
                s.element.len()
            ));
        }
        let at = |a: u32, b: u32| s.product[a as usize * order + b as usize];
        if s.product.iter().any(|&x| x as usize >= order) || !is_latin(&s.product, order) {
            return invalid(
                "the table is not a group's (a row or column is not a permutation)".into(),
            );
        }
        let identity =
            (0..order as u32).find(|&e| (0..order as u32).all(|g| at(e, g) == g && at(g, e) == g));
        let Some(identity) = identity else {
            return invalid("the table has no identity".into());
        };
        let orbits = s.orbit.iter().max().map_or(0, |&o| o as usize + 1);
        if transfers != orbits * order {
            return invalid(format!(
                "{transfers} transfers in {orbits} orbits of {order}: every orbit must hold every element once"
            ));
        }
        let mut transfer_at = vec![u32::MAX; transfers];
        for (t, (&o, &e)) in s.orbit.iter().zip(&s.element).enumerate() {
            if e as usize >= order {
                return invalid(format!("transfer {t}: element {e} of {order}"));
            }
            let slot = &mut transfer_at[o as usize * order + e as usize];
            if *slot != u32::MAX {
                return invalid(format!(
                    "transfers {} and {t}: the same element of orbit {o}",
                    *slot
                ));
            }
            *slot = t as u32;
        }
        let resources = transfers_resources;
        if !s.resource_images.is_empty()
            && (s.resource_images.len() != order * resources
                || s.resource_images.iter().any(|&r| r as usize >= resources)
                || !each_line_a_permutation(order, resources, |g, r| {
                    s.resource_images[g * resources + r]
                }))
        {
            return invalid(format!(
                "resource images must give each of the {order} elements a permutation of the {resources} resources"
            ));
        }
        let inverse: Vec<u32> = (0..order as u32)
            .map(|g| {
                (0..order as u32)
                    .find(|&h| at(g, h) == identity)
                    .expect("latin")
            })
            .collect();
        let mut subgroups: Vec<Vec<u32>> = Vec::new();
        for (i, k) in s.subgroups.iter().enumerate() {
            let mut members = vec![false; order];
            for &e in k {
                if e as usize >= order {
                    return invalid(format!("subgroup {i}: element {e} of {order}"));
                }
                members[e as usize] = true;
            }
            let size = members.iter().filter(|&&m| m).count();
            let closed = members[identity as usize]
                && order.is_multiple_of(size)
                && k.iter()
                    .all(|&a| k.iter().all(|&b| members[at(a, b) as usize]));
            let normal = (0..order as u32).all(|g| {
                k.iter()
                    .all(|&x| members[at(at(g, x), inverse[g as usize]) as usize])
            });
            if !(closed && normal) {
                return invalid(format!("subgroup {i} is not a normal subgroup"));
            }
            let mut k: Vec<u32> = (0..order as u32).filter(|&e| members[e as usize]).collect();
            k.sort_unstable();
            if !subgroups.contains(&k) {
                subgroups.push(k);
            }
        }
        subgroups.sort_by_key(|k| std::cmp::Reverse(k.len()));
        Ok(Regular {
            order,
            orbits,
            transfer_at,
            product: s.product.clone(),
            subgroups,
            resource_images: s.resource_images.clone(),
        })
    }

    #[inline]
    fn apply(&self, g: u32, e: u32) -> u32 {
        self.product[g as usize * self.order + e as usize]
    }

    #[inline]
    fn transfer(&self, orbit: u32, element: u32) -> u32 {
        self.transfer_at[orbit as usize * self.order + element as usize]
    }
}

/// Every row and every column of the `order × order` table is a permutation.
fn is_latin(table: &[u32], order: usize) -> bool {
    each_line_a_permutation(order, order, |row, i| table[row * order + i])
        && each_line_a_permutation(order, order, |col, i| table[i * order + col])
}

/// For every line `0..lines`, the values `at(line, i)` over `i` in `0..len` are `0..len`, once
/// each (values already below `len`).
fn each_line_a_permutation(lines: usize, len: usize, at: impl Fn(usize, usize) -> u32) -> bool {
    // seen[x] == line: x already met on this line.
    let mut seen = vec![usize::MAX; len];
    for line in 0..lines {
        for i in 0..len {
            let x = at(line, i) as usize;
            if seen[x] == line {
                return false;
            }
            seen[x] = line;
        }
    }
    true
}

/// A `K`-orbit of transfers that fits in one frame: its transfers and how many of them use
/// each resource.
struct Item {
    /// The right coset `K e` of elements: the transfers `(orbit, k ∘ e)`.
    elements: Vec<u32>,
    usage: Vec<(u32, u32)>,
}

/// The items of one subgroup: those of each orbit, and those that use each resource.
struct SubgroupItems {
    /// The bottlenecks whose fill decides a fixed frame's: one of each orbit of the subgroup
    /// (the least), or all of them when the resources' images are not given.
    bottlenecks: Vec<u32>,
    of_orbit: Vec<Vec<Item>>,
    /// `(orbit, item)` pairs using each resource.
    by_resource: Vec<Vec<(u32, u32)>>,
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

struct Cover<'a> {
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
    nodes: u64,
    node_limit: u64,
    /// The node count at which this attempt gives up.
    attempt_end: u64,
    deadline: Option<Instant>,
    interrupt: &'a Interrupt<'a>,
}

impl<'a> Cover<'a> {
    fn new(
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
                        usage_of(k.iter().map(|&x| group.transfer(o, x)), tr)
                            .iter()
                            .all(|&(r, c)| c <= tr.slots[r as usize])
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
        if self.nodes.is_multiple_of(256) && self.deadline.is_some_and(|d| Instant::now() >= d) {
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
        let (g, tr) = (self.group, self.tr);
        let k = &g.subgroups[ki];
        let mut of_orbit = Vec::with_capacity(g.orbits);
        let mut by_resource = vec![Vec::new(); tr.users.len()];
        for o in 0..g.orbits as u32 {
            let mut seen = vec![false; g.order];
            let mut items = Vec::new();
            for e in 0..g.order as u32 {
                if seen[e as usize] {
                    continue;
                }
                let elements: Vec<u32> = k.iter().map(|&x| g.apply(x, e)).collect();
                for &x in &elements {
                    seen[x as usize] = true;
                }
                let usage = usage_of(elements.iter().map(|&x| g.transfer(o, x)), tr);
                if usage.iter().all(|&(r, c)| c <= tr.slots[r as usize]) {
                    for &(r, _) in &usage {
                        by_resource[r as usize].push((o, items.len() as u32));
                    }
                    items.push(Item { elements, usage });
                }
            }
            of_orbit.push(items);
        }
        let bottlenecks = if g.resource_images.is_empty() {
            self.bottlenecks.clone()
        } else {
            let resources = tr.users.len();
            let least = |r: u32| {
                k.iter()
                    .map(|&x| g.resource_images[x as usize * resources + r as usize])
                    .min()
            };
            self.bottlenecks
                .iter()
                .copied()
                .filter(|&r| least(r) == Some(r))
                .collect()
        };
        let items = Rc::new(SubgroupItems {
            bottlenecks,
            of_orbit,
            by_resource,
        });
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
    fn frames(&mut self) -> Vec<Vec<u32>> {
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

    fn memory_bytes(&self) -> u64 {
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

/// How many of `transfers` use each resource, by resource.
fn usage_of(transfers: impl Iterator<Item = u32>, tr: &Traffic) -> Vec<(u32, u32)> {
    let mut all: Vec<u32> = transfers
        .flat_map(|t| tr.paths[t as usize].iter().copied())
        .collect();
    all.sort_unstable();
    let mut usage: Vec<(u32, u32)> = Vec::new();
    for r in all {
        match usage.last_mut() {
            Some((last, c)) if *last == r => *c += 1,
            _ => usage.push((r, 1)),
        }
    }
    usage
}

/// `frames` hold every transfer once, none over a resource's slots, and are Λ in number.
fn is_liquid(tr: &Traffic, frames: &[Vec<u32>]) -> bool {
    let mut seen = vec![false; tr.len()];
    let mut used = vec![0u32; tr.users.len()];
    for frame in frames {
        for &t in frame {
            if std::mem::replace(&mut seen[t as usize], true) {
                return false;
            }
            for &r in &tr.paths[t as usize] {
                used[r as usize] += 1;
                if used[r as usize] > tr.slots[r as usize] {
                    return false;
                }
            }
        }
        for &t in frame {
            for &r in &tr.paths[t as usize] {
                used[r as usize] = 0;
            }
        }
    }
    seen.iter().all(|&s| s) && frames.len() as u32 == tr.duration()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::liquid::{liquid_schedule, SearchOptions, Source};
    use crate::testing::is_valid_schedule;

    /// The all-to-all of a ring of `n` routers routed the shorter way (positive on a tie):
    /// resource `i` is the link `i → i + 1`, `n + i` the link `i → i - 1`. Transfer
    /// `(d - 1) * n + s` goes from `s` to `s + d`.
    fn ring(n: u32) -> Vec<Vec<u32>> {
        let mut paths = Vec::new();
        for d in 1..n {
            for s in 0..n {
                let path = if 2 * d <= n {
                    (0..d).map(|i| (s + i) % n).collect()
                } else {
                    (0..n - d).map(|i| n + (s + n - i) % n).collect()
                };
                paths.push(path);
            }
        }
        paths
    }

    /// The translations of the ring acting on `ring(n)`, with every subgroup.
    fn ring_translations(n: u32) -> OrbitStructure {
        let transfers = (n * (n - 1)) as usize;
        OrbitStructure {
            orbit: (0..transfers as u32).map(|t| t / n).collect(),
            element: (0..transfers as u32).map(|t| t % n).collect(),
            product: (0..n * n).map(|ab| (ab / n + ab % n) % n).collect(),
            subgroups: (1..=n)
                .filter(|step| n % step == 0)
                .map(|step| (0..n).step_by(step as usize).collect())
                .collect(),
            resource_images: (0..n)
                .flat_map(|g| (0..2 * n).map(move |r| (r / n) * n + (r % n + g) % n))
                .collect(),
        }
    }

    fn with_orbits(structure: OrbitStructure) -> SearchOptions {
        SearchOptions {
            orbits: Some(structure),
            ..SearchOptions::default()
        }
    }

    #[test]
    fn rings_are_covered_liquid() {
        // Ring 8: links i → i+1 carry 1 + 2 + 3 + 4 = 10 transfers; the cover uses frames that
        // shifts by 4 (distances 4; 3 and 1) and by 2 (distance 2) fix, as worked by hand.
        for n in [4, 6, 8, 10, 12] {
            let paths = ring(n);
            let r = liquid_schedule(
                &paths,
                2 * n as usize,
                &[],
                &with_orbits(ring_translations(n)),
            )
            .unwrap();
            assert_eq!(r.source, Source::OrbitCover, "ring {n}");
            assert!(r.liquid && r.optimal, "ring {n}");
            assert!(is_valid_schedule(&paths, &r.frames), "ring {n}");
            let half = n / 2;
            assert_eq!(r.frames.len() as u32, half * (half + 1) / 2, "ring {n}");
        }
    }

    #[test]
    fn a_malformed_structure_is_refused() {
        let paths = ring(4);
        let base = ring_translations(4);
        let refused = |s: OrbitStructure| {
            matches!(
                liquid_schedule(&paths, 8, &[], &with_orbits(s)),
                Err(CoreError::InvalidInput(m)) if m.starts_with("orbit structure")
            )
        };
        assert!(refused(OrbitStructure {
            product: base.product[..15].to_vec(),
            ..base.clone()
        }));
        assert!(refused(OrbitStructure {
            product: vec![0; 16],
            ..base.clone()
        }));
        let mut twice = base.clone();
        twice.element[1] = 0;
        assert!(refused(twice));
        assert!(refused(OrbitStructure {
            subgroups: vec![vec![0, 1]],
            ..base.clone()
        }));
        let mut not_a_permutation = base.clone();
        not_a_permutation.resource_images[1] = 0;
        assert!(refused(not_a_permutation));
        let mut short = base.clone();
        short.orbit.pop();
        assert!(refused(short));
    }

    #[test]
    fn elements_that_are_not_automorphisms_never_give_a_wrong_schedule() {
        // The orbits of the ring with their elements scrambled: the cover's frames are then
        // not frames of the traffic, and what is returned must still be a valid schedule.
        let n = 8;
        let paths = ring(n);
        let mut s = ring_translations(n);
        for (t, e) in s.element.iter_mut().enumerate() {
            if (t / n as usize) % 2 == 1 {
                *e = (*e * 3) % n;
            }
        }
        let r = liquid_schedule(&paths, 16, &[], &with_orbits(s)).unwrap();
        assert!(is_valid_schedule(&paths, &r.frames));
        assert_eq!(r.frames.len(), 10);
    }
}

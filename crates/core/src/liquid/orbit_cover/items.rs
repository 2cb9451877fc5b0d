//! The orbits of a subgroup `K` that fit in one frame (items): a frame `K` fixes is a union of
//! them, one per orbit of the whole group at most.

use super::group::Regular;
use crate::liquid::traffic::Traffic;

/// A `K`-orbit of transfers that fits in one frame: its transfers and how many of them use
/// each resource.
pub(super) struct Item {
    /// The right coset `K e` of elements: the transfers `(orbit, k ∘ e)`.
    pub(super) elements: Vec<u32>,
    pub(super) usage: Vec<(u32, u32)>,
}

/// The items of one subgroup: those of each orbit, and those that use each resource.
pub(super) struct SubgroupItems {
    /// The bottlenecks whose fill decides a fixed frame's: one of each orbit of the subgroup
    /// (the least), or all of them when the resources' images are not given.
    pub(super) bottlenecks: Vec<u32>,
    pub(super) of_orbit: Vec<Vec<Item>>,
    /// `(orbit, item)` pairs using each resource.
    pub(super) by_resource: Vec<Vec<(u32, u32)>>,
}

/// The items of subgroup `ki` of `g` on `tr`; `bottlenecks` are the traffic's.
pub(super) fn subgroup_items(
    g: &Regular,
    tr: &Traffic,
    ki: usize,
    bottlenecks: &[u32],
) -> SubgroupItems {
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
            if fits_alone(&usage, tr) {
                for &(r, _) in &usage {
                    by_resource[r as usize].push((o, items.len() as u32));
                }
                items.push(Item { elements, usage });
            }
        }
        of_orbit.push(items);
    }
    let bottlenecks = if g.resource_images.is_empty() {
        bottlenecks.to_vec()
    } else {
        let resources = tr.users.len();
        let least = |r: u32| {
            k.iter()
                .map(|&x| g.resource_images[x as usize * resources + r as usize])
                .min()
        };
        bottlenecks
            .iter()
            .copied()
            .filter(|&r| least(r) == Some(r))
            .collect()
    };
    SubgroupItems {
        bottlenecks,
        of_orbit,
        by_resource,
    }
}

/// How many of `transfers` use each resource, by resource.
pub(super) fn usage_of(transfers: impl Iterator<Item = u32>, tr: &Traffic) -> Vec<(u32, u32)> {
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

/// Whether transfers using resources as `usage` counts fit in one frame.
pub(super) fn fits_alone(usage: &[(u32, u32)], tr: &Traffic) -> bool {
    usage.iter().all(|&(r, c)| c <= tr.slots[r as usize])
}

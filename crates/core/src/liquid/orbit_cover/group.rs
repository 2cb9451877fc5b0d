//! The structure the orbit cover is given, checked: a group's table, its normal subgroups, the
//! transfer at each (orbit, element) and the resources' images.

use super::OrbitStructure;
use crate::error::{CoreError, CoreResult};

/// The structure, checked: the transfer at each (orbit, element), the group's table and its
/// normal subgroups, largest first.
pub(super) struct Regular {
    pub(super) order: usize,
    pub(super) orbits: usize,
    pub(super) transfer_at: Vec<u32>,
    pub(super) product: Vec<u32>,
    pub(super) subgroups: Vec<Vec<u32>>,
    pub(super) resource_images: Vec<u32>,
}

impl Regular {
    pub(super) fn new(
        transfers: usize,
        transfers_resources: usize,
        s: &OrbitStructure,
    ) -> CoreResult<Self> {
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
    pub(super) fn apply(&self, g: u32, e: u32) -> u32 {
        self.product[g as usize * self.order + e as usize]
    }

    #[inline]
    pub(super) fn transfer(&self, orbit: u32, element: u32) -> u32 {
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

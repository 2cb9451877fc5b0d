//! The traffic as the search sees it: each transfer's resources, each resource's transfers and
//! slots, the copies of each path, the frame bound Λ and the branching weights; and the bitsets
//! of transfers the search keeps.

use std::collections::HashMap;

use crate::error::{CoreError, CoreResult};
use crate::slots::{checked_slots, frames_for};

/// The transfers of a traffic as resource lists, with the transfers and slots of each resource.
pub(super) struct Traffic {
    pub(super) paths: Vec<Vec<u32>>,
    pub(super) users: Vec<Vec<u32>>,
    pub(super) slots: Vec<u32>,
    /// Every resource has one slot: a skeleton transfer is then always blocked by the critical
    /// resource it uses, which spares the search some bookkeeping.
    pub(super) unit: bool,
    pub(super) words: usize,
    /// Transfers with the same path, in increasing index, for each transfer that has such
    /// copies (empty otherwise): the search treats copies as interchangeable.
    pub(super) copies: Vec<std::sync::Arc<[u32]>>,
    /// Some transfer has a copy.
    pub(super) has_copies: bool,
}

impl Traffic {
    pub(super) fn new(paths: &[Vec<u32>], resources: usize, slots: &[u32]) -> CoreResult<Self> {
        if paths.len() > u32::MAX as usize / 2 {
            return Err(CoreError::TooLarge(format!("{} transfers", paths.len())));
        }
        let slots = checked_slots(slots, resources)?;
        let mut users: Vec<Vec<u32>> = vec![Vec::new(); resources];
        let mut clean = Vec::with_capacity(paths.len());
        for (t, path) in paths.iter().enumerate() {
            let mut p = path.clone();
            p.sort_unstable();
            p.dedup();
            for &r in &p {
                let slot = users.get_mut(r as usize).ok_or_else(|| {
                    CoreError::InvalidInput(format!(
                        "transfer {t} uses resource {r} but there are {resources}"
                    ))
                })?;
                slot.push(t as u32);
            }
            clean.push(p);
        }
        let copies = copies_of(&clean);
        Ok(Traffic {
            words: paths.len().div_ceil(64),
            has_copies: copies.iter().any(|c| !c.is_empty()),
            copies,
            paths: clean,
            users,
            unit: slots.iter().all(|&k| k == 1),
            slots,
        })
    }

    pub(super) fn len(&self) -> usize {
        self.paths.len()
    }

    pub(super) fn loads(&self) -> Vec<u32> {
        self.users.iter().map(|u| u.len() as u32).collect()
    }

    /// The frame bound Λ: the most frames one resource needs, `⌈n_r / k_r⌉`.
    pub(super) fn duration(&self) -> u32 {
        self.users
            .iter()
            .zip(&self.slots)
            .map(|(u, &k)| frames_for(u.len() as u32, k))
            .max()
            .unwrap_or(0)
    }

    /// Branching weight of transfer `t`: the frames its resources still need, summed.
    pub(super) fn weight(&self, t: u32, load: &[u32]) -> u64 {
        self.paths[t as usize]
            .iter()
            .map(|&r| frames_for(load[r as usize], self.slots[r as usize]) as u64)
            .sum()
    }
}

/// For each transfer, the transfers with the same (sorted) path, itself included, when there
/// are at least two; an empty list otherwise.
fn copies_of(paths: &[Vec<u32>]) -> Vec<std::sync::Arc<[u32]>> {
    let mut by_path: HashMap<&[u32], Vec<u32>> = HashMap::new();
    for (t, p) in paths.iter().enumerate() {
        by_path.entry(p.as_slice()).or_default().push(t as u32);
    }
    let none: std::sync::Arc<[u32]> = std::sync::Arc::from(Vec::new());
    let mut copies = vec![none; paths.len()];
    for group in by_path.into_values() {
        if group.len() > 1 {
            let shared: std::sync::Arc<[u32]> = std::sync::Arc::from(group);
            for &t in shared.iter() {
                copies[t as usize] = shared.clone();
            }
        }
    }
    copies
}

/// The copies of transfer `t` (empty when it has none).
#[inline]
pub(super) fn tr_copies(traffic: &Traffic, t: u32) -> &[u32] {
    &traffic.copies[t as usize]
}

#[inline]
pub(super) fn has(bits: &[u64], t: u32) -> bool {
    bits[(t / 64) as usize] & (1 << (t % 64)) != 0
}

#[inline]
pub(super) fn put(bits: &mut [u64], t: u32) {
    bits[(t / 64) as usize] |= 1 << (t % 64);
}

#[inline]
pub(super) fn take(bits: &mut [u64], t: u32) {
    bits[(t / 64) as usize] &= !(1 << (t % 64));
}

pub(super) fn members(bits: &[u64]) -> impl Iterator<Item = u32> + '_ {
    bits.iter().enumerate().flat_map(|(w, &word)| {
        let mut rest = word;
        std::iter::from_fn(move || {
            if rest == 0 {
                return None;
            }
            let b = rest.trailing_zeros();
            rest &= rest - 1;
            Some((w * 64) as u32 + b)
        })
    })
}

#[cfg(test)]
mod tests {
    use crate::error::CoreError;
    use crate::liquid::{liquid_schedule, SearchOptions};
    use crate::testing::is_valid_with_slots;

    #[test]
    fn an_uplink_with_ten_slots_is_not_a_bottleneck() {
        // Paper 002's hierarchy, 4 hosts on each of 2 edge switches, all-to-all: resources
        // 0-7 host uplinks, 8-15 host downlinks, 16 e1>root and 17 root>e2, 18 e2>root and
        // 19 root>e1 (10 slots each: 1 Gbit/s over 100 Mbit/s hosts).
        let mut paths = Vec::new();
        for i in 0..8u32 {
            for j in 0..8u32 {
                if i == j {
                    continue;
                }
                let mut p = vec![i, 8 + j];
                if i < 4 && j >= 4 {
                    p.extend([16, 17]);
                }
                if i >= 4 && j < 4 {
                    p.extend([18, 19]);
                }
                paths.push(p);
            }
        }
        let mut slots = vec![1u32; 16];
        slots.extend([10, 10, 10, 10]);
        let r = liquid_schedule(&paths, 20, &slots, &SearchOptions::default()).unwrap();
        assert_eq!(r.duration, 7);
        assert_eq!(r.frames.len(), 7);
        assert!(r.liquid && r.optimal);
        assert!(is_valid_with_slots(&paths, &slots, &r.frames));
        // With one slot the uplinks carry 16 transfers each: 16 frames.
        let one = liquid_schedule(&paths, 20, &[], &SearchOptions::default()).unwrap();
        assert_eq!(one.frames.len(), 16);
    }

    #[test]
    fn bad_slots_are_an_error() {
        for slots in [vec![1u32], vec![1, 0]] {
            assert!(matches!(
                liquid_schedule(&[vec![0]], 2, &slots, &SearchOptions::default()),
                Err(CoreError::InvalidInput(_))
            ));
        }
    }
}

//! Symmetric schedules: frames that a group of network automorphisms covers.
//!
//! An automorphism maps resources to resources of the same slots and every transfer's path to
//! another transfer's path; it then maps every frame to a frame. Given a group `H` of them that
//! moves every transfer (a translation group of a torus does), the traffic splits into orbits
//! of `|H|` transfers each. If a frame `F` holds at most one transfer of each orbit, its images
//! `h(F)` are `|H|` disjoint frames made of whole orbits. A schedule can therefore be built
//! group by group: search one frame, place it with all its images, and go on with the rest,
//! which is again a union of orbits. The search tree is `|H|` times shallower, and every frame
//! it tries already fits `|H|` places of the network at once: on a torus all-to-all whose
//! bottleneck load is a multiple of `|H|`, this finds liquid schedules the plain search does not
//! reach.
//!
//! "At most one transfer per orbit" is a resource like the others: each orbit gets a virtual
//! resource of one slot that all its transfers use. In the last group it is critical (all
//! remaining orbits must be in the frame), as the search's demands say by themselves.
//!
//! The group only guides construction: failing to find a symmetric schedule proves nothing,
//! and the plain search runs afterwards.

use std::collections::HashMap;

use super::traffic::Traffic;
use crate::error::CoreResult;

/// A group of automorphisms acting freely on the transfers of a traffic.
pub(super) struct Group {
    /// For each element other than the identity, the image of every transfer.
    pub(super) images: Vec<Vec<u32>>,
    /// Orbit of every transfer, numbered from 0.
    pub(super) orbit: Vec<u32>,
    pub(super) orbits: usize,
}

impl Group {
    /// The group of the resource permutations `perms` (the identity may be left out) acting on
    /// `tr`, or None when one is not an automorphism of the traffic (a resource out of range, not
    /// a bijection, slots changed, a path mapped to no transfer), or the elements do not act as
    /// a group acting freely (an orbit not of `|H|` distinct transfers).
    pub(super) fn of_traffic(tr: &Traffic, perms: &[Vec<u32>]) -> Option<Group> {
        let resources = tr.users.len();
        let mut by_path: HashMap<&[u32], Vec<u32>> = HashMap::new();
        let mut copy_index = vec![0u32; tr.len()];
        for (t, p) in tr.paths.iter().enumerate() {
            let same = by_path.entry(p.as_slice()).or_default();
            copy_index[t] = same.len() as u32;
            same.push(t as u32);
        }
        let mut images = Vec::new();
        for perm in perms {
            if perm.len() != resources || !is_permutation(perm) {
                return None;
            }
            if perm.iter().enumerate().all(|(r, &s)| r as u32 == s) {
                continue;
            }
            if (0..resources).any(|r| tr.slots[perm[r] as usize] != tr.slots[r]) {
                return None;
            }
            let mut image = Vec::with_capacity(tr.len());
            let mut mapped = Vec::new();
            for (t, p) in tr.paths.iter().enumerate() {
                mapped.clear();
                mapped.extend(p.iter().map(|&r| perm[r as usize]));
                mapped.sort_unstable();
                let same = by_path.get(mapped.as_slice())?;
                image.push(*same.get(copy_index[t] as usize)?);
            }
            images.push(image);
        }
        if images.is_empty() {
            return None;
        }
        let order = images.len() + 1;
        // Orbit of t: t and its images. A free group action gives |H| distinct transfers, and
        // every member has the same orbit.
        let mut orbit = vec![u32::MAX; tr.len()];
        let mut orbits = 0u32;
        let mut members = Vec::with_capacity(order);
        for t in 0..tr.len() {
            if orbit[t] != u32::MAX {
                continue;
            }
            members.clear();
            members.push(t as u32);
            members.extend(images.iter().map(|img| img[t]));
            for &m in &members {
                if orbit[m as usize] != u32::MAX {
                    return None;
                }
                orbit[m as usize] = orbits;
            }
            orbits += 1;
        }
        for t in 0..tr.len() {
            if images.iter().any(|img| orbit[img[t] as usize] != orbit[t]) {
                return None;
            }
        }
        Some(Group {
            images,
            orbit,
            orbits: orbits as usize,
        })
    }

    /// Elements of the group, the identity included.
    pub(super) fn order(&self) -> usize {
        self.images.len() + 1
    }

    /// The traffic with one more resource per orbit, of one slot, on every transfer of it.
    pub(super) fn with_orbit_resources(&self, tr: &Traffic) -> CoreResult<Traffic> {
        let resources = tr.users.len();
        let paths: Vec<Vec<u32>> = tr
            .paths
            .iter()
            .enumerate()
            .map(|(t, p)| {
                let mut q = p.clone();
                q.push((resources + self.orbit[t] as usize) as u32);
                q
            })
            .collect();
        let mut slots = tr.slots.clone();
        slots.resize(resources + self.orbits, 1);
        Traffic::new(&paths, resources + self.orbits, &slots)
    }
}

fn is_permutation(perm: &[u32]) -> bool {
    let mut seen = vec![false; perm.len()];
    perm.iter().all(|&s| {
        (s as usize) < perm.len() && !std::mem::replace(&mut seen[s as usize], true)
    })
}

#[cfg(test)]
mod tests {
    use crate::liquid::tests::ring_all_to_all;
    use crate::liquid::{liquid_schedule, SearchOptions, Source};
    use crate::testing::is_valid_schedule;

    /// The rotation of the ring by `k`, as a permutation of its resources.
    fn rotation(n: u32, k: u32) -> Vec<u32> {
        (0..3 * n).map(|r| (r / n) * n + (r % n + k) % n).collect()
    }

    #[test]
    fn rotations_of_a_ring_cover_its_frames() {
        // n = 5: Λ = 1 + 2 + 3 + 4 = 10 on each ring link, twice the order of the rotations.
        let n = 5;
        let paths = ring_all_to_all(n);
        let group: Vec<Vec<u32>> = (0..n).map(|k| rotation(n, k)).collect();
        let opts = SearchOptions {
            symmetry: group.clone(),
            ..SearchOptions::default()
        };
        let r = liquid_schedule(&paths, 3 * n as usize, &[], &opts).unwrap();
        assert_eq!(r.duration, 10);
        assert!(r.liquid && r.optimal && is_valid_schedule(&paths, &r.frames));
        assert_eq!((r.source, r.symmetry_order), (Source::Symmetric, 5));
        // Every frame's rotations are frames of the schedule.
        let as_paths = |frame: &[u32], rot: &[u32]| {
            let mut f: Vec<Vec<u32>> = frame
                .iter()
                .map(|&t| {
                    let mut p: Vec<u32> = paths[t as usize].iter().map(|&x| rot[x as usize]).collect();
                    p.sort_unstable();
                    p
                })
                .collect();
            f.sort();
            f
        };
        let frames: Vec<Vec<Vec<u32>>> = r.frames.iter().map(|f| as_paths(f, &group[0])).collect();
        for f in &r.frames {
            for rot in &group {
                assert!(frames.contains(&as_paths(f, rot)));
            }
        }
    }

    #[test]
    fn a_permutation_that_is_no_automorphism_is_ignored() {
        let n = 4;
        let paths = ring_all_to_all(n);
        let mut wrong = rotation(n, 0);
        wrong.swap(0, n as usize);
        let opts = SearchOptions {
            symmetry: vec![wrong],
            ..SearchOptions::default()
        };
        let r = liquid_schedule(&paths, 3 * n as usize, &[], &opts).unwrap();
        assert_eq!(r.symmetry_order, 1);
        assert!(r.liquid && is_valid_schedule(&paths, &r.frames));
    }
}

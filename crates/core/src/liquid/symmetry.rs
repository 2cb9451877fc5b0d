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
use std::time::Instant;

use super::traffic::Traffic;
use crate::error::CoreResult;
use crate::interrupt::Interrupt;

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
    /// a group acting freely (an orbit not of `|H|` distinct transfers). None too when
    /// `deadline` passes, the interrupt fires or the caller asks to stop while the transfers'
    /// images are computed (the group is then not used).
    pub(super) fn of_traffic(
        tr: &Traffic,
        perms: &[Vec<u32>],
        deadline: Option<Instant>,
        interrupt: &Interrupt,
    ) -> Option<Group> {
        let passed = || {
            deadline.is_some_and(|d| Instant::now() >= d)
                || interrupt.stop_requested()
                || interrupt.is_set()
        };
        if passed() {
            return None;
        }
        let resources = tr.users.len();
        let mut moving = Vec::with_capacity(perms.len());
        for perm in perms {
            if perm.len() != resources || !is_permutation(perm) {
                return None;
            }
            if (0..resources).any(|r| tr.slots[perm[r] as usize] != tr.slots[r]) {
                return None;
            }
            if !is_identity(perm) {
                moving.push(perm);
            }
        }
        let index = PathIndex::new(&tr.paths, resources);
        let images = element_images(tr, &index, moving, passed)?;
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

/// The transfers of a traffic found by their path, for the millions of look-ups of a group's
/// images. A path's fingerprint is the sum of a pseudo-random key per resource, so that it does
/// not depend on the order of the path; transfers are kept ordered by fingerprint, path and
/// index, and an open-addressing table leads from a fingerprint to its first transfer. A
/// look-up compares paths, so that two paths with one fingerprint are still told apart.
struct PathIndex<'a> {
    paths: &'a [Vec<u32>],
    keys: Vec<u64>,
    /// Transfers by (fingerprint, path, index): the copies of a path are a run.
    order: Vec<u32>,
    /// Where the run of equal paths that `order[i]` belongs to ends.
    run_end: Vec<u32>,
    /// Fingerprint of `order[i]`.
    fingerprint: Vec<u64>,
    /// Position in `order` plus one of a fingerprint's first transfer (0: empty).
    table: Vec<u32>,
    /// Rank of each transfer among the copies of its path.
    copy_index: Vec<u32>,
}

impl<'a> PathIndex<'a> {
    fn new(paths: &'a [Vec<u32>], resources: usize) -> Self {
        // splitmix64 of the resource index: keys whose sums collide only by chance.
        let keys: Vec<u64> = (0..resources as u64)
            .map(|r| {
                let mut z = (r + 1).wrapping_mul(0x9E37_79B9_7F4A_7C15);
                z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
                z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
                z ^ (z >> 31)
            })
            .collect();
        let fps: Vec<u64> = paths.iter().map(|p| key_sum(&keys, p)).collect();
        let mut order: Vec<u32> = (0..paths.len() as u32).collect();
        order.sort_unstable_by(|&a, &b| {
            let (a, b) = (a as usize, b as usize);
            (fps[a], &paths[a], a).cmp(&(fps[b], &paths[b], b))
        });
        let n = order.len();
        let mut run_end = vec![n as u32; n];
        let mut copy_index = vec![0u32; n];
        for i in (0..n.saturating_sub(1)).rev() {
            let (a, b) = (order[i] as usize, order[i + 1] as usize);
            if fps[a] == fps[b] && paths[a] == paths[b] {
                run_end[i] = run_end[i + 1];
            } else {
                run_end[i] = (i + 1) as u32;
            }
        }
        let mut start = 0;
        for i in 0..n {
            if i > 0 && run_end[i - 1] == i as u32 {
                start = i;
            }
            copy_index[order[i] as usize] = (i - start) as u32;
        }
        let fingerprint: Vec<u64> = order.iter().map(|&t| fps[t as usize]).collect();
        let mask = (2 * n).next_power_of_two().max(2) - 1;
        let mut table = vec![0u32; mask + 1];
        for i in (0..n).rev() {
            let mut h = (fingerprint[i] as usize) & mask;
            // The last write for a fingerprint is its first position: walk to its slot or an empty one.
            while table[h] != 0 && fingerprint[table[h] as usize - 1] != fingerprint[i] {
                h = (h + 1) & mask;
            }
            table[h] = i as u32 + 1;
        }
        PathIndex {
            paths,
            keys,
            order,
            run_end,
            fingerprint,
            table,
            copy_index,
        }
    }

    /// The transfers whose path is `path` (sorted), in increasing index; None when there are none.
    fn copies_of(&self, path: &[u32]) -> Option<&[u32]> {
        let fp = key_sum(&self.keys, path);
        let mask = self.table.len() - 1;
        let mut h = (fp as usize) & mask;
        let mut i = loop {
            match self.table[h] {
                0 => return None,
                k if self.fingerprint[k as usize - 1] == fp => break k as usize - 1,
                _ => h = (h + 1) & mask,
            }
        };
        while i < self.order.len() && self.fingerprint[i] == fp {
            let end = self.run_end[i] as usize;
            if self.paths[self.order[i] as usize] == path {
                return Some(&self.order[i..end]);
            }
            i = end;
        }
        None
    }
}

/// The fingerprint of a path: its resources' keys summed, in any order.
fn key_sum(keys: &[u64], path: &[u32]) -> u64 {
    path.iter()
        .fold(0u64, |a, &r| a.wrapping_add(keys[r as usize]))
}

/// The image of every transfer under each of `perms` (automorphisms of `tr`, none the
/// identity), in their order: looked up by path for a few generators, and composed for every
/// element that is a generator times an element already known, which is most of a group (on
/// `torus:dims=8/8/8`, 127 elements on 261,632 transfers took 17 s by look-ups alone). None
/// when a path maps to no transfer, or when `passed()` says to give up.
fn element_images(
    tr: &Traffic,
    index: &PathIndex,
    perms: Vec<&Vec<u32>>,
    passed: impl Fn() -> bool,
) -> Option<Vec<Vec<u32>>> {
    // Images in the order they are found, and the position in `perms` of each.
    let mut images: Vec<Vec<u32>> = Vec::with_capacity(perms.len());
    let mut position = Vec::with_capacity(perms.len());
    let mut known: HashMap<&[u32], usize> = HashMap::new();
    // Generators: the index of their images and their inverse permutation.
    let mut generators: Vec<(usize, Vec<u32>)> = Vec::new();
    let mut pending: Vec<(usize, &Vec<u32>)> = perms.into_iter().enumerate().collect();
    while !pending.is_empty() {
        if passed() {
            return None;
        }
        let mut composed = false;
        let mut i = 0;
        while i < pending.len() {
            let (at, perm) = pending[i];
            match composed_image(perm, &generators, &known, &images) {
                Some(image) => {
                    known.insert(perm, images.len());
                    images.push(image);
                    position.push(at);
                    pending.swap_remove(i);
                    composed = true;
                }
                None => i += 1,
            }
        }
        if !composed && !pending.is_empty() {
            let (at, perm) = pending.swap_remove(0);
            let image = looked_up_image(tr, index, perm)?;
            let mut inverse = vec![0u32; perm.len()];
            for (r, &s) in perm.iter().enumerate() {
                inverse[s as usize] = r as u32;
            }
            generators.push((images.len(), inverse));
            known.insert(perm, images.len());
            images.push(image);
            position.push(at);
        }
    }
    let mut ordered: Vec<Vec<u32>> = vec![Vec::new(); images.len()];
    for (image, at) in images.into_iter().zip(position) {
        ordered[at] = image;
    }
    Some(ordered)
}

/// The image of every transfer under `perm` when `perm = g ∘ q` for a generator `g` and an
/// element `q` whose images are known (or the identity): `g`'s images of `q`'s.
fn composed_image(
    perm: &[u32],
    generators: &[(usize, Vec<u32>)],
    known: &HashMap<&[u32], usize>,
    images: &[Vec<u32>],
) -> Option<Vec<u32>> {
    for (g, inverse) in generators {
        let q: Vec<u32> = perm.iter().map(|&s| inverse[s as usize]).collect();
        let of_g = &images[*g];
        if is_identity(&q) {
            return Some(of_g.clone());
        }
        if let Some(&of_q) = known.get(&q[..]) {
            return Some(images[of_q].iter().map(|&t| of_g[t as usize]).collect());
        }
    }
    None
}

/// The image of every transfer under `perm`, each found by its mapped path (the copies of a
/// path keep their rank); None when a mapped path is no transfer's.
fn looked_up_image(tr: &Traffic, index: &PathIndex, perm: &[u32]) -> Option<Vec<u32>> {
    let mut image = Vec::with_capacity(tr.len());
    let mut mapped = Vec::new();
    for (t, p) in tr.paths.iter().enumerate() {
        mapped.clear();
        mapped.extend(p.iter().map(|&r| perm[r as usize]));
        mapped.sort_unstable();
        let same = index.copies_of(&mapped)?;
        image.push(*same.get(index.copy_index[t] as usize)?);
    }
    Some(image)
}

fn is_identity(perm: &[u32]) -> bool {
    perm.iter().enumerate().all(|(r, &s)| r as u32 == s)
}

fn is_permutation(perm: &[u32]) -> bool {
    let mut seen = vec![false; perm.len()];
    perm.iter()
        .all(|&s| (s as usize) < perm.len() && !std::mem::replace(&mut seen[s as usize], true))
}

#[cfg(test)]
mod tests {
    use std::time::Instant;

    use super::{element_images, looked_up_image, Group, PathIndex, Traffic};
    use crate::interrupt::Interrupt;
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
                    let mut p: Vec<u32> =
                        paths[t as usize].iter().map(|&x| rot[x as usize]).collect();
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
    fn copies_of_a_path_map_to_copies_in_order() {
        // Every transfer of the ring's all-to-all twice: the k-th copy of a path maps to the
        // k-th copy of its image, and each orbit holds n distinct transfers.
        let n = 4;
        let once = ring_all_to_all(n);
        let paths: Vec<Vec<u32>> = once.iter().chain(once.iter()).cloned().collect();
        let tr = Traffic::new(&paths, 3 * n as usize, &[]).unwrap();
        let rotations: Vec<Vec<u32>> = (1..n).map(|k| rotation(n, k)).collect();
        let group = Group::of_traffic(&tr, &rotations, None, &Interrupt::never())
            .expect("the rotations act");
        let m = once.len() as u32;
        for (k, image) in group.images.iter().enumerate() {
            let rot = rotation(n, k as u32 + 1);
            for (t, &i) in image.iter().enumerate() {
                assert_eq!((t as u32) < m, i < m, "a first copy maps to a first copy");
                let mut mapped: Vec<u32> = paths[t].iter().map(|&r| rot[r as usize]).collect();
                mapped.sort_unstable();
                assert_eq!(paths[i as usize], mapped);
            }
        }
        assert_eq!(group.orbits, paths.len() / n as usize);
    }

    #[test]
    fn composed_images_are_the_looked_up_ones() {
        // Copies of every path, and rotations listed so that products come before factors.
        let n = 8;
        let once = ring_all_to_all(n);
        let paths: Vec<Vec<u32>> = once.iter().chain(once.iter()).cloned().collect();
        let tr = Traffic::new(&paths, 3 * n as usize, &[]).unwrap();
        let index = PathIndex::new(&tr.paths, 3 * n as usize);
        let perms: Vec<Vec<u32>> = [6, 2, 7, 5, 3, 1, 4]
            .iter()
            .map(|&k| rotation(n, k))
            .collect();
        let images = element_images(&tr, &index, perms.iter().collect(), || false).unwrap();
        assert_eq!(images.len(), perms.len());
        for (perm, image) in perms.iter().zip(&images) {
            assert_eq!(Some(image), looked_up_image(&tr, &index, perm).as_ref());
        }
        // Giving up is heard.
        assert!(element_images(&tr, &index, perms.iter().collect(), || true).is_none());
    }

    #[test]
    fn a_passed_deadline_gives_no_group() {
        let n = 4;
        let tr = Traffic::new(&ring_all_to_all(n), 3 * n as usize, &[]).unwrap();
        let past = Some(Instant::now() - std::time::Duration::from_millis(1));
        assert!(Group::of_traffic(&tr, &[rotation(n, 1)], past, &Interrupt::never()).is_none());
        let one = Group::of_traffic(&tr, &[rotation(n, 1)], None, &Interrupt::never());
        assert!(one.is_none(), "one rotation of four is no group");
        let all: Vec<Vec<u32>> = (1..n).map(|k| rotation(n, k)).collect();
        let order = Group::of_traffic(&tr, &all, None, &Interrupt::never()).map(|g| g.order());
        assert_eq!(order, Some(4));
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

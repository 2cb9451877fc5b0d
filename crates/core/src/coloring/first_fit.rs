//! First fit: each transfer, in the order given, into the lowest frame in which every
//! resource of its path has a free slot. Near-linear, for when even DSatur would take too long.

use crate::error::{CoreError, CoreResult};
use crate::slots::{check_paths, checked_slots};

/// Frames of a first-fit colouring: the transfers taken in the order given, each into the
/// lowest frame in which every resource of its path has a free slot (a resource listed twice
/// in a path takes two). Frames list transfer indices in increasing order. `slots[r]` is the
/// number of transfers resource `r` carries at once (empty: one each).
///
/// For when there is no time even for DSatur (see [`dsatur_until`](super::dsatur_until)): it
/// never looks at the conflicts between transfers, only at the frames each resource is full in,
/// so it costs about the total length of the paths (a few milliseconds for tens of thousands of
/// transfers), where DSatur goes through the transfers of each resource for every colour that
/// fills it and first counts every transfer's conflicts; its schedules are usually longer.
pub fn first_fit(paths: &[Vec<u32>], resources: usize, slots: &[u32]) -> CoreResult<Vec<Vec<u32>>> {
    let slots = checked_slots(slots, resources)?;
    check_paths(paths, resources)?;
    let mut occupancy = Occupancy::new(slots);
    let mut frames: Vec<Vec<u32>> = Vec::new();
    // seen[r] == t + 1: resource r already met in the path of transfer t.
    let mut seen = vec![0usize; resources];
    let mut repeated: Vec<(u32, u32)> = Vec::new();
    for (t, path) in paths.iter().enumerate() {
        repeated.clear();
        for &r in path {
            if std::mem::replace(&mut seen[r as usize], t + 1) == t + 1 {
                repeated.push((r, 0));
            }
        }
        let f = if repeated.is_empty() {
            occupancy.first_free(path, 0)
        } else {
            // Rare: count the slots each repeated resource needs, and step past the frames
            // where they are not all free.
            repeated.sort_unstable();
            repeated.dedup();
            for (r, need) in repeated.iter_mut() {
                *need = path.iter().filter(|&&s| s == *r).count() as u32;
                let k = occupancy.slots[*r as usize];
                if *need > k {
                    return Err(CoreError::InvalidInput(format!(
                        "transfer {t} uses resource {r} {need} times but it has {k} slots"
                    )));
                }
            }
            let mut f = occupancy.first_free(path, 0);
            while !repeated.iter().all(|&(r, need)| {
                occupancy.used(r as usize, f) + need <= occupancy.slots[r as usize]
            }) {
                f = occupancy.first_free(path, f + 1);
            }
            f
        };
        for &r in path {
            occupancy.take(r as usize, f);
        }
        if f as usize == frames.len() {
            frames.push(Vec::new());
        }
        frames[f as usize].push(t as u32);
    }
    Ok(frames)
}

/// The frames each resource is full in.
struct Occupancy {
    slots: Vec<u32>,
    /// `full[r]`: bit `f` set when resource `r` is full in frame `f`.
    full: Vec<Vec<u64>>,
    /// `summary[r]`: bit `w` set when word `w` of `full[r]` is all set.
    summary: Vec<Vec<u64>>,
    /// `used[r][f]`: transfers of frame `f` on resource `r` (resources of several slots only).
    used: Vec<Vec<u32>>,
    /// `lowest[r]`: no frame below it has a free slot on `r`.
    lowest: Vec<u32>,
}

impl Occupancy {
    fn new(slots: Vec<u32>) -> Self {
        let resources = slots.len();
        Occupancy {
            slots,
            full: vec![Vec::new(); resources],
            summary: vec![Vec::new(); resources],
            used: vec![Vec::new(); resources],
            lowest: vec![0; resources],
        }
    }

    /// The lowest frame from `from` on in which every resource of `path` has a free slot.
    fn first_free(&mut self, path: &[u32], from: u32) -> u32 {
        let mut f = from;
        let mut agreed = 0;
        let mut i = 0;
        while agreed < path.len() {
            let g = self.next_free(path[i] as usize, f);
            if g == f {
                agreed += 1;
            } else {
                f = g;
                agreed = 1;
            }
            i = if i + 1 == path.len() { 0 } else { i + 1 };
        }
        f
    }

    /// The lowest frame from `from` on in which resource `r` has a free slot.
    fn next_free(&mut self, r: usize, from: u32) -> u32 {
        if from <= self.lowest[r] {
            let lowest = self.scan(r, self.lowest[r]);
            self.lowest[r] = lowest;
            lowest
        } else {
            self.scan(r, from)
        }
    }

    /// The first clear bit of `full[r]` from `from` on.
    fn scan(&self, r: usize, from: u32) -> u32 {
        let full = &self.full[r];
        let w = (from / 64) as usize;
        if w >= full.len() {
            return from;
        }
        let word = full[w] | ((1u64 << (from % 64)) - 1);
        if word != u64::MAX {
            return (w * 64) as u32 + (!word).trailing_zeros();
        }
        // The first word after w not all set, through the summary.
        let summary = &self.summary[r];
        let mut s = (w + 1) / 64;
        let mut bits = summary.get(s).copied().unwrap_or(0) | ((1u64 << ((w + 1) % 64)) - 1);
        while bits == u64::MAX {
            s += 1;
            bits = summary.get(s).copied().unwrap_or(0);
        }
        let w = s * 64 + (!bits).trailing_zeros() as usize;
        match full.get(w) {
            Some(&word) => (w * 64) as u32 + (!word).trailing_zeros(),
            None => (w * 64) as u32,
        }
    }

    /// Transfers of frame `f` on resource `r`.
    fn used(&self, r: usize, f: u32) -> u32 {
        if self.slots[r] == 1 {
            let w = (f / 64) as usize;
            self.full[r]
                .get(w)
                .map_or(0, |&word| ((word >> (f % 64)) & 1) as u32)
        } else {
            self.used[r].get(f as usize).copied().unwrap_or(0)
        }
    }

    /// Put one more transfer on resource `r` in frame `f` (which has a free slot on it).
    fn take(&mut self, r: usize, f: u32) {
        if self.slots[r] > 1 {
            let used = &mut self.used[r];
            if used.len() <= f as usize {
                used.resize(f as usize + 1, 0);
            }
            used[f as usize] += 1;
            if used[f as usize] < self.slots[r] {
                return;
            }
        }
        let full = &mut self.full[r];
        let w = (f / 64) as usize;
        if full.len() <= w {
            full.resize(w + 1, 0);
        }
        full[w] |= 1u64 << (f % 64);
        if full[w] == u64::MAX {
            let summary = &mut self.summary[r];
            if summary.len() <= w / 64 {
                summary.resize(w / 64 + 1, 0);
            }
            summary[w / 64] |= 1u64 << (w % 64);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::coloring::tests::random_traffic;
    use crate::testing::{is_valid_schedule, is_valid_with_slots, Rng};

    #[test]
    fn first_fit_places_each_transfer_in_its_lowest_free_frame() {
        // By brute force: each transfer, in order, in the lowest frame all its resources have
        // room in.
        fn reference(paths: &[Vec<u32>], slots: &[u32]) -> Vec<Vec<u32>> {
            let mut on: Vec<Vec<u32>> = Vec::new();
            let mut frames: Vec<Vec<u32>> = Vec::new();
            for (t, path) in paths.iter().enumerate() {
                let mut need = vec![0u32; slots.len()];
                path.iter().for_each(|&r| need[r as usize] += 1);
                let fits = |on: &Vec<u32>| {
                    path.iter()
                        .all(|&r| on[r as usize] + need[r as usize] <= slots[r as usize])
                };
                let f = on.iter().position(fits).unwrap_or(on.len());
                if f == on.len() {
                    on.push(vec![0; slots.len()]);
                    frames.push(Vec::new());
                }
                path.iter().for_each(|&r| on[f][r as usize] += 1);
                frames[f].push(t as u32);
            }
            frames
        }
        let mut rng = Rng(31);
        for round in 0..300u64 {
            let n = 1 + rng.below(if round < 250 { 200 } else { 3000 }) as usize;
            let resources = 1 + rng.below(30) as usize;
            let max_slots = [1, 2, 3][round as usize % 3];
            let (mut paths, slots) =
                random_traffic(&mut rng, n, resources, max_slots, 4, round % 4 == 3);
            if round % 4 == 3 {
                // Keep only repeats that fit.
                for p in &mut paths {
                    let mut count = vec![0u32; resources];
                    p.retain(|&r| {
                        count[r as usize] += 1;
                        count[r as usize] <= slots[r as usize]
                    });
                }
            }
            let frames = first_fit(&paths, resources, &slots).unwrap();
            assert!(
                is_valid_with_slots(&paths, &slots, &frames),
                "round {round}"
            );
            assert_eq!(frames, reference(&paths, &slots), "round {round}");
            if max_slots == 1 {
                let frames = first_fit(&paths, resources, &[]).unwrap();
                assert!(is_valid_schedule(&paths, &frames));
            }
        }
    }

    #[test]
    fn first_fit_skips_long_runs_of_full_frames() {
        // Resources a = 0, b = 1, d = 2: d full in frames 0..5000, b in 5000..9001 but 7000.
        let mut paths = vec![vec![0u32, 2]; 5000];
        paths.extend(vec![vec![0u32, 1]; 2000]);
        paths.push(vec![0]);
        paths.extend(vec![vec![0u32, 1]; 2000]);
        paths.push(vec![1, 2]);
        paths.push(vec![1, 2]);
        let frames = first_fit(&paths, 3, &[]).unwrap();
        assert!(is_valid_schedule(&paths, &frames));
        assert_eq!(frames.len(), 9002);
        assert_eq!(frames[7000], vec![7000, 9001]);
        assert_eq!(frames[9001], vec![9002]);
    }
}

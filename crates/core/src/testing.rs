//! Helpers shared by the unit tests of the algorithm modules.

use std::collections::HashSet;

/// Every transfer in exactly one frame, and no resource over its slots in a frame.
pub fn is_valid_with_slots(paths: &[Vec<u32>], slots: &[u32], frames: &[Vec<u32>]) -> bool {
    crate::slots::frames_fit(paths, slots, frames)
}

/// Smallest number of frames with at most `slots[r]` transfers on resource `r`, by trying
/// every assignment (tiny cases only).
pub fn brute_force_frames(paths: &[Vec<u32>], slots: &[u32]) -> usize {
    fn place(
        paths: &[Vec<u32>],
        slots: &[u32],
        t: usize,
        frames: &mut Vec<Vec<u32>>,
        best: &mut usize,
    ) {
        if frames.len() >= *best {
            return;
        }
        if t == paths.len() {
            *best = frames.len();
            return;
        }
        for f in 0..frames.len() {
            if paths[t]
                .iter()
                .all(|&r| frames[f][r as usize] < slots[r as usize])
            {
                paths[t].iter().for_each(|&r| frames[f][r as usize] += 1);
                place(paths, slots, t + 1, frames, best);
                paths[t].iter().for_each(|&r| frames[f][r as usize] -= 1);
            }
        }
        let mut fresh = vec![0u32; slots.len()];
        paths[t].iter().for_each(|&r| fresh[r as usize] += 1);
        frames.push(fresh);
        place(paths, slots, t + 1, frames, best);
        frames.pop();
    }
    let mut best = paths.len();
    place(paths, slots, 0, &mut Vec::new(), &mut best);
    best
}

/// Every transfer in exactly one frame, and no resource twice in a frame.
pub fn is_valid_schedule(paths: &[Vec<u32>], frames: &[Vec<u32>]) -> bool {
    let mut seen = vec![false; paths.len()];
    for f in frames {
        let mut used = HashSet::new();
        for &t in f {
            if std::mem::replace(&mut seen[t as usize], true) {
                return false;
            }
            if !paths[t as usize].iter().all(|r| used.insert(*r)) {
                return false;
            }
        }
    }
    seen.iter().all(|&s| s)
}

/// Paper 000 Fig. 2, half all-to-all: resources 0-4 are the sender links, 5-9 the receiver
/// links, 10 the link a→b (senders 0-2 to receivers 3-4) and 11 the link b→a.
pub fn two_switch_paths() -> Vec<Vec<u32>> {
    let mut paths = Vec::new();
    for i in 0..5u32 {
        for j in 0..5u32 {
            let mut p = vec![i, 5 + j];
            if i < 3 && j >= 3 {
                p.push(10);
            }
            if i >= 3 && j < 3 {
                p.push(11);
            }
            paths.push(p);
        }
    }
    paths
}

/// A small pseudo-random generator for the tests (xorshift).
pub struct Rng(pub u64);

impl Rng {
    /// A number below `m`.
    pub fn below(&mut self, m: u64) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0 % m
    }
}

/// A random traffic: `(paths, slots)` with up to 9 transfers on 2–7 resources of 1–3 slots.
pub fn random_slot_traffic(rng: &mut Rng) -> (Vec<Vec<u32>>, Vec<u32>) {
    let n = 1 + rng.below(9) as usize;
    let resources = 2 + rng.below(6) as usize;
    let slots = (0..resources).map(|_| 1 + rng.below(3) as u32).collect();
    let paths = (0..n)
        .map(|_| {
            let len = 1 + rng.below(3) as usize;
            let mut p: Vec<u32> = (0..len)
                .map(|_| rng.below(resources as u64) as u32)
                .collect();
            p.sort_unstable();
            p.dedup();
            p
        })
        .collect();
    (paths, slots)
}

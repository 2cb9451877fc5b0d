//! Test only: DSatur as first written, the oracle the fast one (`dsatur`) is checked against.

use crate::slots::checked_slots;

/// DSatur as first written, one scan of every vertex per step: the reference the faster
/// one must agree with exactly.
pub(super) fn reference_dsatur(
    paths: &[Vec<u32>],
    resources: usize,
    slots: &[u32],
) -> Vec<Vec<u32>> {
    let slots = checked_slots(slots, resources).unwrap();
    let n = paths.len();
    let mut users: Vec<Vec<u32>> = vec![Vec::new(); resources];
    for (t, path) in paths.iter().enumerate() {
        for &r in path {
            users[r as usize].push(t as u32);
        }
    }
    let mut mark = vec![u32::MAX; n];
    let degree: Vec<u32> = paths
        .iter()
        .enumerate()
        .map(|(v, path)| {
            let mut d = 0;
            mark[v] = v as u32;
            for &r in path {
                for &u in &users[r as usize] {
                    if mark[u as usize] != v as u32 {
                        mark[u as usize] = v as u32;
                        d += 1;
                    }
                }
            }
            d
        })
        .collect();
    let mut colours_of: Vec<Vec<u64>> = vec![Vec::new(); n];
    let mut saturation = vec![0u32; n];
    let mut colour = vec![u32::MAX; n];
    let mut frames: Vec<Vec<u32>> = Vec::new();
    let mut in_colour: Vec<Vec<u32>> = vec![Vec::new(); resources];
    for _ in 0..n {
        let mut v = usize::MAX;
        for u in 0..n {
            if colour[u] == u32::MAX
                && (v == usize::MAX || (saturation[u], degree[u]) > (saturation[v], degree[v]))
            {
                v = u;
            }
        }
        let bits = &colours_of[v];
        let c = bits
            .iter()
            .position(|&w| w != u64::MAX)
            .map_or(bits.len() * 64, |w| {
                w * 64 + (!bits[w]).trailing_zeros() as usize
            }) as u32;
        colour[v] = c;
        if c as usize == frames.len() {
            frames.push(Vec::new());
        }
        frames[c as usize].push(v as u32);
        for &r in &paths[v] {
            let k = slots[r as usize];
            if k > 1 {
                let counts = &mut in_colour[r as usize];
                if counts.len() <= c as usize {
                    counts.resize(c as usize + 1, 0);
                }
                counts[c as usize] += 1;
                if counts[c as usize] < k {
                    continue;
                }
            }
            for &u in &users[r as usize] {
                let u = u as usize;
                if colour[u] != u32::MAX {
                    continue;
                }
                let (w, b) = ((c / 64) as usize, c % 64);
                if colours_of[u].len() <= w {
                    colours_of[u].resize(w + 1, 0);
                }
                if colours_of[u][w] & (1 << b) == 0 {
                    colours_of[u][w] |= 1 << b;
                    saturation[u] += 1;
                }
            }
        }
    }
    for f in &mut frames {
        f.sort_unstable();
    }
    frames
}

//! DSatur colouring of the conflict graph (paper 000, Annex A), generalised to slots.
//!
//! Vertices are transfers; a colour is a timeframe. With one slot per resource, two transfers
//! conflict when their paths share a resource. A resource with `k` slots takes up to `k`
//! transfers of one colour: a colour becomes unavailable to the transfers of a resource once
//! `k` of them have it. The conflict graph is never built: the transfers of each resource are
//! the cliques it is made of, and a colour is pushed to a vertex's neighbours through them when
//! it fills the resource. A vertex's saturation is the number of colours it can no longer take.

use crate::error::{CoreError, CoreResult};
use crate::slots::checked_slots;

/// Colour classes (frames) of a DSatur colouring, each a list of transfer indices in
/// increasing order; frames are ordered by colour. `slots[r]` is the number of transfers
/// resource `r` carries at once (empty: one each).
pub fn dsatur(paths: &[Vec<u32>], resources: usize, slots: &[u32]) -> CoreResult<Vec<Vec<u32>>> {
    let slots = checked_slots(slots, resources)?;
    let n = paths.len();
    let mut users: Vec<Vec<u32>> = vec![Vec::new(); resources];
    for (t, path) in paths.iter().enumerate() {
        for &r in path {
            let slot = users.get_mut(r as usize).ok_or_else(|| {
                CoreError::InvalidInput(format!(
                    "transfer {t} uses resource {r} but there are {resources}"
                ))
            })?;
            slot.push(t as u32);
        }
    }
    let degree = conflict_degrees(paths, &users);
    // colours_of[v]: bitset of the colours v's neighbours already have.
    let mut colours_of: Vec<Vec<u64>> = vec![Vec::new(); n];
    let mut saturation = vec![0u32; n];
    let mut colour = vec![u32::MAX; n];
    let mut frames: Vec<Vec<u32>> = Vec::new();
    // in_colour[r][c]: transfers of colour c on resource r (kept for resources with slots only).
    let mut in_colour: Vec<Vec<u32>> = vec![Vec::new(); resources];
    for _ in 0..n {
        let v = pick_vertex(&colour, &saturation, &degree);
        let c = smallest_free(&colours_of[v]);
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
                if colour[u] == u32::MAX && set_bit(&mut colours_of[u], c) {
                    saturation[u] += 1;
                }
            }
        }
    }
    for f in &mut frames {
        f.sort_unstable();
    }
    Ok(frames)
}

/// Number of distinct transfers each transfer conflicts with.
fn conflict_degrees(paths: &[Vec<u32>], users: &[Vec<u32>]) -> Vec<u32> {
    let mut mark = vec![u32::MAX; paths.len()];
    paths
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
        .collect()
}

/// The uncoloured vertex of highest saturation, then highest degree, then lowest index.
fn pick_vertex(colour: &[u32], saturation: &[u32], degree: &[u32]) -> usize {
    let mut best = usize::MAX;
    for v in 0..colour.len() {
        if colour[v] != u32::MAX {
            continue;
        }
        if best == usize::MAX || (saturation[v], degree[v]) > (saturation[best], degree[best]) {
            best = v;
        }
    }
    best
}

fn smallest_free(bits: &[u64]) -> u32 {
    for (w, &word) in bits.iter().enumerate() {
        if word != u64::MAX {
            return (w * 64) as u32 + (!word).trailing_zeros();
        }
    }
    (bits.len() * 64) as u32
}

/// Set bit `c`; true if it was not set.
fn set_bit(bits: &mut Vec<u64>, c: u32) -> bool {
    let (w, b) = ((c / 64) as usize, c % 64);
    if bits.len() <= w {
        bits.resize(w + 1, 0);
    }
    let was = bits[w] & (1 << b) != 0;
    bits[w] |= 1 << b;
    !was
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testing::{
        brute_force_frames, is_valid_schedule, is_valid_with_slots, random_slot_traffic,
        two_switch_paths, Rng,
    };

    #[test]
    fn two_switch_half_all_to_all() {
        let paths = two_switch_paths();
        let frames = dsatur(&paths, 12, &[]).unwrap();
        assert!(is_valid_schedule(&paths, &frames));
        assert!(frames.len() >= 6);
    }

    #[test]
    fn odd_cycle_needs_three_colours() {
        let paths = vec![vec![0, 1], vec![1, 2], vec![2, 0]];
        let frames = dsatur(&paths, 3, &[]).unwrap();
        assert_eq!(frames.len(), 3);
        assert!(is_valid_schedule(&paths, &frames));
    }

    #[test]
    fn disjoint_transfers_share_one_frame() {
        let paths = vec![vec![0], vec![1], vec![2]];
        assert_eq!(dsatur(&paths, 3, &[]).unwrap(), vec![vec![0, 1, 2]]);
    }

    #[test]
    fn bad_resource_is_an_error() {
        assert!(matches!(
            dsatur(&[vec![4]], 2, &[]),
            Err(CoreError::InvalidInput(_))
        ));
    }

    #[test]
    fn many_colours_cross_word_boundaries() {
        // 70 transfers on one resource: a clique of 70 needs 70 frames.
        let paths = vec![vec![0u32]; 70];
        let frames = dsatur(&paths, 1, &[]).unwrap();
        assert_eq!(frames.len(), 70);
        assert!(is_valid_schedule(&paths, &frames));
    }

    #[test]
    fn slots_let_a_resource_carry_several_transfers() {
        // Five transfers on one resource of 2 slots: 3 frames.
        let paths = vec![vec![0u32]; 5];
        let frames = dsatur(&paths, 1, &[2]).unwrap();
        assert_eq!(frames.len(), 3);
        assert!(is_valid_with_slots(&paths, &[2], &frames));
    }

    #[test]
    fn slot_colourings_are_valid_and_never_below_the_optimum() {
        let mut rng = Rng(77);
        for _ in 0..300 {
            let (paths, slots) = random_slot_traffic(&mut rng);
            let frames = dsatur(&paths, slots.len(), &slots).unwrap();
            assert!(
                is_valid_with_slots(&paths, &slots, &frames),
                "{paths:?} {slots:?}"
            );
            assert!(frames.len() >= brute_force_frames(&paths, &slots));
        }
    }
}

//! The orbit cover on rings (hand-counted), on malformed structures and on wrong groups.

use super::OrbitStructure;
use crate::error::CoreError;
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
            .filter(|step| n.is_multiple_of(*step))
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

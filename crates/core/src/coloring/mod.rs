//! DSatur colouring of the conflict graph (paper 000, Annex A), generalised to slots, and a
//! first-fit colouring for when even DSatur would take too long.
//!
//! Vertices are transfers; a colour is a timeframe. With one slot per resource, two transfers
//! conflict when their paths share a resource. A resource with `k` slots takes up to `k`
//! transfers of one colour: a colour becomes unavailable to the transfers of a resource once
//! `k` of them have it. The conflict graph is never built: the transfers of each resource are
//! the cliques it is made of, and a colour is pushed to a vertex's neighbours through them when
//! it fills the resource. A vertex's saturation is the number of colours it can no longer take.
//!
//! Cost: DSatur pushes each colour that fills a resource to the uncoloured transfers of that
//! resource (a bit test each), and keeps the uncoloured vertices in a max tree (saturation
//! first, then degree and index through the order of its leaves), so a step costs the pushes
//! it makes and a logarithm, not a scan of every vertex: in all, about the transfers of each
//! resource times the colours that fill it. The degrees are counted once, along a trie of the
//! paths that counts the transfers of resources shared by many paths once for all of them.
//! First fit costs about the total length of the paths.
//!
//! The parts: `dsatur` (DSatur and its deadline), `queue` (its max tree of the uncoloured
//! vertices), `degrees` (the conflict degrees and incidence lists), `first_fit`, and, in tests
//! only, `reference` (the old DSatur, the oracle of the new one).

mod degrees;
mod dsatur;
mod first_fit;
mod members;
mod pipeline;
mod queue;
#[cfg(test)]
mod reference;

pub use dsatur::{dsatur, dsatur_until, dsatur_with, expected_seconds};
pub use first_fit::first_fit;

#[cfg(test)]
mod tests {
    use super::*;
    use crate::error::CoreError;
    use crate::testing::{
        brute_force_frames, is_valid_schedule, is_valid_with_slots, random_slot_traffic, Rng,
    };

    /// `n` transfers over `resources` resources of 1 to `max_slots` slots (one each when
    /// `max_slots` is 1), paths of 1 to `max_len` distinct resources, and with `repeats` some
    /// resources listed twice.
    pub(super) fn random_traffic(
        rng: &mut Rng,
        n: usize,
        resources: usize,
        max_slots: u64,
        max_len: u64,
        repeats: bool,
    ) -> (Vec<Vec<u32>>, Vec<u32>) {
        let slots = (0..resources)
            .map(|_| 1 + rng.below(max_slots) as u32)
            .collect();
        let paths = (0..n)
            .map(|_| {
                let len = 1 + rng.below(max_len) as usize;
                let mut p: Vec<u32> = (0..len)
                    .map(|_| rng.below(resources as u64) as u32)
                    .collect();
                if !repeats {
                    p.sort_unstable();
                    p.dedup();
                }
                p
            })
            .collect();
        (paths, slots)
    }

    /// A random all-to-all on hosts with an up and a down link each, over a few shared
    /// middle resources.
    pub(super) fn random_all_to_all(
        rng: &mut Rng,
        hosts: u32,
        middle: u32,
        max_slots: u64,
    ) -> (Vec<Vec<u32>>, Vec<u32>) {
        let resources = 2 * hosts + middle;
        let slots = (0..resources)
            .map(|_| 1 + rng.below(max_slots) as u32)
            .collect();
        let mut paths = Vec::new();
        for s in 0..hosts {
            for d in 0..hosts {
                if s != d {
                    let mut p = vec![s, hosts + d];
                    for _ in 0..rng.below(3) {
                        p.push(2 * hosts + rng.below(middle as u64) as u32);
                    }
                    p.sort_unstable();
                    p.dedup();
                    paths.push(p);
                }
            }
        }
        (paths, slots)
    }

    #[test]
    fn disjoint_transfers_share_one_frame() {
        let paths = vec![vec![0], vec![1], vec![2]];
        assert_eq!(dsatur(&paths, 3, &[]).unwrap(), vec![vec![0, 1, 2]]);
        assert_eq!(first_fit(&paths, 3, &[]).unwrap(), vec![vec![0, 1, 2]]);
    }

    #[test]
    fn no_transfers_no_frames() {
        assert!(dsatur(&[], 2, &[]).unwrap().is_empty());
        assert!(first_fit(&[], 2, &[]).unwrap().is_empty());
        // A transfer on no resource conflicts with nothing.
        assert_eq!(
            dsatur(&[vec![], vec![0]], 1, &[]).unwrap(),
            vec![vec![0, 1]]
        );
        assert_eq!(
            first_fit(&[vec![], vec![0]], 1, &[]).unwrap(),
            vec![vec![0, 1]]
        );
    }

    #[test]
    fn bad_input_is_an_error() {
        assert!(matches!(
            dsatur(&[vec![4]], 2, &[]),
            Err(CoreError::InvalidInput(_))
        ));
        assert!(matches!(
            dsatur_until(&[vec![0]], 2, &[1], None, &crate::Interrupt::never()),
            Err(CoreError::InvalidInput(_))
        ));
        assert!(matches!(
            first_fit(&[vec![4]], 2, &[]),
            Err(CoreError::InvalidInput(_))
        ));
        assert!(matches!(
            first_fit(&[vec![0]], 1, &[0]),
            Err(CoreError::InvalidInput(_))
        ));
        // Twice on a resource of one slot: no frame can take it.
        assert!(matches!(
            first_fit(&[vec![0, 0]], 1, &[]),
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
        assert_eq!(first_fit(&paths, 1, &[]).unwrap(), frames);
    }

    #[test]
    fn slots_let_a_resource_carry_several_transfers() {
        // Five transfers on one resource of 2 slots: 3 frames.
        let paths = vec![vec![0u32]; 5];
        let frames = dsatur(&paths, 1, &[2]).unwrap();
        assert_eq!(frames.len(), 3);
        assert!(is_valid_with_slots(&paths, &[2], &frames));
        assert_eq!(
            first_fit(&paths, 1, &[2]).unwrap(),
            vec![vec![0, 1], vec![2, 3], vec![4]]
        );
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
            let optimum = brute_force_frames(&paths, &slots);
            assert!(frames.len() >= optimum);
            let greedy = first_fit(&paths, slots.len(), &slots).unwrap();
            assert!(
                is_valid_with_slots(&paths, &slots, &greedy),
                "{paths:?} {slots:?}"
            );
            assert!(greedy.len() >= optimum);
        }
    }

    #[test]
    fn first_fit_and_dsatur_are_fast_on_a_large_all_to_all() {
        let mut rng = Rng(8);
        let (paths, slots) = random_all_to_all(&mut rng, 160, 40, 3);
        let frames = first_fit(&paths, slots.len(), &slots).unwrap();
        assert!(is_valid_with_slots(&paths, &slots, &frames));
        let frames = dsatur(&paths, slots.len(), &slots).unwrap();
        assert!(is_valid_with_slots(&paths, &slots, &frames));
    }

    #[test]
    fn an_interrupt_stops_dsatur() {
        let paths: Vec<Vec<u32>> = (0..100u32).map(|t| vec![t % 7, 7 + t % 5]).collect();
        let stop = || true;
        assert_eq!(
            dsatur_with(&paths, 12, &[], &crate::Interrupt::new(&stop)).unwrap_err(),
            CoreError::Interrupted
        );
        let quiet = || false;
        assert_eq!(
            dsatur_with(&paths, 12, &[], &crate::Interrupt::new(&quiet)).unwrap(),
            dsatur(&paths, 12, &[]).unwrap()
        );
    }
}

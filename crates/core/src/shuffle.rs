//! Node-contention-free orders of a complete exchange among `p` nodes (paper 002): at each step
//! every node sends to at most one node and receives from at most one, and over the steps every
//! node meets every other once. Three constructions (shift, XOR, edge colouring of the complete
//! graph) and the contention-aware remapping of node ids (eq. 5) with its inverse.

use crate::error::CoreError;
use crate::interrupt::{Interrupt, Pacer};

/// No partner at this step: the node idles.
pub const IDLE: u32 = u32::MAX;

/// How step `j` pairs the nodes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Permutation {
    /// `x` sends to `(x + j) mod p`, `j = 1..p-1`; it receives from `(x - j) mod p`.
    Shift,
    /// `x` exchanges with `x XOR j`, `j = 1..P-1` with `P` the next power of two; idle when
    /// `x XOR j ≥ p`.
    Xor,
    /// A 1-factorisation of the complete graph by the circle method: `p - 1` rounds for even `p`,
    /// `p` for odd `p` (each node idle in one).
    EdgeColour,
}

/// The largest exchange these orders are built for (a p × p table).
pub const MAX_NODES: usize = 1 << 15;

/// `steps[j][x]`: the node `x` sends to at step `j`, or [`IDLE`].
pub fn exchange_steps(p: usize, permutation: Permutation) -> Result<Vec<Vec<u32>>, CoreError> {
    exchange_steps_with(p, permutation, &Interrupt::never())
}

/// [`exchange_steps`], stopped with [`CoreError::Interrupted`] when `interrupt` fires (probed
/// every few steps: a table of up to 2^30 entries takes seconds).
pub fn exchange_steps_with(
    p: usize,
    permutation: Permutation,
    interrupt: &Interrupt,
) -> Result<Vec<Vec<u32>>, CoreError> {
    if p == 0 {
        return Err(CoreError::InvalidInput(
            "a complete exchange needs at least one node".into(),
        ));
    }
    if p > MAX_NODES {
        return Err(CoreError::TooLarge(format!(
            "{p} nodes; the exchange orders are built for up to {MAX_NODES}"
        )));
    }
    let n = p as u32;
    let mut pacer = Pacer::default();
    let mut checked = |step: Vec<u32>| pacer.check(p, interrupt).map(|()| step);
    match permutation {
        Permutation::Shift => (1..n)
            .map(|j| checked((0..n).map(|x| (x + j) % n).collect()))
            .collect(),
        Permutation::Xor => {
            let top = n.next_power_of_two();
            (1..top)
                .map(|j| {
                    checked(
                        (0..n)
                            .map(|x| if x ^ j < n { x ^ j } else { IDLE })
                            .collect(),
                    )
                })
                .collect()
        }
        Permutation::EdgeColour => edge_colouring(n, interrupt),
    }
}

/// The circle method. For odd `p`, round `j` pairs `x` with `(j - x) mod p` and idles the node
/// with `2x ≡ j`. For even `p`, nodes `0..p-1` do that modulo `p - 1` and the idle one of each
/// round pairs with node `p - 1` instead.
fn edge_colouring(p: u32, interrupt: &Interrupt) -> Result<Vec<Vec<u32>>, CoreError> {
    if p == 1 {
        // One node exchanges nothing: no round, as for shift and XOR.
        return Ok(Vec::new());
    }
    let mut pacer = Pacer::default();
    let (ring, rounds) = if p % 2 == 1 { (p, p) } else { (p - 1, p - 1) };
    let mut steps = Vec::with_capacity(rounds as usize);
    for j in 0..rounds {
        pacer.check(p as usize, interrupt)?;
        let mut partner = vec![IDLE; p as usize];
        for x in 0..ring {
            let y = (j + ring - x) % ring;
            if y != x {
                partner[x as usize] = y;
            } else if ring < p {
                partner[x as usize] = p - 1;
                partner[(p - 1) as usize] = x;
            }
        }
        steps.push(partner);
    }
    Ok(steps)
}

/// The logical id of physical node `x` under eq. 5, nodes numbered switch by switch (`d1` per
/// switch, `d2` switches): `⌊x / d1⌋ + (x mod d1)·d2`. Consecutive logical ids are on different
/// switches.
pub fn logical_id(x: u32, d1: u32, d2: u32) -> u32 {
    x / d1 + (x % d1) * d2
}

/// The inverse of [`logical_id`]: `(l mod d2)·d1 + ⌊l / d2⌋`.
pub fn physical_id(l: u32, d1: u32, d2: u32) -> u32 {
    (l % d2) * d1 + l / d2
}

/// `steps` on logical ids made steps on physical ids: physical node `x` sends where its logical
/// id sends, mapped back. Needs `p = d1·d2`.
pub fn remap_steps(steps: &[Vec<u32>], d1: u32, d2: u32) -> Result<Vec<Vec<u32>>, CoreError> {
    if d1 == 0 || d2 == 0 {
        return Err(CoreError::InvalidInput(format!(
            "the remapping needs d1, d2 ≥ 1; got {d1} × {d2}"
        )));
    }
    let p = (d1 as usize) * (d2 as usize);
    if let Some(step) = steps.iter().find(|s| s.len() != p) {
        return Err(CoreError::InvalidInput(format!(
            "the remapping needs d1 × d2 = p nodes; got {d1} × {d2} for {}",
            step.len()
        )));
    }
    Ok(steps
        .iter()
        .map(|step| {
            (0..p as u32)
                .map(|x| match step[logical_id(x, d1, d2) as usize] {
                    IDLE => IDLE,
                    l => physical_id(l, d1, d2),
                })
                .collect()
        })
        .collect())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_interrupt_stops_every_order() {
        let stop = || true;
        for permutation in [
            Permutation::Shift,
            Permutation::Xor,
            Permutation::EdgeColour,
        ] {
            let r = exchange_steps_with(5000, permutation, &Interrupt::new(&stop));
            assert_eq!(r.unwrap_err(), CoreError::Interrupted);
        }
    }

    /// Every step a partial permutation without fixed points, every ordered pair once.
    fn is_complete_and_node_contention_free(steps: &[Vec<u32>], p: usize) -> bool {
        let mut met = vec![false; p * p];
        for step in steps {
            let mut receives = vec![false; p];
            for (x, &y) in step.iter().enumerate() {
                if y == IDLE {
                    continue;
                }
                let y = y as usize;
                if y == x
                    || y >= p
                    || std::mem::replace(&mut receives[y], true)
                    || std::mem::replace(&mut met[x * p + y], true)
                {
                    return false;
                }
            }
        }
        (0..p).all(|x| (0..p).all(|y| x == y || met[x * p + y]))
    }

    #[test]
    fn every_order_is_complete_and_node_contention_free() {
        for p in 1..=40 {
            for permutation in [
                Permutation::Shift,
                Permutation::Xor,
                Permutation::EdgeColour,
            ] {
                let steps = exchange_steps(p, permutation).unwrap();
                assert!(
                    is_complete_and_node_contention_free(&steps, p),
                    "{permutation:?} on {p}"
                );
            }
        }
    }

    #[test]
    fn step_counts_follow_the_paper() {
        assert_eq!(exchange_steps(6, Permutation::EdgeColour).unwrap().len(), 5);
        assert_eq!(exchange_steps(7, Permutation::EdgeColour).unwrap().len(), 7);
        assert_eq!(exchange_steps(24, Permutation::Xor).unwrap().len(), 31);
        assert_eq!(exchange_steps(24, Permutation::Shift).unwrap().len(), 23);
    }

    #[test]
    fn remapping_is_a_bijection_and_keeps_the_order_valid() {
        for d1 in 1..=8u32 {
            for d2 in 1..=8u32 {
                let p = d1 * d2;
                let mut seen = vec![false; p as usize];
                for x in 0..p {
                    let l = logical_id(x, d1, d2);
                    assert_eq!(physical_id(l, d1, d2), x);
                    assert!(!std::mem::replace(&mut seen[l as usize], true));
                }
                let steps = remap_steps(
                    &exchange_steps(p as usize, Permutation::Xor).unwrap(),
                    d1,
                    d2,
                )
                .unwrap();
                assert!(is_complete_and_node_contention_free(&steps, p as usize));
            }
        }
        assert!(remap_steps(&exchange_steps(6, Permutation::Shift).unwrap(), 4, 2).is_err());
    }
}

//! Steps for traffics of any sizes on any network with slots: each step a slot-valid frame
//! that serves the most loaded resources first (the critical-resource idea of the liquid
//! search), as long as its shortest remaining piece or a quantum, pieces carried over.
//!
//! Times are in any unit (the caller's): `times[t]` is transfer `t`'s time alone in its slots.

use crate::error::CoreError;
use crate::slots::{check_paths, checked_slots};

/// One step: its length and the pieces `(transfer, time)` sent in it.
#[derive(Clone, Debug, PartialEq)]
pub struct Step {
    pub length: f64,
    pub pieces: Vec<(usize, f64)>,
}

/// Build the steps. `paths[t]` lists transfer `t`'s resources (below `resources`), `slots[r]`
/// the transfers resource `r` carries at once (empty: one each), `times[t] > 0`. A step lasts
/// at least `quantum` unless every transfer still to send is shorter, and never longer than the
/// longest remaining piece it carries; each piece is the step's length or what remains of the
/// transfer, whichever is less.
pub fn weighted_steps(
    paths: &[Vec<u32>],
    resources: usize,
    slots: &[u32],
    times: &[f64],
    quantum: f64,
) -> Result<Vec<Step>, CoreError> {
    let slots = checked_slots(slots, resources)?;
    if times.len() != paths.len() {
        return Err(CoreError::InvalidInput(format!("{} times for {} transfers", times.len(), paths.len())));
    }
    check_paths(paths, resources)?;
    if let Some(t) = times.iter().position(|&x| !(x > 0.0 && x.is_finite())) {
        return Err(CoreError::InvalidInput(format!("transfer {t}: time must be positive and finite")));
    }
    if !(quantum >= 0.0 && quantum.is_finite()) {
        return Err(CoreError::InvalidInput("quantum must be non-negative and finite".into()));
    }
    let mut remaining: Vec<f64> = times.to_vec();
    let mut alive: Vec<usize> = (0..paths.len()).collect();
    // Remaining work of each resource, in time at its slots: Σ remaining / slots.
    let mut load = vec![0.0f64; resources];
    for (t, path) in paths.iter().enumerate() {
        for &r in path {
            load[r as usize] += times[t] / slots[r as usize] as f64;
        }
    }
    let mut used = vec![0u32; resources];
    let mut steps = Vec::new();
    let mut order: Vec<(f64, f64, usize)> = Vec::with_capacity(paths.len());
    while !alive.is_empty() {
        // Most loaded resource on the path first, then the longest remaining transfer.
        order.clear();
        for &t in &alive {
            let urgency = paths[t].iter().map(|&r| load[r as usize]).fold(0.0, f64::max);
            order.push((urgency, remaining[t], t));
        }
        order.sort_unstable_by(|a, b| b.0.total_cmp(&a.0).then(b.1.total_cmp(&a.1)).then(a.2.cmp(&b.2)));
        used.iter_mut().for_each(|u| *u = 0);
        let mut chosen = Vec::new();
        for &(_, _, t) in &order {
            if paths[t].iter().all(|&r| used[r as usize] < slots[r as usize]) {
                for &r in &paths[t] {
                    used[r as usize] += 1;
                }
                chosen.push(t);
            }
        }
        let shortest = chosen.iter().map(|&t| remaining[t]).fold(f64::INFINITY, f64::min);
        let longest = chosen.iter().map(|&t| remaining[t]).fold(0.0, f64::max);
        let length = shortest.max(quantum.min(longest));
        let mut pieces = Vec::with_capacity(chosen.len());
        for &t in &chosen {
            let piece = remaining[t].min(length);
            pieces.push((t, piece));
            remaining[t] -= piece;
            for &r in &paths[t] {
                load[r as usize] -= piece / slots[r as usize] as f64;
            }
        }
        // A piece within a rounding error of the whole remainder finishes the transfer.
        let tolerance = length * 1e-12;
        for p in pieces.iter_mut() {
            if remaining[p.0] <= tolerance {
                p.1 += remaining[p.0];
                remaining[p.0] = 0.0;
            }
        }
        alive.retain(|&t| remaining[t] > 0.0);
        steps.push(Step { length: pieces.iter().map(|p| p.1).fold(0.0, f64::max), pieces });
    }
    Ok(steps)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testing::{is_valid_with_slots, Rng};

    #[test]
    fn every_transfer_gets_its_time_in_valid_steps() {
        let mut rng = Rng(0x5eed_1234_abcd_ef01);
        for _ in 0..300 {
            let resources = 2 + rng.below(6) as usize;
            let count = 1 + rng.below(12) as usize;
            let paths: Vec<Vec<u32>> = (0..count)
                .map(|_| {
                    let mut p: Vec<u32> = (0..resources as u32).filter(|_| rng.below(3) == 0).collect();
                    if p.is_empty() {
                        p.push(0);
                    }
                    p
                })
                .collect();
            let slots: Vec<u32> = (0..resources).map(|_| 1 + rng.below(3) as u32).collect();
            let times: Vec<f64> = (0..count).map(|_| 1.0 + rng.below(20) as f64).collect();
            let quantum = rng.below(4) as f64;
            let steps = weighted_steps(&paths, resources, &slots, &times, quantum).unwrap();
            let mut got = vec![0.0; count];
            for step in &steps {
                // The step's transfers alone, as one frame: no resource over its slots.
                let in_step: Vec<Vec<u32>> = step.pieces.iter().map(|p| paths[p.0].clone()).collect();
                let frame: Vec<u32> = (0..in_step.len() as u32).collect();
                assert!(is_valid_with_slots(&in_step, &slots, &[frame]));
                for &(t, piece) in &step.pieces {
                    assert!(piece > 0.0 && piece <= step.length + 1e-9);
                    got[t] += piece;
                }
            }
            for t in 0..count {
                assert!((got[t] - times[t]).abs() < 1e-9, "transfer {t}: {} of {}", got[t], times[t]);
            }
            // Each step but a quantum one finishes a transfer: no more steps than transfers
            // plus the total time over the quantum.
            let total: f64 = times.iter().sum();
            let cap = count as f64 + if quantum > 0.0 { total / quantum } else { 0.0 };
            assert!(steps.len() as f64 <= cap + 1e-9);
        }
    }

    #[test]
    fn equal_transfers_on_one_resource_take_turns() {
        // Three transfers of 2 on a resource of one slot: 3 steps of 2.
        let steps = weighted_steps(&[vec![0], vec![0], vec![0]], 1, &[1], &[2.0, 2.0, 2.0], 0.0).unwrap();
        assert_eq!(steps.len(), 3);
        assert!(steps.iter().all(|s| s.length == 2.0 && s.pieces.len() == 1));
    }

    #[test]
    fn bad_input_is_an_error() {
        assert!(weighted_steps(&[vec![0]], 1, &[1], &[0.0], 0.0).is_err());
        assert!(weighted_steps(&[vec![3]], 1, &[1], &[1.0], 0.0).is_err());
        assert!(weighted_steps(&[vec![0]], 1, &[1], &[1.0], f64::NAN).is_err());
    }
}

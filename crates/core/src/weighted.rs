//! Steps for traffics of any sizes on any network with slots: each step a slot-valid frame
//! that serves the most loaded resources first (the critical-resource idea of the liquid
//! search), as long as its shortest remaining piece or a quantum, pieces carried over.
//!
//! Times are in any unit (the caller's): `times[t]` is transfer `t`'s time alone in its slots.

use crate::error::CoreError;
use crate::interrupt::{Interrupt, Pacer, EVERY};
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
    interrupt: &Interrupt,
) -> Result<Vec<Step>, CoreError> {
    let slots = checked_slots(slots, resources)?;
    if times.len() != paths.len() {
        return Err(CoreError::InvalidInput(format!(
            "{} times for {} transfers",
            times.len(),
            paths.len()
        )));
    }
    check_paths(paths, resources)?;
    if let Some(t) = times.iter().position(|&x| !(x > 0.0 && x.is_finite())) {
        return Err(CoreError::InvalidInput(format!(
            "transfer {t}: time must be positive and finite"
        )));
    }
    if !(quantum >= 0.0 && quantum.is_finite()) {
        return Err(CoreError::InvalidInput(
            "quantum must be non-negative and finite".into(),
        ));
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
    let mut pacer = Pacer::default();
    while !alive.is_empty() {
        pacer.check(alive.len(), interrupt)?;
        // Most loaded resource on the path first, then the longest remaining transfer.
        order.clear();
        for &t in &alive {
            let urgency = paths[t]
                .iter()
                .map(|&r| load[r as usize])
                .fold(0.0, f64::max);
            order.push((urgency, remaining[t], t));
        }
        order.sort_unstable_by(|a, b| {
            b.0.total_cmp(&a.0)
                .then(b.1.total_cmp(&a.1))
                .then(a.2.cmp(&b.2))
        });
        used.iter_mut().for_each(|u| *u = 0);
        let mut chosen = Vec::new();
        for &(_, _, t) in &order {
            if paths[t]
                .iter()
                .all(|&r| used[r as usize] < slots[r as usize])
            {
                for &r in &paths[t] {
                    used[r as usize] += 1;
                }
                chosen.push(t);
            }
        }
        let shortest = chosen
            .iter()
            .map(|&t| remaining[t])
            .fold(f64::INFINITY, f64::min);
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
        steps.push(Step {
            length: pieces.iter().map(|p| p.1).fold(0.0, f64::max),
            pieces,
        });
    }
    Ok(steps)
}

/// The heaviest slot-valid frame found by [`heaviest_frame`].
#[derive(Clone, Debug, PartialEq)]
pub struct HeaviestFrame {
    /// The frame's transfers, ascending; made maximal with transfers of weight ≤ 0 that still fit.
    pub transfers: Vec<usize>,
    /// Its weight: the sum of its positive weights.
    pub weight: f64,
    /// Whether no slot-valid frame is heavier (false when the node limit cut the search).
    pub proven: bool,
    /// Nodes of the branch and bound.
    pub nodes: u64,
}

/// The slot-valid frame of largest total weight (`weights[t]` for transfer `t`), by branch and
/// bound: the pricing step of the column generation that finds the fractional optimum of
/// frames, where the weights are the master program's duals.
///
/// Transfers of positive weight are tried heaviest first, each taken then left out. A branch
/// is cut when even the best completion cannot beat the best frame so far: each remaining
/// transfer that still fits is charged to one resource of its path, and a resource with `c`
/// free slots passes at most its `c` heaviest; three such charges are tried (the most
/// contended resource of each path, its fewest-slot resource nearest the sender, nearest the
/// receiver) and the least total kept — on a KPBS instance the backbone, the sender cards and
/// the receiver cards. After `node_limit` nodes the search stops with the heaviest frame seen,
/// not proven.
pub fn heaviest_frame(
    paths: &[Vec<u32>],
    resources: usize,
    slots: &[u32],
    weights: &[f64],
    node_limit: u64,
    interrupt: &Interrupt,
) -> Result<HeaviestFrame, CoreError> {
    let slots = checked_slots(slots, resources)?;
    if weights.len() != paths.len() {
        return Err(CoreError::InvalidInput(format!(
            "{} weights for {} transfers",
            weights.len(),
            paths.len()
        )));
    }
    check_paths(paths, resources)?;
    if let Some(t) = weights.iter().position(|w| !w.is_finite()) {
        return Err(CoreError::InvalidInput(format!(
            "transfer {t}: weight must be finite"
        )));
    }
    let mut search = FrameSearch::new(paths, &slots, weights, node_limit, interrupt);
    let proven = search.branch(0, 0.0);
    if search.interrupted {
        return Err(CoreError::Interrupted);
    }
    Ok(HeaviestFrame {
        weight: search.best_weight,
        proven,
        nodes: search.nodes,
        transfers: search.maximal_best(),
    })
}

/// The state of [`heaviest_frame`]'s branch and bound.
struct FrameSearch<'a> {
    paths: &'a [Vec<u32>],
    slots: &'a [u32],
    weights: &'a [f64],
    /// Transfers of positive weight, heaviest first.
    order: Vec<usize>,
    /// For each charge, the resource each transfer of `order` (by position) is charged to.
    charges: Vec<Vec<u32>>,
    used: Vec<u32>,
    chosen: Vec<usize>,
    best: Vec<usize>,
    best_weight: f64,
    /// Scratch: transfers charged to each resource while a bound is summed.
    charged: Vec<u32>,
    nodes: u64,
    node_limit: u64,
    interrupt: &'a Interrupt<'a>,
    interrupted: bool,
}

impl<'a> FrameSearch<'a> {
    fn new(
        paths: &'a [Vec<u32>],
        slots: &'a [u32],
        weights: &'a [f64],
        node_limit: u64,
        interrupt: &'a Interrupt<'a>,
    ) -> Self {
        let mut order: Vec<usize> = (0..paths.len()).filter(|&t| weights[t] > 0.0).collect();
        order.sort_by(|&a, &b| weights[b].total_cmp(&weights[a]).then(a.cmp(&b)));
        let mut users = vec![0u32; slots.len()];
        for &t in &order {
            paths[t].iter().for_each(|&r| users[r as usize] += 1);
        }
        let pressure = |r: u32| users[r as usize] as f64 / slots[r as usize] as f64;
        let pick = |t: usize, better: &dyn Fn(u32, u32) -> bool| -> u32 {
            // A transfer with an empty path fits every frame: charge it to no shared resource.
            paths[t]
                .iter()
                .copied()
                .reduce(|a, b| if better(b, a) { b } else { a })
                .unwrap_or(u32::MAX)
        };
        let mut charges: Vec<Vec<u32>> = vec![
            order
                .iter()
                .map(|&t| pick(t, &|b, a| pressure(b) > pressure(a)))
                .collect(),
            order
                .iter()
                .map(|&t| pick(t, &|b, a| slots[b as usize] < slots[a as usize]))
                .collect(),
            order
                .iter()
                .map(|&t| pick(t, &|b, a| slots[b as usize] <= slots[a as usize]))
                .collect(),
        ];
        charges.dedup();
        FrameSearch {
            paths,
            slots,
            weights,
            order,
            charges,
            used: vec![0; slots.len()],
            chosen: Vec::new(),
            best: Vec::new(),
            best_weight: 0.0,
            charged: vec![0; slots.len()],
            nodes: 0,
            node_limit,
            interrupt,
            interrupted: false,
        }
    }

    fn fits(&self, t: usize) -> bool {
        self.paths[t]
            .iter()
            .all(|&r| self.used[r as usize] < self.slots[r as usize])
    }

    /// The most the frame so far (of weight `current`) can reach with transfers from position
    /// `from` of the order on: the least of the charges' totals.
    fn completion_bound(&mut self, from: usize, current: f64) -> f64 {
        let mut bound = f64::INFINITY;
        for c in 0..self.charges.len() {
            let mut total = current;
            for i in from..self.order.len() {
                let t = self.order[i];
                let r = self.charges[c][i];
                if r == u32::MAX {
                    total += self.weights[t];
                } else if self.fits(t)
                    && self.charged[r as usize] + self.used[r as usize] < self.slots[r as usize]
                {
                    self.charged[r as usize] += 1;
                    total += self.weights[t];
                }
            }
            for i in from..self.order.len() {
                let r = self.charges[c][i];
                if r != u32::MAX {
                    self.charged[r as usize] = 0;
                }
            }
            bound = bound.min(total);
        }
        bound
    }

    /// Explore the frames that extend the current one with transfers from position `from` on;
    /// false when the node limit is reached.
    fn branch(&mut self, mut from: usize, current: f64) -> bool {
        self.nodes += 1;
        if self.nodes > self.node_limit {
            return false;
        }
        if self.nodes.is_multiple_of(EVERY as u64) && self.interrupt.is_set() {
            self.interrupted = true;
            return false;
        }
        if current > self.best_weight {
            self.best_weight = current;
            self.best.clone_from(&self.chosen);
        }
        while from < self.order.len() && !self.fits(self.order[from]) {
            from += 1;
        }
        if from == self.order.len() {
            return true;
        }
        // Duals are rounded: a completion within a relative 1e-12 of the best is no better.
        let tolerance = 1e-12 * self.best_weight.abs().max(1.0);
        if self.completion_bound(from, current) <= self.best_weight + tolerance {
            return true;
        }
        let t = self.order[from];
        self.paths[t]
            .iter()
            .for_each(|&r| self.used[r as usize] += 1);
        self.chosen.push(t);
        let finished = self.branch(from + 1, current + self.weights[t]);
        self.chosen.pop();
        self.paths[t]
            .iter()
            .for_each(|&r| self.used[r as usize] -= 1);
        finished && self.branch(from + 1, current)
    }

    /// The best frame, completed with every other transfer that still fits (heaviest first):
    /// a frame with more transfers covers more at no cost.
    fn maximal_best(&mut self) -> Vec<usize> {
        self.used.iter_mut().for_each(|u| *u = 0);
        let mut frame = std::mem::take(&mut self.best);
        let mut taken = vec![false; self.paths.len()];
        for &t in &frame {
            taken[t] = true;
            self.paths[t]
                .iter()
                .for_each(|&r| self.used[r as usize] += 1);
        }
        let mut rest: Vec<usize> = (0..self.paths.len()).filter(|&t| !taken[t]).collect();
        rest.sort_by(|&a, &b| self.weights[b].total_cmp(&self.weights[a]).then(a.cmp(&b)));
        for t in rest {
            if self.fits(t) {
                self.paths[t]
                    .iter()
                    .for_each(|&r| self.used[r as usize] += 1);
                frame.push(t);
            }
        }
        frame.sort_unstable();
        frame
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testing::{is_valid_with_slots, random_slot_traffic, Rng};

    #[test]
    fn every_transfer_gets_its_time_in_valid_steps() {
        let mut rng = Rng(0x5eed_1234_abcd_ef01);
        for _ in 0..300 {
            let (paths, slots) = random_slot_traffic(&mut rng);
            let count = paths.len();
            let resources = slots.len();
            let times: Vec<f64> = (0..count).map(|_| 1.0 + rng.below(20) as f64).collect();
            let quantum = rng.below(4) as f64;
            let steps = weighted_steps(
                &paths,
                resources,
                &slots,
                &times,
                quantum,
                &Interrupt::never(),
            )
            .unwrap();
            let mut got = vec![0.0; count];
            for step in &steps {
                // The step's transfers alone, as one frame: no resource over its slots.
                let in_step: Vec<Vec<u32>> =
                    step.pieces.iter().map(|p| paths[p.0].clone()).collect();
                let frame: Vec<u32> = (0..in_step.len() as u32).collect();
                assert!(is_valid_with_slots(&in_step, &slots, &[frame]));
                for &(t, piece) in &step.pieces {
                    assert!(piece > 0.0 && piece <= step.length + 1e-9);
                    got[t] += piece;
                }
            }
            for t in 0..count {
                assert!(
                    (got[t] - times[t]).abs() < 1e-9,
                    "transfer {t}: {} of {}",
                    got[t],
                    times[t]
                );
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
        let steps = weighted_steps(
            &[vec![0], vec![0], vec![0]],
            1,
            &[1],
            &[2.0, 2.0, 2.0],
            0.0,
            &Interrupt::never(),
        )
        .unwrap();
        assert_eq!(steps.len(), 3);
        assert!(steps.iter().all(|s| s.length == 2.0 && s.pieces.len() == 1));
    }

    #[test]
    fn bad_input_is_an_error() {
        assert!(weighted_steps(&[vec![0]], 1, &[1], &[0.0], 0.0, &Interrupt::never()).is_err());
        assert!(weighted_steps(&[vec![3]], 1, &[1], &[1.0], 0.0, &Interrupt::never()).is_err());
        assert!(
            weighted_steps(&[vec![0]], 1, &[1], &[1.0], f64::NAN, &Interrupt::never()).is_err()
        );
    }
    /// The heaviest frame by trying every subset (tiny cases only).
    fn brute_force_heaviest(paths: &[Vec<u32>], slots: &[u32], weights: &[f64]) -> f64 {
        let mut best = 0.0f64;
        for mask in 0u32..(1 << paths.len()) {
            let mut on = vec![0u32; slots.len()];
            let mut weight = 0.0;
            let mut valid = true;
            for t in (0..paths.len()).filter(|t| mask >> t & 1 == 1) {
                weight += weights[t].max(0.0);
                for &r in &paths[t] {
                    on[r as usize] += 1;
                    valid &= on[r as usize] <= slots[r as usize];
                }
            }
            if valid {
                best = best.max(weight);
            }
        }
        best
    }

    #[test]
    fn heaviest_frame_matches_brute_force() {
        let mut rng = Rng(0x0dd_ba11_f00d_cafe);
        for _ in 0..400 {
            let (mut paths, slots) = random_slot_traffic(&mut rng);
            // A transfer with no shared resource fits every frame.
            if rng.below(4) == 0 {
                paths.push(Vec::new());
            }
            let count = paths.len();
            let resources = slots.len();
            let weights: Vec<f64> = (0..count)
                .map(|_| rng.below(21) as f64 / 4.0 - 1.0)
                .collect();
            let frame = heaviest_frame(
                &paths,
                resources,
                &slots,
                &weights,
                u64::MAX,
                &Interrupt::never(),
            )
            .unwrap();
            assert!(frame.proven);
            let expected = brute_force_heaviest(&paths, &slots, &weights);
            assert!(
                (frame.weight - expected).abs() < 1e-9,
                "{} against {expected}",
                frame.weight
            );
            let members: Vec<u32> = frame.transfers.iter().map(|&t| t as u32).collect();
            let in_frame: Vec<Vec<u32>> =
                frame.transfers.iter().map(|&t| paths[t].clone()).collect();
            assert!(is_valid_with_slots(
                &in_frame,
                &slots,
                &[(0..members.len() as u32).collect()]
            ));
            let positive: f64 = frame.transfers.iter().map(|&t| weights[t].max(0.0)).sum();
            assert!((positive - frame.weight).abs() < 1e-9);
            // Maximal: no other transfer fits beside it.
            for t in (0..count).filter(|t| !frame.transfers.contains(t)) {
                let mut with = in_frame.clone();
                with.push(paths[t].clone());
                assert!(
                    !is_valid_with_slots(&with, &slots, &[(0..with.len() as u32).collect()]),
                    "transfer {t} fits"
                );
            }
        }
    }

    #[test]
    fn heaviest_frame_on_a_backbone_takes_the_k_heaviest_disjoint_pairs() {
        // Senders 0..3, receivers 3..6, backbone 6 with 2 slots; the heaviest transfers
        // (0→3: 5, 0→4: 4) share a sender, so the best frame is 0→3 and 1→4 (3).
        let paths = vec![vec![0, 6, 3], vec![0, 6, 4], vec![1, 6, 4], vec![2, 6, 5]];
        let mut slots = vec![1u32; 7];
        slots[6] = 2;
        let frame = heaviest_frame(
            &paths,
            7,
            &slots,
            &[5.0, 4.0, 3.0, 1.0],
            u64::MAX,
            &Interrupt::never(),
        )
        .unwrap();
        assert_eq!(frame.transfers, vec![0, 2]);
        assert_eq!(frame.weight, 8.0);
    }

    #[test]
    fn heaviest_frame_reports_its_node_limit() {
        let paths: Vec<Vec<u32>> = (0..30).map(|t| vec![t % 6, 6 + t / 6]).collect();
        let weights: Vec<f64> = (0..30).map(|t| 1.0 + (t * 7 % 11) as f64).collect();
        let cut = heaviest_frame(&paths, 11, &[], &weights, 3, &Interrupt::never()).unwrap();
        assert!(!cut.proven && cut.nodes == 4 && cut.weight > 0.0);
        let whole =
            heaviest_frame(&paths, 11, &[], &weights, u64::MAX, &Interrupt::never()).unwrap();
        assert!(whole.proven && whole.weight >= cut.weight);
        assert!(heaviest_frame(&paths, 11, &[], &[f64::NAN; 30], 10, &Interrupt::never()).is_err());
        assert!(heaviest_frame(&paths, 11, &[], &[1.0], 10, &Interrupt::never()).is_err());
    }

    #[test]
    fn an_interrupt_stops_the_steps() {
        // 3,000 transfers on one link: one step each, and a probe due within the first steps.
        let paths = vec![vec![0u32]; 3000];
        let times = vec![1.0; 3000];
        let stop = || true;
        let r = weighted_steps(&paths, 1, &[1], &times, 0.0, &Interrupt::new(&stop));
        assert_eq!(r.unwrap_err(), CoreError::Interrupted);
        let quiet = || false;
        let steps = weighted_steps(&paths, 1, &[1], &times, 0.0, &Interrupt::new(&quiet)).unwrap();
        assert_eq!(steps.len(), 3000);
    }
}

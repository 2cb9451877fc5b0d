//! Helpers shared by the unit tests of the simulation: flows on given paths, a relative
//! comparison, and paper 004's Fig. 2 backbone.

use super::problem::{Flow, Problem};

pub(super) fn flows(paths: &[Vec<u32>], size: f64) -> Vec<Flow> {
    paths
        .iter()
        .enumerate()
        .map(|(i, p)| Flow {
            path: p.clone(),
            size_bytes: size,
            latency_s: 0.0,
            sender: i as u32,
        })
        .collect()
}

pub(super) fn close(a: f64, b: f64) -> bool {
    (a - b).abs() <= 1e-9 * a.abs().max(b.abs()).max(1.0)
}

/// Paper 004 Fig. 2 with k = 2: two unit flows and one of size 2 share a backbone of
/// capacity 2 (each host link has capacity 1).
pub(super) fn backbone() -> Problem {
    // resources: 0 = backbone (2), 1-3 = sender links, 4-6 = receiver links (1 each)
    let paths = [vec![0, 1, 4], vec![0, 2, 5], vec![0, 3, 6]];
    let mut fl = flows(&paths, 1.0);
    fl[2].size_bytes = 2.0;
    Problem {
        capacities: vec![2.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0],
        slots: Vec::new(),
        flows: fl,
        frames: vec![vec![0, 2], vec![1]],
        overhead_s: 0.0,
        receivers: Vec::new(),
        frame_steps: Vec::new(),
    }
}

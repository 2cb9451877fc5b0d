//! The closed-form models: *frames* (each frame as long as its longest piece plus the overhead)
//! and *circuit* (a transfer holds a slot of every resource of its path), where a flow runs at the
//! smallest slot rate of its path; and the utilisation grid every model records busy fractions
//! on.

use super::problem::{Flow, Prediction, Problem};

fn slots_of(problem: &Problem, r: u32) -> u32 {
    problem.slots.get(r as usize).copied().unwrap_or(1)
}

/// The smallest slot rate (capacity / slots) on a flow's path: its rate in a slot.
fn slot_rate(problem: &Problem, f: &Flow) -> f64 {
    f.path
        .iter()
        .map(|&r| problem.capacities[r as usize] / slots_of(problem, r) as f64)
        .fold(f64::INFINITY, f64::min)
}

/// Time a flow needs in its slot: its latency, then its bytes at its slot rate.
fn slot_time_s(problem: &Problem, f: &Flow) -> f64 {
    f.latency_s + f.size_bytes / slot_rate(problem, f)
}

pub(super) fn frames_model(problem: &Problem) -> Prediction {
    let n = problem.flows.len();
    let (mut start, mut finish) = (vec![0.0; n], vec![0.0; n]);
    let mut t = 0.0;
    for frame in &problem.frames {
        let mut longest: f64 = 0.0;
        for &i in frame {
            let d = slot_time_s(problem, &problem.flows[i as usize]);
            start[i as usize] = t;
            finish[i as usize] = t + d;
            longest = longest.max(d);
        }
        t += longest + problem.overhead_s;
    }
    Prediction {
        makespan_s: t,
        start_s: start,
        finish_s: finish,
        utilisation: Vec::new(),
        bins: 0,
        rate_updates: 0,
        level_changes: 0,
    }
}

pub(super) fn circuit_model(problem: &Problem) -> Prediction {
    let n = problem.flows.len();
    let (mut start, mut finish) = (vec![0.0; n], vec![0.0; n]);
    // free[r]: when each slot of resource r is next free.
    let mut free: Vec<Vec<f64>> = (0..problem.capacities.len() as u32)
        .map(|r| vec![0.0; slots_of(problem, r) as usize])
        .collect();
    let earliest = |slots: &[f64]| -> usize {
        (0..slots.len())
            .min_by(|&a, &b| slots[a].total_cmp(&slots[b]))
            .expect("a resource has a slot")
    };
    let mut makespan: f64 = 0.0;
    for &i in problem.frames.iter().flatten() {
        let f = &problem.flows[i as usize];
        let s = f
            .path
            .iter()
            .map(|&r| {
                let slots = &free[r as usize];
                slots[earliest(slots)]
            })
            .fold(0.0, f64::max);
        let e = s + slot_time_s(problem, f);
        for &r in &f.path {
            let slots = &mut free[r as usize];
            let k = earliest(slots);
            slots[k] = e;
        }
        start[i as usize] = s;
        finish[i as usize] = e;
        makespan = makespan.max(e);
    }
    Prediction {
        makespan_s: makespan,
        start_s: start,
        finish_s: finish,
        utilisation: Vec::new(),
        bins: 0,
        rate_updates: 0,
        level_changes: 0,
    }
}

/// Busy fractions on a regular time grid.
pub(super) struct Grid {
    pub(super) values: Vec<f64>,
    bins: usize,
    width: f64,
}

impl Grid {
    pub(super) fn new(resources: usize, bins: usize, makespan: f64) -> Self {
        let width = if makespan > 0.0 {
            makespan / bins as f64
        } else {
            1.0
        };
        Grid {
            values: vec![0.0; resources * bins],
            bins,
            width,
        }
    }

    /// Resource `r` busy at `fraction` of its capacity during `[t0, t1)`.
    pub(super) fn add(&mut self, r: usize, t0: f64, t1: f64, fraction: f64) {
        if t1 <= t0 || fraction == 0.0 {
            return;
        }
        let first = ((t0 / self.width) as usize).min(self.bins - 1);
        let last = ((t1 / self.width) as usize).min(self.bins - 1);
        for b in first..=last {
            let lo = t0.max(b as f64 * self.width);
            let hi = t1.min((b + 1) as f64 * self.width);
            if hi > lo {
                self.values[r * self.bins + b] += fraction * (hi - lo) / self.width;
            }
        }
    }
}

pub(super) fn constant_rate_utilisation(
    problem: &Problem,
    p: &Prediction,
    bins: usize,
) -> Vec<f64> {
    let mut grid = Grid::new(problem.capacities.len(), bins, p.makespan_s);
    for (i, f) in problem.flows.iter().enumerate() {
        let rate = slot_rate(problem, f);
        let data_start = p.start_s[i] + f.latency_s;
        for &r in &f.path {
            grid.add(
                r as usize,
                data_start,
                p.finish_s[i],
                rate / problem.capacities[r as usize],
            );
        }
    }
    grid.values
}

#[cfg(test)]
mod tests {
    use crate::simulate::testing::{close, flows};
    use crate::simulate::{simulate, Flow, Model, Problem};
    use crate::testing::two_switch_paths;

    #[test]
    fn two_switch_round_robin_and_liquid_in_frame_times() {
        let paths = two_switch_paths();
        let fl = flows(&paths, 1.0);
        let caps = vec![1.0; 12];
        let index = |i: u32, j: u32| i * 5 + j;
        // Round robin: step s sends i -> (i + s) mod 5; steps 3 and 4 congest.
        let mut rr = Vec::new();
        for s in 0..5 {
            rr.push((0..5).map(|i| index(i, (i + s) % 5)).collect::<Vec<u32>>());
        }
        let problem = Problem {
            capacities: caps.clone(),
            slots: Vec::new(),
            flows: fl.clone(),
            frames: rr,
            overhead_s: 0.0,
            receivers: Vec::new(),
            frame_steps: Vec::new(),
        };
        let circuit = simulate(&problem, Model::Circuit, 0).unwrap();
        assert!(close(circuit.makespan_s, 7.0), "{}", circuit.makespan_s);
        let liquid = crate::liquid::liquid_schedule(&paths, 12, &[], &Default::default()).unwrap();
        let problem = Problem {
            capacities: caps,
            slots: Vec::new(),
            flows: fl,
            frames: liquid.frames,
            overhead_s: 0.0,
            receivers: Vec::new(),
            frame_steps: Vec::new(),
        };
        for model in [Model::Circuit, Model::Frames] {
            assert!(close(simulate(&problem, model, 0).unwrap().makespan_s, 6.0));
        }
    }

    #[test]
    fn slots_share_a_resource_in_the_frames_and_circuit_models() {
        // A resource of capacity 2 with 2 slots: each flow runs at 1 in its slot.
        let problem = Problem {
            capacities: vec![2.0],
            slots: vec![2],
            flows: (0..3)
                .map(|s| Flow {
                    path: vec![0],
                    size_bytes: 1.0,
                    latency_s: 0.0,
                    sender: s,
                })
                .collect(),
            frames: vec![vec![0, 1], vec![2]],
            overhead_s: 0.0,
            receivers: Vec::new(),
            frame_steps: Vec::new(),
        };
        let frames = simulate(&problem, Model::Frames, 0).unwrap();
        assert_eq!(frames.makespan_s, 2.0);
        // Circuit: flows 0 and 1 take the two slots, flow 2 the first one freed.
        let circuit = simulate(&problem, Model::Circuit, 4).unwrap();
        assert_eq!(circuit.finish_s, vec![1.0, 1.0, 2.0]);
        // Two flows at half the capacity each fill the resource during the first second.
        assert!((circuit.utilisation[0] - 1.0).abs() < 1e-12);
        assert!((circuit.utilisation[3] - 0.5).abs() < 1e-12);
    }
}

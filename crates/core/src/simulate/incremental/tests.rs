//! The incremental engine against the reference on random problems: every start and finish
//! time, the number of rate updates, and the utilisation.

use super::Incremental;
use crate::interrupt::Interrupt;
use crate::simulate::reference::Reference;
use crate::simulate::{simulate_with, Engine, Flow, Model, Policy, Problem};

/// A random problem for the incremental engine: `nodes` hosts with an uplink and a downlink
/// each and `core` shared resources, capacities equal (ties everywhere) or mixed, each flow
/// crossing its sender's uplink, its receiver's downlink and up to three core resources;
/// sizes equal or mixed, some zero, some latencies, random frames and steps.
fn random_problem(rng: &mut crate::testing::Rng, nodes: u32, core: u32, n: usize) -> Problem {
    let resources = 2 * nodes + core;
    let mixed = rng.below(3) != 0;
    let capacities = (0..resources)
        .map(|_| match (mixed, rng.below(4)) {
            (false, _) => 1.0,
            (true, 0) => 1.0,
            (true, 1) => 2.0,
            (true, 2) => 4.0,
            _ => 0.5 + rng.below(1000) as f64 / 250.0,
        })
        .collect();
    let equal_sizes = rng.below(4) == 0;
    let mut flows = Vec::new();
    let mut receivers = Vec::new();
    for _ in 0..n {
        let x = rng.below(nodes as u64) as u32;
        let y = rng.below(nodes as u64) as u32;
        let mut path = vec![x, nodes + y];
        for _ in 0..rng.below(4) {
            if core > 0 {
                path.push(2 * nodes + rng.below(core as u64) as u32);
            }
        }
        path.sort_unstable();
        path.dedup();
        let size_bytes = match (equal_sizes, rng.below(20)) {
            (_, 0) => 0.0,
            (true, _) => 1.0,
            (false, k) if k < 8 => 1.0 + rng.below(4) as f64,
            _ => 0.01 + rng.below(10_000) as f64 / 1000.0,
        };
        let latency_s = match rng.below(4) {
            0 => 0.1 * rng.below(4) as f64,
            _ => 0.0,
        };
        flows.push(Flow {
            path,
            size_bytes,
            latency_s,
            sender: x,
        });
        receivers.push(y);
    }
    let mut order: Vec<u32> = (0..n as u32).collect();
    for k in (1..n).rev() {
        order.swap(k, rng.below(k as u64 + 1) as usize);
    }
    let mut frames: Vec<Vec<u32>> = vec![Vec::new()];
    for i in order {
        if !frames.last().unwrap().is_empty() && rng.below(4) == 0 {
            frames.push(Vec::new());
        }
        frames.last_mut().unwrap().push(i);
    }
    let mut frame_steps: Vec<u32> = (0..frames.len())
        .map(|_| rng.below(frames.len() as u64) as u32)
        .collect();
    frame_steps.sort_unstable();
    Problem {
        capacities,
        slots: Vec::new(),
        flows,
        frames,
        overhead_s: if rng.below(2) == 0 { 0.0 } else { 0.05 },
        receivers,
        frame_steps,
    }
}

const POLICIES: [Policy; 7] = [
    Policy::AllAtOnce,
    Policy::Frames,
    Policy::PerSender,
    Policy::Window(1),
    Policy::Window(2),
    Policy::Window(5),
    Policy::Steps,
];

/// Every start and finish time of the incremental engine within 1e-9 (relative) of the
/// reference's; the numbers of sweeps and rebuilds it did.
fn compare_with_reference(problem: &Problem, policy: Policy, what: &str) -> (u64, u64) {
    let reference = Reference::new(problem, policy)
        .run(None, &Interrupt::never())
        .unwrap();
    let (p, sweeps, rebuilds) = Incremental::new(problem, policy)
        .run_counting(None, &Interrupt::never())
        .unwrap();
    let near = |a: f64, b: f64| (a - b).abs() <= 1e-9 * a.abs().max(b.abs()).max(1e-300);
    for i in 0..problem.flows.len() {
        assert!(
            near(p.finish_s[i], reference.finish_s[i]) && near(p.start_s[i], reference.start_s[i]),
            "{what}, {policy:?}: flow {i} runs {} .. {} but the reference says {} .. {}",
            p.start_s[i],
            p.finish_s[i],
            reference.start_s[i],
            reference.finish_s[i]
        );
    }
    assert!(near(p.makespan_s, reference.makespan_s));
    assert_eq!(p.rate_updates, reference.rate_updates, "{what}, {policy:?}");
    (sweeps, rebuilds)
}

#[test]
fn incremental_engine_equals_the_reference_on_small_random_problems() {
    let mut rng = crate::testing::Rng(0x2545_f491_4f6c_dd1d);
    let mut sweeps = 0;
    for case in 0..400 {
        let nodes = 2 + rng.below(5) as u32;
        let core = rng.below(5) as u32;
        let n = 1 + rng.below(30) as usize;
        let problem = random_problem(&mut rng, nodes, core, n);
        for policy in POLICIES {
            sweeps += compare_with_reference(&problem, policy, &format!("case {case}")).0;
        }
    }
    // The cases must exercise the sweep, not only progressive filling from scratch.
    assert!(sweeps > 10_000, "{sweeps} sweeps");
}

#[test]
fn incremental_engine_equals_the_reference_on_larger_random_problems() {
    // Long cascades: hundreds of flows on few resources, every policy.
    let mut rng = crate::testing::Rng(0x9e37_79b9_7f4a_7c15);
    for case in 0..12 {
        let nodes = 6 + rng.below(10) as u32;
        let core = 2 + rng.below(8) as u32;
        let n = 100 + rng.below(300) as usize;
        let problem = random_problem(&mut rng, nodes, core, n);
        for policy in POLICIES {
            let (sweeps, rebuilds) =
                compare_with_reference(&problem, policy, &format!("case {case}"));
            if policy == Policy::AllAtOnce {
                // One rebuild for the flows that start together, sweeps after.
                assert!(
                    rebuilds <= 2 && sweeps > 10,
                    "{sweeps} sweeps, {rebuilds} rebuilds"
                );
            }
        }
    }
}

/// The same comparisons on many more cases, small and large (about a minute in release
/// builds): `cargo test --release simulate -- --ignored`.
#[test]
#[ignore]
fn incremental_engine_equals_the_reference_on_many_random_problems() {
    let mut rng = crate::testing::Rng(0x2545_f491_4f6c_dd1e);
    for case in 0..20_000 {
        // One case in ten six times as large.
        let scale = if case % 10 == 0 { 6 } else { 1 };
        let nodes = 2 + rng.below(5 * scale) as u32;
        let core = rng.below(5 * scale) as u32;
        let n = 1 + rng.below(30 * scale) as usize;
        let problem = random_problem(&mut rng, nodes, core, n);
        for policy in POLICIES {
            compare_with_reference(&problem, policy, &format!("case {case}"));
        }
    }
}

#[test]
fn incremental_engine_records_the_reference_utilisation() {
    let mut rng = crate::testing::Rng(0x1234_5678_9abc_def1);
    for case in 0..60 {
        let n = 1 + rng.below(25) as usize;
        let problem = random_problem(&mut rng, 4, 3, n);
        for policy in [Policy::AllAtOnce, Policy::PerSender, Policy::Window(2)] {
            let model = Model::Fluid(policy);
            let a = simulate_with(&problem, model, 9, Engine::Incremental, &Interrupt::never())
                .unwrap();
            let b =
                simulate_with(&problem, model, 9, Engine::Reference, &Interrupt::never()).unwrap();
            for (x, y) in a.utilisation.iter().zip(&b.utilisation) {
                assert!(
                    (x - y).abs() <= 1e-9,
                    "case {case}, {policy:?}: {x} against {y}"
                );
            }
        }
    }
}

/// An all-to-all on `n` hosts of one switch (uplink `x`, downlink `n + y`), in round-robin
/// frames (frame `s`: every `x` sends to `x + s`), as the benchmarks' crossbar: every host link a
/// bottleneck, and an event changes the rates of most groups. Sizes uneven (1 to 10^4 bytes, or
/// a few equal values, so that groups also finish together), some flows left out.
fn crossbar_problem(rng: &mut crate::testing::Rng, n: u32) -> Problem {
    let equal_caps = rng.below(2) == 0;
    let capacities = (0..2 * n)
        .map(|_| {
            if equal_caps {
                1.0
            } else {
                1.0 + rng.below(4) as f64
            }
        })
        .collect();
    let few_sizes = rng.below(3) == 0;
    let (mut flows, mut receivers, mut frames) = (Vec::new(), Vec::new(), Vec::new());
    for s in 1..n {
        let mut frame = Vec::new();
        for x in 0..n {
            if rng.below(10) == 0 {
                continue;
            }
            let y = (x + s) % n;
            frame.push(flows.len() as u32);
            flows.push(Flow {
                path: vec![x, n + y],
                size_bytes: if few_sizes {
                    (1 + rng.below(3)) as f64
                } else {
                    1.0 + rng.below(10_000) as f64
                },
                latency_s: if rng.below(5) == 0 { 0.5 } else { 0.0 },
                sender: x,
            });
            receivers.push(y);
        }
        frames.push(frame);
    }
    Problem {
        capacities,
        slots: Vec::new(),
        flows,
        frames,
        overhead_s: 0.0,
        receivers,
        frame_steps: Vec::new(),
    }
}

#[test]
fn incremental_engine_equals_the_reference_on_crossbars() {
    let mut rng = crate::testing::Rng(0x5851_f42d_4c95_7f2d);
    let mut sweeps = 0;
    for case in 0..40 {
        let n = 3 + rng.below(10) as u32;
        let problem = crossbar_problem(&mut rng, n);
        for policy in POLICIES {
            sweeps += compare_with_reference(&problem, policy, &format!("crossbar case {case}")).0;
        }
    }
    // Two larger ones, where cascades run through most of the groups at every event.
    for n in [24, 32] {
        let problem = crossbar_problem(&mut rng, n);
        for policy in POLICIES {
            sweeps += compare_with_reference(&problem, policy, &format!("crossbar n = {n}")).0;
        }
    }
    assert!(sweeps > 1_000, "{sweeps} sweeps");
}

#[test]
fn level_changes_count_the_rates_set() {
    // Two flows of 1 and 2 bytes on one link of capacity 1: the group's rate is set to 1/2 at
    // the start and to 1 when the first flow ends; nothing else changes.
    let problem = Problem {
        capacities: vec![1.0],
        slots: Vec::new(),
        flows: crate::simulate::testing::flows(&[vec![0], vec![0]], 1.0),
        frames: vec![vec![0, 1]],
        overhead_s: 0.0,
        receivers: Vec::new(),
        frame_steps: Vec::new(),
    };
    let mut problem = problem;
    problem.flows[1].size_bytes = 2.0;
    let p = Incremental::new(&problem, Policy::AllAtOnce)
        .run(None, &Interrupt::never())
        .unwrap();
    assert_eq!(p.level_changes, 2);
    assert_eq!(p.finish_s, vec![2.0, 3.0]);
    let reference = Reference::new(&problem, Policy::AllAtOnce)
        .run(None, &Interrupt::never())
        .unwrap();
    assert_eq!(reference.level_changes, 0);
}

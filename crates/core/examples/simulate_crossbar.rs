//! Profiling aid: the fluid model on a crossbar all-to-all of random sizes, all at once.
//!
//!     cargo run --release -p liquidsched-core --example simulate_crossbar -- 64 [reference] [policy]
//!
//! `n` hosts on one switch (an uplink and a downlink each), every ordered pair of distinct
//! hosts one flow of 1–100 MB, in round-robin frames; prints the time the engine took and the
//! bottleneck rates it set per event (incremental engine).

use liquidsched_core::simulate::{simulate_with, Engine, Flow, Model, Policy, Problem};
use liquidsched_core::Interrupt;

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let n: u32 = args.get(1).and_then(|a| a.parse().ok()).unwrap_or(64);
    let engine = match args.get(2).map(String::as_str) {
        Some("reference") => Engine::Reference,
        _ => Engine::Incremental,
    };
    let policy = match args.get(3).map(String::as_str) {
        Some("frames") => Policy::Frames,
        Some("per-sender") => Policy::PerSender,
        Some("window") => Policy::Window(2),
        Some("steps") => Policy::Steps,
        _ => Policy::AllAtOnce,
    };
    let mut state = 0x2545_f491_4f6c_dd1du64;
    let mut flows = Vec::new();
    let mut receivers = Vec::new();
    let mut frames = Vec::new();
    for s in 1..n {
        let mut frame = Vec::new();
        for x in 0..n {
            let y = (x + s) % n;
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            frame.push(flows.len() as u32);
            flows.push(Flow {
                path: vec![x, n + y],
                size_bytes: 1e6 + (state % 99_000_000) as f64,
                latency_s: 1e-6,
                sender: x,
            });
            receivers.push(y);
        }
        frames.push(frame);
    }
    let problem = Problem {
        capacities: vec![1.25e9; 2 * n as usize],
        slots: Vec::new(),
        flows,
        frames,
        overhead_s: 0.0,
        receivers,
        frame_steps: Vec::new(),
    };
    let start = std::time::Instant::now();
    let p = simulate_with(
        &problem,
        Model::Fluid(policy),
        0,
        engine,
        &Interrupt::never(),
    )
    .unwrap();
    println!(
        "{} flows: {:.3} s, makespan {:.6} s, {} rate updates, {:.1} level changes each",
        problem.flows.len(),
        start.elapsed().as_secs_f64(),
        p.makespan_s,
        p.rate_updates,
        p.level_changes as f64 / p.rate_updates.max(1) as f64
    );
}

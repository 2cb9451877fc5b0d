//! Event-driven prediction of what a schedule achieves, in three network models (DESIGN.md).
//!
//! - *frames*: synchronous timeframes, each as long as its longest piece plus an overhead β;
//! - *circuit* (wormhole / cut-through): a transfer holds a slot of every resource of its path
//!   for its whole duration and starts when each of them has a free slot, slots being granted in
//!   schedule order;
//! - *fluid*: max-min fair sharing of every resource among the flows crossing it, rates
//!   recomputed by progressive filling at every start and finish, with three start policies:
//!   all at once, frame by frame behind a barrier, per sender in schedule order, or gated per
//!   node by the schedule's steps: under a window (paper 002's global window: a node sends the
//!   flows of step `k` while fewer than `W` of the earlier steps are not yet wholly received by
//!   it) or one step at a time (each node waits for its own flows, sent and received, of
//!   a step before it starts the next: the pairwise exchange).
//!
//! A resource with capacity `c` and `k` slots carries `k` transfers at once, each at its slot
//! rate `c / k`; in the frames and circuit models a flow runs at the smallest slot rate of its
//! path. The fluid model shares capacities and ignores slots. A flow first spends its path
//! latency, then sends its bytes. Capacities, slots, latencies and sizes may all differ.
//!
//! The fluid model has two engines that give the same times up to rounding ([`Engine`]): one
//! recomputes every rate from scratch at every event, which costs time quadratic in the flows
//! when they all run at once; the other re-solves only the part of the max-min solution an
//! event can change (see the module `incremental`).
//!
//! The parts: `problem` (the problem and its checks), `models` (the frames and circuit models,
//! and the utilisation grid), `starts` (the start policies), `filling` (progressive filling),
//! `reference` and `incremental` (the two fluid engines); this module chooses the engine.

mod filling;
mod incremental;
mod models;
mod problem;
mod reference;
mod starts;
#[cfg(test)]
mod testing;

pub use problem::{Flow, Model, Policy, Prediction, Problem};

use crate::error::{CoreError, CoreResult};
use crate::interrupt::Interrupt;
use incremental::Incremental;
use models::{circuit_model, constant_rate_utilisation, frames_model, Grid};
use problem::check;
use reference::Reference;

/// Predict the schedule's timing in `model`, with `bins` utilisation bins (0 for none).
pub fn simulate(problem: &Problem, model: Model, bins: usize) -> CoreResult<Prediction> {
    simulate_with(problem, model, bins, Engine::Auto, &Interrupt::never())
}

/// How the fluid model finds the max-min rates after each event. Both engines give the same
/// predictions up to rounding (within 1e-9 relative on every time; the tests hold them to it);
/// the frames and circuit models ignore the choice.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Engine {
    /// Incremental when flows can be many at once, from scratch otherwise: with a handful of
    /// flows in the network, recomputing everything costs less than keeping the structures
    /// that avoid it.
    Auto,
    /// Recompute only what an event can change (see the incremental engine's module): each event
    /// costs what it changes, not what is in the network.
    Incremental,
    /// Progressive filling from scratch over every active flow at every event, as the simulator
    /// first did: quadratic in the flows, kept as the tests' oracle.
    Reference,
}

/// [`Engine::Auto`] recomputes from scratch for schedules of fewer flows than this, whose
/// simulation is over before the incremental engine's set-up pays off, or with fewer than
/// `FEW_AT_ONCE` in the network at once (measured on random networks under every policy).
const FEW_FLOWS: usize = 48;
const FEW_AT_ONCE: usize = 6;

/// An estimate of the most flows `policy` has in the network at once, to choose an engine.
fn peak_flows(problem: &Problem, policy: Policy) -> usize {
    let n = problem.flows.len();
    let frame = problem.frames.iter().map(|f| f.len()).max().unwrap_or(0);
    match policy {
        Policy::AllAtOnce => n,
        Policy::Frames => frame,
        Policy::PerSender => {
            let mut senders: Vec<u32> = problem.flows.iter().map(|f| f.sender).collect();
            senders.sort_unstable();
            senders.dedup();
            senders.len()
        }
        Policy::Window(w) => n.min(frame.saturating_mul(w as usize)),
        Policy::Steps => frame,
    }
}

fn fluid_model(
    problem: &Problem,
    policy: Policy,
    engine: Engine,
    grid: Option<&mut Grid>,
    interrupt: &Interrupt,
) -> CoreResult<Prediction> {
    let engine = match engine {
        Engine::Auto
            if problem.flows.len() < FEW_FLOWS || peak_flows(problem, policy) < FEW_AT_ONCE =>
        {
            Engine::Reference
        }
        Engine::Auto => Engine::Incremental,
        chosen => chosen,
    };
    match engine {
        Engine::Reference => Reference::new(problem, policy).run(grid, interrupt),
        _ => Incremental::new(problem, policy).run(grid, interrupt),
    }
}

/// [`simulate`] with the fluid model's engine chosen, stopped with
/// [`CoreError::Interrupted`] when `interrupt` fires (probed every few thousand flow visits).
pub fn simulate_with(
    problem: &Problem,
    model: Model,
    bins: usize,
    engine: Engine,
    interrupt: &Interrupt,
) -> CoreResult<Prediction> {
    check(problem)?;
    if let Model::Fluid(Policy::Window(_) | Policy::Steps) = model {
        if problem.receivers.len() != problem.flows.len() {
            return Err(CoreError::InvalidInput(
                "the window and steps policies need the receiver of every flow".into(),
            ));
        }
    }
    if model == Model::Fluid(Policy::Window(0)) {
        return Err(CoreError::InvalidInput(
            "a window must let at least one step through (W >= 1)".into(),
        ));
    }
    let mut prediction = match model {
        Model::Frames => frames_model(problem),
        Model::Circuit => circuit_model(problem),
        Model::Fluid(policy) => fluid_model(problem, policy, engine, None, interrupt)?,
    };
    if bins > 0 {
        prediction.bins = bins;
        prediction.utilisation = match model {
            Model::Fluid(policy) => {
                let mut grid = Grid::new(problem.capacities.len(), bins, prediction.makespan_s);
                fluid_model(problem, policy, engine, Some(&mut grid), interrupt)?;
                grid.values
            }
            _ => constant_rate_utilisation(problem, &prediction, bins),
        };
    }
    Ok(prediction)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::simulate::testing::{backbone, close, flows};

    #[test]
    fn fig2_brute_force_takes_two_and_a_half() {
        let p = simulate(&backbone(), Model::Fluid(Policy::AllAtOnce), 0).unwrap();
        // Three flows at 2/3 until the unit flows finish at 1.5, then the big one at 1: 2.5.
        assert!(close(p.makespan_s, 2.5), "{}", p.makespan_s);
        assert!(close(p.finish_s[0], 1.5) && close(p.finish_s[1], 1.5));
    }

    #[test]
    fn fig2_scheduled_takes_two() {
        // The schedule splits the big transfer in two unit pieces (same sender), each beside
        // one unit flow: two frames of time 1.
        let mut problem = backbone();
        problem.flows[2].size_bytes = 1.0;
        let second_half = Flow {
            path: vec![0, 3, 6],
            size_bytes: 1.0,
            latency_s: 0.0,
            sender: 2,
        };
        problem.flows.push(second_half);
        problem.frames = vec![vec![0, 2], vec![1, 3]];
        let p = simulate(&problem, Model::Fluid(Policy::Frames), 0).unwrap();
        assert!(close(p.makespan_s, 2.0), "{}", p.makespan_s);
        assert!(close(
            simulate(&problem, Model::Frames, 0).unwrap().makespan_s,
            2.0
        ));
    }

    #[test]
    fn latency_delays_the_data() {
        let mut fl = flows(&[vec![0]], 10.0);
        fl[0].latency_s = 0.5;
        let problem = Problem {
            capacities: vec![5.0],
            slots: Vec::new(),
            flows: fl,
            frames: vec![vec![0]],
            overhead_s: 0.25,
            receivers: Vec::new(),
            frame_steps: Vec::new(),
        };
        for model in [Model::Circuit, Model::Fluid(Policy::AllAtOnce)] {
            assert!(close(simulate(&problem, model, 0).unwrap().makespan_s, 2.5));
        }
        assert!(close(
            simulate(&problem, Model::Frames, 0).unwrap().makespan_s,
            2.75
        ));
    }

    #[test]
    fn utilisation_of_a_saturated_link_is_one() {
        let problem = Problem {
            capacities: vec![2.0, 4.0],
            slots: Vec::new(),
            flows: flows(&[vec![0, 1], vec![0]], 2.0),
            frames: vec![vec![0, 1]],
            overhead_s: 0.0,
            receivers: Vec::new(),
            frame_steps: Vec::new(),
        };
        let p = simulate(&problem, Model::Fluid(Policy::AllAtOnce), 4).unwrap();
        assert!(close(p.makespan_s, 2.0));
        assert!(
            p.utilisation[..4].iter().all(|&u| close(u, 1.0)),
            "{:?}",
            p.utilisation
        );
        assert!(p.utilisation[4..].iter().all(|&u| close(u, 0.25)));
    }
}

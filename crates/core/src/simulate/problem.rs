//! The problem a simulation solves, and its checks: the flows, their start policies, the
//! network models, the schedule with its resources, what a simulation predicts, and the
//! validation of a problem before any model runs.

use crate::error::{CoreError, CoreResult};
use crate::slots::checked_slots;

/// One piece of a schedule to simulate.
#[derive(Debug, Clone)]
pub struct Flow {
    /// Resource indices of its path (each once).
    pub path: Vec<u32>,
    pub size_bytes: f64,
    /// Sum of the latencies along its path.
    pub latency_s: f64,
    /// Index of its sending host (for the per-sender policy).
    pub sender: u32,
}

/// When fluid flows start.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Policy {
    /// Every flow at time 0.
    AllAtOnce,
    /// A frame starts when every flow of the previous one has finished, plus the overhead.
    Frames,
    /// Each sender sends its flows one after the other, in schedule order.
    PerSender,
    /// Node `x` starts its flows of step `k` (schedule order) while fewer than `W` of the steps
    /// before `k` in which it receives have flows to it unfinished: at most `W` steps (packets,
    /// when a node sends one per step) sent and not yet received, paper 002's global window.
    Window(u32),
    /// A flow of step `k` starts once every flow its sender or its receiver sends or receives
    /// in an earlier step has finished: each node one round at a time, a send meeting its
    /// receive, without a global barrier.
    Steps,
}

/// The network model.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Model {
    Frames,
    Circuit,
    Fluid(Policy),
}

/// A schedule to simulate: resource capacities, flows, and frames of flow indices (their
/// concatenation is the schedule order).
#[derive(Debug, Clone)]
pub struct Problem {
    pub capacities: Vec<f64>,
    /// Slots of each resource (frames and circuit models); empty means one each.
    pub slots: Vec<u32>,
    pub flows: Vec<Flow>,
    pub frames: Vec<Vec<u32>>,
    /// Overhead β added to every frame (frames model and frames policy).
    pub overhead_s: f64,
    /// Receiving node of each flow, numbered like the senders (window and steps policies).
    pub receivers: Vec<u32>,
    /// Step of each frame, non-decreasing (window and steps policies); empty: the frame's index.
    pub frame_steps: Vec<u32>,
}

/// What a simulation predicts.
#[derive(Debug, Clone)]
pub struct Prediction {
    pub makespan_s: f64,
    pub start_s: Vec<f64>,
    pub finish_s: Vec<f64>,
    /// `resources × bins` busy fractions over `[0, makespan]`, row-major; empty when no bins
    /// were asked for.
    pub utilisation: Vec<f64>,
    pub bins: usize,
    /// Rate computations done (fluid model).
    pub rate_updates: u64,
    /// Rates of bottleneck groups set, over all rate computations (the incremental fluid engine;
    /// 0 for the others). Each is a rate that changed: its growth with the flows is a floor on the
    /// growth of any engine that keeps one rate per bottleneck.
    pub level_changes: u64,
}

pub(super) fn check(problem: &Problem) -> CoreResult<()> {
    let resources = problem.capacities.len();
    checked_slots(&problem.slots, resources)?;
    for (r, &c) in problem.capacities.iter().enumerate() {
        if !(c.is_finite() && c > 0.0) {
            return Err(CoreError::InvalidInput(format!(
                "resource {r} has capacity {c}; expected a positive number"
            )));
        }
    }
    for (i, f) in problem.flows.iter().enumerate() {
        if !(f.size_bytes.is_finite() && f.size_bytes >= 0.0) {
            return Err(CoreError::InvalidInput(format!(
                "flow {i} has size {}",
                f.size_bytes
            )));
        }
        if !(f.latency_s.is_finite() && f.latency_s >= 0.0) {
            return Err(CoreError::InvalidInput(format!(
                "flow {i} has latency {}",
                f.latency_s
            )));
        }
        if f.path.is_empty() {
            return Err(CoreError::InvalidInput(format!(
                "flow {i} has an empty path"
            )));
        }
        if let Some(&r) = f.path.iter().find(|&&r| r as usize >= resources) {
            return Err(CoreError::InvalidInput(format!(
                "flow {i} uses resource {r} but there are {resources}"
            )));
        }
    }
    let mut seen = vec![false; problem.flows.len()];
    for (k, frame) in problem.frames.iter().enumerate() {
        for &i in frame {
            let slot = seen.get_mut(i as usize).ok_or_else(|| {
                CoreError::InvalidInput(format!(
                    "frame {k} names flow {i} of {}",
                    problem.flows.len()
                ))
            })?;
            if std::mem::replace(slot, true) {
                return Err(CoreError::InvalidInput(format!(
                    "flow {i} appears twice in the frames"
                )));
            }
        }
    }
    if let Some(i) = seen.iter().position(|&s| !s) {
        return Err(CoreError::InvalidInput(format!("flow {i} is in no frame")));
    }
    if !problem.receivers.is_empty() && problem.receivers.len() != problem.flows.len() {
        return Err(CoreError::InvalidInput(format!(
            "{} receivers for {} flows",
            problem.receivers.len(),
            problem.flows.len()
        )));
    }
    if !problem.frame_steps.is_empty() {
        if problem.frame_steps.len() != problem.frames.len() {
            return Err(CoreError::InvalidInput(format!(
                "{} frame steps for {} frames",
                problem.frame_steps.len(),
                problem.frames.len()
            )));
        }
        if let Some(k) = problem.frame_steps.windows(2).position(|w| w[1] < w[0]) {
            return Err(CoreError::InvalidInput(format!(
                "frame {} is in step {}, before the step {} of the frame before it",
                k + 1,
                problem.frame_steps[k + 1],
                problem.frame_steps[k]
            )));
        }
    }
    if !(problem.overhead_s.is_finite() && problem.overhead_s >= 0.0) {
        return Err(CoreError::InvalidInput(format!(
            "overhead {} must be a non-negative number",
            problem.overhead_s
        )));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::simulate::simulate;
    use crate::simulate::testing::backbone;

    #[test]
    fn bad_input_is_an_error() {
        let mut problem = backbone();
        problem.capacities[0] = 0.0;
        assert!(matches!(
            simulate(&problem, Model::Circuit, 0),
            Err(CoreError::InvalidInput(_))
        ));
        let mut problem = backbone();
        problem.frames = vec![vec![0, 1]];
        assert!(matches!(
            simulate(&problem, Model::Circuit, 0),
            Err(CoreError::InvalidInput(_))
        ));
    }
}

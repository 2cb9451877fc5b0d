//! Bindings of the network-model simulator.

use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;
use pyo3::types::PyDict;

use liquidsched_core::simulate::{Engine, Flow, Model, Policy, Problem};

use crate::interruptible;

fn model_of(model: &str, policy: &str, window: u32) -> PyResult<Model> {
    let policy = match policy {
        "all-at-once" => Policy::AllAtOnce,
        "frames" => Policy::Frames,
        "per-sender" => Policy::PerSender,
        "window" => Policy::Window(window),
        "steps" => Policy::Steps,
        other => return Err(PyValueError::new_err(format!("unknown policy {other:?}"))),
    };
    match model {
        "frames" => Ok(Model::Frames),
        "circuit" => Ok(Model::Circuit),
        "fluid" => Ok(Model::Fluid(policy)),
        other => Err(PyValueError::new_err(format!("unknown model {other:?}"))),
    }
}

/// Simulate a schedule: `paths[i]`, `sizes[i]`, `latencies[i]`, `senders[i]` describe flow
/// `i`; `frames` lists flow indices in schedule order; `slots[r]` is the slot count of
/// resource `r` (empty: one each). The `window` and `steps` policies need `receivers[i]`
/// (numbered like the senders) and take `frame_steps` (the step of each frame; empty: its
/// index); `window` is W in steps. `engine` chooses how the fluid model finds its rates:
/// `auto`, `incremental` or `reference` (from scratch at every event: the tests' oracle); all
/// give the same times up to rounding. Returns a dict with `makespan_s`, `start_s`, `finish_s`,
/// `utilisation` (resources × bins, flat), `bins`, `rate_updates`, `level_changes` (rates of
/// bottleneck groups set by the incremental engine; 0 for the others).
#[pyfunction]
#[pyo3(signature = (capacities, paths, sizes, latencies, senders, frames, model, policy="all-at-once", overhead_s=0.0, bins=0, slots=Vec::new(), receivers=Vec::new(), frame_steps=Vec::new(), window=0, engine="auto"))]
#[allow(clippy::too_many_arguments)]
fn simulate<'py>(
    py: Python<'py>,
    capacities: Vec<f64>,
    paths: Vec<Vec<u32>>,
    sizes: Vec<f64>,
    latencies: Vec<f64>,
    senders: Vec<u32>,
    frames: Vec<Vec<u32>>,
    model: &str,
    policy: &str,
    overhead_s: f64,
    bins: usize,
    slots: Vec<u32>,
    receivers: Vec<u32>,
    frame_steps: Vec<u32>,
    window: u32,
    engine: &str,
) -> PyResult<Bound<'py, PyDict>> {
    let model = model_of(model, policy, window)?;
    let engine = match engine {
        "auto" => Engine::Auto,
        "incremental" => Engine::Incremental,
        "reference" => Engine::Reference,
        other => return Err(PyValueError::new_err(format!("unknown engine {other:?}"))),
    };
    let n = paths.len();
    if sizes.len() != n || latencies.len() != n || senders.len() != n {
        return Err(PyValueError::new_err(
            "paths, sizes, latencies and senders must have one entry per flow",
        ));
    }
    let flows = paths
        .into_iter()
        .zip(sizes)
        .zip(latencies)
        .zip(senders)
        .map(|(((path, size_bytes), latency_s), sender)| Flow {
            path,
            size_bytes,
            latency_s,
            sender,
        })
        .collect();
    let problem = Problem {
        capacities,
        slots,
        flows,
        frames,
        overhead_s,
        receivers,
        frame_steps,
    };
    let p = interruptible(py, |interrupt| {
        liquidsched_core::simulate::simulate_with(&problem, model, bins, engine, interrupt)
    })?;
    let d = PyDict::new(py);
    d.set_item("makespan_s", p.makespan_s)?;
    d.set_item("start_s", p.start_s)?;
    d.set_item("finish_s", p.finish_s)?;
    d.set_item("utilisation", p.utilisation)?;
    d.set_item("bins", p.bins)?;
    d.set_item("rate_updates", p.rate_updates)?;
    d.set_item("level_changes", p.level_changes)?;
    Ok(d)
}

pub(crate) fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_function(wrap_pyfunction!(simulate, m)?)?;
    Ok(())
}

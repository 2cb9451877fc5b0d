//! Bindings of the weighted scheduler (steps for traffics of any sizes).

use pyo3::prelude::*;

use crate::{interruptible, Steps};

/// Steps for transfers of any sizes: `paths[t]` the resources of transfer `t`, `slots[r]` the
/// transfers resource `r` carries at once (empty: one each), `times[t]` its time alone in its
/// slots, `quantum` the shortest step while longer pieces remain. Returns the steps as
/// `(length, [(transfer, time)])`.
#[pyfunction]
#[pyo3(signature = (paths, resources, times, *, slots=Vec::new(), quantum=0.0))]
fn weighted_steps(
    py: Python<'_>,
    paths: Vec<Vec<u32>>,
    resources: usize,
    times: Vec<f64>,
    slots: Vec<u32>,
    quantum: f64,
) -> PyResult<Steps<f64>> {
    let steps = interruptible(py, |interrupt| {
        liquidsched_core::weighted::weighted_steps(
            &paths, resources, &slots, &times, quantum, interrupt,
        )
    })?;
    Ok(steps.into_iter().map(|s| (s.length, s.pieces)).collect())
}

/// The slot-valid frame of largest total weight (the pricing step of the fractional optimum's
/// column generation): `(transfers, weight, proven, nodes)`, the transfers made maximal with
/// those of weight ≤ 0 that still fit; not proven when the search stopped at `node_limit` nodes.
#[pyfunction]
#[pyo3(signature = (paths, resources, weights, *, slots=Vec::new(), node_limit=10_000_000))]
fn heaviest_frame(
    py: Python<'_>,
    paths: Vec<Vec<u32>>,
    resources: usize,
    weights: Vec<f64>,
    slots: Vec<u32>,
    node_limit: u64,
) -> PyResult<(Vec<usize>, f64, bool, u64)> {
    let frame = interruptible(py, |interrupt| {
        liquidsched_core::weighted::heaviest_frame(
            &paths, resources, &slots, &weights, node_limit, interrupt,
        )
    })?;
    Ok((frame.transfers, frame.weight, frame.proven, frame.nodes))
}

pub(crate) fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_function(wrap_pyfunction!(weighted_steps, m)?)?;
    m.add_function(wrap_pyfunction!(heaviest_frame, m)?)?;
    Ok(())
}

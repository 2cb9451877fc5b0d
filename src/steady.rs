//! Bindings of the steady-state period decomposition (paper 003).

use pyo3::prelude::*;

use liquidsched_core::steady;

use crate::{interruptible, Steps};

/// Decompose a period on `nodes` nodes into weighted matchings: `edges` are (sender, receiver,
/// busy units). Returns the matchings as `(length, [(edge, units)])`; their lengths sum to the
/// busiest port's load.
#[pyfunction]
fn steady_matchings(
    py: Python<'_>,
    nodes: usize,
    edges: Vec<(usize, usize, u64)>,
) -> PyResult<Steps<u64>> {
    let steps = interruptible(py, |interrupt| {
        steady::decompose_period(nodes, &edges, interrupt)
    })?;
    Ok(steps.into_iter().map(|s| (s.length, s.pieces)).collect())
}

pub(crate) fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_function(wrap_pyfunction!(steady_matchings, m)?)?;
    Ok(())
}

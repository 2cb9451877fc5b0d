//! Bindings of the KPBS schedulers (GGP, OGGP) and their lower bound.

use pyo3::prelude::*;

use liquidsched_core::kpbs::{self, Peel};

use crate::to_py_err;

/// Peel a KPBS instance: `edges` are (sender, receiver, weight in units of β) on `n1 × n2`
/// hosts, at most `k` transfers at once; `optimized` chooses OGGP over GGP. Returns the steps as
/// `(length, [(edge, units)])`, the degree of the completed graph and the number of peels.
#[pyfunction]
#[pyo3(signature = (n1, n2, edges, k, *, optimized=false))]
fn kpbs_peel(
    py: Python<'_>,
    n1: usize,
    n2: usize,
    edges: Vec<(usize, usize, u64)>,
    k: usize,
    optimized: bool,
) -> PyResult<(Vec<(u64, Vec<(usize, u64)>)>, u64, usize)> {
    let how = if optimized { Peel::Bottleneck } else { Peel::Any };
    let result = py.detach(|| kpbs::peel(n1, n2, &edges, k, how));
    let peeling = result.map_err(|e| to_py_err(py, e))?;
    let steps = peeling.steps.into_iter().map(|s| (s.length, s.pieces)).collect();
    Ok((steps, peeling.regular_degree, peeling.peels))
}

/// The KPBS lower bound in units of β: `max(Δ, ⌈|E|/k⌉) + max(W, ⌈P/k⌉)`.
#[pyfunction]
fn kpbs_lower_bound(py: Python<'_>, n1: usize, n2: usize, edges: Vec<(usize, usize, u64)>, k: usize) -> PyResult<u64> {
    kpbs::lower_bound(n1, n2, &edges, k).map_err(|e| to_py_err(py, e))
}

pub(crate) fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_function(wrap_pyfunction!(kpbs_peel, m)?)?;
    m.add_function(wrap_pyfunction!(kpbs_lower_bound, m)?)?;
    Ok(())
}

//! Bindings of the KPBS schedulers (GGP, OGGP) and their lower bound.

use pyo3::prelude::*;

use liquidsched_core::kpbs::{self, Peel};

use crate::{interruptible, to_py_err, Steps};

/// Peel a KPBS instance: `edges` are (sender, receiver, weight in units of β) on `n1 × n2`
/// hosts, at most `k` transfers at once; `strategy` is `"any"` (GGP), `"bottleneck"` (OGGP) or
/// `"threshold"` (Solstice). Returns the steps as `(length, [(edge, units)])`, the degree of the
/// completed graph and the number of peels.
#[pyfunction]
#[pyo3(signature = (n1, n2, edges, k, *, strategy="any"))]
fn kpbs_peel(
    py: Python<'_>,
    n1: usize,
    n2: usize,
    edges: Vec<(usize, usize, u64)>,
    k: usize,
    strategy: &str,
) -> PyResult<(Steps<u64>, u64, usize)> {
    let how = match strategy {
        "any" => Peel::Any,
        "bottleneck" => Peel::Bottleneck,
        "threshold" => Peel::Threshold,
        other => {
            return Err(to_py_err(
                py,
                liquidsched_core::CoreError::InvalidInput(format!(
                    "unknown peeling strategy {other:?} (any, bottleneck, threshold)"
                )),
            ))
        }
    };
    let peeling = interruptible(py, |interrupt| {
        kpbs::peel(n1, n2, &edges, k, how, interrupt)
    })?;
    let steps = peeling
        .steps
        .into_iter()
        .map(|s| (s.length, s.pieces))
        .collect();
    Ok((steps, peeling.regular_degree, peeling.peels))
}

/// The KPBS lower bound in units of β: `max(Δ, ⌈|E|/k⌉) + max(W, ⌈P/k⌉)`.
#[pyfunction]
fn kpbs_lower_bound(
    py: Python<'_>,
    n1: usize,
    n2: usize,
    edges: Vec<(usize, usize, u64)>,
    k: usize,
) -> PyResult<u64> {
    kpbs::lower_bound(n1, n2, &edges, k).map_err(|e| to_py_err(py, e))
}

pub(crate) fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_function(wrap_pyfunction!(kpbs_peel, m)?)?;
    m.add_function(wrap_pyfunction!(kpbs_lower_bound, m)?)?;
    Ok(())
}

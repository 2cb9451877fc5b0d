//! Bindings of the conflict-graph colourings.

use pyo3::prelude::*;

use crate::interruptible;

/// DSatur colouring: `paths[t]` lists the resource indices of transfer `t` (all below
/// `resources`), `slots[r]` the transfers resource `r` carries at once (empty: one each);
/// returns the frames as lists of transfer indices.
#[pyfunction]
#[pyo3(signature = (paths, resources, *, slots=Vec::new()))]
fn dsatur(
    py: Python<'_>,
    paths: Vec<Vec<u32>>,
    resources: usize,
    slots: Vec<u32>,
) -> PyResult<Vec<Vec<u32>>> {
    interruptible(py, |interrupt| {
        liquidsched_core::coloring::dsatur_with(&paths, resources, &slots, interrupt)
    })
}

pub(crate) fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_function(wrap_pyfunction!(dsatur, m)?)?;
    Ok(())
}

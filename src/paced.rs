//! Bindings of paced plans (Λ of a matrix between ranks, re-planned from the last plan).

use pyo3::prelude::*;

use crate::columns::u64_column;
use crate::to_py_err;

/// Paced plans of the messages between `ranks` ranks: `routes[i * ranks + j]` the resources
/// crossed from rank `i` to rank `j` (empty when none), `capacity_bps[r]` resource `r`'s capacity.
#[pyclass(module = "liquidsched._core", name = "PacedPlanner")]
struct PyPacedPlanner {
    inner: liquidsched_core::paced::PacedPlanner,
}

#[pymethods]
impl PyPacedPlanner {
    #[new]
    fn new(
        py: Python<'_>,
        ranks: usize,
        routes: Vec<Vec<u32>>,
        capacity_bps: Vec<f64>,
    ) -> PyResult<Self> {
        liquidsched_core::paced::PacedPlanner::new(ranks, &routes, capacity_bps)
            .map(|inner| PyPacedPlanner { inner })
            .map_err(|e| to_py_err(py, e))
    }

    #[getter]
    fn ranks(&self) -> usize {
        self.inner.ranks()
    }

    /// Plan the matrix given as `ranks * ranks` little-endian unsigned 64-bit byte counts, row
    /// the sender: `(bound_s, bottleneck or None, crossing_bytes, changed, warm)`.
    fn plan(
        &mut self,
        py: Python<'_>,
        matrix: &[u8],
    ) -> PyResult<(f64, Option<u32>, u64, usize, bool)> {
        let counts = u64_column(py, matrix, "matrix")?;
        let p = self.inner.plan(&counts).map_err(|e| to_py_err(py, e))?;
        Ok((p.bound_s, p.bottleneck, p.crossing_bytes, p.changed, p.warm))
    }

    /// Forget the last plan: the next starts from nothing.
    fn forget(&mut self) {
        self.inner.forget();
    }
}

pub(crate) fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_class::<PyPacedPlanner>()?;
    Ok(())
}

//! Thin PyO3 layer over `liquidsched-core`: converts types and maps core errors to the
//! exceptions of `liquidsched.errors`. No algorithm lives here.

use pyo3::exceptions::PyRuntimeError;
use pyo3::prelude::*;

use liquidsched_core::CoreError;

mod coloring;
mod kpbs;
mod liquid;
mod shuffle;
mod simulate;
mod steady;
mod sweep;
mod weighted;

/// Raise a core error as the matching exception of `liquidsched.errors`.
pub(crate) fn to_py_err(py: Python<'_>, err: CoreError) -> PyErr {
    let (class, msg) = match &err {
        CoreError::InvalidInput(m) => ("InvalidInputError", m.clone()),
        CoreError::TooLarge(m) => ("ProblemTooLargeError", m.clone()),
        CoreError::Internal(m) => ("LiquidschedError", format!("internal error: {m}")),
    };
    let exception = py
        .import("liquidsched.errors")
        .and_then(|m| m.getattr(class))
        .and_then(|cls| cls.call1((msg,)));
    match exception {
        Ok(value) => PyErr::from_value(value),
        // Only reachable if the Python package is broken; still no panic.
        Err(_) => PyRuntimeError::new_err(err.to_string()),
    }
}

#[pymodule]
fn _core(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add("__version__", env!("CARGO_PKG_VERSION"))?;
    coloring::register(m)?;
    kpbs::register(m)?;
    liquid::register(m)?;
    shuffle::register(m)?;
    simulate::register(m)?;
    steady::register(m)?;
    sweep::register(m)?;
    weighted::register(m)?;
    Ok(())
}

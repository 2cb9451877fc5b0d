//! Thin PyO3 layer over `liquidsched-core`: converts types and maps core errors to the
//! exceptions of `liquidsched.errors`. No algorithm lives here.

use std::sync::Mutex;

use pyo3::exceptions::{PyKeyboardInterrupt, PyRuntimeError};
use pyo3::prelude::*;

use liquidsched_core::{CoreError, Interrupt};

mod coloring;
mod columns;
mod kpbs;
mod liquid;
mod paced;
mod progress;
mod shuffle;
mod simulate;
mod steady;
mod sweep;
mod traffic;
mod weighted;

/// A decomposition into steps as Python receives it: `(length, [(index, amount)])` per step
/// (KPBS and steady-state matchings, weighted steps).
pub(crate) type Steps<T> = Vec<(T, Vec<(usize, T)>)>;

/// Raise a core error as the matching exception of `liquidsched.errors`.
pub(crate) fn to_py_err(py: Python<'_>, err: CoreError) -> PyErr {
    let (class, msg) = match &err {
        // Only when no exception of the signal handler was kept (see `Signals`).
        CoreError::Interrupted => return PyKeyboardInterrupt::new_err(()),
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

/// The exception a Python signal handler raised (KeyboardInterrupt for Ctrl-C), or that a
/// Python callback of the core raised, kept for when the core has stopped: the core's
/// [`Interrupt`] probe asks Python for pending signals, and the exception is raised once the
/// core has returned, in place of its result.
pub(crate) struct Signals {
    caught: Mutex<Option<PyErr>>,
}

impl Signals {
    pub(crate) fn new() -> Self {
        Signals {
            caught: Mutex::new(None),
        }
    }

    /// The core's probe: true once an exception is kept or Python's signal handlers raise one.
    /// It takes the GIL for `check_signals` (about a microsecond), so the core calls it every
    /// few thousand steps only; Python runs signal handlers on its main thread only, so the
    /// core calls it on the calling thread only.
    pub(crate) fn probe(&self) -> bool {
        let mut caught = self.caught.lock().unwrap_or_else(|e| e.into_inner());
        if caught.is_some() {
            return true;
        }
        Python::attach(|py| match py.check_signals() {
            Ok(()) => false,
            Err(e) => {
                *caught = Some(e);
                true
            }
        })
    }

    /// Keep `err` (the first one only) to raise once the core has stopped.
    pub(crate) fn keep(&self, err: PyErr) {
        let mut caught = self.caught.lock().unwrap_or_else(|e| e.into_inner());
        caught.get_or_insert(err);
    }

    /// The core's result as Python sees it: a kept exception wins, even over a result the core
    /// finished before it noticed the signal (else the Ctrl-C would be lost).
    pub(crate) fn finish<T>(self, py: Python<'_>, result: Result<T, CoreError>) -> PyResult<T> {
        let caught = self.caught.into_inner().unwrap_or_else(|e| e.into_inner());
        match (caught, result) {
            (Some(e), _) => Err(e),
            (None, Ok(value)) => Ok(value),
            (None, Err(e)) => Err(to_py_err(py, e)),
        }
    }
}

/// Run the core computation `f` without the GIL, interruptible by Ctrl-C: `f` gets an
/// [`Interrupt`] whose probe is [`Signals::probe`], and a signal's exception (KeyboardInterrupt)
/// is raised when the core stops with [`CoreError::Interrupted`]. Every binding of a core
/// function that may run long goes through here.
pub(crate) fn interruptible<T: Send>(
    py: Python<'_>,
    f: impl FnOnce(&Interrupt) -> Result<T, CoreError> + Send,
) -> PyResult<T> {
    let signals = Signals::new();
    let probe = || signals.probe();
    let result = py.detach(|| f(&Interrupt::new(&probe)));
    signals.finish(py, result)
}

#[pymodule]
fn _core(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add("__version__", env!("CARGO_PKG_VERSION"))?;
    coloring::register(m)?;
    kpbs::register(m)?;
    liquid::register(m)?;
    paced::register(m)?;
    shuffle::register(m)?;
    simulate::register(m)?;
    steady::register(m)?;
    sweep::register(m)?;
    traffic::register(m)?;
    weighted::register(m)?;
    Ok(())
}

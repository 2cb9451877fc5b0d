//! A core search watched from Python: its [`Progress`] reported to a callable every
//! [`REPORT_EVERY`] and at every change of phase, and stopped with its best answer when the
//! callable returns a true value.

use std::sync::Mutex;
use std::time::{Duration, Instant};

use pyo3::prelude::*;
use pyo3::types::PyDict;

use liquidsched_core::{CoreError, Interrupt, Phase, Progress};

use crate::Signals;

/// How often a running search is reported: often enough for a progress bar to move smoothly,
/// seldom enough that the reports cost nothing beside the search.
const REPORT_EVERY: Duration = Duration::from_millis(100);

/// Run the core computation `f` as [`crate::interruptible`] does, with a [`Progress`] that
/// `report` (a Python callable, or None) is given as a dict (`phase`, `target`, `frames`,
/// `deepest`, `nodes`): once before `f` starts, then when the core probes for an interruption,
/// at every change of phase and every [`REPORT_EVERY`]. A true return value asks the core to stop
/// with its best answer ([`Progress::request_stop`]); an exception the callable raises stops it
/// as Ctrl-C does, and is raised once the core has returned.
pub(crate) fn watched<T: Send>(
    py: Python<'_>,
    report: Option<Py<PyAny>>,
    f: impl FnOnce(&Interrupt) -> Result<T, CoreError> + Send,
) -> PyResult<T> {
    let signals = Signals::new();
    let progress = Progress::new();
    let reporter = report.map(Reporter::new);
    if let Some(r) = &reporter {
        r.report(py, &progress, &signals);
    }
    let probe = || {
        if let Some(r) = reporter.as_ref().filter(|r| r.due(&progress)) {
            Python::attach(|py| r.report(py, &progress, &signals));
        }
        signals.probe()
    };
    let interrupt = Interrupt::new(&probe).with_progress(&progress);
    let result = py.detach(|| f(&interrupt));
    signals.finish(py, result)
}

/// The callable a search reports to, and when and in which phase it last did.
struct Reporter {
    callback: Py<PyAny>,
    last: Mutex<(Instant, Phase)>,
}

impl Reporter {
    fn new(callback: Py<PyAny>) -> Self {
        Reporter {
            callback,
            last: Mutex::new((Instant::now(), Phase::Starting)),
        }
    }

    /// Whether a report is due: the phase changed, or the last report is old enough.
    fn due(&self, progress: &Progress) -> bool {
        let last = self.last.lock().unwrap_or_else(|e| e.into_inner());
        progress.snapshot().phase != last.1 || last.0.elapsed() >= REPORT_EVERY
    }

    /// Give the callable the progress now; act on what it returns or raises.
    fn report(&self, py: Python<'_>, progress: &Progress, signals: &Signals) {
        let seen = progress.snapshot();
        *self.last.lock().unwrap_or_else(|e| e.into_inner()) = (Instant::now(), seen.phase);
        let answer = snapshot_dict(py, &seen).and_then(|d| self.callback.call1(py, (d,)));
        match answer.and_then(|value| value.is_truthy(py)) {
            Ok(true) => progress.request_stop(),
            Ok(false) => {}
            Err(e) => signals.keep(e),
        }
    }
}

fn snapshot_dict<'py>(
    py: Python<'py>,
    seen: &liquidsched_core::Snapshot,
) -> PyResult<Bound<'py, PyDict>> {
    let d = PyDict::new(py);
    d.set_item("phase", seen.phase.name())?;
    d.set_item("target", seen.target)?;
    d.set_item("frames", seen.frames)?;
    d.set_item("deepest", seen.deepest)?;
    d.set_item("nodes", seen.nodes)?;
    Ok(d)
}

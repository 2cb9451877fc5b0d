//! Bindings of the sub-topology sweep.

use pyo3::prelude::*;
use pyo3::types::PyDict;

use liquidsched_core::rational::Ratio;
use liquidsched_core::sweep::{AccessDirection, AccessLink, FabricResource, SweepModel};
use liquidsched_core::Interrupt;

use crate::{to_py_err, Signals};

fn direction(py: Python<'_>, name: &str) -> PyResult<AccessDirection> {
    match name {
        "up" => Ok(AccessDirection::Up),
        "down" => Ok(AccessDirection::Down),
        "both" => Ok(AccessDirection::Both),
        other => Err(to_py_err(
            py,
            liquidsched_core::CoreError::InvalidInput(format!(
                "access direction must be 'up', 'down' or 'both', got {other:?}"
            )),
        )),
    }
}

fn model(
    py: Python<'_>,
    access: Vec<Vec<Vec<(u64, String)>>>,
    fabric: Vec<(u64, Vec<(usize, usize)>)>,
    include_self: bool,
) -> PyResult<SweepModel> {
    let access = access
        .into_iter()
        .map(|group| {
            group
                .into_iter()
                .map(|host| {
                    host.into_iter()
                        .map(|(capacity, d)| {
                            Ok(AccessLink {
                                capacity,
                                direction: direction(py, &d)?,
                            })
                        })
                        .collect::<PyResult<Vec<_>>>()
                })
                .collect::<PyResult<Vec<_>>>()
        })
        .collect::<PyResult<Vec<_>>>()?;
    let fabric = fabric
        .into_iter()
        .map(|(capacity, pairs)| FabricResource { capacity, pairs })
        .collect();
    Ok(SweepModel {
        access,
        fabric,
        include_self,
    })
}

/// `(hosts, transfers, duration, crossbar_duration)`, durations as `(count, capacity)` pairs.
type AllocationBound = (u32, u64, (u128, u128), (u128, u128));

fn pair(r: Ratio) -> (u128, u128) {
    (r.num, r.den)
}

/// Bound of one allocation: `(hosts, transfers, duration, crossbar_duration)`, durations as
/// `(count, capacity)` pairs in seconds per byte.
#[pyfunction]
#[pyo3(signature = (access, fabric, include_self, allocation))]
fn sweep_bound(
    py: Python<'_>,
    access: Vec<Vec<Vec<(u64, String)>>>,
    fabric: Vec<(u64, Vec<(usize, usize)>)>,
    include_self: bool,
    allocation: Vec<u32>,
) -> PyResult<AllocationBound> {
    let m = model(py, access, fabric, include_self)?;
    let b = m.bound(&allocation).map_err(|e| to_py_err(py, e))?;
    Ok((
        b.hosts,
        b.transfers,
        pair(b.duration),
        pair(b.crossbar_duration),
    ))
}

/// All classes of equal (hosts, liquid throughput): a list of dicts with `hosts`,
/// `liquid_throughput` and `crossbar_throughput` as `(num, den)` bytes/s, `count`, `allocation`;
/// and the number of allocations enumerated. `progress(done, total)` is called now and then.
#[pyfunction]
#[pyo3(signature = (access, fabric, include_self, progress=None))]
fn sweep_classes<'py>(
    py: Python<'py>,
    access: Vec<Vec<Vec<(u64, String)>>>,
    fabric: Vec<(u64, Vec<(usize, usize)>)>,
    include_self: bool,
    progress: Option<Bound<'py, PyAny>>,
) -> PyResult<(Vec<Bound<'py, PyDict>>, u64)> {
    let m = model(py, access, fabric, include_self)?;
    let total = m.allocation_count().map_err(|e| to_py_err(py, e))?;
    // With the GIL held, for the progress callback: the callback's exception (a Ctrl-C raised
    // inside it among them) is kept like a signal's, and stops the enumeration at the next probe.
    let signals = Signals::new();
    let probe = || signals.probe();
    let interrupt = Interrupt::new(&probe);
    let result = m.classes(
        |done| {
            if let Some(cb) = &progress {
                if let Err(e) = cb.call1((done, total)) {
                    signals.keep(e);
                }
            }
        },
        &interrupt,
    );
    let (classes, done) = signals.finish(py, result)?;
    let out = classes
        .into_iter()
        .map(|c| {
            let d = PyDict::new(py);
            d.set_item("hosts", c.hosts)?;
            d.set_item("liquid_throughput", pair(c.liquid_throughput))?;
            d.set_item("crossbar_throughput", pair(c.crossbar_throughput))?;
            d.set_item("count", c.count)?;
            d.set_item("allocation", c.allocation)?;
            Ok(d)
        })
        .collect::<PyResult<Vec<_>>>()?;
    Ok((out, done))
}

pub(crate) fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_function(wrap_pyfunction!(sweep_bound, m)?)?;
    m.add_function(wrap_pyfunction!(sweep_classes, m)?)?;
    Ok(())
}

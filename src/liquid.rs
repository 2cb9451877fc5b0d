//! Bindings of the exact liquid-schedule search.

use pyo3::prelude::*;
use pyo3::types::PyDict;

use liquidsched_core::liquid::{self, Budget, OrbitStructure, SearchOptions, Source};

use crate::traffic::PyTransferRoutes;

/// The transfers' paths as the search takes them: lists of resource indices, or the routes of
/// a traffic's columns (`TransferRoutes`), whose paths are made here without a Python list
/// per transfer.
#[derive(FromPyObject)]
enum Paths<'py> {
    Routes(PyRef<'py, PyTransferRoutes>),
    Lists(Vec<Vec<u32>>),
}

impl Paths<'_> {
    fn into_lists(self) -> Vec<Vec<u32>> {
        match self {
            Paths::Routes(routes) => routes.inner.paths(),
            Paths::Lists(lists) => lists,
        }
    }
}

/// The translations' action on the transfers (`OrbitStructure.as_core()` in Python):
/// `(orbit, element, product, subgroups, resource_images)`.
type Orbits = (Vec<u32>, Vec<u32>, Vec<u32>, Vec<Vec<u32>>, Vec<u32>);

/// Liquid schedule search: `paths[t]` lists the resource indices of transfer `t` (or `paths`
/// is a traffic's `TransferRoutes`), `slots[r]` the transfers resource `r` carries at once
/// (empty: one each). Returns a dict with `frames`, `duration`, `lower_bound`, `liquid`,
/// `optimal`, `nodes`, `frames_tried`, `memo_hits`, `restarts`, `memory_bytes`, `symmetry_order`, `stopped_by` (None, "nodes" or
/// "time"), `source` and `memo_limit_bytes`. `memo_bytes` bounds the memo of sub-traffics
/// proven to have no schedule (the core's default when None). `symmetry` lists resource permutations, the elements of a group of
/// automorphisms of the network (see the core's `liquid::symmetry`). `orbits` is
/// `(orbit, element, product, subgroups, resource_images)`, a group acting on the transfers with every orbit a
/// copy of it (the core's `liquid::OrbitStructure`), for the orbit cover. Ctrl-C stops it with
/// KeyboardInterrupt; `interruptible=False` searches without the probe, only to measure what
/// the probe costs (`benchmarks/interrupt_latency.py`). `progress`, a callable, is given the
/// search's progress as a dict every 100 ms and at every change of phase (see
/// `progress::watched`); when it returns a true value the search stops with the best schedule
/// known, `stopped_by` "request".
#[pyfunction]
#[pyo3(signature = (paths, resources, *, slots=Vec::new(), blank=true, idle=true, skeleton=true, reduced=true, full=true,
                    memo=true, guided=true, optimize=true, node_limit=None, time_limit=None,
                    bounds=true, symmetry=Vec::new(), interruptible=true, memo_bytes=None, orbits=None,
                    progress=None))]
#[allow(clippy::too_many_arguments)]
fn liquid_schedule<'py>(
    py: Python<'py>,
    paths: Paths<'py>,
    resources: usize,
    slots: Vec<u32>,
    blank: bool,
    idle: bool,
    skeleton: bool,
    reduced: bool,
    full: bool,
    memo: bool,
    guided: bool,
    optimize: bool,
    node_limit: Option<u64>,
    time_limit: Option<f64>,
    bounds: bool,
    symmetry: Vec<Vec<u32>>,
    interruptible: bool,
    memo_bytes: Option<usize>,
    orbits: Option<Orbits>,
    progress: Option<Py<PyAny>>,
) -> PyResult<Bound<'py, PyDict>> {
    let paths = paths.into_lists();
    let defaults = SearchOptions::default();
    let opts = SearchOptions {
        blank,
        idle,
        skeleton,
        reduced,
        full,
        memo,
        guided,
        optimize,
        node_limit,
        time_limit,
        bounds,
        symmetry,
        memo_bytes: memo_bytes.unwrap_or(defaults.memo_bytes),
        orbits: orbits.map(|(orbit, element, product, subgroups, resource_images)| {
            OrbitStructure {
                orbit,
                element,
                product,
                subgroups,
                resource_images,
            }
        }),
        ..defaults
    };
    let r = if interruptible {
        crate::progress::watched(py, progress, |interrupt| {
            liquid::liquid_schedule_with(&paths, resources, &slots, &opts, interrupt)
        })?
    } else {
        py.detach(|| liquid::liquid_schedule(&paths, resources, &slots, &opts))
            .map_err(|e| crate::to_py_err(py, e))?
    };
    let d = PyDict::new(py);
    d.set_item("frames", r.frames)?;
    d.set_item("duration", r.duration)?;
    d.set_item("lower_bound", r.lower_bound)?;
    d.set_item("liquid", r.liquid)?;
    d.set_item("optimal", r.optimal)?;
    d.set_item("nodes", r.nodes)?;
    d.set_item("frames_tried", r.frames_tried)?;
    d.set_item("memo_hits", r.memo_hits)?;
    d.set_item("restarts", r.restarts)?;
    d.set_item("memory_bytes", r.memory_bytes)?;
    d.set_item("memo_limit_bytes", opts.memo_bytes)?;
    d.set_item("symmetry_order", r.symmetry_order)?;
    d.set_item(
        "stopped_by",
        r.stopped_by.map(|b| match b {
            Budget::Nodes => "nodes",
            Budget::Time => "time",
            Budget::Request => "request",
        }),
    )?;
    d.set_item(
        "source",
        match r.source {
            Source::Search => "search",
            Source::Completion => "search+dsatur",
            Source::Dsatur => "dsatur",
            Source::Symmetric => "symmetric search",
            Source::OrbitCover => "orbit cover",
            Source::FirstFit => "search+first-fit",
        },
    )?;
    Ok(d)
}

/// Count the full teams of a traffic and the category nodes explored to enumerate them, with
/// the given reductions. Returns `(teams, nodes, complete)`.
#[pyfunction]
#[pyo3(signature = (paths, resources, *, slots=Vec::new(), blank=true, idle=true, skeleton=true, guided=false, node_limit=None))]
#[allow(clippy::too_many_arguments)]
fn count_full_teams(
    py: Python<'_>,
    paths: Vec<Vec<u32>>,
    resources: usize,
    slots: Vec<u32>,
    blank: bool,
    idle: bool,
    skeleton: bool,
    guided: bool,
    node_limit: Option<u64>,
) -> PyResult<(u64, u64, bool)> {
    // The enumeration of the first frame only: no memo, no optimum search.
    let opts = SearchOptions {
        blank,
        idle,
        skeleton,
        guided,
        memo: false,
        optimize: false,
        node_limit,
        ..SearchOptions::default()
    };
    let c = crate::interruptible(py, |interrupt| {
        liquid::count_full_teams_with(&paths, resources, &slots, &opts, interrupt)
    })?;
    Ok((c.teams, c.nodes, c.complete))
}

pub(crate) fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_function(wrap_pyfunction!(liquid_schedule, m)?)?;
    m.add_function(wrap_pyfunction!(count_full_teams, m)?)?;
    Ok(())
}

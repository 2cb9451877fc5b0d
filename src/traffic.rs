//! Bindings of traffics as columns: a file's plain rows, each transfer's route (built once as a
//! `TransferRoutes` object), and what the algorithms on those routes give.

use pyo3::prelude::*;
use pyo3::types::PyBytes;

use liquidsched_core::traffic;

use crate::columns::{i64_column, u32_bytes, u32_column, u64_bytes, u64_column};
use crate::{interruptible, to_py_err};

/// `(hosts, src, dst, sizes)`: host names and three little-endian columns (u32, u32, u64).
type PlainRows<'py> = (
    Vec<String>,
    Bound<'py, PyBytes>,
    Bound<'py, PyBytes>,
    Bound<'py, PyBytes>,
);

/// The rows of a CSV traffic `text` when it is plain rows (`src,dst,size_bytes` in any order,
/// sizes in digits up to `max_size`): `(hosts, src, dst, sizes)`, the columns as little-endian
/// bytes (u32, u32, u64); None when the general reader must read it.
#[pyfunction]
fn read_plain_rows<'py>(py: Python<'py>, text: &str, max_size: u64) -> Option<PlainRows<'py>> {
    let rows = py.detach(|| traffic::read_plain_rows(text, max_size))?;
    Some((
        rows.hosts,
        u32_bytes(py, &rows.src),
        u32_bytes(py, &rows.dst),
        u64_bytes(py, &rows.sizes),
    ))
}

/// The routes of a traffic's transfers, from their columns (little-endian i64 bytes): each
/// transfer's link up and down and run (negative: none), the runs' offsets and resources, on a
/// network of `resources` resources.
#[pyclass(module = "liquidsched._core", name = "TransferRoutes", frozen)]
pub(crate) struct PyTransferRoutes {
    pub(crate) inner: traffic::TransferRoutes,
}

#[pymethods]
impl PyTransferRoutes {
    #[new]
    fn new(
        py: Python<'_>,
        up: &[u8],
        down: &[u8],
        run: &[u8],
        run_offsets: &[u8],
        run_resources: &[u8],
        resources: usize,
    ) -> PyResult<Self> {
        traffic::TransferRoutes::new(
            i64_column(py, up, "up")?,
            i64_column(py, down, "down")?,
            i64_column(py, run, "run")?,
            i64_column(py, run_offsets, "run_offsets")?,
            i64_column(py, run_resources, "run_resources")?,
            resources,
        )
        .map(|inner| PyTransferRoutes { inner })
        .map_err(|e| to_py_err(py, e))
    }

    fn __len__(&self) -> usize {
        self.inner.len()
    }

    /// Per resource, the transfers crossing it, their bytes and its frame time bound in units
    /// of `weights` (a transfer takes `size * weight` units in its slots), sizes and weights as
    /// little-endian u64 bytes: `(counts, bytes, frame_units)`, the first as little-endian u64
    /// bytes, the others as lists of ints.
    fn resource_sums<'py>(
        &self,
        py: Python<'py>,
        sizes: &[u8],
        weights: &[u8],
        slots: Vec<u32>,
    ) -> PyResult<(Bound<'py, PyBytes>, Vec<u128>, Vec<u128>)> {
        let (sizes, weights) = (
            u64_column(py, sizes, "sizes")?,
            u64_column(py, weights, "weights")?,
        );
        let sums = py
            .detach(|| traffic::resource_sums(&self.inner, &sizes, &weights, &slots))
            .map_err(|e| to_py_err(py, e))?;
        Ok((u64_bytes(py, &sums.counts), sums.bytes, sums.frame_units))
    }

    /// DSatur on the transfers: the frame of each (little-endian u32 bytes), frames numbered in
    /// order; interruptible by Ctrl-C.
    fn dsatur_frames<'py>(
        &self,
        py: Python<'py>,
        slots: Vec<u32>,
    ) -> PyResult<Bound<'py, PyBytes>> {
        let routes = &self.inner;
        let frames = interruptible(py, |interrupt| {
            liquidsched_core::coloring::dsatur_with(
                &routes.paths(),
                routes.resources(),
                &slots,
                interrupt,
            )
        })?;
        let mut frame_of = vec![0u32; routes.len()];
        for (f, frame) in frames.iter().enumerate() {
            for &t in frame {
                frame_of[t as usize] = f as u32;
            }
        }
        Ok(u32_bytes(py, &frame_of))
    }

    /// The resources that carry more transfers of one frame than their slots (empty: one
    /// each), transfer `t` in frame `frame_of[t]` (little-endian u32 bytes): `(frame, resource,
    /// transfers)`, by frame then resource.
    fn overloads(
        &self,
        py: Python<'_>,
        frame_of: &[u8],
        slots: Vec<u32>,
    ) -> PyResult<Vec<(u32, u32, u32)>> {
        let frame_of = u32_column(py, frame_of, "frame_of")?;
        let found = py
            .detach(|| traffic::overloads(&self.inner, &frame_of, &slots))
            .map_err(|e| to_py_err(py, e))?;
        Ok(found
            .into_iter()
            .map(|o| (o.frame, o.resource, o.transfers))
            .collect())
    }

    /// The frame of each transfer of `order` (little-endian u32 bytes), step after step
    /// (`step_starts`, little-endian u64 bytes, from 0 to the transfers' count), first fit
    /// within its step: little-endian u32 bytes, in the order of `order`.
    fn first_fit_by_step<'py>(
        &self,
        py: Python<'py>,
        order: &[u8],
        step_starts: &[u8],
        slots: Vec<u32>,
    ) -> PyResult<Bound<'py, PyBytes>> {
        let order = u32_column(py, order, "order")?;
        let starts: Vec<usize> = u64_column(py, step_starts, "step_starts")?
            .into_iter()
            .map(|s| s as usize)
            .collect();
        let frame_of = py
            .detach(|| traffic::first_fit_by_step(&self.inner, &order, &starts, &slots))
            .map_err(|e| to_py_err(py, e))?;
        Ok(u32_bytes(py, &frame_of))
    }
}

/// `write` given the transfers' columns (little-endian u32, u32 and i64 bytes) as the core's
/// [`traffic::TransferText`], run without the GIL: the JSON text it writes.
fn with_transfer_text(
    py: Python<'_>,
    hosts: &[String],
    (src, dst, sizes): (&[u8], &[u8], &[u8]),
    write: impl FnOnce(&traffic::TransferText) -> Result<String, liquidsched_core::CoreError> + Send,
) -> PyResult<String> {
    let (src, dst) = (u32_column(py, src, "src")?, u32_column(py, dst, "dst")?);
    let sizes = i64_column(py, sizes, "sizes")?;
    let text = traffic::TransferText {
        hosts,
        src: &src,
        dst: &dst,
        sizes: &sizes,
    };
    py.detach(|| write(&text)).map_err(|e| to_py_err(py, e))
}

/// The JSON text of a traffic's list of transfers, `level` levels deep, `per_line` a line
/// (`hosts`: each host's name encoded as a JSON string).
#[pyfunction]
fn transfers_json(
    py: Python<'_>,
    hosts: Vec<String>,
    src: &[u8],
    dst: &[u8],
    sizes: &[u8],
    per_line: usize,
    level: usize,
) -> PyResult<String> {
    with_transfer_text(py, &hosts, (src, dst, sizes), |text| {
        traffic::transfers_json(text, per_line, level)
    })
}

/// The JSON text of a schedule's list of frames of whole transfers, `level` levels deep:
/// frame `f` is transfers `order[starts[f]:starts[f + 1]]` (u32 and u64 bytes).
#[pyfunction]
#[allow(clippy::too_many_arguments)]
fn frames_json(
    py: Python<'_>,
    hosts: Vec<String>,
    src: &[u8],
    dst: &[u8],
    sizes: &[u8],
    order: &[u8],
    starts: &[u8],
    per_line: usize,
    level: usize,
) -> PyResult<String> {
    let order = u32_column(py, order, "order")?;
    let starts = u64_column(py, starts, "starts")?;
    with_transfer_text(py, &hosts, (src, dst, sizes), |text| {
        traffic::frames_json(text, &order, &starts, per_line, level)
    })
}

pub(crate) fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_function(wrap_pyfunction!(read_plain_rows, m)?)?;
    m.add_function(wrap_pyfunction!(transfers_json, m)?)?;
    m.add_function(wrap_pyfunction!(frames_json, m)?)?;
    m.add_class::<PyTransferRoutes>()?;
    Ok(())
}

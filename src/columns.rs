//! Columns of numbers across the boundary as little-endian bytes (numpy's `tobytes()` and
//! `frombuffer`): a million transfers cross as one object, not a million.

use pyo3::prelude::*;
use pyo3::types::PyBytes;

use liquidsched_core::CoreError;

use crate::to_py_err;

/// The 8-byte little-endian words of `bytes`, refused when it does not hold whole words.
fn words(py: Python<'_>, bytes: &[u8], what: &str) -> PyResult<Vec<[u8; 8]>> {
    if !bytes.len().is_multiple_of(8) {
        let msg = format!(
            "{what}: {} bytes is not a whole number of 64-bit values",
            bytes.len()
        );
        return Err(to_py_err(py, CoreError::InvalidInput(msg)));
    }
    Ok(bytes
        .chunks_exact(8)
        .map(|c| c.try_into().expect("8 bytes"))
        .collect())
}

/// A column of unsigned 32-bit integers.
pub(crate) fn u32_column(py: Python<'_>, bytes: &[u8], what: &str) -> PyResult<Vec<u32>> {
    if !bytes.len().is_multiple_of(4) {
        let msg = format!(
            "{what}: {} bytes is not a whole number of 32-bit values",
            bytes.len()
        );
        return Err(to_py_err(py, CoreError::InvalidInput(msg)));
    }
    Ok(bytes
        .chunks_exact(4)
        .map(|c| u32::from_le_bytes(c.try_into().expect("4 bytes")))
        .collect())
}

/// A column of signed 64-bit integers.
pub(crate) fn i64_column(py: Python<'_>, bytes: &[u8], what: &str) -> PyResult<Vec<i64>> {
    Ok(words(py, bytes, what)?
        .into_iter()
        .map(i64::from_le_bytes)
        .collect())
}

/// A column of unsigned 64-bit integers.
pub(crate) fn u64_column(py: Python<'_>, bytes: &[u8], what: &str) -> PyResult<Vec<u64>> {
    Ok(words(py, bytes, what)?
        .into_iter()
        .map(u64::from_le_bytes)
        .collect())
}

/// `values` as the bytes of a little-endian unsigned 32-bit column.
pub(crate) fn u32_bytes<'py>(py: Python<'py>, values: &[u32]) -> Bound<'py, PyBytes> {
    let bytes: Vec<u8> = values.iter().flat_map(|v| v.to_le_bytes()).collect();
    PyBytes::new(py, &bytes)
}

/// `values` as the bytes of a little-endian unsigned 64-bit column.
pub(crate) fn u64_bytes<'py>(py: Python<'py>, values: &[u64]) -> Bound<'py, PyBytes> {
    let bytes: Vec<u8> = values.iter().flat_map(|v| v.to_le_bytes()).collect();
    PyBytes::new(py, &bytes)
}

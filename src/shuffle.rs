//! Bindings of the exchange orders of the synchronous shuffle and pairwise exchanges.

use pyo3::prelude::*;

use liquidsched_core::shuffle::{exchange_steps_with, remap_steps, Permutation, IDLE};
use liquidsched_core::CoreError;

use crate::{interruptible, to_py_err};

/// The steps of a complete exchange among `p` nodes: `steps[j][x]` the node `x` sends to at step
/// `j`, or -1 when it idles. `permutation` is "shift", "xor" or "edge-colour"; `remap=(d1, d2)`
/// applies the contention-aware remapping of node ids (paper 002 eq. 5), nodes numbered switch
/// by switch, `d1` per switch.
#[pyfunction]
#[pyo3(signature = (p, permutation, *, remap=None))]
fn exchange_steps(
    py: Python<'_>,
    p: usize,
    permutation: &str,
    remap: Option<(u32, u32)>,
) -> PyResult<Vec<Vec<i64>>> {
    let permutation = match permutation {
        "shift" => Permutation::Shift,
        "xor" => Permutation::Xor,
        "edge-colour" => Permutation::EdgeColour,
        other => {
            let msg = format!("unknown permutation {other:?}; expected shift, xor or edge-colour");
            return Err(to_py_err(py, CoreError::InvalidInput(msg)));
        }
    };
    let steps = interruptible(py, |interrupt| {
        let steps = exchange_steps_with(p, permutation, interrupt)?;
        match remap {
            Some((d1, d2)) => remap_steps(&steps, d1, d2),
            None => Ok(steps),
        }
    })?;
    Ok(steps
        .into_iter()
        .map(|step| {
            step.into_iter()
                .map(|y| if y == IDLE { -1 } else { y as i64 })
                .collect()
        })
        .collect())
}

pub(crate) fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_function(wrap_pyfunction!(exchange_steps, m)?)?;
    Ok(())
}

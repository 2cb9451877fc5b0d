//! Slots: how many transfers a resource carries at once at full speed.
//!
//! Every algorithm that groups transfers into frames counts them against the slots of each
//! resource; with one slot everywhere a frame is the papers' "no resource used twice".

use crate::error::{CoreError, CoreResult};

/// Check `slots` (one positive count per resource) and return it; an empty slice means one
/// slot everywhere.
pub fn checked_slots(slots: &[u32], resources: usize) -> CoreResult<Vec<u32>> {
    if slots.is_empty() {
        return Ok(vec![1; resources]);
    }
    if slots.len() != resources {
        return Err(CoreError::InvalidInput(format!(
            "{} slot counts for {resources} resources",
            slots.len()
        )));
    }
    if let Some(r) = slots.iter().position(|&k| k == 0) {
        return Err(CoreError::InvalidInput(format!(
            "resource {r} has 0 slots; expected at least 1"
        )));
    }
    Ok(slots.to_vec())
}

/// Check that every resource of every path is below `resources`.
pub fn check_paths(paths: &[Vec<u32>], resources: usize) -> CoreResult<()> {
    for (t, path) in paths.iter().enumerate() {
        if let Some(&r) = path.iter().find(|&&r| r as usize >= resources) {
            return Err(CoreError::InvalidInput(format!("transfer {t} uses resource {r} but there are {resources}")));
        }
    }
    Ok(())
}

/// Frames needed by `n` transfers on a resource of `slots` slots.
#[inline]
pub fn frames_for(n: u32, slots: u32) -> u32 {
    n.div_ceil(slots)
}

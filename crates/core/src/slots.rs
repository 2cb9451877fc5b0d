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
            return Err(CoreError::InvalidInput(format!(
                "transfer {t} uses resource {r} but there are {resources}"
            )));
        }
    }
    Ok(())
}

/// Every transfer of `paths` in exactly one of `frames`, and no resource over its slots in a
/// frame (`slots` given for every resource).
pub fn frames_fit(paths: &[Vec<u32>], slots: &[u32], frames: &[Vec<u32>]) -> bool {
    let mut seen = vec![false; paths.len()];
    let mut on = vec![0u32; slots.len()];
    for frame in frames {
        for &t in frame {
            if std::mem::replace(&mut seen[t as usize], true) {
                return false;
            }
            for &r in &paths[t as usize] {
                on[r as usize] += 1;
                if on[r as usize] > slots[r as usize] {
                    return false;
                }
            }
        }
        // Only the counts this frame raised are cleared: a frame is far smaller than the network.
        for &t in frame {
            for &r in &paths[t as usize] {
                on[r as usize] = 0;
            }
        }
    }
    seen.iter().all(|&s| s)
}

/// Frames needed by `n` transfers on a resource of `slots` slots.
#[inline]
pub fn frames_for(n: u32, slots: u32) -> u32 {
    n.div_ceil(slots)
}

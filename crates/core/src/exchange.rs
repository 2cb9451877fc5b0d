//! One entry point that plans a whole exchange, for callers that cannot reach the Python
//! package: the interposition library that replaces `MPI_Alltoall` and `MPI_Alltoallv` in an
//! unmodified application plans through it.
//!
//! Transfers that all take the same time alone in their slots (an `MPI_Alltoall` on equal
//! capacities, or one whose slot rates are equal) are scheduled by the exact liquid search,
//! whole transfers per frame, within a time budget: the best schedule known when it runs out.
//! Transfers of uneven times (`MPI_Alltoallv`) are cut into the weighted scheduler's steps,
//! whose pieces of time become whole bytes here, the last piece of a transfer taking what
//! rounding left.

use crate::error::{CoreError, CoreResult};
use crate::interrupt::Interrupt;
use crate::liquid::{liquid_schedule, SearchOptions};
use crate::weighted::weighted_steps;

/// Which family made a [`PlannedExchange`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Planner {
    /// The exact liquid search (equal times).
    Liquid,
    /// The weighted scheduler's steps (uneven times).
    Weighted,
}

/// Frames of pieces `(transfer, bytes)`, every transfer's pieces adding up to its size.
#[derive(Debug, Clone, PartialEq)]
pub struct PlannedExchange {
    pub frames: Vec<Vec<(u32, u64)>>,
    pub planner: Planner,
    /// Λ in frames (liquid search only; 0 for weighted steps).
    pub lower_bound_frames: u32,
    /// The liquid search proved that no schedule has fewer frames (never for weighted steps).
    pub proven: bool,
}

/// Plan transfers `t` of `sizes[t]` bytes taking `times[t]` seconds alone in their slots,
/// crossing `paths[t]` (resources below `resources`, `slots[r]` transfers at once). The liquid
/// search gets `time_limit_s` seconds at most.
pub fn plan_exchange(
    paths: &[Vec<u32>],
    resources: usize,
    slots: &[u32],
    sizes: &[u64],
    times: &[f64],
    time_limit_s: f64,
) -> CoreResult<PlannedExchange> {
    if sizes.len() != paths.len() || times.len() != paths.len() {
        return Err(CoreError::InvalidInput(format!(
            "{} transfers but {} sizes and {} times",
            paths.len(),
            sizes.len(),
            times.len()
        )));
    }
    if let Some(t) = sizes.iter().position(|&s| s == 0) {
        return Err(CoreError::InvalidInput(format!(
            "transfer {t}: size must be at least one byte"
        )));
    }
    if paths.is_empty() {
        return Ok(PlannedExchange {
            frames: Vec::new(),
            planner: Planner::Liquid,
            lower_bound_frames: 0,
            proven: true,
        });
    }
    if times.iter().all(|&t| t == times[0]) {
        liquid_frames(paths, resources, slots, sizes, time_limit_s)
    } else {
        weighted_frames(paths, resources, slots, sizes, times)
    }
}

fn liquid_frames(
    paths: &[Vec<u32>],
    resources: usize,
    slots: &[u32],
    sizes: &[u64],
    time_limit_s: f64,
) -> CoreResult<PlannedExchange> {
    let opts = SearchOptions {
        time_limit: Some(time_limit_s),
        ..SearchOptions::default()
    };
    let found = liquid_schedule(paths, resources, slots, &opts)?;
    let frames = found
        .frames
        .iter()
        .map(|f| f.iter().map(|&t| (t, sizes[t as usize])).collect())
        .collect();
    Ok(PlannedExchange {
        frames,
        planner: Planner::Liquid,
        lower_bound_frames: found.lower_bound,
        proven: found.optimal,
    })
}

fn weighted_frames(
    paths: &[Vec<u32>],
    resources: usize,
    slots: &[u32],
    sizes: &[u64],
    times: &[f64],
) -> CoreResult<PlannedExchange> {
    let steps = weighted_steps(paths, resources, slots, times, 0.0, &Interrupt::never())?;
    let frames = bytes_of_steps(sizes, times, steps.iter().map(|s| s.pieces.as_slice()));
    Ok(PlannedExchange {
        frames,
        planner: Planner::Weighted,
        lower_bound_frames: 0,
        proven: false,
    })
}

/// Steps of pieces of time as frames of whole bytes: a transfer's bytes are cut where its
/// cumulated share of time falls, so that its pieces add up to its size whatever the rounding;
/// empty pieces and frames are left out.
pub fn bytes_of_steps<'a>(
    sizes: &[u64],
    times: &[f64],
    steps: impl Iterator<Item = &'a [(usize, f64)]>,
) -> Vec<Vec<(u32, u64)>> {
    let mut done = vec![0.0f64; sizes.len()];
    let mut sent = vec![0u64; sizes.len()];
    let mut frames = Vec::new();
    for step in steps {
        let mut frame = Vec::new();
        for &(t, amount) in step {
            done[t] += amount;
            let share = done[t] / times[t];
            let cut = if share >= 1.0 - 1e-12 {
                sizes[t]
            } else {
                ((sizes[t] as f64 * share) as u64).min(sizes[t])
            };
            if cut > sent[t] {
                frame.push((t as u32, cut - sent[t]));
                sent[t] = cut;
            }
        }
        if !frame.is_empty() {
            frames.push(frame);
        }
    }
    frames
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testing::{is_valid_with_slots, two_switch_paths};

    fn delivered(frames: &[Vec<(u32, u64)>], n: usize) -> Vec<u64> {
        let mut got = vec![0u64; n];
        for f in frames {
            for &(t, b) in f {
                got[t as usize] += b;
            }
        }
        got
    }

    #[test]
    fn equal_times_get_the_liquid_search_and_its_proof() {
        let paths = two_switch_paths();
        let n = paths.len();
        let resources = 1 + paths.iter().flatten().copied().max().unwrap() as usize;
        let plan =
            plan_exchange(&paths, resources, &[], &vec![1000; n], &vec![1.0; n], 5.0).unwrap();
        assert_eq!(plan.planner, Planner::Liquid);
        assert!(plan.proven);
        assert_eq!(plan.frames.len() as u32, plan.lower_bound_frames);
        let frames: Vec<Vec<u32>> = plan
            .frames
            .iter()
            .map(|f| f.iter().map(|p| p.0).collect())
            .collect();
        assert!(is_valid_with_slots(&paths, &vec![1; resources], &frames));
        assert_eq!(delivered(&plan.frames, n), vec![1000; n]);
    }

    #[test]
    fn uneven_times_are_cut_into_whole_bytes_that_add_up() {
        // Two transfers share resource 0; a third runs beside them on resource 1.
        let paths = vec![vec![0], vec![0], vec![1]];
        let sizes = [1001, 333, 7];
        let times = [1001.0, 333.0, 7.0];
        let plan = plan_exchange(&paths, 2, &[], &sizes, &times, 1.0).unwrap();
        assert_eq!(plan.planner, Planner::Weighted);
        assert_eq!(delivered(&plan.frames, 3), sizes.to_vec());
        for f in &plan.frames {
            let on_zero = f.iter().filter(|p| p.0 < 2).count();
            assert!(on_zero <= 1, "two pieces on one resource in {f:?}");
        }
    }

    #[test]
    fn zero_bytes_and_mismatched_lengths_are_refused() {
        assert!(plan_exchange(&[vec![0]], 1, &[], &[0], &[1.0], 1.0).is_err());
        assert!(plan_exchange(&[vec![0]], 1, &[], &[1, 2], &[1.0], 1.0).is_err());
    }
}

//! Completion of a partial schedule when the search did not finish: the transfers it leaves
//! out are coloured by DSatur when DSatur finishes in the time left, and by a greedy first fit
//! otherwise.

use std::time::Instant;

use super::traffic::Traffic;
use super::Source;
use crate::coloring::{dsatur_until, first_fit};
use crate::error::CoreResult;
use crate::interrupt::Interrupt;

/// `partial` completed on the transfers it leaves out (the whole traffic when empty): by
/// DSatur if it finishes by `deadline`, else by a greedy first fit, which is near-linear.
pub(super) fn best_known(
    traffic: &Traffic,
    partial: &[Vec<u32>],
    deadline: Option<Instant>,
    interrupt: &Interrupt,
) -> CoreResult<(Vec<Vec<u32>>, Source)> {
    let mut placed = vec![false; traffic.len()];
    for f in partial {
        for &t in f {
            placed[t as usize] = true;
        }
    }
    let left: Vec<u32> = (0..traffic.len() as u32)
        .filter(|&t| !placed[t as usize])
        .collect();
    let left_paths: Vec<Vec<u32>> = left
        .iter()
        .map(|&t| traffic.paths[t as usize].clone())
        .collect();
    let resources = traffic.users.len();
    let (rest, greedy) =
        match dsatur_until(&left_paths, resources, &traffic.slots, deadline, interrupt)? {
            Some(rest) => (rest, false),
            None => (
                first_fit(&left_paths, resources, &traffic.slots)
                    .expect("paths and slots were validated"),
                true,
            ),
        };
    let mut frames = partial.to_vec();
    frames.extend(
        rest.into_iter()
            .map(|f| f.into_iter().map(|i| left[i as usize]).collect()),
    );
    let source = match (greedy, partial.is_empty()) {
        (true, _) => Source::FirstFit,
        (false, true) => Source::Dsatur,
        (false, false) => Source::Completion,
    };
    Ok((frames, source))
}

#[cfg(test)]
mod tests {
    use crate::liquid::tests::ring_all_to_all;
    use crate::liquid::{liquid_schedule, Budget, SearchOptions};
    use crate::testing::is_valid_schedule;

    #[test]
    fn a_time_budget_of_zero_still_returns_a_schedule() {
        let paths = ring_all_to_all(6);
        let opts = SearchOptions {
            time_limit: Some(0.0),
            ..SearchOptions::default()
        };
        let r = liquid_schedule(&paths, 18, &[], &opts).unwrap();
        assert!(r.stopped_by.is_none_or(|b| b == Budget::Time));
        assert!(is_valid_schedule(&paths, &r.frames));
    }
}

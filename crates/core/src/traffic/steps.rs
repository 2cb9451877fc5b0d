//! Steps cut into frames: a step (the transfers of one round of round-robin, or of a random
//! order) is split where it would put more transfers on a resource than its slots, first fit,
//! a frame never mixing two steps.

use super::routes::TransferRoutes;
use crate::error::{CoreError, CoreResult};

/// The frame of each transfer of `order`, taken step after step (step `s` is
/// `order[step_starts[s]..step_starts[s + 1]]`), each into the first frame opened for its step
/// that has room on all its resources (`slots`, empty: one each), else into a new frame;
/// frames are numbered in the order they open.
///
/// # Examples
///
/// ```
/// use liquidsched_core::traffic::{first_fit_by_step, TransferRoutes};
/// // Three transfers on resource 0 of two slots, in one step; a fourth alone in a second step.
/// let routes = TransferRoutes::new(vec![0, 0, 0, 0], vec![-1; 4], vec![-1; 4], vec![0], vec![], 1).unwrap();
/// assert_eq!(first_fit_by_step(&routes, &[0, 1, 2, 3], &[0, 3, 4], &[2]).unwrap(), [0, 0, 1, 2]);
/// ```
pub fn first_fit_by_step(
    routes: &TransferRoutes,
    order: &[u32],
    step_starts: &[usize],
    slots: &[u32],
) -> CoreResult<Vec<u32>> {
    let (n, resources) = (routes.len(), routes.resources());
    let invalid = |m: String| Err(CoreError::InvalidInput(m));
    if let Some(&t) = order.iter().find(|&&t| t as usize >= n) {
        return invalid(format!("steps: transfer {t} of {n}"));
    }
    if step_starts.first().is_some_and(|&s| s != 0)
        || step_starts.windows(2).any(|w| w[1] < w[0])
        || step_starts
            .last()
            .map_or(!order.is_empty(), |&s| s != order.len())
    {
        return invalid(
            "steps: step starts must go from 0 to the transfers' count without decreasing".into(),
        );
    }
    if !slots.is_empty() && (slots.len() != resources || slots.contains(&0)) {
        return invalid(format!(
            "steps: {} slot counts for {resources} resources, each at least 1",
            slots.len()
        ));
    }
    let room = |r: u32| {
        if slots.is_empty() {
            1
        } else {
            slots[r as usize]
        }
    };
    // counts[f][r]: transfers on r in the f-th frame of the step; touched[f]: the r to reset.
    let mut counts: Vec<Vec<u32>> = Vec::new();
    let mut touched: Vec<Vec<u32>> = Vec::new();
    let mut frame_of = vec![0u32; order.len()];
    let mut path = Vec::new();
    let mut first = 0u32;
    for step in step_starts.windows(2) {
        let mut open = 0usize;
        for at in step[0]..step[1] {
            path.clear();
            routes.for_each_resource(order[at] as usize, |r| path.push(r));
            let fits = |f: usize| path.iter().all(|&r| counts[f][r as usize] < room(r));
            let f = match (0..open).find(|&f| fits(f)) {
                Some(f) => f,
                None => {
                    if open == counts.len() {
                        counts.push(vec![0; resources]);
                        touched.push(Vec::new());
                    }
                    open += 1;
                    open - 1
                }
            };
            for &r in &path {
                if counts[f][r as usize] == 0 {
                    touched[f].push(r);
                }
                counts[f][r as usize] += 1;
            }
            frame_of[at] = first + f as u32;
        }
        for f in 0..open {
            for r in touched[f].drain(..) {
                counts[f][r as usize] = 0;
            }
        }
        first += open as u32;
    }
    Ok(frame_of)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testing::Rng;
    use crate::traffic::routes::random_link_routes;

    /// First fit by step as the old implementation did it, on explicit paths.
    fn reference(paths: &[Vec<u32>], steps: &[Vec<u32>], slots: &[u32]) -> Vec<Vec<u32>> {
        let mut frames = Vec::new();
        for step in steps {
            let mut mine: Vec<(Vec<u32>, Vec<u32>)> = Vec::new();
            for &t in step {
                let fits = |used: &Vec<u32>| {
                    paths[t as usize].iter().all(|&r| {
                        used.iter().filter(|&&u| u == r).count() < slots[r as usize] as usize
                    })
                };
                match mine.iter_mut().find(|(_, used)| fits(used)) {
                    Some((members, used)) => {
                        members.push(t);
                        used.extend(&paths[t as usize]);
                    }
                    None => mine.push((vec![t], paths[t as usize].clone())),
                }
            }
            frames.extend(mine.into_iter().map(|(members, _)| members));
        }
        frames
    }

    #[test]
    fn first_fit_by_step_equals_the_reference_on_random_steps() {
        let mut rng = Rng(5);
        for _ in 0..300 {
            let resources = 1 + rng.below(6) as usize;
            let n = rng.below(25) as usize;
            let routes = random_link_routes(&mut rng, n, resources);
            let slots: Vec<u32> = (0..resources).map(|_| 1 + rng.below(2) as u32).collect();
            let mut order: Vec<u32> = (0..n as u32).collect();
            for i in (1..n).rev() {
                order.swap(i, rng.below(i as u64 + 1) as usize);
            }
            let mut starts = vec![0];
            while *starts.last().unwrap() < n {
                starts.push((starts.last().unwrap() + 1 + rng.below(5) as usize).min(n));
            }
            let steps: Vec<Vec<u32>> = starts
                .windows(2)
                .map(|w| order[w[0]..w[1]].to_vec())
                .collect();
            let frame_of = first_fit_by_step(&routes, &order, &starts, &slots).unwrap();
            let mut frames: Vec<Vec<u32>> = Vec::new();
            for (at, &f) in frame_of.iter().enumerate() {
                if frames.len() <= f as usize {
                    frames.resize(f as usize + 1, Vec::new());
                }
                frames[f as usize].push(order[at]);
            }
            assert_eq!(frames, reference(&routes.paths(), &steps, &slots));
        }
    }

    #[test]
    fn steps_that_do_not_fit_the_transfers_are_refused() {
        let routes =
            TransferRoutes::new(vec![0; 2], vec![-1; 2], vec![-1; 2], vec![0], vec![], 1).unwrap();
        assert!(first_fit_by_step(&routes, &[0, 2], &[0, 2], &[]).is_err());
        assert!(first_fit_by_step(&routes, &[0, 1], &[0, 1], &[]).is_err());
        assert!(first_fit_by_step(&routes, &[0, 1], &[1, 2], &[]).is_err());
        assert!(first_fit_by_step(&routes, &[0, 1], &[0, 2], &[0]).is_err());
    }
}

//! What the frames of a schedule of whole transfers put on each resource: the check of the
//! slot rule for schedules of millions of transfers, frame by frame in one pass.

use super::routes::TransferRoutes;
use crate::error::{CoreError, CoreResult};

/// A resource that carries more transfers in a frame than it has slots.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Overload {
    pub frame: u32,
    pub resource: u32,
    pub transfers: u32,
}

/// Every resource that carries more transfers of one frame than its `slots` (empty: one each),
/// frame by frame, resources in increasing order; transfer `t` is in frame `frame_of[t]`.
///
/// # Examples
///
/// ```
/// use liquidsched_core::traffic::{overloads, Overload, TransferRoutes};
/// // Transfers 0 and 2 both cross resource 0 in frame 1.
/// let routes = TransferRoutes::new(vec![0, 0, 0], vec![1, 2, 3], vec![-1; 3], vec![0], vec![], 4).unwrap();
/// let found = overloads(&routes, &[1, 0, 1], &[]).unwrap();
/// assert_eq!(found, [Overload { frame: 1, resource: 0, transfers: 2 }]);
/// ```
pub fn overloads(
    routes: &TransferRoutes,
    frame_of: &[u32],
    slots: &[u32],
) -> CoreResult<Vec<Overload>> {
    let (n, resources) = (routes.len(), routes.resources());
    if frame_of.len() != n {
        return Err(CoreError::InvalidInput(format!(
            "overloads: {} frames for {n} transfers",
            frame_of.len()
        )));
    }
    if !slots.is_empty() && slots.len() != resources {
        return Err(CoreError::InvalidInput(format!(
            "overloads: {} slot counts for {resources} resources",
            slots.len()
        )));
    }
    let frames = frame_of.iter().max().map_or(0, |&f| f as usize + 1);
    // The transfers of each frame together: a counting sort by frame.
    let mut start = vec![0usize; frames + 1];
    for &f in frame_of {
        start[f as usize + 1] += 1;
    }
    for f in 0..frames {
        start[f + 1] += start[f];
    }
    let mut fill = start.clone();
    let mut by_frame = vec![0u32; n];
    for (t, &f) in frame_of.iter().enumerate() {
        by_frame[fill[f as usize]] = t as u32;
        fill[f as usize] += 1;
    }
    let mut count = vec![0u32; resources];
    let mut touched: Vec<u32> = Vec::new();
    let mut found = Vec::new();
    for f in 0..frames {
        for &t in &by_frame[start[f]..start[f + 1]] {
            routes.for_each_resource(t as usize, |r| {
                if count[r as usize] == 0 {
                    touched.push(r);
                }
                count[r as usize] += 1;
            });
        }
        touched.sort_unstable();
        for &r in &touched {
            let limit = if slots.is_empty() {
                1
            } else {
                slots[r as usize]
            };
            if count[r as usize] > limit {
                found.push(Overload {
                    frame: f as u32,
                    resource: r,
                    transfers: count[r as usize],
                });
            }
            count[r as usize] = 0;
        }
        touched.clear();
    }
    Ok(found)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testing::Rng;
    use crate::traffic::routes::random_link_routes;

    #[test]
    fn overloads_equal_a_count_by_brute_force() {
        let mut rng = Rng(11);
        for _ in 0..300 {
            let resources = 1 + rng.below(8) as usize;
            let n = rng.below(30) as usize;
            let routes = random_link_routes(&mut rng, n, resources);
            let frame_of: Vec<u32> = (0..n).map(|_| rng.below(4) as u32).collect();
            let slots: Vec<u32> = (0..resources).map(|_| 1 + rng.below(2) as u32).collect();
            let paths = routes.paths();
            let mut expected = Vec::new();
            for f in 0..4u32 {
                for r in 0..resources as u32 {
                    let on = (0..n)
                        .filter(|&t| frame_of[t] == f && paths[t].contains(&r))
                        .count() as u32;
                    if on > slots[r as usize] {
                        expected.push(Overload {
                            frame: f,
                            resource: r,
                            transfers: on,
                        });
                    }
                }
            }
            assert_eq!(overloads(&routes, &frame_of, &slots).unwrap(), expected);
        }
    }

    #[test]
    fn columns_that_disagree_are_refused() {
        let routes =
            TransferRoutes::new(vec![0; 2], vec![-1; 2], vec![-1; 2], vec![0], vec![], 1).unwrap();
        assert!(overloads(&routes, &[0], &[]).is_err());
        assert!(overloads(&routes, &[0, 0], &[1, 1]).is_err());
    }
}

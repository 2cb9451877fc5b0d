//! What a traffic puts on each resource, transfer by transfer, in exact integers: the liquid
//! bound is the largest bytes over capacity, the frame bound the most transfers over slots,
//! and the frame time bound the longest a resource's transfers take in frames of its slots.

use super::routes::TransferRoutes;
use crate::error::{CoreError, CoreResult};

/// Per resource: the transfers crossing it, their bytes, and its frame time bound in units of
/// the caller's time weights (see [`resource_sums`]).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ResourceSums {
    pub counts: Vec<u64>,
    pub bytes: Vec<u128>,
    pub frame_units: Vec<u128>,
}

/// The sums of every resource of `routes`.
///
/// Transfer `t` carries `sizes[t]` bytes and takes `sizes[t] * weights[t]` units of time in
/// its slots (the caller scales the inverse of its slot rate to a whole number). A resource of
/// `k` slots takes its transfers `k` at a time: its frame time bound is, longest first, the
/// sum of every `k`-th time (the longest of each group of `k`); `slots` empty means one slot
/// each. Refused with [`CoreError::TooLarge`] when a sum passes 2^128.
///
/// # Examples
///
/// ```
/// use liquidsched_core::traffic::{resource_sums, TransferRoutes};
/// // Three transfers on resource 0 (two slots), the last also on resource 1.
/// let routes = TransferRoutes::new(vec![0, 0, 0], vec![-1, -1, 1], vec![-1; 3], vec![0], vec![], 2).unwrap();
/// let sums = resource_sums(&routes, &[5, 9, 2], &[1, 1, 3], &[2, 1]).unwrap();
/// assert_eq!(sums.counts, [3, 1]);
/// assert_eq!(sums.bytes, [16, 2]);
/// assert_eq!(sums.frame_units, [9 + 5, 6]); // times 5, 9, 6 on resource 0: {9, 6} then {5}
/// ```
pub fn resource_sums(
    routes: &TransferRoutes,
    sizes: &[u64],
    weights: &[u64],
    slots: &[u32],
) -> CoreResult<ResourceSums> {
    let (n, resources) = (routes.len(), routes.resources());
    if sizes.len() != n || weights.len() != n {
        return Err(CoreError::InvalidInput(format!(
            "loads: {} sizes and {} weights for {n} transfers",
            sizes.len(),
            weights.len()
        )));
    }
    if !slots.is_empty() && (slots.len() != resources || slots.contains(&0)) {
        return Err(CoreError::InvalidInput(format!(
            "loads: {} slot counts for {resources} resources, each at least 1",
            slots.len()
        )));
    }
    let slots_of = |r: usize| {
        if slots.is_empty() {
            1
        } else {
            slots[r] as usize
        }
    };
    let too_large = || CoreError::TooLarge("loads: a resource's time passes 2^128 units".into());
    let mut sums = ResourceSums {
        counts: vec![0; resources],
        bytes: vec![0; resources],
        frame_units: vec![0; resources],
    };
    let mut overflow = false;
    for t in 0..n {
        let time = sizes[t] as u128 * weights[t] as u128;
        routes.for_each_resource(t, |r| {
            let r = r as usize;
            sums.counts[r] += 1;
            sums.bytes[r] += sizes[t] as u128;
            if slots_of(r) == 1 {
                let (sum, over) = sums.frame_units[r].overflowing_add(time);
                sums.frame_units[r] = sum;
                overflow |= over;
            }
        });
    }
    if overflow {
        return Err(too_large());
    }
    for (r, units) in slotted_frame_units(routes, sizes, weights, &sums.counts, slots_of) {
        sums.frame_units[r] = units.ok_or_else(too_large)?;
    }
    Ok(sums)
}

/// The frame time bound of each resource of more than one slot (None where it passes 2^128):
/// its transfers' times gathered by resource, sorted longest first, every `k`-th added.
fn slotted_frame_units(
    routes: &TransferRoutes,
    sizes: &[u64],
    weights: &[u64],
    counts: &[u64],
    slots_of: impl Fn(usize) -> usize,
) -> Vec<(usize, Option<u128>)> {
    let slotted: Vec<usize> = (0..counts.len())
        .filter(|&r| slots_of(r) > 1 && counts[r] > 0)
        .collect();
    if slotted.is_empty() {
        return Vec::new();
    }
    let mut start = vec![usize::MAX; counts.len()];
    let mut total = 0;
    for &r in &slotted {
        start[r] = total;
        total += counts[r] as usize;
    }
    let mut fill = start.clone();
    let mut times = vec![0u128; total];
    for t in 0..routes.len() {
        let time = sizes[t] as u128 * weights[t] as u128;
        routes.for_each_resource(t, |r| {
            let at = &mut fill[r as usize];
            if *at != usize::MAX {
                times[*at] = time;
                *at += 1;
            }
        });
    }
    slotted
        .into_iter()
        .map(|r| {
            let mine = &mut times[start[r]..start[r] + counts[r] as usize];
            mine.sort_unstable_by(|a, b| b.cmp(a));
            let units = mine
                .iter()
                .step_by(slots_of(r))
                .try_fold(0u128, |sum, &t| sum.checked_add(t));
            (r, units)
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testing::Rng;

    /// The sums by brute force: every transfer's path listed, times of a resource sorted.
    fn brute_force(
        paths: &[Vec<u32>],
        sizes: &[u64],
        weights: &[u64],
        slots: &[u32],
    ) -> ResourceSums {
        let resources = slots.len();
        let mut sums = ResourceSums {
            counts: vec![0; resources],
            bytes: vec![0; resources],
            frame_units: vec![0; resources],
        };
        for (r, &slot) in slots.iter().enumerate() {
            let mut times: Vec<u128> = Vec::new();
            for (t, path) in paths.iter().enumerate() {
                if path.contains(&(r as u32)) {
                    sums.counts[r] += 1;
                    sums.bytes[r] += sizes[t] as u128;
                    times.push(sizes[t] as u128 * weights[t] as u128);
                }
            }
            times.sort();
            times.reverse();
            sums.frame_units[r] = times.chunks(slot as usize).map(|group| group[0]).sum();
        }
        sums
    }

    #[test]
    fn sums_equal_a_brute_force_count_on_random_routes() {
        let mut rng = Rng(7);
        for round in 0..300 {
            let resources = 2 + rng.below(12) as usize;
            let runs = rng.below(5) as usize;
            let mut offsets = vec![0i64];
            let mut run_resources = Vec::new();
            for _ in 0..runs {
                // A run of distinct resources, as a route between two switches is.
                let mut run: Vec<i64> = (0..rng.below(4))
                    .map(|_| rng.below(resources as u64) as i64)
                    .collect();
                run.sort_unstable();
                run.dedup();
                run_resources.extend(&run);
                offsets.push(run_resources.len() as i64);
            }
            let n = rng.below(40) as usize;
            let (mut up, mut down, mut run) = (Vec::new(), Vec::new(), Vec::new());
            for _ in 0..n {
                let pick = |rng: &mut Rng| rng.below(resources as u64 + 1) as i64 - 1;
                let u = pick(&mut rng);
                let mut d = pick(&mut rng);
                let p = if runs > 0 {
                    rng.below(runs as u64 + 1) as i64 - 1
                } else {
                    -1
                };
                // A link up or down is never also in its run (the up and down of hosts are not
                // between switches).
                let in_run = |r: i64| {
                    p >= 0
                        && run_resources
                            [offsets[p as usize] as usize..offsets[p as usize + 1] as usize]
                            .contains(&r)
                };
                if in_run(d) || (d == u && round % 2 == 0) {
                    d = -1;
                }
                up.push(if in_run(u) { -1 } else { u });
                down.push(d);
                run.push(p);
            }
            let routes = TransferRoutes::new(
                up,
                down,
                run,
                offsets.clone(),
                run_resources.clone(),
                resources,
            )
            .unwrap();
            let sizes: Vec<u64> = (0..n).map(|_| 1 + rng.below(1 << 40)).collect();
            let weights: Vec<u64> = (0..n).map(|_| 1 + rng.below(1000)).collect();
            let slots: Vec<u32> = (0..resources).map(|_| 1 + rng.below(3) as u32).collect();
            let paths = routes.paths();
            assert_eq!(
                resource_sums(&routes, &sizes, &weights, &slots).unwrap(),
                brute_force(&paths, &sizes, &weights, &slots),
                "round {round}"
            );
            let ones = vec![1; resources];
            assert_eq!(
                resource_sums(&routes, &sizes, &weights, &[]).unwrap(),
                brute_force(&paths, &sizes, &weights, &ones)
            );
        }
    }

    #[test]
    fn sums_past_2_to_the_128_are_refused() {
        let routes =
            TransferRoutes::new(vec![0; 3], vec![-1; 3], vec![-1; 3], vec![0], vec![], 1).unwrap();
        let err = resource_sums(&routes, &[u64::MAX; 3], &[u64::MAX; 3], &[]).unwrap_err();
        assert!(matches!(err, CoreError::TooLarge(_)));
        let err = resource_sums(&routes, &[u64::MAX; 3], &[u64::MAX; 3], &[2]).unwrap_err();
        assert!(matches!(err, CoreError::TooLarge(_)));
    }

    #[test]
    fn columns_that_disagree_are_refused() {
        let routes =
            TransferRoutes::new(vec![0; 2], vec![-1; 2], vec![-1; 2], vec![0], vec![], 1).unwrap();
        assert!(resource_sums(&routes, &[1], &[1, 1], &[]).is_err());
        assert!(resource_sums(&routes, &[1, 1], &[1, 1], &[0]).is_err());
        assert!(resource_sums(&routes, &[1, 1], &[1, 1], &[1, 1]).is_err());
    }
}

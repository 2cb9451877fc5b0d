//! Each transfer's resources, as composed routes give them: its link up, its link down, and a
//! run of resources shared by every transfer between the same switch and target.

use crate::error::{CoreError, CoreResult};

/// The routes of a traffic's transfers: transfer `t` crosses `up[t]` and `down[t]` (none where
/// negative; `down` is not counted again where it equals `up`, a host's transfer to itself
/// over a shared-duplex cable) and the resources of run `run[t]` (none where negative):
/// `run_resources[run_offsets[p]..run_offsets[p + 1]]`. A route the table does not compose is
/// a run of its own with no link up or down.
#[derive(Debug, Clone)]
pub struct TransferRoutes {
    up: Vec<i64>,
    down: Vec<i64>,
    run: Vec<i64>,
    run_offsets: Vec<usize>,
    run_resources: Vec<u32>,
    resources: usize,
}

impl TransferRoutes {
    /// The routes, checked: three columns of one length, runs that exist, offsets that do not
    /// decrease, and every resource below `resources`.
    pub fn new(
        up: Vec<i64>,
        down: Vec<i64>,
        run: Vec<i64>,
        run_offsets: Vec<i64>,
        run_resources: Vec<i64>,
        resources: usize,
    ) -> CoreResult<Self> {
        let invalid = |m: String| Err(CoreError::InvalidInput(m));
        if up.len() != down.len() || up.len() != run.len() {
            return invalid(format!(
                "routes: {} links up, {} down and {} runs: one each per transfer",
                up.len(),
                down.len(),
                run.len()
            ));
        }
        if run_offsets.first().is_some_and(|&o| o != 0)
            || run_offsets.windows(2).any(|w| w[1] < w[0])
            || run_offsets.last().map_or(!run_resources.is_empty(), |&o| {
                o as usize != run_resources.len()
            })
        {
            return invalid(
                "routes: run offsets must start at 0, not decrease and end at the resources' count"
                    .into(),
            );
        }
        let runs = run_offsets.len().saturating_sub(1) as i64;
        if let Some(p) = run.iter().find(|&&p| p >= runs) {
            return invalid(format!("routes: run {p} of {runs}"));
        }
        let beyond = |r: i64| r >= resources as i64;
        if let Some(r) = up
            .iter()
            .chain(&down)
            .copied()
            .chain(run_resources.iter().copied())
            .find(|&r| beyond(r))
        {
            return invalid(format!("routes: resource {r} of {resources}"));
        }
        if let Some(r) = run_resources.iter().find(|&&r| r < 0) {
            return invalid(format!("routes: resource {r} in a run"));
        }
        Ok(TransferRoutes {
            up,
            down,
            run,
            run_offsets: run_offsets.into_iter().map(|o| o as usize).collect(),
            run_resources: run_resources.into_iter().map(|r| r as u32).collect(),
            resources,
        })
    }

    /// The number of transfers.
    pub fn len(&self) -> usize {
        self.up.len()
    }

    /// Whether there is no transfer.
    pub fn is_empty(&self) -> bool {
        self.up.is_empty()
    }

    /// The number of resources of the network.
    pub fn resources(&self) -> usize {
        self.resources
    }

    /// Call `f` with each resource transfer `t` crosses, once each as the route lists them.
    #[inline]
    pub fn for_each_resource(&self, t: usize, mut f: impl FnMut(u32)) {
        let (up, down) = (self.up[t], self.down[t]);
        if up >= 0 {
            f(up as u32);
        }
        if down >= 0 && down != up {
            f(down as u32);
        }
        if let Ok(p) = usize::try_from(self.run[t]) {
            for &r in &self.run_resources[self.run_offsets[p]..self.run_offsets[p + 1]] {
                f(r);
            }
        }
    }

    /// Every transfer's resources as a list of its own, in increasing order (what the
    /// colourings take).
    pub fn paths(&self) -> Vec<Vec<u32>> {
        (0..self.len())
            .map(|t| {
                let mut path = Vec::with_capacity(4);
                self.for_each_resource(t, |r| path.push(r));
                path.sort_unstable();
                path
            })
            .collect()
    }
}

/// `n` transfers with a random link up and down each (or none) among `resources`, no runs.
#[cfg(test)]
pub(super) fn random_link_routes(
    rng: &mut crate::testing::Rng,
    n: usize,
    resources: usize,
) -> TransferRoutes {
    let mut pick = || rng.below(resources as u64 + 1) as i64 - 1;
    let (up, down): (Vec<i64>, Vec<i64>) = (0..n).map(|_| (pick(), pick())).unzip();
    TransferRoutes::new(up, down, vec![-1; n], vec![0], vec![], resources).expect("valid routes")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_transfer_crosses_its_links_and_its_run() {
        let routes = TransferRoutes::new(
            vec![0, 1, -1],
            vec![2, 1, -1],
            vec![0, -1, 1],
            vec![0, 2, 3],
            vec![4, 5, 3],
            6,
        )
        .unwrap();
        assert_eq!(routes.paths(), vec![vec![0, 2, 4, 5], vec![1], vec![3]]);
    }

    #[test]
    fn routes_that_do_not_fit_are_refused() {
        let bad = [
            (vec![0], vec![0, 1], vec![-1], vec![0], vec![]),
            (vec![0], vec![1], vec![1], vec![0, 1], vec![0]),
            (vec![9], vec![1], vec![-1], vec![0], vec![]),
            (vec![0], vec![1], vec![0], vec![0, 2], vec![0]),
            (vec![0], vec![1], vec![0], vec![1, 1], vec![0]),
            (vec![0], vec![1], vec![0], vec![0, 1], vec![-3]),
        ];
        for (up, down, run, offsets, resources) in bad {
            let err = TransferRoutes::new(up, down, run, offsets, resources, 4).unwrap_err();
            assert!(matches!(err, CoreError::InvalidInput(_)), "{err}");
        }
    }
}

//! Test builds only: after every update, the incremental engine's rates are checked against
//! progressive filling from scratch.

use super::Sharing;
use crate::simulate::filling::progressive_filling;

impl<'a> Sharing<'a> {
    /// Test builds: the rates equal progressive filling's from scratch after every update.
    pub(super) fn verify(&self, t: f64) {
        let mut on_resource: Vec<Vec<u32>> = vec![Vec::new(); self.problem.capacities.len()];
        for (x, &i) in self.active.iter().enumerate() {
            for &q in self.path(i) {
                on_resource[q as usize].push(x as u32);
            }
        }
        let mut rate = vec![f64::NAN; self.active.len()];
        progressive_filling(
            &self.problem.capacities,
            &on_resource,
            |x| self.path(self.active[x]),
            &mut rate,
        );
        for (x, &i) in self.active.iter().enumerate() {
            let g = self.group[i as usize];
            let got = self.rate_of(g);
            assert!(
                (got - rate[x]).abs() <= 1e-9 * rate[x],
                "t = {t}: flow {i} (path {:?}) in group {g} at {got}, from scratch {}; levels {:?}",
                self.path(i),
                rate[x],
                self.level
            );
        }
    }
}

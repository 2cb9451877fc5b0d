//! Paced plans of a communicator's exchanges on a fabric: the core's [`PacedPlanner`] over the
//! routes between the communicator's ranks, made once per communicator and re-planned from its
//! last plan for every new matrix of counts.

use liquidsched_core::paced::PacedPlanner;

use crate::fabric::Fabric;
use crate::plan::{hosts_of_ranks, route_between};

/// A planner for the communicator whose rank `i` is world rank `world_rank[i]`: messages
/// between ranks of one host cross nothing.
pub fn rank_paced_planner(fabric: &Fabric, world_rank: &[i32]) -> Result<PacedPlanner, String> {
    let host = hosts_of_ranks(fabric, world_rank)?;
    let n = host.len();
    let mut routes = Vec::with_capacity(n * n);
    for &a in &host {
        for &z in &host {
            routes.push(if a == z {
                Vec::new()
            } else {
                route_between(fabric, a, z)?.0.to_vec()
            });
        }
    }
    PacedPlanner::new(n, &routes, fabric.capacity_bps.clone()).map_err(|e| e.to_string())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::plan::plan_ranks;
    use crate::plan::tests::two_by_two;

    #[test]
    fn the_paced_bound_is_the_frames_plans_bound_and_a_warm_plan_the_cold_one() {
        let fabric = two_by_two();
        let world = [0, 1, 2, 3];
        let mut m: Vec<u64> = (0..16)
            .map(|k| if k % 5 == 0 { 0 } else { 1000 + 37 * k })
            .collect();
        let mut planner = rank_paced_planner(&fabric, &world).unwrap();
        let cold = planner.plan(&m).unwrap();
        let close = |a: f64, b: f64| (a - b).abs() <= 1e-12 * b;
        assert!(close(
            cold.bound_s,
            plan_ranks(&fabric, &world, &m, 1.0).unwrap().bound_s
        ));
        m[1] += 5000;
        let warm = planner.plan(&m).unwrap();
        assert!(warm.warm && warm.changed == 1);
        assert!(close(
            warm.bound_s,
            plan_ranks(&fabric, &world, &m, 1.0).unwrap().bound_s
        ));
    }

    #[test]
    fn unmapped_ranks_are_refused() {
        assert!(rank_paced_planner(&two_by_two(), &[0, 9]).is_err());
    }
}

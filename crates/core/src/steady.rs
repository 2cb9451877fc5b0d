//! Steady-state periods (paper 003 §3.3): the busy time of every edge during one period, as a
//! bipartite graph from send ports to receive ports, decomposed into weighted matchings whose
//! lengths sum to the busiest port's load (the weighted bipartite edge-colouring theorem,
//! Schrijver vol. A ch. 20). In each matching a node sends on at most one edge and receives on
//! at most one: the one-port rule.
//!
//! The decomposition is the one GGP uses (`kpbs::peel`) with no limit on simultaneous
//! transfers: completed to a weight-regular graph, it peels perfect matchings off, each as long
//! as its lightest edge, so there are at most as many matchings as edges plus completion edges.

use crate::error::CoreError;
use crate::interrupt::Interrupt;
use crate::kpbs::{self, Peel, Step};

/// The matchings of a period on `nodes` nodes: `edges` are (sender, receiver, busy units). The
/// steps' lengths sum to the largest load of a send or receive port, the smallest any
/// decomposition can reach.
pub fn decompose_period(
    nodes: usize,
    edges: &[(usize, usize, u64)],
    interrupt: &Interrupt,
) -> Result<Vec<Step>, CoreError> {
    if nodes == 0 {
        return if edges.is_empty() {
            Ok(Vec::new())
        } else {
            Err(CoreError::InvalidInput(
                "edges on a platform of no node".into(),
            ))
        };
    }
    let mut sends = vec![0u64; nodes];
    let mut receives = vec![0u64; nodes];
    for (e, &(s, r, w)) in edges.iter().enumerate() {
        if s >= nodes || r >= nodes {
            return Err(CoreError::InvalidInput(format!(
                "edge {e}: ({s}, {r}) is outside {nodes} nodes"
            )));
        }
        for load in [&mut sends[s], &mut receives[r]] {
            *load = load.checked_add(w).ok_or_else(|| {
                CoreError::TooLarge(format!("a port's busy units overflow 64 bits at edge {e}"))
            })?;
        }
    }
    // k = nodes: no limit beyond one-port, so the regular degree is the busiest port's load.
    Ok(kpbs::peel(nodes, nodes, edges, nodes, Peel::Any, interrupt)?.steps)
}

/// The busiest port's load: the length any decomposition needs at least.
pub fn busiest_port(nodes: usize, edges: &[(usize, usize, u64)]) -> u64 {
    let mut sends = vec![0u64; nodes];
    let mut receives = vec![0u64; nodes];
    for &(s, r, w) in edges {
        sends[s] += w;
        receives[r] += w;
    }
    sends.into_iter().chain(receives).max().unwrap_or(0)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testing::Rng;

    fn check(nodes: usize, edges: &[(usize, usize, u64)], steps: &[Step]) {
        let length: u64 = steps.iter().map(|s| s.length).sum();
        assert_eq!(length, busiest_port(nodes, edges));
        let mut carried = vec![0u64; edges.len()];
        for step in steps {
            let mut senders = std::collections::HashSet::new();
            let mut receivers = std::collections::HashSet::new();
            for &(e, units) in &step.pieces {
                assert_eq!(units, step.length);
                assert!(
                    senders.insert(edges[e].0),
                    "a node sends twice in one matching"
                );
                assert!(
                    receivers.insert(edges[e].1),
                    "a node receives twice in one matching"
                );
                carried[e] += units;
            }
        }
        for (e, &(_, _, w)) in edges.iter().enumerate() {
            assert_eq!(carried[e], w, "edge {e}");
        }
    }

    #[test]
    fn a_hand_worked_period_of_three_nodes() {
        // 0 sends 3 to 1 and 2 to 2; 1 sends 4 to 2; 2 sends 1 to 0. Node 2 receives 6: the
        // matchings last 6 in all.
        let edges = [(0, 1, 3), (0, 2, 2), (1, 2, 4), (2, 0, 1)];
        let steps = decompose_period(3, &edges, &Interrupt::never()).unwrap();
        check(3, &edges, &steps);
        assert_eq!(steps.iter().map(|s| s.length).sum::<u64>(), 6);
    }

    #[test]
    fn random_periods_decompose_exactly_into_matchings() {
        let mut rng = Rng(7);
        for _ in 0..300 {
            let nodes = 1 + rng.below(9) as usize;
            let mut edges = Vec::new();
            for s in 0..nodes {
                for r in 0..nodes {
                    if s != r && rng.below(3) == 0 {
                        edges.push((s, r, 1 + rng.below(1000)));
                    }
                }
            }
            let steps = decompose_period(nodes, &edges, &Interrupt::never()).unwrap();
            check(nodes, &edges, &steps);
            assert!(steps.len() <= edges.len() + 2 * nodes);
        }
    }

    #[test]
    fn bad_input_is_an_error() {
        assert!(decompose_period(2, &[(0, 2, 1)], &Interrupt::never()).is_err());
        assert!(decompose_period(2, &[(0, 1, 0)], &Interrupt::never()).is_err());
        assert!(decompose_period(2, &[(0, 1, u64::MAX), (0, 1, 1)], &Interrupt::never()).is_err());
        assert!(decompose_period(0, &[], &Interrupt::never())
            .unwrap()
            .is_empty());
    }
}

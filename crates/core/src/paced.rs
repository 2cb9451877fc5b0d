//! Paced plans: the continuous form of a liquid schedule, planned in linear time and re-planned
//! from the previous plan when the matrix changes.
//!
//! Paced all at once sends every message from the start at `bytes / D`, `D = Λ · (1 + h)`: on
//! every resource the rates add up to at most `1 / (1 + h)` of its capacity, so every message
//! ends at `D` on any network, for any sizes. Its plan is Λ, the busiest resource's time, and
//! Λ needs only each resource's bytes: one pass over the messages' routes. A mixture-of-experts
//! layer's matrix changes every few hundred milliseconds, mostly a little; a [`PacedPlanner`]
//! keeps the bytes of its last plan per resource and, for a new matrix, adds only the
//! differences of the messages that changed along their routes.
//!
//! Resource bytes are integers, so that a plan reached through any chain of warm starts is the
//! plan of the same matrix planned cold, to the bit.

use crate::error::{CoreError, CoreResult};

/// What a paced plan promises.
#[derive(Debug, Clone, PartialEq)]
pub struct PacedPlan {
    /// Λ: the busiest resource's bytes over its capacity, in seconds. No schedule of these
    /// messages is shorter; paced, every message ends at Λ · (1 + headroom).
    pub bound_s: f64,
    /// The busiest resource (the first of equals); `None` when no byte crosses a resource.
    pub bottleneck: Option<u32>,
    /// The bytes that cross at least one resource.
    pub crossing_bytes: u64,
    /// The messages whose bytes differ from the previous plan's (all of them when cold).
    pub changed: usize,
    /// Whether this plan started from the previous one.
    pub warm: bool,
}

/// Paced plans of the messages between `n` ranks whose routes are fixed (see the module).
#[derive(Debug, Clone)]
pub struct PacedPlanner {
    n: usize,
    /// The route of message `k = i * n + j` is `path[path_start[k]..path_start[k + 1]]`;
    /// empty between ranks of one host and from a rank to itself.
    path_start: Vec<usize>,
    path: Vec<u32>,
    capacity_bps: Vec<f64>,
    /// The bytes of the last plan on each resource, and its matrix; `None` before the first.
    resource_bytes: Vec<u128>,
    /// The bytes of the last plan's messages that cross a resource.
    crossing: u128,
    last: Option<Vec<u64>>,
}

impl PacedPlanner {
    /// A planner for `n` ranks: `routes[i * n + j]` the resources crossed from rank `i` to rank
    /// `j` (empty when none is), `capacity_bps[r]` the capacity of resource `r`.
    pub fn new(n: usize, routes: &[Vec<u32>], capacity_bps: Vec<f64>) -> CoreResult<Self> {
        if routes.len() != n * n {
            return Err(CoreError::InvalidInput(format!(
                "{} routes for {n} ranks (expected {})",
                routes.len(),
                n * n
            )));
        }
        if let Some(r) = capacity_bps
            .iter()
            .position(|c| !(c.is_finite() && *c > 0.0))
        {
            return Err(CoreError::InvalidInput(format!(
                "resource {r}: capacity must be a positive number of bytes/s, got {}",
                capacity_bps[r]
            )));
        }
        let mut path_start = Vec::with_capacity(routes.len() + 1);
        let mut path = Vec::new();
        path_start.push(0);
        for (k, route) in routes.iter().enumerate() {
            if let Some(&r) = route.iter().find(|&&r| r as usize >= capacity_bps.len()) {
                return Err(CoreError::InvalidInput(format!(
                    "route from rank {} to rank {}: resource {r} of {}",
                    k / n.max(1),
                    k % n.max(1),
                    capacity_bps.len()
                )));
            }
            path.extend_from_slice(route);
            path_start.push(path.len());
        }
        let resources = capacity_bps.len();
        Ok(PacedPlanner {
            n,
            path_start,
            path,
            capacity_bps,
            resource_bytes: vec![0; resources],
            crossing: 0,
            last: None,
        })
    }

    /// The number of ranks.
    pub fn ranks(&self) -> usize {
        self.n
    }

    /// Plan `bytes[i * n + j]` bytes from rank `i` to rank `j`: from the previous plan when
    /// there is one (only the messages that changed are walked), from nothing otherwise.
    pub fn plan(&mut self, bytes: &[u64]) -> CoreResult<PacedPlan> {
        if bytes.len() != self.n * self.n {
            return Err(CoreError::InvalidInput(format!(
                "{} byte counts for {} ranks (expected {})",
                bytes.len(),
                self.n,
                self.n * self.n
            )));
        }
        let (changed, warm) = match self.last.take() {
            Some(last) => (self.add_changes(&last, bytes), true),
            None => (self.add_all(bytes), false),
        };
        self.last = Some(bytes.to_vec());
        self.summary(changed, warm)
    }

    /// Forget the previous plan: the next one starts from nothing.
    pub fn forget(&mut self) {
        self.last = None;
    }

    fn crosses(&self, k: usize) -> bool {
        self.path_start[k] < self.path_start[k + 1]
    }

    fn add_all(&mut self, bytes: &[u64]) -> usize {
        self.resource_bytes.iter_mut().for_each(|b| *b = 0);
        self.crossing = 0;
        for (k, &b) in bytes.iter().enumerate() {
            if self.crosses(k) {
                self.crossing += b as u128;
            }
            for i in self.path_start[k]..self.path_start[k + 1] {
                self.resource_bytes[self.path[i] as usize] += b as u128;
            }
        }
        bytes.len()
    }

    fn add_changes(&mut self, last: &[u64], bytes: &[u64]) -> usize {
        let mut changed = 0;
        for (k, (&old, &new)) in last.iter().zip(bytes).enumerate() {
            if old == new {
                continue;
            }
            changed += 1;
            if self.crosses(k) {
                self.crossing = self.crossing - old as u128 + new as u128;
            }
            for i in self.path_start[k]..self.path_start[k + 1] {
                let r = self.path[i] as usize;
                // The resource held `old` of this message, so it never goes below zero.
                self.resource_bytes[r] = self.resource_bytes[r] - old as u128 + new as u128;
            }
        }
        changed
    }

    fn summary(&self, changed: usize, warm: bool) -> CoreResult<PacedPlan> {
        let mut bound_s = 0.0;
        let mut bottleneck = None;
        for (r, &b) in self.resource_bytes.iter().enumerate() {
            let load = b as f64 / self.capacity_bps[r];
            if b > 0 && load > bound_s {
                bound_s = load;
                bottleneck = Some(r as u32);
            }
        }
        let crossing_bytes = u64::try_from(self.crossing).map_err(|_| {
            CoreError::InvalidInput(format!(
                "the messages add up to {} bytes, more than 2^64 - 1",
                self.crossing
            ))
        })?;
        Ok(PacedPlan {
            bound_s,
            bottleneck,
            crossing_bytes,
            changed,
            warm,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Two ranks per switch, one cable each way between the switches (resources 4 and 5), host
    /// links 0..3 each way folded into one resource per host for brevity.
    fn two_by_two() -> PacedPlanner {
        let n = 4;
        let mut routes = vec![Vec::new(); n * n];
        for i in 0..n {
            for j in 0..n {
                if i / 2 != j / 2 {
                    routes[i * n + j] = vec![i as u32, if i < 2 { 4 } else { 5 }, j as u32];
                }
            }
        }
        PacedPlanner::new(n, &routes, vec![100.0, 100.0, 100.0, 100.0, 100.0, 100.0]).unwrap()
    }

    #[test]
    fn the_bound_is_the_busiest_resource_worked_by_hand() {
        let mut p = two_by_two();
        // Ranks 0 and 1 send 100 B each to both ranks of the other switch: 400 B on cable 4.
        let mut m = vec![0u64; 16];
        for (i, j) in [(0, 2), (0, 3), (1, 2), (1, 3)] {
            m[i * 4 + j] = 100;
        }
        m[1] = 7; // 0 -> 1 stays inside the switch
        let plan = p.plan(&m).unwrap();
        assert_eq!(plan.bound_s, 4.0);
        assert_eq!(plan.bottleneck, Some(4));
        assert_eq!(plan.crossing_bytes, 400);
        assert!(!plan.warm);
    }

    #[test]
    fn a_warm_plan_is_the_cold_plan_of_the_same_matrix() {
        let mut warm = two_by_two();
        let mut seed = 12345u64;
        let mut next = || {
            seed = seed
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            (seed >> 33) % 1000
        };
        let mut m: Vec<u64> = (0..16).map(|_| next()).collect();
        warm.plan(&m).unwrap();
        for _ in 0..50 {
            let k = (next() % 16) as usize;
            m[k] = next();
            let w = warm.plan(&m).unwrap();
            let c = two_by_two().plan(&m).unwrap();
            assert!(w.warm && w.changed <= 1);
            assert_eq!(
                (w.bound_s, w.bottleneck, w.crossing_bytes),
                (c.bound_s, c.bottleneck, c.crossing_bytes)
            );
        }
    }

    #[test]
    fn bad_routes_capacities_and_matrices_are_refused() {
        assert!(PacedPlanner::new(2, &[vec![], vec![0]], vec![1.0]).is_err());
        assert!(PacedPlanner::new(2, &[vec![], vec![3], vec![], vec![]], vec![1.0]).is_err());
        assert!(PacedPlanner::new(1, &[vec![]], vec![0.0]).is_err());
        let mut p = two_by_two();
        assert!(p.plan(&[1, 2, 3]).is_err());
        let mut huge = vec![0u64; 16];
        huge[2] = u64::MAX;
        huge[3] = u64::MAX;
        assert!(p.plan(&huge).is_err());
    }

    #[test]
    fn nothing_crossing_has_no_bottleneck() {
        let mut p = two_by_two();
        let plan = p.plan(&[0; 16]).unwrap();
        assert_eq!((plan.bound_s, plan.bottleneck), (0.0, None));
    }
}

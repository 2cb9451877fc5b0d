//! The reference fluid engine ([`Engine::Reference`](super::Engine::Reference)): progressive
//! filling from scratch over every active flow at every event. Quadratic in the flows, and the
//! oracle the incremental engine is tested against.

use super::filling::{progressive_filling, EPS};
use super::models::Grid;
use super::problem::{Policy, Prediction, Problem};
use super::starts::Starts;
use crate::error::CoreResult;
use crate::interrupt::{Interrupt, Pacer};

/// The fluid model as first written, kept as [`Engine::Reference`](super::Engine::Reference):
/// at every event, the max-min rates of all active flows by progressive filling from scratch,
/// and the remaining bytes of every active flow advanced. Simple enough to trust, and quadratic
/// in the flows.
pub(super) struct Reference<'a> {
    problem: &'a Problem,
    starts: Starts<'a>,
    remaining: Vec<f64>,
    rate: Vec<f64>,
    /// Time at which a started flow enters the sharing (after its latency), or +inf.
    sends_at: Vec<f64>,
    /// Flows sending data, per resource.
    on_resource: Vec<Vec<u32>>,
    active: Vec<u32>,
    /// Flows that have started but are still in their latency phase.
    waiting: Vec<u32>,
    rate_updates: u64,
}

impl<'a> Reference<'a> {
    pub(super) fn new(problem: &'a Problem, policy: Policy) -> Self {
        let n = problem.flows.len();
        Reference {
            problem,
            starts: Starts::new(problem, policy),
            remaining: problem.flows.iter().map(|f| f.size_bytes).collect(),
            rate: vec![0.0; n],
            sends_at: vec![f64::INFINITY; n],
            on_resource: vec![Vec::new(); problem.capacities.len()],
            active: Vec::new(),
            waiting: Vec::new(),
            rate_updates: 0,
        }
    }

    /// Flows the policy has begun wait their latency.
    fn take_begun(&mut self) {
        let mut begun = std::mem::take(&mut self.starts.begun);
        for &i in &begun {
            self.sends_at[i as usize] =
                self.starts.start[i as usize] + self.problem.flows[i as usize].latency_s;
            self.waiting.push(i);
        }
        begun.clear();
        self.starts.begun = begun;
    }

    fn complete(&mut self, i: u32, t: f64) {
        self.starts.complete(i, t);
        self.take_begun();
    }

    /// Flows whose latency has elapsed by `t` join the sharing.
    fn admit(&mut self, t: f64) -> bool {
        let mut changed = false;
        let mut k = 0;
        while k < self.waiting.len() {
            let i = self.waiting[k];
            if self.sends_at[i as usize] <= t * (1.0 + EPS) {
                self.waiting.swap_remove(k);
                changed = true;
                if self.remaining[i as usize] <= 0.0 {
                    self.complete(i, t);
                    continue;
                }
                self.active.push(i);
                for &r in &self.problem.flows[i as usize].path {
                    self.on_resource[r as usize].push(i);
                }
            } else {
                k += 1;
            }
        }
        changed
    }

    /// Max-min fair rates of the active flows, from scratch.
    fn fill_rates(&mut self) {
        self.rate_updates += 1;
        let flows = &self.problem.flows;
        progressive_filling(
            &self.problem.capacities,
            &self.on_resource,
            |i| &flows[i].path,
            &mut self.rate,
        );
    }

    pub(super) fn run(
        mut self,
        mut grid: Option<&mut Grid>,
        interrupt: &Interrupt,
    ) -> CoreResult<Prediction> {
        let n = self.problem.flows.len();
        let mut pacer = Pacer::default();
        let mut t = 0.0f64;
        self.starts.start_initial();
        self.take_begun();
        self.admit(t);
        let mut dirty = true;
        while self.starts.done < n {
            // An event goes through every active and waiting flow.
            pacer.check(1 + self.active.len() + self.waiting.len(), interrupt)?;
            if dirty {
                self.fill_rates();
                dirty = false;
            }
            // Next event: a flow finishing or a flow ending its latency.
            let mut next = f64::INFINITY;
            for &i in &self.active {
                let r = self.rate[i as usize];
                if r > 0.0 {
                    next = next.min(t + self.remaining[i as usize] / r);
                }
            }
            for &i in &self.waiting {
                next = next.min(self.sends_at[i as usize]);
            }
            if !next.is_finite() {
                break; // only reachable with a zero-capacity resource, which check() refuses
            }
            let dt = next - t;
            if let Some(g) = grid.as_deref_mut() {
                self.record(g, t, next);
            }
            for &i in &self.active {
                let i = i as usize;
                self.remaining[i] -= self.rate[i] * dt;
            }
            t = next;
            // Finish every flow that is done at t (within the tolerance).
            let mut k = 0;
            while k < self.active.len() {
                let i = self.active[k];
                let size = self.problem.flows[i as usize].size_bytes;
                let r = self.rate[i as usize];
                if self.remaining[i as usize] <= EPS * size.max(1.0)
                    || (r > 0.0 && self.remaining[i as usize] / r <= EPS * t.max(1e-300))
                {
                    self.active.swap_remove(k);
                    for &q in &self.problem.flows[i as usize].path {
                        let list = &mut self.on_resource[q as usize];
                        let pos = list
                            .iter()
                            .position(|&x| x == i)
                            .expect("active flow is listed on its path");
                        list.swap_remove(pos);
                    }
                    self.remaining[i as usize] = 0.0;
                    self.rate[i as usize] = 0.0;
                    self.complete(i, t);
                    dirty = true;
                } else {
                    k += 1;
                }
            }
            if self.admit(t) {
                dirty = true;
            }
        }
        Ok(self.starts.prediction(self.rate_updates))
    }

    fn record(&self, grid: &mut Grid, t0: f64, t1: f64) {
        let caps = &self.problem.capacities;
        for (r, flows) in self.on_resource.iter().enumerate() {
            if flows.is_empty() {
                continue;
            }
            let used: f64 = flows.iter().map(|&i| self.rate[i as usize]).sum();
            grid.add(r, t0, t1, used / caps[r]);
        }
    }
}

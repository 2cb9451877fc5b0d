//! The incremental fluid engine ([`Engine::Incremental`](crate::simulate::Engine::Incremental)):
//! the start policy and the latency phases around the [`Sharing`], with events from heaps of
//! finish times and latency ends.

use std::collections::BinaryHeap;

use super::Sharing;
use crate::error::CoreResult;
use crate::interrupt::{Interrupt, Pacer};
use crate::simulate::filling::{Due, Least, EPS};
use crate::simulate::models::Grid;
use crate::simulate::problem::{Policy, Prediction, Problem};
use crate::simulate::starts::Starts;

/// The fluid model driven by [`Sharing`]: events from heaps of finish times and latency ends
/// instead of scans over every flow.
pub(in crate::simulate) struct Incremental<'a> {
    problem: &'a Problem,
    starts: Starts<'a>,
    net: Sharing<'a>,
    /// Started flows in their latency phase: (time they enter the sharing, flow).
    waiting: BinaryHeap<Due>,
    /// Started flows that enter the sharing at once: most of them, and all at once when a whole
    /// exchange starts, where a heap would cost a logarithm per flow for nothing.
    due_now: Vec<u32>,
    rate_updates: u64,
}

impl<'a> Incremental<'a> {
    pub(in crate::simulate) fn new(problem: &'a Problem, policy: Policy) -> Self {
        Incremental {
            problem,
            starts: Starts::new(problem, policy),
            net: Sharing::new(problem),
            waiting: BinaryHeap::new(),
            due_now: Vec::new(),
            rate_updates: 0,
        }
    }

    /// Flows the policy has begun by `t` wait their latency.
    fn take_begun(&mut self, t: f64) {
        let mut begun = std::mem::take(&mut self.starts.begun);
        for &i in &begun {
            let at = self.starts.start[i as usize] + self.problem.flows[i as usize].latency_s;
            if at <= t * (1.0 + EPS) {
                self.due_now.push(i);
            } else {
                self.waiting.push(Least(at, i, 0));
            }
        }
        begun.clear();
        self.starts.begun = begun;
    }

    fn complete(&mut self, i: u32, t: f64) {
        self.starts.complete(i, t);
        self.take_begun(t);
    }

    /// Flows whose latency has elapsed by `t` join the sharing.
    fn admit(&mut self, t: f64) -> bool {
        let mut changed = false;
        loop {
            let i = if let Some(i) = self.due_now.pop() {
                i
            } else if let Some(&Least(at, i, _)) = self.waiting.peek() {
                if at > t * (1.0 + EPS) {
                    break;
                }
                self.waiting.pop();
                i
            } else {
                break;
            };
            changed = true;
            if self.problem.flows[i as usize].size_bytes <= 0.0 {
                self.complete(i, t);
                continue;
            }
            self.net.admit(i);
        }
        changed
    }

    pub(in crate::simulate) fn run(
        self,
        grid: Option<&mut Grid>,
        interrupt: &Interrupt,
    ) -> CoreResult<Prediction> {
        Ok(self.run_counting(grid, interrupt)?.0)
    }

    /// The prediction, and how many updates were sweeps and how many rebuilds.
    pub(super) fn run_counting(
        mut self,
        mut grid: Option<&mut Grid>,
        interrupt: &Interrupt,
    ) -> CoreResult<(Prediction, u64, u64)> {
        let mut pacer = Pacer::default();
        let n = self.problem.flows.len();
        let mut t = 0.0f64;
        self.starts.start_initial();
        self.take_begun(t);
        self.admit(t);
        let mut dirty = true;
        let mut finished = Vec::new();
        while self.starts.done < n {
            // An event costs what it changes, some tens of the inner steps a probe is paced by.
            pacer.check(EVENT_WORK, interrupt)?;
            if dirty {
                self.rate_updates += 1;
                self.net.update(t);
                dirty = false;
            }
            let next = self
                .net
                .next_finish()
                .min(self.waiting.peek().map_or(f64::INFINITY, |d| d.0));
            if !next.is_finite() {
                break; // only reachable with a zero-capacity resource, which check() refuses
            }
            if let Some(g) = grid.as_deref_mut() {
                self.net.record(g, t, next);
            }
            t = next;
            self.net.take_finished(t, &mut finished);
            for i in finished.drain(..) {
                self.complete(i, t);
                dirty = true;
            }
            if self.admit(t) {
                dirty = true;
            }
        }
        let (sweeps, rebuilds) = (self.net.sweeps, self.net.rebuilds);
        let mut prediction = self.starts.prediction(self.rate_updates);
        prediction.level_changes = self.net.level_changes;
        Ok((prediction, sweeps, rebuilds))
    }
}

/// Inner steps an event of the incremental engine is counted as, to pace the interrupt probe.
const EVENT_WORK: usize = 16;

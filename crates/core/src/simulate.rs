//! Event-driven prediction of what a schedule achieves, in three network models (DESIGN.md).
//!
//! - *frames*: synchronous timeframes, each as long as its longest piece plus an overhead β;
//! - *circuit* (wormhole / cut-through): a transfer holds a slot of every resource of its path
//!   for its whole duration and starts when each of them has a free slot, slots being granted in
//!   schedule order;
//! - *fluid*: max-min fair sharing of every resource among the flows crossing it, rates
//!   recomputed by progressive filling at every start and finish, with three start policies:
//!   all at once, frame by frame behind a barrier, per sender in schedule order, or gated per
//!   node by the schedule's steps: under a window (paper 002's global window: a node sends the
//!   flows of step `k` while fewer than `W` of the earlier steps are not yet wholly received by
//!   it) or one step at a time (each node waits for its own flows, sent and received, of
//!   a step before it starts the next: the pairwise exchange).
//!
//! A resource with capacity `c` and `k` slots carries `k` transfers at once, each at its slot
//! rate `c / k`; in the frames and circuit models a flow runs at the smallest slot rate of its
//! path. The fluid model shares capacities and ignores slots. A flow first spends its path
//! latency, then sends its bytes. Capacities, slots, latencies and sizes may all differ.

use std::cmp::Ordering;
use std::collections::BinaryHeap;

use crate::error::{CoreError, CoreResult};
use crate::slots::checked_slots;

/// One piece of a schedule to simulate.
#[derive(Debug, Clone)]
pub struct Flow {
    /// Resource indices of its path (each once).
    pub path: Vec<u32>,
    pub size_bytes: f64,
    /// Sum of the latencies along its path.
    pub latency_s: f64,
    /// Index of its sending host (for the per-sender policy).
    pub sender: u32,
}

/// When fluid flows start.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Policy {
    /// Every flow at time 0.
    AllAtOnce,
    /// A frame starts when every flow of the previous one has finished, plus the overhead.
    Frames,
    /// Each sender sends its flows one after the other, in schedule order.
    PerSender,
    /// Node `x` starts its flows of step `k` (schedule order) while fewer than `W` of the steps
    /// before `k` in which it receives have flows to it unfinished: at most `W` steps (packets,
    /// when a node sends one per step) sent and not yet received, paper 002's global window.
    Window(u32),
    /// A flow of step `k` starts once every flow its sender or its receiver sends or receives
    /// in an earlier step has finished: each node one round at a time, a send meeting its
    /// receive, without a global barrier.
    Steps,
}

/// The network model.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Model {
    Frames,
    Circuit,
    Fluid(Policy),
}

/// A schedule to simulate: resource capacities, flows, and frames of flow indices (their
/// concatenation is the schedule order).
#[derive(Debug, Clone)]
pub struct Problem {
    pub capacities: Vec<f64>,
    /// Slots of each resource (frames and circuit models); empty means one each.
    pub slots: Vec<u32>,
    pub flows: Vec<Flow>,
    pub frames: Vec<Vec<u32>>,
    /// Overhead β added to every frame (frames model and frames policy).
    pub overhead_s: f64,
    /// Receiving node of each flow, numbered like the senders (window and steps policies).
    pub receivers: Vec<u32>,
    /// Step of each frame, non-decreasing (window and steps policies); empty: the frame's index.
    pub frame_steps: Vec<u32>,
}

/// What a simulation predicts.
#[derive(Debug, Clone)]
pub struct Prediction {
    pub makespan_s: f64,
    pub start_s: Vec<f64>,
    pub finish_s: Vec<f64>,
    /// `resources × bins` busy fractions over `[0, makespan]`, row-major; empty when no bins
    /// were asked for.
    pub utilisation: Vec<f64>,
    pub bins: usize,
    /// Rate computations done (fluid model).
    pub rate_updates: u64,
}

fn check(problem: &Problem) -> CoreResult<()> {
    let resources = problem.capacities.len();
    checked_slots(&problem.slots, resources)?;
    for (r, &c) in problem.capacities.iter().enumerate() {
        if !(c.is_finite() && c > 0.0) {
            return Err(CoreError::InvalidInput(format!(
                "resource {r} has capacity {c}; expected a positive number"
            )));
        }
    }
    for (i, f) in problem.flows.iter().enumerate() {
        if !(f.size_bytes.is_finite() && f.size_bytes >= 0.0) {
            return Err(CoreError::InvalidInput(format!(
                "flow {i} has size {}",
                f.size_bytes
            )));
        }
        if !(f.latency_s.is_finite() && f.latency_s >= 0.0) {
            return Err(CoreError::InvalidInput(format!(
                "flow {i} has latency {}",
                f.latency_s
            )));
        }
        if f.path.is_empty() {
            return Err(CoreError::InvalidInput(format!(
                "flow {i} has an empty path"
            )));
        }
        if let Some(&r) = f.path.iter().find(|&&r| r as usize >= resources) {
            return Err(CoreError::InvalidInput(format!(
                "flow {i} uses resource {r} but there are {resources}"
            )));
        }
    }
    let mut seen = vec![false; problem.flows.len()];
    for (k, frame) in problem.frames.iter().enumerate() {
        for &i in frame {
            let slot = seen.get_mut(i as usize).ok_or_else(|| {
                CoreError::InvalidInput(format!(
                    "frame {k} names flow {i} of {}",
                    problem.flows.len()
                ))
            })?;
            if std::mem::replace(slot, true) {
                return Err(CoreError::InvalidInput(format!(
                    "flow {i} appears twice in the frames"
                )));
            }
        }
    }
    if let Some(i) = seen.iter().position(|&s| !s) {
        return Err(CoreError::InvalidInput(format!("flow {i} is in no frame")));
    }
    if !problem.receivers.is_empty() && problem.receivers.len() != problem.flows.len() {
        return Err(CoreError::InvalidInput(format!(
            "{} receivers for {} flows",
            problem.receivers.len(),
            problem.flows.len()
        )));
    }
    if !problem.frame_steps.is_empty() {
        if problem.frame_steps.len() != problem.frames.len() {
            return Err(CoreError::InvalidInput(format!(
                "{} frame steps for {} frames",
                problem.frame_steps.len(),
                problem.frames.len()
            )));
        }
        if let Some(k) = problem.frame_steps.windows(2).position(|w| w[1] < w[0]) {
            return Err(CoreError::InvalidInput(format!(
                "frame {} is in step {}, before the step {} of the frame before it",
                k + 1,
                problem.frame_steps[k + 1],
                problem.frame_steps[k]
            )));
        }
    }
    if !(problem.overhead_s.is_finite() && problem.overhead_s >= 0.0) {
        return Err(CoreError::InvalidInput(format!(
            "overhead {} must be a non-negative number",
            problem.overhead_s
        )));
    }
    Ok(())
}

/// Predict the schedule's timing in `model`, with `bins` utilisation bins (0 for none).
pub fn simulate(problem: &Problem, model: Model, bins: usize) -> CoreResult<Prediction> {
    check(problem)?;
    if let Model::Fluid(Policy::Window(_) | Policy::Steps) = model {
        if problem.receivers.len() != problem.flows.len() {
            return Err(CoreError::InvalidInput(
                "the window and steps policies need the receiver of every flow".into(),
            ));
        }
    }
    if model == Model::Fluid(Policy::Window(0)) {
        return Err(CoreError::InvalidInput(
            "a window must let at least one step through (W >= 1)".into(),
        ));
    }
    let mut prediction = match model {
        Model::Frames => frames_model(problem),
        Model::Circuit => circuit_model(problem),
        Model::Fluid(policy) => Fluid::new(problem, policy).run(None),
    };
    if bins > 0 {
        prediction.bins = bins;
        prediction.utilisation = match model {
            Model::Fluid(policy) => {
                let mut grid = Grid::new(problem.capacities.len(), bins, prediction.makespan_s);
                Fluid::new(problem, policy).run(Some(&mut grid));
                grid.values
            }
            _ => constant_rate_utilisation(problem, &prediction, bins),
        };
    }
    Ok(prediction)
}

fn slots_of(problem: &Problem, r: u32) -> u32 {
    problem.slots.get(r as usize).copied().unwrap_or(1)
}

/// The smallest slot rate (capacity / slots) on a flow's path: its rate in a slot.
fn slot_rate(problem: &Problem, f: &Flow) -> f64 {
    f.path
        .iter()
        .map(|&r| problem.capacities[r as usize] / slots_of(problem, r) as f64)
        .fold(f64::INFINITY, f64::min)
}

/// Time a flow needs in its slot: its latency, then its bytes at its slot rate.
fn slot_time_s(problem: &Problem, f: &Flow) -> f64 {
    f.latency_s + f.size_bytes / slot_rate(problem, f)
}

fn frames_model(problem: &Problem) -> Prediction {
    let n = problem.flows.len();
    let (mut start, mut finish) = (vec![0.0; n], vec![0.0; n]);
    let mut t = 0.0;
    for frame in &problem.frames {
        let mut longest: f64 = 0.0;
        for &i in frame {
            let d = slot_time_s(problem, &problem.flows[i as usize]);
            start[i as usize] = t;
            finish[i as usize] = t + d;
            longest = longest.max(d);
        }
        t += longest + problem.overhead_s;
    }
    Prediction {
        makespan_s: t,
        start_s: start,
        finish_s: finish,
        utilisation: Vec::new(),
        bins: 0,
        rate_updates: 0,
    }
}

fn circuit_model(problem: &Problem) -> Prediction {
    let n = problem.flows.len();
    let (mut start, mut finish) = (vec![0.0; n], vec![0.0; n]);
    // free[r]: when each slot of resource r is next free.
    let mut free: Vec<Vec<f64>> = (0..problem.capacities.len() as u32)
        .map(|r| vec![0.0; slots_of(problem, r) as usize])
        .collect();
    let earliest = |slots: &[f64]| -> usize {
        (0..slots.len())
            .min_by(|&a, &b| slots[a].total_cmp(&slots[b]))
            .expect("a resource has a slot")
    };
    let mut makespan: f64 = 0.0;
    for &i in problem.frames.iter().flatten() {
        let f = &problem.flows[i as usize];
        let s = f
            .path
            .iter()
            .map(|&r| {
                let slots = &free[r as usize];
                slots[earliest(slots)]
            })
            .fold(0.0, f64::max);
        let e = s + slot_time_s(problem, f);
        for &r in &f.path {
            let slots = &mut free[r as usize];
            let k = earliest(slots);
            slots[k] = e;
        }
        start[i as usize] = s;
        finish[i as usize] = e;
        makespan = makespan.max(e);
    }
    Prediction {
        makespan_s: makespan,
        start_s: start,
        finish_s: finish,
        utilisation: Vec::new(),
        bins: 0,
        rate_updates: 0,
    }
}

/// Busy fractions on a regular time grid.
struct Grid {
    values: Vec<f64>,
    bins: usize,
    width: f64,
}

impl Grid {
    fn new(resources: usize, bins: usize, makespan: f64) -> Self {
        let width = if makespan > 0.0 {
            makespan / bins as f64
        } else {
            1.0
        };
        Grid {
            values: vec![0.0; resources * bins],
            bins,
            width,
        }
    }

    /// Resource `r` busy at `fraction` of its capacity during `[t0, t1)`.
    fn add(&mut self, r: usize, t0: f64, t1: f64, fraction: f64) {
        if t1 <= t0 || fraction == 0.0 {
            return;
        }
        let first = ((t0 / self.width) as usize).min(self.bins - 1);
        let last = ((t1 / self.width) as usize).min(self.bins - 1);
        for b in first..=last {
            let lo = t0.max(b as f64 * self.width);
            let hi = t1.min((b + 1) as f64 * self.width);
            if hi > lo {
                self.values[r * self.bins + b] += fraction * (hi - lo) / self.width;
            }
        }
    }
}

fn constant_rate_utilisation(problem: &Problem, p: &Prediction, bins: usize) -> Vec<f64> {
    let mut grid = Grid::new(problem.capacities.len(), bins, p.makespan_s);
    for (i, f) in problem.flows.iter().enumerate() {
        let rate = slot_rate(problem, f);
        let data_start = p.start_s[i] + f.latency_s;
        for &r in &f.path {
            grid.add(
                r as usize,
                data_start,
                p.finish_s[i],
                rate / problem.capacities[r as usize],
            );
        }
    }
    grid.values
}

/// A resource's fair share in the filling heap, smallest first.
#[derive(PartialEq)]
struct Share(f64, u32, u64);

impl Eq for Share {}

impl PartialOrd for Share {
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}

impl Ord for Share {
    fn cmp(&self, other: &Self) -> Ordering {
        other
            .0
            .total_cmp(&self.0)
            .then_with(|| other.1.cmp(&self.1))
    }
}

/// Relative tolerance under which a flow counts as finished and two event times as equal.
const EPS: f64 = 1e-12;

/// The fluid (max-min) model.
struct Fluid<'a> {
    problem: &'a Problem,
    policy: Policy,
    remaining: Vec<f64>,
    rate: Vec<f64>,
    /// Time at which a started flow enters the sharing (after its latency), or +inf.
    sends_at: Vec<f64>,
    /// Flows sending data, per resource.
    on_resource: Vec<Vec<u32>>,
    active: Vec<u32>,
    start: Vec<f64>,
    finish: Vec<f64>,
    done: usize,
    /// Position of each flow in its frame, per-sender queues, and frame progress.
    frame_of: Vec<u32>,
    left_in_frame: Vec<usize>,
    queues: Vec<Vec<u32>>,
    queue_pos: Vec<usize>,
    /// Flows that have started but are still in their latency phase.
    waiting: Vec<u32>,
    rate_updates: u64,
    gates: Option<Gates>,
}

/// The per-node step counters of the window and steps policies.
struct Gates {
    /// Step of each flow.
    step: Vec<u32>,
    /// Per node, in step order: (step, unfinished flows of that step the node waits for): the
    /// flows it receives (window), or those it sends or receives (steps).
    pending: Vec<Vec<(u32, u32)>>,
    /// Per node, the first entry of `pending` with unfinished flows.
    head: Vec<usize>,
    /// Per flow, its entries: (node, index in that node's `pending`), one or two.
    entries: Vec<Vec<(u32, u32)>>,
    /// Window in steps; None for the steps policy.
    window: Option<u32>,
    /// Steps policy: flows their sender has posted, waiting for their receiver to reach their step.
    parked: Vec<Vec<u32>>,
    /// Window policy: per node, which entries of `pending` are unfinished.
    unfinished: Vec<Fenwick>,
}

/// Counts over positions, with prefix sums in O(log n).
struct Fenwick(Vec<i32>);

impl Fenwick {
    fn ones(n: usize) -> Self {
        let mut tree = vec![0i32; n + 1];
        for i in 1..=n {
            tree[i] += 1;
            let up = i + (i & i.wrapping_neg());
            if up <= n {
                tree[up] += tree[i];
            }
        }
        Fenwick(tree)
    }

    fn add(&mut self, at: usize, delta: i32) {
        let mut i = at + 1;
        while i < self.0.len() {
            self.0[i] += delta;
            i += i & i.wrapping_neg();
        }
    }

    /// The sum over positions below `end`.
    fn prefix(&self, end: usize) -> i32 {
        let (mut i, mut sum) = (end, 0);
        while i > 0 {
            sum += self.0[i];
            i -= i & i.wrapping_neg();
        }
        sum
    }
}

impl Gates {
    fn new(problem: &Problem, nodes: usize, window: Option<u32>) -> Self {
        let n = problem.flows.len();
        let mut step = vec![0u32; n];
        for (k, frame) in problem.frames.iter().enumerate() {
            let s = problem.frame_steps.get(k).copied().unwrap_or(k as u32);
            for &i in frame {
                step[i as usize] = s;
            }
        }
        let mut pending: Vec<Vec<(u32, u32)>> = vec![Vec::new(); nodes];
        let mut entries = vec![Vec::new(); n];
        for &i in problem.frames.iter().flatten() {
            let f = &problem.flows[i as usize];
            let receiver = problem.receivers[i as usize];
            let mut tracked = vec![receiver];
            if window.is_none() && f.sender != receiver {
                tracked.push(f.sender);
            }
            for x in tracked {
                let list = &mut pending[x as usize];
                match list.last_mut() {
                    Some((s, count)) if *s == step[i as usize] => *count += 1,
                    _ => list.push((step[i as usize], 1)),
                }
                entries[i as usize].push((x, list.len() as u32 - 1));
            }
        }
        let unfinished = match window {
            Some(_) => pending.iter().map(|list| Fenwick::ones(list.len())).collect(),
            None => Vec::new(),
        };
        Gates {
            step,
            pending,
            head: vec![0; nodes],
            entries,
            window,
            parked: vec![Vec::new(); nodes],
            unfinished,
        }
    }

    /// The first step in which node `x` still waits for a flow (u32::MAX when none).
    fn front(&self, x: usize) -> u32 {
        self.pending[x]
            .get(self.head[x])
            .map_or(u32::MAX, |&(s, _)| s)
    }

    /// Whether node `x` may send (window) or post (steps) flow `i` now.
    fn open(&self, x: usize, i: u32) -> bool {
        let s = self.step[i as usize];
        match self.window {
            Some(w) => {
                let before = self.pending[x].partition_point(|&(t, _)| t < s);
                (self.unfinished[x].prefix(before) as u32) < w
            }
            None => s <= self.front(x),
        }
    }

    /// Count flow `i` finished; the nodes whose front moved.
    fn finish(&mut self, i: u32) -> Vec<usize> {
        let mut moved = Vec::new();
        for &(x, e) in &self.entries[i as usize] {
            let (x, e) = (x as usize, e as usize);
            self.pending[x][e].1 -= 1;
            if self.pending[x][e].1 == 0 && self.window.is_some() {
                self.unfinished[x].add(e, -1);
                moved.push(x);
            } else if e == self.head[x] && self.pending[x][e].1 == 0 {
                while self.head[x] < self.pending[x].len() && self.pending[x][self.head[x]].1 == 0 {
                    self.head[x] += 1;
                }
                moved.push(x);
            }
        }
        moved
    }
}

impl<'a> Fluid<'a> {
    fn new(problem: &'a Problem, policy: Policy) -> Self {
        let n = problem.flows.len();
        let mut frame_of = vec![0u32; n];
        for (k, frame) in problem.frames.iter().enumerate() {
            for &i in frame {
                frame_of[i as usize] = k as u32;
            }
        }
        let senders = problem
            .flows
            .iter()
            .map(|f| f.sender)
            .chain(problem.receivers.iter().copied())
            .map(|x| x as usize + 1)
            .max()
            .unwrap_or(0);
        let gates = match policy {
            Policy::Window(w) => Some(Gates::new(problem, senders, Some(w))),
            Policy::Steps => Some(Gates::new(problem, senders, None)),
            _ => None,
        };
        let mut queues = vec![Vec::new(); senders];
        for &i in problem.frames.iter().flatten() {
            queues[problem.flows[i as usize].sender as usize].push(i);
        }
        Fluid {
            problem,
            policy,
            remaining: problem.flows.iter().map(|f| f.size_bytes).collect(),
            rate: vec![0.0; n],
            sends_at: vec![f64::INFINITY; n],
            on_resource: vec![Vec::new(); problem.capacities.len()],
            active: Vec::new(),
            start: vec![f64::NAN; n],
            finish: vec![f64::NAN; n],
            done: 0,
            frame_of,
            left_in_frame: problem.frames.iter().map(|f| f.len()).collect(),
            queues,
            queue_pos: vec![0; senders],
            waiting: Vec::new(),
            rate_updates: 0,
            gates,
        }
    }

    fn begin(&mut self, i: u32, t: f64) {
        self.start[i as usize] = t;
        self.sends_at[i as usize] = t + self.problem.flows[i as usize].latency_s;
        self.waiting.push(i);
    }

    /// Start the flows the policy allows at time 0.
    fn start_initial(&mut self) {
        match self.policy {
            Policy::AllAtOnce => {
                for i in 0..self.problem.flows.len() as u32 {
                    self.begin(i, 0.0);
                }
            }
            Policy::Frames => self.start_frame(0, 0.0),
            Policy::PerSender => {
                for s in 0..self.queues.len() {
                    self.start_next_of_sender(s, 0.0);
                }
            }
            Policy::Window(_) | Policy::Steps => {
                for x in 0..self.queues.len() {
                    self.start_open_of_node(x, 0.0);
                }
            }
        }
    }

    /// Start (or, under the steps policy, post) every next flow of node `x` that its gate lets
    /// through.
    fn start_open_of_node(&mut self, x: usize, t: f64) {
        while let Some(&i) = self.queues[x].get(self.queue_pos[x]) {
            let Some(gates) = self.gates.as_mut() else {
                return;
            };
            if !gates.open(x, i) {
                break;
            }
            self.queue_pos[x] += 1;
            let receiver = self.problem.receivers[i as usize] as usize;
            if gates.window.is_none() && !gates.open(receiver, i) {
                gates.parked[receiver].push(i);
            } else {
                self.begin(i, t);
            }
        }
    }

    /// Node `x`'s front moved: start what it may send, and the flows parked for it.
    fn gate_moved(&mut self, x: usize, t: f64) {
        self.start_open_of_node(x, t);
        let Some(gates) = self.gates.as_mut() else {
            return;
        };
        let parked = std::mem::take(&mut gates.parked[x]);
        let (ready, wait): (Vec<u32>, Vec<u32>) =
            parked.into_iter().partition(|&i| gates.open(x, i));
        gates.parked[x] = wait;
        for i in ready {
            self.begin(i, t);
        }
    }

    fn start_frame(&mut self, k: usize, t: f64) {
        // Empty frames pass at once (with their overhead).
        let mut k = k;
        let mut t = t;
        while k < self.problem.frames.len() && self.problem.frames[k].is_empty() {
            k += 1;
            t += self.problem.overhead_s;
        }
        if k < self.problem.frames.len() {
            for idx in 0..self.problem.frames[k].len() {
                let i = self.problem.frames[k][idx];
                self.begin(i, t);
            }
        }
    }

    fn start_next_of_sender(&mut self, s: usize, t: f64) {
        if let Some(&i) = self.queues[s].get(self.queue_pos[s]) {
            self.queue_pos[s] += 1;
            self.begin(i, t);
        }
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

    fn complete(&mut self, i: u32, t: f64) {
        self.finish[i as usize] = t;
        self.done += 1;
        match self.policy {
            Policy::AllAtOnce => {}
            Policy::Frames => {
                let k = self.frame_of[i as usize] as usize;
                self.left_in_frame[k] -= 1;
                if self.left_in_frame[k] == 0 {
                    self.start_frame(k + 1, t + self.problem.overhead_s);
                }
            }
            Policy::PerSender => {
                let s = self.problem.flows[i as usize].sender as usize;
                self.start_next_of_sender(s, t);
            }
            Policy::Window(_) | Policy::Steps => {
                let moved = self.gates.as_mut().map(|g| g.finish(i)).unwrap_or_default();
                for x in moved {
                    self.gate_moved(x, t);
                }
            }
        }
    }

    /// Max-min fair rates of the active flows by progressive filling: repeatedly the resource
    /// with the smallest fair share (remaining capacity over unfrozen flows) fixes the rate of
    /// its unfrozen flows.
    fn fill_rates(&mut self) {
        self.rate_updates += 1;
        let caps = &self.problem.capacities;
        let mut left = caps.clone();
        let mut count: Vec<u32> = self.on_resource.iter().map(|v| v.len() as u32).collect();
        let mut version = vec![0u64; caps.len()];
        let mut frozen = vec![false; self.problem.flows.len()];
        let mut heap = BinaryHeap::new();
        for (r, &c) in count.iter().enumerate() {
            if c > 0 {
                heap.push(Share(left[r] / c as f64, r as u32, 0));
            }
        }
        while let Some(Share(share, r, v)) = heap.pop() {
            let r = r as usize;
            if v != version[r] || count[r] == 0 {
                continue;
            }
            for idx in 0..self.on_resource[r].len() {
                let i = self.on_resource[r][idx] as usize;
                if frozen[i] {
                    continue;
                }
                frozen[i] = true;
                self.rate[i] = share;
                for &q in &self.problem.flows[i].path {
                    let q = q as usize;
                    left[q] = (left[q] - share).max(0.0);
                    count[q] -= 1;
                    version[q] += 1;
                    if count[q] > 0 && q != r {
                        heap.push(Share(left[q] / count[q] as f64, q as u32, version[q]));
                    }
                }
            }
        }
    }

    fn run(mut self, mut grid: Option<&mut Grid>) -> Prediction {
        let n = self.problem.flows.len();
        let mut t = 0.0f64;
        self.start_initial();
        self.admit(t);
        let mut dirty = true;
        while self.done < n {
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
        Prediction {
            makespan_s: self.finish.iter().copied().fold(0.0, f64::max),
            start_s: self.start,
            finish_s: self.finish,
            utilisation: Vec::new(),
            bins: 0,
            rate_updates: self.rate_updates,
        }
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testing::two_switch_paths;

    fn flows(paths: &[Vec<u32>], size: f64) -> Vec<Flow> {
        paths
            .iter()
            .enumerate()
            .map(|(i, p)| Flow {
                path: p.clone(),
                size_bytes: size,
                latency_s: 0.0,
                sender: i as u32,
            })
            .collect()
    }

    fn close(a: f64, b: f64) -> bool {
        (a - b).abs() <= 1e-9 * a.abs().max(b.abs()).max(1.0)
    }

    /// Paper 004 Fig. 2 with k = 2: two unit flows and one of size 2 share a backbone of
    /// capacity 2 (each host link has capacity 1).
    fn backbone() -> Problem {
        // resources: 0 = backbone (2), 1-3 = sender links, 4-6 = receiver links (1 each)
        let paths = [vec![0, 1, 4], vec![0, 2, 5], vec![0, 3, 6]];
        let mut fl = flows(&paths, 1.0);
        fl[2].size_bytes = 2.0;
        Problem {
            capacities: vec![2.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0],
            slots: Vec::new(),
            flows: fl,
            frames: vec![vec![0, 2], vec![1]],
            overhead_s: 0.0,
            receivers: Vec::new(),
            frame_steps: Vec::new(),
        }
    }

    #[test]
    fn fig2_brute_force_takes_two_and_a_half() {
        let p = simulate(&backbone(), Model::Fluid(Policy::AllAtOnce), 0).unwrap();
        // Three flows at 2/3 until the unit flows finish at 1.5, then the big one at 1: 2.5.
        assert!(close(p.makespan_s, 2.5), "{}", p.makespan_s);
        assert!(close(p.finish_s[0], 1.5) && close(p.finish_s[1], 1.5));
    }

    #[test]
    fn fig2_scheduled_takes_two() {
        // The schedule splits the big transfer in two unit pieces (same sender), each beside
        // one unit flow: two frames of time 1.
        let mut problem = backbone();
        problem.flows[2].size_bytes = 1.0;
        let second_half = Flow {
            path: vec![0, 3, 6],
            size_bytes: 1.0,
            latency_s: 0.0,
            sender: 2,
        };
        problem.flows.push(second_half);
        problem.frames = vec![vec![0, 2], vec![1, 3]];
        let p = simulate(&problem, Model::Fluid(Policy::Frames), 0).unwrap();
        assert!(close(p.makespan_s, 2.0), "{}", p.makespan_s);
        assert!(close(
            simulate(&problem, Model::Frames, 0).unwrap().makespan_s,
            2.0
        ));
    }

    #[test]
    fn two_switch_round_robin_and_liquid_in_frame_times() {
        let paths = two_switch_paths();
        let fl = flows(&paths, 1.0);
        let caps = vec![1.0; 12];
        let index = |i: u32, j: u32| i * 5 + j;
        // Round robin: step s sends i -> (i + s) mod 5; steps 3 and 4 congest.
        let mut rr = Vec::new();
        for s in 0..5 {
            rr.push((0..5).map(|i| index(i, (i + s) % 5)).collect::<Vec<u32>>());
        }
        let problem = Problem {
            capacities: caps.clone(),
            slots: Vec::new(),
            flows: fl.clone(),
            frames: rr,
            overhead_s: 0.0,
            receivers: Vec::new(),
            frame_steps: Vec::new(),
        };
        let circuit = simulate(&problem, Model::Circuit, 0).unwrap();
        assert!(close(circuit.makespan_s, 7.0), "{}", circuit.makespan_s);
        let liquid = crate::liquid::liquid_schedule(&paths, 12, &[], &Default::default()).unwrap();
        let problem = Problem {
            capacities: caps,
            slots: Vec::new(),
            flows: fl,
            frames: liquid.frames,
            overhead_s: 0.0,
            receivers: Vec::new(),
            frame_steps: Vec::new(),
        };
        for model in [Model::Circuit, Model::Frames] {
            assert!(close(simulate(&problem, model, 0).unwrap().makespan_s, 6.0));
        }
    }

    #[test]
    fn per_sender_policy_sends_in_order() {
        // One sender, two flows on a link of capacity 1: back to back.
        let mut fl = flows(&[vec![0], vec![0]], 1.0);
        fl[1].sender = 0;
        let problem = Problem {
            capacities: vec![1.0],
            slots: Vec::new(),
            flows: fl,
            frames: vec![vec![1], vec![0]],
            overhead_s: 0.0,
            receivers: Vec::new(),
            frame_steps: Vec::new(),
        };
        let p = simulate(&problem, Model::Fluid(Policy::PerSender), 0).unwrap();
        assert!(close(p.start_s[0], 1.0) && close(p.finish_s[0], 2.0) && close(p.finish_s[1], 1.0));
    }

    /// Two nodes send each other four unit packets, one per step, each direction on its own
    /// link of capacity 1 with a latency of 1: a window of W steps sends W packets together.
    fn exchange_with_latency() -> Problem {
        let mut fl = Vec::new();
        let mut receivers = Vec::new();
        for _ in 0..4 {
            for (x, y) in [(0u32, 1u32), (1, 0)] {
                fl.push(Flow {
                    path: vec![x],
                    size_bytes: 1.0,
                    latency_s: 1.0,
                    sender: x,
                });
                receivers.push(y);
            }
        }
        Problem {
            capacities: vec![1.0, 1.0],
            slots: Vec::new(),
            flows: fl,
            frames: (0..4).map(|k| vec![2 * k, 2 * k + 1]).collect(),
            overhead_s: 0.0,
            receivers,
            frame_steps: Vec::new(),
        }
    }

    #[test]
    fn a_window_of_w_steps_keeps_w_packets_in_flight() {
        // W = 1: each packet waits for the one received before it: 4 × (1 + 1) = 8.
        // W = 2: two packets share the link after their latency: 2 × (1 + 2) = 6.
        // W = 4: all four: 1 + 4 = 5, as all at once.
        let problem = exchange_with_latency();
        for (w, expected) in [(1, 8.0), (2, 6.0), (3, 6.0), (4, 5.0), (100, 5.0)] {
            let p = simulate(&problem, Model::Fluid(Policy::Window(w)), 0).unwrap();
            assert!(close(p.makespan_s, expected), "W = {w}: {}", p.makespan_s);
        }
        let all = simulate(&problem, Model::Fluid(Policy::AllAtOnce), 0).unwrap();
        assert!(close(all.makespan_s, 5.0));
    }

    #[test]
    fn a_late_step_takes_one_place_of_the_window_not_all() {
        // Node 0 receives a slow flow in step 0 (10 s) and two quick ones in steps 1 and 2
        // (done at 1 s); it sends in steps 3 and 4. With W = 2 only step 0 is outstanding at
        // 1 s, so both sends start then, not when the slow flow ends.
        let flow = |path: u32, size: f64, sender: u32| Flow {
            path: vec![path],
            size_bytes: size,
            latency_s: 0.0,
            sender,
        };
        let problem = Problem {
            capacities: vec![1.0; 5],
            slots: Vec::new(),
            flows: vec![
                flow(0, 10.0, 1),
                flow(1, 1.0, 2),
                flow(2, 1.0, 2),
                flow(3, 1.0, 0),
                flow(4, 1.0, 0),
            ],
            frames: (0..5).map(|i| vec![i]).collect(),
            overhead_s: 0.0,
            receivers: vec![0, 0, 0, 2, 2],
            frame_steps: Vec::new(),
        };
        let p = simulate(&problem, Model::Fluid(Policy::Window(2)), 0).unwrap();
        assert_eq!(p.start_s, vec![0.0, 0.0, 0.0, 1.0, 1.0]);
        assert!(close(p.makespan_s, 10.0));
        // W = 1: step 0 alone fills the window until it ends.
        let p = simulate(&problem, Model::Fluid(Policy::Window(1)), 0).unwrap();
        assert_eq!(p.start_s[3], 10.0);
    }

    #[test]
    fn frame_steps_group_frames_into_one_step() {
        // The same exchange with frames 0-1 and 2-3 declared as steps 0 and 1: W = 1 sends two
        // packets at a time.
        let mut problem = exchange_with_latency();
        problem.frame_steps = vec![0, 0, 1, 1];
        let p = simulate(&problem, Model::Fluid(Policy::Window(1)), 0).unwrap();
        assert!(close(p.makespan_s, 6.0), "{}", p.makespan_s);
        problem.frame_steps = vec![0, 1, 1, 0];
        assert!(matches!(
            simulate(&problem, Model::Fluid(Policy::Window(1)), 0),
            Err(CoreError::InvalidInput(_))
        ));
    }

    #[test]
    fn steps_policy_waits_for_the_receivers_round() {
        // a: 0 -> 1 (4 bytes, step 0); b: 2 -> 3 (1 byte, step 0); c: 2 -> 0 (1 byte, step 1),
        // each on its own link of capacity 1. c's sender is ready at 1, its receiver at 4.
        let problem = Problem {
            capacities: vec![1.0, 1.0, 1.0],
            slots: Vec::new(),
            flows: vec![
                Flow {
                    path: vec![0],
                    size_bytes: 4.0,
                    latency_s: 0.0,
                    sender: 0,
                },
                Flow {
                    path: vec![1],
                    size_bytes: 1.0,
                    latency_s: 0.0,
                    sender: 2,
                },
                Flow {
                    path: vec![2],
                    size_bytes: 1.0,
                    latency_s: 0.0,
                    sender: 2,
                },
            ],
            frames: vec![vec![0, 1], vec![2]],
            overhead_s: 0.0,
            receivers: vec![1, 3, 0],
            frame_steps: Vec::new(),
        };
        let p = simulate(&problem, Model::Fluid(Policy::Steps), 0).unwrap();
        assert_eq!(p.start_s, vec![0.0, 0.0, 4.0]);
        assert!(close(p.makespan_s, 5.0));
        // Without receivers the gated policies are refused.
        let mut bare = problem.clone();
        bare.receivers.clear();
        assert!(simulate(&bare, Model::Fluid(Policy::Steps), 0).is_err());
        assert!(simulate(&problem, Model::Fluid(Policy::Window(0)), 0).is_err());
    }

    #[test]
    fn gated_policies_finish_every_flow_of_uneven_traffics() {
        // Random senders, receivers, sizes and steps (some nodes only send, some only
        // receive): no window, however small, and no order leaves a flow unstarted.
        let mut rng = crate::testing::Rng(0x9e37_79b9_7f4a_7c15);
        for case in 0..300 {
            let nodes = 2 + rng.below(6) as u32;
            let n = 1 + rng.below(25) as usize;
            let mut flows = Vec::new();
            let mut receivers = Vec::new();
            for _ in 0..n {
                let x = rng.below(nodes as u64) as u32;
                let y = rng.below(nodes as u64) as u32;
                flows.push(Flow {
                    path: vec![x, nodes + y],
                    size_bytes: 1.0 + rng.below(5) as f64,
                    latency_s: 0.1 * rng.below(3) as f64,
                    sender: x,
                });
                receivers.push(y);
            }
            let frames: Vec<Vec<u32>> = (0..n as u32).map(|i| vec![i]).collect();
            let mut steps: Vec<u32> = (0..n).map(|_| rng.below(6) as u32).collect();
            steps.sort_unstable();
            let problem = Problem {
                capacities: vec![1.0; 2 * nodes as usize],
                slots: Vec::new(),
                flows,
                frames,
                overhead_s: 0.0,
                receivers,
                frame_steps: steps,
            };
            for policy in [Policy::Window(1), Policy::Window(2), Policy::Steps] {
                let p = simulate(&problem, Model::Fluid(policy), 0).unwrap();
                assert!(
                    p.finish_s.iter().all(|f| f.is_finite()),
                    "case {case}, {policy:?}: a flow never finished"
                );
            }
        }
    }

    #[test]
    fn latency_delays_the_data() {
        let mut fl = flows(&[vec![0]], 10.0);
        fl[0].latency_s = 0.5;
        let problem = Problem {
            capacities: vec![5.0],
            slots: Vec::new(),
            flows: fl,
            frames: vec![vec![0]],
            overhead_s: 0.25,
            receivers: Vec::new(),
            frame_steps: Vec::new(),
        };
        for model in [Model::Circuit, Model::Fluid(Policy::AllAtOnce)] {
            assert!(close(simulate(&problem, model, 0).unwrap().makespan_s, 2.5));
        }
        assert!(close(
            simulate(&problem, Model::Frames, 0).unwrap().makespan_s,
            2.75
        ));
    }

    #[test]
    fn utilisation_of_a_saturated_link_is_one() {
        let problem = Problem {
            capacities: vec![2.0, 4.0],
            slots: Vec::new(),
            flows: flows(&[vec![0, 1], vec![0]], 2.0),
            frames: vec![vec![0, 1]],
            overhead_s: 0.0,
            receivers: Vec::new(),
            frame_steps: Vec::new(),
        };
        let p = simulate(&problem, Model::Fluid(Policy::AllAtOnce), 4).unwrap();
        assert!(close(p.makespan_s, 2.0));
        assert!(
            p.utilisation[..4].iter().all(|&u| close(u, 1.0)),
            "{:?}",
            p.utilisation
        );
        assert!(p.utilisation[4..].iter().all(|&u| close(u, 0.25)));
    }

    #[test]
    fn bad_input_is_an_error() {
        let mut problem = backbone();
        problem.capacities[0] = 0.0;
        assert!(matches!(
            simulate(&problem, Model::Circuit, 0),
            Err(CoreError::InvalidInput(_))
        ));
        let mut problem = backbone();
        problem.frames = vec![vec![0, 1]];
        assert!(matches!(
            simulate(&problem, Model::Circuit, 0),
            Err(CoreError::InvalidInput(_))
        ));
    }

    #[test]
    fn slots_share_a_resource_in_the_frames_and_circuit_models() {
        // A resource of capacity 2 with 2 slots: each flow runs at 1 in its slot.
        let problem = Problem {
            capacities: vec![2.0],
            slots: vec![2],
            flows: (0..3)
                .map(|s| Flow {
                    path: vec![0],
                    size_bytes: 1.0,
                    latency_s: 0.0,
                    sender: s,
                })
                .collect(),
            frames: vec![vec![0, 1], vec![2]],
            overhead_s: 0.0,
            receivers: Vec::new(),
            frame_steps: Vec::new(),
        };
        let frames = simulate(&problem, Model::Frames, 0).unwrap();
        assert_eq!(frames.makespan_s, 2.0);
        // Circuit: flows 0 and 1 take the two slots, flow 2 the first one freed.
        let circuit = simulate(&problem, Model::Circuit, 4).unwrap();
        assert_eq!(circuit.finish_s, vec![1.0, 1.0, 2.0]);
        // Two flows at half the capacity each fill the resource during the first second.
        assert!((circuit.utilisation[0] - 1.0).abs() < 1e-12);
        assert!((circuit.utilisation[3] - 0.5).abs() < 1e-12);
    }
}

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
//!
//! The fluid model has two engines that give the same times up to rounding ([`Engine`]): one
//! recomputes every rate from scratch at every event, which costs time quadratic in the flows
//! when they all run at once; the other re-solves only the part of the max-min solution an
//! event can change (see "The incremental fluid engine" below).

use std::cmp::Ordering;
use std::collections::{BinaryHeap, HashMap};
use std::hash::{BuildHasherDefault, Hasher};

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
    simulate_with(problem, model, bins, Engine::Auto)
}

/// How the fluid model finds the max-min rates after each event. Both engines give the same
/// predictions up to rounding (within 1e-9 relative on every time; the tests hold them to it);
/// the frames and circuit models ignore the choice.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Engine {
    /// Incremental when flows can be many at once, from scratch otherwise: with a handful of
    /// flows in the network, recomputing everything costs less than keeping the structures
    /// that avoid it.
    Auto,
    /// Recompute only what an event can change (see the incremental engine below): each event
    /// costs what it changes, not what is in the network.
    Incremental,
    /// Progressive filling from scratch over every active flow at every event, as the simulator
    /// first did: quadratic in the flows, kept as the tests' oracle.
    Reference,
}

/// [`Engine::Auto`] recomputes from scratch for schedules of fewer flows than this, whose
/// simulation is over before the incremental engine's set-up pays off, or with fewer than
/// `FEW_AT_ONCE` in the network at once (measured on random networks under every policy).
const FEW_FLOWS: usize = 48;
const FEW_AT_ONCE: usize = 6;

/// An estimate of the most flows `policy` has in the network at once, to choose an engine.
fn peak_flows(problem: &Problem, policy: Policy) -> usize {
    let n = problem.flows.len();
    let frame = problem.frames.iter().map(|f| f.len()).max().unwrap_or(0);
    match policy {
        Policy::AllAtOnce => n,
        Policy::Frames => frame,
        Policy::PerSender => {
            let mut senders: Vec<u32> = problem.flows.iter().map(|f| f.sender).collect();
            senders.sort_unstable();
            senders.dedup();
            senders.len()
        }
        Policy::Window(w) => n.min(frame.saturating_mul(w as usize)),
        Policy::Steps => frame,
    }
}

fn fluid_model(
    problem: &Problem,
    policy: Policy,
    engine: Engine,
    grid: Option<&mut Grid>,
) -> Prediction {
    let engine = match engine {
        Engine::Auto
            if problem.flows.len() < FEW_FLOWS || peak_flows(problem, policy) < FEW_AT_ONCE =>
        {
            Engine::Reference
        }
        Engine::Auto => Engine::Incremental,
        chosen => chosen,
    };
    match engine {
        Engine::Reference => Reference::new(problem, policy).run(grid),
        _ => Incremental::new(problem, policy).run(grid),
    }
}

/// [`simulate`] with the fluid model's engine chosen.
pub fn simulate_with(
    problem: &Problem,
    model: Model,
    bins: usize,
    engine: Engine,
) -> CoreResult<Prediction> {
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
        Model::Fluid(policy) => fluid_model(problem, policy, engine, None),
    };
    if bins > 0 {
        prediction.bins = bins;
        prediction.utilisation = match model {
            Model::Fluid(policy) => {
                let mut grid = Grid::new(problem.capacities.len(), bins, prediction.makespan_s);
                fluid_model(problem, policy, engine, Some(&mut grid));
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

/// An entry of a min-heap: a key (a fair share, a time, a virtual-clock target) for an id, and
/// a tag telling a stale entry from a valid one (a version or stamp); smallest key first, ties by
/// smaller id. In the filling heap the key is a resource's fair share.
#[derive(PartialEq)]
struct Least<T>(f64, u32, T);

/// A resource's fair share in the filling heap, with the resource's version.
type Share = Least<u64>;

/// A time (or virtual-clock target) for an id, valid while the id's stamp equals the entry's.
type Due = Least<u32>;

impl<T: PartialEq> Eq for Least<T> {}

impl<T: PartialEq> PartialOrd for Least<T> {
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}

impl<T: PartialEq> Ord for Least<T> {
    fn cmp(&self, other: &Self) -> Ordering {
        other
            .0
            .total_cmp(&self.0)
            .then_with(|| other.1.cmp(&self.1))
    }
}

/// Relative tolerance under which a flow counts as finished and two event times as equal.
const EPS: f64 = 1e-12;

/// When the fluid model's flows start, under a start policy, and when they finished. Both fluid
/// engines drive the same one, so that they differ only in how they share the network.
struct Starts<'a> {
    problem: &'a Problem,
    policy: Policy,
    start: Vec<f64>,
    finish: Vec<f64>,
    done: usize,
    /// Position of each flow in its frame, per-sender queues, and frame progress.
    frame_of: Vec<u32>,
    left_in_frame: Vec<usize>,
    queues: Vec<Vec<u32>>,
    queue_pos: Vec<usize>,
    gates: Option<Gates>,
    /// Flows begun since the engine last took them: it times their latency.
    begun: Vec<u32>,
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

impl<'a> Starts<'a> {
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
        Starts {
            problem,
            policy,
            start: vec![f64::NAN; n],
            finish: vec![f64::NAN; n],
            done: 0,
            frame_of,
            left_in_frame: problem.frames.iter().map(|f| f.len()).collect(),
            queues,
            queue_pos: vec![0; senders],
            gates,
            begun: Vec::new(),
        }
    }

    fn begin(&mut self, i: u32, t: f64) {
        self.start[i as usize] = t;
        self.begun.push(i);
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

    /// Flow `i` finished at `t`: begin what the policy lets start after it.
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

    fn prediction(self, rate_updates: u64) -> Prediction {
        Prediction {
            makespan_s: self.finish.iter().copied().fold(0.0, f64::max),
            start_s: self.start,
            finish_s: self.finish,
            utilisation: Vec::new(),
            bins: 0,
            rate_updates,
        }
    }
}

/// Max-min fair rates by progressive filling: repeatedly the resource with the smallest fair
/// share (remaining capacity over unfixed flows) fixes the rate of its unfixed flows.
/// `on_resource[r]` lists the flows crossing resource `r` (indices into `rate`) and `path(i)`
/// gives flow `i`'s resources; the rate of every listed flow is set.
fn progressive_filling<'p>(
    capacities: &[f64],
    on_resource: &[Vec<u32>],
    path: impl Fn(usize) -> &'p [u32],
    rate: &mut [f64],
) {
    let mut left = capacities.to_vec();
    let mut count: Vec<u32> = on_resource.iter().map(|v| v.len() as u32).collect();
    let mut version = vec![0u64; capacities.len()];
    let mut fixed = vec![false; rate.len()];
    let mut heap = BinaryHeap::new();
    for (r, &c) in count.iter().enumerate() {
        if c > 0 {
            heap.push(Least(left[r] / c as f64, r as u32, 0));
        }
    }
    while let Some(Least(share, r, v)) = heap.pop() {
        let r = r as usize;
        if v != version[r] || count[r] == 0 {
            continue;
        }
        for &i in &on_resource[r] {
            let i = i as usize;
            if std::mem::replace(&mut fixed[i], true) {
                continue;
            }
            rate[i] = share;
            for &q in path(i) {
                let q = q as usize;
                left[q] = (left[q] - share).max(0.0);
                count[q] -= 1;
                version[q] += 1;
                if count[q] > 0 && q != r {
                    heap.push(Least(left[q] / count[q] as f64, q as u32, version[q]));
                }
            }
        }
    }
}

/// The fluid model as first written, kept as [`Engine::Reference`]: at every
/// event, the max-min rates of all active flows by progressive filling from scratch, and the
/// remaining bytes of every active flow advanced. Simple enough to trust, and quadratic in the
/// flows.
struct Reference<'a> {
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
    fn new(problem: &'a Problem, policy: Policy) -> Self {
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

    fn run(mut self, mut grid: Option<&mut Grid>) -> Prediction {
        let n = self.problem.flows.len();
        let mut t = 0.0f64;
        self.starts.start_initial();
        self.take_begun();
        self.admit(t);
        let mut dirty = true;
        while self.starts.done < n {
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
        self.starts.prediction(self.rate_updates)
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

// ---- The incremental fluid engine ---------------------------------------------------------
//
// Max-min rates have a structure that progressive filling reveals: resources saturate in the
// order of their *level* (the rate they give the flows they freeze), and every flow runs at the
// level of its *bottleneck*, the first resource on its path to saturate. Flows that share a
// bottleneck share a rate, so the state is kept per bottleneck *group*, not per flow:
//
// - a group's level, and a virtual clock counting the bytes any of its members has sent since the
//   group formed; a member finishes when the clock reaches its target, so a level change costs
//   nothing per member, and each group keeps a heap of its members' targets;
// - a sparse matrix of *cells*: the flows of group `s` that cross resource `r`, with their count.
//   A resource's level depends on its row only (the flows crossing it, grouped by the level they
//   are frozen at elsewhere); a level change reaches the resources of its group's column only.
//
// An event (flows finishing or entering the sharing) re-runs progressive filling over the
// resources it can affect, in level order as the original does (a sweep): a resource is taken up
// only when an input of its row changes, at the lower of its old level (where it used to
// saturate) and its new water level; the cascade stops where a level comes out unchanged. Groups
// nothing reached keep their level, and their members are never looked at. The water level of a
// resource is computed from its row exactly as progressive filling would find it, so the rates
// are the from-scratch ones up to rounding; `Engine::Reference` is the oracle of the tests.
//
// Resources outside every group (unsaturated) are not swept: their load is kept up to date, and
// one whose load goes over its capacity is swept again from the solution just found (which is the
// max-min solution of the network without that resource's limit), until none is over.

/// Relative tolerance of the sweep: a resource saturates when its water level is within it of
/// the level being swept, a group's flows stay in it when their level is within it of the
/// saturating resource's, and an unsaturated resource is over its capacity beyond it.
const SWEEP_TOL: f64 = 1e-12;

/// Relative change under which a group keeps its level: rounding noise in a recomputed level must
/// not set off a cascade of recomputations that change nothing.
const LEVEL_TOL: f64 = 1e-13;

/// Relative margin below its capacity from which an unsaturated resource's load is recomputed
/// exactly and compared with it: loads are kept as sums of increments, whose rounding errors
/// stay far below this.
const NEAR_FULL: f64 = 1e-9;

/// No group.
const NONE: u32 = u32::MAX;

/// The group of a flow admitted since the last update, not yet in any cell.
const ARRIVING: u32 = u32::MAX - 1;

/// A multiplicative hash for the cells' (resource, group) keys: std's default SipHash is made to
/// resist adversarial keys, which these are not, and costs several times more per lookup.
#[derive(Default)]
struct PairHasher(u64);

impl Hasher for PairHasher {
    fn finish(&self) -> u64 {
        self.0
    }

    fn write(&mut self, bytes: &[u8]) {
        for &b in bytes {
            self.write_u64(b as u64);
        }
    }

    fn write_u64(&mut self, x: u64) {
        self.0 = (self.0.rotate_left(5) ^ x).wrapping_mul(0x517c_c1b7_2722_0a95);
    }
}

fn cell_key(res: u32, group: u32) -> u64 {
    (res as u64) << 32 | group as u64
}

/// The flows of one group crossing one resource.
struct Cell {
    res: u32,
    group: u32,
    /// Positions in the resource's row and the group's column, for removal in O(1).
    row_pos: u32,
    col_pos: u32,
    /// (flow, position of `res` in the flow's path).
    flows: Vec<(u32, u32)>,
}

/// Max-min sharing of the network among the flows in it, kept from event to event.
struct Sharing<'a> {
    problem: &'a Problem,
    /// The pseudo-group of flows that entered the sharing and have no bottleneck yet; its id is
    /// the number of resources.
    fresh: u32,
    // Per flow.
    group: Vec<u32>,
    /// The group's clock value at which the flow is done (for a fresh flow: its bytes left).
    target: Vec<f64>,
    /// Where the flow's path starts in `slot`.
    path_start: Vec<u32>,
    /// Per (flow, path position): the flow's index in its cell's list.
    slot: Vec<u32>,
    /// Bumped whenever a flow's group or target changes, to invalidate heap entries.
    stamp: Vec<u32>,
    active: Vec<u32>,
    active_pos: Vec<u32>,
    // Per group (a resource, or `fresh`).
    level: Vec<f64>,
    count: Vec<u32>,
    clock: Vec<f64>,
    clock_at: Vec<f64>,
    members: Vec<BinaryHeap<Due>>,
    /// The largest target a member has had since the group formed (a bound on its last finish).
    last_target: Vec<f64>,
    group_stamp: Vec<u32>,
    /// Groups whose level or members changed since their finish time was last queued.
    changed: Vec<u32>,
    changed_flag: Vec<bool>,
    // Per resource.
    /// Sum of the rates of the flows crossing it (kept to spot unsaturated resources going over).
    load: Vec<f64>,
    row: Vec<Vec<u32>>,
    col: Vec<Vec<u32>>,
    cells: Vec<Cell>,
    free_cells: Vec<u32>,
    index: HashMap<u64, u32, BuildHasherDefault<PairHasher>>,
    /// Each group's next finish: (time, group, group stamp).
    finishes: BinaryHeap<Due>,
    // What the next update has to look at.
    pending: Vec<u32>,
    /// Whether the cells (and the loads) are laid out; see `drop_cells`.
    cells_built: bool,
    /// Flows that entered the sharing since the last update (their group is `ARRIVING`), and
    /// how many left it.
    arrivals: Vec<u32>,
    departures: usize,
    // Scratch of the rebuild, per resource and in all.
    rb_len: Vec<u32>,
    rb_start: Vec<u32>,
    rb_fill: Vec<u32>,
    rb_left: Vec<f64>,
    rb_count: Vec<u32>,
    rb_version: Vec<u64>,
    rb_share: Vec<f64>,
    rb_flows: Vec<u32>,
    rb_used: Vec<u32>,
    rb_lists: Vec<u32>,
    rb_bottleneck: Vec<u32>,
    rb_heap: BinaryHeap<Share>,
    // The sweep. Per-resource marks hold the number of the pass (or step) that set them, so that
    // nothing is cleared between passes.
    pass: u32,
    /// Saturated in this pass (its level is final).
    settled_in: Vec<u32>,
    /// Passed its old level in this pass without saturating (its members are unfrozen).
    vacated_in: Vec<u32>,
    /// In the queue in this pass, with its latest key.
    queued_in: Vec<u32>,
    queued_key: Vec<f64>,
    queue: BinaryHeap<Share>,
    /// Unsaturated resources whose load rose, to compare with their capacity after the pass.
    check: Vec<u32>,
    checked_in: Vec<u32>,
    /// Resources whose row changed in the current step, with how far their water level may
    /// have dropped (see `touch`).
    touched: Vec<u32>,
    touched_in: Vec<u32>,
    touched_rise: Vec<f64>,
    touched_unbound: Vec<u32>,
    touched_was: Vec<f64>,
    step: u32,
    capture: Vec<u32>,
    demands: Vec<(f64, u32)>,
    /// Rebuilds and sweeps done, for the tests and the profile.
    rebuilds: u64,
    sweeps: u64,
}

impl<'a> Sharing<'a> {
    fn new(problem: &'a Problem) -> Self {
        let n = problem.flows.len();
        let resources = problem.capacities.len();
        let groups = resources + 1;
        let mut path_start = Vec::with_capacity(n);
        let mut total = 0u32;
        for f in &problem.flows {
            path_start.push(total);
            total += f.path.len() as u32;
        }
        Sharing {
            problem,
            fresh: resources as u32,
            group: vec![NONE; n],
            target: vec![0.0; n],
            path_start,
            slot: vec![0; total as usize],
            stamp: vec![0; n],
            active: Vec::new(),
            active_pos: vec![NONE; n],
            level: vec![f64::INFINITY; groups],
            count: vec![0; groups],
            clock: vec![0.0; groups],
            clock_at: vec![0.0; groups],
            members: (0..groups).map(|_| BinaryHeap::new()).collect(),
            last_target: vec![f64::NEG_INFINITY; groups],
            group_stamp: vec![0; groups],
            changed: Vec::new(),
            changed_flag: vec![false; groups],
            load: vec![0.0; resources],
            row: vec![Vec::new(); resources],
            col: vec![Vec::new(); groups],
            cells: Vec::new(),
            free_cells: Vec::new(),
            index: HashMap::default(),
            finishes: BinaryHeap::new(),
            pending: Vec::new(),
            cells_built: false,
            arrivals: Vec::new(),
            departures: 0,
            rb_len: vec![0; resources],
            rb_start: vec![0; resources],
            rb_fill: vec![0; resources],
            rb_left: vec![0.0; resources],
            rb_count: vec![0; resources],
            rb_version: vec![0; resources],
            rb_share: vec![0.0; resources],
            rb_flows: Vec::new(),
            rb_used: Vec::new(),
            rb_lists: Vec::new(),
            rb_bottleneck: Vec::new(),
            rb_heap: BinaryHeap::new(),
            pass: 0,
            settled_in: vec![0; groups],
            vacated_in: vec![0; groups],
            queued_in: vec![0; groups],
            queued_key: vec![0.0; groups],
            queue: BinaryHeap::new(),
            check: Vec::new(),
            checked_in: vec![0; resources],
            touched: Vec::new(),
            touched_in: vec![0; groups],
            touched_rise: vec![0.0; groups],
            touched_unbound: vec![0; groups],
            touched_was: vec![0.0; groups],
            step: 1,
            capture: Vec::new(),
            demands: Vec::new(),
            rebuilds: 0,
            sweeps: 0,
        }
    }

    fn path(&self, i: u32) -> &'a [u32] {
        let problem: &'a Problem = self.problem;
        &problem.flows[i as usize].path
    }

    // -- cells --------------------------------------------------------------------------------

    fn cell_add(&mut self, i: u32, k: u32, res: u32, group: u32) {
        let key = cell_key(res, group);
        let id = match self.index.get(&key) {
            Some(&id) => id,
            None => {
                let id = match self.free_cells.pop() {
                    Some(id) => id,
                    None => {
                        self.cells.push(Cell {
                            res,
                            group,
                            row_pos: 0,
                            col_pos: 0,
                            flows: Vec::new(),
                        });
                        self.cells.len() as u32 - 1
                    }
                };
                let cell = &mut self.cells[id as usize];
                cell.res = res;
                cell.group = group;
                cell.row_pos = self.row[res as usize].len() as u32;
                cell.col_pos = self.col[group as usize].len() as u32;
                self.row[res as usize].push(id);
                self.col[group as usize].push(id);
                self.index.insert(key, id);
                id
            }
        };
        let cell = &mut self.cells[id as usize];
        self.slot[(self.path_start[i as usize] + k) as usize] = cell.flows.len() as u32;
        cell.flows.push((i, k));
    }

    fn cell_remove(&mut self, i: u32, k: u32, res: u32, group: u32) {
        let key = cell_key(res, group);
        let id = self.index[&key];
        let pos = self.slot[(self.path_start[i as usize] + k) as usize] as usize;
        let cell = &mut self.cells[id as usize];
        cell.flows.swap_remove(pos);
        if let Some(&(j, jk)) = cell.flows.get(pos) {
            self.slot[(self.path_start[j as usize] + jk) as usize] = pos as u32;
        }
        if cell.flows.is_empty() {
            let (rp, cp) = (cell.row_pos as usize, cell.col_pos as usize);
            let row = &mut self.row[res as usize];
            row.swap_remove(rp);
            if let Some(&other) = row.get(rp) {
                self.cells[other as usize].row_pos = rp as u32;
            }
            let col = &mut self.col[group as usize];
            col.swap_remove(cp);
            if let Some(&other) = col.get(cp) {
                self.cells[other as usize].col_pos = cp as u32;
            }
            self.index.remove(&key);
            self.free_cells.push(id);
        }
    }

    /// Lay out the cells of every active flow in a group (arriving ones join theirs after), and
    /// the loads from them.
    fn build_cells(&mut self) {
        self.cells_built = true;
        let active = std::mem::take(&mut self.active);
        for &i in &active {
            for &q in self.path(i) {
                self.load[q as usize] = 0.0;
            }
        }
        for &i in &active {
            let g = self.group[i as usize];
            if g == ARRIVING {
                continue;
            }
            let rate = self.rate_of(g);
            for (k, &q) in self.path(i).iter().enumerate() {
                self.cell_add(i, k as u32, q, g);
                self.load[q as usize] += rate;
            }
        }
        self.active = active;
    }

    /// Forget every cell: a rebuild does not need them, and a run whose events all rebuild (equal
    /// sizes: flows leave in a few large batches) never lays them out.
    fn drop_cells(&mut self) {
        self.cells_built = false;
        for (_, id) in self.index.drain() {
            let cell = &mut self.cells[id as usize];
            cell.flows.clear();
            self.row[cell.res as usize].clear();
            self.col[cell.group as usize].clear();
            self.load[cell.res as usize] = 0.0;
            self.free_cells.push(id);
        }
    }

    // -- groups -------------------------------------------------------------------------------

    fn mark_changed(&mut self, g: u32) {
        if !self.changed_flag[g as usize] {
            self.changed_flag[g as usize] = true;
            self.changed.push(g);
        }
    }

    /// Rate of the members of group `g` (0 for fresh flows, which have none yet).
    fn rate_of(&self, g: u32) -> f64 {
        if g == self.fresh {
            0.0
        } else {
            self.level[g as usize]
        }
    }

    fn clock_now(&self, g: u32, t: f64) -> f64 {
        let g = g as usize;
        if t == self.clock_at[g] {
            self.clock[g]
        } else {
            self.clock[g] + self.level[g] * (t - self.clock_at[g])
        }
    }

    /// Flow `i` joins group `g` at `t` with `rem` bytes left.
    fn join(&mut self, i: u32, g: u32, t: f64, rem: f64) {
        let gu = g as usize;
        if g != self.fresh && self.count[gu] == 0 {
            // A group that forms starts its clock at zero, so that targets stay small numbers.
            self.clock[gu] = 0.0;
            self.clock_at[gu] = t;
        }
        if self.cells_built {
            let rate = self.rate_of(g);
            for (k, &q) in self.path(i).iter().enumerate() {
                self.cell_add(i, k as u32, q, g);
                self.load[q as usize] += rate;
            }
        }
        self.count[gu] += 1;
        self.group[i as usize] = g;
        self.stamp[i as usize] = self.stamp[i as usize].wrapping_add(1);
        if g == self.fresh {
            self.target[i as usize] = rem;
        } else {
            let target = self.clock_now(g, t) + rem;
            self.target[i as usize] = target;
            self.last_target[gu] = self.last_target[gu].max(target);
            self.members[gu].push(Least(target, i, self.stamp[i as usize]));
            self.mark_changed(g);
        }
    }

    /// Flow `i` leaves its group at `t`; its bytes left.
    fn leave(&mut self, i: u32, t: f64) -> f64 {
        let g = self.group[i as usize];
        let gu = g as usize;
        let rem = if g == self.fresh {
            self.target[i as usize]
        } else {
            self.target[i as usize] - self.clock_now(g, t)
        };
        if self.cells_built {
            let rate = self.rate_of(g);
            for (k, &q) in self.path(i).iter().enumerate() {
                self.cell_remove(i, k as u32, q, g);
                self.load[q as usize] = if self.row[q as usize].is_empty() {
                    0.0
                } else {
                    self.load[q as usize] - rate
                };
            }
        }
        self.count[gu] -= 1;
        self.group[i as usize] = NONE;
        self.stamp[i as usize] = self.stamp[i as usize].wrapping_add(1);
        if g != self.fresh {
            if self.count[gu] == 0 {
                self.level[gu] = f64::INFINITY;
                self.clock[gu] = 0.0;
                self.clock_at[gu] = t;
                self.last_target[gu] = f64::NEG_INFINITY;
                self.members[gu].clear();
            }
            self.mark_changed(g);
        }
        rem.max(0.0)
    }

    /// Group `g` (with members) runs at `level` from `t` on. The loads of the resources its
    /// members cross change with it; those in the sweep are told how far their water level may
    /// have dropped, unsaturated ones that near their capacity are noted for the capacity check.
    /// One pass over the column does both: it is the sweep's main cost per changed group.
    fn set_level(&mut self, g: u32, level: f64, t: f64) {
        let gu = g as usize;
        self.clock[gu] = self.clock_now(g, t);
        self.clock_at[gu] = t;
        let delta = level - self.level[gu];
        self.level[gu] = level;
        self.mark_changed(g);
        let rise = delta.max(0.0);
        for k in 0..self.col[gu].len() {
            let cell = &self.cells[self.col[gu][k] as usize];
            let (r, n) = (cell.res, cell.flows.len() as f64);
            let ru = r as usize;
            self.load[ru] += n * delta;
            if r == g {
                continue;
            }
            if self.count[ru] > 0 || self.queued_in[ru] == self.pass {
                self.touch(r, n * rise, 0, 0.0);
            } else if delta > 0.0
                && self.checked_in[ru] != self.pass
                && self.load[ru] > self.problem.capacities[ru] * (1.0 - NEAR_FULL)
            {
                self.checked_in[ru] = self.pass;
                self.check.push(r);
            }
        }
    }

    /// Queue group `g`'s next finish time (its earliest target at its level).
    fn queue_finish(&mut self, g: u32) {
        let gu = g as usize;
        self.group_stamp[gu] = self.group_stamp[gu].wrapping_add(1);
        if self.count[gu] == 0 || self.level[gu] <= 0.0 || self.level[gu].is_nan() {
            return;
        }
        let (group, stamp) = (&self.group, &self.stamp);
        let heap = &mut self.members[gu];
        if heap.len() > 2 * self.count[gu] as usize + 16 {
            heap.retain(|&Least(_, i, s)| group[i as usize] == g && stamp[i as usize] == s);
        }
        while let Some(&Least(_, i, s)) = heap.peek() {
            if group[i as usize] == g && stamp[i as usize] == s {
                break;
            }
            heap.pop();
        }
        if let Some(&Least(target, _, _)) = heap.peek() {
            let at = self.clock_at[gu] + (target - self.clock[gu]) / self.level[gu];
            self.finishes.push(Least(at, g, self.group_stamp[gu]));
        }
    }

    // -- events -------------------------------------------------------------------------------

    /// Flow `i` enters the sharing. It is placed in the cells at the next update, and only if
    /// that update is a sweep: when a rebuild follows (a frame starting, say), it would leave
    /// them at once.
    fn admit(&mut self, i: u32) {
        self.active_pos[i as usize] = self.active.len() as u32;
        self.active.push(i);
        self.group[i as usize] = ARRIVING;
        self.target[i as usize] = self.problem.flows[i as usize].size_bytes;
        self.arrivals.push(i);
    }

    /// When the next flow finishes (+inf when none will).
    fn next_finish(&mut self) -> f64 {
        while let Some(&Least(at, g, s)) = self.finishes.peek() {
            if s == self.group_stamp[g as usize] {
                return at;
            }
            self.finishes.pop();
        }
        f64::INFINITY
    }

    /// Take out the flows done at `t` (within the tolerance of the reference engine), into
    /// `out`.
    fn take_finished(&mut self, t: f64, out: &mut Vec<u32>) {
        let horizon = t + EPS * t.max(1e-300);
        while let Some(&Least(at, g, s)) = self.finishes.peek() {
            if s != self.group_stamp[g as usize] {
                self.finishes.pop();
                continue;
            }
            if at > horizon {
                break;
            }
            self.finishes.pop();
            let gu = g as usize;
            let last = self.clock_at[gu] + (self.last_target[gu] - self.clock[gu]) / self.level[gu];
            if last <= horizon {
                // Every member is due (flows of equal sizes finishing together): take them all
                // without a logarithm each.
                let members = std::mem::take(&mut self.members[gu]).into_vec();
                for &Least(_, i, s) in &members {
                    if self.group[i as usize] == g && self.stamp[i as usize] == s {
                        self.finish_flow(i, t, out);
                    }
                }
                continue;
            }
            while let Some(&Least(target, i, s)) = self.members[gu].peek() {
                if self.group[i as usize] != g || self.stamp[i as usize] != s {
                    self.members[gu].pop();
                    continue;
                }
                let rem = target - self.clock_now(g, t);
                let due = self.clock_at[gu] + (target - self.clock[gu]) / self.level[gu];
                let size = self.problem.flows[i as usize].size_bytes;
                if !(rem <= EPS * size.max(1.0) || due <= horizon) {
                    break;
                }
                self.members[gu].pop();
                self.finish_flow(i, t, out);
            }
            // Its next member may be due later: queue it again whatever happens next.
            self.mark_changed(g);
            self.queue_finish(g);
        }
    }

    /// Flow `i` leaves the sharing, done at `t`.
    fn finish_flow(&mut self, i: u32, t: f64, out: &mut Vec<u32>) {
        self.leave(i, t);
        let pos = self.active_pos[i as usize] as usize;
        self.active.swap_remove(pos);
        if let Some(&j) = self.active.get(pos) {
            self.active_pos[j as usize] = pos as u32;
        }
        self.active_pos[i as usize] = NONE;
        for &q in self.path(i) {
            if self.count[q as usize] > 0 {
                self.pending.push(q);
            }
        }
        out.push(i);
        self.departures += 1;
    }

    /// New rates after the flows that entered or left since the last update.
    fn update(&mut self, t: f64) {
        // Progressive filling from scratch costs no more than a sweep when most flows are new
        // or gone, nor than laying out the cells for a sweep when a good part of them are.
        let changes = self.arrivals.len() + self.departures;
        let before = self.active.len() + self.departures;
        let share = if self.cells_built { 2 } else { 4 };
        if changes > 0 && share * changes >= before {
            self.rebuild(t);
        } else {
            if !self.cells_built {
                self.build_cells();
            }
            let arrivals = std::mem::take(&mut self.arrivals);
            for &i in &arrivals {
                self.join(i, self.fresh, t, self.target[i as usize]);
                self.pending.extend_from_slice(self.path(i));
            }
            self.arrivals = arrivals;
            if !self.pending.is_empty() {
                self.sweep(t);
            }
        }
        self.pending.clear();
        self.arrivals.clear();
        self.departures = 0;
        #[cfg(test)]
        self.verify(t);
        while let Some(g) = self.changed.pop() {
            self.changed_flag[g as usize] = false;
            self.queue_finish(g);
        }
    }

    /// Progressive filling from scratch (the reference engine's, over the active flows), then
    /// the groups it implies: flows whose bottleneck is unchanged stay in their group, only the
    /// others move, so that a rebuild after a small change (a sender's next flow starting among
    /// few others) costs little more than the filling. The cells are dropped, to be laid out
    /// again only if a sweep follows. The per-resource lists of the filling are laid out in
    /// scratch arrays over the resources in use only: a frame starting on a large network must
    /// not cost allocations or passes over every resource.
    fn rebuild(&mut self, t: f64) {
        self.rebuilds += 1;
        if self.cells_built {
            self.drop_cells();
        }
        let mut flows = std::mem::take(&mut self.rb_flows);
        let mut used = std::mem::take(&mut self.rb_used);
        let mut lists = std::mem::take(&mut self.rb_lists);
        let mut bottleneck = std::mem::take(&mut self.rb_bottleneck);
        let mut heap = std::mem::take(&mut self.rb_heap);
        flows.clear();
        flows.extend_from_slice(&self.active);
        // Flows of each resource in use, as slices of `lists`; clocks read at `t`, so that
        // levels may change under the members that stay.
        used.clear();
        for &i in &flows {
            let g = self.group[i as usize];
            if g != ARRIVING && g != self.fresh && self.clock_at[g as usize] != t {
                self.clock[g as usize] = self.clock_now(g, t);
                self.clock_at[g as usize] = t;
            }
            for &q in self.path(i) {
                let q = q as usize;
                if self.rb_len[q] == 0 {
                    used.push(q as u32);
                }
                self.rb_len[q] += 1;
            }
        }
        let mut at = 0u32;
        for &q in &used {
            let q = q as usize;
            self.rb_start[q] = at;
            self.rb_fill[q] = at;
            at += self.rb_len[q];
        }
        lists.clear();
        lists.resize(at as usize, 0);
        for (x, &i) in flows.iter().enumerate() {
            for &q in self.path(i) {
                let q = q as usize;
                lists[self.rb_fill[q] as usize] = x as u32;
                self.rb_fill[q] += 1;
            }
        }
        let caps = &self.problem.capacities;
        heap.clear();
        for &q in &used {
            let q = q as usize;
            self.rb_left[q] = caps[q];
            self.rb_count[q] = self.rb_len[q];
            self.rb_version[q] = 0;
            self.rb_share[q] = f64::NAN;
            heap.push(Least(caps[q] / self.rb_len[q] as f64, q as u32, 0));
        }
        bottleneck.clear();
        bottleneck.resize(flows.len(), NONE);
        while let Some(Least(share, r, v)) = heap.pop() {
            let r = r as usize;
            if v != self.rb_version[r] || self.rb_count[r] == 0 {
                continue;
            }
            let start = self.rb_start[r] as usize;
            for &x in &lists[start..start + self.rb_len[r] as usize] {
                let x = x as usize;
                if bottleneck[x] != NONE {
                    continue;
                }
                bottleneck[x] = r as u32;
                self.rb_share[r] = share;
                for &q in self.path(flows[x]) {
                    let q = q as usize;
                    self.rb_left[q] = (self.rb_left[q] - share).max(0.0);
                    self.rb_count[q] -= 1;
                    self.rb_version[q] += 1;
                    if self.rb_count[q] > 0 && q != r {
                        let key = self.rb_left[q] / self.rb_count[q] as f64;
                        heap.push(Least(key, q as u32, self.rb_version[q]));
                    }
                }
            }
        }
        for (x, &i) in flows.iter().enumerate() {
            let (old, new) = (self.group[i as usize], bottleneck[x]);
            if old == ARRIVING {
                self.join(i, new, t, self.target[i as usize]);
            } else if old != new {
                let rem = self.leave(i, t);
                self.join(i, new, t, rem);
            }
        }
        // The new levels (every clock reads `t`, so members that stay keep their targets).
        for &q in &used {
            let (qu, share) = (q as usize, self.rb_share[q as usize]);
            if self.count[qu] > 0 && self.level[qu] != share {
                self.level[qu] = share;
                self.mark_changed(q);
            }
        }
        self.arrivals.clear();
        for &q in &used {
            self.rb_len[q as usize] = 0;
        }
        self.rb_flows = flows;
        self.rb_used = used;
        self.rb_lists = lists;
        self.rb_bottleneck = bottleneck;
        self.rb_heap = heap;
    }

    /// Test builds: the rates equal progressive filling's from scratch after every update.
    #[cfg(test)]
    fn verify(&self, t: f64) {
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

    fn exact_load(&self, q: u32) -> f64 {
        self.row[q as usize]
            .iter()
            .map(|&id| {
                let cell = &self.cells[id as usize];
                cell.flows.len() as f64 * self.rate_of(cell.group)
            })
            .sum()
    }

    // -- the sweep ----------------------------------------------------------------------------

    /// Whether group `s`'s flows count as unfrozen in the current sweep (they take the water
    /// level of any resource they cross): fresh flows, and flows of a group that has passed its
    /// old level without saturating and not saturated since.
    fn unfrozen(&self, s: u32) -> bool {
        s == self.fresh
            || (self.vacated_in[s as usize] == self.pass
                && self.settled_in[s as usize] != self.pass)
    }

    /// The level at which resource `q` saturates given the levels of the groups crossing it:
    /// the water level `L` with Σ min(demand, L) = capacity, where a flow's demand is its group's
    /// level, unbounded for its own members and unfrozen flows; +inf when it cannot fill up.
    /// This is the fair share progressive filling finds for `q` once every group below `L` is
    /// frozen.
    ///
    /// It is found by iterating `L ← (capacity - Σ_{d<L} d) / #{d ≥ L}` from `start`, a lower
    /// bound (the key `q` came out of the queue with): from below, every step stays below the
    /// water level and takes in at least one more demand, and a close bound needs one pass over
    /// the row, no sort. Returns `(L, true)`, or, as soon as a step passes `limit`, that step's
    /// value, a lower bound, and `false`: beyond `limit` the sweep only needs a bound.
    fn water_level_from(&mut self, q: u32, start: f64, limit: f64) -> (f64, bool) {
        let cap = self.problem.capacities[q as usize];
        let mut unbounded = 0u64;
        let mut capped_load = 0.0;
        let mut demands = std::mem::take(&mut self.demands);
        demands.clear();
        for &id in &self.row[q as usize] {
            let cell = &self.cells[id as usize];
            let (s, n) = (cell.group, cell.flows.len() as u32);
            if s == q || self.unfrozen(s) {
                unbounded += n as u64;
            } else {
                let d = self.level[s as usize];
                capped_load += d * n as f64;
                demands.push((d, n));
            }
        }
        let total = unbounded + demands.iter().map(|&(_, n)| n as u64).sum::<u64>();
        let result = if unbounded == 0 && capped_load <= cap * (1.0 + SWEEP_TOL) {
            (f64::INFINITY, true)
        } else {
            let mut level = if start.is_finite() {
                start.max(0.0)
            } else {
                0.0
            };
            let mut restarted = false;
            loop {
                let (mut below, mut below_n, mut next_demand) = (0.0, 0u64, f64::INFINITY);
                for &(d, n) in &demands {
                    if d < level {
                        below += d * n as f64;
                        below_n += n as u64;
                    } else if d < next_demand {
                        next_demand = d;
                    }
                }
                let step = if below_n < total {
                    ((cap - below) / (total - below_n) as f64).max(0.0)
                } else {
                    0.0
                };
                if step < level && !restarted && level > 0.0 {
                    // The start was above the water level (rounding): from zero.
                    restarted = true;
                    level = 0.0;
                    continue;
                }
                if below_n == total {
                    // Every demand below the level: cannot happen from below the water level.
                    break (level, true);
                }
                if step <= next_demand {
                    break (step, true);
                }
                if step > limit {
                    break (step, false);
                }
                level = step;
            }
        };
        self.demands = demands;
        result
    }

    /// Queue resource `q` at `key`, a lower bound of the level at which it next matters (where it
    /// saturates, or where its group passes its old level). Keys are bounds, not exact levels, so
    /// that a change to a row costs nothing until the resource comes up: its water level is
    /// computed when it is taken out of the queue, once however many changes reached it.
    fn push(&mut self, q: u32, key: f64) {
        let qu = q as usize;
        if self.settled_in[qu] == self.pass || !key.is_finite() {
            return;
        }
        if self.queued_in[qu] == self.pass && self.queued_key[qu] <= key {
            return;
        }
        self.queued_in[qu] = self.pass;
        self.queued_key[qu] = key;
        self.queue.push(Least(key, q, self.pass as u64));
    }

    /// Resource `r`'s row changed: capped demands on it rose by `rise` in all, and `unbound` of
    /// its flows, capped at `was` until now, became unfrozen. Either can lower its water level,
    /// so that its key must be lowered to stay a bound; other changes (flows moving to a lower
    /// bottleneck, members leaving) only raise it.
    fn touch(&mut self, r: u32, rise: f64, unbound: u32, was: f64) {
        let ru = r as usize;
        if self.touched_in[ru] != self.step {
            self.touched_in[ru] = self.step;
            self.touched_rise[ru] = 0.0;
            self.touched_unbound[ru] = 0;
            self.touched_was[ru] = 0.0;
            self.touched.push(r);
        }
        self.touched_rise[ru] += rise;
        self.touched_unbound[ru] += unbound;
        self.touched_was[ru] += unbound as f64 * was;
    }

    /// Queue again the resources whose row changed in this step; note the unsaturated ones for
    /// the capacity check. A resource whose water level may have dropped gets a new bound: if
    /// its old key (or its group's level, when not queued) was `b`, capped demands rose by `D`
    /// and `a` flows capped at `d_1 … d_a` became unfrozen, its water level is at least
    /// `(m b + Σ d_k - D) / (m + a)` with `m` its members (below `b` the load falls by at least
    /// `m` per unit of level, as its members are never capped; an unfrozen flow adds at most
    /// `L - d_k` at level `L`). A clean group whose water level can only have risen is queued at
    /// its old level, where it would otherwise have saturated.
    fn flush_touched(&mut self, floor: f64) {
        let touched = std::mem::take(&mut self.touched);
        for &r in &touched {
            let ru = r as usize;
            if self.settled_in[ru] == self.pass {
                continue;
            }
            let queued = self.queued_in[ru] == self.pass;
            if self.count[ru] > 0 || queued {
                let (rise, unbound) = (self.touched_rise[ru], self.touched_unbound[ru]);
                if rise > 0.0 || unbound > 0 {
                    let base = if queued {
                        self.queued_key[ru]
                    } else {
                        self.level[ru]
                    };
                    let m = self.count[ru] as f64;
                    let bound = if m > 0.0 {
                        (m * base + self.touched_was[ru] - rise) / (m + unbound as f64)
                    } else {
                        floor
                    };
                    self.push(r, bound.max(floor));
                } else if !queued {
                    self.push(r, self.level[ru]);
                }
            } else if self.checked_in[ru] != self.pass {
                self.checked_in[ru] = self.pass;
                self.check.push(r);
            }
        }
        self.touched = touched;
        self.touched.clear();
        self.step = self.step.wrapping_add(1);
    }

    /// Move flow `i` into group `g` at `t`. Its demand on the other resources of its path drops
    /// to `g`'s level (it moves to a lower bottleneck, or from no level at all).
    fn move_to(&mut self, i: u32, g: u32, t: f64) {
        let rem = self.leave(i, t);
        self.join(i, g, t, rem);
        for &p in self.path(i) {
            if p != g {
                self.touch(p, 0.0, 0, 0.0);
            }
        }
    }

    /// Resource `q` saturates at `level`: it leads a group of its own members and of every
    /// unfrozen flow crossing it (they move in), and the resources its change reaches are taken
    /// up again.
    fn saturate(&mut self, q: u32, level: f64, t: f64) {
        let qu = q as usize;
        self.settled_in[qu] = self.pass;
        let had = self.count[qu] > 0;
        let old = self.level[qu];
        let mut capture = std::mem::take(&mut self.capture);
        capture.clear();
        for &id in &self.row[qu] {
            let s = self.cells[id as usize].group;
            if s != q
                && (self.unfrozen(s)
                    || (self.settled_in[s as usize] != self.pass
                        && self.level[s as usize] > level * (1.0 + SWEEP_TOL)))
            {
                capture.push(s);
            }
        }
        if !had {
            self.level[qu] = level;
        } else if (level - old).abs() > LEVEL_TOL * old {
            self.set_level(q, level, t);
        }
        for &s in &capture {
            while let Some(&id) = self.index.get(&cell_key(q, s)) {
                let (i, _) = *self.cells[id as usize]
                    .flows
                    .last()
                    .expect("cells are not empty");
                self.move_to(i, q, t);
            }
            if s != self.fresh {
                self.touch(s, 0.0, 0, 0.0);
            }
        }
        self.capture = capture;
        if self.count[qu] == 0 {
            // Saturated by flows that all stay within the tolerance of its level: no group.
            self.level[qu] = f64::INFINITY;
        }
        self.flush_touched(level);
    }

    /// Group `q` passes its old level without saturating: its members are unfrozen from here on,
    /// which raises their demand on the resources they cross. Those of its members that cross a
    /// resource already saturated in this sweep, at a level tied with `q`'s (they were left in
    /// `q` as frozen at the same level), are frozen there: they move to that resource's group.
    fn vacate(&mut self, q: u32, t: f64) {
        let qu = q as usize;
        self.vacated_in[qu] = self.pass;
        let mut tied = std::mem::take(&mut self.capture);
        tied.clear();
        for k in 0..self.col[qu].len() {
            let r = self.cells[self.col[qu][k] as usize].res;
            if r == q {
                continue;
            }
            let ru = r as usize;
            if self.settled_in[ru] == self.pass {
                tied.push(r);
            } else if self.count[ru] > 0 || self.queued_in[ru] == self.pass {
                // (The load of an unsaturated resource is the same until `q` settles.)
                let n = self.cells[self.col[qu][k] as usize].flows.len() as u32;
                self.touch(r, 0.0, n, self.level[qu]);
            }
        }
        for &r in &tied {
            while let Some(&id) = self.index.get(&cell_key(r, q)) {
                let (i, _) = *self.cells[id as usize]
                    .flows
                    .last()
                    .expect("cells are not empty");
                self.move_to(i, r, t);
            }
        }
        self.capture = tied;
        self.flush_touched(self.level[qu]);
    }

    /// The smallest valid key in the queue (+inf when empty), stale entries dropped.
    fn next_key(&mut self) -> f64 {
        while let Some(&Least(key, q, p)) = self.queue.peek() {
            let qu = q as usize;
            if p == self.pass as u64
                && self.queued_in[qu] == self.pass
                && self.queued_key[qu].to_bits() == key.to_bits()
                && self.settled_in[qu] != self.pass
            {
                return key;
            }
            self.queue.pop();
        }
        f64::INFINITY
    }

    /// Progressive filling over the resources the pending changes can reach.
    fn sweep(&mut self, t: f64) {
        self.sweeps += 1;
        let mut rounds = 0;
        let max_pops = 64 * (self.problem.capacities.len() + 16) as u64;
        loop {
            self.pass = self.pass.wrapping_add(1);
            let mut pending = std::mem::take(&mut self.pending);
            pending.sort_unstable();
            pending.dedup();
            for &q in &pending {
                // Fresh flows or a lifted limit lower its water level: look at it first. A flow
                // gone raises it: it matters from its group's old level on.
                let lowered = self.count[q as usize] == 0
                    || self.index.contains_key(&cell_key(q, self.fresh))
                    || rounds > 0;
                self.push(q, if lowered { 0.0 } else { self.level[q as usize] });
            }
            pending.clear();
            self.pending = pending;
            let mut pops = 0u64;
            loop {
                let key = self.next_key();
                if !key.is_finite() {
                    break;
                }
                let Some(Least(_, q, _)) = self.queue.pop() else {
                    break;
                };
                let qu = q as usize;
                self.queued_in[qu] = 0;
                pops += 1;
                if pops > max_pops {
                    // Rounding that keeps two resources trading places: settle it from scratch.
                    self.queue.clear();
                    self.rebuild(t);
                    return;
                }
                // The key was a bound: act now only if nothing queued comes before, and work
                // the water level out only as far as that needs.
                let next = self.next_key();
                let stop = next.max(key * (1.0 + SWEEP_TOL));
                let leads = self.count[qu] > 0 && self.vacated_in[qu] != self.pass;
                let old = if leads { self.level[qu] } else { f64::INFINITY };
                let enough = if old <= stop {
                    old * (1.0 + SWEEP_TOL)
                } else {
                    stop
                };
                let (level, exact) = self.water_level_from(q, key, enough);
                if !level.is_finite() {
                    continue;
                }
                if exact && level <= enough {
                    self.saturate(q, level, t);
                } else if old <= stop {
                    self.vacate(q, t);
                    // Members gone to tied resources only raise its water level: still a bound.
                    self.push(q, level);
                } else {
                    self.push(q, level.min(old));
                }
            }
            // Unsaturated resources whose load rose: any over its capacity is swept in from the
            // solution just found.
            let check = std::mem::take(&mut self.check);
            for &r in &check {
                let ru = r as usize;
                let cap = self.problem.capacities[ru];
                if self.count[ru] > 0 || self.load[ru] <= cap * (1.0 - NEAR_FULL) {
                    continue;
                }
                self.load[ru] = self.exact_load(r);
                if self.load[ru] > cap * (1.0 + SWEEP_TOL) {
                    self.pending.push(r);
                }
            }
            self.check = check;
            self.check.clear();
            if self.count[self.fresh as usize] > 0 && self.pending.is_empty() {
                // A fresh flow that no resource took: cannot happen with positive capacities,
                // but never leave a flow without a rate.
                self.rebuild(t);
                return;
            }
            if self.pending.is_empty() {
                return;
            }
            rounds += 1;
            if rounds > 64 {
                self.rebuild(t);
                return;
            }
        }
    }

    fn record(&mut self, grid: &mut Grid, t0: f64, t1: f64) {
        let caps = &self.problem.capacities;
        if self.cells_built {
            for (q, row) in self.row.iter().enumerate() {
                if !row.is_empty() {
                    grid.add(q, t0, t1, self.exact_load(q as u32) / caps[q]);
                }
            }
            return;
        }
        let mut used = std::mem::take(&mut self.rb_used);
        used.clear();
        for &i in &self.active {
            let rate = self.rate_of(self.group[i as usize]);
            for &q in self.path(i) {
                let q = q as usize;
                if self.rb_len[q] == 0 {
                    self.rb_len[q] = 1;
                    self.rb_left[q] = 0.0;
                    used.push(q as u32);
                }
                self.rb_left[q] += rate;
            }
        }
        for &q in &used {
            let q = q as usize;
            grid.add(q, t0, t1, self.rb_left[q] / caps[q]);
            self.rb_len[q] = 0;
        }
        self.rb_used = used;
    }
}

/// The fluid model driven by [`Sharing`]: events from heaps of finish times and latency ends
/// instead of scans over every flow.
struct Incremental<'a> {
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
    fn new(problem: &'a Problem, policy: Policy) -> Self {
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

    fn run(self, grid: Option<&mut Grid>) -> Prediction {
        self.run_counting(grid).0
    }

    /// The prediction, and how many updates were sweeps and how many rebuilds.
    fn run_counting(mut self, mut grid: Option<&mut Grid>) -> (Prediction, u64, u64) {
        let n = self.problem.flows.len();
        let mut t = 0.0f64;
        self.starts.start_initial();
        self.take_begun(t);
        self.admit(t);
        let mut dirty = true;
        let mut finished = Vec::new();
        while self.starts.done < n {
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
        (self.starts.prediction(self.rate_updates), sweeps, rebuilds)
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

    /// A random problem for the incremental engine: `nodes` hosts with an uplink and a downlink
    /// each and `core` shared resources, capacities equal (ties everywhere) or mixed, each flow
    /// crossing its sender's uplink, its receiver's downlink and up to three core resources;
    /// sizes equal or mixed, some zero, some latencies, random frames and steps.
    fn random_problem(rng: &mut crate::testing::Rng, nodes: u32, core: u32, n: usize) -> Problem {
        let resources = 2 * nodes + core;
        let mixed = rng.below(3) != 0;
        let capacities = (0..resources)
            .map(|_| match (mixed, rng.below(4)) {
                (false, _) => 1.0,
                (true, 0) => 1.0,
                (true, 1) => 2.0,
                (true, 2) => 4.0,
                _ => 0.5 + rng.below(1000) as f64 / 250.0,
            })
            .collect();
        let equal_sizes = rng.below(4) == 0;
        let mut flows = Vec::new();
        let mut receivers = Vec::new();
        for _ in 0..n {
            let x = rng.below(nodes as u64) as u32;
            let y = rng.below(nodes as u64) as u32;
            let mut path = vec![x, nodes + y];
            for _ in 0..rng.below(4) {
                if core > 0 {
                    path.push(2 * nodes + rng.below(core as u64) as u32);
                }
            }
            path.sort_unstable();
            path.dedup();
            let size_bytes = match (equal_sizes, rng.below(20)) {
                (_, 0) => 0.0,
                (true, _) => 1.0,
                (false, k) if k < 8 => 1.0 + rng.below(4) as f64,
                _ => 0.01 + rng.below(10_000) as f64 / 1000.0,
            };
            let latency_s = match rng.below(4) {
                0 => 0.1 * rng.below(4) as f64,
                _ => 0.0,
            };
            flows.push(Flow {
                path,
                size_bytes,
                latency_s,
                sender: x,
            });
            receivers.push(y);
        }
        let mut order: Vec<u32> = (0..n as u32).collect();
        for k in (1..n).rev() {
            order.swap(k, rng.below(k as u64 + 1) as usize);
        }
        let mut frames: Vec<Vec<u32>> = vec![Vec::new()];
        for i in order {
            if !frames.last().unwrap().is_empty() && rng.below(4) == 0 {
                frames.push(Vec::new());
            }
            frames.last_mut().unwrap().push(i);
        }
        let mut frame_steps: Vec<u32> = (0..frames.len())
            .map(|_| rng.below(frames.len() as u64) as u32)
            .collect();
        frame_steps.sort_unstable();
        Problem {
            capacities,
            slots: Vec::new(),
            flows,
            frames,
            overhead_s: if rng.below(2) == 0 { 0.0 } else { 0.05 },
            receivers,
            frame_steps,
        }
    }

    const POLICIES: [Policy; 7] = [
        Policy::AllAtOnce,
        Policy::Frames,
        Policy::PerSender,
        Policy::Window(1),
        Policy::Window(2),
        Policy::Window(5),
        Policy::Steps,
    ];

    /// Every start and finish time of the incremental engine within 1e-9 (relative) of the
    /// reference's; the numbers of sweeps and rebuilds it did.
    fn compare_with_reference(problem: &Problem, policy: Policy, what: &str) -> (u64, u64) {
        let reference = Reference::new(problem, policy).run(None);
        let (p, sweeps, rebuilds) = Incremental::new(problem, policy).run_counting(None);
        let near = |a: f64, b: f64| (a - b).abs() <= 1e-9 * a.abs().max(b.abs()).max(1e-300);
        for i in 0..problem.flows.len() {
            assert!(
                near(p.finish_s[i], reference.finish_s[i])
                    && near(p.start_s[i], reference.start_s[i]),
                "{what}, {policy:?}: flow {i} runs {} .. {} but the reference says {} .. {}",
                p.start_s[i],
                p.finish_s[i],
                reference.start_s[i],
                reference.finish_s[i]
            );
        }
        assert!(near(p.makespan_s, reference.makespan_s));
        assert_eq!(p.rate_updates, reference.rate_updates, "{what}, {policy:?}");
        (sweeps, rebuilds)
    }

    #[test]
    fn incremental_engine_equals_the_reference_on_small_random_problems() {
        let mut rng = crate::testing::Rng(0x2545_f491_4f6c_dd1d);
        let mut sweeps = 0;
        for case in 0..400 {
            let nodes = 2 + rng.below(5) as u32;
            let core = rng.below(5) as u32;
            let n = 1 + rng.below(30) as usize;
            let problem = random_problem(&mut rng, nodes, core, n);
            for policy in POLICIES {
                sweeps += compare_with_reference(&problem, policy, &format!("case {case}")).0;
            }
        }
        // The cases must exercise the sweep, not only progressive filling from scratch.
        assert!(sweeps > 10_000, "{sweeps} sweeps");
    }

    #[test]
    fn incremental_engine_equals_the_reference_on_larger_random_problems() {
        // Long cascades: hundreds of flows on few resources, every policy.
        let mut rng = crate::testing::Rng(0x9e37_79b9_7f4a_7c15);
        for case in 0..12 {
            let nodes = 6 + rng.below(10) as u32;
            let core = 2 + rng.below(8) as u32;
            let n = 100 + rng.below(300) as usize;
            let problem = random_problem(&mut rng, nodes, core, n);
            for policy in POLICIES {
                let (sweeps, rebuilds) =
                    compare_with_reference(&problem, policy, &format!("case {case}"));
                if policy == Policy::AllAtOnce {
                    // One rebuild for the flows that start together, sweeps after.
                    assert!(
                        rebuilds <= 2 && sweeps > 10,
                        "{sweeps} sweeps, {rebuilds} rebuilds"
                    );
                }
            }
        }
    }

    /// The same comparisons on many more cases, small and large (about a minute in release
    /// builds): `cargo test --release simulate -- --ignored`.
    #[test]
    #[ignore]
    fn incremental_engine_equals_the_reference_on_many_random_problems() {
        let mut rng = crate::testing::Rng(0x2545_f491_4f6c_dd1e);
        for case in 0..20_000 {
            // One case in ten six times as large.
            let scale = if case % 10 == 0 { 6 } else { 1 };
            let nodes = 2 + rng.below(5 * scale) as u32;
            let core = rng.below(5 * scale) as u32;
            let n = 1 + rng.below(30 * scale) as usize;
            let problem = random_problem(&mut rng, nodes, core, n);
            for policy in POLICIES {
                compare_with_reference(&problem, policy, &format!("case {case}"));
            }
        }
    }

    #[test]
    fn incremental_engine_records_the_reference_utilisation() {
        let mut rng = crate::testing::Rng(0x1234_5678_9abc_def1);
        for case in 0..60 {
            let n = 1 + rng.below(25) as usize;
            let problem = random_problem(&mut rng, 4, 3, n);
            for policy in [Policy::AllAtOnce, Policy::PerSender, Policy::Window(2)] {
                let model = Model::Fluid(policy);
                let a = simulate_with(&problem, model, 9, Engine::Incremental).unwrap();
                let b = simulate_with(&problem, model, 9, Engine::Reference).unwrap();
                for (x, y) in a.utilisation.iter().zip(&b.utilisation) {
                    assert!(
                        (x - y).abs() <= 1e-9,
                        "case {case}, {policy:?}: {x} against {y}"
                    );
                }
            }
        }
    }
}

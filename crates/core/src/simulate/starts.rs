//! When the fluid model's flows start under each start policy (all at once, frame by frame,
//! per sender, or gated per node by the schedule's steps: under a window of steps or one step at
//! a time), and when they finished. The gated policies count with per-node step counters
//! (`Gates`), the window policy with a Fenwick tree. Both fluid engines drive the same `Starts`.

use super::problem::{Policy, Prediction, Problem};

/// When the fluid model's flows start, under a start policy, and when they finished. Both fluid
/// engines drive the same one, so that they differ only in how they share the network.
pub(super) struct Starts<'a> {
    problem: &'a Problem,
    policy: Policy,
    pub(super) start: Vec<f64>,
    finish: Vec<f64>,
    pub(super) done: usize,
    /// Position of each flow in its frame, per-sender queues, and frame progress.
    frame_of: Vec<u32>,
    left_in_frame: Vec<usize>,
    queues: Vec<Vec<u32>>,
    queue_pos: Vec<usize>,
    gates: Option<Gates>,
    /// Flows begun since the engine last took them: it times their latency.
    pub(super) begun: Vec<u32>,
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
            Some(_) => pending
                .iter()
                .map(|list| Fenwick::ones(list.len()))
                .collect(),
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
    pub(super) fn new(problem: &'a Problem, policy: Policy) -> Self {
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
    pub(super) fn start_initial(&mut self) {
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
    pub(super) fn complete(&mut self, i: u32, t: f64) {
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

    pub(super) fn prediction(self, rate_updates: u64) -> Prediction {
        Prediction {
            makespan_s: self.finish.iter().copied().fold(0.0, f64::max),
            start_s: self.start,
            finish_s: self.finish,
            utilisation: Vec::new(),
            bins: 0,
            rate_updates,
            level_changes: 0,
        }
    }
}

#[cfg(test)]
mod tests {
    use crate::error::CoreError;
    use crate::simulate::testing::{close, flows};
    use crate::simulate::{simulate, Flow, Model, Policy, Problem};

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
}

"""Predict what a schedule achieves before running it: frames, circuit and fluid network models.

The simulator runs in the Rust core. ``frames`` counts synchronous timeframes (each as long as
its longest piece at its slot rate, plus an overhead β); ``circuit`` lets a transfer hold a slot
of every resource of its path while it runs (wormhole / cut-through); ``fluid`` shares every
resource max-min fairly among the flows crossing it (TCP-like, slots play no part), with flows
started all at once, frame by frame behind a barrier, per sender in schedule order, under a
global window (paper 002: a node sends the pieces of step ``k`` while fewer than ``W`` of the
steps before ``k`` are not yet wholly received by it), or one step at a time per node (the pairwise
exchange: a piece starts when its sender and its receiver have finished their earlier steps), or
paced (every transfer whole from the start, each held to its paced rate ``size / (Λ · (1 + h))``:
the continuous form of a liquid schedule, whose rates no resource's capacity is below, so that
every transfer ends at Λ · (1 + h) plus its path's latency on any network, for any sizes; the
engine shares the resources max-min as for any policy, each transfer's rate capped by a resource
of its own, so the claim is the simulator's, not assumed). Steps are the schedule's (:meth:`~liquidsched.schedule.Schedule.frame_steps`). The fluid model
has no buffers and loses nothing: it predicts what a window costs in pipelining (too small a
window leaves links idle for a latency), not the congestion losses it prevents.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field, replace
from fractions import Fraction
from typing import Any

import numpy as np

from .. import _core
from ..bounds import Bound, compute_bound
from ..errors import InputError
from ..schedule import Schedule
from ..units import parse_duration
from ..validation import require_exact_delivery

MODELS = ("frames", "circuit", "fluid")
POLICIES = ("all-at-once", "frames", "per-sender", "window", "steps", "paced")
#: The largest headroom of the paced policy: a third of every link left idle.
MAX_PACE_HEADROOM = 0.5
#: ``rust``: the simulator of the core; ``simgrid``: SimGrid's CM02 model (fluid only).
BACKENDS = ("rust", "simgrid")


@dataclass
class Prediction:
    """What a model predicts for a schedule."""

    model: str
    policy: str | None
    makespan_s: float
    throughput_Bps: float
    #: throughput over the liquid throughput of the traffic (1 means the bound is reached)
    ratio_to_bound: float
    start_s: list[float]
    finish_s: list[float]
    #: busy fraction of each resource (rows, in network order) in each time bin (columns)
    utilisation: np.ndarray = field(repr=False)
    resources: list[str] = field(repr=False)
    rate_updates: int = 0
    backend: str = "rust"
    #: wall-clock time of the simulation itself (for SimGrid: its engine's run, platform loading
    #: and process start excluded)
    wall_s: float = 0.0
    #: W of the window policy, in steps
    window: int | None = None
    #: bottleneck groups whose rate the incremental engine set again, over all its events (0 for
    #: the reference engine, which recomputes from scratch, and for SimGrid): what an event costs
    level_changes: int = 0

    def to_dict(self) -> dict[str, Any]:
        return {"model": self.model, "policy": self.policy, "backend": self.backend, "window": self.window,
                "makespan_s": self.makespan_s, "throughput_Bps": self.throughput_Bps,
                "ratio_to_bound": self.ratio_to_bound,
                # What the run cost, for those who compare engines or watch one grow.
                "engine": {"rate_updates": self.rate_updates, "level_changes": self.level_changes,
                           "wall_s": self.wall_s}}


@dataclass
class Flows:
    """A schedule's pieces as simulator flows, hosts numbered in network order."""

    paths: list[list[int]]
    sizes: list[float]
    latencies: list[float]
    senders: list[int]
    receivers: list[int]
    #: flow indices of each frame, in schedule order
    frames: list[list[int]]


def flows_of(schedule: Schedule) -> Flows:
    """The schedule's pieces as simulator flows."""
    net, traffic = schedule.network, schedule.traffic
    lists = traffic.resource_lists(net)
    host = {h: i for i, h in enumerate(net.hosts())}
    path_latency = [sum(net.links[l].latency_s for l in net.route(t.src, t.dst)) for t in traffic]
    flows = Flows([], [], [], [], [], [])
    for frame in schedule.frames:
        ids = []
        for piece in frame:
            i = traffic.index[piece.transfer]
            ids.append(len(flows.paths))
            flows.paths.append(lists[i])
            flows.sizes.append(float(piece.bytes))
            flows.latencies.append(path_latency[i])
            flows.senders.append(host[traffic[i].src])
            flows.receivers.append(host[traffic[i].dst])
        flows.frames.append(ids)
    return flows


def window_of(schedule: Schedule, window: int | None) -> int:
    """The window policy's W: as given, else the one the schedule was made with (a shuffle
    exchange's ``info.parameters["window"]``)."""
    if window is None:
        window = schedule.info.parameters.get("window")
        if window is None:
            raise InputError("the window policy needs a window: give one (a number of steps), or a shuffle "
                             "schedule made with a window")
    if isinstance(window, bool) or not isinstance(window, int) or window < 1:
        raise InputError(f"the window must be a whole number of steps >= 1, got {window!r}")
    return window


def paced_flows(schedule: Schedule, flows: Flows, headroom: float) -> tuple[list[float], list[int], Flows]:
    """The paced policy's problem: the resources' capacities and slots, and ``flows`` (whole
    transfers), each flow's path extended by a resource of its own whose capacity is its paced
    rate ``size / (Λ · (1 + headroom))``. A flow without bytes, or a traffic whose Λ is 0 (no
    transfer crosses a resource), needs no cap."""
    net = schedule.network
    capacities, slots = list(net.resource_capacity), list(net.resource_slots)
    duration = float(compute_bound(net, schedule.traffic).duration_s) * (1 + headroom)
    paths = []
    for path, size in zip(flows.paths, flows.sizes):
        if size > 0 and duration > 0:
            paths.append([*path, len(capacities)])
            capacities.append(size / duration)
            slots.append(1)
        else:
            paths.append(list(path))
    return capacities, slots, replace(flows, paths=paths)


def simulate(schedule: Schedule, model: str = "fluid", policy: str = "all-at-once", overhead_s: float = 0.0,
             bins: int = 0, backend: str = "rust", window: int | None = None,
             pace_headroom: float = 0.0) -> Prediction:
    """Predict the makespan of ``schedule`` in ``model``.

    Parameters
    ----------
    model
        ``frames``, ``circuit`` or ``fluid``.
    policy
        When fluid flows start: ``all-at-once`` (every transfer whole, at once: the
        schedule's pieces and order do not matter), ``frames`` (barrier between frames) or
        ``per-sender`` (each sender in schedule order, no barrier), ``window`` (each node in
        schedule order, while fewer than ``window`` earlier steps are not wholly received),
        ``steps`` (each node one step at a time) or ``paced`` (every transfer whole from the
        start at its paced rate, :func:`paced_flows`). Ignored by the other models.
    overhead_s
        β added to every frame (frames model, frames policy).
    bins
        Time bins of the utilisation map (0: none; the SimGrid back end gives none).
    backend
        ``rust`` (the core's simulator) or ``simgrid`` (SimGrid's CM02 model, fluid model only;
        see :mod:`liquidsched.simgrid.backend`).
    window
        W of the ``window`` policy, in steps; by default the schedule's own
        (:func:`window_of`).
    pace_headroom
        h of the ``paced`` policy: the rates take 1 / (1 + h) of what the bottlenecks carry
        (0: the pure form, every transfer at Λ; the executor's paced mode leaves 0.02 to TCP's
        acknowledgements, which the fluid model does not carry).

    Examples
    --------
    >>> from liquidsched import plan
    >>> from liquidsched.topologies import two_switch
    >>> from liquidsched.traffic import half_all_to_all
    >>> net = two_switch()
    >>> rr = plan(net, half_all_to_all(net), "round-robin")
    >>> p = simulate(rr, "circuit")
    >>> round(p.makespan_s / 0.01, 6), round(p.ratio_to_bound, 4)   # 1 MB at 100 MB/s: 10 ms a frame
    (7.0, 0.8571)
    """
    if model not in MODELS:
        raise InputError(f"unknown model {model!r} (available: {', '.join(MODELS)})")
    if policy not in POLICIES:
        raise InputError(f"unknown policy {policy!r} (available: {', '.join(POLICIES)})")
    if backend not in BACKENDS:
        raise InputError(f"unknown backend {backend!r} (available: {', '.join(BACKENDS)})")
    # The one numeric rule: β finite, within 0 and 10^6 s (inf or 1e308 would print as inf ms).
    overhead_s = parse_duration(overhead_s, "simulate: overhead_s")
    # Every model and back end alike: a prediction of other bytes than the traffic's is of
    # another traffic (a missing transfer would show a ratio above the bound).
    require_exact_delivery(schedule)
    if schedule.relay is not None:
        _require_causal(model, policy)
    paced = model == "fluid" and policy == "paced"
    if pace_headroom != 0 and not paced:
        raise InputError("a pace headroom applies to the fluid model's paced policy")
    if not (isinstance(pace_headroom, (int, float)) and 0 <= pace_headroom <= MAX_PACE_HEADROOM):
        raise InputError(f"the pace headroom must be a share from 0 to {MAX_PACE_HEADROOM:g}, got {pace_headroom!r}")
    gated = model == "fluid" and policy in ("window", "steps")
    if window is not None and not (model == "fluid" and policy == "window"):
        raise InputError("a window applies to the fluid model's window policy")
    w = window_of(schedule, window) if model == "fluid" and policy == "window" else 0
    if model == "fluid" and policy in ("all-at-once", "paced"):
        schedule = whole_transfers(schedule)
    net = schedule.network
    if backend == "simgrid":
        if model != "fluid":
            raise InputError(f"the simgrid backend simulates the fluid model, not {model}")
        from ..simgrid.backend import SIMGRID_POLICIES, run_simgrid

        if policy not in SIMGRID_POLICIES:
            raise InputError(f"the simgrid backend has no {policy} policy; use the rust backend")

        raw = run_simgrid(schedule, flows_of(schedule), policy, overhead_s)
        empty = np.zeros((len(net.resources), 0))
        return prediction_from_times(schedule, model, policy, max(raw["finish_s"], default=0.0), raw["start_s"],
                                     raw["finish_s"], empty, 0, "simgrid", raw["run_s"])
    f = flows_of(schedule)
    capacities, slots, engine_policy = list(net.resource_capacity), net.resource_slots, policy
    if paced:
        capacities, slots, f = paced_flows(schedule, f, float(pace_headroom))
        engine_policy = "all-at-once"
    t0 = time.perf_counter()
    raw = _core.simulate(capacities, f.paths, f.sizes, f.latencies, f.senders, f.frames, model,
                         engine_policy, float(overhead_s), int(bins), slots=slots, receivers=f.receivers,
                         frame_steps=schedule.frame_steps() if gated else [], window=w)
    wall = time.perf_counter() - t0
    # The paced caps are resources of the problem, not of the network.
    utilisation = np.asarray(raw["utilisation"], dtype=float).reshape(len(capacities), raw["bins"])
    utilisation = utilisation[:len(net.resources)]
    prediction = prediction_from_times(schedule, model, policy if model == "fluid" else None, raw["makespan_s"],
                                       raw["start_s"], raw["finish_s"], utilisation, raw["rate_updates"], "rust",
                                       wall)
    prediction.window = w or None
    prediction.level_changes = int(raw["level_changes"])
    return prediction


#: The models and fluid policies that keep a relayed schedule's order between steps: a host
#: forwards what an earlier step brought it (frames one after another, or each node step by step).
CAUSAL_FLUID_POLICIES = ("frames", "steps")


def _require_causal(model: str, policy: str) -> None:
    """Refuse a model that would let a relayed schedule forward bytes before they arrive."""
    if model == "circuit" or (model == "fluid" and policy not in CAUSAL_FLUID_POLICIES):
        what = "the circuit model" if model == "circuit" else f"the fluid model's {policy} policy"
        raise InputError(f"a relayed schedule forwards what earlier steps bring, which {what} does not keep: "
                         f"predict it with the frames model or the fluid model's "
                         f"{' or '.join(CAUSAL_FLUID_POLICIES)} policy")


def whole_transfers(schedule: Schedule) -> Schedule:
    """The schedule's transfers whole, in one frame: what "all at once" sends, whatever pieces
    and order the schedule had (two pieces of one transfer are one connection, not two)."""
    if all(p.bytes == schedule.traffic[schedule.traffic.index[p.transfer]].size_bytes
           for frame in schedule.frames for p in frame):
        return schedule
    return Schedule.from_indices(schedule.network, schedule.traffic, [range(len(schedule.traffic))], schedule.info)


def prediction_from_times(schedule: Schedule, model: str, policy: str | None, makespan: float,
                          start: list[float], finish: list[float], utilisation: np.ndarray, rate_updates: int,
                          backend: str, wall_s: float, bound: Bound | None = None) -> Prediction:
    """A Prediction from the makespan and the flows' times, with throughput and ratio to the bound
    (``bound``: the traffic's, when the caller has it already). A relayed schedule's throughput
    and bound are those of the exchange it carries, as its summary gives them: the bytes the
    user exchanges, against sending them straight."""
    net, traffic = schedule.network, schedule.exchange
    throughput = traffic.total_bytes / makespan if makespan > 0 else float("inf")
    bound = (bound or compute_bound(net, traffic)).liquid_throughput_Bps
    ratio = float(Fraction(throughput) / bound) if makespan > 0 else 1.0
    return Prediction(model, policy, makespan, throughput, ratio, list(start), list(finish), utilisation,
                      list(net.resources), rate_updates, backend, wall_s)


__all__ = ["BACKENDS", "MODELS", "POLICIES", "Flows", "Prediction", "flows_of", "paced_flows", "prediction_from_times",
           "simulate", "window_of"]

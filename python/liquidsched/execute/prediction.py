"""What crosses the network when a schedule runs, and the simulator's prediction of each mode.

A transfer from a host to itself is a local copy in execution, whatever the model says: the
measured throughput counts the bytes that cross the network and is compared with the liquid
throughput of those transfers alone.
"""

from __future__ import annotations

import math
from fractions import Fraction

import numpy as np

from ..bounds import compute_bound
from ..schedule import Piece, Schedule, ScheduleInfo
from ..traffic import Traffic
from .paced import PACE_HEADROOM, paced_chunks, paced_duration_s

#: The simulator's prediction beside each execution mode: (model, policy); the paced policy is
#: :func:`predict_paced`'s, not one of :func:`~liquidsched.simulate.simulate`'s.
PREDICTION_OF_MODE = {"frames": ("frames", "all-at-once"), "barrier-free": ("circuit", "all-at-once"),
                      "dependency-driven": ("circuit", "all-at-once"),
                      "all-at-once": ("fluid", "all-at-once"), "alltoallv": ("fluid", "all-at-once"),
                      "shuffle": ("fluid", "window"), "pairwise": ("fluid", "steps"), "paced": ("fluid", "paced")}


#: The prediction beside each mode that runs a relayed schedule's legs: frames as frames; the
#: others in the fluid model's steps policy, which keeps each host's forwarding after what
#: brings it (the circuit model and all at once would forward early).
PREDICTION_OF_RELAYED_MODE = {"frames": ("frames", "all-at-once"), "barrier-free": ("fluid", "steps"),
                              "dependency-driven": ("fluid", "steps"), "all-at-once": ("fluid", "steps"),
                              "pairwise": ("fluid", "steps")}


def prediction_of_mode(mode: str, relayed: bool = False) -> tuple[str, str]:
    """The simulator's (model, policy) for ``mode`` (of a ``relayed`` schedule's legs): the MPI
    library's alltoall as all at once."""
    if relayed and mode in PREDICTION_OF_RELAYED_MODE:
        return PREDICTION_OF_RELAYED_MODE[mode]
    return PREDICTION_OF_MODE.get(mode, ("fluid", "all-at-once"))


def predict_mode(schedule: Schedule, mode: str, pace_headroom: float = PACE_HEADROOM):
    """The simulator's prediction of ``schedule`` run in ``mode``, for the transfers that cross
    the network (self transfers are local copies in execution); None when none does. The
    shuffle mode without a window may send every packet at once, in order; the paced mode is
    :func:`predict_paced` with ``pace_headroom``. The modes that send a relayed schedule's
    exchange straight (paced, the library's) are predicted for it sent straight
    (:func:`direct_schedule`)."""
    from ..simulate import simulate

    relayed = schedule.relay is not None and mode in PREDICTION_OF_RELAYED_MODE
    if schedule.relay is not None and not relayed:
        schedule = direct_schedule(schedule)
    crossing = network_schedule(schedule)
    if crossing is None:
        return None
    if mode == "paced":
        return predict_paced(crossing, pace_headroom)
    model, policy = prediction_of_mode(mode, relayed)
    window = None
    if policy == "window" and schedule.info.parameters.get("window") is None:
        window = max(1, len(crossing.frames))
    return simulate(crossing, model, policy, window=window)


def predict_paced(schedule: Schedule, headroom: float = PACE_HEADROOM):
    """The paced mode in the fluid model (policy ``paced``): each transfer of ``schedule`` in the
    chunks :func:`~liquidsched.execute.paced.paced_chunks` cuts it into, each chunk carried from
    its due time at the transfer's paced rate (size over Λ · (1 + ``headroom``)), which no
    resource's capacity is below by construction, so that no chunk waits for another; a transfer
    ends with its last chunk plus its path's latency. Every transfer is taken to cross the
    network (:func:`network_schedule` first).

    Examples
    --------
    >>> from liquidsched import build_topology, plan, all_to_all
    >>> net = build_topology("crossbar:n=4,capacity_Bps=1MB/s")
    >>> p = predict_paced(plan(net, all_to_all(net, size_bytes=100_000), "liquid"), headroom=0.0)
    >>> round(p.makespan_s, 4), p.policy  # Λ = 0.3 s; 7 chunks of 43 ms, the latest phase 14/16
    (0.3375, 'paced')
    """
    from ..simulate import prediction_from_times
    from .plan import exchange_plan

    net, traffic = schedule.network, schedule.traffic
    bound = compute_bound(net, traffic)
    duration = paced_duration_s(float(bound.duration_s), headroom)
    # The run's own regions: its ranks (the chunks of a pair are capped together) and order (the phases).
    regions = exchange_plan(schedule).regions
    start = [math.inf] * len(traffic)
    finish = [0.0] * len(traffic)
    for c in paced_chunks(regions, duration):
        rate = traffic[c.transfer].size_bytes / duration
        start[c.transfer] = min(start[c.transfer], c.due_s)
        finish[c.transfer] = max(finish[c.transfer], c.due_s + c.nbytes / rate)
    for i, t in enumerate(traffic):
        finish[i] += sum(net.links[link].latency_s for link in net.route(t.src, t.dst))
    empty = np.zeros((len(net.resources), 0))
    return prediction_from_times(schedule, "fluid", "paced", max(finish, default=0.0), start, finish, empty, 0,
                                 "python", 0.0, bound)


def direct_schedule(schedule: Schedule) -> Schedule:
    """The exchange ``schedule`` carries, every transfer whole and straight to its destination
    in one frame: what the modes that do not follow a relayed schedule's legs run.

    Examples
    --------
    >>> from liquidsched import build_topology, make_traffic, plan
    >>> net = build_topology("rail-optimised:servers=2,gpus=2")
    >>> s = plan(net, make_traffic(net, "moe:skew=uniform,seed=1,tokens=64"), "fast")
    >>> d = direct_schedule(s)
    >>> d.relay is None, d.traffic == s.exchange, len(d.frames)
    (True, True, 1)
    """
    exchange = schedule.exchange
    if schedule.relay is None and len(schedule.frames) == 1:
        return schedule
    frames = [[Piece(name, t.size_bytes) for name, t in zip(exchange.names, exchange)]]
    return Schedule(schedule.network, exchange, frames, ScheduleInfo(f"{schedule.info.algorithm} (sent straight)"))


def crossing_exchange(schedule: Schedule) -> Traffic | None:
    """The transfers of the exchange ``schedule`` carries that cross the network (a relayed
    schedule's relayed traffic; self transfers are local copies); None when none does.

    Examples
    --------
    >>> from liquidsched import build_topology, plan, half_all_to_all
    >>> net = build_topology("swiss-t1:allocation=1/1/0/0/0/0/0/0")
    >>> len(crossing_exchange(plan(net, half_all_to_all(net), "round-robin")))
    2
    """
    exchange = schedule.exchange
    crossing = [t for t in exchange if t.src != t.dst]
    if not crossing:
        return None
    return exchange if len(crossing) == len(exchange) else Traffic(crossing, exchange.name)


def network_schedule(schedule: Schedule) -> Schedule | None:
    """``schedule`` without its self transfers (and the frames they leave empty): what crosses
    the network in execution, where a transfer from a host to itself is a local copy. None when
    no transfer crosses it. A relayed schedule's legs all cross it (a leg joins two hosts); it
    is returned whole.

    Examples
    --------
    >>> from liquidsched import build_topology, plan, half_all_to_all
    >>> net = build_topology("swiss-t1:allocation=1/1/0/0/0/0/0/0")
    >>> s = plan(net, half_all_to_all(net), "round-robin")
    >>> len(s.traffic), len(network_schedule(s).traffic)
    (4, 2)
    """
    traffic = schedule.traffic
    keep = [i for i, t in enumerate(traffic) if t.src != t.dst]
    if len(keep) == len(traffic) or schedule.relay is not None:
        return schedule
    if not keep:
        return None
    crossing = Traffic([traffic[i] for i in keep], traffic.name)
    names = traffic.names
    rename = {names[i]: crossing.names[k] for k, i in enumerate(keep)}
    frames = [[Piece(rename[p.transfer], p.bytes) for p in f if p.transfer in rename] for f in schedule.frames]
    return Schedule(schedule.network, crossing, [f for f in frames if f], schedule.info)


def crossing_lambda_s(schedule: Schedule) -> float | None:
    """Λ of the transfers of the exchange ``schedule`` carries that cross the network, sent
    straight, in seconds (None: none does)."""
    crossing = crossing_exchange(schedule)
    if crossing is None:
        return None
    return float(Fraction(compute_bound(schedule.network, crossing).duration_s))

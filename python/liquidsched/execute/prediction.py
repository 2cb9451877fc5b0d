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
from ..schedule import Piece, Schedule
from ..traffic import Traffic
from .paced import PACE_HEADROOM, paced_chunks, paced_duration_s

#: The simulator's prediction beside each execution mode: (model, policy); the paced policy is
#: :func:`predict_paced`'s, not one of :func:`~liquidsched.simulate.simulate`'s.
PREDICTION_OF_MODE = {"frames": ("frames", "all-at-once"), "barrier-free": ("circuit", "all-at-once"),
                      "dependency-driven": ("circuit", "all-at-once"),
                      "all-at-once": ("fluid", "all-at-once"), "alltoallv": ("fluid", "all-at-once"),
                      "shuffle": ("fluid", "window"), "pairwise": ("fluid", "steps"), "paced": ("fluid", "paced")}


def prediction_of_mode(mode: str) -> tuple[str, str]:
    """The simulator's (model, policy) for ``mode``: the MPI library's alltoall as all at once."""
    return PREDICTION_OF_MODE.get(mode, ("fluid", "all-at-once"))


def predict_mode(schedule: Schedule, mode: str, pace_headroom: float = PACE_HEADROOM):
    """The simulator's prediction of ``schedule`` run in ``mode``, for the transfers that cross
    the network (self transfers are local copies in execution); None when none does. The
    shuffle mode without a window may send every packet at once, in order; the paced mode is
    :func:`predict_paced` with ``pace_headroom``."""
    from ..simulate import simulate

    crossing = network_schedule(schedule)
    if crossing is None:
        return None
    if mode == "paced":
        return predict_paced(crossing, pace_headroom)
    model, policy = prediction_of_mode(mode)
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


def network_schedule(schedule: Schedule) -> Schedule | None:
    """``schedule`` without its self transfers (and the frames they leave empty): what crosses
    the network in execution, where a transfer from a host to itself is a local copy. None when
    no transfer crosses it.

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
    if len(keep) == len(traffic):
        return schedule
    if not keep:
        return None
    crossing = Traffic([traffic[i] for i in keep], traffic.name)
    names = traffic.names
    rename = {names[i]: crossing.names[k] for k, i in enumerate(keep)}
    frames = [[Piece(rename[p.transfer], p.bytes) for p in f if p.transfer in rename] for f in schedule.frames]
    return Schedule(schedule.network, crossing, [f for f in frames if f], schedule.info)


def crossing_lambda_s(schedule: Schedule) -> float | None:
    """Λ of the transfers of ``schedule`` that cross the network, in seconds (None: none does)."""
    crossing = network_schedule(schedule)
    if crossing is None:
        return None
    return float(Fraction(compute_bound(schedule.network, crossing.traffic).duration_s))

"""What crosses the network when a schedule runs, and the simulator's prediction of each mode.

A transfer from a host to itself is a local copy in execution, whatever the model says: the
measured throughput counts the bytes that cross the network and is compared with the liquid
throughput of those transfers alone.
"""

from __future__ import annotations

from fractions import Fraction

from ..bounds import compute_bound
from ..schedule import Piece, Schedule
from ..traffic import Traffic

#: The simulator's prediction beside each execution mode: (model, policy).
PREDICTION_OF_MODE = {"frames": ("frames", "all-at-once"), "barrier-free": ("circuit", "all-at-once"),
                      "dependency-driven": ("circuit", "all-at-once"),
                      "all-at-once": ("fluid", "all-at-once"), "alltoallv": ("fluid", "all-at-once"),
                      "shuffle": ("fluid", "window"), "pairwise": ("fluid", "steps")}


def prediction_of_mode(mode: str) -> tuple[str, str]:
    """The simulator's (model, policy) for ``mode``: the MPI library's alltoall as all at once."""
    return PREDICTION_OF_MODE.get(mode, ("fluid", "all-at-once"))


def predict_mode(schedule: Schedule, mode: str):
    """The simulator's prediction of ``schedule`` run in ``mode``, for the transfers that cross
    the network (self transfers are local copies in execution); None when none does. The
    shuffle mode without a window may send every packet at once, in order."""
    from ..simulate import simulate

    crossing = network_schedule(schedule)
    if crossing is None or mode == "paced":
        # No model of the simulators paces flows yet: no prediction rather than another mode's.
        return None
    model, policy = prediction_of_mode(mode)
    window = None
    if policy == "window" and schedule.info.parameters.get("window") is None:
        window = max(1, len(crossing.frames))
    return simulate(crossing, model, policy, window=window)


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

"""Schedulers: each takes (network, traffic, options) and returns a :class:`Schedule`.

Choose one by name with :func:`plan`, or pass your own callable, as networkx does with its
colouring strategies. A callable may also return frames as lists of transfer indices.
"""

from __future__ import annotations

import time
from typing import Any, Callable

from ..bounds import compute_bound
from ..errors import InputError
from ..network import Network
from ..schedule import Schedule, ScheduleInfo
from ..traffic import Traffic
from .baselines import random_order, round_robin
from .coloring import dsatur
from .cpsat import cpsat
from .fast import fast
from .hierarchical import hierarchical, rails
from .kpbs import ggp, oggp, solstice
from .liquid import liquid
from .shuffle import pairwise, shuffle
from .weighted import weighted

Scheduler = Callable[..., Any]


def _checked_options(name: str, options: dict[str, Any]) -> dict[str, Any]:
    """The numeric options of a scheduler read by the one numeric rule (:mod:`liquidsched.units`),
    so that ``overhead_s=float("inf")`` or ``time_limit=-1`` is an error naming the keyword,
    whatever the scheduler, and ``overhead_s="1ms"`` is 0.001 as on the command line."""
    from ..units import parse_count, parse_duration, parse_size

    rules = {"overhead_s": lambda v, at: parse_duration(v, at),
             "time_limit": lambda v, at: parse_duration(v, at),
             "node_limit": lambda v, at: parse_count(v, at, least=0, most=2**63 - 1),
             "seed": lambda v, at: parse_count(v, at, least=0, most=2**63 - 1),
             "workers": lambda v, at: parse_count(v, at, least=1, most=1024),
             "packet_bytes": lambda v, at: parse_size(v, at),
             "memo_limit": lambda v, at: parse_size(v, at),
             "gpus": lambda v, at: parse_count(v, at),
             "chunks": lambda v, at: parse_count(v, at, most=2**20)}
    # None is "not given" (the scheduler's default), as the command line leaves an option out.
    return {key: rules[key](value, f"{name}: {key}") if key in rules else value
            for key, value in options.items() if not (key in rules and value is None)}

SCHEDULERS: dict[str, Scheduler] = {
    "round-robin": round_robin,
    "random": random_order,
    "dsatur": dsatur,
    "liquid": liquid,
    "cpsat": cpsat,
    "ggp": ggp,
    "oggp": oggp,
    "solstice": solstice,
    "weighted": weighted,
    "shuffle": shuffle,
    "pairwise": pairwise,
    "fast": fast,
    "hierarchical": hierarchical,
    "rails": rails,
}


def plan(network: Network, traffic: Traffic, algorithm: str | Scheduler = "round-robin", **options: Any) -> Schedule:
    """Schedule ``traffic`` on ``network`` with ``algorithm`` (a name in :data:`SCHEDULERS` or a
    callable), and record the lower bound and the time spent.

    Examples
    --------
    >>> from liquidsched.topologies import two_switch
    >>> from liquidsched.traffic import half_all_to_all
    >>> net = two_switch()
    >>> s = plan(net, half_all_to_all(net), "round-robin")
    >>> s.length, s.info.lower_bound, s.liquid
    (7, 6, False)
    """
    if isinstance(algorithm, str):
        if algorithm not in SCHEDULERS:
            raise InputError(f"unknown algorithm {algorithm!r} (available: {', '.join(SCHEDULERS)})")
        fn, name = SCHEDULERS[algorithm], algorithm
    else:
        fn, name = algorithm, getattr(algorithm, "__name__", "custom")
    # Every scheduler gets a traffic already checked against the network, so that bad input
    # (no transfer, unknown hosts, bad sizes) is one TrafficError whatever the algorithm.
    traffic.check(network)
    options = _checked_options(name, options)
    start = time.perf_counter()
    result = fn(network, traffic, **options)
    elapsed = time.perf_counter() - start
    if not isinstance(result, Schedule):
        result = Schedule.from_indices(network, traffic, result, ScheduleInfo(name, parameters=dict(options)))
    info = result.info
    info.time_s = info.time_s or elapsed
    if info.lower_bound is None:
        # The input's bound (a relayed schedule's own traffic is its legs); the schedule's is the
        # same traffic's when it is not relayed, computed once.
        info.lower_bound = (result.bound if result.traffic is traffic else compute_bound(network, traffic)).frame_lower_bound
    if info.optimal is None and result.length == info.lower_bound:
        info.optimal = True  # a liquid schedule cannot be beaten
    return result


__all__ = ["SCHEDULERS", "plan", "round_robin", "random_order", "dsatur", "liquid", "cpsat", "ggp", "oggp", "solstice", "weighted",
           "shuffle", "pairwise", "fast", "hierarchical", "rails"]

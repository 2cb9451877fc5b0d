"""How a schedule occupies the network's resources: the resources its traffic uses, most loaded
first, and the share of each resource's slots in use in each frame. The schedule plot and the
report draw the same matrix."""

from __future__ import annotations

import numpy as np


def resources_by_load(schedule, in_time: bool = False) -> tuple[list[int], dict[int, float], float]:
    """Resources the traffic uses, most loaded first, with their loads (frames needed —
    transfers over slots, rounded up — or seconds busy when ``in_time``) and the peak load.

    Examples
    --------
    >>> from liquidsched import build_topology, half_all_to_all, plan
    >>> net = build_topology("two-switch")
    >>> rows, load, peak = resources_by_load(plan(net, half_all_to_all(net), "liquid"))
    >>> [net.resources[r] for r in rows[:2]], peak
    (['l_ab', 'l_ba'], 6)
    """
    net, traffic = schedule.network, schedule.traffic
    load: dict[int, float] = {}
    for t, s in zip(traffic, traffic.resource_sets(net)):
        for r in s:
            load[r] = load.get(r, 0) + (t.size_bytes / net.resource_capacity[r] if in_time else 1)
    if not in_time:
        load = {r: -(-n // net.resource_slots[r]) for r, n in load.items()}
    peak = max(load.values(), default=0)
    return sorted(load, key=lambda r: (-load[r], r)), load, peak


def slot_shares(schedule, rows: list[int]) -> np.ndarray:
    """The share of each resource of ``rows`` (indices) in use in each frame: the pieces crossing
    it over its slots, one row per resource and one column per frame."""
    net, traffic = schedule.network, schedule.traffic
    index = traffic.index
    sets = traffic.resource_sets(net)
    row_of = {r: i for i, r in enumerate(rows)}
    share = np.zeros((len(rows), max(schedule.length, 1)))
    for f, frame in enumerate(schedule.frames):
        for piece in frame:
            for r in sets[index[piece.transfer]]:
                if r in row_of:
                    share[row_of[r], f] += 1 / net.resource_slots[r]
    return share

"""Conflict-graph colouring schedulers (paper 000, Annex A).

Transfers are vertices, congestion is an edge, a colour is a timeframe; a resource with slots
takes as many transfers of one colour as it has slots. DSatur (Brélaz) is the fast greedy
heuristic the paper compares liquid schedules with; it runs in the Rust core.
"""

from __future__ import annotations

from .. import _core
from ..network import Network
from ..schedule import Schedule, ScheduleInfo
from ..traffic import Traffic


def dsatur(net: Network, traffic: Traffic) -> Schedule:
    """DSatur colouring of the conflict graph: each colour class is a frame.

    Examples
    --------
    >>> from liquidsched.topologies import two_switch
    >>> from liquidsched.traffic import half_all_to_all
    >>> net = two_switch()
    >>> 6 <= dsatur(net, half_all_to_all(net)).length <= 7
    True
    """
    paths = traffic.resource_lists(net)
    frames = _core.dsatur(paths, len(net.resources), slots=net.resource_slots)
    return Schedule.from_indices(net, traffic, frames, ScheduleInfo("dsatur"))

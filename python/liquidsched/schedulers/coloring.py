"""Conflict-graph colouring schedulers (paper 000, Annex A).

Transfers are vertices, congestion is an edge, a colour is a timeframe; a resource with slots
takes as many transfers of one colour as it has slots. DSatur (Brélaz) is the fast greedy
heuristic the paper compares liquid schedules with; it runs in the Rust core, on the transfers'
routes as columns, and gives the schedule as a column (a million transfers take no Python object
each).
"""

from __future__ import annotations

import numpy as np

from ..network import Network
from ..schedule import Schedule, ScheduleInfo
from ..traffic import Traffic
from ..transfer_routes import cached_transfer_routes


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
    routes = cached_transfer_routes(net, traffic)
    frame_of = routes.core.dsatur_frames(net.resource_slots)
    return Schedule.from_frame_of(net, traffic, np.frombuffer(frame_of, dtype="<u4"), ScheduleInfo("dsatur"))

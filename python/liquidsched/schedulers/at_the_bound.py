"""What the liquid scheduler reports for a schedule that reaches the frame bound without its
search (round-robin's shifts, a torus design, an orbit assignment): liquid, optimal by the
bound, no search spent."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import numpy as np

from ..schedule import Schedule, ScheduleInfo

if TYPE_CHECKING:
    from ..network import Network
    from ..traffic import Traffic


def info_at_the_bound(frame_bound: int, source: str, parameters: dict[str, Any],
                      symmetry_order: int = 1) -> ScheduleInfo:
    """The ``ScheduleInfo`` of the liquid scheduler's answer from ``source`` with as many frames
    as ``frame_bound``: the same statistics as a search's, all zero but the bound.

    Examples
    --------
    >>> info = info_at_the_bound(6, "round-robin", {"optimize": True})
    >>> info.optimal, info.stats["gap"], info.stats["source"]
    (True, 0, 'round-robin')
    """
    return ScheduleInfo(
        "liquid", parameters=parameters, lower_bound=frame_bound, optimal=True,
        stats={"nodes_explored": 0, "frames_tried": 0, "memo_hits": 0, "restarts": 0, "memory_bytes": 0,
               "memo_limit_bytes": 0, "symmetry_order": symmetry_order, "proven_lower_bound": frame_bound,
               "gap": 0, "stopped_by": None, "source": source})


def is_all_to_all_size(traffic: Traffic, hosts: int) -> bool:
    """Whether ``traffic`` has as many transfers as the all-to-all of ``hosts`` hosts and no
    host pair twice (which pairs is checked when a construction maps its frames to them),
    counted on the traffic's columns.

    Examples
    --------
    >>> from liquidsched.topologies.torus import mesh
    >>> from liquidsched.traffic import all_to_all
    >>> net = mesh((2, 2))
    >>> is_all_to_all_size(all_to_all(net), 4), is_all_to_all_size(all_to_all(net), 3)
    (True, False)
    """
    if len(traffic) != hosts * (hosts - 1):
        return False
    keys = traffic.src_index.astype(np.int64) * len(traffic.host_table) + traffic.dst_index
    return len(np.unique(keys)) == len(traffic)


def checked_at_the_bound(net: Network, traffic: Traffic, frames: list[list[int]], frame_bound: int, source: str,
                         time_limit: float | None, symmetry_order: int) -> Schedule | None:
    """The schedule of ``frames`` (transfer indices) built by ``source`` without a search (a
    torus design, an orbit assignment), or None unless it has exactly ``frame_bound`` frames and
    the validator finds nothing wrong with it: nothing such a construction gives is trusted.

    Examples
    --------
    >>> from liquidsched.topologies import two_switch
    >>> from liquidsched.traffic import half_all_to_all
    >>> net = two_switch()
    >>> traffic = half_all_to_all(net)
    >>> checked_at_the_bound(net, traffic, [[i] for i in range(len(traffic))], 6, "test", None, 1) is None
    True
    """
    from ..validation import validate

    if len(frames) != frame_bound:
        return None
    parameters = {} if time_limit is None else {"time_limit": time_limit}
    info = info_at_the_bound(frame_bound, source, parameters, symmetry_order=symmetry_order)
    schedule = Schedule.from_indices(net, traffic, frames, info)
    return schedule if not validate(schedule) else None

"""What the liquid scheduler reports for a schedule that reaches the frame bound without its
search (round-robin's shifts, a torus design): liquid, optimal by the bound, no search spent."""

from __future__ import annotations

from typing import Any

from ..schedule import ScheduleInfo


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

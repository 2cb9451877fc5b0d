"""Exact liquid schedules (papers 000 and 001): the search runs in the Rust core.

The search works in frames of the slot model: a resource carries up to its slots' worth of
transfers in a frame. A schedule with as many frames as the frame bound keeps every bottleneck
busy in every frame; on networks whose transfers all take as long in their slots it is liquid
(its time is Λ). The search finds one, or proves that none exists and then finds the fewest
frames (paper 000 Fig. 7). With a budget it returns the best schedule it knows, the proven
lower bound and the gap.
"""

from __future__ import annotations

from .. import _core
from ..errors import InputError
from ..network import Network
from ..schedule import Schedule, ScheduleInfo
from ..traffic import Traffic

#: Search-space reductions of paper 000 that can be switched off (all on by default), plus the
#: two of liquidsched: ``memo`` (sub-traffics known to have no schedule) and ``guided`` (branching
#: order).
REDUCTIONS = ("blank", "idle", "skeleton", "reduced", "full", "memo", "guided")


def check_budget(value: float | int | None, name: str) -> None:
    """Refuse a budget that is not a non-negative number (None means no budget)."""
    if value is not None and (isinstance(value, bool) or not value >= 0):
        raise InputError(f"{name} must be a non-negative number, got {value!r}")


def liquid(net: Network, traffic: Traffic, time_limit: float | None = None, node_limit: int | None = None,
           optimize: bool = True, **reductions: bool) -> Schedule:
    """A liquid schedule of ``traffic``, or the optimal one when no liquid schedule exists.

    Parameters
    ----------
    time_limit, node_limit
        Budgets (seconds, category nodes). When one runs out, the best schedule known is
        returned: the deepest partial schedule of the search completed by DSatur, or DSatur's.
    optimize
        When no liquid schedule exists, go on to find and prove the optimal length.
    **reductions
        Any of :data:`REDUCTIONS` set to False switches that reduction off.

    Returns
    -------
    Schedule
        ``info.optimal`` is True when the length is proven optimal; ``info.stats`` holds
        ``nodes_explored``, ``frames_tried``, ``memo_hits``, ``proven_lower_bound``, ``gap``,
        ``stopped_by`` (None, "nodes" or "time") and ``source`` ("search", "search+dsatur" or
        "dsatur").

    Examples
    --------
    >>> from liquidsched.topologies import two_switch
    >>> from liquidsched.traffic import half_all_to_all
    >>> net = two_switch()
    >>> s = liquid(net, half_all_to_all(net))
    >>> s.length, s.liquid, s.info.optimal
    (6, True, True)
    """
    unknown = set(reductions) - set(REDUCTIONS)
    if unknown:
        raise InputError(f"unknown reduction {sorted(unknown)[0]!r} (known: {', '.join(REDUCTIONS)})")
    check_budget(time_limit, "time limit")
    check_budget(node_limit, "node limit")
    paths = traffic.resource_lists(net)
    raw = _core.liquid_schedule(paths, len(net.resources), slots=net.resource_slots, time_limit=time_limit,
                                node_limit=None if node_limit is None else int(node_limit),
                                optimize=optimize, **reductions)
    parameters: dict = {"optimize": optimize, **reductions}
    if time_limit is not None:
        parameters["time_limit"] = time_limit
    if node_limit is not None:
        parameters["node_limit"] = node_limit
    info = ScheduleInfo(
        "liquid",
        parameters=parameters,
        lower_bound=raw["duration"],
        optimal=raw["optimal"],
        stats={
            "nodes_explored": raw["nodes"],
            "frames_tried": raw["frames_tried"],
            "memo_hits": raw["memo_hits"],
            "restarts": raw["restarts"],
            "proven_lower_bound": raw["lower_bound"],
            "gap": len(raw["frames"]) - raw["lower_bound"],
            "stopped_by": raw["stopped_by"],
            "source": raw["source"],
        },
    )
    return Schedule.from_indices(net, traffic, raw["frames"], info)

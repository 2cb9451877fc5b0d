"""liquidsched: topology-aware scheduling of collective data exchanges.

Model a network and a traffic, compute the bound (liquid throughput), build a schedule, validate
it, and compare schedules.

Examples
--------
>>> import liquidsched as ls
>>> net = ls.build_topology("two-switch")
>>> traffic = ls.half_all_to_all(net)
>>> bound = ls.compute_bound(net, traffic)
>>> bound.duration, bound.bottlenecks
(6, ['l_ab', 'l_ba'])
>>> schedule = ls.plan(net, traffic, "round-robin")
>>> schedule.length, ls.validate(schedule)
(7, [])
"""

from __future__ import annotations

# Nothing is imported here, not even typing: the command line's entry point is loaded through
# this package, and Ctrl-C is only caught once that entry point runs (liquidsched.cli.main).
TYPE_CHECKING = False

#: Where each public name lives. Modules are imported on first use (PEP 562), so that a command
#: such as ``liquidsched --help`` does not pay for numpy and the schedulers it does not need.
_EXPORTS = {
    "bounds": ("Bound", "compute_bound"),
    "errors": ("InputError", "LiquidschedError", "ProblemTooLargeError", "RoutingError", "ScheduleFormatError",
               "ScheduleInvalidError", "TopologyError", "TrafficError"),
    "io.topology": ("load_topology", "save_topology"),
    "network": ("Link", "Network", "Node"),
    "routing": ("ExplicitPaths", "NextHop", "ShortestPath"),
    "schedule": ("Piece", "Schedule", "ScheduleInfo"),
    "schedulers": ("SCHEDULERS", "plan"),
    "sweep": ("run_sweep",),
    "topologies": ("BUILDERS", "build_topology", "resolve_topology"),
    "traffic": ("Traffic", "Transfer", "all_to_all", "allocation_hosts", "gather", "half_all_to_all",
                "load_traffic", "make_traffic", "permutation", "random_matrix", "scatter"),
    "validation": ("Violation", "check", "validate"),
}
_MODULE_OF = {name: module for module, names in _EXPORTS.items() for name in names}


def __getattr__(name: str) -> Any:
    module = _MODULE_OF.get(name)
    if module is None:
        raise AttributeError(f"module 'liquidsched' has no attribute {name!r}")
    from importlib import import_module

    value = getattr(import_module(f".{module}", __name__), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(_MODULE_OF))


if TYPE_CHECKING:  # pragma: no cover
    from typing import Any

    from .bounds import Bound, compute_bound
    from .errors import (InputError, LiquidschedError, ProblemTooLargeError, RoutingError, ScheduleFormatError,
                         ScheduleInvalidError, TopologyError, TrafficError)
    from .io.topology import load_topology, save_topology
    from .network import Link, Network, Node
    from .routing import ExplicitPaths, NextHop, ShortestPath
    from .schedule import Piece, Schedule, ScheduleInfo
    from .schedulers import SCHEDULERS, plan
    from .sweep import run_sweep
    from .topologies import BUILDERS, build_topology, resolve_topology
    from .traffic import (Traffic, Transfer, all_to_all, allocation_hosts, gather, half_all_to_all, load_traffic,
                          make_traffic, permutation, random_matrix, scatter)
    from .validation import Violation, check, validate

__version__ = "0.1.0"

__all__ = [
    "Bound", "compute_bound", "InputError", "LiquidschedError", "ProblemTooLargeError", "RoutingError",
    "ScheduleFormatError", "ScheduleInvalidError", "TopologyError", "TrafficError", "load_topology",
    "save_topology", "Link", "Network", "Node", "ExplicitPaths", "NextHop", "ShortestPath", "Piece",
    "Schedule", "ScheduleInfo", "SCHEDULERS", "plan", "run_sweep", "BUILDERS", "build_topology",
    "resolve_topology", "Traffic", "Transfer", "all_to_all", "allocation_hosts", "gather",
    "half_all_to_all", "load_traffic", "make_traffic", "permutation", "random_matrix", "scatter",
    "Violation", "check", "validate",
]

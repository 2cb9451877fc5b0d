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

from .bounds import Bound, compute_bound
from .errors import (
    InputError,
    LiquidschedError,
    ProblemTooLargeError,
    RoutingError,
    ScheduleFormatError,
    ScheduleInvalidError,
    TopologyError,
    TrafficError,
)
from .io.topology import load_topology, save_topology
from .network import Link, Network, Node
from .routing import ExplicitPaths, NextHop, ShortestPath
from .schedule import Piece, Schedule, ScheduleInfo
from .schedulers import SCHEDULERS, plan
from .sweep import run_sweep
from .topologies import BUILDERS, build_topology, resolve_topology
from .traffic import (
    Traffic,
    Transfer,
    all_to_all,
    allocation_hosts,
    gather,
    half_all_to_all,
    load_traffic,
    make_traffic,
    permutation,
    random_matrix,
    scatter,
)
from .validate import Violation, check, validate

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

"""Each transfer's route as columns, for traffics of millions of transfers: its link up, its link
down and the run of resources between its switch and its target, as the network's route table
composes them (:class:`liquidsched.network.RouteTable`), and the slot rate of its slowest
resource. Routes the table does not compose are runs of their own, asked of the network once per
host pair. The core takes these columns as they are (``liquidsched_core::traffic``).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from fractions import Fraction
from functools import cached_property
from typing import TYPE_CHECKING

import numpy as np

from . import _core
from .network import Network, RouteTable

if TYPE_CHECKING:  # only annotations: the traffic builds its resource lists from these routes
    from .traffic import Traffic


@dataclass(frozen=True)
class TransferRoutes:
    """Transfer ``t`` crosses ``up[t]`` and ``down[t]`` (none where -1) and the resources
    ``run_resources[run_offsets[p]:run_offsets[p + 1]]`` of run ``p = run[t]`` (none where -1);
    ``slowest[t]`` is the rank of its slowest slot rate in ``net.slot_rate_ranks()``; the
    network has ``resources`` resources."""

    up: np.ndarray
    down: np.ndarray
    run: np.ndarray
    run_offsets: np.ndarray
    run_resources: np.ndarray
    slowest: np.ndarray

    resources: int

    @cached_property
    def core(self) -> _core.TransferRoutes:
        """The routes as the core holds them (made once): what the core's algorithms on a
        traffic's routes are methods of."""
        columns = (np.ascontiguousarray(a, dtype="<i8").tobytes()
                   for a in (self.up, self.down, self.run, self.run_offsets, self.run_resources))
        return _core.TransferRoutes(*columns, self.resources)


def transfer_routes(net: Network, traffic: Traffic) -> TransferRoutes:
    """The route of every transfer of ``traffic`` (checked on ``net``) as columns.

    Examples
    --------
    >>> from liquidsched.topologies import two_switch
    >>> from liquidsched.traffic import Traffic, Transfer
    >>> net = two_switch()
    >>> routes = transfer_routes(net, Traffic([Transfer("t1", "r4")]))
    >>> sorted(net.resources[r] for r in routes_of(routes, 0)) == sorted(net.route("t1", "r4"))
    True
    """
    traffic.check(net)
    hosts = HostRoutes(net, traffic)
    src, dst = traffic.src_index.astype(np.int64), traffic.dst_index.astype(np.int64)
    pair, composed = hosts.pairs(src, dst)
    table = net.route_table()
    up = np.where(composed, hosts.up_resource[src], -1)
    down = np.where(composed, hosts.down_resource[dst], -1)
    run = np.where(composed, pair, -1)
    slowest = np.where(composed, hosts.slowest(src, dst, pair), hosts.n_rates)
    offsets, resources = table.pair_offsets.astype(np.int64), table.pair_resources.astype(np.int64)
    alone = np.flatnonzero(~composed)
    if len(alone):
        offsets, resources = _add_own_runs(net, traffic, alone, run, slowest, offsets, resources)
    return TransferRoutes(up, down, run, offsets, resources, slowest, len(net.resources))


def cached_transfer_routes(net: Network, traffic: Traffic) -> TransferRoutes:
    """:func:`transfer_routes`, computed once per traffic and network."""
    cached = traffic.derived.get("transfer_routes")
    if cached is None or cached[0] is not net:
        cached = traffic.derived["transfer_routes"] = (net, transfer_routes(net, traffic))
    return cached[1]


def _add_own_runs(net: Network, traffic: Traffic, alone: np.ndarray, run: np.ndarray, slowest: np.ndarray,
                  offsets: np.ndarray, resources: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Give each host pair of the ``alone`` transfers its route as a run of its own, after the
    table's (``run`` and ``slowest`` are set in place), and return the runs' columns."""
    n = len(traffic.host_table)
    key = traffic.src_index[alone].astype(np.int64) * n + traffic.dst_index[alone]
    pairs, which = np.unique(key, return_inverse=True)
    hosts = traffic.host_table
    rate_rank = net.slot_rate_ranks()[1]
    paths = [sorted(net.path_resources(hosts[k // n], hosts[k % n])) for k in pairs.tolist()]
    first = len(offsets) - 1 if len(offsets) else 0
    run[alone] = first + which
    slowest[alone] = np.array([min(rate_rank[r] for r in path) for path in paths], dtype=np.int64)[which]
    lengths = np.array([len(path) for path in paths], dtype=np.int64)
    start = offsets[-1] if len(offsets) else 0
    own = start + np.cumsum(lengths)
    offsets = np.concatenate([offsets if len(offsets) else np.zeros(1, np.int64), own])
    resources = np.concatenate([resources, np.array([r for path in paths for r in path], dtype=np.int64)])
    return offsets, resources


def routes_of(routes: TransferRoutes, t: int) -> list[int]:
    """The resources transfer ``t`` crosses, each once, as the core walks them."""
    path = [int(r) for r in (routes.up[t], routes.down[t]) if r >= 0]
    if len(path) == 2 and path[0] == path[1]:
        path.pop()
    if routes.run[t] >= 0:
        p = routes.run[t]
        path += routes.run_resources[routes.run_offsets[p]:routes.run_offsets[p + 1]].tolist()
    return path


def resource_lists_of(routes: TransferRoutes) -> list[list[int]]:
    """The resources every transfer crosses, each once and in increasing order: what
    :meth:`liquidsched.traffic.Traffic.resource_lists` gives, made from the columns (the runs
    are split once, not walked per transfer)."""
    runs = [sorted(run.tolist()) for run in np.split(routes.run_resources, routes.run_offsets[1:-1])] \
        if len(routes.run_offsets) > 1 else []
    lists = []
    for up, down, run in zip(routes.up.tolist(), routes.down.tolist(), routes.run.tolist()):
        path = list(runs[run]) if run >= 0 else []
        for end in (up, down):
            if end >= 0 and end not in path:
                path.append(end)
        path.sort()
        lists.append(path)
    return lists


def time_weights(net: Network, slowest: np.ndarray) -> tuple[np.ndarray, int] | None:
    """Each transfer's time per byte in its slots as a whole number of units, and the units in
    a second: ``size * weight / scale`` seconds, exactly. None when the units do not fit in 64
    bits (the rates' common denominator is too large)."""
    rate_values, _ = net.slot_rate_ranks()
    inverse = [1 / Fraction(v) for v in rate_values]
    scale = math.lcm(*(q.denominator for q in inverse)) if inverse else 1
    weight = [q * scale for q in inverse]
    if scale >= 2**64 or any(w >= 2**64 for w in weight):
        return None
    # A rank past the rates (no resource on the route) takes no time.
    per_rank = np.array([int(w) for w in weight] + [0], dtype=np.uint64)
    return per_rank[slowest], scale


class HostRoutes:
    """Each host of a traffic's host table on a network, as composed routes see it: its link up
    and down as resources and their slot-rate ranks, its switch and its target, and the
    (switch, target) pairs between them."""

    def __init__(self, net: Network, traffic: Traffic) -> None:
        table = net.route_table()
        rate_values, rank_list = net.slot_rate_ranks()
        rank = np.array(rank_list + [len(rate_values)], dtype=np.int64)  # the last: no resource
        self.n_rates = len(rate_values)
        on_net = traffic.network_hosts(net)
        known = on_net >= 0
        self.up_switch = np.where(known, table.up_switch[on_net], -1)
        self.down_target = np.where(known, table.down_target[on_net], -1)
        self.up_resource = np.where(self.up_switch >= 0, table.up_resource[on_net], -1)
        self.down_resource = np.where(self.down_target >= 0, table.down_resource[on_net], -1)
        self.up_rank, self.down_rank = rank[self.up_resource], rank[self.down_resource]
        n, m = len(table.switches), len(table.targets)
        # One entry at least: transfers not composed look up pair 0 before they are set aside.
        self.pair_known = table.pair_known if n else np.zeros(1, dtype=bool)
        self.pair_rank = _pair_min_rank(table, rank[:-1], self.n_rates) if n else np.zeros(1, dtype=np.int64)
        # A transfer's pair (switch, target) is pair_up[src] + pair_down[dst]: one gather an end.
        self.pair_up = np.maximum(self.up_switch, 0) * m
        self.pair_down = np.maximum(self.down_target, 0)
        # With return_counts, np.unique does not load numpy.ma to ask whether the array is masked
        # (some 10 ms of every command's start-up).
        homes_up = np.unique(self.up_switch, return_counts=True)[0]
        homes_down = np.unique(self.down_target, return_counts=True)[0]
        self.all_composed = bool(homes_up.min() >= 0 and homes_down.min() >= 0
                                 and table.pair_known[(homes_up[:, None] * m + homes_down).ravel()].all())

    def pairs(self, src: np.ndarray, dst: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Each transfer's (switch, target) pair, 0 where its route is not composed, and whether
        it is (both ends composed, and the pair routed)."""
        pair = self.pair_up[src] + self.pair_down[dst]
        composed = (self.up_switch[src] >= 0) & (self.down_target[dst] >= 0)
        pair[~composed] = 0
        composed &= self.pair_known[pair]
        return pair, composed

    def slowest(self, src: np.ndarray, dst: np.ndarray, pair: np.ndarray) -> np.ndarray:
        """Each composed transfer's slot rate, as the rank of the slowest on its route."""
        return np.minimum(np.minimum(self.up_rank[src], self.down_rank[dst]), self.pair_rank[pair])




def _pair_min_rank(table: RouteTable, rank: np.ndarray, n_rates: int) -> np.ndarray:
    """The smallest slot-rate rank between each pair of switches (``n_rates`` when none)."""
    lengths = np.diff(table.pair_offsets)
    result = np.full(len(lengths), n_rates, dtype=np.int64)
    some = np.flatnonzero(lengths)
    if len(some):
        # Empty pairs between two starts add nothing, so each reduction spans one pair.
        result[some] = np.minimum.reduceat(rank[table.pair_resources], table.pair_offsets[some])
    return result

"""Sub-topology sweep (paper 000 §7, paper 001 §2).

For a network whose hosts hang off switches, enumerate every allocation (``n_i`` hosts on the
i-th switch with hosts, ``0 <= n_i <=`` its host count), compute the liquid throughput of the
half all-to-all among the allocated hosts, and group allocations of equal (host count, liquid
throughput) into classes. The enumeration runs in the Rust core; this module derives the core's
closed-form model from the network and checks that the model holds for every host pair.
"""

from __future__ import annotations

import itertools
import time
from dataclasses import dataclass
from fractions import Fraction
from typing import Any, Callable

from . import _core
from .errors import TopologyError
from .network import Network


@dataclass(frozen=True)
class SweepClass:
    """Allocations with the same host count and liquid throughput."""

    hosts: int
    liquid_throughput_Bps: Fraction
    crossbar_throughput_Bps: Fraction
    count: int
    allocation: tuple[int, ...]

    def to_dict(self) -> dict[str, Any]:
        return {"hosts": self.hosts, "liquid_throughput_Bps": float(self.liquid_throughput_Bps),
                "crossbar_throughput_Bps": float(self.crossbar_throughput_Bps),
                "count": self.count, "allocation": list(self.allocation)}


@dataclass(frozen=True)
class SweepResult:
    network: str
    switches: list[str]
    allocations: int
    classes: list[SweepClass]
    time_s: float

    def to_dict(self) -> dict[str, Any]:
        return {"network": self.network, "switches": self.switches, "allocations": self.allocations,
                "traffic": "half-all-to-all", "time_s": self.time_s,
                "classes": [c.to_dict() for c in self.classes]}

    def best_allocation(self, hosts: int) -> SweepClass:
        """The class with the highest liquid throughput among allocations of ``hosts`` hosts."""
        candidates = [c for c in self.classes if c.hosts == hosts]
        if not candidates:
            raise TopologyError(f"no allocation has {hosts} hosts")
        return max(candidates, key=lambda c: c.liquid_throughput_Bps)


@dataclass(frozen=True)
class SweepModel:
    """The closed form the core evaluates: access links per host, fabric resources per switch pair."""

    switches: list[str]
    #: access[i][k]: (capacity, "up"|"down"|"both") of the k-th host of switch i
    access: list[list[list[tuple[int, str]]]]
    #: (capacity, [(i, j), ...]): a fabric resource and the switch pairs routed through it
    fabric: list[tuple[int, list[tuple[int, int]]]]
    include_self: bool


def _whole_capacity(net: Network, r: int) -> int:
    # The core compares loads exactly as integer ratios; capacities are whole bytes/s in practice.
    cap = round(net.resource_capacity[r])
    if cap < 1:
        raise TopologyError(f"sweep: resource {net.resources[r]} has a capacity under 1 byte/s")
    return cap


def sweep_model(net: Network, include_self: bool = True) -> SweepModel:
    """Derive the sweep model of ``net`` and check it against every route.

    Raises
    ------
    TopologyError
        if a host does not both send and receive, shares an access link, or if routes depend on
        more than the pair of switches.
    """
    groups = net.host_groups()
    for hosts in groups.values():
        for h in hosts:
            if net.nodes[h].role != "both":
                raise TopologyError(f"sweep: host {h} does not both send and receive (role {net.nodes[h].role})")
    switch_of = {h: i for i, hosts in enumerate(groups.values()) for h in hosts}
    up: dict[str, frozenset[int]] = {}
    down: dict[str, frozenset[int]] = {}
    owner: dict[int, str] = {}
    for h in switch_of:
        up[h] = frozenset(net.link_resource[net.link_between(h, w)] for w in net.out_neighbours(h))
        down[h] = frozenset(net.link_resource[net.link_between(w, h)] for w in net.in_neighbours(h))
        for r in up[h] | down[h]:
            if owner.setdefault(r, h) != h:
                raise TopologyError(f"sweep: hosts {owner[r]} and {h} share resource {net.resources[r]}")
    firsts = [hosts[0] for hosts in groups.values()]
    pair_fabric = {}
    for i, s in enumerate(firsts):
        for j, d in enumerate(firsts):
            pair_fabric[(i, j)] = net.path_resources(s, d) - up[s] - down[d]
    for s, i in switch_of.items():
        for d, j in switch_of.items():
            if net.path_resources(s, d) != up[s] | pair_fabric[(i, j)] | down[d]:
                raise TopologyError(
                    f"sweep: the route {s} → {d} is not the route between their switches; the sweep "
                    "needs routes that depend only on the switches")
    users: dict[int, list[tuple[int, int]]] = {}
    for pair, resources in pair_fabric.items():
        for r in resources:
            users.setdefault(r, []).append(pair)
    access = []
    for hosts in groups.values():
        group = []
        for h in hosts:
            links = [(_whole_capacity(net, r), "both") for r in up[h] & down[h]]
            links += [(_whole_capacity(net, r), "up") for r in up[h] - down[h]]
            links += [(_whole_capacity(net, r), "down") for r in down[h] - up[h]]
            group.append(links)
        access.append(group)
    fabric = [(_whole_capacity(net, r), sorted(pairs)) for r, pairs in sorted(users.items())]
    return SweepModel(list(groups), access, fabric, include_self)


def run_sweep(net: Network, include_self: bool = True,
              progress: Callable[[int, int], None] | None = None) -> SweepResult:
    """Sweep every allocation of ``net`` and return the classes, sorted by hosts then throughput.

    Examples
    --------
    >>> from liquidsched.topologies import build_topology
    >>> r = run_sweep(build_topology("hierarchical:d1=2,d2=2"))
    >>> r.allocations, len(r.classes)
    (9, 4)
    """
    model = sweep_model(net, include_self)
    start = time.perf_counter()
    raw, total = _core.sweep_classes(model.access, model.fabric, include_self, progress)
    elapsed = time.perf_counter() - start
    classes = [SweepClass(c["hosts"], Fraction(*c["liquid_throughput"]), Fraction(*c["crossbar_throughput"]),
                          c["count"], tuple(c["allocation"])) for c in raw]
    return SweepResult(net.name, model.switches, total, classes, elapsed)


def sweep_python(model: SweepModel) -> dict[tuple[int, Fraction], tuple[int, tuple[int, ...]]]:
    """The same sweep as a plain Python loop: the reference the core is measured against.

    Returns ``{(hosts, liquid throughput): (count, first allocation)}``.
    """
    classes: dict[tuple[int, Fraction], tuple[int, tuple[int, ...]]] = {}
    own = 0 if model.include_self else 1
    for alloc in itertools.product(*(range(len(g) + 1) for g in model.access)):
        n = sum(alloc)
        transfers = n * n - own * n
        if transfers == 0:
            continue
        per = {"up": n - own, "down": n - own, "both": 2 * n - 1 - own}
        # The largest load count / cap, compared exactly by cross-multiplication.
        best_count, best_cap = 0, 1
        for i, k in enumerate(alloc):
            for host in model.access[i][:k]:
                for cap, direction in host:
                    if per[direction] * best_cap > best_count * cap:
                        best_count, best_cap = per[direction], cap
        for cap, pairs in model.fabric:
            count = 0
            for i, j in pairs:
                count += alloc[i] * alloc[j] - (own * alloc[i] if i == j else 0)
            if count * best_cap > best_count * cap:
                best_count, best_cap = count, cap
        key = (n, Fraction(transfers * best_cap, best_count))
        count, first = classes.get(key, (0, alloc))
        classes[key] = (count + 1, first)
    return classes

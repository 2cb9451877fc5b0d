"""k-ary fat trees with up/down routing."""

from __future__ import annotations

from ..errors import TopologyError
from ..network import Network
from ..routing import NextHop
from ._build import cable, hosts, switches


def fat_tree(k: int = 4, capacity_Bps: float = 1.25e9, oversubscription: float = 1.0,
             hosts_per_edge: int = 0) -> Network:
    """A k-ary fat tree: k pods of k/2 edge and k/2 aggregation switches, (k/2)² core switches,
    k/2 hosts per edge switch (k³/4 hosts).

    Oversubscription at the edge divides the capacity of the edge-to-aggregation links by
    ``oversubscription`` (2 gives 2:1). ``hosts_per_edge`` (0: k/2) oversubscribes by host count
    instead: k = 8 with 8 hosts per edge switch is 256 hosts at 2:1. Routing is up/down and deterministic: traffic to edge
    switch ``e{p'}.{j'}`` climbs to aggregation switch ``j' mod k/2`` of its pod and, between
    pods, to core ``(j' mod k/2)·k/2 + (p' mod k/2)``.

    Examples
    --------
    >>> net = fat_tree(4)
    >>> len(net.hosts()), len(net.switches())
    (16, 20)
    >>> net.route("h0.0.0", "h1.1.0")
    ('h0.0.0>e0.0', 'e0.0>a0.1', 'a0.1>c3', 'c3>a1.1', 'a1.1>e1.1', 'e1.1>h1.1.0')
    """
    if k < 2 or k % 2:
        raise TopologyError(f"fat-tree: k must be even and at least 2, got {k}")
    if oversubscription < 1:
        raise TopologyError(f"fat-tree: oversubscription must be at least 1, got {oversubscription}")
    half = k // 2
    if hosts_per_edge < 0:
        raise TopologyError(f"fat-tree: hosts_per_edge must be positive, got {hosts_per_edge}")
    per_edge = hosts_per_edge or half
    edge = lambda p, j: f"e{p}.{j}"  # noqa: E731
    agg = lambda p, x: f"a{p}.{x}"  # noqa: E731
    core = lambda y: f"c{y}"  # noqa: E731
    cores = [core(y) for y in range(half * half)]
    names, links, sw = [], [], list(cores)
    for p in range(k):
        sw += [agg(p, x) for x in range(half)] + [edge(p, j) for j in range(half)]
        for x in range(half):
            for z in range(half):
                links += cable(agg(p, x), core(x * half + z), capacity_Bps)
        for j in range(half):
            for x in range(half):
                links += cable(edge(p, j), agg(p, x), capacity_Bps / oversubscription)
            for m in range(per_edge):
                names.append(f"h{p}.{j}.{m}")
                links += cable(names[-1], edge(p, j), capacity_Bps)
    table: dict[str, dict[str, str]] = {}
    for p2 in range(k):
        for j2 in range(half):
            dst, x = edge(p2, j2), j2 % half
            for p in range(k):
                for j in range(half):
                    if (p, j) != (p2, j2):
                        table.setdefault(edge(p, j), {})[dst] = agg(p, x)
                for x1 in range(half):
                    if p != p2:
                        table.setdefault(agg(p, x1), {})[dst] = core(x1 * half + p2 % half)
            for y in range(half * half):
                table.setdefault(core(y), {})[dst] = agg(p2, y // half)
    return Network(switches(sw) + hosts(names), links, NextHop(table), name="fat-tree",
                   description=f"{k}-ary fat tree, {oversubscription:g}:1 at the edge, up/down routing")

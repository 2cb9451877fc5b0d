"""k-ary fat trees, routed as their switches route them: D-mod-k by destination host, or all
traffic to an edge switch through one aggregation switch."""

from __future__ import annotations

from ..errors import TopologyError
from ..network import Network
from ..routing import TO_DESTINATION, Forwarding, ForwardingMatrix, NextHop
from ._build import cable, hosts, switches


#: the routings a fat tree is built with
ROUTINGS = ("d-mod-k", "by-edge-switch")


def fat_tree(k: int = 4, capacity_Bps: float = 1.25e9, oversubscription: float = 1.0,
             hosts_per_edge: int = 0, routing: str = "d-mod-k") -> Network:
    """A k-ary fat tree: k pods of k/2 edge and k/2 aggregation switches, (k/2)² core switches,
    k/2 hosts per edge switch (k³/4 hosts).

    Oversubscription at the edge divides the capacity of the edge-to-aggregation links by
    ``oversubscription`` (2 gives 2:1). ``hosts_per_edge`` (0: k/2) oversubscribes by host count
    instead: k = 8 with 8 hosts per edge switch is 256 hosts at 2:1.

    Routing is up/down, deterministic and by destination, as the switches' forwarding tables
    make it:

    * ``"d-mod-k"`` (the default; InfiniBand's D-mod-k, what OpenSM's ftree routing and static
      ECMP spread give): hosts are numbered in order, pod by pod, edge by edge; traffic to host
      ``d`` climbs from an edge switch to aggregation switch ``d mod k/2`` of its pod and, between
      pods, from there to core ``(d mod k/2)·k/2 + (⌊d / (k/2)⌋ mod k/2)``, then down the only
      way. Every up link then carries the traffic to an equal share of the hosts, and an
      all-to-all on a 1:1 tree is bound by the hosts' links.
    * ``"by-edge-switch"``: traffic to edge switch ``e{p'}.{j'}`` climbs to aggregation switch
      ``j' mod k/2`` of its pod and, between pods, to core ``(j' mod k/2)·k/2 + (p' mod k/2)``:
      one down link carries everything for an edge switch (k/2 times the hosts' load in an
      all-to-all).

    Examples
    --------
    >>> net = fat_tree(4)
    >>> len(net.hosts()), len(net.switches())
    (16, 20)
    >>> net.route("h0.0.0", "h1.1.0")   # host 6: aggregation 6 mod 2 = 0, core 0·2 + 3 mod 2 = 1
    ('h0.0.0>e0.0', 'e0.0>a0.0', 'a0.0>c1', 'c1>a1.0', 'a1.0>e1.1', 'e1.1>h1.1.0')
    >>> net.route("h0.0.0", "h1.1.1")   # host 7: aggregation 1, core 1·2 + 3 mod 2 = 3
    ('h0.0.0>e0.0', 'e0.0>a0.1', 'a0.1>c3', 'c3>a1.1', 'a1.1>e1.1', 'e1.1>h1.1.1')
    >>> fat_tree(4, routing="by-edge-switch").route("h0.0.0", "h1.1.0")
    ('h0.0.0>e0.0', 'e0.0>a0.1', 'a0.1>c3', 'c3>a1.1', 'a1.1>e1.1', 'e1.1>h1.1.0')
    """
    if k < 2 or k % 2:
        raise TopologyError(f"fat-tree: k must be even and at least 2, got {k}")
    if oversubscription < 1:
        raise TopologyError(f"fat-tree: oversubscription must be at least 1, got {oversubscription}")
    if routing not in ROUTINGS:
        raise TopologyError(f"fat-tree: routing must be one of {', '.join(ROUTINGS)}, got {routing!r}")
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
    shape = f"{k}-ary fat tree, {oversubscription:g}:1 at the edge"
    if routing == "by-edge-switch":
        return Network(switches(sw) + hosts(names), links, NextHop(_by_edge_switch(k)), name="fat-tree",
                       description=f"{shape}, up/down routing by edge switch")
    return Network(switches(sw) + hosts(names), links, Forwarding.from_matrix(_d_mod_k(k, per_edge, sw, names)),
                   name="fat-tree", description=f"{shape}, D-mod-k routing")


def _d_mod_k(k: int, per_edge: int, switch_names: list[str], host_names: list[str]) -> ForwardingMatrix:
    """Forwarding by destination host ``d``: up through aggregation ``d mod k/2`` and core
    ``(d mod k/2)·k/2 + (⌊d / (k/2)⌋ mod k/2)``, down the only way; built as one array
    (``switch_names`` in the builder's order: cores, then each pod's aggregation and edge
    switches)."""
    import numpy as np

    half = k // 2
    d = np.arange(len(host_names), dtype=np.int64)
    pod, edge = d // (half * per_edge), (d // per_edge) % half
    x, z = d % half, (d // half) % half
    agg_at = lambda p, a: half * half + p * k + a  # noqa: E731
    edge_at = lambda p, j: half * half + p * k + half + j  # noqa: E731
    table = np.empty((len(d), len(switch_names)), dtype=np.int32)
    # A core switch sends down to aggregation switch y div k/2 of the destination's pod.
    y = np.arange(half * half)
    table[:, :half * half] = agg_at(pod[:, None], y[None, :] // half)
    for p in range(k):
        a = np.arange(half)
        # An aggregation switch sends down in the destination's pod, else up to core a·k/2 + z.
        table[:, agg_at(p, 0):agg_at(p, half)] = np.where(
            (pod == p)[:, None], edge_at(pod, edge)[:, None], a[None, :] * half + z[:, None])
        # An edge switch delivers its own hosts and sends the others up to aggregation d mod k/2.
        mine = (pod == p)[:, None] & (edge[:, None] == a[None, :])
        table[:, edge_at(p, 0):edge_at(p, half)] = np.where(mine, TO_DESTINATION, agg_at(p, x)[:, None])
    return ForwardingMatrix(tuple(switch_names), tuple(host_names), table)


def _by_edge_switch(k: int) -> dict[str, dict[str, str]]:
    """Next-hop tables by destination edge switch: up through aggregation ``j' mod k/2`` and core
    ``(j' mod k/2)·k/2 + (p' mod k/2)`` for edge switch ``e{p'}.{j'}``."""
    half = k // 2
    edge = lambda p, j: f"e{p}.{j}"  # noqa: E731
    agg = lambda p, x: f"a{p}.{x}"  # noqa: E731
    core = lambda y: f"c{y}"  # noqa: E731
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
    return table

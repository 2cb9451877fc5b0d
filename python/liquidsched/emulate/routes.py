"""Static routes that make the emulated network carry every host pair's traffic along the
model's route.

The emulation routes by destination (``/32`` routes, hop by hop), so a route whose next hop
depends on the source is refused. A pair the model does not route (a receiver answering a
sender: acknowledgements, barriers between two senders) takes the shortest way over the cables
in either direction, following the routes already set.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from ..errors import TopologyError
from ..network import Network
from ..routing import hop_distances

if TYPE_CHECKING:
    from .addressing import Cable, EmulationPlan


def host_path(net: Network, src: str, dst: str) -> list[str] | None:
    """The model's node sequence from ``src`` to ``dst`` (the network's checked route), or None
    when it has none."""
    try:
        links = net.route(src, dst)
    except TopologyError:
        return None
    return [src] + [net.links[l].dst for l in links]


def add_routes(plan: EmulationPlan, cables: dict[frozenset[str], Cable]) -> None:
    """Destination routes at every node: the model's routes first, then the others."""
    net = plan.network
    hosts = net.hosts()
    unrouted = []
    for s in hosts:
        for d in hosts:
            if s != d:
                nodes = host_path(net, s, d)
                if nodes is None:
                    unrouted.append((s, d))
                else:
                    for u, v in zip(nodes, nodes[1:]):
                        _set_route(plan, cables, u, d, v)
    neighbours: dict[str, list[str]] = {n: [] for n in net.nodes}
    for c in cables.values():
        neighbours[c.a].append(c.b)
        neighbours[c.b].append(c.a)
    distances: dict[str, dict[str, int]] = {}
    for s, d in unrouted:
        if d not in distances:
            # Over cables in either direction, forwarding only through the nodes that forward.
            distances[d] = hop_distances(d, neighbours.__getitem__, net.forwards)
        dist = distances[d]
        u = s
        while u != d:
            entry = plan.routes[u].get(plan.address[d])
            if entry is not None:
                u = entry[1]
                continue
            options = [v for v in neighbours[u] if v in dist and dist[v] == dist.get(u, 0) - 1]
            if u not in dist or not options:
                raise TopologyError(f"hosts {s} and {d} are not connected")
            v = min(options, key=net.node_index)
            _set_route(plan, cables, u, d, v)
            u = v


def _set_route(plan: EmulationPlan, cables: dict[frozenset[str], Cable], u: str, d: str, v: str) -> None:
    table, dst = plan.routes[u], plan.address[d]
    cable = cables[frozenset((u, v))]
    if dst in table and table[dst] != (cable.name, v):
        raise TopologyError(f"at {u}, traffic to {d} leaves for {table[dst][1]} or for {v} depending on its "
                            "source: the emulation routes by destination only")
    table[dst] = (cable.name, v)


"""Static, deterministic routing policies.

A policy answers one question: which nodes does a message from host ``src`` to host ``dst``
cross? Every answer is then checked by :func:`check_route` in one place, whatever the policy.

* :class:`ShortestPath` — fewest hops; ties broken by the order in which nodes are declared.
* :class:`NextHop` — a switch-level next-hop table, as the Swiss-T1 table of paper 000, Fig. 10:
  ``table[s][t]`` is the switch after ``s`` on the way to switch ``t``; a missing entry means
  the direct link ``s → t``.
* :class:`ExplicitPaths` — the node sequence of every (src, dst) pair, given by the user.
"""

from __future__ import annotations

from collections import deque
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Mapping

from .errors import RoutingError

if TYPE_CHECKING:  # pragma: no cover
    from .network import Network


@dataclass(frozen=True)
class ShortestPath:
    """Shortest path in hops, ties broken by node declaration order. Hosts never forward."""

    policy = "shortest-path"

    def route_nodes(self, net: Network, src: str, dst: str) -> list[str]:
        dist = _distances_to(net, dst)
        nodes = [src]
        cur = src
        if src == dst:
            # A host reaches itself through a neighbouring switch (the Swiss-T1 convention).
            options = [w for w in net.out_neighbours(src) if net.is_switch(w) and w in dist]
            if not options:
                raise RoutingError(f"routing: no route from {src} to itself through a switch")
            cur = min(options, key=lambda w: (dist[w], net.node_index(w)))
            nodes.append(cur)
        while cur != dst:
            if cur not in dist:
                raise RoutingError(f"routing: no route from {src} to {dst}")
            options = [
                w for w in net.out_neighbours(cur)
                if dist.get(w) == dist[cur] - 1 and (w == dst or net.is_switch(w))
            ]
            cur = min(options, key=net.node_index)
            nodes.append(cur)
        return nodes


def _distances_to(net: Network, dst: str) -> dict[str, int]:
    """Hop distance of every node that can reach ``dst`` through switches only."""
    cache = net._distance_cache
    if dst in cache:
        return cache[dst]
    dist = {dst: 0}
    queue = deque([dst])
    while queue:
        v = queue.popleft()
        for u in net.in_neighbours(v):
            if u not in dist:
                dist[u] = dist[v] + 1
                if net.is_switch(u):
                    queue.append(u)
    cache[dst] = dist
    return dist


@dataclass(frozen=True)
class NextHop:
    """Switch-level next-hop table: ``table[s][t]`` is the next switch from ``s`` towards ``t``."""

    table: Mapping[str, Mapping[str, str]] = field(default_factory=dict)
    policy = "next-hop"

    def check_table(self, net: Network) -> None:
        """Every switch the table names exists, and every next hop is a neighbour."""
        for s, row in self.table.items():
            if not net.is_switch(s):
                raise RoutingError(f"routing.table.{s}: unknown switch {s!r}")
            for t, nxt in row.items():
                where = f"routing.table.{s}.{t}"
                if not net.is_switch(t):
                    raise RoutingError(f"{where}: unknown switch {t!r}")
                if not net.is_switch(nxt):
                    raise RoutingError(f"{where}: next hop {nxt!r} is not a switch")
                if net.link_between(s, nxt) is None:
                    raise RoutingError(f"{where}: switch {s} has no link to next hop {nxt}")

    def route_nodes(self, net: Network, src: str, dst: str) -> list[str]:
        first, last = net.home_switch(src), net.home_switch(dst)
        for host, home in ((src, first), (dst, last)):
            if home is None:
                raise RoutingError(
                    f"routing: next-hop routing needs host {host} attached to exactly one switch"
                )
        nodes = [src, first]
        cur = first
        while cur != last:
            nxt = self.table.get(cur, {}).get(last)
            if nxt is None:
                if net.link_between(cur, last) is None:
                    raise RoutingError(
                        f"routing.table.{cur}.{last}: no entry and no direct link "
                        f"(needed for {src} to {dst})"
                    )
                nxt = last
            if nxt in nodes[1:]:
                chain = " → ".join(nodes[1:] + [nxt])
                raise RoutingError(f"routing.table: route from {first} to {last} loops: {chain}")
            nodes.append(nxt)
            cur = nxt
        nodes.append(dst)
        return nodes


@dataclass(frozen=True)
class ExplicitPaths:
    """The node sequence of each (src, dst) pair, given explicitly. A host's route to itself,
    unless listed, goes to its switch and back."""

    paths: Mapping[tuple[str, str], tuple[str, ...]] = field(default_factory=dict)
    policy = "paths"

    def route_nodes(self, net: Network, src: str, dst: str) -> list[str]:
        if (src, dst) in self.paths:
            return list(self.paths[(src, dst)])
        home = net.home_switch(src) if src == dst else None
        if home is not None:
            # Unlisted self routes go through the host's switch (the Swiss-T1 convention).
            return [src, home, src]
        raise RoutingError(f"routing.paths: no path from {src} to {dst}")


Routing = ShortestPath | NextHop | ExplicitPaths


def check_route(net: Network, src: str, dst: str, nodes: list[str]) -> tuple[str, ...]:
    """Check that ``nodes`` is a real, loop-free route from ``src`` to ``dst``; return its links.

    Raises
    ------
    RoutingError
        naming the pair and what is wrong.
    """
    pair = f"route {src} → {dst}"
    if len(nodes) < 2 or nodes[0] != src or nodes[-1] != dst:
        raise RoutingError(f"routing: {pair} must start at {src} and end at {dst}, got {nodes}")
    inner = nodes[1:-1]
    if not inner and src == dst:
        raise RoutingError(f"routing: {pair} must go through a switch")
    seen = set(nodes[:-1]) if src == dst else set(nodes)
    if len(seen) != (len(nodes) - 1 if src == dst else len(nodes)) or src in inner or dst in inner:
        raise RoutingError(f"routing: {pair} loops: {' → '.join(nodes)}")
    for n in inner:
        if not net.is_switch(n):
            raise RoutingError(f"routing: {pair} crosses {n!r}, which is not a switch")
    links = []
    for u, v in zip(nodes, nodes[1:]):
        link = net.link_between(u, v)
        if link is None:
            raise RoutingError(f"routing: {pair} needs a link {u} → {v}, which does not exist")
        links.append(link)
    return tuple(links)

"""Where each node of a network is drawn: hosts on the bottom row in network order, each switch
on the row of its distance from the nearest host, and every row ordered by the mean position of
each node's neighbours on the row below (one barycentre sweep up), so that trees and hierarchies
draw without crossings and any other network draws legibly."""

from __future__ import annotations

from collections import deque

from ..network import Network


def levels(net: Network) -> dict[str, int]:
    """Each node's hop distance from the nearest host (hosts 0); a node no host reaches goes on
    the row above the highest.

    Examples
    --------
    >>> from liquidsched import build_topology
    >>> lv = levels(build_topology("hierarchical:d1=2,d2=2"))
    >>> sorted(set(lv.values()))
    [0, 1, 2]
    """
    level = {h: 0 for h in net.hosts()}
    todo = deque(level)
    while todo:
        u = todo.popleft()
        for v in set(net.out_neighbours(u)) | set(net.in_neighbours(u)):
            if v not in level:
                level[v] = level[u] + 1
                todo.append(v)
    top = max(level.values(), default=0) + 1
    return {n: level.get(n, top) for n in net.nodes}


def positions(net: Network) -> dict[str, tuple[float, float]]:
    """Each node's (x, y) in [0, 1] × [0, 1], y = 0 at the top (the farthest row from the hosts).

    Examples
    --------
    >>> from liquidsched import build_topology
    >>> pos = positions(build_topology("two-switch"))
    >>> pos["t1"][1], pos["a"][1] < pos["t1"][1]
    (1.0, True)
    """
    level = levels(net)
    rows: dict[int, list[str]] = {}
    for n in net.nodes:
        rows.setdefault(level[n], []).append(n)
    height = max(rows, default=0)
    x: dict[str, float] = {}
    for depth in sorted(rows):
        members = rows[depth]
        if depth > 0:
            def barycentre(n: str) -> float:
                below = [x[m] for m in set(net.out_neighbours(n)) | set(net.in_neighbours(n)) if m in x]
                return sum(below) / len(below) if below else 2.0
            members.sort(key=lambda n: (barycentre(n), net.node_index(n)))
        for k, n in enumerate(members):
            x[n] = (k + 0.5) / len(members)
    return {n: (x[n], 1.0 - level[n] / height if height else 0.5) for n in net.nodes}

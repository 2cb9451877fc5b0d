"""Static, deterministic routing policies.

A policy answers one question: which nodes does a message from host ``src`` to host ``dst``
cross? Every answer is then checked by :func:`check_route` in one place, whatever the policy.

* :class:`ShortestPath` — fewest hops; ties broken by the order in which nodes are declared.
* :class:`NextHop` — a switch-level next-hop table, as the Swiss-T1 table of paper 000, Fig. 10:
  ``table[s][t]`` is the switch after ``s`` on the way to switch ``t``; a missing entry means
  the direct link ``s → t``.
* :class:`Forwarding` — a forwarding table per node by destination host, as switches forward
  (InfiniBand linear forwarding tables, Ethernet destination routes, D-mod-k in fat trees):
  ``table[v][d]`` is the node after ``v`` on the way to host ``d``.
* :class:`ExplicitPaths` — the node sequence of every (src, dst) pair, given by the user.

Switches forward; a host forwards only when the network says so (a direct-connect network of
hosts cabled to each other, a ring, a host that relays). A host that no switch is attached to has
no route to itself: its transfer to itself is a local copy, which crosses no link.

Policies work on a :class:`RoutingGraph`, the few questions about nodes and links that routing
asks; :class:`liquidsched.network.Network` answers them, and this module does not import it.

On networks of thousands of hosts, most hosts hang off one switch, and the route between two
such hosts is the host's link up, a path between their switches, and the link down. The
policies that route between switches only (:class:`ShortestPath`, :class:`NextHop`) therefore
also give that switch-level path (:func:`switch_paths_to`), computed once per destination switch
and shared by every pair of hosts on those switches; :func:`check_switch_path` validates it once.
"""

from __future__ import annotations

import functools
from collections import deque
from dataclasses import dataclass, field
from typing import Any, Callable, Iterable, Iterator, Mapping, Protocol, Sequence

from .errors import MissingRouteError, RoutingError


class RoutingGraph(Protocol):
    """What routing needs to know of a network (:class:`liquidsched.network.Network` has it)."""

    def is_switch(self, node: str) -> bool: ...

    def forwards(self, node: str) -> bool: ...

    def node_index(self, node: str) -> int: ...

    def out_neighbours(self, node: str) -> Sequence[str]: ...

    def in_neighbours(self, node: str) -> Sequence[str]: ...

    def link_between(self, u: str, v: str) -> str | None: ...

    def home_switch(self, host: str) -> str | None: ...

    def switch_up(self, host: str) -> str | None: ...

    def switch_down(self, host: str) -> str | None: ...

    def has_node(self, node: str) -> bool: ...

    def is_host(self, node: str) -> bool: ...


@dataclass(frozen=True)
class ShortestPath:
    """Shortest path in hops, ties broken by node declaration order. Only the nodes that forward
    (switches, and hosts that the network says forward) are passed through."""

    policy = "shortest-path"

    def route_nodes(self, net: RoutingGraph, src: str, dst: str) -> list[str]:
        return self._walk(net, src, dst, _distances_to(net, dst))

    def routes_to(self, net: RoutingGraph, dst: str, sources: Iterable[str]) -> Iterator[tuple[str, list[str]]]:
        """The route of each of ``sources`` to ``dst``, from one search out of ``dst``."""
        dist = _distances_to(net, dst)
        for src in sources:
            yield src, self._walk(net, src, dst, dist)

    def _walk(self, net: RoutingGraph, src: str, dst: str, dist: dict[str, int]) -> list[str]:
        """Follow decreasing distances from ``src``, taking the first declared node at each tie."""
        nodes = [src]
        cur = src
        if src == dst:
            # A host reaches itself through a neighbouring switch (the Swiss-T1 convention).
            options = [w for w in net.out_neighbours(src) if net.is_switch(w) and w in dist]
            if not options:
                raise no_self_route(src)
            cur = min(options, key=lambda w: (dist[w], net.node_index(w)))
            nodes.append(cur)
        while cur != dst:
            if cur not in dist:
                raise MissingRouteError(f"routing: no route from {src} to {dst}")
            options = [
                w for w in net.out_neighbours(cur)
                if dist.get(w) == dist[cur] - 1 and (w == dst or net.forwards(w))
            ]
            cur = min(options, key=net.node_index)
            nodes.append(cur)
        return nodes

    def switch_paths_to(self, net: RoutingGraph, last: str, firsts: Iterable[str]) -> Iterator[tuple[str, list[str]]]:
        """The switches crossed from each switch of ``firsts`` to switch ``last``, as between two
        hosts hanging off them alone: one search out of ``last``, then each switch's next hop
        (the first declared among those one hop closer) found once and shared by every path."""
        dist = _switch_distances_to(net, last)
        next_hop: dict[str, str] = {}
        for first in firsts:
            if first not in dist:
                raise MissingRouteError(f"routing: no route from switch {first} to switch {last}")
            nodes = [first]
            cur = first
            while cur != last:
                if cur not in next_hop:
                    next_hop[cur] = min((w for w in net.out_neighbours(cur)
                                         if net.forwards(w) and dist.get(w) == dist[cur] - 1), key=net.node_index)
                cur = next_hop[cur]
                nodes.append(cur)
            yield first, nodes


def hop_distances(dst: str, neighbours: Callable[[str], Iterable[str]], forwards: Callable[[str], bool],
                  ends: bool = True) -> dict[str, int]:
    """Hops to ``dst`` of every node that reaches it through nodes that ``forwards`` (switches):
    a breadth-first search from ``dst`` over ``neighbours`` (the nodes with a link towards a
    node). A node that does not forward gets a distance when ``ends`` (a host at the start of a
    route) but is never passed through."""
    dist = {dst: 0}
    queue = deque([dst])
    while queue:
        v = queue.popleft()
        for u in neighbours(v):
            if u not in dist:
                if forwards(u):
                    dist[u] = dist[v] + 1
                    queue.append(u)
                elif ends:
                    dist[u] = dist[v] + 1
    return dist


def _distances_to(net: RoutingGraph, dst: str) -> dict[str, int]:
    """Hop distance of every node that can reach ``dst`` through forwarding nodes only."""
    return hop_distances(dst, net.in_neighbours, net.forwards)


def _switch_distances_to(net: RoutingGraph, last: str) -> dict[str, int]:
    """Hop distance of every forwarding node that reaches switch ``last`` through forwarding
    nodes only."""
    return hop_distances(last, net.in_neighbours, net.forwards, ends=False)


def no_self_route(host: str) -> RoutingError:
    """The error of a host with no switch to send to itself through."""
    return MissingRouteError(f"routing: host {host} has no switch to send to itself through (its transfer to "
                        "itself would be a local copy, which crosses no link: leave it out)")


def check_entries(table: Mapping[str, Mapping[str, str]], node: Callable[[str], str | None],
                  entry: Callable[[str, str, str], str | None]) -> None:
    """Check a table ``{node: {destination: next}}``: ``node`` and ``entry`` say what is wrong
    with a node or an entry (None when nothing is); the first wrong one is raised, named by its
    place in the table."""
    for v, row in table.items():
        wrong = node(v)
        if wrong:
            raise RoutingError(f"routing.table.{v}: {wrong}")
        for d, nxt in row.items():
            wrong = entry(v, d, nxt)
            if wrong:
                raise RoutingError(f"routing.table.{v}.{d}: {wrong}")


@dataclass(frozen=True)
class NextHop:
    """Switch-level next-hop table: ``table[s][t]`` is the next switch from ``s`` towards ``t``."""

    table: Mapping[str, Mapping[str, str]] = field(default_factory=dict)
    policy = "next-hop"

    def check_table(self, net: RoutingGraph) -> None:
        """Every switch the table names exists, and every next hop is a neighbour."""

        def entry(s: str, t: str, nxt: str) -> str | None:
            if not net.is_switch(t):
                return f"unknown switch {t!r}"
            if not net.is_switch(nxt):
                return f"next hop {nxt!r} is not a switch"
            return f"switch {s} has no link to next hop {nxt}" if net.link_between(s, nxt) is None else None

        check_entries(self.table, lambda s: None if net.is_switch(s) else f"unknown switch {s!r}", entry)

    def route_nodes(self, net: RoutingGraph, src: str, dst: str) -> list[str]:
        first, last = net.switch_up(src), net.switch_down(dst)
        for host, home, way in ((src, first, "up to"), (dst, last, "down from")):
            if home is None:
                raise RoutingError(
                    f"routing: next-hop routing needs host {host} to have one link {way} a switch"
                )
        try:
            return [src] + self._follow(net, first, last) + [dst]
        except RoutingError as e:
            raise type(e)(f"{e} (needed for {src} to {dst})") from None

    def switch_paths_to(self, net: RoutingGraph, last: str, firsts: Iterable[str]) -> Iterator[tuple[str, list[str]]]:
        """The switches crossed from each switch of ``firsts`` to switch ``last``."""
        for first in firsts:
            yield first, self._follow(net, first, last)

    def _follow(self, net: RoutingGraph, first: str, last: str) -> list[str]:
        """The table's switches from ``first`` to ``last``, a missing entry meaning the direct link."""
        nodes = [first]
        cur = first
        while cur != last:
            nxt = self.table.get(cur, {}).get(last)
            if nxt is None:
                if net.link_between(cur, last) is None:
                    raise MissingRouteError(f"routing.table.{cur}.{last}: no entry and no direct link")
                nxt = last
            if nxt in nodes:
                chain = " → ".join(nodes + [nxt])
                raise RoutingError(f"routing.table: route from {first} to {last} loops: {chain}")
            nodes.append(nxt)
            cur = nxt
        return nodes


@dataclass(frozen=True, eq=False)
class ForwardingMatrix:
    """Forwarding tables by destination host as one array, for fabrics of thousands of hosts.

    ``next_node[t, v]`` is what node ``nodes[v]`` (a node that forwards) sends towards host
    ``targets[t]``: the index of the next node in ``nodes``, :data:`TO_DESTINATION` for the host
    itself (over the direct link), or :data:`NO_ENTRY`. One row per destination host and one
    column per forwarding node: a 9,826-host fat tree's 1,445 switches make 14 million entries,
    57 MB, where tables of Python dictionaries would take gigabytes.
    """

    nodes: tuple[str, ...]
    targets: tuple[str, ...]
    next_node: Any  # numpy int32 array, targets × nodes

    @functools.cached_property
    def column(self) -> dict[str, int]:
        """Each node's column."""
        return {v: i for i, v in enumerate(self.nodes)}

    @functools.cached_property
    def row(self) -> dict[str, int]:
        """Each destination host's row."""
        return {t: i for i, t in enumerate(self.targets)}

    def name(self, entry: int, dst: str) -> str | None:
        """The node an entry for host ``dst`` names, None for :data:`NO_ENTRY`."""
        return dst if entry == TO_DESTINATION else self.nodes[entry] if entry >= 0 else None

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, ForwardingMatrix):
            return NotImplemented
        import numpy as np

        return (self.nodes == other.nodes and self.targets == other.targets
                and np.array_equal(self.next_node, other.next_node))

    __hash__ = None  # type: ignore[assignment]


#: in a :class:`ForwardingMatrix`: the next node is the destination host itself
TO_DESTINATION = -2
#: in a :class:`ForwardingMatrix`: the node has no entry for the destination
NO_ENTRY = -1


class MatrixTable(Mapping[str, Mapping[str, str]]):
    """The ``{node: {host: next}}`` view of a :class:`ForwardingMatrix`, rows made when asked
    for (a file written from it lists every entry)."""

    def __init__(self, matrix: ForwardingMatrix) -> None:
        self.matrix = matrix

    def __getitem__(self, node: str) -> Mapping[str, str]:
        column = self.matrix.next_node[:, self.matrix.column[node]].tolist()
        return {d: self.matrix.name(n, d) for d, n in zip(self.matrix.targets, column) if n != NO_ENTRY}

    def get(self, node: str, default: Any = None) -> Any:
        return self[node] if node in self.matrix.column else default

    def __contains__(self, node: object) -> bool:
        return node in self.matrix.column

    def __iter__(self) -> Iterator[str]:
        return iter(self.matrix.nodes)

    def __len__(self) -> int:
        return len(self.matrix.nodes)

    def __eq__(self, other: object) -> bool:
        if isinstance(other, MatrixTable):
            return self.matrix == other.matrix
        if not isinstance(other, Mapping):
            return NotImplemented
        return dict(self.items()) == dict(other.items())

    __hash__ = None  # type: ignore[assignment]


#: in a :class:`ForwardingMatrix` made from tables: the next node is a host that does not forward
NOT_FORWARDING = -3


@dataclass(frozen=True)
class Forwarding:
    """Forwarding tables by destination host: ``table[v][d]`` is the node after ``v`` on the way
    to host ``d``, as a switch's linear forwarding table gives the port for each destination.

    Where ``v`` has no entry for ``d``: the direct link to ``d`` if there is one, else, at a host,
    the switch of its one link up (a host's default route). A host's route to itself goes to its switch and back
    unless the table says otherwise. Routes are composed from the tables when asked for, per
    destination host and first switch (:meth:`switch_paths_to`), so that the route of every host
    on a switch to a destination is walked once.

    Examples
    --------
    >>> from liquidsched.network import Link, Network, Node
    >>> cable = lambda a, b: [Link(f"{a}>{b}", a, b, 1e9), Link(f"{b}>{a}", b, a, 1e9)]
    >>> nodes = [Node("a"), Node("b"), Node("s1", "switch"), Node("s2", "switch"), Node("s3", "switch")]
    >>> links = cable("a", "s1") + cable("b", "s2") + cable("s1", "s3") + cable("s3", "s2") + cable("s1", "s2")
    >>> net = Network(nodes, links, Forwarding({"s1": {"b": "s3"}, "s3": {"b": "s2"}, "s2": {"a": "s1"}}))
    >>> net.route("a", "b")
    ('a>s1', 's1>s3', 's3>s2', 's2>b')
    >>> net.route("b", "a")
    ('b>s2', 's2>s1', 's1>a')
    """

    table: Mapping[str, Mapping[str, str]] = field(default_factory=dict)
    #: the same tables as one array, where a builder made them so (:meth:`from_matrix`)
    matrix: ForwardingMatrix | None = field(default=None, compare=False, repr=False)
    policy = "forwarding"
    #: composed routes are keyed by destination host, not by its switch
    by_host = True

    @classmethod
    def from_matrix(cls, matrix: ForwardingMatrix) -> Forwarding:
        """The policy of tables held as one array (:class:`ForwardingMatrix`)."""
        return cls(MatrixTable(matrix), matrix)

    def check_table(self, net: RoutingGraph) -> None:
        """Every node and destination the table names exists, and every next hop is a neighbour
        (a builder's array is checked where routes use it)."""
        if self.matrix is not None:
            for v in self.matrix.nodes:
                if not net.has_node(v):
                    raise RoutingError(f"routing.table.{v}: unknown node {v!r}")
            return

        def entry(v: str, d: str, nxt: str) -> str | None:
            if not net.is_host(d):
                return f"destination {d!r} is not a host"
            if not net.has_node(nxt):
                return f"unknown next hop {nxt!r}"
            return f"{v} has no link to next hop {nxt}" if net.link_between(v, nxt) is None else None

        check_entries(self.table, lambda v: None if net.has_node(v) else f"unknown node {v!r}", entry)

    def next_node(self, net: RoutingGraph, v: str, dst: str) -> str:
        """The node after ``v`` on the way to host ``dst``."""
        nxt = self.next_entry(v, dst)
        if nxt is not None:
            return nxt
        if net.link_between(v, dst) is not None:
            return dst
        home = net.switch_up(v) if net.is_host(v) else None
        if home is not None:
            return home
        raise MissingRouteError(f"routing.table.{v}.{dst}: no entry and no direct link")

    def next_entry(self, v: str, dst: str) -> str | None:
        """The table's own entry of ``v`` for host ``dst``, None where it has none."""
        if self.matrix is None:
            return self.table.get(v, {}).get(dst)
        column, row = self.matrix.column.get(v), self.matrix.row.get(dst)
        return None if column is None or row is None else self.matrix.name(int(self.matrix.next_node[row, column]), dst)

    def matrix_for(self, net: RoutingGraph, nodes: Sequence[str], targets: Sequence[str]) -> ForwardingMatrix:
        """The tables as one array over ``nodes`` (the nodes that forward) and ``targets`` (hosts
        that each hang off one switch), the rules for missing entries applied: the direct link
        (a target's switch delivers it), a forwarding host's one switch."""
        if self.matrix is not None and self.matrix.nodes == tuple(nodes) and all(t in self.matrix.row for t in targets):
            return self.matrix
        import numpy as np

        column = {v: i for i, v in enumerate(nodes)}
        row = {t: i for i, t in enumerate(targets)}
        table = np.full((len(targets), len(nodes)), NO_ENTRY, dtype=np.int32)
        for v in nodes:
            home = net.switch_up(v) if net.is_host(v) else None
            if home is not None and home in column:
                table[:, column[v]] = column[home]
        for t in targets:
            home = net.switch_down(t)
            if home in column:
                table[row[t], column[home]] = TO_DESTINATION
        for v, entries in self.table.items():
            if v not in column:
                continue
            for d, nxt in entries.items():
                if d in row:
                    table[row[d], column[v]] = (TO_DESTINATION if nxt == d
                                                else column.get(nxt, NOT_FORWARDING))
        return ForwardingMatrix(tuple(nodes), tuple(targets), table)

    def route_nodes(self, net: RoutingGraph, src: str, dst: str) -> list[str]:
        if src == dst and self.next_entry(src, dst) is None:
            home = net.switch_up(src)
            if home is None:
                raise no_self_route(src)
            return [src] + self._follow(net, home, dst, src)
        return self._follow(net, src, dst, src)

    def switch_paths_to(self, net: RoutingGraph, last: str, firsts: Iterable[str]) -> Iterator[tuple[str, list[str]]]:
        """The nodes crossed from each switch of ``firsts`` to the switch of host ``last``, for
        hosts hanging off those switches alone: the walk to ``last`` without its final hop."""
        for first in firsts:
            nodes = self._follow(net, first, last, first)
            if len(nodes) < 2 or net.link_between(nodes[-2], last) is None:
                raise RoutingError(f"routing: route from switch {first} to host {last} is {nodes}")
            yield first, nodes[:-1]

    def _follow(self, net: RoutingGraph, start: str, dst: str, src: str) -> list[str]:
        """The nodes from ``start`` to ``dst`` along the tables, one step at least (a route from
        a host to itself leaves it); ``src`` names the route in errors."""
        nodes = [start]
        seen = {start}
        cur = self.next_node(net, start, dst)
        while True:
            # Only the end may repeat the start: a host's route back to itself.
            if cur in seen and not (cur == dst == start):
                chain = " → ".join(nodes + [cur])
                raise RoutingError(f"routing.table: route from {src} to {dst} loops: {chain}")
            nodes.append(cur)
            if cur == dst:
                return nodes
            seen.add(cur)
            cur = self.next_node(net, cur, dst)


@dataclass(frozen=True)
class ExplicitPaths:
    """The node sequence of each (src, dst) pair, given explicitly. A host's route to itself,
    unless listed, goes to its switch and back."""

    paths: Mapping[tuple[str, str], tuple[str, ...]] = field(default_factory=dict)
    policy = "paths"

    def route_nodes(self, net: RoutingGraph, src: str, dst: str) -> list[str]:
        if (src, dst) in self.paths:
            return list(self.paths[(src, dst)])
        home = net.home_switch(src) if src == dst else None
        if home is not None:
            # Unlisted self routes go through the host's switch (the Swiss-T1 convention).
            return [src, home, src]
        raise MissingRouteError(f"routing.paths: no path from {src} to {dst}")


Routing = ShortestPath | NextHop | Forwarding | ExplicitPaths


def routes_of(policy: Routing, net: RoutingGraph, pairs: Iterable[tuple[str, str]]) -> Iterator[tuple[str, str, list[str]]]:
    """The nodes of the route of each (src, dst) host pair, unchecked, grouped by destination
    so that a policy that searches out of the destination searches once per destination."""
    by_dst: dict[str, list[str]] = {}
    for src, dst in pairs:
        by_dst.setdefault(dst, []).append(src)
    for dst, sources in by_dst.items():
        if isinstance(policy, ShortestPath):
            for src, nodes in policy.routes_to(net, dst, sources):
                yield src, dst, nodes
        else:
            for src in sources:
                yield src, dst, policy.route_nodes(net, src, dst)


def composes(policy: Routing) -> bool:
    """Whether the policy routes from a host's switch, so that a host pair's route is its link
    up, the path from its switch to the other's (:func:`switch_paths_to`) and its link down."""
    return hasattr(policy, "switch_paths_to")


def composes_by_host(policy: Routing) -> bool:
    """Whether a composing policy's path depends on the destination host itself (forwarding
    tables by host), not only on its switch."""
    return bool(getattr(policy, "by_host", False))


def switch_paths_to(policy: Routing, net: RoutingGraph, last: str,
                    firsts: Iterable[str]) -> Iterator[tuple[str, list[str]]]:
    """The switches crossed from each of ``firsts`` to switch ``last`` (a composing policy), or
    to the switch of host ``last`` (a policy that composes by host)."""
    return policy.switch_paths_to(net, last, firsts)  # type: ignore[union-attr]


def check_switch_path(net: RoutingGraph, first: str, last: str, nodes: list[str]) -> tuple[str, ...]:
    """Check that ``nodes`` is a real, loop-free path of switches from ``first`` to ``last``;
    return its links.

    The route between a host on ``first`` alone and a host on ``last`` alone is the host's link
    up, these links, and the link down: it passes :func:`check_route` exactly when this path
    does and both host links exist (the hosts are not switches, so they cannot repeat in it).

    Raises
    ------
    RoutingError
        naming the switches and what is wrong.
    """
    pair = f"route from switch {first} to switch {last}"
    if not nodes or nodes[0] != first or nodes[-1] != last:
        raise RoutingError(f"routing: {pair} must start at {first} and end at {last}, got {nodes}")
    if len(set(nodes)) != len(nodes):
        raise RoutingError(f"routing: {pair} loops: {' → '.join(nodes)}")
    for n in nodes:
        if not net.forwards(n):
            raise RoutingError(f"routing: {pair} crosses {n!r}, which does not forward")
    return _links_along(net, pair, nodes)


def check_route(net: RoutingGraph, src: str, dst: str, nodes: list[str]) -> tuple[str, ...]:
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
        if not net.forwards(n):
            raise RoutingError(f"routing: {pair} crosses {n!r}, which does not forward")
    return _links_along(net, pair, nodes)


def _links_along(net: RoutingGraph, pair: str, nodes: list[str]) -> tuple[str, ...]:
    """The link between each two consecutive nodes; ``pair`` names the route in errors."""
    links = []
    for u, v in zip(nodes, nodes[1:]):
        link = net.link_between(u, v)
        if link is None:
            raise RoutingError(f"routing: {pair} needs a link {u} → {v}, which does not exist")
        links.append(link)
    return tuple(links)

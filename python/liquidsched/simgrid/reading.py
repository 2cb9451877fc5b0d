"""SimGrid platforms of every common style, read by SimGrid itself.

SimGrid loads the file (:mod:`liquidsched.simgrid.platform_runner`, run by the Python that has
SimGrid) and reports its hosts, its links (bandwidth, latency, sharing policy) and the route of
every ordered pair of hosts as a list of links. Every zone that SimGrid routes over links reads
the same way: Full, Floyd, Dijkstra and DijkstraCache zones, ``<cluster>`` with a backbone
or a crossbar, fat trees, tori, dragonflies, nested zones with ``<zoneRoute>`` and
``<bypassRoute>``. The contention model is SimGrid's: each route crosses exactly the links
SimGrid says, at their bandwidths and latencies. A pair of hosts that SimGrid does not route
(it gives no link) is a missing route of the network, which loads all the same.

From :data:`~liquidsched.simgrid.grouped.GROUPED_FROM_HOSTS` hosts on, routes are asked *by
cluster* instead of pair by pair (hosts² questions): see
:func:`liquidsched.simgrid.grouped.network_from_grouped`.

How SimGrid's links map onto liquidsched's resources:

* a ``SHARED`` link is one resource of its bandwidth: a directed link when routes cross it one
  way, a shared-duplex pair when they cross it both ways (a cable, or a private link of a cluster
  declared SHARED);
* a ``SPLITDUPLEX`` link is two links for SimGrid, ``NAME_UP`` and ``NAME_DOWN``, each crossed
  one way: two directed links, two resources;
* a ``FATPIPE`` link never limits concurrent flows, yet limits each to its bandwidth ``b``: a
  resource with ``k`` slots and capacity ``b·k``, ``k`` the number of host pairs whose routes
  cross it rounded up to a power of two (so that ``b·k`` is exact): it never conflicts, and a
  transfer in one of its slots runs at most at ``b``. The fluid model shares capacities and
  ignores slots, so it agrees with SimGrid on such a link only where ``b`` is not what limits a
  flow (a cluster's backbone, a loopback);
* a host's route to itself through one link that no other route crosses (a cluster's
  ``loopback_bw`` link, or SimGrid's ``__loopback__`` when no route is declared) is its
  loopback: the host and a node of its own, ``loopback@HOST``, joined by two links that are one
  resource (a shared-duplex pair) with one slot at the link's bandwidth, the link's latency on
  the first. A FATPIPE loopback shared by several hosts is copied for each, which changes
  nothing: it never limits anything but a flow's own rate; another shared loopback is refused.
  liquidsched's own parser reads loopbacks by the same rules and functions
  (:func:`liquidsched.simgrid.platform_file.find_loopbacks`, :func:`liquidsched.simgrid.platform_file.loopback_links`);
* ``WIFI`` and ``NONLINEAR`` links, Vivaldi zones (latencies from coordinates) and ns-3 are
  refused (:func:`refuse_unmodelled`).

A route is a list of links, not of nodes, so the nodes are inferred: each link has two ends,
and consecutive links of a route are joined at one node wherever the routes allow it (with the
union-find of :mod:`liquidsched.simgrid.platform_file`). Which way a route crosses a SHARED link is read off
its neighbours: two crossings that follow (or precede) the same link go the same way, one that
follows what another precedes goes the other way, as over a cable; a link whose crossings
contradict this (a backbone every route crosses) is crossed one way by all. Two link ends are
not joined when that would join two hosts, make a link go from a node to itself, lay two links
the same way between two nodes, make a route visit a node twice, or make a route pass through a
host (in liquidsched hosts do not forward); the ends are then linked by a *junction*, a link that
never limits (slots as a FATPIPE link of the fastest bandwidth; it is no SimGrid link). So a host
that SimGrid routes other hosts' messages through (a torus has no switches) gets a router of its
own, where its links meet, joined to it by junctions.

Platforms written by liquidsched (:func:`liquidsched.simgrid.platform_file.platform_xml`) carry each link's
ends, liquidsched ids and slots, and each host's role, as properties that SimGrid keeps but its
Python binding does not show: they are read from the file, so that such a platform reads back as
the network it was written from.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Iterable

from ..errors import TopologyError
from ..network import HOST, SWITCH, Link, Network, Node
from ..routing import ExplicitPaths
# What SimGrid reports and what the file adds lives in .description; the names readers of
# this module used are kept here.
from .description import (GroupedPlatform, PlatformHints, SimgridLink, SimgridPlatform,  # noqa: F401
                          describe_grouped, describe_platform, platform_hints, refuse_unmodelled)
from .platform_file import FATPIPE, SHARED, SPLITDUPLEX, LoopbackLink, _Ends, find_loopbacks, loopback_links
from .values import MAX_FREE_SLOTS, _fresh, _role, free_capacity  # noqa: F401

E = TopologyError
#: Which way a route crosses a link: from its end 0 to its end 1, or back.
FORWARD, BACKWARD = 0, 1
#: Relative tolerance on a route's latency against the sum of its links' latencies.
LATENCY_RTOL = 1e-9


# -- which way each route crosses each link ----------------------------------------------------------


class _Parity:
    """Union-find with parity: whether two crossings of a link go the same way (0) or opposite
    ways (1). :meth:`relate` refuses a relation that contradicts the known ones."""

    def __init__(self) -> None:
        self.parent: dict[object, tuple[object, int]] = {}

    def find(self, x: object) -> tuple[object, int]:
        """The root of ``x``'s class and the parity of ``x`` to it."""
        chain = []
        while True:
            up, parity = self.parent.setdefault(x, (x, 0))
            if up == x:
                break
            chain.append((x, parity))
            x = up
        # Compress: each node of the chain then points at the root with its parity to it.
        total = 0
        for node, parity in reversed(chain):
            total ^= parity
            self.parent[node] = (x, total)
        return x, total

    def relate(self, a: object, b: object, parity: int) -> bool:
        """Record that ``a`` and ``b`` go the same way (0) or opposite ways (1); False when that
        contradicts what is known."""
        ra, pa = self.find(a)
        rb, pb = self.find(b)
        if ra == rb:
            return pa ^ pb == parity
        self.parent[rb] = (ra, pa ^ pb ^ parity)
        return True


@dataclass(frozen=True)
class _Route:
    """A route to lay out: its hosts, its SimGrid links, and the elements it visits: the source,
    the end it enters and the end it leaves each link by (``(link, 0)`` or ``(link, 1)``), and
    the destination. Consecutive elements ``2j`` and ``2j + 1`` are to be joined at one node (a
    junction); elements ``2j + 1`` and ``2j + 2`` are the two ends of link ``j``."""

    src: str
    dst: str
    links: tuple[str, ...]
    items: tuple[object, ...]


def crossing_directions(routes: list[tuple[str, str, tuple[str, ...]]],
                        ends: dict[str, tuple[str, str]]) -> list[list[int]]:
    """Which way each route crosses each of its links: :data:`FORWARD` (from end 0 to end 1) or
    :data:`BACKWARD`.

    Where the file names a link's ends (``ends``, liquidsched's own properties), a route that
    reaches one of them crosses the link away from it. Otherwise two crossings of a link that
    follow the same link (or host), or precede the same one, go the same way; a crossing that
    follows what another precedes goes the other way (a cable crossed in both directions), the two
    directions of a SPLITDUPLEX link counting as one cable. A link whose crossings contradict
    these rules (a cluster's backbone, which every route crosses from whichever private link) is
    crossed forward by every route.
    """
    cable = _cables({name for _, _, links in routes for name in links})
    # Crossings of a link between the same two neighbours go the same way: the rules work on
    # these contexts, (link, what precedes, what follows), far fewer than the crossings.
    contexts = [[(name, ("host", src) if j == 0 else cable[links[j - 1]],
                  ("host", dst) if j == len(links) - 1 else cable[links[j + 1]])
                 for j, name in enumerate(links)] for src, dst, links in routes]
    parity = _Parity()
    anchored: set[str] = set()
    for (src, _, links), row in zip(routes, contexts):
        cur: str | None = src
        for name, context in zip(links, row):
            hinted = ends.get(name)
            if cur is None or hinted is None or cur not in hinted:
                cur = None
                continue
            way = FORWARD if cur == hinted[0] else BACKWARD
            parity.relate(("anchor", name), context, way)
            anchored.add(name)
            cur = hinted[1 - way]
    hubs = _relate_neighbours(parity, dict.fromkeys(c for row in contexts for c in row)) - anchored
    way_of: dict[tuple, int] = {}
    first: dict[object, int] = {}
    for context in (c for row in contexts for c in row):
        if context in way_of:
            continue
        name = context[0]
        root, p = parity.find(context)
        if name in hubs:
            way_of[context] = FORWARD
        elif name in anchored and parity.find(("anchor", name))[0] == root:
            way_of[context] = p ^ parity.find(("anchor", name))[1]
        else:
            # A class of crossings that nothing anchors: its first crossing goes forward.
            way_of[context] = p ^ first.setdefault(root, p)
    return [[way_of[c] for c in row] for row in contexts]


def _relate_neighbours(parity: _Parity, contexts: Iterable[tuple]) -> set[str]:
    """Relate the contexts (link, what precedes, what follows) of each link's crossings (see
    :func:`crossing_directions`); return the links whose crossings contradict each other."""
    after: dict[tuple, tuple] = {}
    before: dict[tuple, tuple] = {}
    contradicted: set[str] = set()
    for context in contexts:
        name, pred, succ = context
        for table, key in ((after, (name, pred)), (before, (name, succ))):
            other = table.setdefault(key, context)
            if not parity.relate(other, context, 0):
                contradicted.add(name)
    for (name, item), context in after.items():
        other = before.get((name, item))
        if other is not None and not parity.relate(context, other, 1):
            contradicted.add(name)
    return contradicted


def _cables(names: set[str]) -> dict[str, tuple[str, str]]:
    """What each link is a neighbour as: the two directions ``N_UP`` and ``N_DOWN`` of a
    SPLITDUPLEX link are one cable ``N`` (a crossing that follows ``N_UP`` and one that precedes
    ``N_DOWN`` meet it at the same node), any other link itself."""
    cables = {}
    for name in names:
        base, _, way = name.rpartition("_")
        partner = f"{base}_{'DOWN' if way == 'UP' else 'UP'}"
        cables[name] = ("cable", base) if way in ("UP", "DOWN") and partner in names else ("link", name)
    return cables


class _Layout(_Ends):
    """The union-find of link ends of :mod:`liquidsched.simgrid.platform_file`, joining two classes only
    when the network stays one liquidsched accepts: no two hosts (or named nodes) at one node, no
    link from a node to itself, no two links laid the same way between two nodes, no route that
    visits a node twice (a self route's two ends aside), no route through a host (hosts do not
    forward; where SimGrid routes through one, as in a torus, the link ends there form a router
    that junctions join to the host). :meth:`join` says whether it joined.

    Each class keeps its size, the links with an end in it, and for each route that visits it the
    stretches of the route's elements in it (one, or for a self route's source, one at each end),
    so that a join is checked against the links and routes of the two classes only.
    """

    def __init__(self, where: str, routes: list[_Route], directions: dict[str, set[int]],
                 named: Iterable[str], hosts: Iterable[str]) -> None:
        super().__init__(where)
        self.routes = routes
        self.hosts = set(hosts)
        self.directions = directions
        self.size: dict[object, int] = {}
        self.link_ends: dict[object, list[str]] = {}
        self.visits: dict[object, dict[int, list[tuple[int, int]]]] = {}
        self.refused: set[frozenset] = set()
        for x in named:
            self._add(x)
        for name in directions:
            self._add((name, 0))
            self._add((name, 1))
        # Every element is added by now: routes visit hosts and ends of the links in directions.
        visits = self.visits
        for i, route in enumerate(routes):
            for k, x in enumerate(route.items):
                seen = visits[x].get(i)
                if seen is None:
                    visits[x][i] = [(k, k)]
                else:
                    seen.append((k, k))

    def _add(self, x: object) -> None:
        if x not in self.parent:
            self.parent[x] = x
            self.size[x] = 1
            self.link_ends[x] = [x[0]] if isinstance(x, tuple) else []
            self.visits[x] = {}

    def join(self, a: object, b: object) -> bool:
        """Join the classes of ``a`` and ``b`` unless that breaks the network; whether they are
        now one. A refusal stands: whatever makes two classes unjoinable stays as they grow."""
        ra, rb = self.find(a), self.find(b)
        if ra == rb:
            return True
        key = frozenset((ra, rb))
        if key in self.refused or self._breaks(ra, rb):
            self.refused.add(key)
            return False
        self._join(ra, rb)
        return True

    def _breaks(self, ra: object, rb: object) -> bool:
        """Whether making classes ``ra`` and ``rb`` one node breaks the network."""
        if isinstance(ra, str) and isinstance(rb, str):
            return True
        laid: set[tuple[object, object]] = set()
        seen: set[str] = set()
        for root in (ra, rb):
            for name in self.link_ends[root]:
                if name in seen:
                    continue
                seen.add(name)
                a, b = (ra if r == rb else r for r in (self.find((name, 0)), self.find((name, 1))))
                if a == b:
                    return True
                for way in self.directions[name]:
                    pair = (a, b) if way == FORWARD else (b, a)
                    if pair in laid:
                        return True
                    laid.add(pair)
        small, large = sorted((self.visits[ra], self.visits[rb]), key=len)
        if any(i in large and not self._one_visit(i, _stretches(spans + large[i])) for i, spans in small.items()):
            return True
        return self._through_host(ra, rb) if ra in self.hosts else self._through_host(rb, ra)

    def _through_host(self, host: object, other: object) -> bool:
        """Whether joining class ``other`` to the class of ``host`` puts the host inside a route."""
        if host not in self.hosts:
            return False
        at_host = self.visits[host]
        for i, spans in self.visits[other].items():
            last = len(self.routes[i].items) - 1
            if any(lo > 0 and hi < last for lo, hi in _stretches(spans + at_host.get(i, []))):
                return True
        return False

    def _one_visit(self, i: int, spans: list[tuple[int, int]]) -> bool:
        """Whether route ``i`` visits a node in the stretches ``spans`` once (a self route: once
        at each end)."""
        if len(spans) == 1:
            return True
        route = self.routes[i]
        last = len(route.items) - 1
        return route.src == route.dst and len(spans) == 2 and spans[0][0] == 0 and spans[1][1] == last

    def _join(self, ra: object, rb: object) -> object:
        # A named node stays the root (as in _Ends); otherwise the larger class does.
        if isinstance(ra, str) or (not isinstance(rb, str) and self.size[ra] > self.size[rb]):
            ra, rb = rb, ra
        self.parent[ra] = rb
        self.size[rb] += self.size.pop(ra)
        ends, more_ends = sorted((self.link_ends.pop(ra), self.link_ends[rb]), key=len)
        more_ends.extend(ends)
        self.link_ends[rb] = more_ends
        visits, more_visits = sorted((self.visits.pop(ra), self.visits[rb]), key=len)
        for i, spans in visits.items():
            more_visits[i] = _stretches(spans + more_visits[i]) if i in more_visits else spans
        self.visits[rb] = more_visits
        return rb


def _stretches(spans: list[tuple[int, int]]) -> list[tuple[int, int]]:
    """Stretches of positions, those that touch joined into one, in order."""
    if len(spans) == 2:
        # The usual case, kept short: two classes visited once each.
        (a, b), (c, d) = spans if spans[0] <= spans[1] else spans[::-1]
        return [(a, max(b, d))] if c <= b + 1 else [(a, b), (c, d)]
    spans = sorted(spans)
    out = [spans[0]]
    for lo, hi in spans[1:]:
        if lo <= out[-1][1] + 1:
            out[-1] = (out[-1][0], max(hi, out[-1][1]))
        else:
            out.append((lo, hi))
    return out


# -- from SimGrid's answer to a Network ----------------------------------------------------------------


def network_from_simgrid(platform: SimgridPlatform, hints: PlatformHints,
                         where: str) -> tuple[Network, dict[str, str | None]]:
    """The :class:`Network` of a platform as SimGrid reported it (see the module doc for the
    mapping), and the SimGrid link each liquidsched link stands for (None for a junction).

    Raises
    ------
    TopologyError
        one line naming ``where`` (the file) and what cannot be modelled.
    """
    return _Assembly(platform, hints, where).build()


def _natural_key(name: str) -> list:
    """Sort key that orders ``n2`` before ``n10``."""
    return [int(part) if k % 2 else part for k, part in enumerate(re.split(r"(\d+)", name))]


class _Assembly:
    """The steps from SimGrid's answer to a Network, in :meth:`build`'s order."""

    def __init__(self, platform: SimgridPlatform, hints: PlatformHints, where: str) -> None:
        self.platform, self.hints, self.where = platform, hints, where
        declared = {h: k for k, h in enumerate(hints.declared_hosts)}
        # Hosts in file order where the file declares them, the others (clusters) by number.
        self.hosts = sorted(platform.hosts, key=lambda h: (declared.get(h, len(declared)), _natural_key(h)))
        if not self.hosts:
            raise E(f"{where}: the platform has no host")
        self.roles = {h: hints.roles.get(h) or self._role_from_routes(h) for h in self.hosts}
        self.routes = self._checked_routes()
        self.loopbacks = find_loopbacks(self.routes, {name: link.policy for name, link in platform.links.items()},
                                        where)

    # -- reading SimGrid's answer

    def _role_from_routes(self, host: str) -> str:
        """Sender, receiver or both, by whether SimGrid routes from / to another host."""
        routes, others = self.platform.routes, [h for h in self.hosts if h != host]
        sends = not others or any(routes[(host, d)][0] for d in others)
        receives = not others or any(routes[(s, host)][0] for s in others)
        return _role(sends, receives)

    def _checked_routes(self) -> dict[tuple[str, str], tuple[str, ...]]:
        """The links of the route of every sender to every receiver that SimGrid routes, each
        route checked. A pair of distinct hosts that SimGrid does not route (it gives no link) is
        left out: the network then has no path for it, loads all the same, and refuses a traffic
        that needs it, naming the pair (:attr:`liquidsched.network.Network.missing_routes`)."""
        senders = [h for h in self.hosts if self.roles[h] in ("both", "sender")]
        receivers = [h for h in self.hosts if self.roles[h] in ("both", "receiver")]
        routes = {}
        for s in senders:
            for d in receivers:
                links, latency = self.platform.routes[(s, d)]
                if not links and s != d:
                    continue
                self._check_route(s, d, links, latency)
                routes[(s, d)] = links
        if not any(s != d for s, d in routes) and len(self.hosts) > 1:
            raise E(f"{self.where}: SimGrid routes no host to another")
        return routes

    def _check_route(self, s: str, d: str, links: tuple[str, ...], latency: float) -> None:
        what = f"{self.where}: route {s} → {d}"
        if not links:
            raise E(f"{what}: SimGrid has no route between these hosts")
        if len(set(links)) != len(links):
            raise E(f"{what} crosses a link twice ({', '.join(links)}); liquidsched counts a link once per route")
        for name in links:
            link = self.platform.links[name]
            if link.policy not in (SHARED, SPLITDUPLEX, FATPIPE):
                raise E(f"{what}: link {name!r} has sharing policy {link.policy}, which is not modelled "
                        "(SHARED, SPLITDUPLEX and FATPIPE are)")
            if not link.bandwidth_Bps > 0:
                raise E(f"{what}: link {name!r} has bandwidth {link.bandwidth_Bps!r}; a positive one is needed")
            if not 0 <= link.latency_s < float("inf"):
                raise E(f"{what}: link {name!r} has latency {link.latency_s!r} s; a finite latency of at least 0 "
                        "is needed")
        carried = sum(self.platform.links[name].latency_s for name in links)
        if abs(latency - carried) > LATENCY_RTOL * max(latency, carried) + 1e-15:
            raise E(f"{what}: SimGrid gives it {latency:g} s of latency, its links {carried:g} s; latency "
                    "not carried by links (such as the Vivaldi coordinates of a zone) is not modelled")

    # -- the layout

    def build(self) -> tuple[Network, dict[str, str | None]]:
        laid = [(s, d, links) for (s, d), links in self.routes.items() if not (s == d and s in self.loopbacks)]
        ways = crossing_directions(laid, self.hints.ends)
        routes = [_Route(s, d, links, _items(s, d, links, w)) for (s, d, links), w in zip(laid, ways)]
        directions = self._directions(routes)
        named = self.hosts + sorted({n for name in directions for n in self.hints.ends.get(name, ())} - set(self.hosts))
        layout = _Layout(self.where, routes, directions, named, self.hosts)
        self._pin_hinted_ends(layout, directions)
        # Each distinct junction once, in the order routes first meet them (joining again is
        # a no-op, refusing again too).
        for a, b in dict.fromkeys((r.items[k], r.items[k + 1]) for r in routes for k in range(0, len(r.items), 2)):
            layout.join(a, b)
        self._join_split_duplex(layout, directions)
        return _Drawing(self, layout, routes, directions).network()

    def _directions(self, routes: list[_Route]) -> dict[str, set[int]]:
        """The ways each SimGrid link is crossed, and those the file gives liquidsched ids to."""
        directions: dict[str, set[int]] = {}
        for route in routes:
            for j, name in enumerate(route.links):
                directions.setdefault(name, set()).add(FORWARD if route.items[2 * j + 1] == (name, 0) else BACKWARD)
        for name, ids in self.hints.ids.items():
            if name in self.platform.links and name in self.hints.ends and name not in self.loopbacks.values():
                given = {way for way, given_id in zip((FORWARD, BACKWARD), ids) if given_id}
                directions.setdefault(name, set()).update(given)
        return directions

    def _pin_hinted_ends(self, layout: _Layout, directions: dict[str, set[int]]) -> None:
        """Join each link's ends to the nodes the file names for them."""
        known = set(self.hosts) | self.hints.routers
        for name in directions:
            for end, node in enumerate(self.hints.ends.get(name, ())):
                if node not in known:
                    raise E(f"{self.where}: link {name!r}: property {('src', 'dst')[end]} names an unknown "
                            f"node {node!r}")
                if not layout.join((name, end), node):
                    raise E(f"{self.where}: link {name!r}: its properties src and dst do not fit SimGrid's routes")

    def _join_split_duplex(self, layout: _Layout, directions: dict[str, set[int]]) -> None:
        """Lay the two directions of a SPLITDUPLEX link between the same two nodes where the
        routes leave that open (they always do in a Full zone; a cluster's backbone does not)."""
        for name in directions:
            if name.endswith("_UP") and f"{name[:-3]}_DOWN" in directions:
                down = f"{name[:-3]}_DOWN"
                if layout.join((name, 0), (down, 1)):
                    layout.join((name, 1), (down, 0))


def _items(src: str, dst: str, links: tuple[str, ...], ways: list[int]) -> tuple[object, ...]:
    """The elements a route visits (see :class:`_Route`)."""
    items: list[object] = [src]
    for name, way in zip(links, ways):
        items += [(name, way), (name, 1 - way)]
    items.append(dst)
    return tuple(items)


class _Drawing:
    """The nodes, links and paths of a finished layout."""

    def __init__(self, assembly: _Assembly, layout: _Layout, routes: list[_Route],
                 directions: dict[str, set[int]]) -> None:
        self.a, self.layout, self.routes, self.directions = assembly, layout, routes, directions
        self.where = assembly.where
        self.taken_nodes = set(assembly.hosts) | assembly.hints.routers
        self.taken_links: set[str] = set()
        self.node_of_root: dict[object, str] = {}
        self.switches: list[str] = []
        self.routers_made = 0
        #: the links made, the shared-duplex pairs, and each link's SimGrid link (None: a junction)
        self.links: list[Link] = []
        self.shared: list[list[str]] = []
        self.simgrid: dict[str, str | None] = {}
        #: junctions by their ends, with how many routes cross each, and the node of those laid
        #: beside a link that already joins their ends
        self.junction_uses: dict[tuple[str, str], int] = {}
        self.via: dict[tuple[str, str], str] = {}
        #: the node of each element, and the (tail, head) of every link laid from SimGrid's
        self.name_of: dict[object, str] = {}
        self.laid: set[tuple[str, str]] = set()

    def node(self, x: object) -> str:
        """The node of element ``x``, named when first met: a host, a router the file names, or
        an inferred switch (``router-K``)."""
        root = self.layout.find(x)
        name = self.node_of_root.get(root)
        if name is not None:
            return name
        if isinstance(root, str):
            name = root
            if root not in self.a.roles:
                self.switches.append(name)
        else:
            self.routers_made += 1
            while f"router-{self.routers_made}" in self.taken_nodes:
                self.routers_made += 1
            name = _fresh(f"router-{self.routers_made}", self.taken_nodes)
            self.switches.append(name)
        self.node_of_root[root] = name
        return name

    def network(self) -> tuple[Network, dict[str, str | None]]:
        """The network, and each liquidsched link's SimGrid link (None for a junction)."""
        self._name_nodes()
        paths = {(r.src, r.dst): self.path(r) for r in self.routes}
        self._add_links()
        paths |= self.add_loopbacks()
        nodes = [Node(h, HOST, self.a.roles[h], origin=f"{self.where}: host {h!r}") for h in self.a.hosts]
        nodes += [Node(s, SWITCH) for s in self.switches]
        hints = self.a.hints
        try:
            net = Network(nodes, self.links, ExplicitPaths(paths), self.shared, name=hints.name,
                          description=hints.description)
        except TopologyError as e:
            text = str(e)
            raise type(e)(text if text.startswith(self.where) else f"{self.where}: {text}") from None
        return net, self.simgrid

    def _name_nodes(self) -> None:
        """Name every node in the order routes meet them, and note the ends of every link."""
        for route in self.routes:
            for x in route.items:
                if x not in self.name_of:
                    self.name_of[x] = self.node(x)
        self.laid = {(self.node((name, way)), self.node((name, 1 - way)))
                     for name, ways in self.directions.items() for way in ways}

    def _add_links(self) -> None:
        """The links of SimGrid's links, then the junctions the paths need."""
        uses: dict[str, int] = {}
        for links in self.a.routes.values():
            for name in links:
                uses[name] = uses.get(name, 0) + 1
        for name in self.a.platform.links:
            if name in self.directions:
                self.add_simgrid_link(name, uses.get(name, 0))
        fastest = max(self.a.platform.links[name].bandwidth_Bps for name in uses)
        for (tail, head), n in self.junction_uses.items():
            self.add_junction(tail, head, n, fastest)

    # -- paths

    def path(self, route: _Route) -> tuple[str, ...]:
        """The nodes of ``route``: its links joined at their nodes, or by junctions."""
        items, name_of = route.items, self.name_of
        nodes = [route.src]
        self._hop(nodes, name_of[items[0]])
        last = len(route.links)
        for j in range(last + 1):
            self._hop(nodes, name_of[items[2 * j + 1]])
            if j < last:
                nodes.append(name_of[items[2 * j + 2]])
        self._hop(nodes, route.dst)
        seen = nodes[:-1] if route.src == route.dst else nodes
        if len(set(seen)) != len(seen):
            raise E(f"{self.where}: route {route.src} → {route.dst} cannot be laid out without visiting a "
                    f"node twice ({' → '.join(nodes)})")
        return tuple(nodes)

    def _hop(self, nodes: list[str], to: str) -> None:
        """Extend ``nodes`` to node ``to`` by a junction, through a node of its own where a link
        already goes the same way (a network has one link from a node to another)."""
        at = nodes[-1]
        if at == to:
            return
        hops = [to]
        if (at, to) in self.laid:
            if (at, to) not in self.via:
                self.via[(at, to)] = _fresh("junction", self.taken_nodes)
                self.switches.append(self.via[(at, to)])
            hops = [self.via[(at, to)], to]
        for hop in hops:
            key = (nodes[-1], hop)
            self.junction_uses[key] = self.junction_uses.get(key, 0) + 1
            nodes.append(hop)

    # -- links

    def add_simgrid_link(self, name: str, uses: int) -> None:
        """The liquidsched link(s) of a SimGrid link: one per way routes cross it, a
        shared-duplex pair when both (see the module doc for capacities and slots)."""
        link = self.a.platform.links[name]
        ways = sorted(self.directions[name])
        given = self.a.hints.ids.get(name, (None, None))
        if link.policy == FATPIPE:
            capacity, slots = free_capacity(link.bandwidth_Bps, uses)
        else:
            capacity, slots = link.bandwidth_Bps, self.a.hints.slots.get(name)
        ends = (self.node((name, 0)), self.node((name, 1)))
        # Of a link crossed both ways, the direction away from a host is its UP.
        up = BACKWARD if ends[1] in self.a.roles and ends[0] not in self.a.roles else FORWARD
        ids = {}
        for way in ways:
            default = name if len(ways) == 1 else f"{name}_{'UP' if way == up else 'DOWN'}"
            ids[way] = _fresh(given[way] or default, self.taken_links)
            tail, head = ends if way == FORWARD else ends[::-1]
            self.links.append(Link(ids[way], tail, head, capacity, link.latency_s, slots,
                                   origin=f"{self.where}: link {name!r}"))
            self.simgrid[ids[way]] = name
        if len(ways) == 2:
            self.shared.append([ids[up], ids[1 - up]])

    def add_loopbacks(self) -> dict[tuple[str, str], tuple[str, ...]]:
        """The hosts' loopbacks (:func:`liquidsched.simgrid.platform_file.loopback_links`, as the own parser
        lays them): each host and a node of its own joined by a shared-duplex pair, one slot at
        the link's bandwidth whatever its policy (one route crosses it), or the slots liquidsched
        wrote; return the self routes."""
        hints, paths = self.a.hints, {}
        specs = {}
        for name in dict.fromkeys(self.a.loopbacks.values()):
            link = self.a.platform.links[name]
            slots = hints.slots.get(name) if link.policy != FATPIPE else None
            specs[name] = LoopbackLink(link.bandwidth_Bps, link.latency_s, slots, hints.ends.get(name),
                                       hints.ids.get(name, (None, None)))
        laid = loopback_links(self.a.loopbacks, specs, hints.routers, set(self.a.hosts) | set(self.switches),
                              self.taken_nodes, self.taken_links, self.where)
        for host, (node, up, down) in laid.items():
            self.switches.append(node)
            self.links += [up, down]
            self.shared.append([up.id, down.id])
            self.simgrid[up.id] = self.simgrid[down.id] = self.a.loopbacks[host]
            paths[(host, host)] = (host, node, host)
        return paths

    def add_junction(self, tail: str, head: str, uses: int, fastest_Bps: float) -> None:
        """A junction: a link that never limits the ``uses`` routes crossing it."""
        capacity, slots = free_capacity(fastest_Bps, uses)
        lid = _fresh(f"{tail}>{head}", self.taken_links)
        self.links.append(Link(lid, tail, head, capacity, 0.0, slots, origin=f"{self.where}: junction {lid!r}"))
        self.simgrid[lid] = None

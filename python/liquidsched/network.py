"""The network model: hosts, switches, directed links, resources and static routes.

A cable is two directed links. Two opposite links may be declared *shared-duplex*: both
directions then draw on one capacity and count as one **resource**, the unit of contention.
Every route between a sending and a receiving host is computed and checked when the network is
built, so a :class:`Network` that exists is a network whose routes are valid.

Routes are computed once per pair of switches where hosts hang off one switch (the usual case
on clusters of thousands of hosts): such a host's route is its link up, the path between the
two switches and the link down, composed on demand. Hosts attached otherwise are routed, and
their routes checked, one host pair at a time.

A resource has **slots**: how many transfers it carries at once at full speed. A link may set
them; otherwise they are ``max(1, ⌊c / p⌋)`` for a resource of capacity ``c``, where the **port
rate** ``p`` is the smallest capacity of a link attached to a host (a 1 Gbit/s uplink over
100 Mbit/s hosts has 10 slots). A transfer in a slot runs at its **slot rate**, the smallest
``c / slots`` over the resources of its path. With equal capacities every resource has one slot.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from fractions import Fraction
from typing import TYPE_CHECKING, Any, Callable, Iterable, Sequence

from .errors import MissingRouteError, RoutingError, TopologyError
from .routing import (Routing, ShortestPath, check_route, check_switch_path, composes, composes_by_host, no_self_route,
                      routes_of, switch_paths_to)
from .units import parse_duration, parse_rate, parse_speed

if TYPE_CHECKING:  # pragma: no cover
    import numpy as np

HOST = "host"
SWITCH = "switch"
ROLES = ("both", "sender", "receiver")


def _each_or_errors(items: list, add: Callable[[list], None]) -> dict:
    """``add(items)`` in one go (a search shared by all); when it fails, ``add`` each alone to
    find which fail (rare), returning the error of each."""
    try:
        add(items)
        return {}
    except RoutingError:
        pass
    failed = {}
    for item in items:
        try:
            add([item])
        except RoutingError as e:
            failed[item] = e
    return failed


#: The most slots a resource may have (the core counts them in 32 bits).
MAX_SLOTS = 2**31 - 1
#: The largest switch buffer a link may declare, in packets.
MAX_BUFFER_PACKETS = 10**6


@dataclass(frozen=True)
class Node:
    """A host or a switch. A host's ``role`` says whether it sends, receives, or both;
    ``speed_flops`` is its compute speed, where a model computes (series of reduces);
    ``forwards`` says that a host passes on what is not for it, as switches do (a host of a
    direct-connect network: a ring, a mesh of hosts, a star whose centre relays)."""

    id: str
    kind: str = HOST
    role: str = "both"
    speed_flops: float | None = None
    origin: str = field(default="", compare=False, repr=False)
    forwards: bool = False

    @property
    def sends(self) -> bool:
        return self.kind == HOST and self.role in ("both", "sender")

    @property
    def receives(self) -> bool:
        return self.kind == HOST and self.role in ("both", "receiver")


@dataclass(frozen=True)
class Link:
    """A directed link with its capacity (bytes/s), latency (s) and, optionally, its slots (the
    transfers it carries at once; derived from the capacities when None) and the buffer of the
    port that feeds it, in packets of up to 1500 bytes (paper 002's B_L: what the switch queues
    before it drops)."""

    id: str
    src: str
    dst: str
    capacity_Bps: float
    latency_s: float = 0.0
    slots: int | None = None
    buffer_packets: int | None = None
    origin: str = field(default="", compare=False, repr=False)


def _where(obj: Node | Link, fallback: str) -> str:
    return obj.origin or fallback


@dataclass(frozen=True)
class RouteTable:
    """Every composed route as integer arrays, for the loads of large traffics at once.

    A host whose routes are composed (it hangs off one switch alone, under a policy that routes
    from switches) has the resource of its link up and down, the index of its switch in
    ``switches`` and its index in ``targets``: its switch too where routes are chosen by switch,
    the host itself where forwarding tables choose them by destination host. ``-1`` marks a host
    routed pair by pair instead (:meth:`Network.path_resources`). The resources from switch
    ``a`` to the switch of target ``b`` are ``pair_resources[pair_offsets[p]:pair_offsets[p + 1]]``
    with ``p = a * len(targets) + b``, where ``pair_known[p]``.
    """

    #: host ids in declaration order: the index of the arrays below
    hosts: list[str]
    host_index: dict[str, int]
    up_resource: np.ndarray
    down_resource: np.ndarray
    up_switch: np.ndarray
    down_target: np.ndarray
    #: switches that hosts hang off, in declaration order, and each one's index
    switches: list[str]
    switch_index: dict[str, int]
    #: what composed routes lead to: those switches, or the hosts on them (forwarding by host)
    targets: list[str]
    target_index: dict[str, int]
    pair_known: np.ndarray
    pair_offsets: np.ndarray
    pair_resources: np.ndarray
    #: the links of each pair, as indices into the network's links in declaration order (kept
    #: where routes are walked as arrays, by destination host; None otherwise)
    pair_links: np.ndarray | None = None


class Network:
    """A network with static routing.

    Parameters
    ----------
    nodes, links
        The hosts and switches, and the directed links between them.
    routing
        A routing policy (:mod:`liquidsched.routing`); shortest path by default.
    shared_duplex
        Pairs of opposite link ids that share one capacity.
    name
        A name for reports.

    Examples
    --------
    >>> net = Network(
    ...     [Node("h1"), Node("h2"), Node("s", "switch")],
    ...     [Link("h1>s", "h1", "s", 1e8), Link("s>h1", "s", "h1", 1e8),
    ...      Link("h2>s", "h2", "s", 1e8), Link("s>h2", "s", "h2", 1e8)])
    >>> net.route("h1", "h2")
    ('h1>s', 's>h2')
    """

    def __init__(
        self,
        nodes: Iterable[Node],
        links: Iterable[Link],
        routing: Routing | None = None,
        shared_duplex: Iterable[Sequence[str]] = (),
        name: str = "network",
        description: str = "",
    ) -> None:
        self.name = name
        self.description = description
        #: the file or spec the network was read from ("" when built in Python), named in the
        #: errors of traffics that need a route the description leaves out
        self.source = ""
        #: Automorphisms of a regular network (:mod:`liquidsched.symmetry`), set by its builder.
        self.symmetry: Any = None
        self.routing: Routing = routing if routing is not None else ShortestPath()
        self.nodes: dict[str, Node] = {}
        self.links: dict[str, Link] = {}
        self.shared_duplex: list[tuple[str, str]] = []
        self._node_index: dict[str, int] = {}
        self._between: dict[tuple[str, str], str] = {}
        self._out: dict[str, list[str]] = {}
        self._in: dict[str, list[str]] = {}
        self._add_nodes(nodes)
        self._add_links(links)
        self._build_resources(shared_duplex)
        if hasattr(self.routing, "check_table"):
            self.routing.check_table(self)
        #: routes of host pairs that are not composed, and resources of the routes asked for
        self._routes: dict[tuple[str, str], tuple[str, ...]] = {}
        self._route_resources: dict[tuple[str, str], frozenset[int]] = {}
        #: links between two switches, for the composed routes
        self._switch_routes: dict[tuple[str, str], tuple[str, ...]] = {}
        self._route_table: RouteTable | None = None
        self._link_id_list: list[str] | None = None
        self._attach_hosts()
        self._compute_routes()

    # -- construction -------------------------------------------------------------------------

    def _add_nodes(self, nodes: Iterable[Node]) -> None:
        for i, node in enumerate(nodes):
            where = _where(node, f"nodes[{i}]")
            if not isinstance(node.id, str) or not node.id:
                raise TopologyError(f"{where}.id: expected a non-empty string, got {node.id!r}")
            if node.id in self.nodes:
                raise TopologyError(f"{where}.id: duplicate id {node.id!r}")
            if node.kind not in (HOST, SWITCH):
                raise TopologyError(f"{where}.kind: expected 'host' or 'switch', got {node.kind!r}")
            if node.role not in ROLES:
                raise TopologyError(f"{where}.role: expected one of {', '.join(ROLES)}, got {node.role!r}")
            if not isinstance(node.forwards, bool) or (node.forwards and node.kind != HOST):
                raise TopologyError(f"{where}.forwards: expected true or false on a host (a switch always "
                                    f"forwards), got {node.forwards!r} on a {node.kind}")
            if node.speed_flops is not None and not (node.kind == HOST and node.speed_flops > 0):
                raise TopologyError(f"{where}.speed_flops: expected a positive speed on a host, "
                                    f"got {node.speed_flops!r} on a {node.kind}")
            if node.speed_flops is not None:
                try:
                    parse_speed(node.speed_flops, f"{where}.speed_flops")
                except ValueError as e:
                    raise TopologyError(str(e)) from None
            self._node_index[node.id] = len(self.nodes)
            self.nodes[node.id] = node
            self._out[node.id] = []
            self._in[node.id] = []
        if not any(n.kind == HOST for n in self.nodes.values()):
            raise TopologyError("nodes: the network has no host")

    def _add_links(self, links: Iterable[Link]) -> None:
        for i, link in enumerate(links):
            where = _where(link, f"links[{i}]")
            if not isinstance(link.id, str) or not link.id:
                raise TopologyError(f"{where}.id: expected a non-empty string, got {link.id!r}")
            if link.id in self.links:
                raise TopologyError(f"{where}.id: duplicate id {link.id!r}")
            for end in ("src", "dst"):
                if getattr(link, end) not in self.nodes:
                    raise TopologyError(f"{where}.{end}: unknown node {getattr(link, end)!r}")
            if link.src == link.dst:
                raise TopologyError(f"{where}: link from {link.src} to itself")
            cap = link.capacity_Bps
            if isinstance(cap, bool) or not isinstance(cap, (int, float)) or not math.isfinite(cap) or cap <= 0:
                raise TopologyError(f"{where}.capacity_Bps: expected a positive number, got {cap!r}")
            lat = link.latency_s
            if isinstance(lat, bool) or not isinstance(lat, (int, float)) or not math.isfinite(lat) or lat < 0:
                raise TopologyError(f"{where}.latency_s: expected a non-negative number, got {lat!r}")
            # The bounds of the one numeric rule, whoever built the link (a file, a builder, Python).
            try:
                parse_rate(cap, f"{where}.capacity_Bps")
                parse_duration(lat, f"{where}.latency_s")
            except ValueError as e:
                raise TopologyError(str(e)) from None
            slots = link.slots
            if slots is not None and (isinstance(slots, bool) or not isinstance(slots, int)
                                      or not 1 <= slots <= MAX_SLOTS):
                raise TopologyError(f"{where}.slots: expected a whole number from 1 to {MAX_SLOTS:,}, got {slots!r}")
            buffer = link.buffer_packets
            if buffer is not None and (isinstance(buffer, bool) or not isinstance(buffer, int)
                                       or not 1 <= buffer <= MAX_BUFFER_PACKETS):
                raise TopologyError(f"{where}.buffer_packets: expected a whole number from 1 to "
                                    f"{MAX_BUFFER_PACKETS:,}, got {buffer!r}")
            if (link.src, link.dst) in self._between:
                other = self._between[(link.src, link.dst)]
                raise TopologyError(
                    f"{where}: a second link from {link.src} to {link.dst} (link {other!r} exists; "
                    "declare one link with the total capacity)"
                )
            self.links[link.id] = link
            self._between[(link.src, link.dst)] = link.id
            self._out[link.src].append(link.dst)
            self._in[link.dst].append(link.src)
        for ids in (self._out, self._in):
            for v, neighbours in ids.items():
                neighbours.sort(key=self._node_index.__getitem__)
        for node in self.nodes.values():
            if node.kind == HOST and not self._out[node.id] and not self._in[node.id]:
                where = _where(node, f"nodes[{self._node_index[node.id]}]")
                raise TopologyError(f"{where}: host {node.id} has no link: it can neither send nor receive")

    def _build_resources(self, shared_duplex: Iterable[Sequence[str]]) -> None:
        paired: dict[str, str] = {}
        for i, pair in enumerate(shared_duplex):
            where = f"shared_duplex[{i}]"
            if len(pair) != 2:
                raise TopologyError(f"{where}: expected two link ids, got {list(pair)!r}")
            a, b = pair
            for lid in (a, b):
                if lid not in self.links:
                    raise TopologyError(f"{where}: unknown link {lid!r}")
                if lid in paired:
                    raise TopologyError(f"{where}: link {lid!r} is already shared-duplex")
            la, lb = self.links[a], self.links[b]
            if (la.src, la.dst) != (lb.dst, lb.src):
                raise TopologyError(f"{where}: links {a!r} and {b!r} are not opposite directions")
            if la.capacity_Bps != lb.capacity_Bps:
                raise TopologyError(f"{where}: links {a!r} and {b!r} have different capacities")
            if la.slots != lb.slots:
                raise TopologyError(f"{where}: links {a!r} and {b!r} have different slots ({la.slots}, {lb.slots})")
            if la.buffer_packets != lb.buffer_packets:
                raise TopologyError(f"{where}: links {a!r} and {b!r} have different buffers "
                                    f"({la.buffer_packets}, {lb.buffer_packets} packets); the pair has one")
            paired[a], paired[b] = b, a
            self.shared_duplex.append((a, b))
        self.resources: list[str] = []
        self.resource_capacity: list[float] = []
        self.link_resource: dict[str, int] = {}
        for lid, link in self.links.items():
            if lid in self.link_resource:
                continue
            self.link_resource[lid] = len(self.resources)
            if lid in paired:
                self.link_resource[paired[lid]] = len(self.resources)
                self.resources.append(f"{lid}|{paired[lid]}")
            else:
                self.resources.append(lid)
            self.resource_capacity.append(float(link.capacity_Bps))
        self._derive_slots()

    def _derive_slots(self) -> None:
        host_caps = [Fraction(l.capacity_Bps) for l in self.links.values()
                     if self.nodes[l.src].kind == HOST or self.nodes[l.dst].kind == HOST]
        #: the smallest capacity of a link attached to a host (None when no link touches a host)
        self.port_rate_Bps: Fraction | None = min(host_caps) if host_caps else None
        first: dict[int, str] = {}
        for lid, r in self.link_resource.items():
            first.setdefault(r, lid)
        #: one link of each resource (the first declared of a shared-duplex pair)
        self.resource_link: list[str] = [first[r] for r in range(len(self.resources))]
        first_link = [self.links[lid] for lid in self.resource_link]
        #: the buffer of each resource in packets (one for both directions of a shared-duplex
        #: pair), None where the model does not say
        self.resource_buffer_packets: list[int | None] = [link.buffer_packets for link in first_link]
        #: transfers each resource carries at once
        self.resource_slots: list[int] = []
        #: True where a link set the slots, False where they are derived
        self.resource_slots_set: list[bool] = []
        for r in range(len(self.resources)):
            link = first_link[r]
            if link.slots is not None:
                slots = link.slots
            elif self.port_rate_Bps is None:
                slots = 1
            else:
                # More slots than the core counts in could never all be used by a traffic anyway.
                slots = min(MAX_SLOTS, max(1, int(Fraction(link.capacity_Bps) // self.port_rate_Bps)))
            self.resource_slots.append(slots)
            self.resource_slots_set.append(link.slots is not None)
        self._slot_rate_ranks: tuple[list[Fraction], list[int]] | None = None

    def _attach_hosts(self) -> None:
        """Find the hosts whose routes are composed: under a policy that routes from switches, a
        host whose one link up goes to a switch (routes from it), and a host whose one link down
        comes from a switch (routes to it). The two switches may differ: a cluster's hosts send
        to its switch and receive from the far end of its backbone."""
        #: the switch of each host's one link up, and of its one link down, with the links
        self._home_up: dict[str, str] = {}
        self._home_down: dict[str, str] = {}
        self._up: dict[str, str] = {}
        self._down: dict[str, str] = {}
        if not composes(self.routing):
            return
        for h in self.hosts():
            up, down = self.switch_up(h), self.switch_down(h)
            if up is not None:
                self._home_up[h] = up
                self._up[h] = self.link_between(h, up)  # type: ignore[assignment]
            if down is not None:
                self._home_down[h] = down
                self._down[h] = self.link_between(down, h)  # type: ignore[assignment]

    def switch_up(self, host: str) -> str | None:
        """The switch a host's one link up goes to, or None (no link up, several, or not to a
        switch)."""
        out = self._out[host]
        return out[0] if len(out) == 1 and self.is_switch(out[0]) else None

    def switch_down(self, host: str) -> str | None:
        """The switch a host's one link down comes from, or None."""
        into = self._in[host]
        return into[0] if len(into) == 1 and self.is_switch(into[0]) else None

    def _compute_routes(self) -> None:
        """Compute and check the route of every sender to every receiver: once per switch and
        target (a receiver's switch, or the receiver under forwarding by host) for composed
        routes, once per host pair for the others.

        A pair the network does not connect (no path, no table entry: a
        :class:`~liquidsched.errors.MissingRouteError`) does not stop it from loading: platforms
        route only some pairs, a star's leaves reach its centre but not each other, and a host
        with no switch has no route to itself (a local copy). Such pairs are kept in
        :attr:`missing_routes`, and a traffic that needs one is refused naming it. Any other
        failure (a route that loops, leaves the links, crosses a node that does not forward) is
        an error in the description: the first, senders then receivers in declaration order, is
        raised."""
        senders, receivers = self.senders(), self.receivers()
        first_sender: dict[str, str] = {}
        for s in senders:
            if s in self._up:
                first_sender.setdefault(self._home_up[s], s)
        first_receiver: dict[str, str] = {}
        for d in receivers:
            if d in self._down:
                first_receiver.setdefault(self._target(d), d)
        if composes_by_host(self.routing):
            # Every switch to every host at once; failures are kept for the pairs senders need.
            composed = {(first, dst): e for (first, dst), e in self._compose_by_host(*self._table_ends()).items()
                        if first in first_sender and dst in first_receiver}
        else:
            composed = {(first, last): e for last in first_receiver
                        for first, e in self._add_switch_routes(list(first_sender), last).items()}
        failed: dict[tuple[str, str], RoutingError] = {}
        for (first, last), e in composed.items():
            src, dst = first_sender[first], first_receiver[last]
            failed[(src, dst)] = type(e)(f"{e} (needed for {src} to {dst})")
        alone_senders = [s for s in senders if s not in self._up]
        alone_receivers = [d for d in receivers if d not in self._down]
        pairs = [(s, d) for s in alone_senders for d in receivers if s != d or self._loops_back(s)]
        pairs += [(s, d) for s in senders if s in self._up for d in alone_receivers]
        failed.update(self._add_host_routes(pairs))
        receiving = set(receivers)
        failed.update({(s, s): no_self_route(s) for s in alone_senders if s in receiving and not self._loops_back(s)})
        sender_at = {h: i for i, h in enumerate(senders)}
        receiver_at = {h: i for i, h in enumerate(receivers)}
        in_order = sorted(failed, key=lambda pair: (sender_at[pair[0]], receiver_at[pair[1]]))
        for pair in in_order:
            if not isinstance(failed[pair], MissingRouteError):
                raise failed[pair]
        #: pairs of hosts with no route, one per pair of switches where routes are composed
        #: (every host pair behind them has none either), with why, in declaration order
        self.missing_routes: dict[tuple[str, str], MissingRouteError] = {p: failed[p] for p in in_order}

    def _table_ends(self) -> tuple[list[str], list[str]]:
        """What the route table's pairs join, in declaration order: the switches hosts' links up
        go to or links down come from, and the targets (those switches, or under forwarding by
        host the hosts with a link down from one)."""
        homes = set(self._home_up.values()) | set(self._home_down.values())
        switches = [s for s in self.switches() if s in homes]
        if composes_by_host(self.routing):
            return switches, [h for h in self.hosts() if h in self._home_down]
        return switches, switches

    def _target(self, host: str) -> str:
        """What a composed route to ``host`` is found by: its switch, or the host itself where
        the forwarding tables choose by destination host."""
        return host if composes_by_host(self.routing) else self._home_down[host]

    def _loops_back(self, host: str) -> bool:
        """Whether ``host`` has a switch to send to itself through (else its transfer to itself
        is a local copy, with no route)."""
        return any(self.is_switch(w) for w in self._out[host])

    def _compose_by_host(self, firsts: list[str], targets: list[str]) -> dict[tuple[str, str], RoutingError]:
        """The route table of a policy that forwards by destination host, every switch of
        ``firsts`` to every host of ``targets`` walked at once through the forwarding matrix:
        one step of every walk at a time, as many steps as the longest route. Returns the error
        of each (first switch, target) pair that fails."""
        import numpy as np

        forwarding = [v for v in self.nodes if self.forwards(v)]
        matrix = self.routing.matrix_for(self, forwarding, targets)  # type: ignore[union-attr]
        column, row = matrix.column, matrix.row
        n, m = len(firsts), len(targets)
        cur = np.repeat(np.array([column[f] for f in firsts], dtype=np.int64), m)
        tgt = np.tile(np.array([row[t] for t in targets], dtype=np.int64), n)
        end = np.tile(np.array([column[self._home_down[t]] for t in targets], dtype=np.int64), n)
        links = self._forwarding_links(matrix.nodes)
        steps: list[np.ndarray] = []
        done = cur == end
        broken = np.zeros(len(cur), dtype=bool)
        for _ in range(len(matrix.nodes)):
            going = np.flatnonzero(~done & ~broken)
            if not len(going):
                break
            nxt = matrix.next_node[tgt[going], cur[going]].astype(np.int64)
            link = np.full(len(cur), -1, dtype=np.int64)
            ok = nxt >= 0
            link[going[ok]] = links(cur[going[ok]], nxt[ok])
            broken[going[~ok]] = True
            broken[going[ok][link[going[ok]] < 0]] = True
            cur[going[ok]] = nxt[ok]
            steps.append(link)
            done |= (cur == end) & ~broken
        failed: dict[tuple[str, str], RoutingError] = {}
        for p in np.flatnonzero(~done).tolist():
            first, last = firsts[p // m], targets[p % m]
            # Walk the failing pair alone, for the error that names what is wrong.
            for e in self._add_switch_routes([first], last).values():
                failed[(first, last)] = e
        self._route_table = self._by_host_route_table(firsts, targets, steps, done)
        return failed

    def _forwarding_links(self, nodes: Sequence[str]) -> Callable[[np.ndarray, np.ndarray], np.ndarray]:
        """A look-up of the link between two of ``nodes`` by their indices (-1 where none)."""
        import numpy as np

        at = {v: i for i, v in enumerate(nodes)}
        n = len(nodes)
        index = {lid: i for i, lid in enumerate(self.links)}
        pairs = [(at[l.src] * n + at[l.dst], index[l.id]) for l in self.links.values() if l.src in at and l.dst in at]
        pairs.sort()
        keys = np.array([k for k, _ in pairs], dtype=np.int64)
        values = np.array([v for _, v in pairs], dtype=np.int64)

        def link(u: np.ndarray, v: np.ndarray) -> np.ndarray:
            key = u * n + v
            pos = np.minimum(np.searchsorted(keys, key), max(len(keys) - 1, 0))
            found = (keys[pos] == key) if len(keys) else np.zeros(len(key), dtype=bool)
            return np.where(found, values[pos] if len(keys) else -1, -1)

        return link

    def _by_host_route_table(self, firsts: list[str], targets: list[str], steps: list[np.ndarray],
                             done: np.ndarray) -> RouteTable:
        """The route table of walks from each of ``firsts`` to each of ``targets``: ``steps[i]``
        is every walk's link at step ``i`` (-1 when it has arrived), ``done`` those that did."""
        import numpy as np

        link_resource = np.array([self.link_resource[l] for l in self.links], dtype=np.int64)
        walked = np.stack(steps, axis=1) if steps else np.zeros((len(done), 0), dtype=np.int64)
        taken = (walked >= 0) & done[:, None]
        offsets = np.zeros(len(done) + 1, dtype=np.int64)
        np.cumsum(taken.sum(axis=1), out=offsets[1:])
        # Row by row, so each pair's links come in the order walked.
        pair_links = walked[taken]
        return self._route_table_of(firsts, targets, done.copy(), offsets, link_resource[pair_links], pair_links)

    def _route_table_of(self, switches: list[str], targets: list[str], known: np.ndarray, offsets: np.ndarray,
                        resources: np.ndarray, pair_links: np.ndarray | None = None) -> RouteTable:
        """The route table of these pairs, with each host's link up and down, switch and target."""
        import numpy as np

        hosts = self.hosts()
        switch_index = {s: i for i, s in enumerate(switches)}
        target_index = {t: i for i, t in enumerate(targets)}
        link_resource = self.link_resource

        def column(ends: dict[str, str], value) -> np.ndarray:
            return np.array([value(h) if h in ends else -1 for h in hosts], dtype=np.int64)

        return RouteTable(
            hosts=hosts, host_index={h: i for i, h in enumerate(hosts)},
            up_resource=column(self._up, lambda h: link_resource[self._up[h]]),
            down_resource=column(self._down, lambda h: link_resource[self._down[h]]),
            up_switch=column(self._up, lambda h: switch_index[self._home_up[h]]),
            down_target=column(self._down, lambda h: target_index[self._target(h)]),
            switches=switches, switch_index=switch_index, targets=targets, target_index=target_index,
            pair_known=known, pair_offsets=offsets, pair_resources=resources, pair_links=pair_links,
        )

    def _add_switch_routes(self, firsts: list[str], last: str) -> dict[str, RoutingError]:
        """Compute and check the paths from each of ``firsts`` to switch ``last``; return the
        error of each that fails."""

        end = self._home_down[last] if composes_by_host(self.routing) else last

        def add(some: list[str]) -> None:
            for first, nodes in switch_paths_to(self.routing, self, last, some):
                self._switch_routes[(first, last)] = check_switch_path(self, first, end, nodes)

        return _each_or_errors(firsts, add)

    def _add_host_routes(self, pairs: list[tuple[str, str]]) -> dict[tuple[str, str], RoutingError]:
        """Compute and check the route of each host pair; return the error of each that fails."""

        def add(some: list[tuple[str, str]]) -> None:
            for src, dst, nodes in routes_of(self.routing, self, some):
                self._routes[(src, dst)] = check_route(self, src, dst, nodes)

        return _each_or_errors(pairs, add)

    def _switch_route(self, first: str, last: str, src: str, dst: str) -> tuple[str, ...]:
        """The links from switch ``first`` to switch ``last`` (or to the switch of host ``last``,
        under forwarding by host), computed and checked when first asked for (by the route from
        ``src`` to ``dst``, named in errors)."""
        key = (first, last)
        if key not in self._switch_routes:
            table = self._route_table if composes_by_host(self.routing) else None
            if table is not None:
                p = table.switch_index[first] * len(table.targets) + table.target_index[last]
                if table.pair_known[p]:
                    ids = self._link_ids()
                    self._switch_routes[key] = tuple(
                        ids[i] for i in table.pair_links[table.pair_offsets[p]:table.pair_offsets[p + 1]].tolist())
                    return self._switch_routes[key]
            for e in self._add_switch_routes([first], last).values():
                raise type(e)(f"{e} (needed for {src} to {dst})")
        return self._switch_routes[key]

    def _link_ids(self) -> list[str]:
        """Link ids in declaration order (the index of a route table's links)."""
        if self._link_id_list is None:
            self._link_id_list = list(self.links)
        return self._link_id_list

    def _route(self, src: str, dst: str) -> tuple[str, ...]:
        """The links from host ``src`` to host ``dst``. A composed route is made on demand from
        its switch path, checked once for every host pair that uses it (see
        :func:`liquidsched.routing.check_switch_path`); the others are checked once and kept."""
        key = (src, dst)
        if key in self._routes:
            return self._routes[key]
        if src in self._up and dst in self._down:
            inner = self._switch_route(self._home_up[src], self._target(dst), src, dst)
            return (self._up[src],) + inner + (self._down[dst],)
        nodes = self.routing.route_nodes(self, src, dst)
        links = check_route(self, src, dst, nodes)
        self._routes[key] = links
        return links

    def route_table(self) -> RouteTable:
        """The composed routes as integer arrays (built once, when first asked for)."""
        if self._route_table is None:
            self._route_table = self._build_route_table()
        return self._route_table

    def _build_route_table(self) -> RouteTable:
        import numpy as np  # here only: loading a network (and `topology list`) does without it

        switches, targets = self._table_ends()
        switch_index = {s: i for i, s in enumerate(switches)}
        target_index = {t: i for i, t in enumerate(targets)}
        link_resource = self.link_resource
        n, m = len(switches), len(targets)
        routes = self._switch_routes
        keys = np.fromiter((switch_index[f] * m + target_index[l] for f, l in routes), np.int64, len(routes))
        sizes = np.fromiter(map(len, routes.values()), np.int64, len(routes))
        # A switch path is loop-free, so its links are distinct resources (opposite links that
        # share one capacity would need a switch twice): no set to make.
        flat = np.fromiter((link_resource[l] for links in routes.values() for l in links), np.int64,
                           int(sizes.sum()))
        known = np.zeros(n * m, dtype=bool)
        known[keys] = True
        lengths = np.zeros(n * m, dtype=np.int64)
        lengths[keys] = sizes
        offsets = np.zeros(n * m + 1, dtype=np.int64)
        np.cumsum(lengths, out=offsets[1:])
        # Reorder the paths from the order they were found in into the order of their pairs.
        found_at = np.zeros(n * m, dtype=np.int64)
        found_at[keys] = np.cumsum(sizes) - sizes
        pair = np.repeat(np.arange(n * m), lengths)
        resources = flat[found_at[pair] + np.arange(len(flat)) - offsets[:-1][pair]]
        return self._route_table_of(switches, targets, known, offsets, resources)

    # -- queries ------------------------------------------------------------------------------

    def hosts(self) -> list[str]:
        """Host ids in declaration order."""
        return [n.id for n in self.nodes.values() if n.kind == HOST]

    def switches(self) -> list[str]:
        """Switch ids in declaration order."""
        return [n.id for n in self.nodes.values() if n.kind == SWITCH]

    def senders(self) -> list[str]:
        return [h for h in self.hosts() if self.nodes[h].sends]

    def receivers(self) -> list[str]:
        return [h for h in self.hosts() if self.nodes[h].receives]

    def is_switch(self, node: str) -> bool:
        n = self.nodes.get(node)
        return n is not None and n.kind == SWITCH

    def is_host(self, node: str) -> bool:
        n = self.nodes.get(node)
        return n is not None and n.kind == HOST

    def has_node(self, node: str) -> bool:
        return node in self.nodes

    def forwards(self, node: str) -> bool:
        """Whether ``node`` passes on what is not for it: a switch, or a host said to forward."""
        n = self.nodes.get(node)
        return n is not None and (n.kind == SWITCH or n.forwards)

    def node_index(self, node: str) -> int:
        return self._node_index[node]

    def out_neighbours(self, node: str) -> list[str]:
        return self._out[node]

    def in_neighbours(self, node: str) -> list[str]:
        return self._in[node]

    def link_between(self, u: str, v: str) -> str | None:
        """The id of the link from ``u`` to ``v``, or None."""
        return self._between.get((u, v))

    def home_switch(self, host: str) -> str | None:
        """The one switch a host is attached to, or None if it has none or several."""
        neighbours = set(self._out[host]) | set(self._in[host])
        if len(neighbours) == 1:
            (only,) = neighbours
            if self.is_switch(only):
                return only
        return None

    def host_groups(self) -> dict[str, list[str]]:
        """Hosts by the switch they hang off, switches and hosts in declaration order.

        Raises
        ------
        TopologyError
            if a host is not attached to exactly one switch.
        """
        groups: dict[str, list[str]] = {s: [] for s in self.switches()}
        for h in self.hosts():
            home = self.home_switch(h)
            if home is None:
                raise TopologyError(f"host {h} is not attached to exactly one switch")
            groups[home].append(h)
        return {s: hs for s, hs in groups.items() if hs}

    def route(self, src: str, dst: str) -> tuple[str, ...]:
        """Link ids of the route from host ``src`` to host ``dst``."""
        for end, h in (("source", src), ("destination", dst)):
            if h not in self.nodes or self.nodes[h].kind != HOST:
                raise TopologyError(f"unknown {end} host {h!r}")
        return self._route(src, dst)

    def path_resources(self, src: str, dst: str) -> frozenset[int]:
        """Resource indices used by the route from ``src`` to ``dst``."""
        key = (src, dst)
        if key not in self._route_resources:
            self._route_resources[key] = frozenset(self.link_resource[l] for l in self.route(src, dst))
        return self._route_resources[key]

    def resource_capacity_exact(self, r: int) -> Fraction:
        """Capacity of resource ``r`` as an exact fraction (of the float as stored)."""
        return Fraction(self.resource_capacity[r])

    def slot_rate_exact(self, resources: Iterable[int]) -> Fraction:
        """The rate of a transfer in a slot of each of ``resources`` (its path): the smallest
        capacity / slots among them, exactly.

        Examples
        --------
        >>> from liquidsched.topologies import hierarchical
        >>> net = hierarchical(2, 2)          # 12.5 MB/s hosts, 125 MB/s uplinks: 10 slots
        >>> net.resource_slots[net.link_resource["e1>root"]]
        10
        >>> net.slot_rate_exact(net.path_resources("h1.1", "h2.1"))
        Fraction(12500000, 1)
        """
        values, rank = self.slot_rate_ranks()
        return values[min(rank[r] for r in resources)]

    def slot_rate_ranks(self) -> tuple[list[Fraction], list[int]]:
        """The distinct slot rates (capacity / slots) of the resources in increasing order, and
        each resource's rank among them: the smallest rate on a path is the smallest rank,
        found with integer comparisons."""
        if self._slot_rate_ranks is None:
            rates = [self.resource_capacity_exact(r) / k for r, k in enumerate(self.resource_slots)]
            values = sorted(set(rates))
            index = {v: i for i, v in enumerate(values)}
            self._slot_rate_ranks = (values, [index[v] for v in rates])
        return self._slot_rate_ranks

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, Network):
            return NotImplemented
        return (
            self.name == other.name
            and list(self.nodes.values()) == list(other.nodes.values())
            and list(self.links.values()) == list(other.links.values())
            and self.shared_duplex == other.shared_duplex
            and self.routing == other.routing
        )

    def __repr__(self) -> str:
        return (
            f"Network({self.name!r}, {len(self.hosts())} hosts, {len(self.switches())} switches, "
            f"{len(self.links)} links, routing={self.routing.policy})"
        )

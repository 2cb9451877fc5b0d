"""Platforms of paper 003: processors and routers joined by directed edges.

An edge ``(i, j)`` has a cost ``c(i, j)``: the seconds one byte takes on it. Every node is
*one-port with full overlap*: it sends to at most one neighbour and receives from at most one at a
time, while it computes. Data is stored and forwarded: a message reaches a node that is not a
neighbour of its sender by being received and sent again by each node on the way. A processor
computes at ``speed_flops``; a router (speed 0) only forwards.

How this maps onto liquidsched's network model (:meth:`Platform.network`): every platform node,
router or processor, is a host (it runs a rank that forwards); each host reaches the rest through
its own switch ``NODE.x`` over two *port* links of one slot each, one for sending and one for
receiving; each platform edge is a one-slot link between the two nodes' switches at its
bandwidth ``1 / c``. A frame of that network is then valid exactly when it is a matching of
senders to receivers, which is the one-port rule, and a transfer between neighbours runs at the
edge's bandwidth.

From a liquidsched network (:func:`platform_of_network`) every host becomes a processor (at its
``speed_flops``, or a router when it has none) and every switch a router; each directed link is an
edge of cost ``1 / capacity``. So a switch here forwards one message at a time, as the paper's
routers do: a crossbar switch is modelled pessimistically. Shared-duplex links are refused: the
one-port model has no resource shared by two opposite edges.
"""

from __future__ import annotations

import random
from dataclasses import dataclass
from fractions import Fraction
from typing import Any, Iterable

from ..errors import TopologyError
from ..network import HOST, SWITCH, Link, Network, Node


def exact(value: float | int | Fraction | str) -> Fraction:
    """The exact fraction a user meant by ``value``: ``0.1`` is 1/10, not the binary double."""
    if isinstance(value, Fraction):
        return value
    if isinstance(value, int):
        return Fraction(value)
    return Fraction(repr(float(value)) if not isinstance(value, str) else value)


@dataclass(frozen=True)
class PlatformNode:
    """A processor (``speed_flops > 0``) or a router (``speed_flops == 0``)."""

    name: str
    speed_flops: Fraction = Fraction(0)

    @property
    def is_router(self) -> bool:
        return self.speed_flops == 0


@dataclass(frozen=True)
class PlatformEdge:
    """A directed edge; a byte takes ``cost_s_per_byte`` on it."""

    src: str
    dst: str
    cost_s_per_byte: Fraction

    @property
    def bandwidth_Bps(self) -> Fraction:
        return 1 / self.cost_s_per_byte


class Platform:
    """A platform graph: one-port nodes, directed edges with a cost per byte.

    Parameters
    ----------
    nodes
        The processors and routers.
    edges
        The directed edges; at most one per ordered pair of nodes.
    name
        A name for reports.
    hosts
        The nodes that take part in an operation unless told otherwise (the processors when
        None; a network's hosts, which are routers when they have no speed).

    Examples
    --------
    >>> p = chain(3, bandwidth_Bps=1e6)
    >>> [f"{e.src}>{e.dst}" for e in p.edges]
    ['P0>P1', 'P1>P0', 'P1>P2', 'P2>P1']
    >>> p.edges[0].cost_s_per_byte
    Fraction(1, 1000000)
    """

    def __init__(self, nodes: Iterable[PlatformNode], edges: Iterable[PlatformEdge], name: str = "platform",
                 hosts: Iterable[str] | None = None) -> None:
        self.name = name
        self.nodes: dict[str, PlatformNode] = {}
        for i, node in enumerate(nodes):
            if not isinstance(node.name, str) or not node.name:
                raise TopologyError(f"platform {name}: node {i}: expected a non-empty name, got {node.name!r}")
            if node.name in self.nodes:
                raise TopologyError(f"platform {name}: node {i}: duplicate name {node.name!r}")
            if not node.speed_flops >= 0:
                raise TopologyError(f"platform {name}: node {node.name}: speed must be 0 (a router) or positive, "
                                    f"got {node.speed_flops}")
            self.nodes[node.name] = node
        self.names: list[str] = list(self.nodes)
        self.index: dict[str, int] = {n: i for i, n in enumerate(self.names)}
        self.edges: list[PlatformEdge] = []
        self.edge_index: dict[tuple[str, str], int] = {}
        self.out_edges: list[list[int]] = [[] for _ in self.names]
        self.in_edges: list[list[int]] = [[] for _ in self.names]
        for i, edge in enumerate(edges):
            where = f"platform {name}: edge {i} ({edge.src} > {edge.dst})"
            for end in (edge.src, edge.dst):
                if end not in self.nodes:
                    raise TopologyError(f"{where}: unknown node {end!r}")
            if edge.src == edge.dst:
                raise TopologyError(f"{where}: an edge joins two different nodes")
            if (edge.src, edge.dst) in self.edge_index:
                raise TopologyError(f"{where}: a second edge between the same nodes")
            if not edge.cost_s_per_byte > 0:
                raise TopologyError(f"{where}: the cost per byte must be positive, got {edge.cost_s_per_byte}")
            self.edge_index[(edge.src, edge.dst)] = len(self.edges)
            self.out_edges[self.index[edge.src]].append(len(self.edges))
            self.in_edges[self.index[edge.dst]].append(len(self.edges))
            self.edges.append(edge)
        if not self.nodes:
            raise TopologyError(f"platform {name}: no node")
        self.hosts: list[str] = list(hosts) if hosts is not None else self.processors()
        unknown = [h for h in self.hosts if h not in self.nodes]
        if unknown:
            raise TopologyError(f"platform {name}: host {unknown[0]!r} is not a node")

    def processors(self) -> list[str]:
        """The nodes that compute, in declaration order."""
        return [n for n in self.names if not self.nodes[n].is_router]

    def edge_name(self, e: int) -> str:
        edge = self.edges[e]
        return f"{edge.src}>{edge.dst}"

    def speed(self, node: str) -> Fraction:
        return self.nodes[node].speed_flops

    def shortest_paths_from(self, src: str) -> dict[str, list[int]]:
        """The fewest-hop path (edge indices) from ``src`` to every node it reaches, ties broken
        by the order of the edges, so that the same platform always gives the same paths."""
        paths: dict[str, list[int]] = {src: []}
        frontier = [src]
        while frontier:
            nxt: list[str] = []
            for u in frontier:
                for e in self.out_edges[self.index[u]]:
                    v = self.edges[e].dst
                    if v not in paths:
                        paths[v] = paths[u] + [e]
                        nxt.append(v)
            frontier = nxt
        return paths

    def path(self, src: str, dst: str) -> list[int]:
        """The fewest-hop path from ``src`` to ``dst`` (see :meth:`shortest_paths_from`)."""
        paths = self.shortest_paths_from(src)
        if dst not in paths:
            raise TopologyError(f"platform {self.name}: no path from {src} to {dst}")
        return paths[dst]

    def network(self) -> Network:
        """This platform as a liquidsched network (the mapping in the module doc): the network
        that a period's schedule, the simulator, the executor and the emulator work on.

        Every node must reach every other, since ranks on every node talk to each other when
        they start."""
        for src in self.names:
            missing = set(self.names) - set(self.shortest_paths_from(src))
            if missing:
                raise TopologyError(f"platform {self.name}: {src} reaches no path to {sorted(missing)[0]}; "
                                    f"running on the platform needs every node to reach every other")
        nodes = [Node(n, HOST, speed_flops=float(self.nodes[n].speed_flops) or None) for n in self.names]
        nodes += [Node(port_switch(n), SWITCH) for n in self.names]
        links: list[Link] = []
        for i, n in enumerate(self.names):
            attached = [self.edges[e].bandwidth_Bps for e in self.out_edges[i] + self.in_edges[i]]
            # As fast as all the node's edges together: an edge's own bandwidth limits a transfer,
            # and on an emulated platform the acknowledgements of the node's other flows, which
            # cross its ports too, never queue behind it.
            port = float(sum(attached)) if attached else 1.0
            links += [Link(f"{n}>{port_switch(n)}", n, port_switch(n), port, slots=1, buffer_packets=PORT_BUFFER),
                      Link(f"{port_switch(n)}>{n}", port_switch(n), n, port, slots=1, buffer_packets=PORT_BUFFER)]
        for edge in self.edges:
            links.append(Link(edge_link(edge.src, edge.dst), port_switch(edge.src), port_switch(edge.dst),
                              float(edge.bandwidth_Bps), slots=1, buffer_packets=PORT_BUFFER))
        return Network(nodes, links, name=self.name, description=f"one-port platform {self.name}")

    def to_dict(self) -> dict[str, Any]:
        return {"name": self.name,
                "nodes": [{"name": n.name, "speed_flops": str(n.speed_flops)} for n in self.nodes.values()],
                "edges": [{"src": e.src, "dst": e.dst, "cost_s_per_byte": str(e.cost_s_per_byte)}
                          for e in self.edges]}

    @classmethod
    def from_dict(cls, doc: dict[str, Any]) -> Platform:
        try:
            return cls([PlatformNode(n["name"], Fraction(n["speed_flops"])) for n in doc["nodes"]],
                       [PlatformEdge(e["src"], e["dst"], Fraction(e["cost_s_per_byte"])) for e in doc["edges"]],
                       doc.get("name", "platform"))
        except (KeyError, TypeError, ValueError, ZeroDivisionError) as e:
            raise TopologyError(f"platform document: {type(e).__name__}: {e}") from None

    def __repr__(self) -> str:
        return (f"Platform({self.name!r}, {len(self.processors())} processors, "
                f"{len(self.names) - len(self.processors())} routers, {len(self.edges)} edges)")


#: The buffer of every link of a platform's network, in packets: enough for the bursts of a few
#: TCP flows at the slow rates an emulated platform runs at (the emulator's default, 20 ms of
#: traffic, is two or three packets there, and dropped hundreds of them per run).
PORT_BUFFER = 64


def port_switch(node: str) -> str:
    """The switch of a platform node in :meth:`Platform.network`."""
    return f"{node}.x"


def edge_link(src: str, dst: str) -> str:
    """The link of the platform edge ``src > dst`` in :meth:`Platform.network`."""
    return f"{src}.x>{dst}.x"


def _both_ways(a: str, b: str, bandwidth_Bps: float | Fraction) -> list[PlatformEdge]:
    cost = 1 / exact(bandwidth_Bps)
    return [PlatformEdge(a, b, cost), PlatformEdge(b, a, cost)]


def complete(n: int = 10, bandwidth_Bps: float = 100e6, speed_flops: float = 100e6) -> Platform:
    """``n`` processors, every pair joined both ways (paper 003 Fig. 13: 10 nodes, 100 MB/s,
    100 Mflop/s)."""
    _check_count("complete", n, 2)
    _check_rates("complete", bandwidth_Bps, speed_flops)
    names = [f"P{i}" for i in range(n)]
    return Platform([PlatformNode(p, exact(speed_flops)) for p in names],
                    [e for i in range(n) for j in range(i + 1, n) for e in _both_ways(names[i], names[j], bandwidth_Bps)],
                    f"complete-{n}")


def star(n: int = 4, bandwidth_Bps: float = 100e6, speed_flops: float = 100e6) -> Platform:
    """A centre ``P0`` joined both ways to ``n - 1`` leaves."""
    _check_count("star", n, 2)
    _check_rates("star", bandwidth_Bps, speed_flops)
    return Platform([PlatformNode(f"P{i}", exact(speed_flops)) for i in range(n)],
                    [e for i in range(1, n) for e in _both_ways("P0", f"P{i}", bandwidth_Bps)], f"star-{n}")


def chain(n: int = 3, bandwidth_Bps: float = 100e6, speed_flops: float = 100e6) -> Platform:
    """``P0 – P1 – … – P(n-1)``, each step both ways."""
    _check_count("chain", n, 2)
    _check_rates("chain", bandwidth_Bps, speed_flops)
    return Platform([PlatformNode(f"P{i}", exact(speed_flops)) for i in range(n)],
                    [e for i in range(n - 1) for e in _both_ways(f"P{i}", f"P{i + 1}", bandwidth_Bps)], f"chain-{n}")


#: Rates of the random platforms, in MB/s: few values with a small common multiple, so that
#: exact periods stay small enough to decompose.
LAN_RATES_MBps = (10, 20, 25, 40, 50, 100)
WAN_RATES_MBps = (1, 2, 4, 5, 8, 10)
SPEEDS_Mflops = (50, 100, 200, 250, 400, 500)


def tiers(nodes: int = 30, density: float = 0.5, extra_wan: int = 2, seed: int = 0, rate_scale: float = 1.0) -> Platform:
    """A seeded random platform of LAN clusters joined by a WAN, in the spirit of the Tiers
    generator paper 003 used (Calvert, Doar, Zegura 1997).

    ``round(density * nodes)`` hosts (processors) sit in LANs, each LAN a star around a LAN router;
    the other routers form the WAN, a random tree plus ``extra_wan`` redundant edges, and each
    LAN router hangs on a random WAN router. Every edge goes both ways. LAN edges run at 10–100
    MB/s, WAN edges at 1–10 MB/s (both times ``rate_scale``: an emulated platform on one machine
    needs slower links), processors at 50–500 Mflop/s, each drawn from a few values.

    Examples
    --------
    >>> p = tiers(30, density=0.5, seed=3)
    >>> len(p.names), len(p.processors())
    (30, 15)
    """
    _check_count("tiers", nodes, 4)
    if not 0 < density < 1:
        raise TopologyError(f"tiers: density must be between 0 and 1 (exclusive), got {density}")
    if not rate_scale > 0:
        raise TopologyError(f"tiers: rate_scale must be positive, got {rate_scale}")
    from ..units import parse_rate

    # The slowest and fastest edges, by the one numeric rule.
    parse_rate(min(WAN_RATES_MBps) * 1e6 * rate_scale, f"tiers: rate_scale {rate_scale:g}: the slowest edge")
    parse_rate(max(LAN_RATES_MBps) * 1e6 * rate_scale, f"tiers: rate_scale {rate_scale:g}: the fastest edge")
    rng = random.Random(seed)
    hosts = min(nodes - 2, max(1, round(density * nodes)))
    routers = nodes - hosts
    wan = max(1, routers // 2)
    lan = routers - wan
    wan_names = [f"W{i}" for i in range(wan)]
    lan_names = [f"L{i}" for i in range(lan)]
    host_names = [f"H{i}" for i in range(hosts)]
    edges: list[PlatformEdge] = []
    mb = Fraction(10**6) * exact(rate_scale)
    for i in range(1, wan):
        edges += _both_ways(wan_names[rng.randrange(i)], wan_names[i], rng.choice(WAN_RATES_MBps) * mb)
    joined = {frozenset((e.src, e.dst)) for e in edges}
    candidates = [(a, b) for i, a in enumerate(wan_names) for b in wan_names[i + 1:] if frozenset((a, b)) not in joined]
    for a, b in rng.sample(candidates, min(extra_wan, len(candidates))):
        edges += _both_ways(a, b, rng.choice(WAN_RATES_MBps) * mb)
    for name in lan_names:
        edges += _both_ways(name, rng.choice(wan_names), rng.choice(WAN_RATES_MBps) * mb)
    for i, name in enumerate(host_names):
        edges += _both_ways(name, lan_names[i % len(lan_names)] if lan_names else wan_names[i % wan], rng.choice(LAN_RATES_MBps) * mb)
    nodes_list = [PlatformNode(h, rng.choice(SPEEDS_Mflops) * Fraction(10**6)) for h in host_names]
    nodes_list += [PlatformNode(r) for r in wan_names + lan_names]
    return Platform(nodes_list, edges, f"tiers-{nodes}-{density}-{seed}")


#: The most nodes of a platform builder: the exact periods of larger ones would not be found.
MAX_PLATFORM_NODES = 10_000


def _check_count(builder: str, n: int, least: int) -> None:
    from ..units import parse_count

    parse_count(n, f"{builder}: n", least=least, most=MAX_PLATFORM_NODES)


def _check_rates(builder: str, bandwidth_Bps: Any, speed_flops: Any) -> None:
    """The rate and speed of a builder, by the one numeric rule (a rate of 0 would be an edge of
    infinite cost)."""
    from ..units import parse_rate, parse_speed

    parse_rate(bandwidth_Bps, f"{builder}: bandwidth_Bps")
    parse_speed(speed_flops, f"{builder}: speed_flops")


def platform_of_network(net: Network) -> Platform:
    """A network as a platform (the mapping in the module doc): hosts are processors at their
    ``speed_flops`` (routers where they have none), switches are routers, each link an edge of
    cost ``1 / capacity``.

    Examples
    --------
    >>> from liquidsched.topologies import build_topology
    >>> platform_of_network(build_topology("crossbar:n=3"))
    Platform('crossbar', 0 processors, 4 routers, 6 edges)
    """
    if net.shared_duplex:
        a, b = net.shared_duplex[0]
        raise TopologyError(f"{net.name}: links {a} and {b} share one capacity (shared duplex), which the "
                            f"one-port platform model cannot express")
    nodes = [PlatformNode(n.id, exact(n.speed_flops) if n.kind == HOST and n.speed_flops else Fraction(0))
             for n in net.nodes.values()]
    edges = [PlatformEdge(l.src, l.dst, 1 / exact(l.capacity_Bps)) for l in net.links.values()]
    return Platform(nodes, edges, net.name, hosts=net.hosts())


#: Platform builders by name, with their parameters, as ``"complete:n=10"``.
PLATFORM_BUILDERS = {"complete": complete, "star": star, "chain": chain, "tiers": tiers}


def _builder_value(builder: str, key: str, text: str, default: Any) -> Any:
    """The value of one field, by the one numeric rule (:mod:`liquidsched.units`)."""
    from ..spec import field_where
    from ..units import parse_count, parse_number, parse_rate, parse_speed

    where = field_where("platform", builder, key)
    if key == "bandwidth_Bps":
        return parse_rate(text, where)
    if key == "speed_flops":
        return parse_speed(text, where)
    if key == "seed":
        return parse_count(text, where, least=0, most=2**63 - 1)
    if isinstance(default, int):
        return parse_count(text, where, least=0, most=MAX_PLATFORM_NODES)
    return parse_number(text, where, least=0, most=1e6)


def resolve_platform(spec: str) -> Platform:
    """A platform from a builder (``"complete:n=10,bandwidth_Bps=100MB/s"``, ``"tiers:seed=3"``),
    or any liquidsched topology (a file or a built-in network) through
    :func:`platform_of_network`.

    Examples
    --------
    >>> resolve_platform("star:n=4,bandwidth_Bps=1MB/s")
    Platform('star-4', 4 processors, 0 routers, 6 edges)
    """
    import inspect

    from ..spec import spec_fields
    from ..topologies import resolve_topology

    name = spec.partition(":")[0]
    if name not in PLATFORM_BUILDERS:
        return platform_of_network(resolve_topology(spec))
    build = PLATFORM_BUILDERS[name]
    defaults = {p.name: p.default for p in inspect.signature(build).parameters.values()}
    _, fields = spec_fields(spec, "platform", defaults, TopologyError)
    try:
        kwargs = {key: _builder_value(name, key, value, defaults[key]) for key, value in fields.items()}
    except ValueError as e:  # the numeric rule's NumberError, a platform's error here
        raise TopologyError(str(e)) from None
    return build(**kwargs)

"""What an emulated network is made of, before anything is created: one namespace and one
address per node, one veth cable per pair of connected nodes (with an ``ifb`` shaper for a
shared-duplex one), and the routes of every node (:mod:`.routes`).

Every node has one address, ``10.213.I/250.I%250+1`` for node index ``I``: a host on its cable
(where MPI looks for it), a switch on its loopback interface. Names carry the prefix, so that
several emulated networks (a test's, a benchmark's, a user's) live side by side.

Both directions of a shared-duplex cable ``vK`` pass through one ``ifb`` device ``PREFIX-vK``
(:func:`~liquidsched.emulate.shaping.shared_duplex_commands`) in the namespace of one end: the
host's when the other end is a switch (its TCP then holds back its own packets, as on every
host link), else the cable's first end.

A plan also says how the network is modelled: its switches' buffer regime (``deep`` or
``shallow``, or every queue set directly), its time scale (every link ``time_scale`` times slower,
every latency that many times longer) and its hosts' TCP (``tuned`` or ``default``); see
:mod:`.shaping` and :mod:`.namespaces`. The state file records them with the network.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass, field
from functools import cached_property
from typing import Any

from ..errors import InputError, TopologyError
from ..io.topology import topology_to_dict
from ..network import Network

DEFAULT_PREFIX = "lsq"
_PREFIX_RE = re.compile(r"^[a-z][a-z0-9]{0,7}$")
#: The hosts' TCP settings an emulation offers (:func:`~liquidsched.emulate.namespaces.host_sysctls`).
TCP_SETTINGS = ("tuned", "default")


class Namespaces(dict):
    """Node → namespace name (a plain ``dict`` to its users), carrying the ``time_scale`` of the
    emulated network the namespaces belong to: times measured in them, divided by it, are times
    of the modelled network.

    Examples
    --------
    >>> ns = Namespaces({"h1": "lsq-n0"}, time_scale=3.0)
    >>> ns["h1"], ns.time_scale, time_scale_of(ns), time_scale_of({"h1": "x"}), time_scale_of(None)
    ('lsq-n0', 3.0, 3.0, 1.0, 1.0)
    """

    def __init__(self, mapping: dict[str, str] | None = None, time_scale: float = 1.0) -> None:
        super().__init__(mapping or {})
        self.time_scale = time_scale


def time_scale_of(namespaces: dict[str, str] | None) -> float:
    """The time scale of the emulated network whose ``namespaces`` these are: 1 for None (ranks
    run here) and for a mapping that does not say (a plain ``dict``)."""
    return float(getattr(namespaces, "time_scale", 1.0)) if namespaces else 1.0


@dataclass
class Cable:
    """One veth pair between nodes ``a`` and ``b`` (interface ``name`` on both sides), with the
    model's link for each direction (None: unshaped). A shared-duplex cable is shaped by the
    ``ifb`` device ``ifb`` in the namespace of node ``ifb_at`` (None for the others)."""

    name: str
    a: str
    b: str
    a_to_b: str | None
    b_to_a: str | None
    ifb: str | None = None
    ifb_at: str | None = None


@dataclass
class EmulationPlan:
    """What :func:`~liquidsched.emulate.up` creates for a network: namespaces, addresses,
    cables and routes."""

    prefix: str
    network: Network
    namespace: dict[str, str]
    address: dict[str, str]
    cables: list[Cable]
    #: per node: destination address → (cable name, next node)
    routes: dict[str, dict[str, tuple[str, str]]] = field(default_factory=dict)
    #: the switches' buffer regime (:data:`~liquidsched.emulate.shaping.SWITCH_CLASSES`)
    buffers: str = "deep"
    #: every link runs this many times slower, every latency is this many times longer
    time_scale: float = 1.0
    #: the hosts' TCP settings (:data:`TCP_SETTINGS`)
    tcp: str = "tuned"
    #: every link's queue, in bytes or in full-size frames, when set (over the regime and the links' buffers)
    queue_bytes: int | None = None
    queue_packets: int | None = None

    def hosts(self) -> list[str]:
        return self.network.hosts()

    def egress(self, link_id: str) -> tuple[str, str]:
        """The namespace and interface whose egress carries link ``link_id``."""
        link = self.network.links[link_id]
        for c in self.cables:
            if link_id in (c.a_to_b, c.b_to_a):
                return self.namespace[link.src], c.name
        raise KeyError(link_id)

    def shaper(self, link_id: str) -> tuple[str, str]:
        """The namespace and device whose root qdisc shapes link ``link_id``: its egress
        interface, or the ``ifb`` device of its shared-duplex cable."""
        for c in self.cables:
            if link_id in (c.a_to_b, c.b_to_a):
                if c.ifb is not None:
                    return self.namespace[c.ifb_at], c.ifb
                return self.egress(link_id)
        raise KeyError(link_id)

    def ingress(self, link_id: str) -> tuple[str, str]:
        """The namespace and interface where link ``link_id``'s traffic arrives."""
        link = self.network.links[link_id]
        return self.namespace[link.dst], self.egress(link_id)[1]

    def emulated_capacity_Bps(self, link_id: str) -> float:
        """The rate link ``link_id`` is shaped to: its capacity over the time scale."""
        return self.network.links[link_id].capacity_Bps / self.time_scale

    def emulated_latency_s(self, link_id: str) -> float:
        """The delay link ``link_id`` is given: its latency times the time scale."""
        return self.network.links[link_id].latency_s * self.time_scale

    @cached_property
    def base_rtt_s(self) -> float:
        """The emulated network's round trip without queues, in emulated seconds
        (:func:`~liquidsched.emulate.shaping.base_round_trip_s`)."""
        from .shaping import base_round_trip_s

        return base_round_trip_s(self.network, self.time_scale)

    def settings(self) -> dict[str, Any]:
        """What the plan models beyond the network: ``buffers``, ``time_scale``, ``tcp``,
        ``queue_bytes`` and ``queue_packets`` (the keywords of :func:`plan_emulation`)."""
        return {"buffers": self.buffers, "time_scale": self.time_scale, "tcp": self.tcp,
                "queue_bytes": self.queue_bytes, "queue_packets": self.queue_packets}

    def to_dict(self) -> dict[str, Any]:
        return {"prefix": self.prefix, "network": topology_to_dict(self.network), "namespace": dict(self.namespace),
                "address": self.address, **self.settings()}


def check_prefix(prefix: str) -> str:
    """``prefix`` when it can name namespaces (``PREFIX-nI`` within the kernel's limits)."""
    if not _PREFIX_RE.match(prefix):
        raise InputError(f"prefix {prefix!r}: expected 1 to 8 lowercase letters and digits, starting with a letter")
    return prefix


def check_time_scale(time_scale: Any) -> float:
    """``time_scale`` as a float, when it is a finite number of at least 1.

    Examples
    --------
    >>> check_time_scale(2), check_time_scale("2.5")
    (2.0, 2.5)
    >>> check_time_scale(0.5)
    Traceback (most recent call last):
    ...
    liquidsched.errors.InputError: time scale 0.5: expected a number of at least 1 (every link runs that many times slower)
    """
    try:
        value = float(time_scale)
    except (TypeError, ValueError):
        value = math.nan
    if not (value >= 1 and math.isfinite(value)):
        raise InputError(f"time scale {time_scale!r}: expected a number of at least 1 "
                         "(every link runs that many times slower)")
    return value


def _check_choice(what: str, value: Any, choices: tuple[str, ...]) -> str:
    if value not in choices:
        raise InputError(f"{what} {value!r}: expected one of {', '.join(choices)}")
    return value


def _check_queue(what: str, value: Any) -> int | None:
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, int) or value < 1:
        raise InputError(f"{what} {value!r}: expected a whole number of at least 1")
    return value


def plan_emulation(net: Network, prefix: str = DEFAULT_PREFIX, *, buffers: str = "deep", time_scale: float = 1.0,
                   tcp: str = "tuned", queue_bytes: int | None = None,
                   queue_packets: int | None = None) -> EmulationPlan:
    """Namespaces, addresses, cables and destination routes that reproduce ``net``'s routes,
    and how the emulation models it.

    Parameters
    ----------
    net
        The network to emulate.
    prefix
        What every name the emulation creates starts with (:func:`check_prefix`).
    buffers
        The switches' buffer regime, ``deep`` or ``shallow``
        (:data:`~liquidsched.emulate.shaping.SWITCH_CLASSES`); a link's own ``buffer_packets``
        wins over it.
    time_scale
        At least 1: every link runs ``time_scale`` times slower and every latency is that many
        times longer; times measured on the emulation, divided by it, are the modelled network's.
    tcp
        ``tuned`` (a tuned cluster's TCP settings in the hosts' namespaces) or ``default``
        (the kernel's).
    queue_bytes, queue_packets
        At most one: every link's queue, in bytes or in full-size frames, over the regime and
        the links' own buffers (never below a link's ``tbf`` burst).

    Raises
    ------
    InputError
        for a bad prefix, regime, time scale, TCP setting or queue.
    TopologyError
        for routes the emulation cannot reproduce by destination, or a shared-duplex pair whose
        directions have different latencies (one shaper delays both).

    Examples
    --------
    >>> from liquidsched import build_topology
    >>> p = plan_emulation(build_topology("two-switch"))
    >>> p.namespace["t1"], p.address["t1"], len(p.cables)
    ('lsq-n2', '10.213.0.3', 11)
    >>> p = plan_emulation(build_topology("hierarchical:d1=1,d2=2,shared_uplinks=true"))
    >>> [(c.name, c.a, c.b, c.ifb, c.ifb_at) for c in p.cables if c.ifb]
    [('v0', 'e1', 'root', 'lsq-v0', 'e1'), ('v2', 'e2', 'root', 'lsq-v2', 'e2')]
    """
    from .routes import add_routes
    from .shaping import BUFFER_REGIMES

    check_prefix(prefix)
    _check_choice("buffer regime", buffers, BUFFER_REGIMES)
    _check_choice("TCP setting", tcp, TCP_SETTINGS)
    time_scale = check_time_scale(time_scale)
    queue_bytes, queue_packets = _check_queue("queue_bytes", queue_bytes), _check_queue("queue_packets", queue_packets)
    if queue_bytes is not None and queue_packets is not None:
        raise InputError("queue_bytes and queue_packets both set every link's queue: give one")
    nodes = list(net.nodes)
    if len(nodes) > 250 * 250:
        raise TopologyError(f"{len(nodes)} nodes: the emulation addresses at most 62,500")
    namespace = Namespaces({n: f"{prefix}-n{i}" for i, n in enumerate(nodes)}, time_scale)
    address = {n: f"10.213.{i // 250}.{i % 250 + 1}" for i, n in enumerate(nodes)}
    cables: dict[frozenset[str], Cable] = {}
    for lid, link in net.links.items():
        key = frozenset((link.src, link.dst))
        if key not in cables:
            cables[key] = Cable(f"v{len(cables)}", link.src, link.dst, None, None)
        c = cables[key]
        if link.src == c.a:
            c.a_to_b = lid
        else:
            c.b_to_a = lid
    for a, b in net.shared_duplex:
        la, lb = net.links[a], net.links[b]
        if la.latency_s != lb.latency_s:
            raise TopologyError(f"shared-duplex links {a} and {b} have different latencies ({la.latency_s} s, "
                                f"{lb.latency_s} s): the emulation delays both directions in one shaper")
        c = cables[frozenset((la.src, la.dst))]
        c.ifb = f"{prefix}-{c.name}"
        if len(c.ifb) > 15:
            raise TopologyError(f"{len(cables)} cables: the shaper of cable {c.name} cannot be named within "
                                "15 characters (use a shorter prefix)")
        c.ifb_at = c.b if net.is_switch(c.a) and not net.is_switch(c.b) else c.a
    plan = EmulationPlan(prefix, net, namespace, address, list(cables.values()), {n: {} for n in nodes}, buffers,
                         time_scale, tcp, queue_bytes, queue_packets)
    add_routes(plan, cables)
    return plan

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
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any

from ..errors import InputError, TopologyError
from ..io.topology import topology_to_dict
from ..network import Network

DEFAULT_PREFIX = "lsq"
_PREFIX_RE = re.compile(r"^[a-z][a-z0-9]{0,7}$")


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

    def to_dict(self) -> dict[str, Any]:
        return {"prefix": self.prefix, "network": topology_to_dict(self.network), "namespace": self.namespace,
                "address": self.address}


def check_prefix(prefix: str) -> str:
    """``prefix`` when it can name namespaces (``PREFIX-nI`` within the kernel's limits)."""
    if not _PREFIX_RE.match(prefix):
        raise InputError(f"prefix {prefix!r}: expected 1 to 8 lowercase letters and digits, starting with a letter")
    return prefix


def plan_emulation(net: Network, prefix: str = DEFAULT_PREFIX) -> EmulationPlan:
    """Namespaces, addresses, cables and destination routes that reproduce ``net``'s routes.

    Raises
    ------
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

    check_prefix(prefix)
    nodes = list(net.nodes)
    if len(nodes) > 250 * 250:
        raise TopologyError(f"{len(nodes)} nodes: the emulation addresses at most 62,500")
    namespace = {n: f"{prefix}-n{i}" for i, n in enumerate(nodes)}
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
    plan = EmulationPlan(prefix, net, namespace, address, list(cables.values()), {n: {} for n in nodes})
    add_routes(plan, cables)
    return plan

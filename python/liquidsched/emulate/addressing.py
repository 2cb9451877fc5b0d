"""What an emulated network is made of, before anything is created: one namespace and one
address per node, one veth cable per pair of connected nodes, and the routes of every node
(:mod:`.routes`).

Every node has one address, ``10.213.I/250.I%250+1`` for node index ``I``: a host on its cable
(where MPI looks for it), a switch on its loopback interface. Names carry the prefix, so that
several emulated networks (a test's, a benchmark's, a user's) live side by side.
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
    model's link for each direction (None: unshaped)."""

    name: str
    a: str
    b: str
    a_to_b: str | None
    b_to_a: str | None


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
        for shared-duplex links, or routes the emulation cannot reproduce by destination.

    Examples
    --------
    >>> from liquidsched import build_topology
    >>> p = plan_emulation(build_topology("two-switch"))
    >>> p.namespace["t1"], p.address["t1"], len(p.cables)
    ('lsq-n2', '10.213.0.3', 11)
    """
    from .routes import add_routes

    check_prefix(prefix)
    if net.shared_duplex:
        a, b = net.shared_duplex[0]
        raise TopologyError(f"links {a} and {b} are shared-duplex: the emulation cannot make two directions "
                            "share one rate (declare them as two links)")
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
    plan = EmulationPlan(prefix, net, namespace, address, list(cables.values()), {n: {} for n in nodes})
    add_routes(plan, cables)
    return plan

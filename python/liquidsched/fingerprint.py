"""A network's fingerprint: what tells two networks apart for the exchanges they carry.

Selection tables record the fingerprint of the network they were measured on, and fabric files
carry the fingerprint of theirs, so that a table is applied only where its ranking holds.
"""

from __future__ import annotations

import hashlib
import json

from .errors import LiquidschedError
from .network import Network


def network_fingerprint(net: Network) -> str:
    """A digest of what decides how an exchange runs on ``net``: its nodes, links (capacity,
    latency, slots, buffer) and the route of every ordered host pair. Two networks with the same
    fingerprint carry every exchange alike.

    Examples
    --------
    >>> from liquidsched import build_topology
    >>> a = network_fingerprint(build_topology("crossbar:n=3"))
    >>> a == network_fingerprint(build_topology("crossbar:n=3")), a == network_fingerprint(build_topology("crossbar:n=4"))
    (True, False)
    """
    links = sorted((lid, link.src, link.dst, float(link.capacity_Bps), float(link.latency_s), link.slots,
                    link.buffer_packets) for lid, link in net.links.items())
    nodes = sorted((name, node.kind) for name, node in net.nodes.items())
    hosts = net.hosts()
    # Beyond 256 hosts the routes are left out: the links and nodes still tell networks apart.
    routes = [(a, b, _route_or_none(net, a, b)) for a in hosts for b in hosts] if len(hosts) <= 256 else []
    text = json.dumps({"nodes": nodes, "links": links, "routes": routes, "hosts": len(hosts)}, sort_keys=True)
    return hashlib.sha256(text.encode()).hexdigest()[:16]


def _route_or_none(net: Network, src: str, dst: str) -> list[str] | None:
    try:
        return list(net.route(src, dst))
    except LiquidschedError:
        return None



__all__ = ["network_fingerprint"]

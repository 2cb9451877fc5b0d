"""The plan of an emulation (:func:`plan_emulation`): namespaces, addresses, cables and the
destination routes that reproduce a network's, and how the emulation models it (buffers, time
scale, TCP settings, queues)."""

from __future__ import annotations

from typing import Any

from ..errors import InputError, TopologyError
from ..network import Network
from .addressing import DEFAULT_PREFIX, TCP_SETTINGS, Cable, EmulationPlan, Namespaces, check_prefix, check_time_scale
from .routes import add_routes
from .shaping import BUFFER_REGIMES


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

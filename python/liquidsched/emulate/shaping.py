"""Rate limits and queues: a ``tbf`` per directed link of the model, under a ``netem`` delay when
the link has a latency, one ``tbf`` on an ``ifb`` device for both directions of a shared-duplex
cable, each link's queue, and each host's share of its link's queue.

Capacities are rates of message bytes, as everywhere in liquidsched, and ``tbf`` counts frames
with their headers, so the shaped rate is the capacity times :data:`WIRE_BYTES_PER_PAYLOAD`: a
full-size TCP segment carries the capacity in payload (97–100 % of it measured for one flow).
A host's TCP keeps less data queued below it than its link's queue holds
(``tcp_limit_output_bytes``, :func:`host_queue_share`), as a host's network card pushes back
instead of dropping.

Time scale
----------
With a time scale N (at least 1), every link is shaped to its capacity / N and delayed by its
latency × N: the emulation is the modelled network in slow motion, so that the machine's processors
are never what limits it. Times measured on it, divided by N, are the modelled network's times.
A queue holds as many bytes as it would at the modelled rate (a byte count does not depend on the
clock), with one exception: the machine's own round trip does not slow down, so the switches'
queues, which follow the round trip, shrink with N (see below).

Queues: two buffer regimes from two classes of switch
-----------------------------------------------------
A link's queue is where its packets wait and, when full, are dropped. Where it is decided, in
this order (:func:`link_queue_bytes`):

1. ``queue_bytes`` or ``queue_packets`` set for the emulation: every link's queue, directly;
2. the link's own switch buffer, ``buffer_packets`` (paper 002's B_L), in full-size frames of
   :data:`FRAME_BYTES`: a buffer the model declares wins over the regime;
3. on a link leaving a switch, the switch's buffer regime, ``deep`` or ``shallow``
   (:func:`regime_queue_bytes`);
4. on a link leaving a host, the host's queue, :data:`QUEUE_S` of the modelled link's traffic
   (:func:`host_queue_bytes`): a host's network card and qdisc, not a switch, whatever the regime.

and never less than the link's ``tbf`` burst (:func:`tbf_sizes`), so that the GSO segments the
hosts send (:func:`gso_max_size`) pass whole.

A regime is one named class of switch (:data:`SWITCH_CLASSES`). Its buffer per port, the chip's
packet memory shared evenly among its ports, is expressed as a multiple of the bandwidth-delay
product of one port: its line rate times a data-centre round trip, :data:`DATACENTRE_RTT_S`
= 100 µs (a fabric's round trip without queues is tens to a few hundred µs). Every emulated link
from a switch gets the same multiple of its own bandwidth-delay product: its shaped rate on the
wire times the emulated network's base round trip (:func:`base_round_trip_s`).

* ``shallow``: a commodity shared-buffer data-centre switch, Broadcom Trident II (BCM56850), as in
  the Arista 7050QX-32: 12 MB of packet memory for 32 ports of 40 GbE. Per port 12 MB / 32 =
  375 kB; one port's bandwidth-delay product is 5 GB/s × 100 µs = 500 kB; the multiple is
  **0.75**. (A Tomahawk 2, 42 MB for 64 × 100 GbE, gives 656 kB / 1.25 MB = 0.53: the class holds
  about half a bandwidth-delay product per port.)
* ``deep``: a deep-buffer switch, Broadcom Jericho (BCM88670), as in the Arista 7500R: 4 GB of
  packet memory per chip and up to 24 GB per line card: the 36 ports of 100 GbE of a 7500R-36CQ
  card on six chips, six ports each. Per port 4 GB / 6 = 667 MB (53 ms at 100 Gbit/s, in
  line with the "50 ms per port" Arista quotes); one port's bandwidth-delay product is
  12.5 GB/s × 100 µs = 1.25 MB; the multiple is **533**.

The emulated network's base round trip (:data:`MACHINE_RTT_S` = 50 µs, plus twice the longest
route's latency × N) was measured on the 2-core machine this was written on (Xeon, Linux 6.18),
over the longest route of crossbar n=2, two-switch and a k=4 fat tree, at 100 Mbit/s and
1 Gbit/s: TCP's smallest round trip (``tcpi_min_rtt``, six 200 kB flows each) had medians of
28–72 µs (48, 47 and 72 µs at 100 Mbit/s; 28–32 µs at 1 Gbit/s), and an ICMP echo (answered by
the kernel) had medians of 7–37 µs with 99th percentiles of 51–109 µs. 50 µs is the round trip of the small
networks; longer routes and busy processors see up to about twice it. The machine's part does not
slow down with the time scale, so at scale N the modelled network's round trip is 50 µs / N plus
its latencies: the queues, in bytes, shrink accordingly.

So at 100 Mbit/s (12.5 MB/s, 13.07 MB/s on the wire), with N = 1 and no latencies, a switch's
queue is 533.3 × 13.07 MB/s × 50 µs = 348,526 bytes (27 ms of traffic) in the deep regime, near
the 20 ms (250,000 bytes) every link kept before regimes existed; in the shallow regime it is
0.75 × 13.07 MB/s × 50 µs = 490 bytes, less than one frame, so the ``tbf`` burst sets it: 5,227
bytes (3.5 frames, 0.4 ms of traffic). On this machine the shallow queue is always the burst,
unless links have latencies: seven senders into one 100 Mbit/s host link overflow it and drop,
as incast does on commodity switches (measured: 222 drops, and 0.91 s for 2.1 MB that take 0.17 s
at the link's rate; in the deep regime no drop, 0.22 s).

Shared-duplex cables
--------------------
``tc`` on a veth shapes one direction. Both directions of a shared-duplex cable draw on one
rate, so they pass through one shaper (:func:`shared_duplex_commands`): an ``ifb`` device in
the namespace of one end holds the ``tbf``, and a ``clsact`` qdisc on that end's veth redirects
everything leaving (``egress``) and arriving (``ingress``) to it with ``mirred egress
redirect``; the ``ifb`` hands each packet back where it was taken, out of the veth or up the
stack. The filter matches every packet with ``u32 match u32 0 0``: ``matchall`` would say it
more plainly, but kernels built with few ``tc`` classifiers lack it (and ``flower`` and
``basic``) while they have ``u32``. Its one queue is the smaller of its two directions' queues.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from ..errors import InputError, TopologyError
from ..network import Network

if TYPE_CHECKING:
    from .addressing import EmulationPlan

#: tbf queue of a link leaving a host: the time a packet may wait there before it is dropped, at
#: the modelled rate.
QUEUE_S = 0.02
#: Bytes on the wire (Ethernet header, IPv4, TCP with timestamps: what ``tbf`` counts) per byte of
#: payload in a full-size TCP segment: 1514 / 1448.
WIRE_BYTES_PER_PAYLOAD = 1514 / 1448
#: A full-size frame on the wire, in bytes.
FRAME_BYTES = 1514
#: The ``tbf`` burst, in seconds of traffic at the link's rate.
BURST_S = 0.0004
#: The smallest ``tbf`` burst, in full-size frames.
MIN_BURST_PACKETS = 3
#: The round trip of a data-centre fabric without queues that the buffer regimes are expressed
#: against, in s.
DATACENTRE_RTT_S = 100e-6
#: The emulated network's own round trip on this machine, without queues or modelled latencies,
#: in s (measured: see the module's documentation).
MACHINE_RTT_S = 50e-6


@dataclass(frozen=True)
class SwitchClass:
    """A class of switch a buffer regime is derived from: its chip's packet memory shared by
    ``ports`` ports of line rate ``port_Bps``, and where the numbers come from."""

    name: str
    buffer_bytes: float
    ports: int
    port_Bps: float
    source: str

    @property
    def port_buffer_bytes(self) -> float:
        """The buffer per port: the packet memory shared evenly among the ports."""
        return self.buffer_bytes / self.ports

    @property
    def port_bdp_bytes(self) -> float:
        """One port's bandwidth-delay product: its line rate times :data:`DATACENTRE_RTT_S`."""
        return self.port_Bps * DATACENTRE_RTT_S

    @property
    def bdp_multiple(self) -> float:
        """The buffer per port as a multiple of one port's bandwidth-delay product.

        Examples
        --------
        >>> round(SWITCH_CLASSES["shallow"].bdp_multiple, 3), round(SWITCH_CLASSES["deep"].bdp_multiple, 1)
        (0.75, 533.3)
        """
        return self.port_buffer_bytes / self.port_bdp_bytes


#: The buffer regimes and the class of switch each is derived from.
SWITCH_CLASSES = {
    "deep": SwitchClass("Broadcom Jericho (BCM88670), as in the Arista 7500R", 4e9, 6, 100e9 / 8,
                        "Arista 7500R: 4 GB of packet memory per packet processor, up to 24 GB per line card; "
                        "the 7500R-36CQ card has 36 ports of 100 GbE on six Jericho chips"),
    "shallow": SwitchClass("Broadcom Trident II (BCM56850), as in the Arista 7050QX-32", 12e6, 32, 40e9 / 8,
                           "Arista 7050X series: 12 MB of packet memory shared by 32 ports of 40 GbE"),
}
#: The names of the buffer regimes.
BUFFER_REGIMES = tuple(SWITCH_CLASSES)


MIN_BURST_PACKETS = 3


def tbf_sizes(capacity_Bps: float) -> tuple[int, int]:
    """The ``tbf`` burst and queue limit of a link, in bytes.

    The burst is :data:`BURST_S` of traffic, at least :data:`MIN_BURST_PACKETS` full frames: a
    link then never carries more than its rate plus 4 % over any 10 ms (a burst that held a
    64 KiB GSO segment let a fresh flow's first 10 ms run at 136 % of the rate at 100 Mbit/s;
    hosts' TCP segments are now sized to pass whole, :func:`gso_max_size`). A burst of two
    frames lost up to 5 % of a single flow's rate to late timers on a busy machine; three to
    four keep it at 99 %.
    ``peakrate`` was tried and left out: with a peak bucket of one or two frames it cost 7–14 %
    of the rate, and with a larger one it let the burst run above the rate for longer. The queue
    given is :data:`QUEUE_S` of traffic, a host's (:func:`host_queue_bytes`); the emulation
    decides each link's by :func:`link_queue_bytes`.

    Examples
    --------
    >>> tbf_sizes(12.5e6), tbf_sizes(1e6)
    ((5227, 250000), (4542, 20000))
    """
    wire_Bps = capacity_Bps * WIRE_BYTES_PER_PAYLOAD
    burst = max(MIN_BURST_PACKETS * FRAME_BYTES, int(wire_Bps * BURST_S))
    return burst, max(int(capacity_Bps * QUEUE_S), 2 * burst)


def regime_queue_bytes(capacity_Bps: float, base_rtt_s: float, buffers: str) -> int:
    """The queue of a switch's port in a buffer regime, in bytes: the regime's multiple
    (:attr:`SwitchClass.bdp_multiple`) of the link's bandwidth-delay product, its rate on the
    wire times ``base_rtt_s``, and never less than its ``tbf`` burst (:func:`tbf_sizes`).

    Parameters
    ----------
    capacity_Bps
        The rate the link is shaped to (its capacity over the time scale), in payload bytes/s.
    base_rtt_s
        The emulated network's round trip without queues (:func:`base_round_trip_s`).
    buffers
        ``deep`` or ``shallow`` (:data:`SWITCH_CLASSES`).

    Examples
    --------
    At 100 Mbit/s with a base round trip of 50 µs: 533.3 × 13,069,751 B/s × 50 µs in the deep
    regime; in the shallow one 0.75 × the same, 490 bytes, so the burst, 0.4 ms of traffic.

    >>> regime_queue_bytes(12.5e6, 50e-6, "deep"), regime_queue_bytes(12.5e6, 50e-6, "shallow")
    (348526, 5227)
    >>> regime_queue_bytes(125e6, 50e-6, "deep"), regime_queue_bytes(12.5e6, 0.02, "shallow")
    (3485267, 196046)
    """
    if buffers not in SWITCH_CLASSES:
        raise InputError(f"buffer regime {buffers!r}: expected one of {', '.join(BUFFER_REGIMES)}")
    bdp = capacity_Bps * WIRE_BYTES_PER_PAYLOAD * base_rtt_s
    return max(int(SWITCH_CLASSES[buffers].bdp_multiple * bdp), tbf_sizes(capacity_Bps)[0])


def host_queue_bytes(capacity_Bps: float, time_scale: float = 1.0) -> int:
    """The queue of a link leaving a host, in bytes: :data:`QUEUE_S` of traffic at the modelled
    capacity ``capacity_Bps`` (the same bytes at every time scale), and at least two bursts of
    the shaped rate, ``capacity_Bps / time_scale``.

    Examples
    --------
    >>> host_queue_bytes(12.5e6), host_queue_bytes(12.5e6, time_scale=4), host_queue_bytes(1e5)
    (250000, 250000, 9084)
    """
    burst = tbf_sizes(capacity_Bps / time_scale)[0]
    return max(int(capacity_Bps * QUEUE_S), 2 * burst)


def queue_limit(capacity_Bps: float, buffer_packets: int | None) -> int:
    """The queue of a link's shaper, in bytes (``tbf``'s ``limit``), without a buffer regime
    or a time scale: the link's switch buffer ``buffer_packets`` (B_L) in full-size frames of
    :data:`FRAME_BYTES` where it declares one, so that congestion loses packets there as in the
    switch, else :data:`QUEUE_S` of traffic (:func:`tbf_sizes`). A buffer is never smaller than
    the burst: ``tbf`` passes a host's segments whole (:func:`gso_max_size`), and a queue
    shorter than one would refuse them all. :func:`link_queue_bytes` is the emulation's rule.

    Examples
    --------
    >>> queue_limit(2.5e6, 30), queue_limit(2.5e6, None), queue_limit(2.5e6, 1)
    (45420, 50000, 4542)
    """
    burst, default = tbf_sizes(capacity_Bps)
    if buffer_packets is None:
        return default
    return max(buffer_packets * FRAME_BYTES, burst)


def base_round_trip_s(net: Network, time_scale: float = 1.0) -> float:
    """The emulated network's round trip without queues, in emulated seconds:
    :data:`MACHINE_RTT_S` (this machine's own) plus twice the largest latency of a route
    between two hosts, times ``time_scale``.

    Examples
    --------
    >>> from liquidsched import build_topology
    >>> base_round_trip_s(build_topology("two-switch"))
    5e-05
    >>> from liquidsched.network import Link, Network, Node
    >>> links = [Link(f"{u}>{v}", u, v, 1e6, 0.001) for u, v in (("a", "s"), ("s", "a"), ("b", "s"), ("s", "b"))]
    >>> round(base_round_trip_s(Network([Node("a"), Node("b"), Node("s", "switch")], links), time_scale=2), 6)
    0.00805
    """
    latency = 0.0
    if any(link.latency_s > 0 for link in net.links.values()):
        hosts = net.hosts()
        for s in hosts:
            for d in hosts:
                if s == d:
                    continue
                try:
                    route = net.route(s, d)
                except TopologyError:
                    continue
                latency = max(latency, sum(net.links[lid].latency_s for lid in route))
    return MACHINE_RTT_S + 2 * latency * time_scale


def _own_queue_bytes(plan: EmulationPlan, link_id: str) -> int:
    """The queue link ``link_id`` would have on a shaper of its own (see the module's rules)."""
    link = plan.network.links[link_id]
    rate = plan.emulated_capacity_Bps(link_id)
    burst = tbf_sizes(rate)[0]
    if plan.queue_bytes is not None:
        return max(plan.queue_bytes, burst)
    if plan.queue_packets is not None:
        return max(plan.queue_packets * FRAME_BYTES, burst)
    if link.buffer_packets is not None:
        return max(link.buffer_packets * FRAME_BYTES, burst)
    if plan.network.is_switch(link.src):
        return regime_queue_bytes(rate, plan.base_rtt_s, plan.buffers)
    return host_queue_bytes(link.capacity_Bps, plan.time_scale)


def link_queue_bytes(plan: EmulationPlan, link_id: str) -> int:
    """The queue of the shaper that carries link ``link_id``, in bytes: set for the emulation
    (``queue_bytes``, ``queue_packets``), else the link's own buffer, else its switch's buffer
    regime or, leaving a host, the host's queue; never less than the link's burst. Both
    directions of a shared-duplex cable share one shaper, whose queue is the smaller of theirs.

    Examples
    --------
    >>> from liquidsched import build_topology
    >>> from liquidsched.emulate import plan_emulation
    >>> net = build_topology("crossbar:n=2,capacity_Bps=100Mbit/s")
    >>> [link_queue_bytes(plan_emulation(net, buffers=b), "x>h2") for b in ("deep", "shallow")]
    [348526, 5227]
    >>> link_queue_bytes(plan_emulation(net, buffers="shallow"), "h1>x")   # a host's queue
    250000
    >>> link_queue_bytes(plan_emulation(net, queue_packets=100), "x>h2")
    151400
    """
    for cable in plan.cables:
        if cable.ifb is not None and link_id in (cable.a_to_b, cable.b_to_a):
            return min(_own_queue_bytes(plan, lid) for lid in (cable.a_to_b, cable.b_to_a) if lid is not None)
    return _own_queue_bytes(plan, link_id)


def gso_max_size(capacity_Bps: float) -> int:
    """The largest segment a host's TCP hands a link's veth at once: as many full-size segments
    as the link's burst holds with their headers, so that ``tbf`` passes them whole instead of
    cutting them (which cost the CPU of a 2-core machine under eight flows) and the hops
    forward a few large packets rather than many small ones."""
    burst = tbf_sizes(capacity_Bps)[0]
    return max(1448, (burst // FRAME_BYTES) * 1448)


def qdisc_commands(iface: str, capacity_Bps: float, latency_s: float, buffer_packets: int | None = None,
                   limit_bytes: int | None = None) -> list[str]:
    """``tc -batch`` lines that shape the egress of ``iface`` to rate ``capacity_Bps`` and delay
    ``latency_s`` (both as emulated: scaled already), with ``limit_bytes`` as the queue, or where
    it is None the link's buffer ``buffer_packets`` (:func:`queue_limit`).

    Examples
    --------
    >>> qdisc_commands("v0", 2.5e6, 0.0, 30)
    ['qdisc add dev v0 root handle 1: tbf rate 20911602bit burst 4542 limit 45420']
    >>> for line in qdisc_commands("v0", 2.5e6 / 2, 0.001 * 2, limit_bytes=9000):
    ...     print(line)
    qdisc add dev v0 root handle 1: netem delay 2000us limit 100000
    qdisc add dev v0 parent 1: handle 2: tbf rate 10455801bit burst 4542 limit 9000
    """
    rate = max(int(capacity_Bps * WIRE_BYTES_PER_PAYLOAD * 8), 8)
    burst = tbf_sizes(capacity_Bps)[0]
    limit = queue_limit(capacity_Bps, buffer_packets) if limit_bytes is None else limit_bytes
    tbf = f"tbf rate {rate}bit burst {burst} limit {limit}"
    if latency_s > 0:
        return [f"qdisc add dev {iface} root handle 1: netem delay {latency_s * 1e6:.0f}us limit 100000",
                f"qdisc add dev {iface} parent 1: handle 2: {tbf}"]
    return [f"qdisc add dev {iface} root handle 1: {tbf}"]


def shared_duplex_commands(veth: str, ifb: str, capacity_Bps: float, latency_s: float,
                           buffer_packets: int | None = None, limit_bytes: int | None = None) -> list[str]:
    """``tc -batch`` lines that make both directions of cable ``veth`` share one rate: the
    shaper of one link (:func:`qdisc_commands`) on the ``ifb`` device ``ifb`` (created and up
    in the same namespace), and every packet leaving or arriving at ``veth`` redirected to it.

    Examples
    --------
    >>> for line in shared_duplex_commands("v0", "lsq-v0", 2.5e6, 0.0, 30):
    ...     print(line)
    qdisc add dev lsq-v0 root handle 1: tbf rate 20911602bit burst 4542 limit 45420
    qdisc add dev v0 clsact
    filter add dev v0 egress protocol all u32 match u32 0 0 action mirred egress redirect dev lsq-v0
    filter add dev v0 ingress protocol all u32 match u32 0 0 action mirred egress redirect dev lsq-v0
    """
    redirect = f"protocol all u32 match u32 0 0 action mirred egress redirect dev {ifb}"
    return [*qdisc_commands(ifb, capacity_Bps, latency_s, buffer_packets, limit_bytes), f"qdisc add dev {veth} clsact",
            f"filter add dev {veth} egress {redirect}", f"filter add dev {veth} ingress {redirect}"]


def host_queue_share(plan: EmulationPlan, host: str) -> int:
    """What one TCP socket of ``host`` may keep queued below it (``tcp_limit_output_bytes``):
    half the queue of its slowest outgoing link (:func:`link_queue_bytes`), at least two
    frames. Left at the kernel's default (1 MiB or more), a single flow overflows its own link's
    queue and drops packets that a network card would have held back.

    Examples
    --------
    >>> from liquidsched import build_topology
    >>> from liquidsched.emulate import plan_emulation
    >>> host_queue_share(plan_emulation(build_topology("two-switch:capacity_Bps=100Mbit/s")), "t1")
    125000
    """
    net = plan.network
    limits = [link_queue_bytes(plan, net.link_between(host, n)) for n in net.out_neighbours(host)]
    return max(2 * FRAME_BYTES, min(limits, default=2 * 65536) // 2)

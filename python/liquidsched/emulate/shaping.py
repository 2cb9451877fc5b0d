"""Rate limits: a ``tbf`` per directed link of the model, under a ``netem`` delay when the link
has a latency, one ``tbf`` on an ``ifb`` device for both directions of a shared-duplex cable, and
each host's share of its link's queue.

Capacities are rates of message bytes, as everywhere in liquidsched, and ``tbf`` counts frames
with their headers, so the shaped rate is the capacity times :data:`WIRE_BYTES_PER_PAYLOAD`: a
full-size TCP segment carries the capacity in payload (97–100 % of it measured for one flow).
A host's TCP keeps less data queued below it than its link's queue holds
(``tcp_limit_output_bytes``, :func:`host_queue_share`), as a host's network card pushes back
instead of dropping.

A link's queue (:func:`queue_limit`) is the switch buffer the model gives it
(``buffer_packets``, paper 002's B_L) in full-size frames, so that congestion drops packets
where the switch would; a link without one keeps :data:`QUEUE_S` of traffic.

``tc`` on a veth shapes one direction. Both directions of a shared-duplex cable draw on one
rate, so they pass through one shaper (:func:`shared_duplex_commands`): an ``ifb`` device in
the namespace of one end holds the ``tbf``, and a ``clsact`` qdisc on that end's veth redirects
everything leaving (``egress``) and arriving (``ingress``) to it with ``mirred egress
redirect``; the ``ifb`` hands each packet back where it was taken, out of the veth or up the
stack. The filter matches every packet with ``u32 match u32 0 0``: ``matchall`` would say it
more plainly, but kernels built with few ``tc`` classifiers lack it (and ``flower`` and
``basic``) while they have ``u32``.
"""

from __future__ import annotations

from ..network import Network

#: tbf queue: the time a packet may wait at a link before it is dropped.
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
    holds QUEUE_S of traffic, as a switch port buffer would, unless the link declares its buffer
    (:func:`queue_limit`)."""
    wire_Bps = capacity_Bps * WIRE_BYTES_PER_PAYLOAD
    burst = max(MIN_BURST_PACKETS * FRAME_BYTES, int(wire_Bps * BURST_S))
    return burst, max(int(capacity_Bps * QUEUE_S), 2 * burst)


def queue_limit(capacity_Bps: float, buffer_packets: int | None) -> int:
    """The queue of a link's shaper, in bytes (``tbf``'s ``limit``): the link's switch buffer
    ``buffer_packets`` (B_L) in full-size frames of :data:`FRAME_BYTES` where it declares one,
    so that congestion loses packets there as in the switch, else :data:`QUEUE_S` of traffic
    (:func:`tbf_sizes`). A buffer is never smaller than the burst: ``tbf`` passes a host's
    segments whole (:func:`gso_max_size`), and a queue shorter than one would refuse them all.

    Examples
    --------
    >>> queue_limit(2.5e6, 30), queue_limit(2.5e6, None), queue_limit(2.5e6, 1)
    (45420, 50000, 4542)
    """
    burst, default = tbf_sizes(capacity_Bps)
    if buffer_packets is None:
        return default
    return max(buffer_packets * FRAME_BYTES, burst)


def gso_max_size(capacity_Bps: float) -> int:
    """The largest segment a host's TCP hands a link's veth at once: as many full-size segments
    as the link's burst holds with their headers, so that ``tbf`` passes them whole instead of
    cutting them (which cost the CPU of a 2-core machine under eight flows) and the hops
    forward a few large packets rather than many small ones."""
    burst = tbf_sizes(capacity_Bps)[0]
    return max(1448, (burst // FRAME_BYTES) * 1448)


def qdisc_commands(iface: str, capacity_Bps: float, latency_s: float,
                   buffer_packets: int | None = None) -> list[str]:
    """``tc -batch`` lines that shape the egress of ``iface`` to a link's capacity and latency,
    with its buffer as the queue (:func:`queue_limit`).

    Examples
    --------
    >>> qdisc_commands("v0", 2.5e6, 0.0, 30)
    ['qdisc add dev v0 root handle 1: tbf rate 20911602bit burst 4542 limit 45420']
    """
    rate = max(int(capacity_Bps * WIRE_BYTES_PER_PAYLOAD * 8), 8)
    burst = tbf_sizes(capacity_Bps)[0]
    limit = queue_limit(capacity_Bps, buffer_packets)
    tbf = f"tbf rate {rate}bit burst {burst} limit {limit}"
    if latency_s > 0:
        return [f"qdisc add dev {iface} root handle 1: netem delay {latency_s * 1e6:.0f}us limit 100000",
                f"qdisc add dev {iface} parent 1: handle 2: {tbf}"]
    return [f"qdisc add dev {iface} root handle 1: {tbf}"]


def shared_duplex_commands(veth: str, ifb: str, capacity_Bps: float, latency_s: float,
                           buffer_packets: int | None = None) -> list[str]:
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
    return [*qdisc_commands(ifb, capacity_Bps, latency_s, buffer_packets), f"qdisc add dev {veth} clsact",
            f"filter add dev {veth} egress {redirect}", f"filter add dev {veth} ingress {redirect}"]


def host_queue_share(net: Network, host: str) -> int:
    """What one TCP socket of ``host`` may keep queued below it: half the queue of its slowest
    outgoing link (:func:`queue_limit`). Left at the kernel's default (1 MiB or more), a single
    flow overflows its own link's queue and drops packets that a network card would have held
    back."""
    links = [net.links[net.link_between(host, n)] for n in net.out_neighbours(host)]
    limits = [queue_limit(link.capacity_Bps, link.buffer_packets) for link in links]
    return max(2 * 1514, min(limits, default=2 * 65536) // 2)

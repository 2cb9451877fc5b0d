"""Rate limits: a ``tbf`` per directed link of the model, under a ``netem`` delay when the link
has a latency, and each host's share of its link's queue.

Capacities are rates of message bytes, as everywhere in liquidsched, and ``tbf`` counts frames
with their headers, so the shaped rate is the capacity times :data:`WIRE_BYTES_PER_PAYLOAD`: a
full-size TCP segment carries the capacity in payload (97–100 % of it measured for one flow).
A host's TCP keeps less data queued below it than its link's queue holds
(``tcp_limit_output_bytes``, :func:`host_queue_share`), as a host's network card pushes back
instead of dropping.
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
    holds QUEUE_S of traffic, as a switch port buffer would."""
    wire_Bps = capacity_Bps * WIRE_BYTES_PER_PAYLOAD
    burst = max(MIN_BURST_PACKETS * FRAME_BYTES, int(wire_Bps * BURST_S))
    return burst, max(int(capacity_Bps * QUEUE_S), 2 * burst)


def gso_max_size(capacity_Bps: float) -> int:
    """The largest segment a host's TCP hands a link's veth at once: as many full-size segments
    as the link's burst holds with their headers, so that ``tbf`` passes them whole instead of
    cutting them (which cost the CPU of a 2-core machine under eight flows) and the hops
    forward a few large packets rather than many small ones."""
    burst = tbf_sizes(capacity_Bps)[0]
    return max(1448, (burst // FRAME_BYTES) * 1448)


def qdisc_commands(iface: str, capacity_Bps: float, latency_s: float) -> list[str]:
    """``tc -batch`` lines that shape the egress of ``iface`` to a link's capacity and latency."""
    rate = max(int(capacity_Bps * WIRE_BYTES_PER_PAYLOAD * 8), 8)
    burst, limit = tbf_sizes(capacity_Bps)
    tbf = f"tbf rate {rate}bit burst {burst} limit {limit}"
    if latency_s > 0:
        return [f"qdisc add dev {iface} root handle 1: netem delay {latency_s * 1e6:.0f}us limit 100000",
                f"qdisc add dev {iface} parent 1: handle 2: {tbf}"]
    return [f"qdisc add dev {iface} root handle 1: {tbf}"]


def host_queue_share(net: Network, host: str) -> int:
    """What one TCP socket of ``host`` may keep queued below it: half the queue of its slowest
    outgoing link. Left at the kernel's default (1 MiB or more), a single flow overflows its own
    link's queue and drops packets that a network card would have held back."""
    limits = [tbf_sizes(net.links[net.link_between(host, n)].capacity_Bps)[1] for n in net.out_neighbours(host)]
    return max(2 * 1514, min(limits, default=2 * 65536) // 2)

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


def tbf_sizes(capacity_Bps: float) -> tuple[int, int]:
    """The ``tbf`` burst and queue limit of a link, in bytes: the burst holds a full GSO segment
    (veth hands tbf up to 64 KiB at once) and at least a timer tick of traffic; the queue holds
    QUEUE_S of traffic, as a switch port buffer would."""
    burst = max(65536 + 1514, int(capacity_Bps / 250))
    return burst, max(int(capacity_Bps * QUEUE_S), 2 * burst)


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

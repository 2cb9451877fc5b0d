"""Measuring an emulated network: link byte counters, one TCP flow's time and rate, flows
running at once, the arrival times of a flow's packets at the far end of a link (to check
that shaping honours its rate over short windows, not only on average), and the smallest round
trip TCP sees (what :data:`~liquidsched.emulate.shaping.MACHINE_RTT_S` was measured with).

Rates and times here are the emulated network's: with a time scale N, links run at their
capacity / N, and a time measured here, divided by N, is the modelled network's."""

from __future__ import annotations

import json
import subprocess
import sys
import time
from typing import Any, Callable

from ..errors import BackendError, InputError
from .addressing import EmulationPlan
from .namespaces import run_command
from .routes import host_path


def link_counters(plan: EmulationPlan) -> dict[str, int]:
    """Bytes sent so far on each directed link of the model (its egress interface's counter)."""
    per_ns: dict[str, dict[str, int]] = {}
    for ns in set(plan.namespace.values()):
        data = json.loads(run_command(["ip", "-n", ns, "-s", "-j", "link", "show"]) or "[]")
        per_ns[ns] = {d["ifname"]: d["stats64"]["tx"]["bytes"] for d in data}
    counters = {}
    for lid in plan.network.links:
        ns, iface = plan.egress(lid)
        counters[lid] = per_ns[ns][iface]
    return counters


def queue_drops(plan: EmulationPlan) -> dict[str, int]:
    """Packets each resource of the model has dropped so far, its shaper's queue being full
    (the ``tc`` statistics of its root qdisc: the egress interface's, or the ``ifb`` device of a
    shared-duplex cable), by resource name; directions the model lacks are not shaped and not
    counted."""
    drops = {}
    for name, lid in zip(plan.network.resources, plan.network.resource_link):
        ns, device = plan.shaper(lid)
        data = json.loads(run_command(["tc", "-n", ns, "-s", "-j", "qdisc", "show", "dev", device]) or "[]")
        drops[name] = sum(q.get("drops", 0) for q in data)
    return drops


_SINK = """
import socket, sys
s = socket.socket(); s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
s.bind((sys.argv[1], int(sys.argv[2]))); s.listen(1); print("ready", flush=True)
c, _ = s.accept(); n = 0
while True:
    b = c.recv(1 << 20)
    if not b: break
    n += len(b)
print(n, flush=True)
"""

_SOURCE = """
import socket, sys, time
n = int(sys.argv[3]); buf = bytes(1 << 20); c = socket.create_connection((sys.argv[1], int(sys.argv[2])))
t = time.monotonic(); left = n
while left > 0:
    left -= c.send(buf[:min(left, len(buf))])
c.shutdown(socket.SHUT_WR); c.recv(1); print(t, time.monotonic(), flush=True)
"""

#: The port of the first flow's receiver (the next flows' are the next ports).
_PORT = 5201

# Captures the TCP packets to port 5201 arriving on one interface, with the kernel's receive
# timestamps (taken as the packet leaves its shaper: at the other end of the veth, or the ifb of
# a shared-duplex cable at this end, which hands it back before the capture sees it; so neither
# the capture's nor the sink's scheduling delays show), until argv[2] payload bytes have come.
_CAPTURE = """
import socket, struct, sys
iface, need = sys.argv[1], int(sys.argv[2])
s = socket.socket(socket.AF_PACKET, socket.SOCK_DGRAM, socket.htons(0x0800))
s.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 1 << 25)
s.setsockopt(socket.SOL_SOCKET, 35, 1)  # SO_TIMESTAMPNS
s.bind((iface, 0x0800))
print("ready", flush=True)
got, out = 0, []
while got < need:
    data, anc, _, addr = s.recvmsg(1 << 17, 64)
    if addr[2] == 4 or len(data) < 40 or data[9] != 6:  # outgoing, or not TCP
        continue
    ihl = (data[0] & 15) * 4
    if struct.unpack("!H", data[ihl + 2:ihl + 4])[0] != 5201:
        continue
    payload = len(data) - ihl - (data[ihl + 12] >> 4) * 4
    if payload <= 0:
        continue
    sec, nsec = struct.unpack("qq", anc[0][2][:16])
    out.append((sec + nsec * 1e-9, payload))
    got += payload
print(repr(out), flush=True)
"""


def send_bytes(plan: EmulationPlan, src: str, dst: str, nbytes: int) -> float:
    """Send ``nbytes`` over one TCP connection from host ``src`` to host ``dst``; the seconds it
    took, until the receiver had everything."""
    flow = concurrent_flows(plan, [(src, dst)], nbytes)[0]
    return flow["end_s"] - flow["start_s"]


def concurrent_flows(plan: EmulationPlan, pairs: list[tuple[str, str]], nbytes: int | list[int]) -> list[dict]:
    """One TCP connection per (source, destination) host pair of ``pairs``, all started
    together, each sending ``nbytes`` (or its own entry of a list). Per flow: ``src``, ``dst``,
    ``nbytes``, ``start_s`` and ``end_s`` (the connection's first byte sent and the receiver's
    acknowledgement of its last, on the machine's monotonic clock, comparable between flows) and
    ``rate_Bps``."""
    sizes = nbytes if isinstance(nbytes, list) else [nbytes] * len(pairs)
    sinks, sources = [], []
    try:
        for i, (src, dst) in enumerate(pairs):
            sinks.append(subprocess.Popen(["ip", "netns", "exec", plan.namespace[dst], sys.executable, "-c", _SINK,
                                           plan.address[dst], str(_PORT + i)], stdout=subprocess.PIPE, text=True))
        for sink, (src, dst) in zip(sinks, pairs):
            assert sink.stdout is not None
            if sink.stdout.readline().strip() != "ready":
                raise BackendError(f"could not listen on {dst}")
        for i, (src, dst) in enumerate(pairs):
            sources.append(subprocess.Popen(["ip", "netns", "exec", plan.namespace[src], sys.executable, "-c",
                                             _SOURCE, plan.address[dst], str(_PORT + i), str(sizes[i])],
                                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True))
        flows = []
        for source, sink, (src, dst), size in zip(sources, sinks, pairs, sizes):
            out, err = source.communicate(timeout=120)
            if source.returncode != 0:
                what = (err.strip().splitlines() or ["(no message)"])[-1]
                raise BackendError(f"{src} → {dst}: the sender failed: {what}")
            assert sink.stdout is not None
            got = int(sink.stdout.readline().strip() or 0)
            if got != size:
                raise BackendError(f"{src} → {dst}: sent {size} bytes, {got} arrived")
            start, end = (float(x) for x in out.split())
            flows.append({"src": src, "dst": dst, "nbytes": size, "start_s": start, "end_s": end,
                          "rate_Bps": size / (end - start)})
        return flows
    finally:
        for proc in sources + sinks:
            if proc.poll() is None:
                proc.kill()
            proc.wait()


def arrivals(plan: EmulationPlan, src: str, dst: str, nbytes: int) -> list[tuple[float, int]]:
    """Send ``nbytes`` over one TCP connection from host ``src`` to host ``dst`` and return
    the (kernel receive time in s, payload bytes) of every data packet as it arrives at
    ``dst``'s interface, in order."""
    ns = plan.namespace[dst]
    ifaces = [c.name for c in plan.cables if dst in (c.a, c.b)]
    if len(ifaces) != 1:
        raise InputError(f"host {dst} has {len(ifaces)} cables; arrivals are captured on a host with one")
    capture = subprocess.Popen(["ip", "netns", "exec", ns, sys.executable, "-c", _CAPTURE, ifaces[0], str(nbytes)],
                               stdout=subprocess.PIPE, text=True)
    try:
        assert capture.stdout is not None
        if capture.stdout.readline().strip() != "ready":
            raise BackendError(f"could not capture on {dst}")
        send_bytes(plan, src, dst, nbytes)
        line = capture.communicate(timeout=30)[0]
    finally:
        if capture.poll() is None:
            capture.kill()
            capture.wait()
    import ast

    return [(float(t), int(b)) for t, b in ast.literal_eval(line.strip())]


def fastest_window(packets: list[tuple[float, int]], window_s: float) -> float:
    """The highest rate, in bytes/s, over any span of at least ``window_s`` between two packet
    arrivals: the bytes of the packets after the first up to the last, over the time between
    them (the first packet's bytes crossed the link before its arrival, outside the span).

    Examples
    --------
    >>> fastest_window([(0.0, 100), (0.01, 100), (0.02, 300), (0.025, 100)], 0.01)
    30000.0
    """
    import numpy as np

    t = np.array([p[0] for p in packets])
    cum = np.concatenate([[0], np.cumsum([p[1] for p in packets])])
    best = 0.0
    for i in range(len(t)):
        j = np.searchsorted(t, t[i] + window_s)  # the first packet at least window_s after i
        if j >= len(t):
            break
        span = t[j:] - t[i]
        rates = (cum[j + 1:] - cum[i + 1]) / span
        best = max(best, float(rates.max()))
    return best


def single_flow_check(plan: EmulationPlan, src: str, dst: str, seconds: float = 1.0) -> dict[str, float]:
    """One TCP flow from ``src`` to ``dst`` for about ``seconds``: its rate against the narrowest
    link of its path as emulated (its capacity over the time scale). Below 90 % the machine,
    not the emulated links, is the limit.

    Returns
    -------
    dict
        ``src``, ``dst``, ``capacity_Bps`` (the narrowest link's emulated rate), ``rate_Bps``
        (the flow's, on the emulation's clock), ``ratio`` (of the two), ``time_scale`` and
        ``modelled_capacity_Bps`` (the narrowest link's capacity in the model)."""
    net = plan.network
    path = host_path(net, src, dst)
    if path is None:
        raise InputError(f"no route from {src} to {dst}")
    links = [net.link_between(u, v) for u, v in zip(path, path[1:])]
    narrowest = min(plan.emulated_capacity_Bps(lid) for lid in links)
    elapsed = send_bytes(plan, src, dst, int(narrowest * seconds))
    rate = int(narrowest * seconds) / elapsed
    return {"src": src, "dst": dst, "capacity_Bps": narrowest, "rate_Bps": rate, "ratio": rate / narrowest,
            "time_scale": plan.time_scale, "modelled_capacity_Bps": min(net.links[lid].capacity_Bps for lid in links)}


def opposing_flows_check(plan: EmulationPlan, link: str, seconds: float = 1.0) -> dict[str, Any] | None:
    """TCP flows through the link ``link`` (an id of the model's links) and its reverse at once,
    as many each way as fill it, for about ``seconds``: what a link loaded in both directions,
    as every bottleneck of an all-to-all is, gives to payload, each direction also carrying the
    acknowledgements of the other's flows. None when the link has no reverse of its own (its two
    directions share one capacity, or there is none) or the hosts cannot fill it both ways, no
    host sending twice or receiving twice.

    Returns
    -------
    dict
        ``link``, and per way (``forward``, ``backward``): its link's emulated rate
        ``capacity_Bps``, its ``flows`` (``src``, ``dst``), its payload ``rate_Bps`` (all its
        bytes over the time from its first flow's start to its last flow's end) and ``ratio``
        (of the two); ``ratio``: the smaller way's."""
    net = plan.network
    if link not in net.links:
        return None  # a resource of two links that share one capacity
    u, v = net.links[link].src, net.links[link].dst
    back = net.link_between(v, u)
    if back is None:
        return None
    senders: set[str] = set()
    receivers: set[str] = set()
    ways = [(lid, _filling_flows(plan, hop, plan.emulated_capacity_Bps(lid), senders, receivers))
            for lid, hop in ((link, (u, v)), (back, (v, u)))]
    if not all(pairs for _, pairs in ways):
        return None
    capacity = [plan.emulated_capacity_Bps(lid) for lid, _ in ways]
    # Each way's flows share its link's bytes for ``seconds``, so that both ways last as long.
    sizes = [int(c * seconds / len(pairs)) for c, (_, pairs) in zip(capacity, ways) for _ in pairs]
    flows = concurrent_flows(plan, ways[0][1] + ways[1][1], sizes)
    k = len(ways[0][1])
    out: dict[str, Any] = {"link": link}
    for name, c, mine in (("forward", capacity[0], flows[:k]), ("backward", capacity[1], flows[k:])):
        span = max(f["end_s"] for f in mine) - min(f["start_s"] for f in mine)
        rate = sum(f["nbytes"] for f in mine) / span
        out[name] = {"capacity_Bps": c, "flows": [{"src": f["src"], "dst": f["dst"]} for f in mine],
                     "rate_Bps": rate, "ratio": rate / c}
    out["ratio"] = min(out["forward"]["ratio"], out["backward"]["ratio"])
    return out


def _filling_flows(plan: EmulationPlan, hop: tuple[str, str], capacity: float, senders: set[str],
                   receivers: set[str]) -> list[tuple[str, str]]:
    """Host pairs whose paths cross ``hop``, no host sending twice nor receiving twice
    (``senders`` and ``receivers`` grow), until their narrowest links add up to ``capacity``;
    empty when they cannot."""
    net = plan.network
    chosen: list[tuple[str, str]] = []
    total = 0.0
    for a in net.hosts():
        for b in net.hosts():
            if total >= capacity * (1 - 1e-9):
                return chosen
            path = host_path(net, a, b) if a != b and a not in senders and b not in receivers else None
            if not path or hop not in set(zip(path, path[1:])):
                continue
            chosen.append((a, b))
            senders.add(a)
            receivers.add(b)
            total += min(plan.emulated_capacity_Bps(net.link_between(x, y)) for x, y in zip(path, path[1:]))
    return chosen if total >= capacity * (1 - 1e-9) else []


# Sends argv[3] bytes to argv[1]:argv[2], then prints the connection's smallest round trip that TCP
# measured (tcp_info's tcpi_min_rtt, in µs, at byte 148 of struct tcp_info).
_MIN_RTT_SOURCE = """
import socket, struct, sys
n = int(sys.argv[3]); buf = bytes(1 << 16); c = socket.create_connection((sys.argv[1], int(sys.argv[2])))
left = n
while left > 0:
    left -= c.send(buf[:min(left, len(buf))])
c.shutdown(socket.SHUT_WR); c.recv(1)
print(struct.unpack_from("I", c.getsockopt(socket.IPPROTO_TCP, socket.TCP_INFO, 256), 148)[0], flush=True)
"""


def tcp_min_rtt(plan: EmulationPlan, src: str, dst: str, nbytes: int = 200_000) -> float:
    """Send ``nbytes`` over one TCP connection from host ``src`` to host ``dst``; the smallest
    round trip TCP measured on it (``tcpi_min_rtt``), in emulated seconds. Over a network's
    longest route, it is that network's base round trip on this machine (with its modelled
    latencies, times the time scale)."""
    sink = subprocess.Popen(["ip", "netns", "exec", plan.namespace[dst], sys.executable, "-c", _SINK,
                             plan.address[dst], str(_PORT)], stdout=subprocess.PIPE, text=True)
    try:
        assert sink.stdout is not None
        if sink.stdout.readline().strip() != "ready":
            raise BackendError(f"could not listen on {dst}")
        done = subprocess.run(["ip", "netns", "exec", plan.namespace[src], sys.executable, "-c", _MIN_RTT_SOURCE,
                               plan.address[dst], str(_PORT), str(nbytes)], capture_output=True, text=True, timeout=120)
        if done.returncode != 0:
            what = (done.stderr.strip().splitlines() or ["(no message)"])[-1]
            raise BackendError(f"{src} → {dst}: the sender failed: {what}")
        return int(done.stdout.strip()) * 1e-6
    finally:
        if sink.poll() is None:
            sink.kill()
        sink.wait()


def wait_for(predicate: Callable[[], bool], timeout_s: float, step_s: float = 0.05) -> bool:
    """Poll ``predicate`` until it is true or ``timeout_s`` passes."""
    end = time.monotonic() + timeout_s
    while time.monotonic() < end:
        if predicate():
            return True
        time.sleep(step_s)
    return bool(predicate())

"""An emulated network on one Linux machine: network namespaces, veth cables, ``tc`` rate limits.

Every node of a :class:`~liquidsched.network.Network` becomes a network namespace named
``PREFIX-nI`` (I its index): hosts run processes there, switches forward. Every pair of
connected nodes gets one veth pair ``vK`` (one interface in each namespace); each directed link
of the model shapes the egress of its end with ``tbf`` at its capacity (under a ``netem`` delay
when it has a latency). Capacities are rates of message bytes, as everywhere in liquidsched, and
``tbf`` counts frames with their headers, so the shaped rate is the capacity times
:data:`WIRE_BYTES_PER_PAYLOAD`: a full-size TCP segment carries the capacity in payload. A host's
TCP keeps less data queued below it than its link's queue holds
(``tcp_limit_output_bytes``), as a host's network card pushes back instead of dropping. A direction the model lacks (a host that only sends has no downlink) is
left unshaped: it only carries acknowledgements. Every node has one address (a host on its
cable, a switch on its loopback interface); static ``/32`` routes, hop by hop, reproduce the model's route of every host
pair. A pair without a route in the model (a receiver answering a sender) goes back the way it
came. The emulation routes by destination, so routes whose next hop depends on the source are
refused, as are shared-duplex links (``tc`` cannot make two directions share one rate).

Everything created carries the prefix and is removed by :func:`down`, which also stops the
processes left in the namespaces. A state file in ``/run/liquidsched`` records what ``up``
built, for ``status``, ``run`` and ``down``. Root is required.
"""

from __future__ import annotations

import json
import os
import re
import signal
import subprocess
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Sequence

from ..errors import BackendError, InputError, TopologyError
from ..io.topology import topology_from_dict, topology_to_dict
from ..network import Network
from ..routing import check_route

STATE_DIR = Path("/run/liquidsched")
DEFAULT_PREFIX = "lsq"
#: tbf queue: the time a packet may wait at a link before it is dropped.
QUEUE_S = 0.02
#: Bytes on the wire (Ethernet header, IPv4, TCP with timestamps: what ``tbf`` counts) per byte of
#: payload in a full-size TCP segment: 1514 / 1448.
WIRE_BYTES_PER_PAYLOAD = 1514 / 1448
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
    """What :func:`up` creates for a network: namespaces, addresses, cables and routes."""

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

    def to_dict(self) -> dict[str, Any]:
        return {"prefix": self.prefix, "network": topology_to_dict(self.network), "namespace": self.namespace,
                "address": self.address}


def _check_prefix(prefix: str) -> str:
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
    _check_prefix(prefix)
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
    _add_routes(plan, cables)
    return plan


def _host_path(net: Network, src: str, dst: str) -> list[str] | None:
    """The model's node sequence from ``src`` to ``dst``, or None when it has none."""
    try:
        nodes = net.routing.route_nodes(net, src, dst)
        check_route(net, src, dst, nodes)
    except TopologyError:
        return None
    return nodes


def _add_routes(plan: EmulationPlan, cables: dict[frozenset[str], Cable]) -> None:
    """Destination routes at every node: the model's routes first, then, for the host pairs the
    model does not route (acknowledgements, barriers between two senders), the shortest way over
    the cables in either direction, following the routes already set."""
    net = plan.network
    hosts = net.hosts()
    unrouted = []
    for s in hosts:
        for d in hosts:
            if s != d:
                nodes = _host_path(net, s, d)
                if nodes is None:
                    unrouted.append((s, d))
                else:
                    for u, v in zip(nodes, nodes[1:]):
                        _set_route(plan, cables, u, d, v)
    neighbours: dict[str, list[str]] = {n: [] for n in net.nodes}
    for c in cables.values():
        neighbours[c.a].append(c.b)
        neighbours[c.b].append(c.a)
    for s, d in unrouted:
        dist = _cable_distances(net, neighbours, d)
        u = s
        while u != d:
            entry = plan.routes[u].get(plan.address[d])
            if entry is not None:
                u = entry[1]
                continue
            options = [v for v in neighbours[u] if v in dist and dist[v] == dist.get(u, 0) - 1]
            if u not in dist or not options:
                raise TopologyError(f"hosts {s} and {d} are not connected")
            v = min(options, key=net.node_index)
            _set_route(plan, cables, u, d, v)
            u = v


def _set_route(plan: EmulationPlan, cables: dict[frozenset[str], Cable], u: str, d: str, v: str) -> None:
    table, dst = plan.routes[u], plan.address[d]
    cable = cables[frozenset((u, v))]
    if dst in table and table[dst] != (cable.name, v):
        raise TopologyError(f"at {u}, traffic to {d} leaves for {table[dst][1]} or for {v} depending on its "
                            "source: the emulation routes by destination only")
    table[dst] = (cable.name, v)


def _cable_distances(net: Network, neighbours: dict[str, list[str]], dst: str) -> dict[str, int]:
    """Hops to ``dst`` over cables in either direction, forwarding only through switches."""
    dist = {dst: 0}
    frontier = [dst]
    while frontier:
        nxt = []
        for v in frontier:
            for u in neighbours[v]:
                if u not in dist:
                    dist[u] = dist[v] + 1
                    if net.is_switch(u):
                        nxt.append(u)
        frontier = nxt
    return dist


# -- running commands --------------------------------------------------------------------------


def _run(cmd: Sequence[str], stdin: str | None = None, check: bool = True) -> str:
    try:
        done = subprocess.run(list(cmd), input=stdin, capture_output=True, text=True, timeout=120)
    except FileNotFoundError:
        raise BackendError(f"{cmd[0]} not found: the emulation needs iproute2 (ip, tc)") from None
    if check and done.returncode != 0:
        what = (done.stderr.strip().splitlines() or ["(no message)"])[-1]
        raise BackendError(f"{' '.join(cmd[:6])}{' …' if len(cmd) > 6 else ''} failed: {what}")
    return done.stdout


def _require_root() -> None:
    if os.geteuid() != 0:
        raise BackendError("the emulated network needs root (network namespaces, veth, tc)")


def _tbf_sizes(capacity_Bps: float) -> tuple[int, int]:
    """The ``tbf`` burst and queue limit of a link, in bytes: the burst holds a full GSO segment
    (veth hands tbf up to 64 KiB at once) and at least a timer tick of traffic; the queue holds
    QUEUE_S of traffic, as a switch port buffer would."""
    burst = max(65536 + 1514, int(capacity_Bps / 250))
    return burst, max(int(capacity_Bps * QUEUE_S), 2 * burst)


def _qdisc_commands(iface: str, capacity_Bps: float, latency_s: float) -> list[str]:
    rate = max(int(capacity_Bps * WIRE_BYTES_PER_PAYLOAD * 8), 8)
    burst, limit = _tbf_sizes(capacity_Bps)
    tbf = f"tbf rate {rate}bit burst {burst} limit {limit}"
    if latency_s > 0:
        return [f"qdisc add dev {iface} root handle 1: netem delay {latency_s * 1e6:.0f}us limit 100000",
                f"qdisc add dev {iface} parent 1: handle 2: {tbf}"]
    return [f"qdisc add dev {iface} root handle 1: {tbf}"]


def up(plan: EmulationPlan) -> None:
    """Create the emulated network. On any failure, everything already created is removed."""
    _require_root()
    if existing(plan.prefix):
        raise BackendError(f"an emulated network with prefix {plan.prefix!r} exists: "
                           f"liquidsched netem down --prefix {plan.prefix}")
    try:
        _build(plan)
        _save_state(plan)
    except BaseException:
        down(plan.prefix)
        raise


def _build(plan: EmulationPlan) -> None:
    net = plan.network
    for node, ns in plan.namespace.items():
        _run(["ip", "netns", "add", ns])
    for c in plan.cables:
        _run(["ip", "link", "add", c.name, "netns", plan.namespace[c.a], "type", "veth",
              "peer", "name", c.name, "netns", plan.namespace[c.b]])
    for node, ns in plan.namespace.items():
        mine = [c.name for c in plan.cables if node in (c.a, c.b)]
        # A host with one cable holds its address there, where MPI looks for it; switches and
        # multi-homed hosts on the loopback interface (neighbours still resolve it by ARP).
        home = mine[0] if len(mine) == 1 and not net.is_switch(node) else "lo"
        lines = ["link set lo up", *(f"link set {c} up" for c in mine), f"addr add {plan.address[node]}/32 dev {home}"]
        src = f" src {plan.address[node]}" if not net.is_switch(node) else ""
        for dst, (cable, nxt) in plan.routes[node].items():
            lines.append(f"route add {dst}/32 via {plan.address[nxt]} dev {cable} onlink{src}")
        _run(["ip", "-n", ns, "-batch", "-"], "\n".join(lines) + "\n")
        # IPv6 is off so that router solicitations do not show on the link counters.
        settings = {"net/ipv6/conf/all/disable_ipv6": "1", "net/ipv6/conf/default/disable_ipv6": "1",
                    "net/ipv4/conf/all/rp_filter": "0", "net/ipv4/conf/default/rp_filter": "0",
                    "net/ipv4/ip_forward": "1" if net.is_switch(node) else "0"}
        if not net.is_switch(node):
            settings["net/ipv4/tcp_limit_output_bytes"] = str(_host_queue_share(net, node))
        script = "; ".join(f"echo {v} > /proc/sys/{k}" for k, v in settings.items())
        _run(["ip", "netns", "exec", ns, "sh", "-c", script])
    by_ns: dict[str, list[str]] = {}
    for c in plan.cables:
        for lid in (c.a_to_b, c.b_to_a):
            if lid is not None:
                link = net.links[lid]
                ns, iface = plan.egress(lid)
                by_ns.setdefault(ns, []).extend(_qdisc_commands(iface, link.capacity_Bps, link.latency_s))
    for ns, lines in by_ns.items():
        _run(["tc", "-n", ns, "-batch", "-"], "\n".join(lines) + "\n")


def _host_queue_share(net: Network, host: str) -> int:
    """What one TCP socket of ``host`` may keep queued below it: half the queue of its slowest
    outgoing link. Left at the kernel's default (1 MiB or more), a single flow overflows its own
    link's queue and drops packets that a network card would have held back."""
    limits = [_tbf_sizes(net.links[net.link_between(host, n)].capacity_Bps)[1] for n in net.out_neighbours(host)]
    return max(2 * 1514, min(limits, default=2 * 65536) // 2)


def existing(prefix: str) -> list[str]:
    """Namespaces whose name carries ``prefix``."""
    out = _run(["ip", "netns", "list"], check=False)
    names = [line.split()[0] for line in out.splitlines() if line.strip()]
    return [n for n in names if n.startswith(f"{prefix}-n")]


def down(prefix: str = DEFAULT_PREFIX) -> int:
    """Remove every namespace (with its cables) carrying ``prefix``, after stopping the processes
    left in them; returns how many namespaces were removed."""
    _check_prefix(prefix)
    _require_root()
    names = existing(prefix)
    for ns in names:
        for pid in _run(["ip", "netns", "pids", ns], check=False).split():
            try:
                os.kill(int(pid), signal.SIGKILL)
            except (ProcessLookupError, ValueError):
                pass
    for ns in names:
        _run(["ip", "netns", "del", ns], check=False)
    state = STATE_DIR / f"{prefix}.json"
    state.unlink(missing_ok=True)
    return len(names)


def _save_state(plan: EmulationPlan) -> None:
    STATE_DIR.mkdir(parents=True, exist_ok=True)
    (STATE_DIR / f"{plan.prefix}.json").write_text(json.dumps(plan.to_dict()), encoding="utf-8")


def load_state(prefix: str = DEFAULT_PREFIX) -> EmulationPlan:
    """The plan of the emulated network that ``up`` built with ``prefix``."""
    _check_prefix(prefix)
    path = STATE_DIR / f"{prefix}.json"
    if not path.exists():
        raise BackendError(f"no emulated network with prefix {prefix!r} is up (liquidsched netem up …)")
    doc = json.loads(path.read_text(encoding="utf-8"))
    return plan_emulation(topology_from_dict(doc["network"], str(path)), prefix)


# -- measuring -------------------------------------------------------------------------------------


def link_counters(plan: EmulationPlan) -> dict[str, int]:
    """Bytes sent so far on each directed link of the model (its egress interface's counter)."""
    per_ns: dict[str, dict[str, int]] = {}
    for ns in set(plan.namespace.values()):
        data = json.loads(_run(["ip", "-n", ns, "-s", "-j", "link", "show"]) or "[]")
        per_ns[ns] = {d["ifname"]: d["stats64"]["tx"]["bytes"] for d in data}
    counters = {}
    for lid in plan.network.links:
        ns, iface = plan.egress(lid)
        counters[lid] = per_ns[ns][iface]
    return counters


_SINK = """
import socket, sys
s = socket.socket(); s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
s.bind((sys.argv[1], 5201)); s.listen(1); print("ready", flush=True)
c, _ = s.accept(); n = 0
while True:
    b = c.recv(1 << 20)
    if not b: break
    n += len(b)
print(n, flush=True)
"""

_SOURCE = """
import socket, sys, time
n = int(sys.argv[2]); buf = bytes(1 << 20); c = socket.create_connection((sys.argv[1], 5201))
t = time.perf_counter(); left = n
while left > 0:
    left -= c.send(buf[:min(left, len(buf))])
c.shutdown(socket.SHUT_WR); c.recv(1); print(time.perf_counter() - t, flush=True)
"""


def send_bytes(plan: EmulationPlan, src: str, dst: str, nbytes: int) -> float:
    """Send ``nbytes`` over one TCP connection from host ``src`` to host ``dst``; the seconds it
    took, until the receiver had everything."""
    import sys

    sink = subprocess.Popen(["ip", "netns", "exec", plan.namespace[dst], sys.executable, "-c", _SINK,
                             plan.address[dst]], stdout=subprocess.PIPE, text=True)
    try:
        assert sink.stdout is not None
        if sink.stdout.readline().strip() != "ready":
            raise BackendError(f"could not listen on {dst}")
        out = _run(["ip", "netns", "exec", plan.namespace[src], sys.executable, "-c", _SOURCE,
                    plan.address[dst], str(nbytes)])
        got = int(sink.stdout.readline().strip() or 0)
        if got != nbytes:
            raise BackendError(f"{src} → {dst}: sent {nbytes} bytes, {got} arrived")
        return float(out.strip())
    finally:
        sink.kill()
        sink.wait()


def single_flow_check(plan: EmulationPlan, src: str, dst: str, seconds: float = 1.0) -> dict[str, float]:
    """One TCP flow from ``src`` to ``dst`` for about ``seconds``: its rate against the narrowest
    link of its path. Below 90 % the machine, not the emulated links, is the limit."""
    net = plan.network
    path = _host_path(net, src, dst)
    if path is None:
        raise InputError(f"no route from {src} to {dst}")
    narrowest = min(net.links[net.link_between(u, v)].capacity_Bps for u, v in zip(path, path[1:]))
    elapsed = send_bytes(plan, src, dst, int(narrowest * seconds))
    rate = int(narrowest * seconds) / elapsed
    return {"src": src, "dst": dst, "capacity_Bps": narrowest, "rate_Bps": rate, "ratio": rate / narrowest}


class Emulation:
    """A context manager: the emulated network exists inside the ``with`` block, and is removed
    on leaving it, on an error, and on SIGINT or SIGTERM.

    Examples
    --------
    >>> from liquidsched import build_topology
    >>> with Emulation(build_topology("two-switch")) as emu:   # doctest: +SKIP
    ...     emu.namespace["t1"]
    'lsq-n2'
    """

    def __init__(self, net: Network, prefix: str = DEFAULT_PREFIX) -> None:
        self.plan = plan_emulation(net, prefix)
        self._previous: dict[int, Any] = {}

    def __enter__(self) -> EmulationPlan:
        for sig in (signal.SIGINT, signal.SIGTERM):
            self._previous[sig] = signal.signal(sig, _raise_interrupt)
        try:
            up(self.plan)
        except BaseException:
            self._restore()
            raise
        return self.plan

    def __exit__(self, *exc: object) -> None:
        try:
            down(self.plan.prefix)
        finally:
            self._restore()

    def _restore(self) -> None:
        for sig, handler in self._previous.items():
            signal.signal(sig, handler)
        self._previous.clear()


def _raise_interrupt(signum: int, frame: object) -> None:
    raise KeyboardInterrupt(f"signal {signum}")


def wait_for(predicate, timeout_s: float, step_s: float = 0.05) -> bool:
    """Poll ``predicate`` until it is true or ``timeout_s`` passes."""
    end = time.monotonic() + timeout_s
    while time.monotonic() < end:
        if predicate():
            return True
        time.sleep(step_s)
    return bool(predicate())


__all__ = ["DEFAULT_PREFIX", "Cable", "Emulation", "EmulationPlan", "down", "existing", "link_counters",
           "load_state", "plan_emulation", "send_bytes", "single_flow_check", "up"]


"""Creating and removing an emulated network: namespaces, veth cables, ``ifb`` shapers of
shared-duplex cables, addresses, routes, rate limits and queues, the hosts' TCP settings
(:func:`build_commands` lists them), a state file in ``/run/liquidsched`` recording what
:func:`up` built and how it models the network (for ``status``, ``run`` and ``down``), and
:class:`Emulation`, which removes everything on exit, error or signal. The ``ifb`` devices live
in the namespaces, so removing the namespaces removes them. Root is required.

The hosts' TCP (:func:`host_sysctls`), set in each host's namespace, since these settings are
per network namespace: ``tcp="tuned"`` (the default) sets it as a tuned cluster does:
``net.ipv4.tcp_slow_start_after_idle=0`` (a connection idle for a retransmission timeout keeps
its window, as between the steps of a collective) and socket buffers that the kernel may grow
past the network's bandwidth-delay product, ``net.ipv4.tcp_rmem`` and ``tcp_wmem`` with a
maximum of :data:`TUNED_BUFFER_BYTES` or twice the largest link's bandwidth-delay product plus
its queue, if more. ``net.core.rmem_max`` and ``wmem_max`` (the ceiling of buffers a program sets
itself with ``SO_RCVBUF``/``SO_SNDBUF``) are visible but read-only inside a namespace on Linux
6.18, so they are left at the machine's values. ``tcp="default"`` leaves the kernel's defaults.
In both, ``net.ipv4.tcp_limit_output_bytes`` keeps a host's sockets from overflowing its own
link's queue (:func:`~liquidsched.emulate.shaping.host_queue_share`). The congestion control is
the machine's (``net.ipv4.tcp_congestion_control`` as a new namespace inherits it), and
``status`` shows it.
"""

from __future__ import annotations

import contextlib
import json
import os
import shlex
import signal
import subprocess
import threading
from pathlib import Path
from typing import Any, Iterator, Sequence

from ..errors import BackendError, InputError
from ..io.topology import topology_from_dict
from ..network import Network
from .addressing import DEFAULT_PREFIX, EmulationPlan, check_prefix
from .planning import plan_emulation
from .shaping import (WIRE_BYTES_PER_PAYLOAD, gso_max_size, host_queue_share, link_queue_bytes, qdisc_commands,
                      shared_duplex_commands)

STATE_DIR = Path("/run/liquidsched")
#: The largest socket buffers a tuned host's TCP may grow to, at least (``tcp_rmem``,
#: ``tcp_wmem``): 32 MiB, as host-tuning guides for 10 GbE hosts set it.
TUNED_BUFFER_BYTES = 32 * 2**20


def run_command(cmd: Sequence[str], stdin: str | None = None, check: bool = True) -> str:
    """Run ``cmd``; its standard output. A failure raises :class:`BackendError` with the
    command and the last line it printed."""
    try:
        done = subprocess.run(list(cmd), input=stdin, capture_output=True, text=True, timeout=120)
    except FileNotFoundError:
        raise BackendError(f"{cmd[0]} not found: the emulation needs iproute2 (ip, tc)") from None
    if check and done.returncode != 0:
        what = (done.stderr.strip().splitlines() or ["(no message)"])[-1]
        raise BackendError(f"{' '.join(cmd[:6])}{' …' if len(cmd) > 6 else ''} failed: {what}")
    return done.stdout


def require_root() -> None:
    if os.geteuid() != 0:
        raise BackendError("the emulated network needs root (network namespaces, veth, tc)")


def up(plan: EmulationPlan) -> None:
    """Create the emulated network. On any failure, everything already created is removed."""
    require_root()
    if existing(plan.prefix):
        raise BackendError(f"an emulated network with prefix {plan.prefix!r} exists: "
                           f"liquidsched netem down --prefix {plan.prefix}")
    try:
        _build(plan)
        _save_state(plan)
    except BaseException:
        down(plan.prefix)
        raise


#: The signals that end a command line; held back while a namespace command runs.
_ENDING_SIGNALS = {signal.SIGINT, signal.SIGTERM, signal.SIGHUP}


@contextlib.contextmanager
def _signals_held() -> Iterator[None]:
    """Hold SIGINT, SIGTERM and SIGHUP back until the block ends, then deliver the first one
    to the handler that was in place.

    A signal raised inside ``subprocess.run`` kills the ``ip`` or ``tc`` it waits for after a
    quarter of a second, which on a busy machine can be half-way through making a namespace;
    each command is short, so holding the signal for its length keeps Ctrl-C prompt. Python's
    handlers, not the thread's signal mask, hold it: a process-directed signal goes to any
    thread that does not block it.
    """
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    caught: list[int] = []
    previous = {sig: signal.signal(sig, lambda signum, frame: caught.append(signum)) for sig in _ENDING_SIGNALS}
    try:
        yield
    finally:
        for sig, handler in previous.items():
            signal.signal(sig, handler)
        if caught:
            signal.raise_signal(caught[0])


def _build(plan: EmulationPlan) -> None:
    for cmd, stdin in build_commands(plan):
        with _signals_held():
            run_command(cmd, stdin)


def build_commands(plan: EmulationPlan) -> list[tuple[list[str], str | None]]:
    """The commands :func:`up` runs, in order, each with its standard input (``ip -batch`` and
    ``tc -batch`` scripts): namespaces, cables, each node's addresses, shapers (``ifb``) and
    routes, its settings, then each namespace's qdiscs and filters.

    Examples
    --------
    >>> from liquidsched import build_topology
    >>> cmds = build_commands(plan_emulation(build_topology("crossbar:n=2,capacity_Bps=1MB/s")))
    >>> [" ".join(cmd[:4]) for cmd, _ in cmds][:3]
    ['ip netns add lsq-n0', 'ip netns add lsq-n1', 'ip netns add lsq-n2']
    >>> print(cmds[-1][1], end="")
    qdisc add dev v1 root handle 1: tbf rate 8364640bit burst 4542 limit 20000
    >>> cmds = build_commands(plan_emulation(build_topology("crossbar:n=2,capacity_Bps=1MB/s"), time_scale=2))
    >>> print(cmds[-1][1], end="")
    qdisc add dev v1 root handle 1: tbf rate 4182320bit burst 4542 limit 20000
    """
    net = plan.network
    cmds: list[tuple[list[str], str | None]] = []
    for node, ns in plan.namespace.items():
        cmds.append((["ip", "netns", "add", ns], None))
    for c in plan.cables:
        cmds.append((["ip", "link", "add", c.name, "netns", plan.namespace[c.a], "type", "veth",
                      "peer", "name", c.name, "netns", plan.namespace[c.b]], None))
    for node, ns in plan.namespace.items():
        mine = [c.name for c in plan.cables if node in (c.a, c.b)]
        # A host with one cable holds its address there, where MPI looks for it; switches and
        # multi-homed hosts on the loopback interface (neighbours still resolve it by ARP).
        home = mine[0] if len(mine) == 1 and not net.is_switch(node) else "lo"
        ifbs = [c.ifb for c in plan.cables if c.ifb is not None and c.ifb_at == node]
        lines = ["link set lo up", *(f"link set {c} gso_max_size {_cable_gso(plan, c)}" for c in mine),
                 *(f"link set {c} up" for c in mine), f"addr add {plan.address[node]}/32 dev {home}",
                 *(line for ifb in ifbs for line in (f"link add {ifb} type ifb", f"link set {ifb} up"))]
        src = f" src {plan.address[node]}" if not net.is_switch(node) else ""
        for dst, (cable, nxt) in plan.routes[node].items():
            lines.append(f"route add {dst}/32 via {plan.address[nxt]} dev {cable} onlink{src}")
        cmds.append((["ip", "-n", ns, "-batch", "-"], "\n".join(lines) + "\n"))
        # IPv6 is off so that router solicitations do not show on the link counters.
        settings = {"net/ipv6/conf/all/disable_ipv6": "1", "net/ipv6/conf/default/disable_ipv6": "1",
                    "net/ipv4/conf/all/rp_filter": "0", "net/ipv4/conf/default/rp_filter": "0",
                    "net/ipv4/ip_forward": "1" if net.forwards(node) else "0"}
        if not net.is_switch(node):
            settings |= host_sysctls(plan, node)
        script = "; ".join(f"echo {shlex.quote(v)} > /proc/sys/{k}" for k, v in settings.items())
        cmds.append((["ip", "netns", "exec", ns, "sh", "-c", script], None))
    by_ns: dict[str, list[str]] = {}
    for c in plan.cables:
        if c.ifb is not None and c.ifb_at is not None and c.a_to_b is not None:
            # Both directions through one shaper: the pair has one capacity, latency and buffer.
            lid = c.a_to_b
            by_ns.setdefault(plan.namespace[c.ifb_at], []).extend(shared_duplex_commands(
                c.name, c.ifb, plan.emulated_capacity_Bps(lid), plan.emulated_latency_s(lid),
                limit_bytes=link_queue_bytes(plan, lid)))
            continue
        for lid in (c.a_to_b, c.b_to_a):
            if lid is not None:
                ns, iface = plan.egress(lid)
                by_ns.setdefault(ns, []).extend(qdisc_commands(iface, plan.emulated_capacity_Bps(lid),
                                                               plan.emulated_latency_s(lid),
                                                               limit_bytes=link_queue_bytes(plan, lid)))
    for ns, lines in by_ns.items():
        cmds.append((["tc", "-n", ns, "-batch", "-"], "\n".join(lines) + "\n"))
    return cmds


def host_sysctls(plan: EmulationPlan, host: str) -> dict[str, str]:
    """The TCP settings of ``host``'s namespace (paths under ``/proc/sys``): its queue share
    (``tcp_limit_output_bytes``) always, and with ``plan.tcp == "tuned"`` a tuned cluster's
    settings (see the module's documentation).

    Examples
    --------
    >>> from liquidsched import build_topology
    >>> net = build_topology("two-switch:capacity_Bps=100Mbit/s")
    >>> for key, value in host_sysctls(plan_emulation(net), "t1").items():
    ...     print(key, value)
    net/ipv4/tcp_limit_output_bytes 125000
    net/ipv4/tcp_slow_start_after_idle 0
    net/ipv4/tcp_rmem 4096 131072 33554432
    net/ipv4/tcp_wmem 4096 65536 33554432
    >>> host_sysctls(plan_emulation(net, tcp="default"), "t1")
    {'net/ipv4/tcp_limit_output_bytes': '125000'}
    """
    settings = {"net/ipv4/tcp_limit_output_bytes": str(host_queue_share(plan, host))}
    if plan.tcp == "tuned":
        window = max(TUNED_BUFFER_BYTES, tuned_window_bytes(plan))
        settings |= {"net/ipv4/tcp_slow_start_after_idle": "0", "net/ipv4/tcp_rmem": f"4096 131072 {window}",
                     "net/ipv4/tcp_wmem": f"4096 65536 {window}"}
    return settings


def tuned_window_bytes(plan: EmulationPlan) -> int:
    """Twice the largest bandwidth-delay product of a link (its shaped rate on the wire times
    the base round trip, :attr:`EmulationPlan.base_rtt_s`) plus its queue: socket buffers this
    large let one flow fill its path and its bottleneck's queue, with the kernel's own share of
    the buffer to spare."""
    return 2 * max((int(plan.emulated_capacity_Bps(lid) * WIRE_BYTES_PER_PAYLOAD * plan.base_rtt_s)
                    + link_queue_bytes(plan, lid) for lid in plan.network.links), default=0)


def congestion_control(plan: EmulationPlan) -> str:
    """The TCP congestion control of the emulated network's hosts (the machine's, which new
    namespaces inherit), as its first host's namespace reports it."""
    hosts = plan.hosts()
    if not hosts:
        return ""
    path = "/proc/sys/net/ipv4/tcp_congestion_control"
    return run_command(["ip", "netns", "exec", plan.namespace[hosts[0]], "cat", path], check=False).strip()


def _cable_gso(plan: EmulationPlan, name: str) -> int:
    """The GSO size of cable ``name``: what its slower shaped direction's burst passes whole."""
    cable = next(c for c in plan.cables if c.name == name)
    caps = [plan.emulated_capacity_Bps(lid) for lid in (cable.a_to_b, cable.b_to_a) if lid is not None]
    return gso_max_size(min(caps)) if caps else 65536


def existing(prefix: str) -> list[str]:
    """Namespaces whose name carries ``prefix``."""
    out = run_command(["ip", "netns", "list"], check=False)
    names = [line.split()[0] for line in out.splitlines() if line.strip()]
    return [n for n in names if n.startswith(f"{prefix}-n")]


def down(prefix: str = DEFAULT_PREFIX) -> int:
    """Remove every namespace (with its cables) carrying ``prefix``, after stopping the processes
    left in them; returns how many namespaces were removed."""
    check_prefix(prefix)
    require_root()
    # The removal runs whole: a second Ctrl-C must not leave half a network behind.
    with _signals_held():
        return _remove(prefix)


def _remove(prefix: str) -> int:
    names = existing(prefix)
    for ns in names:
        for pid in run_command(["ip", "netns", "pids", ns], check=False).split():
            try:
                os.kill(int(pid), signal.SIGKILL)
            except (ProcessLookupError, ValueError):
                pass
    for ns in names:
        run_command(["ip", "netns", "del", ns], check=False)
    state = STATE_DIR / f"{prefix}.json"
    state.unlink(missing_ok=True)
    return len(names)


def _save_state(plan: EmulationPlan) -> None:
    STATE_DIR.mkdir(parents=True, exist_ok=True)
    (STATE_DIR / f"{plan.prefix}.json").write_text(json.dumps(plan.to_dict()), encoding="utf-8")


def load_state(prefix: str = DEFAULT_PREFIX) -> EmulationPlan:
    """The plan of the emulated network that ``up`` built with ``prefix``."""
    check_prefix(prefix)
    path = STATE_DIR / f"{prefix}.json"
    if not path.exists():
        raise BackendError(f"no emulated network with prefix {prefix!r} is up (liquidsched netem up …)")
    doc = json.loads(path.read_text(encoding="utf-8"))
    # A state file written before the plans had settings holds none: the defaults were then the rule.
    settings = {k: doc[k] for k in ("buffers", "time_scale", "tcp", "queue_bytes", "queue_packets") if k in doc}
    return plan_emulation(topology_from_dict(doc["network"], str(path)), prefix, **settings)




def existing_emulation(network: Network, prefix: str, given: dict[str, Any],
                       option_name: Any = None) -> EmulationPlan:
    """The emulated network up under ``prefix``, checked to be ``network`` built with every
    setting of ``given`` (keywords of :func:`~liquidsched.emulate.plan_emulation`).

    Parameters
    ----------
    option_name
        How a setting is named in messages (default: its keyword), e.g. its command-line option.

    Raises
    ------
    InputError
        when the network up is another, or was built with another setting, naming it.
    """
    plan = load_state(prefix)
    if plan.network != network:
        raise InputError(f"the emulated network {prefix!r} is {plan.network.name}, not the network {network.name}")
    up = plan.settings()
    name = option_name or (lambda key: key)
    for key, value in given.items():
        if value != up.get(key):
            raise InputError(f"{name(key)} {shown_setting(value)}: the emulated network {prefix!r} was built with "
                             f"{name(key)} {shown_setting(up.get(key))} (liquidsched netem status --prefix {prefix})")
    return plan


def shown_setting(value: Any) -> str:
    """A setting as an option would spell it.

    Examples
    --------
    >>> shown_setting(3.0), shown_setting(None), shown_setting("deep")
    ('3', '(not set)', 'deep')
    """
    return "(not set)" if value is None else f"{value:g}" if isinstance(value, float) else str(value)

class Emulation:
    """A context manager: the emulated network exists inside the ``with`` block, and is removed
    on leaving it, on an error, and on SIGINT or SIGTERM. Entering it gives its
    :class:`~liquidsched.emulate.EmulationPlan`.

    Parameters
    ----------
    net
        The network to emulate.
    prefix
        What every name it creates starts with.
    buffers, time_scale, tcp, queue_bytes, queue_packets
        How it models the network (:func:`~liquidsched.emulate.plan_emulation`): the switches'
        buffer regime (``deep`` or ``shallow``), the time scale (every link ``time_scale`` times
        slower, every latency that many times longer), the hosts' TCP (``tuned`` or ``default``),
        and every link's queue set directly.

    Attributes
    ----------
    plan : EmulationPlan
        What it builds, with the settings.
    time_scale : float
        The time scale: times measured on the emulated network divided by it are times of the
        modelled network (also ``plan.time_scale`` and ``plan.namespace.time_scale``).

    Examples
    --------
    >>> from liquidsched import build_topology
    >>> emulation = Emulation(build_topology("two-switch"), time_scale=2)
    >>> emulation.time_scale, emulation.plan.buffers, emulation.plan.tcp
    (2.0, 'deep', 'tuned')
    >>> with Emulation(build_topology("two-switch")) as emu:   # doctest: +SKIP
    ...     emu.namespace["t1"]
    'lsq-n2'
    """

    def __init__(self, net: Network, prefix: str = DEFAULT_PREFIX, buffers: str = "deep", time_scale: float = 1.0,
                 tcp: str = "tuned", queue_bytes: int | None = None, queue_packets: int | None = None) -> None:
        self.plan = plan_emulation(net, prefix, buffers=buffers, time_scale=time_scale, tcp=tcp,
                                   queue_bytes=queue_bytes, queue_packets=queue_packets)
        self._previous: dict[int, Any] = {}

    @property
    def time_scale(self) -> float:
        return self.plan.time_scale

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

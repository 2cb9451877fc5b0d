"""Emulated networks: their routes follow the model, and nothing they create outlives them.

The tests that build namespaces need root and iproute2; CI runs them as root.
"""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
import sys
import threading
import time

import pytest

from liquidsched import TopologyError, build_topology, plan
from liquidsched.emulate import (Emulation, arrivals, build_commands, concurrent_flows, down, existing, fastest_window,
                                 host_path, link_counters, opposing_flows_check, plan_emulation, queue_drops, send_bytes,
                                 single_flow_check, wait_for)
from liquidsched.emulate.measure import _filling_flows
from liquidsched.emulate.shaping import FRAME_BYTES, tbf_sizes
from liquidsched.execute import MODES, run_exchange
from liquidsched.network import Link, Network, Node
from liquidsched.traffic import all_to_all, half_all_to_all

from .measuring import ATTEMPTS, best_of

needs_root = pytest.mark.skipif(os.geteuid() != 0 or shutil.which("ip") is None or shutil.which("tc") is None,
                                reason="needs root and iproute2")
PREFIX = "lsqtest"


def test_plan_routes_every_host_pair_by_destination():
    net = build_topology("swiss-t1:allocation=2/0/2/0/2/0/0/0")
    p = plan_emulation(net, PREFIX)
    hosts = net.hosts()
    for s in hosts:
        for d in hosts:
            if s == d:
                continue
            # Follow the tables from s: they must reach d along the model's route.
            u, nodes = s, [s]
            while u != d:
                u = p.routes[u][p.address[d]][1]
                nodes.append(u)
            links = tuple(net.link_between(a, b) for a, b in zip(nodes, nodes[1:]))
            assert links == net.route(s, d)


def test_bad_prefixes_and_shared_pairs_with_two_latencies_are_refused():
    with pytest.raises(Exception, match="prefix"):
        plan_emulation(build_topology("two-switch"), "Bad-Prefix")
    with pytest.raises(TopologyError, match="different latencies"):
        plan_emulation(_one_cable(1e6, shared=True, latencies_s=(0.001, 0.002)), PREFIX)


SHARED_HIERARCHY = "hierarchical:d1=2,d2=2,c1=1.25MB/s,c2=2.5MB/s,shared_uplinks=true,buffer=30"


def test_a_shared_duplex_cable_is_shaped_once_through_an_ifb_with_the_switch_buffer_as_queue():
    net = build_topology(SHARED_HIERARCHY)
    p = plan_emulation(net, PREFIX)
    scripts: dict[tuple[str, str], str] = {}
    for cmd, stdin in build_commands(p):
        if cmd[0] in ("ip", "tc") and "-batch" in cmd:
            scripts[(cmd[0], cmd[2])] = stdin or ""
    uplinks = [c for c in p.cables if {c.a, c.b} in ({"e1", "root"}, {"e2", "root"})]
    assert len(uplinks) == 2
    for c in uplinks:
        ifb, ns = f"{PREFIX}-{c.name}", p.namespace[c.a]
        assert (c.ifb, c.ifb_at) == (ifb, c.a) and len(ifb) <= 15
        assert p.shaper(c.a_to_b) == p.shaper(c.b_to_a) == (ns, ifb)
        assert f"link add {ifb} type ifb\nlink set {ifb} up\n" in scripts[("ip", ns)]
        tc = scripts[("tc", ns)].splitlines()
        # One tbf for both directions, its queue the uplink's 30 packets; none on the veth itself.
        assert [l for l in tc if f"dev {ifb} " in l] == [
            f"qdisc add dev {ifb} root handle 1: tbf rate 20911602bit burst 4542 limit {30 * FRAME_BYTES}"]
        assert not any(f"dev {c.name} root" in l for l in tc)
        redirect = f"protocol all u32 match u32 0 0 action mirred egress redirect dev {ifb}"
        assert f"qdisc add dev {c.name} clsact" in tc
        assert f"filter add dev {c.name} egress {redirect}" in tc
        assert f"filter add dev {c.name} ingress {redirect}" in tc
        assert f"dev {c.name} " not in scripts.get(("tc", p.namespace[c.b]), "")
    # Host links declare no buffer: they keep 20 ms of traffic as their queue.
    host_tc = scripts[("tc", p.namespace["h1.1"])]
    assert host_tc.endswith(f"limit {tbf_sizes(1.25e6)[1]}\n") and "ifb" not in host_tc
    # Without shared duplex, each direction has its own tbf, still with the buffer as queue.
    plain = plan_emulation(build_topology(SHARED_HIERARCHY.replace("true", "false")), PREFIX)
    assert all(c.ifb is None for c in plain.cables)
    tc_lines = [l for cmd, stdin in build_commands(plain) if cmd[0] == "tc" for l in (stdin or "").splitlines()]
    assert sum(f"limit {30 * FRAME_BYTES}" in l for l in tc_lines) == 4 and not any("mirred" in l for l in tc_lines)
    # On a host's cable, the shaper sits at the host, whose TCP then holds back its own packets.
    net = Network([Node("h"), Node("s", "switch"), Node("g")],
                  [Link("s>h", "s", "h", 1e6), Link("h>s", "h", "s", 1e6), Link("s>g", "s", "g", 1e6),
                   Link("g>s", "g", "s", 1e6)], shared_duplex=[("s>h", "h>s")])
    assert [(c.ifb, c.ifb_at) for c in plan_emulation(net, PREFIX).cables] == [(f"{PREFIX}-v0", "h"), (None, None)]


def _one_cable(capacity_Bps: float, shared: bool, latencies_s: tuple[float, float] = (0.0, 0.0)) -> Network:
    """Hosts a and b behind switches s1 and s2; the cable s1–s2 and the host links at ``capacity_Bps``."""
    def cable(u: str, v: str, lat: tuple[float, float] = (0.0, 0.0)) -> list[Link]:
        return [Link(f"{u}>{v}", u, v, capacity_Bps, lat[0]), Link(f"{v}>{u}", v, u, capacity_Bps, lat[1])]

    return Network([Node("a"), Node("b"), Node("s1", "switch"), Node("s2", "switch")],
                   cable("a", "s1") + cable("s1", "s2", latencies_s) + cable("s2", "b"),
                   shared_duplex=[("s1>s2", "s2>s1")] if shared else [])


def _opposite_flows(net: Network, nbytes: int) -> tuple[float, float, float]:
    """Flows a → b and b → a at once: their bytes over the span of both, and each direction's
    rate on the cable s1–s2 while both run (after their first 0.3 s), as fractions of its
    capacity."""
    capacity = net.links["s1>s2"].capacity_Bps
    with Emulation(net, PREFIX) as emu:
        samples: list[tuple[float, dict[str, int]]] = []
        flows: list[dict] = []
        runner = threading.Thread(target=lambda: flows.extend(concurrent_flows(emu, [("a", "b"), ("b", "a")], nbytes)))
        runner.start()
        while runner.is_alive():
            samples.append((time.monotonic(), link_counters(emu)))
            time.sleep(0.1)
        runner.join()
    assert len(flows) == 2
    start, end = max(f["start_s"] for f in flows) + 0.3, min(f["end_s"] for f in flows)
    during = [s for s in samples if start <= s[0] <= end]
    assert len(during) >= 3, "the flows overlapped too briefly to measure"
    (t0, c0), (t1, c1) = during[0], during[-1]
    share = [(c1[lid] - c0[lid]) / (t1 - t0) / (capacity * 1514 / 1448) for lid in ("s1>s2", "s2>s1")]
    span = max(f["end_s"] for f in flows) - min(f["start_s"] for f in flows)
    return 2 * nbytes / span / capacity, share[0], share[1]


@needs_root
def test_opposite_flows_share_a_shared_duplex_cable_and_not_a_plain_one():
    capacity, nbytes = 2e6, 2_500_000

    # One rate for both directions: the two flows together carry about the cable's capacity,
    # split between the directions. Not evenly, and not the same way from run to run: TCP flows
    # through one drop-tail queue are not fair (one has been seen to hold 83 %), so only that
    # both directions move is asserted of the split. Load can only slow the flows: the upper
    # bounds hold on every try, the lower ones on the best of a few (tests/measuring.py).
    def shared_at_most_one_capacity(m: tuple[float, float, float]) -> None:
        together, forward, backward = m
        assert together < 1.05 and forward + backward < 1.05, m

    shared = best_of(lambda: _opposite_flows(_one_cable(capacity, shared=True), nbytes),
                     lambda m: m[0] > 0.8 and m[1] + m[2] > 0.8 and min(m[1], m[2]) > 0.05,
                     always=shared_at_most_one_capacity)
    assert shared[0] > 0.8 and shared[1] + shared[2] > 0.8 and min(shared[1], shared[2]) > 0.05, shared

    # Two rates: each flow gets about the whole capacity.
    def plain_at_most_two_capacities(m: tuple[float, float, float]) -> None:
        together, forward, backward = m
        assert together < 2.1 and forward < 1.05 and backward < 1.05, m

    plain = best_of(lambda: _opposite_flows(_one_cable(capacity, shared=False), nbytes),
                    lambda m: m[0] > 1.6 and min(m[1], m[2]) > 0.8, always=plain_at_most_two_capacities)
    # Above 1.05 shared capacities, which a shared cable cannot carry.
    assert plain[0] > 1.6 and min(plain[1], plain[2]) > 0.8, plain
    assert existing(PREFIX) == []


@needs_root
def test_traffic_crosses_exactly_the_links_of_its_path():
    net = build_topology("swiss-t1:allocation=1/1/0/1/0/0/1/0,capacity_Bps=100Mbit/s")
    nbytes = 300_000
    with Emulation(net, PREFIX) as emu:
        hosts = net.hosts()
        for s, d in [(hosts[0], hosts[2]), (hosts[3], hosts[1]), (hosts[1], hosts[3])]:
            before = link_counters(emu)
            send_bytes(emu, s, d, nbytes)
            after = link_counters(emu)
            sent = {lid: after[lid] - before[lid] for lid in after}
            path = set(net.route(s, d))
            assert {lid for lid, n in sent.items() if n >= nbytes} == path, (s, d)
            # Off the path, at most the acknowledgements (on the way back) and control packets.
            assert all(n < nbytes / 10 for lid, n in sent.items() if lid not in path)
    assert existing(PREFIX) == []


@needs_root
def test_hosts_that_forward_carry_a_ring_s_traffic_along_its_routes():
    # Four hosts cabled in a ring, no switch: h0 reaches h2 through h1, which forwards.
    from liquidsched.io.topology import topology_from_dict

    net = topology_from_dict({"format": "liquidsched-topology", "version": 1, "name": "ring",
                              "nodes": [{"id": f"h{i}", "forwards": True} for i in range(4)],
                              "cables": [{"a": f"h{i}", "b": f"h{(i + 1) % 4}", "capacity_Bps": "100Mbit/s"}
                                         for i in range(4)]})
    nbytes = 300_000
    with Emulation(net, PREFIX) as emu:
        for s, d in [("h0", "h2"), ("h1", "h3"), ("h3", "h0")]:
            before = link_counters(emu)
            send_bytes(emu, s, d, nbytes)
            after = link_counters(emu)
            sent = {lid: after[lid] - before[lid] for lid in after}
            assert {lid for lid, n in sent.items() if n >= nbytes} == set(net.route(s, d)), (s, d)
    assert existing(PREFIX) == []


@needs_root
def test_down_removes_everything_and_a_single_flow_reaches_its_rate():
    net = build_topology("two-switch:capacity_Bps=100Mbit/s")
    emu = plan_emulation(net, PREFIX)
    with Emulation(net, PREFIX):
        assert len(existing(PREFIX)) == len(net.nodes)
        # The capacity is a payload rate: a flow reaches it (the best of a few tries, a busy
        # machine slows it), and never more than one burst beyond.
        check = best_of(lambda: single_flow_check(emu, "t1", "r5", seconds=0.5), lambda c: c["ratio"] > 0.85,
                        always=lambda c: _below(c["ratio"], 1.03, c))
        assert 0.85 < check["ratio"] < 1.03, check
        # A host's TCP queues at most half its link's queue (250 kB at 100 Mbit/s) below it.
        share = subprocess.run(["ip", "netns", "exec", emu.namespace["t1"], "cat",
                                "/proc/sys/net/ipv4/tcp_limit_output_bytes"], capture_output=True, text=True)
        assert int(share.stdout) == 125_000
    assert existing(PREFIX) == []
    assert down(PREFIX) == 0


def test_opposing_flows_fill_the_link_each_way_no_host_sending_or_receiving_twice():
    """The 4 × 2 hierarchy's 200 Mbit/s uplink takes two 100 Mbit/s host flows each way; a host
    link one each way, its host sending one way and receiving the other; the two-switch's cross
    link one."""
    net = build_topology("hierarchical:d1=4,d2=2,c1=100Mbit/s,c2=200Mbit/s")
    emu = plan_emulation(net, PREFIX)
    senders: set[str] = set()
    receivers: set[str] = set()
    forward = _filling_flows(emu, ("e1", "root"), emu.emulated_capacity_Bps("e1>root"), senders, receivers)
    backward = _filling_flows(emu, ("root", "e1"), emu.emulated_capacity_Bps("root>e1"), senders, receivers)
    assert len(forward) == len(backward) == 2
    assert len({s for s, _ in forward + backward}) == len({d for _, d in forward + backward}) == 4
    assert all(("e1", "root") in set(zip(p, p[1:])) for p in (host_path(net, *f) for f in forward))
    assert all(("root", "e1") in set(zip(p, p[1:])) for p in (host_path(net, *f) for f in backward))
    senders, receivers = set(), set()
    out = _filling_flows(emu, ("h1.1", "e1"), emu.emulated_capacity_Bps("h1.1>e1"), senders, receivers)
    back = _filling_flows(emu, ("e1", "h1.1"), emu.emulated_capacity_Bps("e1>h1.1"), senders, receivers)
    assert [s for s, _ in out] == ["h1.1"] and [d for _, d in back] == ["h1.1"]
    two = plan_emulation(build_topology("two-switch"), PREFIX)
    assert len(_filling_flows(two, ("a", "b"), two.emulated_capacity_Bps("l_ab"), set(), set())) == 1
    assert opposing_flows_check(two, "no-such-link") is None


@needs_root
def test_opposing_flows_through_a_bottleneck_carry_most_of_it_each_way():
    net = build_topology("two-switch:capacity_Bps=100Mbit/s")
    with Emulation(net, PREFIX) as emu:
        check = best_of(lambda: opposing_flows_check(emu, "l_ab", seconds=0.5), lambda c: c["ratio"] > 0.85,
                        always=lambda c: _below(c["ratio"], 1.03, c))
        assert 0.85 < check["ratio"] < 1.03, check
        assert check["forward"]["flows"] == [{"src": "t1", "dst": "r4"}]
        assert check["backward"]["flows"] == [{"src": "t4", "dst": "r1"}]
    assert existing(PREFIX) == []


def _below(value: float, bound: float, shown: object) -> None:
    assert value < bound, shown


#: How much faster than its rate a shaped link may carry a flow over 10 ms: its tbf burst is
#: 0.4 ms of traffic (4 %), and a window may end just after a whole frame.
RATE_TOLERANCE = 0.05


@needs_root
def test_a_shaped_link_honours_its_rate_over_every_10ms_window():
    net = build_topology("crossbar:n=2,capacity_Bps=100Mbit/s")
    capacity = net.links["x>h2"].capacity_Bps
    with Emulation(net, PREFIX) as emu:
        # A fresh flow finds the token bucket full: a transfer whose time at the link's rate is
        # 10 ms still takes 10 ms from its first packet's arrival to its last.
        short = arrivals(emu, "h1", "h2", int(capacity * 0.01))
        # The fastest 10 ms of a longer flow: at the rate, within the tolerance, on one of a few
        # tries. A busy machine slows a flow, but it can also hold back arrivals and let them
        # land at once, which one 10 ms window then counts as a burst above the rate (1.11 × seen
        # with both cores busy); a link that really passed its rate would do so on every try.
        within = (0.85 * capacity, (1 + RATE_TOLERANCE) * capacity)
        fastest = [fastest_window(arrivals(emu, "h1", "h2", int(capacity * 0.2)), 0.01)]
        while not within[0] < fastest[-1] <= within[1] and len(fastest) < 2 * ATTEMPTS:
            fastest.append(fastest_window(arrivals(emu, "h1", "h2", int(capacity * 0.2)), 0.01))
    after_first = sum(b for _, b in short[1:])
    assert after_first / (short[-1][0] - short[0][0]) <= (1 + RATE_TOLERANCE) * capacity
    assert within[0] < fastest[-1] <= within[1], [rate / capacity for rate in fastest]
    assert existing(PREFIX) == []


@needs_root
def test_self_transfers_on_an_emulated_network_measure_at_most_the_bound():
    """On the Swiss-T1 a host sends to itself through its switch in the model, but MPI copies
    locally: the run compares with the bound of the transfers that cross the network."""
    net = build_topology("swiss-t1:allocation=1/1/0/0/0/0/0/0,capacity_Bps=100Mbit/s")
    schedule = plan(net, half_all_to_all(net, size_bytes=1_000_000), "liquid")
    with Emulation(net, PREFIX) as emu:
        result = run_exchange(schedule, ["frames", "all-at-once"], repeats=2, warmup=1, namespaces=emu.namespace)
    assert result.network == "emulated" and result.info["self_transfers"]["count"] == 2
    for m in result.modes:
        assert m.comparable and 0.5 < m.ratio_to_bound <= 1 + RATE_TOLERANCE, (m.mode, m.ratio_to_bound)


@needs_root
def test_mpi_ranks_in_namespaces_exchange_byte_exact():
    net = build_topology("crossbar:n=3,capacity_Bps=100Mbit/s")
    schedule = plan(net, all_to_all(net, size_bytes=200_000), "round-robin")
    with Emulation(net, PREFIX) as emu:
        before = link_counters(emu)
        result = run_exchange(schedule, MODES, repeats=1, warmup=0, namespaces=emu.namespace)
        after = link_counters(emu)
    assert all(m.verified for m in result.modes)
    # The bytes went over the emulated links, not through shared memory.
    assert after["h1>x"] - before["h1>x"] >= 4 * 2 * 200_000


@needs_root
def test_mpi_ranks_exchange_byte_exact_over_shared_duplex_uplinks_and_leave_nothing():
    net = build_topology(SHARED_HIERARCHY)
    schedule = plan(net, all_to_all(net, size_bytes=100_000), "round-robin")
    links_before = _root_links()
    with Emulation(net, PREFIX) as emu:
        before = link_counters(emu)
        result = run_exchange(schedule, ["frames", "all-at-once"], repeats=1, warmup=0, namespaces=emu.namespace)
        after = link_counters(emu)
    assert all(m.verified for m in result.modes)
    # Each mode sends 4 transfers up each uplink and 4 down it.
    for lid in ("e1>root", "root>e1"):
        assert after[lid] - before[lid] >= 2 * 4 * 100_000, lid
    assert existing(PREFIX) == [] and _root_links() == links_before
    assert not any(name.startswith(f"{PREFIX}-") for name in _root_links())


def _root_links() -> list[str]:
    """The interfaces of the root namespace."""
    out = subprocess.run(["ip", "-o", "link", "show"], capture_output=True, text=True).stdout
    return sorted(line.split(":")[1].strip().split("@")[0] for line in out.splitlines())


@needs_root
def test_a_run_killed_by_sigterm_leaves_nothing(tmp_path):
    cmd = [sys.executable, "-m", "liquidsched.cli", "run", "--topology", "two-switch:capacity_Bps=10Mbit/s",
           "--algorithm", "round-robin", "--emulate", "--prefix", PREFIX, "--repeats", "50"]
    proc = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    try:
        assert wait_for(lambda: len(existing(PREFIX)) == 12, 30), "the emulated network did not come up"
        assert wait_for(lambda: bool(_workers_in(PREFIX)), 30), "the ranks did not start"
        workers = _workers_in(PREFIX)
        proc.send_signal(signal.SIGTERM)
        proc.wait(timeout=60)
    finally:
        if proc.poll() is None:
            proc.kill()
            down(PREFIX)
    assert proc.returncode != 0
    assert existing(PREFIX) == []
    assert [pid for pid, cmdline in workers.items() if _cmdline(pid) == cmdline] == []


def _workers_in(prefix: str) -> dict[int, str]:
    """The ranks running in the namespaces of ``prefix``: pid → command line. Only these: other
    emulated networks on the machine (a benchmark's) may run ranks of their own meanwhile."""
    workers = {}
    for ns in existing(prefix):
        out = subprocess.run(["ip", "netns", "pids", ns], capture_output=True, text=True).stdout
        for pid in map(int, out.split()):
            cmdline = _cmdline(pid)
            if "liquidsched.execute.worker" in cmdline:
                workers[pid] = cmdline
    return workers


def _cmdline(pid: int) -> str:
    """The command line of process ``pid``, empty once it is gone."""
    try:
        with open(f"/proc/{pid}/cmdline", "rb") as f:
            return f.read().replace(b"\0", b" ").decode(errors="replace")
    except OSError:
        return ""


@needs_root
def test_a_full_switch_buffer_drops_and_the_drops_are_counted():
    """Two hosts of one switch send at once to the other switch through an uplink of one host
    rate with a buffer of 3 frames: the uplink's queue overflows (TCP's window outgrows it),
    and queue_drops counts it there, by resource, the pair under one name."""
    net = build_topology("hierarchical:d1=2,d2=2,c1=1MB/s,c2=1MB/s,shared_uplinks=true,buffer=3")
    with Emulation(net, PREFIX) as emu:
        assert set(queue_drops(emu).values()) == {0}
        concurrent_flows(emu, [("h1.1", "h2.1"), ("h1.2", "h2.2")], 1_500_000)
        drops = queue_drops(emu)
    assert list(drops) == net.resources
    assert drops["e1>root|root>e1"] > 0


def test_a_signal_waits_for_the_namespace_command_it_lands_in():
    """Ctrl-C during an ``ip`` command is held until the command ends (a command killed half-way
    can leave half a namespace), and then delivered."""
    from liquidsched.emulate.namespaces import _signals_held

    finished = []
    with pytest.raises(KeyboardInterrupt):
        with _signals_held():
            os.kill(os.getpid(), signal.SIGINT)
            time.sleep(0.05)
            finished.append(True)
    assert finished == [True]

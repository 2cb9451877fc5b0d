"""Emulated networks: their routes follow the model, and nothing they create outlives them.

The tests that build namespaces need root and iproute2; CI runs them as root.
"""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
import sys

import pytest

from liquidsched import TopologyError, build_topology, plan
from liquidsched.emulate import (Emulation, arrivals, down, existing, fastest_window, link_counters, plan_emulation,
                                 send_bytes, single_flow_check, wait_for)
from liquidsched.execute import MODES, run_exchange
from liquidsched.traffic import all_to_all, half_all_to_all

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


def test_shared_duplex_and_bad_prefixes_are_refused():
    with pytest.raises(TopologyError, match="shared-duplex"):
        plan_emulation(build_topology("hierarchical:d1=2,d2=2,shared_uplinks=true"))
    with pytest.raises(Exception, match="prefix"):
        plan_emulation(build_topology("two-switch"), "Bad-Prefix")


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
def test_down_removes_everything_and_a_single_flow_reaches_its_rate():
    net = build_topology("two-switch:capacity_Bps=100Mbit/s")
    emu = plan_emulation(net, PREFIX)
    with Emulation(net, PREFIX):
        assert len(existing(PREFIX)) == len(net.nodes)
        check = single_flow_check(emu, "t1", "r5", seconds=0.5)
        # The capacity is a payload rate: a flow reaches it, and not more than one burst beyond.
        assert 0.9 < check["ratio"] < 1.03, check
        # A host's TCP queues at most half its link's queue (250 kB at 100 Mbit/s) below it.
        share = subprocess.run(["ip", "netns", "exec", emu.namespace["t1"], "cat",
                                "/proc/sys/net/ipv4/tcp_limit_output_bytes"], capture_output=True, text=True)
        assert int(share.stdout) == 125_000
    assert existing(PREFIX) == []
    assert down(PREFIX) == 0


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
        long = arrivals(emu, "h1", "h2", int(capacity * 0.2))
    after_first = sum(b for _, b in short[1:])
    assert after_first / (short[-1][0] - short[0][0]) <= (1 + RATE_TOLERANCE) * capacity
    fastest = fastest_window(long, 0.01)
    assert 0.9 * capacity < fastest <= (1 + RATE_TOLERANCE) * capacity, fastest / capacity
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
def test_a_run_killed_by_sigterm_leaves_nothing(tmp_path):
    cmd = [sys.executable, "-m", "liquidsched.cli", "run", "--topology", "two-switch:capacity_Bps=10Mbit/s",
           "--algorithm", "round-robin", "--emulate", "--prefix", PREFIX, "--repeats", "50"]
    proc = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    try:
        assert wait_for(lambda: len(existing(PREFIX)) == 12, 30), "the emulated network did not come up"
        assert wait_for(lambda: _workers_running(PREFIX), 30), "the ranks did not start"
        proc.send_signal(signal.SIGTERM)
        proc.wait(timeout=60)
    finally:
        if proc.poll() is None:
            proc.kill()
            down(PREFIX)
    assert proc.returncode != 0
    assert existing(PREFIX) == []
    assert not _workers_running(PREFIX)


def _workers_running(prefix: str) -> bool:
    out = subprocess.run(["pgrep", "-f", "liquidsched.execute.worker"], capture_output=True, text=True).stdout
    return bool(out.strip())

"""What the emulated network models beyond the network: the switches' buffer regimes, the time
scale and the hosts' TCP settings. The queues are checked against numbers worked by hand from the
switch classes; the tests that build namespaces (root, iproute2) check what ``tc`` and the
namespaces' sysctls hold, not throughput, except one loose rate and one count of drops.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import subprocess
import sys

import pytest

from liquidsched import InputError, build_topology
from liquidsched.cli.emulation import add_emulation_options, emulated_hosts
from liquidsched.emulate import (SWITCH_CLASSES, Emulation, build_commands, concurrent_flows, existing, host_sysctls,
                                 link_queue_bytes, load_state, plan_emulation, queue_drops, single_flow_check,
                                 time_scale_of)
from liquidsched.emulate import namespaces as namespaces_module
from liquidsched.network import Link, Network, Node

needs_root = pytest.mark.skipif(os.geteuid() != 0 or shutil.which("ip") is None or shutil.which("tc") is None,
                                reason="needs root and iproute2")
PREFIX = "lsa"
#: 100 Mbit/s, in payload bytes/s, and on the wire (1514-byte frames carrying 1448 bytes).
RATE_Bps = 12.5e6
WIRE_Bps = RATE_Bps * 1514 / 1448  # 13,069,751.4 B/s
#: The buffer per port over one port's bandwidth-delay product at 100 µs, by hand.
DEEP_MULTIPLE = (4e9 / 6) / (100e9 / 8 * 100e-6)   # Jericho: 666.7 MB / 1.25 MB = 533.3
SHALLOW_MULTIPLE = (12e6 / 32) / (40e9 / 8 * 100e-6)  # Trident II: 375 kB / 500 kB = 0.75
#: The emulated network's base round trip on this machine, and the tbf burst at 100 Mbit/s (0.4 ms).
BASE_RTT_S = 50e-6
BURST = int(WIRE_Bps * 0.0004)  # 5,227 bytes


def test_the_regimes_are_the_multiples_of_their_switch_classes():
    assert DEEP_MULTIPLE == pytest.approx(533.333, abs=1e-3) and SHALLOW_MULTIPLE == pytest.approx(0.75)
    assert SWITCH_CLASSES["deep"].bdp_multiple == pytest.approx(DEEP_MULTIPLE)
    assert SWITCH_CLASSES["shallow"].bdp_multiple == pytest.approx(SHALLOW_MULTIPLE)
    assert "Jericho" in SWITCH_CLASSES["deep"].name and "Trident" in SWITCH_CLASSES["shallow"].name


def test_switch_queues_of_both_regimes_match_the_hand_worked_numbers():
    net = build_topology("crossbar:n=8,capacity_Bps=100Mbit/s")
    deep, shallow = plan_emulation(net, PREFIX), plan_emulation(net, PREFIX, buffers="shallow")
    assert deep.base_rtt_s == shallow.base_rtt_s == BASE_RTT_S
    # Deep: 533.3 × 13,069,751 B/s × 50 µs = 348,526 bytes, 27 ms of traffic (20 ms before regimes).
    assert int(DEEP_MULTIPLE * WIRE_Bps * BASE_RTT_S) == 348_526
    assert link_queue_bytes(deep, "x>h8") == 348_526
    # Shallow: 0.75 × the same = 490 bytes, less than a frame: the burst, 5,227 bytes, sets it.
    assert int(SHALLOW_MULTIPLE * WIRE_Bps * BASE_RTT_S) == 490 and BURST == 5_227
    assert link_queue_bytes(shallow, "x>h8") == BURST
    # Links leaving hosts keep a host's queue, 20 ms of traffic, in both regimes.
    assert link_queue_bytes(deep, "h1>x") == link_queue_bytes(shallow, "h1>x") == 250_000
    # At 1 Gbit/s: ten times the deep queue; the shallow one is still the burst (0.4 ms).
    fast = build_topology("crossbar:n=2,capacity_Bps=1Gbit/s")
    assert link_queue_bytes(plan_emulation(fast, PREFIX), "x>h2") == int(DEEP_MULTIPLE * WIRE_Bps * 10 * BASE_RTT_S)
    assert link_queue_bytes(plan_emulation(fast, PREFIX, buffers="shallow"), "x>h2") == int(WIRE_Bps * 10 * 0.0004)


def _with_latency(latency_s: float) -> Network:
    """Hosts a and b on switch s, every link at 100 Mbit/s with ``latency_s``."""
    links = [Link(f"{u}>{v}", u, v, RATE_Bps, latency_s) for u, v in (("a", "s"), ("s", "a"), ("b", "s"), ("s", "b"))]
    return Network([Node("a"), Node("b"), Node("s", "switch")], links)


def test_the_regime_is_a_multiple_of_the_round_trip_so_latencies_deepen_it():
    # Round trip: 50 µs of the machine's plus twice the route's 2 × 1 ms = 4.05 ms.
    p = plan_emulation(_with_latency(0.001), PREFIX, buffers="shallow")
    assert p.base_rtt_s == pytest.approx(0.00405)
    assert link_queue_bytes(p, "s>b") == int(SHALLOW_MULTIPLE * WIRE_Bps * 0.00405) == 39_699
    # At time scale 2 the latencies double (8.05 ms) and the rate halves: the same bytes, but for
    # the machine's 50 µs, which do not slow down.
    q = plan_emulation(_with_latency(0.001), PREFIX, buffers="shallow", time_scale=2)
    assert q.base_rtt_s == pytest.approx(0.00805)
    assert link_queue_bytes(q, "s>b") == int(SHALLOW_MULTIPLE * WIRE_Bps / 2 * 0.00805) == 39_454


def test_a_links_own_buffer_wins_over_the_regime_and_set_queues_win_over_both():
    net = build_topology("hierarchical:d1=2,d2=2,c1=1.25MB/s,c2=2.5MB/s,buffer=30")
    for buffers in ("deep", "shallow"):
        p = plan_emulation(net, PREFIX, buffers=buffers)
        assert link_queue_bytes(p, "root>e1") == 30 * 1514  # the uplink's declared 30 frames
    # Set directly, every link's queue is that, hosts' and declared buffers alike ...
    p = plan_emulation(net, PREFIX, buffers="shallow", queue_packets=100)
    assert {link_queue_bytes(p, lid) for lid in net.links} == {151_400}
    p = plan_emulation(net, PREFIX, queue_bytes=200_000)
    assert {link_queue_bytes(p, lid) for lid in net.links} == {200_000}
    # ... but never less than the burst, so that GSO segments pass.
    p = plan_emulation(net, PREFIX, queue_bytes=1000)
    assert link_queue_bytes(p, "root>e1") == 4542 and link_queue_bytes(p, "h1.1>e1") == 4542
    # A shared-duplex cable's one shaper: the smaller queue of its directions (host 20 ms, switch burst).
    shared = Network([Node("h"), Node("s", "switch"), Node("g")],
                     [Link("s>h", "s", "h", RATE_Bps), Link("h>s", "h", "s", RATE_Bps), Link("s>g", "s", "g", RATE_Bps),
                      Link("g>s", "g", "s", RATE_Bps)], shared_duplex=[("s>h", "h>s")])
    assert link_queue_bytes(plan_emulation(shared, PREFIX, buffers="shallow"), "h>s") == BURST
    assert link_queue_bytes(plan_emulation(shared, PREFIX), "h>s") == 250_000


def _tc_lines(plan) -> list[str]:
    return [line for cmd, stdin in build_commands(plan) if cmd[0] == "tc" for line in (stdin or "").splitlines()]


def test_tc_command_lines_carry_the_regime_and_the_time_scale():
    net = build_topology("crossbar:n=3,capacity_Bps=100Mbit/s")
    p = plan_emulation(net, PREFIX, buffers="shallow")
    ns, iface = p.egress("x>h3")
    line = f"qdisc add dev {iface} root handle 1: tbf rate 104558011bit burst {BURST} limit {BURST}"
    assert line in _tc_lines(p)
    assert any(cmd[:3] == ["tc", "-n", ns] and line in (stdin or "") for cmd, stdin in build_commands(p))
    deep = plan_emulation(net, PREFIX)
    assert f"qdisc add dev {iface} root handle 1: tbf rate 104558011bit burst {BURST} limit 348526" in _tc_lines(deep)
    # Time scale 2: half the rate, the deep queue half as many bytes (the machine's round trip is
    # not slowed), the hosts' queues unchanged; the burst is the shaped rate's (at least 3 frames).
    half = plan_emulation(net, PREFIX, time_scale=2)
    assert (f"qdisc add dev {iface} root handle 1: tbf rate 52279005bit burst 4542 limit "
            f"{int(DEEP_MULTIPLE * WIRE_Bps / 2 * BASE_RTT_S)}") in _tc_lines(half)
    assert any(l.endswith("limit 250000") for l in _tc_lines(half))


def _rates_bit(plan) -> list[int]:
    """The tbf rates, in the order the commands set them."""
    return [int(m.group(1)) for line in _tc_lines(plan) if (m := re.search(r"tbf rate (\d+)bit", line))]


def _delays_us(plan) -> list[int]:
    return [int(m.group(1)) for l in _tc_lines(plan) if (m := re.search(r"netem delay (\d+)us", l))]


@pytest.mark.parametrize("time_scale", [2, 3])
def test_the_time_scale_divides_every_rate_and_multiplies_every_latency(time_scale):
    net = _with_latency(0.001)
    one, scaled = plan_emulation(net, PREFIX), plan_emulation(net, PREFIX, time_scale=time_scale)
    base, slow = _rates_bit(one), _rates_bit(scaled)
    assert len(base) == len(slow) == 4
    for rate, scaled_rate in zip(base, slow):
        assert abs(scaled_rate - rate / time_scale) <= 1, (rate, scaled_rate)
    assert _delays_us(one) == [1000] * 4 and _delays_us(scaled) == [1000 * time_scale] * 4
    # The plan, its namespaces and the emulation say the scale.
    assert scaled.time_scale == scaled.namespace.time_scale == time_scale_of(scaled.namespace) == time_scale
    assert Emulation(net, PREFIX, time_scale=time_scale).time_scale == time_scale
    assert scaled.emulated_capacity_Bps("a>s") == RATE_Bps / time_scale
    assert scaled.emulated_latency_s("a>s") == pytest.approx(0.001 * time_scale)


def test_the_state_file_records_the_settings(tmp_path, monkeypatch):
    monkeypatch.setattr(namespaces_module, "STATE_DIR", tmp_path)
    net = build_topology("two-switch")
    plan = plan_emulation(net, PREFIX, buffers="shallow", time_scale=2.5, tcp="default", queue_packets=40)
    namespaces_module._save_state(plan)
    back = load_state(PREFIX)
    assert back.settings() == {"buffers": "shallow", "time_scale": 2.5, "tcp": "default", "queue_bytes": None,
                               "queue_packets": 40}
    assert back.namespace.time_scale == 2.5 and back.network == net
    # A state file from before the settings: the defaults of that time.
    doc = json.loads((tmp_path / f"{PREFIX}.json").read_text())
    for key in ("buffers", "time_scale", "tcp", "queue_bytes", "queue_packets"):
        del doc[key]
    (tmp_path / f"{PREFIX}.json").write_text(json.dumps(doc))
    assert load_state(PREFIX).settings() == {"buffers": "deep", "time_scale": 1.0, "tcp": "tuned",
                                             "queue_bytes": None, "queue_packets": None}


@pytest.mark.parametrize("settings, match", [
    ({"time_scale": 0.5}, "time scale 0.5"), ({"time_scale": float("nan")}, "time scale"),
    ({"time_scale": float("inf")}, "time scale"), ({"time_scale": "fast"}, "time scale"),
    ({"buffers": "medium"}, "buffer regime 'medium'"), ({"tcp": "fast"}, "TCP setting"),
    ({"queue_bytes": 0}, "queue_bytes"), ({"queue_packets": 2.5}, "queue_packets"),
    ({"queue_bytes": 10_000, "queue_packets": 10}, "give one"),
])
def test_bad_settings_are_refused(settings, match):
    with pytest.raises(InputError, match=match):
        plan_emulation(build_topology("two-switch"), PREFIX, **settings)


def test_tuned_tcp_settings_and_the_kernels_defaults():
    net = build_topology("two-switch:capacity_Bps=100Mbit/s")
    tuned = host_sysctls(plan_emulation(net, PREFIX), "t1")
    assert tuned == {"net/ipv4/tcp_limit_output_bytes": "125000", "net/ipv4/tcp_slow_start_after_idle": "0",
                     "net/ipv4/tcp_rmem": "4096 131072 33554432", "net/ipv4/tcp_wmem": "4096 65536 33554432"}
    assert host_sysctls(plan_emulation(net, PREFIX, tcp="default"), "t1") == {
        "net/ipv4/tcp_limit_output_bytes": "125000"}
    # Buffers grow past 32 MiB where a link's bandwidth-delay product and queue need it: 1 s of
    # latency each way at 100 Mbit/s.
    window = int(host_sysctls(plan_emulation(_with_latency(1.0), PREFIX), "a")["net/ipv4/tcp_rmem"].split()[2])
    assert window > 2 * WIRE_Bps * 4.0
    # Written into the host namespaces, quoted; switches get none.
    scripts = {cmd[3]: cmd[-1] for cmd, _ in build_commands(plan_emulation(net, PREFIX))
               if cmd[:3] == ["ip", "netns", "exec"]}
    p = plan_emulation(net, PREFIX)
    assert "echo '4096 131072 33554432' > /proc/sys/net/ipv4/tcp_rmem" in scripts[p.namespace["t1"]]
    assert "tcp_slow_start_after_idle" not in scripts[p.namespace["a"]]  # switch a


def _parse(argv: list[str]) -> argparse.Namespace:
    p = argparse.ArgumentParser(prog="liquidsched")
    add_emulation_options(p)
    return p.parse_args(argv)


def test_the_options_parse_and_a_bad_time_scale_is_one_line():
    args = _parse(["--buffers", "shallow", "--time-scale", "3", "--tcp", "default", "--queue-packets", "20"])
    assert (args.buffers, args.time_scale, args.tcp, args.queue_packets, args.queue_bytes) == (
        "shallow", 3.0, "default", 20, None)
    assert vars(_parse([])) == {"buffers": None, "time_scale": None, "tcp": None, "queue_bytes": None,
                                "queue_packets": None}
    for bad in ("0.5", "abc", "inf", "0"):
        done = subprocess.run([sys.executable, "-m", "liquidsched.cli", "netem", "up", "--topology", "two-switch",
                               "--prefix", PREFIX, "--time-scale", bad], capture_output=True, text=True)
        assert done.returncode == 2 and done.stdout == ""
        assert done.stderr.splitlines() == [f"liquidsched: error: --time-scale {bad}: expected a number of at least 1 "
                                            "(every link runs that many times slower)"]


def test_emulated_hosts_yields_the_time_scale_of_a_network_already_up(monkeypatch):
    import liquidsched.emulate.namespaces as namespaces_module

    net = build_topology("two-switch")

    monkeypatch.setattr(namespaces_module, "load_state",
                        lambda prefix: plan_emulation(net, prefix, time_scale=2, buffers="shallow"))
    args = _parse([])
    with emulated_hosts(net, False, PREFIX, args) as namespaces:
        assert time_scale_of(namespaces) == namespaces.time_scale == 2.0
        assert namespaces["t1"] == f"{PREFIX}-n2"
        # written back, so that the run's arguments say what the ranks run on
        assert (args.time_scale, args.buffers) == (2.0, "shallow")
    with emulated_hosts(net, False, PREFIX, time_scale=2, buffers="shallow") as namespaces:
        assert namespaces.time_scale == 2.0
    with pytest.raises(InputError, match="--time-scale 3: the emulated network 'lsa' was built with --time-scale 2 "):
        with emulated_hosts(net, False, PREFIX, _parse(["--time-scale", "3"])):
            pass
    with pytest.raises(InputError, match="--queue-packets 10: .* built with --queue-packets \\(not set\\)"):
        with emulated_hosts(net, False, PREFIX, queue_packets=10):
            pass
    with emulated_hosts(net, False, None) as namespaces:
        assert namespaces is None and time_scale_of(namespaces) == 1.0


def _qdisc(ns: str, dev: str) -> dict:
    data = json.loads(subprocess.run(["tc", "-n", ns, "-j", "qdisc", "show", "dev", dev], capture_output=True,
                                     text=True, check=True).stdout)
    return next(q for q in data if q["kind"] == "tbf")


def _sysctl(ns: str, key: str) -> str:
    return subprocess.run(["ip", "netns", "exec", ns, "cat", f"/proc/sys/{key}"], capture_output=True, text=True,
                          check=True).stdout.split()


def _lsa_namespaces() -> list[str]:
    out = subprocess.run(["ip", "netns", "list"], capture_output=True, text=True).stdout
    return [line for line in out.splitlines() if line.startswith(f"{PREFIX}-")]


@needs_root
@pytest.mark.parametrize("buffers, time_scale, tcp", [("deep", 1, "tuned"), ("shallow", 2, "tuned"),
                                                      ("shallow", 3, "default")])
def test_a_built_network_holds_its_regimes_queues_rates_and_tcp_settings(buffers, time_scale, tcp):
    net = build_topology("crossbar:n=3,capacity_Bps=100Mbit/s")
    with Emulation(net, PREFIX, buffers=buffers, time_scale=time_scale, tcp=tcp) as emu:
        for lid, expected in (("x>h3", link_queue_bytes(emu, "x>h3")), ("h1>x", 250_000)):
            q = _qdisc(*emu.shaper(lid))["options"]
            # tc reports the rate on the wire in bytes/s, and the queue as the time it adds to the burst.
            assert q["rate"] == int(WIRE_Bps / time_scale), (lid, q)
            limit = q["lat"] * 1e-6 * q["rate"] + (int(q["burst"]) if isinstance(q["burst"], int) else 0)
            assert abs(limit - expected) < max(100, 0.01 * expected), (lid, q, expected)
        if buffers == "shallow":
            assert _qdisc(*emu.shaper("x>h3"))["options"]["lat"] == 0  # the queue is the burst
        else:
            assert link_queue_bytes(emu, "x>h3") == 348_526
        host = emu.namespace["h1"]
        assert _sysctl(host, "net/ipv4/tcp_limit_output_bytes") == ["125000"]
        if tcp == "tuned":
            assert _sysctl(host, "net/ipv4/tcp_slow_start_after_idle") == ["0"]
            assert _sysctl(host, "net/ipv4/tcp_rmem") == ["4096", "131072", "33554432"]
            assert _sysctl(host, "net/ipv4/tcp_wmem") == ["4096", "65536", "33554432"]
        else:
            assert _sysctl(host, "net/ipv4/tcp_slow_start_after_idle") == ["1"]
        assert len(_lsa_namespaces()) == 4
    assert _lsa_namespaces() == [] and existing(PREFIX) == []


@needs_root
def test_a_single_flow_is_checked_against_the_scaled_rate():
    net = build_topology("crossbar:n=2,capacity_Bps=100Mbit/s")
    with Emulation(net, PREFIX, time_scale=4) as emu:
        check = single_flow_check(emu, "h1", "h2", seconds=0.5)
    assert check["capacity_Bps"] == RATE_Bps / 4 and check["modelled_capacity_Bps"] == RATE_Bps
    assert check["time_scale"] == 4
    # Loose: the flow is measured against a quarter of the capacity, so it cannot reach twice that.
    assert 0.3 < check["ratio"] < 1.5, check
    assert _lsa_namespaces() == []


@needs_root
def test_seven_senders_into_one_host_overflow_a_shallow_switch():
    """Incast: seven hosts send at once to an eighth through one 100 Mbit/s switch port. Its
    shallow queue (the burst, 3.5 frames) overflows, as on a commodity switch."""
    net = build_topology("crossbar:n=8,capacity_Bps=100Mbit/s")
    with Emulation(net, PREFIX, buffers="shallow") as emu:
        assert queue_drops(emu)["x>h8"] == 0
        concurrent_flows(emu, [(f"h{i}", "h8") for i in range(1, 8)], 300_000)
        drops = queue_drops(emu)
    assert drops["x>h8"] > 0, drops
    assert _lsa_namespaces() == []

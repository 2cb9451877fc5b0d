"""SimGrid platform files, and the fluid model against SimGrid's CM02 model on random cases; the
layout of SimGrid's answers on platforms made up without SimGrid; liquidsched's own parser of
Full zones and lone clusters."""

from __future__ import annotations

import json
import os
import random
from fractions import Fraction
from pathlib import Path

import pytest

from liquidsched import (TopologyError, build_topology, compute_bound, load_topology, plan,
                         save_topology)
from liquidsched.cli import main
from liquidsched.errors import BackendError, TrafficError
from liquidsched.simgrid import read_platform
from liquidsched.simgrid.platform_file import network_from_platform, parse_bandwidth, parse_latency, platform_xml
from liquidsched.simgrid.reading import PlatformHints, SimgridLink, SimgridPlatform, network_from_simgrid
from liquidsched.simgrid.values import free_capacity
from liquidsched.simulate import simulate
from liquidsched.simgrid.backend import SIMGRID_POLICIES
from liquidsched.simgrid import install as simgrid_install
from liquidsched.traffic import Traffic, Transfer, all_to_all, random_matrix

from .test_topology_files import SMALL

#: SimGrid platform files of every style (read by tests/test_simgrid_platforms.py, and here by
#: liquidsched's own parser).
DATA = Path(__file__).parent / "data" / "simgrid"

needs_simgrid = pytest.mark.skipif(
    not simgrid_install.simgrid_available() and not os.environ.get("CI"),
    reason="SimGrid is not installed (CI installs python3-simgrid and runs these)")


def same_network(a, b) -> None:
    """Equal hosts, switches, links, shared-duplex pairs and routes (declaration order aside)."""
    assert {n.id: (n.kind, n.role) for n in a.nodes.values()} == {n.id: (n.kind, n.role) for n in b.nodes.values()}
    assert set(a.links.values()) == set(b.links.values())
    assert {frozenset(p) for p in a.shared_duplex} == {frozenset(p) for p in b.shared_duplex}
    assert a.senders() and sorted(a.senders()) == sorted(b.senders())
    assert all(a.route(s, d) == b.route(s, d) for s in a.senders() for d in a.receivers())


# -- platform files ------------------------------------------------------------------------------


@pytest.mark.parametrize("spec", SMALL.values())
def test_platform_round_trip_keeps_links_capacities_and_routes(spec, tmp_path):
    net = build_topology(spec)
    path = tmp_path / "net.xml"
    save_topology(net, path)
    back = load_topology(path)
    same_network(net, back)
    assert back.name == net.name and back.description == net.description


def test_platform_maps_each_link_kind_to_its_sharing_policy():
    net = build_topology("random:switches=4,hosts=6,seed=5")
    text = platform_xml(net)
    assert net.shared_duplex
    for a, b in net.shared_duplex:
        assert f'<link id="{a}|{b}"'.replace(">", "&gt;") in text
    assert 'sharing_policy="SPLITDUPLEX"' in text and 'sharing_policy="SHARED"' in text
    assert '<prop id="network/model" value="CM02" />' in text


HAND_WRITTEN = """<?xml version='1.0'?>
<!DOCTYPE platform SYSTEM "https://simgrid.org/simgrid.dtd">
<platform version="4.1">
  <zone id="lab" routing="Full">
    <host id="a" speed="1Gf"/>
    <host id="b" speed="1Gf"/>
    <host id="c" speed="1Gf"/>
    <router id="sw"/>
    <link id="la" bandwidth="1Gbps" latency="50us" sharing_policy="SPLITDUPLEX"/>
    <link id="lb" bandwidth="125MBps" latency="50us" sharing_policy="SPLITDUPLEX"/>
    <link id="lc" bandwidth="62.5MBps" latency="0.1ms"/>
    <route src="a" dst="b"><link_ctn id="la" direction="UP"/><link_ctn id="lb" direction="DOWN"/></route>
    <route src="a" dst="c"><link_ctn id="la" direction="UP"/><link_ctn id="lc"/></route>
    <route src="b" dst="c"><link_ctn id="lb" direction="UP"/><link_ctn id="lc"/></route>
  </zone>
</platform>
"""


def test_hand_written_platform_infers_link_ends_from_symmetrical_routes():
    net = network_from_platform(HAND_WRITTEN, "lab.xml")
    # The routes are symmetrical by default: the reverse routes exist and cross the other
    # direction of the split-duplex links, and the shared link lc both ways.
    assert net.route("b", "a") == ("lb_UP", "la_DOWN")
    assert net.route("c", "b") == ("lc_DOWN", "lb_DOWN")
    assert ["lc_UP", "lc_DOWN"] in [list(p) for p in net.shared_duplex]
    # Both directions of la go between a and one inferred node: the router of the file.
    assert net.links["la_UP"].src == "a" and net.links["la_DOWN"].dst == "a"
    hub = net.links["la_UP"].dst
    assert {net.links[l].dst for l in ("la_UP", "lb_UP")} == {hub} and net.is_switch(hub)
    assert net.links["la_UP"].capacity_Bps == 125e6 and net.links["lc_UP"].capacity_Bps == 62.5e6
    assert net.links["la_UP"].latency_s == pytest.approx(50e-6)
    # Self routes are not in the file: they go through the host's switch, as everywhere else.
    assert net.route("a", "a") == ("la_UP", "la_DOWN")


@pytest.mark.parametrize("text, unit", [("1Gbps", 125e6), ("125MBps", 125e6), ("1KiBps", 1024.0), ("800", 800.0)])
def test_bandwidth_units(text, unit):
    assert parse_bandwidth(text) == pytest.approx(unit)


def test_latency_units():
    assert parse_latency("1.5ms") == pytest.approx(1.5e-3)
    assert parse_latency("2") == 2.0


def replace(old: str, new: str) -> str:
    assert old in HAND_WRITTEN
    return HAND_WRITTEN.replace(old, new)


@pytest.mark.parametrize("text, message", [
    ("<platform", "not valid XML"),
    ("<zone id='x' routing='Full'/>", "expected a <platform> root element"),
    (replace('version="4.1"', 'version="3"'), "version '3' is not supported"),
    (replace('routing="Full"', 'routing="Floyd"'), "routing 'Floyd' is not supported"),
    (replace('<router id="sw"/>', '<cluster id="c1"/>'), "<cluster id='c1'> is not supported"),
    (replace('latency="0.1ms"/>', 'latency="0.1ms" sharing_policy="FATPIPE"/>'), "link 'lc': sharing_policy 'FATPIPE'"),
    (replace('bandwidth="1Gbps"', 'bandwidth="1Gbit"'), "link 'la': bandwidth: unknown unit 'Gbit'"),
    (replace('<link_ctn id="lb" direction="DOWN"/>', '<link_ctn id="lx"/>'), "route a → b: unknown link 'lx'"),
    (replace('<link_ctn id="lb" direction="DOWN"/>', '<link_ctn id="lb"/>'), "link 'lb' is SPLITDUPLEX"),
    (replace('<route src="a" dst="c">', '<route src="a" dst="nowhere">'), "'nowhere' is not a host or a router"),
])
def test_bad_platforms_name_the_problem(text, message):
    with pytest.raises(TopologyError, match=message) as info:
        network_from_platform(text, "lab.xml")
    assert str(info.value).startswith("lab.xml")


def test_a_platform_missing_a_route_between_a_sender_and_a_receiver_loads_and_refuses_that_traffic():
    text = replace('<route src="b" dst="c"><link_ctn id="lb" direction="UP"/><link_ctn id="lc"/></route>', "")
    net = network_from_platform(text, "lab.xml")
    # b and c have no route either way (the route was symmetrical); every other pair has one.
    assert set(net.missing_routes) == {("b", "c"), ("c", "b")}
    assert net.route("a", "c") == ("la_UP", "lc_UP") and net.route("c", "a") == ("lc_DOWN", "la_DOWN")
    compute_bound(net, Traffic([Transfer("a", "b", 10), Transfer("c", "a", 10)]))
    with pytest.raises(TrafficError, match=r"^transfers\[1\] \(b->c\): routing.paths: no path from b to c$"):
        compute_bound(net, Traffic([Transfer("a", "b", 10), Transfer("b", "c", 10)]))


# -- agreement with SimGrid ------------------------------------------------------------------------


def random_case(seed: int):
    """A random topology with shared-duplex cables, split-duplex cables and lone links, mixed
    capacities and latencies, and a random flow set with a schedule to start it by."""
    rng = random.Random(seed)
    net = build_topology(f"random:switches={rng.randint(2, 6)},hosts={rng.randint(3, 8)},"
                         f"extra_cables={rng.randint(0, 3)},seed={seed}")
    traffic = random_matrix(net, seed=seed, density=rng.choice([0.3, 0.6, 1.0]), min_bytes=1, max_bytes=2_000_000)
    algorithm = rng.choice(["dsatur", "round-robin", "random"])
    policy = SIMGRID_POLICIES[seed % len(SIMGRID_POLICIES)]
    overhead = rng.choice([0.0, 1e-4]) if policy == "frames" else 0.0
    return plan(net, traffic, algorithm), policy, overhead


@needs_simgrid
@pytest.mark.parametrize("seed", range(60))
def test_fluid_model_agrees_with_simgrid_cm02(seed):
    schedule, policy, overhead = random_case(seed)
    text = platform_xml(schedule.network)
    assert 'sharing_policy="SPLITDUPLEX"' in text and schedule.network.shared_duplex
    ours = simulate(schedule, "fluid", policy, overhead)
    theirs = simulate(schedule, "fluid", policy, overhead, backend="simgrid")
    assert ours.makespan_s == pytest.approx(theirs.makespan_s, rel=1e-6)
    worst = max(abs(a - b) for a, b in zip(ours.finish_s, theirs.finish_s))
    assert worst <= 1e-6 * ours.makespan_s


def cable_to_itself():
    """Host a on a shared-duplex cable whose route to itself goes out and back through the switch
    (a pair that a's other routes cross too, so no loopback), host b on two directed links."""
    from liquidsched.network import Link, Network, Node

    return Network([Node("a"), Node("b"), Node("s", "switch")],
                   [Link("a>s", "a", "s", 1e8), Link("s>a", "s", "a", 1e8),
                    Link("b>s", "b", "s", 2e8), Link("s>b", "s", "b", 2e8)], shared_duplex=[("a>s", "s>a")])


def test_a_route_out_and_back_over_a_shared_cable_lists_it_once_and_reads_back():
    net = cable_to_itself()
    assert net.route("a", "a") == ("a>s", "s>a")
    text = platform_xml(net)
    assert text.count('<link_ctn id="a&gt;s|s&gt;a" />') == 3  # a to itself, to b, from b
    same_network(net, network_from_platform(text))


@needs_simgrid
def test_simgrid_counts_a_shared_cable_crossed_out_and_back_once_as_the_fluid_model():
    from liquidsched.traffic import Traffic, Transfer

    net = cable_to_itself()
    traffic = Traffic([Transfer("a", "a", 10_000_000), Transfer("a", "b", 10_000_000), Transfer("b", "a", 5_000_000)])
    schedule = plan(net, traffic, "round-robin")
    ours = simulate(schedule, "fluid", "all-at-once")
    theirs = simulate(schedule, "fluid", "all-at-once", backend="simgrid")
    # The cable (100 MB/s) carries 25 MB: a's transfer to itself crosses it once, not twice.
    assert ours.makespan_s == pytest.approx(0.25, rel=1e-9)
    assert max(abs(x - y) for x, y in zip(ours.finish_s, theirs.finish_s)) <= 1e-9 * ours.makespan_s


@needs_simgrid
def test_simulate_cli_with_the_simgrid_backend(capsys):
    argv = ["simulate", "--topology", "two-switch", "--algorithm", "round-robin", "--policy", "per-sender", "--json"]
    assert main(argv + ["--backend", "simgrid"]) == 0
    theirs = json.loads(capsys.readouterr().out)
    assert main(argv) == 0
    ours = json.loads(capsys.readouterr().out)
    assert theirs["backend"] == "simgrid" and ours["backend"] == "rust"
    assert theirs["makespan_s"] == pytest.approx(ours["makespan_s"], rel=1e-9)


def test_simgrid_backend_only_for_the_fluid_model(two_switch_net):
    from liquidsched import half_all_to_all

    rr = plan(two_switch_net, half_all_to_all(two_switch_net), "round-robin")
    with pytest.raises(Exception, match="fluid model, not circuit"):
        simulate(rr, "circuit", backend="simgrid")
    assert main(["simulate", "--topology", "two-switch", "--algorithm", "round-robin", "--backend", "simgrid",
                 "--plot", "x.png"]) == 2


def test_missing_simgrid_is_a_clear_error(two_switch_net, monkeypatch):
    from liquidsched import half_all_to_all

    monkeypatch.setenv("LIQUIDSCHED_SIMGRID_PYTHON", "/nonexistent/python3")
    simgrid_install.simgrid_python.cache_clear()
    try:
        rr = plan(two_switch_net, half_all_to_all(two_switch_net), "round-robin")
        with pytest.raises(BackendError, match="apt-get install python3-simgrid"):
            simulate(rr, "fluid", backend="simgrid")
    finally:
        simgrid_install.simgrid_python.cache_clear()


# -- the incremental fluid engine against SimGrid -------------------------------------------------


def core_finish_times(schedule, policy: str, overhead: float, engine: str) -> list[float]:
    """The core's fluid finish times with a chosen engine, on the flows ``simulate`` would give it."""
    from liquidsched import _core
    from liquidsched.simulate import flows_of, whole_transfers

    if policy == "all-at-once":
        schedule = whole_transfers(schedule)
    net, f = schedule.network, flows_of(schedule)
    return _core.simulate(list(net.resource_capacity), f.paths, f.sizes, f.latencies, f.senders, f.frames, "fluid",
                          policy, overhead, slots=net.resource_slots, receivers=f.receivers, engine=engine)["finish_s"]


@needs_simgrid
@pytest.mark.parametrize("seed", range(0, 60, 3))
def test_incremental_engine_agrees_with_simgrid_cm02(seed):
    """The agreement test's cases have few flows, which the default engine simulates from scratch:
    the incremental engine, forced, agrees with SimGrid as closely."""
    schedule, policy, overhead = random_case(seed)
    theirs = simulate(schedule, "fluid", policy, overhead, backend="simgrid")
    ours = core_finish_times(schedule, policy, overhead, "incremental")
    assert max(abs(a - b) for a, b in zip(ours, theirs.finish_s)) <= 1e-6 * max(ours)


@needs_simgrid
@pytest.mark.parametrize("policy", SIMGRID_POLICIES)
def test_fluid_model_agrees_with_simgrid_on_hundreds_of_flows(policy):
    """A random network (mixed capacities and latencies, shared-duplex cables) with 380 flows of
    random sizes: long cascades of rate changes at every event, in both simulators."""
    net = build_topology("random:switches=6,hosts=20,extra_cables=3,seed=7")
    schedule = plan(net, random_matrix(net, seed=7, min_bytes=1, max_bytes=20_000_000), "round-robin")
    theirs = simulate(schedule, "fluid", policy, backend="simgrid")
    for engine in ("auto", "incremental"):
        ours = core_finish_times(schedule, policy, 0.0, engine)
        assert max(abs(a - b) for a, b in zip(ours, theirs.finish_s)) <= 1e-6 * max(ours), engine


# -- the layout, on platforms made up without SimGrid ----------------------------------------------------


def made_up(hosts, links, routes, hints=None):
    """A network from a SimGrid answer written by hand: ``links`` as name -> (bandwidth,
    policy), ``routes`` as (src, dst) -> link names, latencies zero."""
    platform = SimgridPlatform(
        "3.x", tuple(hosts), {n: SimgridLink(n, bw, 0.0, policy) for n, (bw, policy) in links.items()},
        {pair: (tuple(names), 0.0) for pair, names in routes.items()})
    return network_from_simgrid(platform, hints or PlatformHints(), "made-up.xml")


def star(hosts, private, backbone=None):
    """Routes of a cluster: private link up, backbone, private link down (a host to itself too)."""
    routes = {}
    for s in hosts:
        for d in hosts:
            routes[(s, d)] = [private(s, "UP")] + ([backbone] if backbone else []) + [private(d, "DOWN")]
    return routes


def test_shared_private_links_around_a_shared_backbone_keep_one_resource_each():
    hosts = ["h0", "h1", "h2"]
    links = {f"p{k}": (100.0, "SHARED") for k in range(3)} | {"bb": (150.0, "SHARED")}
    routes = star(hosts, lambda h, _: f"p{h[1]}", "bb")
    for h in hosts:
        routes[(h, h)] = ["lo"]
    links["lo"] = (1000.0, "FATPIPE")
    net, sg = made_up(hosts, links, routes)
    # Each private link is one resource crossed both ways; the backbone is crossed one way by
    # every route; junctions join them (no node can be both sides of the backbone).
    for k in range(3):
        assert (f"p{k}_UP", f"p{k}_DOWN") in net.shared_duplex
    assert [sg[lid] for lid in net.route("h0", "h2") if sg[lid]] == ["p0", "bb", "p2"]
    assert len({net.link_resource[lid] for lid in net.route("h0", "h2")}) == 5
    assert net.route("h1", "h1") == ("lo@h1_UP", "lo@h1_DOWN")


def test_a_split_duplex_cable_and_a_shared_cable_lay_out_as_a_star():
    hosts = ["a", "b", "c"]
    links = {"la_UP": (10.0, "SHARED"), "la_DOWN": (10.0, "SHARED"), "lb": (20.0, "SHARED"), "lc": (30.0, "SHARED"),
             "__loopback__": (1e4, "FATPIPE")}
    names = {"a": ("la_UP", "la_DOWN"), "b": ("lb", "lb"), "c": ("lc", "lc")}
    routes = {(s, d): [names[s][0], names[d][1]] for s in hosts for d in hosts if s != d}
    routes |= {(h, h): ["__loopback__"] for h in hosts}
    net, sg = made_up(hosts, links, routes)
    assert len(net.switches()) == 1 + 3  # the hub, and a loopback node per host
    assert set(sg.values()) == set(links) and None not in sg.values()
    assert net.route("b", "c") == ("lb_UP", "lc_DOWN")


@pytest.mark.parametrize("change, message", [
    (lambda links, routes: links.update(lb=(20.0, "NONLINEAR")), "sharing policy NONLINEAR"),
    (lambda links, routes: routes.update({("a", "b"): ["la_UP", "lb", "lb"]}), "crosses a link twice"),
])
def test_what_simgrid_answers_but_liquidsched_cannot_model(change, message):
    # Three hosts on one switch; a sends to c and b receives from c, so a → b must have a route.
    hosts = ["a", "b", "c"]
    links = {"la_UP": (10.0, "SHARED"), "la_DOWN": (10.0, "SHARED"), "lb": (20.0, "SHARED"),
             "lc": (20.0, "SHARED"), "__loopback__": (1e4, "FATPIPE")}
    first, last = {"a": "la_UP", "b": "lb", "c": "lc"}, {"a": "la_DOWN", "b": "lb", "c": "lc"}
    routes = {(s, d): [first[s], last[d]] for s in hosts for d in hosts if s != d}
    routes |= {(h, h): ["__loopback__"] for h in hosts}
    change(links, routes)
    with pytest.raises(TopologyError, match=message) as info:
        made_up(hosts, links, routes)
    assert str(info.value).startswith("made-up.xml: ") and "\n" not in str(info.value)


def test_a_pair_simgrid_does_not_route_is_a_missing_route_of_the_network():
    hosts = ["a", "b", "c"]
    links = {"la": (10.0, "SHARED"), "lb": (20.0, "SHARED"), "lc": (20.0, "SHARED"), "__loopback__": (1e4, "FATPIPE")}
    routes = {(s, d): [f"l{s}", f"l{d}"] for s in hosts for d in hosts if s != d}
    routes |= {(h, h): ["__loopback__"] for h in hosts} | {("a", "b"): [], ("b", "a"): []}
    net, _ = made_up(hosts, links, routes)
    assert set(net.missing_routes) == {("a", "b"), ("b", "a")} and net.senders() == net.receivers() == hosts
    assert net.route("a", "c") == ("la_UP", "lc_DOWN")
    with pytest.raises(TopologyError, match="no path from b to a"):
        net.route("b", "a")


def test_latency_not_carried_by_links_is_refused():
    platform = SimgridPlatform("3.x", ("a", "b"), {"l": SimgridLink("l", 10.0, 1e-3, "SHARED"),
                                                   "lo": SimgridLink("lo", 10.0, 0.0, "FATPIPE")},
                               {("a", "b"): (("l",), 0.25), ("b", "a"): (("l",), 0.25),
                                ("a", "a"): (("lo",), 0.0), ("b", "b"): (("lo",), 0.0)})
    with pytest.raises(TopologyError, match="latency not carried by links"):
        network_from_simgrid(platform, PlatformHints(), "coords.xml")


def test_own_parser_reads_full_zones_when_asked(monkeypatch):
    monkeypatch.setenv("LIQUIDSCHED_PLATFORM_READER", "liquidsched")
    platform = read_platform(DATA / "full.xml")
    assert platform.read_by.startswith("read by liquidsched's own parser (as asked)")
    net = platform.network
    up, down = net.route("a", "b")
    assert up == "la_UP" and down.startswith("lb_") and net.links[down].dst == "b"
    assert net.routing.paths[("a", "a")] == ("a", "loopback@a", "a") and len(net.path_resources("a", "a")) == 1
    # Nested zones are SimGrid's reader's, and the refusal says how to get it.
    with pytest.raises(TopologyError, match=r"sites.xml: zone 'grid': routing 'Floyd' is not supported \(liquidsched's "
                                            r"own parser reads .*\); SimGrid's reader reads it \(apt-get install "
                                            r"python3-simgrid\)$"):
        read_platform(DATA / "sites.xml")


def test_without_simgrid_the_own_parser_reads_and_says_so(monkeypatch):
    monkeypatch.setenv("LIQUIDSCHED_SIMGRID_PYTHON", "/nonexistent/python3")
    simgrid_install.simgrid_python.cache_clear()
    try:
        platform = read_platform(DATA / "full.xml")
        assert platform.read_by == ("read by liquidsched's own parser (SimGrid not found): "
                                    "Full zones with explicit routes, and lone <cluster> crossbars and backbones")
        with pytest.raises(BackendError, match="apt-get install python3-simgrid"):
            read_platform(DATA / "full.xml", reader="simgrid")
    finally:
        simgrid_install.simgrid_python.cache_clear()


# -- clusters: liquidsched's own parser ------------------------------------------------------------------


def same_links_and_routes(a, b) -> None:
    """The same links (id, capacity, latency, slots) and every route over the same link ids."""
    def links(net):
        return sorted((l.id, l.capacity_Bps, l.latency_s, l.slots) for l in net.links.values())

    assert a.hosts() == b.hosts() and links(a) == links(b)
    assert {frozenset(p) for p in a.shared_duplex} == {frozenset(p) for p in b.shared_duplex}
    assert all(a.route(s, d) == b.route(s, d) for s in a.hosts() for d in a.hosts())


def test_own_parser_composes_a_crossbar_cluster_and_a_backbone_one():
    crossbar = read_platform(DATA / "cluster_crossbar.xml", reader="liquidsched").network
    # Every host hangs off the cluster's router: routes are composed, O(hosts).
    assert crossbar.switches() == ["bob-bob_router"]
    assert {crossbar.home_switch(h) for h in crossbar.hosts()} == {"bob-bob_router"}
    backbone = read_platform(DATA / "cluster_backbone.xml", reader="liquidsched").network
    assert backbone.links["acme_backbone"].capacity_Bps == 250e6 and backbone.links["acme_backbone"].latency_s == 5e-4
    # Hosts send to the router and receive from the backbone's far end: no one home switch, but
    # a switch each way, so routes are composed too.
    assert all(backbone.home_switch(h) is None for h in backbone.hosts())
    assert all(backbone.switch_up(h) != backbone.switch_down(h) is not None for h in backbone.hosts())
    bound = compute_bound(backbone, all_to_all(backbone, size_bytes=1_000_000))
    assert bound.duration_s == Fraction(3, 25) and bound.bottlenecks == ["acme_backbone"]


CLUSTER = """<?xml version="1.0"?>
<!DOCTYPE platform SYSTEM "https://simgrid.org/simgrid.dtd">
<platform version="4.1">
  <zone id="z" routing="Full">
    <cluster id="c" prefix="n" suffix=".lab" radical="{radical}" speed="1Gf" bw="1GBps" lat="1us"{extra}/>
  </zone>
</platform>
"""


def test_own_parser_reads_radicals_and_a_fatpipe_backbone():
    net = network_from_platform(CLUSTER.format(radical="1-3,7", extra=' bb_bw="2GBps" bb_sharing_policy="FATPIPE"'),
                                "c.xml")
    assert net.hosts() == ["n1.lab", "n2.lab", "n3.lab", "n7.lab"]
    assert net.route("n2.lab", "n7.lab") == ("c_link_2_UP", "c_backbone", "c_link_7_DOWN")
    # 16 routes cross the FATPIPE backbone: 16 slots of 2 GB/s, never a conflict.
    assert (net.links["c_backbone"].capacity_Bps, net.links["c_backbone"].slots) == free_capacity(2e9, 16)


@pytest.mark.parametrize("name, extra, message", [
    ("fat_tree.xml", None, "topology FAT_TREE is not read by liquidsched's own parser"),
    ("torus.xml", None, "topology TORUS is not read by liquidsched's own parser"),
    ("dragonfly.xml", None, "topology DRAGONFLY is not read by liquidsched's own parser"),
    ("cluster_shared_fatpipe.xml", None, "is not read by liquidsched's own parser"),
    (None, ' sharing_policy="SHARED"', "private links of sharing_policy SHARED are not read"),
    (None, ' loopback_bw="1GBps"', "attribute loopback_bw is not read"),
    (None, ' bb_bw="1GBps" bb_sharing_policy="SPLITDUPLEX"', "a backbone of bb_sharing_policy SPLITDUPLEX"),
])
def test_own_parser_names_the_cluster_styles_it_leaves_to_simgrid(name, extra, message, tmp_path):
    path = DATA / name if name else tmp_path / "c.xml"
    if name is None:
        path.write_text(CLUSTER.format(radical="0-3", extra=extra), encoding="utf-8")
    with pytest.raises(TopologyError, match=message) as info:
        read_platform(path, reader="liquidsched")
    text = str(info.value)
    assert text.startswith(str(path)) and "\n" not in text and "apt-get install python3-simgrid" in text


@pytest.mark.parametrize("name", ["fat_tree.xml", "torus.xml"])
def test_auto_leaves_a_large_cluster_the_own_parser_cannot_read_to_simgrid(name, tmp_path, monkeypatch):
    if not simgrid_install.simgrid_available():
        pytest.skip("SimGrid is not installed")
    # Counted as large, the lone fat tree or torus is still SimGrid's to read.
    monkeypatch.setattr("liquidsched.simgrid.read.LARGE_PLATFORM_HOSTS", 2)
    assert read_platform(DATA / name).read_by.startswith("read by SimGrid")


def test_a_radical_too_large_is_refused_by_auto_in_one_line(tmp_path):
    path = tmp_path / "huge.xml"
    path.write_text(CLUSTER.format(radical="0-99999999999", extra=""), encoding="utf-8")
    with pytest.raises(TopologyError, match=r"radical: '0-99999999999' names 100,000,000,000 hosts"):
        read_platform(path)


def test_own_parser_composes_a_large_backbone_cluster():
    # 5,000 hosts sending to the router and receiving from the backbone's far end: composed, so
    # its 25 million routes are never listed; an all-to-all's bound is the backbone's by hand.
    net = network_from_platform(CLUSTER.format(radical="0-4999", extra=' bb_bw="1GBps"'), "c.xml")
    table = net.route_table()
    assert (table.up_switch >= 0).all() and (table.down_target >= 0).all()
    assert net.route("n7.lab", "n4321.lab") == ("c_link_7_UP", "c_backbone", "c_link_4321_DOWN")
    assert net.route("n7.lab", "n7.lab") == ("c_link_7_UP", "c_backbone", "c_link_7_DOWN")
    hosts = net.hosts()[:100]
    bound = compute_bound(net, all_to_all(net, hosts, size_bytes=10**6))
    # 9,900 transfers of 1 MB over a 1 GB/s backbone; each host's 1 GB/s links carry 99.
    assert bound.bottlenecks == ["c_backbone"] and bound.duration_s == Fraction(9900, 1000)


@pytest.mark.parametrize("radical, message", [("0-x", "expected numbers and ranges"), ("5-2", "empty or negative"),
                                              ("0-3,2", "names a host twice"),
                                              ("0-999999999", "names 1,000,000,000 hosts; liquidsched reads up to "
                                                              "1,048,576 in a cluster")])
def test_own_parser_refuses_a_bad_radical_in_one_line(radical, message):
    with pytest.raises(TopologyError, match=f"^c.xml: <cluster id='c'>: radical: .*{message}"):
        network_from_platform(CLUSTER.format(radical=radical, extra=""), "c.xml")

"""SimGrid platforms of every common style, read by SimGrid itself (simgrid/reading.py).

Each platform under tests/data/simgrid is read into a network whose every route is checked
against an independent query of SimGrid (a script of this file, not the package's runner): the
same links, at their bandwidths, one resource per SimGrid link, the same latency. Hand-worked
expectations follow for the usual shapes, then the fluid model against SimGrid's own simulation
of platforms with FATPIPE links, the refusals of what liquidsched cannot model, and platforms of
thousands of hosts read by cluster (crossbar and backbone clusters, grids of sites), checked
against SimGrid on sampled pairs. The layout rules on platforms made up without SimGrid and the
own parser's clusters are in tests/test_simgrid.py.
"""

from __future__ import annotations

import functools
import json
import re
import subprocess
import xml.etree.ElementTree as ET
from fractions import Fraction
from pathlib import Path

import pytest

from liquidsched import TopologyError, compute_bound, plan
from liquidsched.cli import main
from liquidsched.errors import TrafficError
from liquidsched.simgrid import read_platform
from liquidsched.simgrid.platform_file import find_loopbacks, network_from_platform, platform_xml
from liquidsched.simgrid.examples import sites_platform
from liquidsched.simgrid.grouped import read_with_simgrid
from liquidsched.simgrid.reading import PlatformHints
from liquidsched.simgrid.values import free_capacity
from liquidsched.simgrid import backend as simgrid_backend
from liquidsched.simgrid import install as simgrid_install
from liquidsched.simgrid import grouped as simgrid_grouped
from liquidsched.simulate import flows_of, simulate
from liquidsched.traffic import Traffic, Transfer, all_to_all

from .test_simgrid import CLUSTER, made_up, needs_simgrid, same_links_and_routes, same_network

DATA = Path(__file__).parent / "data" / "simgrid"

#: Each platform that reads, with the SimGrid links of policy FATPIPE (a pattern).
PLATFORMS = {
    "full.xml": r"__loopback__",
    "floyd.xml": r"__loopback__",
    "dijkstra.xml": r"__loopback__",
    "dijkstracache.xml": r"__loopback__",
    "cluster_backbone.xml": r"__loopback__",
    "cluster_crossbar.xml": r"__loopback__",
    "cluster_shared_fatpipe.xml": r"c_backbone|c_link_\d+_loopback",
    "fat_tree.xml": r"bob_cluster_link_\d+_loopback",
    "torus.xml": r"bob_cluster_link_\d+_loopback",
    "dragonfly.xml": r"bob_cluster_link_\d+_loopback",
    "nested.xml": r"__loopback__",
    "fatpipe.xml": r"trunk|hub|__loopback__",
    "sites.xml": r"__loopback__",
}
REFUSED = {
    "vivaldi.xml": "Vivaldi",
    "wifi.xml": "wifi",
    "ns3.xml": "ns-3",
    "nohost.xml": "no host",
}

#: The independent query: every host pair's route as SimGrid gives it while it runs (a host's
#: route to itself is then the one its messages take), and every link's bandwidth and latency.
QUERY = r"""
import json, sys
import simgrid
engine = simgrid.Engine(["query", "--log=root.thres:critical"])
engine.load_platform(sys.argv[1])
hosts = engine.all_hosts
answer = {"version": str(simgrid.simgrid_version), "hosts": [h.name for h in hosts],
          "links": {l.name: [l.bandwidth, l.latency] for l in engine.all_links}, "routes": {}}
def ask():
    for a in hosts:
        for b in hosts:
            links, latency = a.route_to(b)
            answer["routes"][a.name + " " + b.name] = [[l.name for l in links], latency]
simgrid.Actor.create("ask", hosts[0], ask)
engine.run()
print(json.dumps(answer))
"""


@functools.cache
def simgrid_view(name: str) -> dict:
    """What SimGrid itself says of platform ``name``."""
    done = subprocess.run([simgrid_install.simgrid_python(), "-c", QUERY, str(DATA / name)],
                          capture_output=True, text=True, timeout=300, cwd=DATA)
    assert done.returncode == 0, done.stderr[-2000:]
    return json.loads(done.stdout)


@functools.cache
def read(name: str):
    return read_platform(DATA / name, reader="simgrid")


# -- every route against SimGrid -------------------------------------------------------------------


@needs_simgrid
@pytest.mark.parametrize("name", PLATFORMS)
def test_every_route_crosses_the_links_simgrid_reports(name):
    platform, view = read(name), simgrid_view(name)
    net = platform.network
    assert platform.read_by == f"read by SimGrid {view['version']}"
    assert sorted(net.hosts()) == sorted(view["hosts"]) and net.senders() == net.receivers() == net.hosts()
    for s in net.senders():
        for d in net.receivers():
            route = net.route(s, d)
            theirs, latency = view["routes"][f"{s} {d}"]
            ours = [platform.simgrid_links[lid] for lid in route if platform.simgrid_links[lid] is not None]
            assert set(ours) == set(theirs), (s, d)
            # One resource per SimGrid link, none shared with another SimGrid link of the route.
            assert len({net.link_resource[lid] for lid in route if platform.simgrid_links[lid]}) == len(theirs)
            assert sum(net.links[lid].latency_s for lid in route) == pytest.approx(latency, rel=1e-12, abs=1e-15)


@needs_simgrid
@pytest.mark.parametrize("name", PLATFORMS)
def test_capacities_are_simgrid_bandwidths(name):
    platform, view = read(name), simgrid_view(name)
    net, fatpipe = platform.network, re.compile(PLATFORMS[name])
    used = {platform.simgrid_links[lid] for lid in net.links} - {None}
    fastest = max(view["links"][sg][0] for sg in used)
    resources: dict[str, set[int]] = {}
    for lid, link in net.links.items():
        sg = platform.simgrid_links[lid]
        if sg is None:
            # A junction: never the smallest slot rate of a route, never a bottleneck.
            assert link.capacity_Bps / link.slots >= fastest and link.latency_s == 0
            continue
        bandwidth, latency = view["links"][sg]
        resources.setdefault(sg, set()).add(net.link_resource[lid])
        assert link.latency_s in (latency, 0.0)
        if fatpipe.fullmatch(sg):
            # Never a conflict, yet a transfer in a slot runs at the bandwidth, exactly.
            assert link.slots & (link.slots - 1) == 0 and link.capacity_Bps == bandwidth * link.slots
        else:
            assert link.capacity_Bps == bandwidth
    # A SimGrid link that is not FATPIPE is one resource, whichever ways routes cross it.
    assert all(len(rs) == 1 for sg, rs in resources.items() if not fatpipe.fullmatch(sg))


# -- hand-worked expectations -------------------------------------------------------------------------


@needs_simgrid
def test_cluster_with_backbone_routes_through_private_links_and_backbone():
    net = read("cluster_backbone.xml").network
    hosts = [f"node-{k}.acme.org" for k in range(6)]
    assert net.hosts() == hosts and len(net.switches()) == 2
    assert net.route(hosts[0], hosts[1]) == ("acme_link_0_UP", "acme_backbone", "acme_link_1_DOWN")
    assert net.route(hosts[3], hosts[3]) == ("acme_link_3_UP", "acme_backbone", "acme_link_3_DOWN")
    # 30 transfers of 1 MB: 5 on each private link (40 ms at 125 MB/s), 30 on the 250 MB/s
    # backbone (120 ms): the backbone is the bottleneck, and the liquid throughput its bandwidth.
    bound = compute_bound(net, all_to_all(net, size_bytes=1_000_000))
    assert bound.duration_s == Fraction(3, 25) and bound.bottlenecks == ["acme_backbone"]
    assert bound.liquid_throughput_Bps == 250_000_000
    assert bound.loads_s["acme_link_0_UP"] == Fraction(1, 25)


@needs_simgrid
def test_cluster_without_backbone_is_a_crossbar():
    net = read("cluster_crossbar.xml").network
    assert len(net.switches()) == 1 and net.route("bob-0", "bob-4") == ("bob_link_0_UP", "bob_link_4_DOWN")
    bound = compute_bound(net, all_to_all(net, size_bytes=1_000_000))
    # Each private link carries 4 transfers of 1 MB at 125 MB/s: 32 ms, every link a bottleneck.
    assert bound.duration_s == Fraction(4, 125) and len(bound.bottlenecks) == 10


@needs_simgrid
def test_full_zone_shared_links_are_shared_duplex_and_loopbacks_are_one_resource():
    platform = read("full.xml")
    net = platform.network
    assert net.route("a", "b") == ("la_UP", "lb_DOWN") and net.route("b", "a") == ("lb_UP", "la_DOWN")
    assert {("lb_UP", "lb_DOWN"), ("lc_UP", "lc_DOWN")} <= set(net.shared_duplex)
    # a's route to itself is its own loopback link; b's is SimGrid's __loopback__, b's own copy.
    assert net.routing.paths[("a", "a")] == ("a", "loopback@a", "a")
    assert net.route("a", "a") == ("lo_a_UP", "lo_a_DOWN") and len(net.path_resources("a", "a")) == 1
    assert net.links["lo_a_UP"].latency_s == 1e-6 and net.links["lo_a_DOWN"].latency_s == 0
    assert platform.simgrid_links["__loopback__@b_UP"] == "__loopback__"
    assert net.links["la_UP"].capacity_Bps == 125e6 and net.links["lc_UP"].capacity_Bps == 62.5e6


@needs_simgrid
def test_fatpipe_links_never_conflict_and_never_bind():
    net = read("fatpipe.xml").network
    trunk = net.links["trunk_UP"]
    # Routes a,b <-> c,d cross the trunk: 8 of them, so 8 slots of 500 MB/s.
    assert (trunk.capacity_Bps, trunk.slots) == free_capacity(500e6, 8) == (4e9, 8)
    assert net.slot_rate_exact([net.link_resource["trunk_UP"]]) == 500_000_000
    # Ports are 40 MB/s (d's link), so c's 80 MB/s link has 2 slots: the slowest of a → c.
    assert net.slot_rate_exact(net.path_resources("a", "c")) == 40_000_000
    # All-to-all of 1 MB: d's SHARED link (40 MB/s) carries its 3 sends and 3 receives: 150 ms.
    bound = compute_bound(net, all_to_all(net, size_bytes=1_000_000))
    assert bound.duration_s == Fraction(3, 20) and bound.liquid_throughput_Bps == 80_000_000
    assert bound.bottlenecks == [net.resources[net.link_resource["ld_UP"]]]


@needs_simgrid
def test_shared_private_links_with_a_fatpipe_backbone():
    platform = read("cluster_shared_fatpipe.xml")
    net = platform.network
    route = net.route("c0", "c1")
    assert [platform.simgrid_links[lid] for lid in route if platform.simgrid_links[lid]] == [
        "c_link_0_limiter", "c_link_0", "c_backbone", "c_link_1", "c_link_1_limiter"]
    # c0's private link carries its sends and its receives: one resource.
    assert net.link_resource["c_link_0_UP"] == net.link_resource["c_link_0_DOWN"]
    assert net.links["c_backbone"].capacity_Bps / net.links["c_backbone"].slots == 150e6
    assert net.route("c2", "c2") == ("c_link_2_loopback_UP", "c_link_2_loopback_DOWN")


@needs_simgrid
def test_torus_hosts_forward_through_routers_of_their_own():
    platform = read("torus.xml")
    net = platform.network
    h0, h1, h4 = "node-0.acme.org", "node-1.acme.org", "node-4.acme.org"

    def crossed(s, d):
        return [platform.simgrid_links[lid] for lid in net.route(s, d) if platform.simgrid_links[lid]]

    # SimGrid routes host 0 to host 4 through host 1; in liquidsched a switch stands there, where
    # host 1's links meet, and a junction (no SimGrid link) joins it to host 1.
    assert crossed(h0, h4) == ["bob_cluster_link_from_0_to_1_UP", "bob_cluster_link_from_1_to_4_UP"]
    at_h1 = net.routing.paths[(h0, h1)][-2]
    assert net.is_switch(at_h1) and net.routing.paths[(h0, h4)][1:-1].count(at_h1) == 1
    assert h1 not in net.routing.paths[(h0, h4)]
    assert platform.simgrid_links[net.link_between(at_h1, h1)] is None


@needs_simgrid
def test_nested_zones_follow_zone_routes_and_bypass_routes():
    platform = read("nested.xml")
    net = platform.network

    def crossed(s, d):
        return [platform.simgrid_links[lid] for lid in net.route(s, d) if platform.simgrid_links[lid]]

    # The bypass route between two hosts of z2 replaces the short way through central_router.
    assert crossed("z2_host1", "z2_host2") == ["z2_link7", "z2_link6", "z2_link5"]
    assert crossed("z1_host1", "z2_host3") == ["z1_link", "backbone12", "z2_link4", "z2_link3"]
    # The bypass zone route from z1 to z3 replaces the way through z2, one way only (a bypass
    # route is not symmetrical): back from z3, the route crosses z2's gateway.
    assert crossed("z1_host1", "z3-1") == ["z1_link", "shortcut13", "z3_backbone", "z3_link_1_DOWN"]
    assert crossed("z3-1", "z1_host1") == ["z3_link_1_UP", "z3_backbone", "backbone23", "backbone12", "z1_link"]


@needs_simgrid
def test_fat_tree_parallel_links_each_get_their_own_way():
    platform = read("fat_tree.xml")
    net = platform.network
    # Two cables join each leaf to each core switch; a network has one link from a node to
    # another, so the second is laid beside the first, joined by a junction.
    pairs = [(l.src, l.dst) for l in net.links.values()]
    assert len(pairs) == len(set(pairs))
    assert len(net.hosts()) == 16 and any(v is None for v in platform.simgrid_links.values())


# -- platforms that route only some host pairs ---------------------------------------------------------

#: partial_routes.xml (version "4", as SimGrid's dogbone.xml) routes each client (C1, C2) to each
#: server (S1, S2) and back, and no client to the other client, no server to the other server.
UNROUTED = {("C1", "C2"), ("C2", "C1"), ("S1", "S2"), ("S2", "S1")}


@pytest.mark.parametrize("reader", ["simgrid", "liquidsched"])
def test_a_platform_with_partial_routes_loads_and_refuses_a_traffic_needing_a_missing_one(reader, tmp_path):
    if reader == "simgrid" and not simgrid_install.simgrid_available():
        pytest.skip("SimGrid is not installed")
    path = DATA / "partial_routes.xml"
    net = read_platform(path, reader=reader).network
    assert net.hosts() == net.senders() == net.receivers() == ["C1", "C2", "S1", "S2"]
    assert set(net.missing_routes) == UNROUTED
    assert [lid.rpartition("_")[0] for lid in net.route("C1", "S2")] == ["C1-R1", "R1-R2", "R2-S2"]
    if reader == "liquidsched":
        # The routes to routers name the routers where links end.
        assert net.switches() == ["R1", "R2"] and net.routing.paths[("C1", "S2")] == ("C1", "R1", "R2", "S2")
    # A traffic over routed pairs is planned; one that needs a missing route is refused naming it.
    clients_to_servers = Traffic([Transfer(c, s, 1_000_000) for c in ("C1", "C2") for s in ("S1", "S2")])
    bound = compute_bound(net, clients_to_servers)
    # Four transfers of 1 MB over the 20 MB/s link R1-R2, two over each 10 MB/s link: 200 ms.
    assert bound.duration_s == Fraction(1, 5) and len(bound.bottlenecks) == 5
    with pytest.raises(TrafficError, match=r"^transfers\[1\] \(S1->S2\): routing.paths: no path from S1 to S2$"):
        compute_bound(net, Traffic([Transfer("C1", "S1", 1), Transfer("S1", "S2", 1)]))
    # Exported, the platform routes the same pairs, and reads back as the same network.
    back = tmp_path / "partial.xml"
    back.write_text(platform_xml(net), encoding="utf-8")
    again = read_platform(back, reader=reader).network
    assert set(again.missing_routes) == UNROUTED
    assert all(again.route(s, d) == net.route(s, d) for s in net.hosts() for d in net.hosts() if (s, d) not in UNROUTED)


@needs_simgrid
def test_partial_routes_cross_the_links_simgrid_reports():
    platform, view = read("partial_routes.xml"), simgrid_view("partial_routes.xml")
    net = platform.network
    for s in net.hosts():
        for d in net.hosts():
            theirs, latency = view["routes"][f"{s} {d}"]
            if (s, d) in UNROUTED:
                assert theirs == [] and (s, d) in net.missing_routes
                continue
            ours = [platform.simgrid_links[lid] for lid in net.route(s, d) if platform.simgrid_links[lid]]
            assert set(ours) == set(theirs), (s, d)
            assert sum(net.links[lid].latency_s for lid in net.route(s, d)) == pytest.approx(latency, rel=1e-12)


# -- exported and read back ----------------------------------------------------------------------------


def same_resources(a, b) -> None:
    """Equal resources (capacity, slots), and every route over the same resources."""
    assert {r: (c, k) for r, c, k in zip(a.resources, a.resource_capacity, a.resource_slots)} == \
        {r: (c, k) for r, c, k in zip(b.resources, b.resource_capacity, b.resource_slots)}
    for s in a.senders():
        for d in a.receivers():
            assert {a.resources[r] for r in a.path_resources(s, d)} == {b.resources[r] for r in b.path_resources(s, d)}


def routes_of(text: str) -> dict[tuple[str, str], list[tuple[str, str]]]:
    """The (link, direction) list of each route of a platform's text."""
    zone = ET.fromstring(text).find("zone")
    return {(r.get("src"), r.get("dst")): [(c.get("id"), c.get("direction", "")) for c in r.findall("link_ctn")]
            for r in zone.findall("route")}


@needs_simgrid
@pytest.mark.parametrize("reader", ["simgrid", "liquidsched"])
@pytest.mark.parametrize("name", PLATFORMS)
def test_an_exported_platform_reads_back_as_the_same_network(name, reader, tmp_path):
    net = read(name).network
    text = platform_xml(net)
    # No route lists a link twice (SimGrid would count it twice): a loopback is listed once.
    assert all(len(set(hops)) == len(hops) for hops in routes_of(text).values())
    path = tmp_path / name
    path.write_text(text, encoding="utf-8")
    back = read_platform(path, reader=reader).network
    same_network(net, back)
    same_resources(net, back)
    # Loopbacks keep their nodes as well as their links.
    assert all(back.routing.paths[(h, h)] == net.routing.paths[(h, h)] for h in net.hosts())


@needs_simgrid
def test_simgrid_simulates_a_transfer_to_itself_as_the_fluid_model():
    net = read("full.xml").network
    # a to itself alone, then with b to itself and a to b at once: each loopback is one
    # resource crossed once (10 GB/s), as SimGrid simulates it.
    for transfers in ([Transfer("a", "a", 100_000_000)],
                      [Transfer("a", "a", 100_000_000), Transfer("b", "b", 50_000_000), Transfer("a", "b", 1_000_000)]):
        schedule = plan(net, Traffic(transfers), "round-robin")
        ours = simulate(schedule, "fluid", "all-at-once")
        theirs = simulate(schedule, "fluid", "all-at-once", backend="simgrid")
        assert ours.finish_s[0] == pytest.approx(0.01 + 1e-6, rel=1e-9)
        assert max(abs(x - y) for x, y in zip(ours.finish_s, theirs.finish_s)) <= 1e-9 * ours.makespan_s


# -- loopbacks, by the same rules for both readers -----------------------------------------------------


def test_loopbacks_are_self_routes_of_one_link_no_other_route_crosses():
    routes = {("a", "a"): ["lo"], ("b", "b"): ["l"], ("a", "b"): ["l"], ("c", "c"): ["x", "y"]}
    assert find_loopbacks(routes, {}, "p.xml") == {"a": "lo"}
    shared = {("a", "a"): ["lo"], ("b", "b"): ["lo"]}
    assert find_loopbacks(shared, {"lo": "FATPIPE"}, "p.xml") == {"a": "lo", "b": "lo"}
    with pytest.raises(TopologyError, match=r"^p.xml: link 'lo' is the route to itself of 2 hosts \(a, b\); "
                                            "a loopback shared by several hosts is modelled only when FATPIPE"):
        find_loopbacks(shared, {"lo": "SHARED"}, "p.xml")


OWN = """<?xml version='1.0'?>
<!DOCTYPE platform SYSTEM "https://simgrid.org/simgrid.dtd">
<platform version="4.1">
  <zone id="z" routing="Full">
    <host id="a" speed="1f"/>
    <host id="b" speed="1f"/>
    <router id="loopback@a"/>
    <link id="la" bandwidth="100Bps" latency="0"><prop id="src" value="a"/><prop id="dst" value="loopback@a"/></link>
    <link id="lo_UP" bandwidth="100Bps" latency="0"><prop id="src" value="loopback@a"/><prop id="dst" value="b"/></link>
    <link id="lo" bandwidth="1000Bps" latency="1ms"/>
    <route src="a" dst="b" symmetrical="NO"><link_ctn id="la"/><link_ctn id="lo_UP"/></route>
    <route src="a" dst="a"><link_ctn id="lo"/></route>
    <route src="b" dst="b"><link_ctn id="lo"/></route>
  </zone>
</platform>
"""
#: OWN without b's route to itself: b only receives.
OWN_A = OWN.replace('<route src="b" dst="b"><link_ctn id="lo"/></route>', "")


@pytest.mark.parametrize("reader", ["simgrid", "liquidsched"])
def test_readers_refuse_a_shared_loopback_that_is_not_fatpipe_alike(reader, tmp_path):
    if reader == "simgrid" and not simgrid_install.simgrid_available():
        pytest.skip("SimGrid is not installed")
    path = tmp_path / "shared.xml"
    # a and b send to each other, so both are senders and receivers for both readers.
    path.write_text(OWN.replace(' symmetrical="NO"', ""), encoding="utf-8")
    with pytest.raises(TopologyError, match="link 'lo' is the route to itself of 2 hosts") as info:
        read_platform(path, reader=reader)
    assert str(info.value).startswith(str(path)) and "\n" not in str(info.value)


def test_own_parser_gives_loopbacks_fresh_names():
    # A router called loopback@a and a link called lo_UP already: a's loopback takes others.
    net = network_from_platform(OWN_A, "own.xml")
    assert net.routing.paths[("a", "a")] == ("a", "loopback@a#2", "a")
    assert net.route("a", "a") == ("lo_UP#2", "lo_DOWN") and ("lo_UP#2", "lo_DOWN") in net.shared_duplex
    assert net.links["lo_UP#2"].latency_s == 1e-3 and net.links["lo_DOWN"].latency_s == 0
    assert net.links["lo_UP#2"].slots == 1 and net.route("a", "b") == ("la", "lo_UP")


def test_simgrid_reader_gives_loopbacks_the_names_the_own_parser_gives():
    links = {"la": (100.0, "SHARED"), "lo_UP": (100.0, "SHARED"), "lo": (1000.0, "SHARED")}
    hints = PlatformHints(routers={"loopback@a"}, roles={"a": "both", "b": "receiver"},
                          ends={"la": ("a", "loopback@a"), "lo_UP": ("loopback@a", "b")})
    net, sg = made_up(["a", "b"], links, {("a", "b"): ["la", "lo_UP"], ("a", "a"): ["lo"]}, hints)
    own = network_from_platform(OWN_A, "own.xml")
    assert net.routing.paths == own.routing.paths
    assert net.route("a", "a") == ("lo_UP#2", "lo_DOWN") and sg["lo_UP#2"] == sg["lo_DOWN"] == "lo"


def test_own_parser_names_why_it_cannot_lay_out_a_route_to_itself():
    # b's route to itself is one direction of a SPLITDUPLEX link that a's route to b crosses.
    text = OWN_A.replace('<link id="lo_UP" bandwidth="100Bps" latency="0">',
                         '<link id="lo_UP" bandwidth="100Bps" latency="0" sharing_policy="SPLITDUPLEX">').replace(
        '<link_ctn id="lo_UP"/></route>', '<link_ctn id="lo_UP" direction="UP"/></route><route src="b" dst="b">'
        '<link_ctn id="lo_UP" direction="UP"/></route>')
    with pytest.raises(TopologyError, match=r"^own.xml: zone 'z': route b → b is direction UP of SPLITDUPLEX link "
                                            r"'lo_UP' alone, which other routes cross too: liquidsched's own parser "
                                            r"cannot lay it out"):
        network_from_platform(text, "own.xml")


def test_own_parser_reads_a_route_to_itself_over_a_shared_link_others_cross_as_out_and_back():
    # What the export writes for a host whose route to itself goes out and back over its
    # shared-duplex cable, which its other routes cross too: the cable, listed once.
    text = OWN_A.replace('<route src="a" dst="a"><link_ctn id="lo"/>', '<route src="a" dst="a"><link_ctn id="la"/>')
    net = network_from_platform(text, "own.xml")
    assert net.routing.paths[("a", "a")] == ("a", "loopback@a", "a")
    assert net.route("a", "a") == ("la_UP", "la_DOWN") and ("la_UP", "la_DOWN") in net.shared_duplex


# -- the fluid model against SimGrid's own simulation of the file ------------------------------------


def simgrid_finish_times(schedule, policy: str, platform: Path) -> list[float]:
    """Finish times of the schedule's pieces in SimGrid's simulation of ``platform`` itself
    (the back end's runner, under CM02, given the original file instead of an export)."""
    job = simgrid_backend.simgrid_job(schedule, flows_of(schedule), policy, 0.0, str(platform))
    job_file = platform.with_suffix(".job.json")
    job_file.write_text(json.dumps(job), encoding="utf-8")
    done = subprocess.run([simgrid_install.simgrid_python(), str(simgrid_backend.RUNNER), str(job_file)],
                          capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stderr[-2000:]
    return json.loads(done.stdout)["finish_s"]


def without_latencies(name: str, folder: Path) -> Path:
    """A copy of platform ``name`` with every latency zero (the runner's flows wait their route
    latency themselves; under CM02 a link latency would also weight the sharing)."""
    text = (DATA / name).read_text(encoding="utf-8")
    text = re.sub(r'\b(latency|lat|bb_lat|loopback_lat)="[^"]*"', r'\1="0"', text)
    path = folder / name
    path.write_text(text, encoding="utf-8")
    return path


@needs_simgrid
@pytest.mark.parametrize("name", ["fatpipe.xml", "cluster_shared_fatpipe.xml"])
@pytest.mark.parametrize("policy, algorithm", [("all-at-once", "round-robin"), ("per-sender", "dsatur"),
                                               ("frames", "round-robin")])
def test_fluid_model_agrees_with_simgrid_on_fatpipe_platforms(name, policy, algorithm, tmp_path):
    path = without_latencies(name, tmp_path)
    net = read_platform(path, reader="simgrid").network
    schedule = plan(net, all_to_all(net, size_bytes=3_000_000), algorithm)
    ours = simulate(schedule, "fluid", policy)
    theirs = simgrid_finish_times(schedule, policy, path)
    assert max(theirs) == pytest.approx(ours.makespan_s, rel=1e-6)
    assert max(abs(a - b) for a, b in zip(ours.finish_s, theirs)) <= 1e-6 * ours.makespan_s


# -- refusals, and which reader reads -----------------------------------------------------------------


@pytest.mark.parametrize("reader", ["simgrid", "liquidsched"])
@pytest.mark.parametrize("name", REFUSED)
def test_platforms_liquidsched_cannot_model_are_refused_in_one_line(name, reader):
    # Refused before any reader runs: the same answer with SimGrid or without.
    with pytest.raises(TopologyError, match=REFUSED[name]) as info:
        read_platform(DATA / name, reader=reader)
    assert str(info.value).startswith(str(DATA / name)) and "\n" not in str(info.value)


@pytest.mark.parametrize("name", REFUSED)
def test_cli_refuses_a_platform_in_one_line_without_traceback(name, capsys):
    assert main(["topology", "show", str(DATA / name)]) == 2
    captured = capsys.readouterr()
    lines = captured.err.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("liquidsched: error: ") and REFUSED[name] in lines[0]
    assert "Traceback" not in captured.err + captured.out


@needs_simgrid
def test_cli_says_simgrid_read_the_platform(capsys):
    assert main(["topology", "show", str(DATA / "cluster_backbone.xml"), "--json"]) == 0
    info = json.loads(capsys.readouterr().out)
    assert info["read_by"].startswith("read by SimGrid 3.") and info["hosts"] == 6


@needs_simgrid
def test_simgrid_errors_come_back_in_one_line(tmp_path):
    text = (DATA / "full.xml").read_text(encoding="utf-8").replace('bandwidth="125MBps"', 'bandwidth="125MBit"')
    path = tmp_path / "bad.xml"
    path.write_text(text, encoding="utf-8")
    with pytest.raises(TopologyError, match=r"SimGrid cannot load it: .*unit") as info:
        read_platform(path, reader="simgrid")
    assert str(info.value).startswith(str(path)) and "\n" not in str(info.value)


# -- clusters: both readers alike ------------------------------------------------------------------


@needs_simgrid
@pytest.mark.parametrize("name", ["cluster_crossbar.xml", "cluster_backbone.xml"])
def test_own_parser_reads_a_cluster_as_simgrid_reader_does(name):
    own = read_platform(DATA / name, reader="liquidsched").network
    same_links_and_routes(own, read(name).network)
    view = simgrid_view(name)
    for s in own.hosts():
        for d in own.hosts():
            theirs, latency = view["routes"][f"{s} {d}"]
            assert [lid.removesuffix("_UP").removesuffix("_DOWN") for lid in own.route(s, d)] == \
                [sg.removesuffix("_UP").removesuffix("_DOWN") for sg in theirs]
            assert sum(own.links[lid].latency_s for lid in own.route(s, d)) == pytest.approx(latency, rel=1e-12)


# -- large platforms, checked against SimGrid on sampled pairs ---------------------------------------

#: Routes of the pairs a JSON file lists, as SimGrid gives them (links, latency).
QUERY_PAIRS = r"""
import json, sys
import simgrid
engine = simgrid.Engine(["query", "--log=root.thres:critical"])
engine.load_platform(sys.argv[1])
pairs = json.load(open(sys.argv[2]))
hosts = {h.name: h for h in engine.all_hosts}
answer = []
def ask():
    for a, b in pairs:
        links, latency = hosts[a].route_to(hosts[b])
        answer.append([[l.name for l in links], latency, [l.bandwidth for l in links]])
simgrid.Actor.create("ask", engine.all_hosts[0], ask)
engine.run()
print(json.dumps(answer))
"""


def simgrid_routes_of(path: Path, pairs: list[tuple[str, str]], folder: Path) -> list:
    """SimGrid's own route (links, latency) of each pair, asked by a script of this file."""
    job = folder / "pairs.json"
    job.write_text(json.dumps(pairs), encoding="utf-8")
    done = subprocess.run([simgrid_install.simgrid_python(), "-c", QUERY_PAIRS, str(path), str(job)],
                          capture_output=True, text=True, timeout=600, cwd=folder)
    assert done.returncode == 0, done.stderr[-2000:]
    return json.loads(done.stdout)


def check_sampled_routes(platform, path: Path, folder: Path, samples: int = 3000, seed: int = 1) -> None:
    """Routes of ``samples`` random host pairs (and every host to itself among them) cross the
    SimGrid links SimGrid reports, in its order, with its latency."""
    import random

    net = platform.network
    hosts = net.hosts()
    rng = random.Random(seed)
    pairs = [(rng.choice(hosts), rng.choice(hosts)) for _ in range(samples)] + [(h, h) for h in hosts[:50]]
    links = platform.simgrid_links
    for (s, d), (theirs, latency, bandwidths) in zip(pairs, simgrid_routes_of(path, pairs, folder)):
        route = net.route(s, d)
        # The own parser names links as SimGrid does (no link map): each is its SimGrid link.
        ours = [lid for lid in route if links.get(lid, lid) is not None]
        assert [links.get(lid, lid) for lid in ours] == theirs, (s, d)
        # These platforms have no FATPIPE link: each link's capacity is SimGrid's bandwidth.
        assert [net.links[lid].capacity_Bps for lid in ours] == bandwidths, (s, d)
        assert sum(net.links[lid].latency_s for lid in route) == pytest.approx(latency, rel=1e-9, abs=1e-15), (s, d)


def crossbar_platform(hosts: int) -> str:
    return CLUSTER.format(radical=f"0-{hosts - 1}", extra="").replace('bw="1GBps"', 'bw="125MBps"')


@needs_simgrid
def test_a_crossbar_cluster_of_65536_hosts_reads_without_simgrid_asking_every_pair(tmp_path):
    path = tmp_path / "crossbar.xml"
    path.write_text(crossbar_platform(65_536), encoding="utf-8")
    platform = read_platform(path)
    assert platform.read_by.startswith("read by liquidsched's own parser (65,536 hosts in one <cluster>")
    net = platform.network
    assert len(net.hosts()) == 65_536 and net.switches() == ["nc_router.lab"]
    check_sampled_routes(platform, path, tmp_path)


@needs_simgrid
def test_a_crossbar_cluster_read_by_simgrid_by_cluster_routes_as_simgrid(tmp_path):
    path = tmp_path / "crossbar.xml"
    path.write_text(crossbar_platform(2_000), encoding="utf-8")
    platform = read_platform(path, reader="simgrid")
    assert platform.read_by.startswith("read by SimGrid") and len(platform.network.hosts()) == 2_000
    check_sampled_routes(platform, path, tmp_path)
    own = read_platform(path, reader="liquidsched").network
    pairs = [("n0.lab", "n1999.lab"), ("n7.lab", "n7.lab")]
    assert all(own.route(s, d) == platform.network.route(s, d) for s, d in pairs)


def test_the_sites_data_file_is_what_sites_platform_writes():
    text = (DATA / "sites.xml").read_text(encoding="utf-8")
    body = re.sub(r"<!--.*?-->\n", "", text, flags=re.S)
    assert body == sites_platform([[3, 2], [4], [2, 2, 3]])


@needs_simgrid
def test_reading_by_cluster_gives_the_network_of_reading_pair_by_pair(tmp_path):
    root = ET.parse(DATA / "sites.xml").getroot()
    python = simgrid_install.simgrid_python()
    by_cluster, links, _ = read_with_simgrid(DATA / "sites.xml", root, python, grouped=True)
    pairwise, _, _ = read_with_simgrid(DATA / "sites.xml", root, python, grouped=False)
    same_links_and_routes(by_cluster, pairwise)
    assert sorted(by_cluster.switches()) == sorted(pairwise.switches())
    # Composed: each host hangs off its cluster's switch, and a next-hop table joins switches.
    assert all(by_cluster.home_switch(h) is not None for h in by_cluster.hosts())
    view = simgrid_view("sites.xml")
    for s in by_cluster.hosts():
        for d in by_cluster.hosts():
            assert [links[lid] for lid in by_cluster.route(s, d) if links[lid]] == view["routes"][f"{s} {d}"][0]


@needs_simgrid
def test_a_grid_of_1500_hosts_in_sites_of_clusters_reads_by_cluster_and_routes_as_simgrid(tmp_path):
    path = tmp_path / "grid.xml"
    path.write_text(sites_platform(GRID), encoding="utf-8")
    platform = read_platform(path)
    assert platform.read_by.startswith("read by SimGrid") and len(platform.network.hosts()) == 1_500
    check_sampled_routes(platform, path, tmp_path)


#: Cluster sizes of a grid of the shape of SimGrid's g5k.xml: six sites of two to five clusters.
GRID = [[100, 60, 90, 50], [144, 92], [56, 79, 40], [310, 30], [64, 33, 25, 40], [56, 50, 45, 80, 56]]


@needs_simgrid
def test_a_grid_of_backbone_clusters_reads_by_cluster_as_pair_by_pair_and_as_simgrid_routes(tmp_path):
    path = tmp_path / "sites_backbone.xml"
    # Four sites: routes between sites 3 and 2 cross three links of the core (3-1, 1-0, 2-0).
    path.write_text(sites_platform([[3, 2], [4], [2, 2, 3], [2]], backbone=True), encoding="utf-8")
    root = ET.parse(path).getroot()
    by_cluster, links, _ = read_with_simgrid(path, root, simgrid_install.simgrid_python(), grouped=True)
    same_links_and_routes(by_cluster, pair_by_pair(path))
    # Each host sends to its cluster's backbone and receives from the backbone's far end.
    assert all(by_cluster.switch_up(h) not in (None, by_cluster.switch_down(h)) for h in by_cluster.hosts())
    assert by_cluster.route("site0-c0-1", "site0-c0-1") == ("site0-c0_link_1_UP", "site0-c0_backbone",
                                                           "site0-c0_link_1_DOWN")
    assert [links[lid] for lid in by_cluster.route("site3-c0-1", "site2-c2-3") if links[lid]] == [
        "site3-c0_link_1_UP", "site3-c0_backbone", "site3-c0-uplink", "site3-wan", "core-3-1", "core-1-0", "core-2-0",
        "site2-wan", "site2-c2-uplink", "site2-c2_backbone", "site2-c2_link_3_DOWN"]
    hosts = by_cluster.hosts()
    routes = simgrid_routes_of(path, [(s, d) for s in hosts for d in hosts], tmp_path)
    for (s, d), (theirs, latency, _) in zip([(s, d) for s in hosts for d in hosts], routes):
        route = by_cluster.route(s, d)
        assert [links[lid] for lid in route if links[lid]] == theirs, (s, d)
        assert sum(by_cluster.links[lid].latency_s for lid in route) == pytest.approx(latency, rel=1e-9), (s, d)


@needs_simgrid
def test_a_grid_of_1500_hosts_in_sites_of_backbone_clusters_reads_by_cluster_and_routes_as_simgrid(tmp_path):
    path = tmp_path / "grid.xml"
    path.write_text(sites_platform(GRID, backbone=True), encoding="utf-8")
    platform = read_platform(path)
    # Read by cluster: nothing asked pair by pair (the reader would say so).
    assert re.fullmatch(r"read by SimGrid 3\.[\d.]+", platform.read_by)
    net = platform.network
    assert len(net.hosts()) == 1_500 and net.routing.policy == "next-hop"
    assert sum(1 for lid in net.links if lid.endswith("_backbone")) == 20
    check_sampled_routes(platform, path, tmp_path)


@needs_simgrid
@pytest.mark.parametrize("name, message", [
    ("loopback.xml", r"host n0.lab does not send to one switch and receive from one \(SimGrid's route to itself "
                     r"crosses c_link_0_loopback\)"),
    ("partial_routes.xml", "SimGrid has no route from C1 to C2; reading 4 hosts by cluster needs a route"),
])
def test_reading_by_cluster_says_what_it_cannot_compose_in_one_line(name, message, tmp_path):
    path = DATA / name
    if name == "loopback.xml":
        # A cluster whose hosts route to themselves through a loopback, not their private links.
        path = tmp_path / name
        path.write_text(CLUSTER.format(radical="0-3", extra=LOOPBACK), encoding="utf-8")
    root = ET.parse(path).getroot()
    with pytest.raises(TopologyError, match=message) as info:
        read_with_simgrid(path, root, simgrid_install.simgrid_python(), grouped=True)
    assert str(info.value).startswith(str(path)) and "\n" not in str(info.value)


#: A cluster's hosts routed to themselves through loopbacks: what reading by cluster cannot compose.
LOOPBACK = ' bb_bw="1GBps" loopback_bw="2GBps" loopback_lat="1us"'


def pair_by_pair(path: Path):
    return read_with_simgrid(path, ET.parse(path).getroot(), simgrid_install.simgrid_python(), grouped=False)[0]


@needs_simgrid
def test_simgrid_reader_falls_back_to_asking_pair_by_pair_where_clusters_do_not_compose(monkeypatch, tmp_path):
    # Read by cluster from the first host on: the loopback cluster cannot be composed, so its
    # routes are asked pair by pair after all, and the reader says why.
    monkeypatch.setattr(simgrid_grouped, "GROUPED_FROM_HOSTS", 0)
    path = tmp_path / "loopback.xml"
    path.write_text(CLUSTER.format(radical="0-3", extra=LOOPBACK), encoding="utf-8")
    platform = read_platform(path, reader="simgrid")
    assert re.fullmatch(r"read by SimGrid 3\.[\d.]+ \(routes asked pair by pair: host n0\.lab does not send to one "
                        r"switch and receive from one .*\)", platform.read_by)
    same_links_and_routes(platform.network, pair_by_pair(path))
    assert platform.network.routing.policy == "paths"
    # Crossbar and backbone clusters compose: read by cluster (switch paths from a next-hop
    # table), nothing to say, the network of reading pair by pair.
    for name in ("cluster_crossbar.xml", "cluster_backbone.xml"):
        by_cluster = read_platform(DATA / name, reader="simgrid")
        assert re.fullmatch(r"read by SimGrid 3\.[\d.]+", by_cluster.read_by)
        assert by_cluster.network.routing.policy == "next-hop"
        same_links_and_routes(by_cluster.network, pair_by_pair(DATA / name))


@needs_simgrid
def test_simgrid_reader_refuses_in_one_line_a_large_platform_it_can_read_neither_by_cluster_nor_by_pair(tmp_path):
    path = tmp_path / "loopback.xml"
    path.write_text(CLUSTER.format(radical="0-1099", extra=LOOPBACK), encoding="utf-8")
    with pytest.raises(TopologyError, match=r"host n0.lab does not send to one switch and receive from one .*; asking "
                                            r"SimGrid every pair's route instead \(1,210,000 routes\) is done up to "
                                            r"1,024 hosts$") as info:
        read_platform(path, reader="simgrid")
    assert str(info.value).startswith(f"{path}: ") and "\n" not in str(info.value)


@needs_simgrid
def test_a_large_backbone_cluster_reads_by_cluster_with_simgrid_as_with_the_own_parser(tmp_path):
    path = tmp_path / "backbone.xml"
    path.write_text(CLUSTER.format(radical="0-1099", extra=' bb_bw="1GBps"'), encoding="utf-8")
    platform = read_platform(path, reader="simgrid")
    assert re.fullmatch(r"read by SimGrid 3\.[\d.]+", platform.read_by)
    net = platform.network
    # Hosts send to the backbone's near end and receive from its far end.
    assert {(net.switch_up(h), net.switch_down(h)) for h in net.hosts()} == {("router-1", "router-2")}
    check_sampled_routes(platform, path, tmp_path, samples=1000)
    # `auto` reads a lone cluster this large by liquidsched's own parser: the same routes.
    own = read_platform(path)
    assert own.read_by.startswith("read by liquidsched's own parser (1,100 hosts in one <cluster>")
    pairs = [("n0.lab", "n1099.lab"), ("n7.lab", "n7.lab"), ("n1099.lab", "n3.lab")]
    assert all(own.network.route(s, d) == net.route(s, d) for s, d in pairs)

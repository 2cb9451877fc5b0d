"""SimGrid platforms of every common style, read by SimGrid itself (simgrid/reading.py).

Each platform under tests/data/simgrid is read into a network whose every route is checked
against an independent query of SimGrid (a script of this file, not the package's runner): the
same links, at their bandwidths, one resource per SimGrid link, the same latency. Hand-worked
expectations follow for the usual shapes, then the fluid model against SimGrid's own simulation
of platforms with FATPIPE links, the layout rules on platforms made up without SimGrid, and the
refusals of what liquidsched cannot model.
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
from liquidsched.errors import BackendError, TrafficError
from liquidsched.simgrid import read_platform
from liquidsched.simgrid.platform_file import find_loopbacks, network_from_platform, platform_xml
from liquidsched.simgrid.examples import sites_platform
from liquidsched.simgrid.grouped import read_with_simgrid
from liquidsched.simgrid.reading import PlatformHints, SimgridLink, SimgridPlatform, network_from_simgrid
from liquidsched.simgrid.values import free_capacity
from liquidsched.simgrid import backend as simgrid_backend
from liquidsched.simgrid import install as simgrid_install
from liquidsched.simgrid import grouped as simgrid_grouped
from liquidsched.simulate import flows_of, simulate
from liquidsched.traffic import Traffic, Transfer, all_to_all

from .test_simgrid import needs_simgrid, same_network

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


def test_own_parser_composes_a_crossbar_cluster_and_routes_a_backbone_one_pair_by_pair():
    crossbar = read_platform(DATA / "cluster_crossbar.xml", reader="liquidsched").network
    # Every host hangs off the cluster's router: routes are composed, O(hosts).
    assert crossbar.switches() == ["bob-bob_router"]
    assert {crossbar.home_switch(h) for h in crossbar.hosts()} == {"bob-bob_router"}
    backbone = read_platform(DATA / "cluster_backbone.xml", reader="liquidsched").network
    assert backbone.links["acme_backbone"].capacity_Bps == 250e6 and backbone.links["acme_backbone"].latency_s == 5e-4
    assert all(backbone.home_switch(h) is None for h in backbone.hosts())
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


def test_own_parser_refuses_a_backbone_cluster_too_large_to_route_pair_by_pair():
    with pytest.raises(TopologyError, match=r"^c.xml: <cluster id='c'>: a cluster with a backbone of 5,000 hosts: .* "
                                            r"25,000,000 routes pair by pair, which it does for up to 2,048 hosts"):
        network_from_platform(CLUSTER.format(radical="0-4999", extra=' bb_bw="1GBps"'), "c.xml")


@pytest.mark.parametrize("radical, message", [("0-x", "expected numbers and ranges"), ("5-2", "empty or negative"),
                                              ("0-3,2", "names a host twice"),
                                              ("0-999999999", "names 1,000,000,000 hosts; liquidsched reads up to "
                                                              "1,048,576 in a cluster")])
def test_own_parser_refuses_a_bad_radical_in_one_line(radical, message):
    with pytest.raises(TopologyError, match=f"^c.xml: <cluster id='c'>: radical: .*{message}"):
        network_from_platform(CLUSTER.format(radical=radical, extra=""), "c.xml")


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
    path.write_text(sites_platform([[100, 60, 90, 50], [144, 92], [56, 79, 40], [310, 30], [64, 33, 25, 40],
                                    [56, 50, 45, 80, 56]]), encoding="utf-8")
    platform = read_platform(path)
    assert platform.read_by.startswith("read by SimGrid") and len(platform.network.hosts()) == 1_500
    check_sampled_routes(platform, path, tmp_path)


@needs_simgrid
@pytest.mark.parametrize("name, message", [
    ("cluster_backbone.xml", r"host node-0.acme.org does not hang off one switch \(SimGrid's route to itself crosses "
                             r"acme_link_0_UP, acme_backbone, acme_link_0_DOWN\)"),
    ("partial_routes.xml", "SimGrid has no route from C1 to C2; reading 4 hosts by cluster needs a route"),
])
def test_reading_by_cluster_says_what_it_cannot_compose_in_one_line(name, message):
    root = ET.parse(DATA / name).getroot()
    with pytest.raises(TopologyError, match=message) as info:
        read_with_simgrid(DATA / name, root, simgrid_install.simgrid_python(), grouped=True)
    assert str(info.value).startswith(str(DATA / name)) and "\n" not in str(info.value)


@needs_simgrid
def test_simgrid_reader_falls_back_to_asking_pair_by_pair_where_clusters_do_not_compose(monkeypatch):
    # Read by cluster from the first host on: the backbone cluster cannot be composed, so its
    # routes are asked pair by pair after all, and the reader says why.
    monkeypatch.setattr(simgrid_grouped, "GROUPED_FROM_HOSTS", 0)
    platform = read_platform(DATA / "cluster_backbone.xml", reader="simgrid")
    assert re.fullmatch(r"read by SimGrid 3\.[\d.]+ \(routes asked pair by pair: host node-0\.acme\.org does not hang "
                        r"off one switch .*\)", platform.read_by)
    same_links_and_routes(platform.network, read("cluster_backbone.xml").network)
    assert platform.network.routing.policy == "paths"
    # The crossbar composes: read by cluster (switch paths from a next-hop table), nothing to say.
    crossbar = read_platform(DATA / "cluster_crossbar.xml", reader="simgrid")
    assert re.fullmatch(r"read by SimGrid 3\.[\d.]+", crossbar.read_by)
    assert crossbar.network.routing.policy == "next-hop"
    same_links_and_routes(crossbar.network, read("cluster_crossbar.xml").network)


@needs_simgrid
def test_simgrid_reader_refuses_in_one_line_a_large_platform_it_can_read_neither_by_cluster_nor_by_pair(tmp_path):
    path = tmp_path / "backbone.xml"
    path.write_text(CLUSTER.format(radical="0-1099", extra=' bb_bw="1GBps"'), encoding="utf-8")
    with pytest.raises(TopologyError, match=r"host n0.lab does not hang off one switch .*; asking SimGrid every pair's "
                                            r"route instead \(1,210,000 routes\) is done up to 1,024 hosts$") as info:
        read_platform(path, reader="simgrid")
    assert str(info.value).startswith(f"{path}: ") and "\n" not in str(info.value)
    # liquidsched's own parser reads it (what `auto` chooses for a lone cluster this large).
    assert read_platform(path).read_by.startswith("read by liquidsched's own parser (1,100 hosts in one <cluster>")

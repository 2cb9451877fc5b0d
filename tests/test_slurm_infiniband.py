"""Slurm topology.conf and InfiniBand fabrics as networks: hostlists, tree routes, LFT routes hop
by hop, rates, bounds worked by hand, and one line naming the file and the line for every kind of
malformed input."""

from __future__ import annotations

from fractions import Fraction
from pathlib import Path

import pytest

from liquidsched import TopologyError
from liquidsched.bounds import compute_bound
from liquidsched.io.slurm import expand_hostlist, load_slurm, network_from_topology_conf, read_topology_conf
from liquidsched.traffic import all_to_all

DATA = Path(__file__).parent / "data"
CONF = DATA / "slurm" / "topology.conf"
RATES = DATA / "slurm" / "rates.yaml"
GBIT = 10**9 / 8  # bytes/s in 1 Gbit/s


def one_line(error: pytest.ExceptionInfo, *expected: str) -> str:
    message = str(error.value)
    assert "\n" not in message, message
    for text in expected:
        assert text in message, message
    return message


# -- hostlists -------------------------------------------------------------------------------------

HOSTLISTS = {
    "tux[0-3]": ["tux0", "tux1", "tux2", "tux3"],
    "tux[001-003,20]": ["tux001", "tux002", "tux003", "tux20"],     # each range its own width
    "n[8-11]": ["n8", "n9", "n10", "n11"],                           # no padding: width of "8"
    "n[08-11]": ["n08", "n09", "n10", "n11"],
    "n[1-0010]": ["n1", "n2", "n3", "n4", "n5", "n6", "n7", "n8", "n9", "n10"],  # width is lo's
    "rack[1-2]-n[1-2]": ["rack1-n1", "rack1-n2", "rack2-n1", "rack2-n2"],
    "a,b c\tlogin": ["a", "b", "c", "login"],
    "tux[1,3],tux[5-6]": ["tux1", "tux3", "tux5", "tux6"],
    "[1-2]": ["1", "2"],
    "tux5": ["tux5"],
    "s[0-2,4-8,12]": ["s0", "s1", "s2", "s4", "s5", "s6", "s7", "s8", "s12"],  # Slurm's own example
    "": [],
}


@pytest.mark.parametrize("expression", HOSTLISTS)
def test_hostlist_expands_as_slurm_does(expression):
    assert expand_hostlist(expression) == HOSTLISTS[expression]


BAD_HOSTLISTS = {
    "n[3-1]": "range 3-1 goes down",
    "n[1-2": "'[' without ']'",
    "n1-2]": "']' without '['",
    "n[[1]]": "'[' inside brackets",
    "n[]": "expected a number or a range",
    "n[1,,2]": "expected a number or a range",
    "n[a-b]": "expected a number or a range",
    "n[-1]": "expected a number or a range",
    "n[1-2]x": "text after the last ']'",
    "n[0-99999999]": "more than 1,000,000 names",
    "a[0-999]b[0-9999]": "more than 1,000,000 names",
}


@pytest.mark.parametrize("expression", BAD_HOSTLISTS)
def test_a_bad_hostlist_is_one_line(expression):
    with pytest.raises(TopologyError) as e:
        expand_hostlist(expression, "f.conf: line 4: Nodes")
    assert one_line(e, BAD_HOSTLISTS[expression]).startswith("f.conf: line 4: Nodes: ")


# -- topology.conf ---------------------------------------------------------------------------------


def test_lines_comments_continuations_and_quotes():
    text = ('# c\nswitchname=s0 NODES="n[1-2], n5" # trailing\n\n'
            'SwitchName=s1 \\\n   Switches=s0 \\\n   LinkSpeed=7\nSwitchName=s\\#2 Switches=s1\n')
    lines = read_topology_conf(text)
    assert [(s.name, s.nodes, s.switches, s.link_speed, s.line) for s in lines] == [
        ("s0", ("n1", "n2", "n5"), (), None, 2),
        ("s1", (), ("s0",), 7, 4),
        ("s#2", (), ("s1",), None, 7),
    ]


def slurm_net(**rates):
    return load_slurm(CONF, **rates)


def test_tree_routes_up_to_the_common_ancestor_and_down():
    net = slurm_net(hosts="10Gbit/s", switches="40Gbit/s")
    assert net.switches() == ["leaf0", "leaf1", "root"]
    assert net.hosts() == [f"tux{i:02d}" for i in range(8)]
    # Under one leaf: up and down that leaf only.
    assert net.route("tux00", "tux03") == ("tux00>leaf0", "leaf0>tux03")
    # Across leaves: up to the root and down.
    assert net.route("tux00", "tux05") == ("tux00>leaf0", "leaf0>root", "root>leaf1", "leaf1>tux05")
    assert net.route("tux07", "tux01") == ("tux07>leaf1", "leaf1>root", "root>leaf0", "leaf0>tux01")
    # A host to itself: through its switch (the liquidsched convention).
    assert net.route("tux02", "tux02") == ("tux02>leaf0", "leaf0>tux02")


def test_rates_from_the_options():
    net = slurm_net(hosts="10Gbit/s", switches="40Gbit/s")
    assert {l.capacity_Bps for lid, l in net.links.items() if "tux" in lid} == {10 * GBIT}
    assert {l.capacity_Bps for lid, l in net.links.items() if "tux" not in lid} == {40 * GBIT}
    assert len(net.links) == 2 * (8 + 2)


def test_rates_from_the_side_file_before_the_options():
    net = slurm_net(hosts="1Gbit/s", switches="40Gbit/s", rates=RATES)
    capacity = {lid: l.capacity_Bps for lid, l in net.links.items()}
    assert capacity["tux00>leaf0"] == capacity["leaf1>tux05"] == 10 * GBIT   # the file's default
    assert capacity["tux06>leaf1"] == capacity["leaf1>tux07"] == 25 * GBIT   # its entry
    assert capacity["leaf0>root"] == capacity["root>leaf1"] == 20 * GBIT     # the root's entry


def test_an_option_fills_what_the_side_file_leaves(tmp_path):
    side = tmp_path / "r.yaml"
    side.write_text("hosts: {tux00: 1Gbit/s}\n")
    net = slurm_net(hosts="10Gbit/s", switches="40Gbit/s", rates=side)
    assert net.links["tux00>leaf0"].capacity_Bps == 1 * GBIT
    assert net.links["tux01>leaf0"].capacity_Bps == 10 * GBIT
    assert net.links["leaf0>root"].capacity_Bps == 40 * GBIT


def test_liquid_bound_of_an_all_to_all_by_hand():
    # 8 hosts, 1 MB to every other: 56 transfers. A host cable carries 7 each way; a leaf's
    # uplink carries the 4 × 4 transfers between the leaves.
    net = slurm_net(hosts="10Gbit/s", switches="40Gbit/s")
    b = compute_bound(net, all_to_all(net, size_bytes=10**6))
    # Host cables: 7 MB / 1.25 GB/s = 5.6 ms; uplinks: 16 MB / 5 GB/s = 3.2 ms.
    assert b.transfers == 56
    assert b.duration_s == Fraction(56, 10_000)
    assert sorted(b.bottlenecks) == sorted(l for l in net.links if "tux" in l)
    assert b.liquid_throughput_Bps == 10**10    # 56 MB / 5.6 ms: every host at 10 Gbit/s
    # With the side file the root's cables run at 20 Gbit/s: 16 MB / 2.5 GB/s = 6.4 ms.
    net = slurm_net(rates=RATES)
    b = compute_bound(net, all_to_all(net, size_bytes=10**6))
    assert b.duration_s == Fraction(64, 10_000)
    assert sorted(b.bottlenecks) == ["leaf0>root", "leaf1>root", "root>leaf0", "root>leaf1"]
    assert b.liquid_throughput_Bps == Fraction(56 * 10**6) / Fraction(64, 10_000)  # 8.75 GB/s


TWO_LEVELS = "SwitchName=a Nodes=x[1-2]\nSwitchName=b Nodes=y[1-2]\nSwitchName=r Switches=a,b\n"

BAD_CONF = {
    "not key=value": ("SwitchName=a Nodes=x[1-2] fast\n", 1, "expected Key=Value, got 'fast'"),
    "unknown key": ("SwitchName=a Nodes=x1 Speed=3\n", 1, "unknown key 'Speed'"),
    "key twice": ("SwitchName=a Nodes=x1 nodes=x2\n", 1, "nodes given twice"),
    "not a switch line": ("NodeName=x1\n", 1, "expected a line starting with SwitchName="),
    "block plugin": ("BlockName=b1 Nodes=x[1-4]\n", 1, "topology/block"),
    "both children": ("SwitchName=a Nodes=x1 Switches=b\nSwitchName=b Nodes=y1\n", 1, "both Nodes and Switches"),
    "no children": ("SwitchName=a LinkSpeed=3\n", 1, "neither Nodes nor Switches"),
    "bad LinkSpeed": ("SwitchName=a Nodes=x1 LinkSpeed=10G\n", 1, "LinkSpeed: expected a whole number"),
    "bad hostlist": ("# x\nSwitchName=a Nodes=x[2-1]\n", 2, "Nodes: 'x[2-1]': range 2-1 goes down"),
    "listed twice": ("SwitchName=a Nodes=x1,x[1-2]\n", 1, "x1 is listed twice"),
    "switch twice": ("SwitchName=a Nodes=x1\nSwitchName=a Nodes=x2\n", 2, "switch a is defined twice (first on line 1)"),
    "undefined switch": ("SwitchName=a Nodes=x1\nSwitchName=r Switches=a,c\n", 2, "switch c has no SwitchName line"),
    "node under two switches": ("SwitchName=a Nodes=x[1-2]\nSwitchName=b Nodes=x2\nSwitchName=r Switches=a,b\n", 2,
                                "node x2 is under two switches, a (line 1) and b"),
    "node named as a switch": ("SwitchName=a Nodes=x1\nSwitchName=r Switches=a\nSwitchName=b Nodes=a\n", 3,
                               "a is both a node and a switch"),
    "cycle": (TWO_LEVELS + "SwitchName=c Switches=d\nSwitchName=d Switches=c\n", 5, "switches form a cycle: c → d → c"),
    "cycle above a shared switch": ("SwitchName=a Nodes=x1\nSwitchName=r Switches=a\nSwitchName=r2 Switches=a,r3\n"
                                    "SwitchName=r3 Switches=r2\n", 4, "switches form a cycle: r2 → r3 → r2"),
    "include": ("Include other.conf\n", 1, "Include is not supported"),
}


@pytest.mark.parametrize("case", BAD_CONF)
def test_a_malformed_topology_conf_names_the_file_and_line(case, tmp_path):
    text, line, expected = BAD_CONF[case]
    path = tmp_path / "topology.conf"
    path.write_text(text)
    with pytest.raises(TopologyError) as e:
        load_slurm(path, hosts="1Gbit/s", switches="1Gbit/s")
    assert one_line(e, expected).startswith(f"{path}: line {line}: ")


def test_separate_trees_load_without_routes_between_them(caplog):
    # Slurm keeps a job within one fabric ("Jobs can only span nodes connected by the same switch
    # fabric") and warns "no switch can reach all nodes through its descendants".
    net = network_from_topology_conf("SwitchName=a Nodes=x1,x2\nSwitchName=b Nodes=y1\n", "t.conf", hosts=1)
    assert sorted(net.missing_routes) == [("x1", "y1"), ("y1", "x1")]
    assert net.route("x1", "x2") == ("x1>a", "a>x2")
    assert [r.getMessage() for r in caplog.records] == [
        't.conf: the switches form 2 separate fabrics, with roots a (line 1); b (line 2): as for Slurm ("no switch '
        'can reach all nodes through its descendants"), nodes under different ones cannot reach each other and their '
        "pairs have no route"]


TWO_FABRICS = DATA / "slurm" / "two-fabrics.conf"


def test_several_roots_route_within_each_fabric_and_refuse_across(caplog):
    net = load_slurm(TWO_FABRICS, hosts="10Gbit/s", switches="40Gbit/s")
    assert net.route("a1", "b2") == ("a1>rack1", "rack1>top1", "top1>rack2", "rack2>b2")
    assert net.route("c1", "c2") == ("c1>rack3", "rack3>c2")
    # Every pair across the fabrics, and only those, has no route.
    across = {(s, d) for s in net.hosts() for d in net.hosts() if (s[0] == "c") != (d[0] == "c")}
    assert {(s, d) for s in net.hosts() for d in net.hosts() if _no_route(net, s, d)} == across
    assert "roots top1 (line 5); rack3 (line 6)" in caplog.records[0].getMessage()
    # A traffic within a fabric is bound as usual: 2 MB from a1 to b1 and b2 at 10 Gbit/s.
    from liquidsched.traffic import Traffic, Transfer
    b = compute_bound(net, Traffic([Transfer("a1", "b1", 10**6), Transfer("a1", "b2", 10**6)]))
    assert b.duration_s == Fraction(2 * 10**6, 10 * 10**9 // 8) and b.bottlenecks == ["a1>rack1"]
    # One across them is refused, naming the pair.
    from liquidsched.errors import TrafficError

    with pytest.raises(TrafficError) as e:
        compute_bound(net, Traffic([Transfer("a1", "c1", 10**6)]))
    one_line(e, "(a1->c1): routing: no route from switch rack1 to switch rack3")


def _no_route(net, src, dst) -> bool:
    try:
        net.route(src, dst)
    except TopologyError:
        return True
    return False


def test_a_switch_under_several_parents_routes_up_and_down_by_d_mod_k():
    # Two spines over two leaves: both spines are parents (and roots) of both leaves. Node i
    # (n1 is 0) is reached through spine i mod 2.
    net = network_from_topology_conf(TWO_LEVELS.replace("SwitchName=r Switches=a,b", "SwitchName=r Switches=a,b\n"
                                                        "SwitchName=r2 Switches=a,b"), hosts=1, switches=1)
    assert net.route("x1", "y1") == ("x1>a", "a>r", "r>b", "b>y1")        # y1 is node 2: spine r
    assert net.route("x1", "y2") == ("x1>a", "a>r2", "r2>b", "b>y2")      # y2 is node 3: spine r2
    assert net.route("y1", "x1") == ("y1>b", "b>r", "r>a", "a>x1")        # x1 is node 0
    assert net.route("y2", "x2") == ("y2>b", "b>r2", "r2>a", "a>x2")      # x2 is node 1
    assert net.route("x1", "x2") == ("x1>a", "a>x2")
    assert not net.missing_routes


FAT_TREE_CONF = DATA / "slurm" / "fat-tree.conf"


def test_a_fat_tree_as_generators_write_it_routes_as_d_mod_k():
    net = load_slurm(FAT_TREE_CONF, hosts="10Gbit/s", switches="10Gbit/s")
    assert len(net.hosts()) == 16 and len(net.switches()) == 20 and not net.missing_routes
    # Worked by hand: h1.1.0 is node 6, up through aggregation 6 mod 2 = 0 and, at level 1,
    # core ⌊6 / 2⌋ mod 2 = 1 of a0.0's two (c0, c1): c1; h1.1.1 is node 7: a0.1, then c3.
    assert net.route("h0.0.0", "h1.1.0") == ("h0.0.0>e0.0", "e0.0>a0.0", "a0.0>c1", "c1>a1.0", "a1.0>e1.1",
                                             "e1.1>h1.1.0")
    assert net.route("h0.0.0", "h1.1.1") == ("h0.0.0>e0.0", "e0.0>a0.1", "a0.1>c3", "c3>a1.1", "a1.1>e1.1",
                                             "e1.1>h1.1.1")
    # Within a pod: up to aggregation (node index mod 2) and down; h0.1.1 is node 3.
    assert net.route("h0.0.0", "h0.1.1") == ("h0.0.0>e0.0", "e0.0>a0.1", "a0.1>e0.1", "e0.1>h0.1.1")
    # The same routes as liquidsched's own 4-ary fat tree with D-mod-k, for every pair.
    from liquidsched.topologies.fat_tree import fat_tree

    ref = fat_tree(4)
    assert sorted(ref.hosts()) == sorted(net.hosts())
    assert all(net.route(s, d) == ref.route(s, d) for s in net.hosts() for d in net.hosts())


def test_liquid_bound_of_the_fat_tree_by_hand():
    # D-mod-k on a 1:1 fat tree spreads an all-to-all evenly: a node's cable carries 15 transfers
    # each way; an edge switch's 2 nodes send 28 out of it, 14 per up link (by destination
    # parity); a pod's 4 nodes send 48 out of it, 12 per core link. The nodes' cables bind.
    net = load_slurm(FAT_TREE_CONF, hosts="10Gbit/s", switches="10Gbit/s")
    b = compute_bound(net, all_to_all(net, size_bytes=10**6))
    assert b.transfers == 16 * 15
    assert b.duration_s == Fraction(15 * 10**6, 10 * 10**9 // 8)      # 15 MB at 1.25 GB/s = 12 ms
    assert sorted(b.bottlenecks) == sorted(l for l in net.links if l.startswith("h") or ">h" in l)


def test_a_multi_parent_fabric_saves_and_loads_with_its_routes(tmp_path):
    from liquidsched import load_topology, save_topology

    net = load_slurm(FAT_TREE_CONF, hosts="10Gbit/s", switches="10Gbit/s")
    save_topology(net, tmp_path / "fat.yaml")
    back = load_topology(tmp_path / "fat.yaml")
    assert all(back.route(s, d) == net.route(s, d) for s in net.hosts() for d in net.hosts())


def test_an_empty_file_is_refused():
    with pytest.raises(TopologyError, match=r"^t.conf: no SwitchName line$"):
        network_from_topology_conf("# nothing\n\n", "t.conf", hosts=1)


RATE_ERRORS = {
    "no host rate": ({"switches": "1Gbit/s"}, None, "line 1: no rate for the cable of node x1: give hosts=RATE"),
    "no switch rate": ({"hosts": "1Gbit/s"}, None, "line 3: no rate for the cables of switch r down: give switches=RATE"),
    "unknown node": ({}, "hosts: {z9: 1Gbit/s}\nswitches: 1Gbit/s\n", "r.yaml: hosts: z9 is not a node"),
    "leaf under switches": ({}, "hosts: 1Gbit/s\nswitches: {a: 1Gbit/s}\n", "r.yaml: switches: a has no child switches"),
    "name twice": ({}, "hosts: {x1: 1Gbit/s, 'x[1-2]': 2Gbit/s}\nswitches: 1Gbit/s\n", "x1 already has a rate from key 'x1'"),
    "bad unit": ({}, "hosts: 1Gbps/s\nswitches: 1Gbit/s\n", "r.yaml: hosts: unknown unit"),
    "unknown field": ({}, "host: 1Gbit/s\n", "r.yaml: unknown field 'host'"),
}


@pytest.mark.parametrize("case", RATE_ERRORS)
def test_missing_or_bad_rates_are_one_line(case, tmp_path):
    options, side, expected = RATE_ERRORS[case]
    conf = tmp_path / "t.conf"
    conf.write_text(TWO_LEVELS)
    if side is not None:
        (tmp_path / "r.yaml").write_text(side)
        options = {**options, "rates": tmp_path / "r.yaml"}
    with pytest.raises(TopologyError) as e:
        load_slurm(conf, **options)
    one_line(e, expected)


@pytest.mark.parametrize("rates", [["r.yaml"], 5], ids=["list", "int"])
def test_rates_of_the_wrong_type_are_one_line(rates):
    with pytest.raises(TopologyError) as e:
        network_from_topology_conf(TWO_LEVELS, "t.conf", hosts=1, switches=1, rates=rates)
    one_line(e, "rates: expected the path of a rates file or its parsed mapping", type(rates).__name__)


# -- InfiniBand ------------------------------------------------------------------------------------

from liquidsched.io.infiniband import link_rate_Bps, load_infiniband, network_from_infiniband  # noqa: E402
from liquidsched.network import Network  # noqa: E402
from liquidsched.routing import ShortestPath  # noqa: E402

FABRIC = DATA / "infiniband" / "fabric.txt"
LFTS = DATA / "infiniband" / "lfts.txt"


@pytest.fixture(scope="module")
def ib_net():
    return load_infiniband(FABRIC, LFTS)


RATES_BY_HAND = {  # lanes × data rate per lane after encoding, in Gbit/s
    "1xSDR": 2, "4xSDR": 8, "12xSDR": 24, "4xDDR": 16, "4xQDR": 32, "8xQDR": 64, "4xFDR10": 40,
    "4xFDR": Fraction(4 * 140625 * 64, 10**4 * 66), "4xEDR": 100, "2xEDR": 50, "4xHDR": 200,
    "1xHDR": 50, "4xNDR": 400, "2xNDR": 200, "4xXDR": 800,
}


@pytest.mark.parametrize("text", RATES_BY_HAND)
def test_link_rate_from_width_and_speed(text):
    assert link_rate_Bps(text) == pytest.approx(float(Fraction(RATES_BY_HAND[text]) * 10**9 / 8), rel=1e-15)


@pytest.mark.parametrize("text", ["4x???", "??QDR", "3xQDR", "4xqdr", "QDR", "4xEDR2"])
def test_an_unknown_width_or_speed_is_refused(text):
    with pytest.raises(ValueError, match="expected a link width and speed"):
        link_rate_Bps(text)


def test_hosts_switches_and_rates_of_the_fabric(ib_net):
    assert ib_net.switches() == ["leaf1", "leaf2", "spine1", "spine2"]
    assert ib_net.hosts() == ["node1", "node2", "node3", "node4"]
    capacity = {lid: l.capacity_Bps for lid, l in ib_net.links.items()}
    assert capacity["node1>leaf1"] == capacity["leaf1>node1"] == 100 * GBIT           # 4xEDR
    assert capacity["node4>leaf2"] == pytest.approx(4 * 150 / 11 * GBIT, rel=1e-15)   # 4xFDR
    assert capacity["leaf2>spine2"] == capacity["spine2>leaf2"] == 96 * GBIT         # 12xQDR
    assert capacity["leaf1>spine2"] == capacity["leaf2>spine1"] == 200 * GBIT        # 4xHDR
    # Two parallel 4xHDR cables between leaf1 and spine1: one link each way, their sum.
    assert capacity["leaf1>spine1"] == capacity["spine1>leaf1"] == 400 * GBIT
    assert len(capacity) == 2 * 8


# Worked by hand from lfts.txt: leaf1 sends node3 (LID 13) up port 5 (spine1) and node4 (14)
# up port 4 (spine2); leaf2 sends node1 (11) up port 4 (spine2) and node2 (12) up port 3 (spine1).
ROUTES_BY_HAND = {
    ("node1", "node2"): ["node1", "leaf1", "node2"],
    ("node1", "node3"): ["node1", "leaf1", "spine1", "leaf2", "node3"],
    ("node1", "node4"): ["node1", "leaf1", "spine2", "leaf2", "node4"],
    ("node2", "node3"): ["node2", "leaf1", "spine1", "leaf2", "node3"],
    ("node2", "node4"): ["node2", "leaf1", "spine2", "leaf2", "node4"],
    ("node3", "node1"): ["node3", "leaf2", "spine2", "leaf1", "node1"],
    ("node3", "node2"): ["node3", "leaf2", "spine1", "leaf1", "node2"],
    ("node4", "node1"): ["node4", "leaf2", "spine2", "leaf1", "node1"],
    ("node4", "node2"): ["node4", "leaf2", "spine1", "leaf1", "node2"],
    ("node3", "node4"): ["node3", "leaf2", "node4"],
    ("node2", "node2"): ["node2", "leaf1", "node2"],   # leaf1's entry for LID 12 is port 2 back
}


@pytest.mark.parametrize("pair", ROUTES_BY_HAND)
def test_routes_follow_the_forwarding_tables_hop_by_hop(ib_net, pair):
    nodes = ROUTES_BY_HAND[pair]
    assert ib_net.route(*pair) == tuple(f"{a}>{b}" for a, b in zip(nodes, nodes[1:]))


def test_the_network_routes_by_the_tables_one_entry_per_switch_and_host(ib_net):
    # From ROUTES_BY_HAND: the switches the routes to each host cross, but its own leaf, whose
    # cable reaches it.
    assert ib_net.routing.policy == "forwarding"
    assert ib_net.routing.table == {
        "leaf2": {"node1": "spine2", "node2": "spine1"},
        "spine2": {"node1": "leaf1", "node4": "leaf2"},
        "spine1": {"node2": "leaf1", "node3": "leaf2"},
        "leaf1": {"node3": "spine1", "node4": "spine2"},
    }


def test_the_routes_are_not_shortest_path_tie_breaks(ib_net):
    shortest = Network(ib_net.nodes.values(), ib_net.links.values(), ShortestPath())
    differ = [p for p in ROUTES_BY_HAND if shortest.route(*p) != ib_net.route(*p)]
    # Shortest path breaks the leaf1/leaf2 tie by declaration order: always spine1.
    assert differ == [("node1", "node4"), ("node2", "node4"), ("node3", "node1"), ("node4", "node1")]


def test_liquid_bound_on_the_fabric_by_hand(ib_net):
    # All-to-all of 1 MB among the 4 hosts: node4's 4xFDR cable (600/11 Gbit/s) carries 3 each
    # way, the slowest of everything: Λ = 3 MB / (600/11 Gbit/s) = 3e6 · 88 / 600e9 s = 0.44 ms.
    b = compute_bound(ib_net, all_to_all(ib_net, size_bytes=10**6))
    assert b.transfers == 12
    assert b.bottlenecks == ["leaf2>node4", "node4>leaf2"]
    assert float(b.duration_s) == pytest.approx(3e6 / (600e9 / 11 / 8), rel=1e-12)


def test_a_saved_fabric_loads_back_with_the_same_routes(ib_net, tmp_path):
    from liquidsched import load_topology, save_topology

    save_topology(ib_net, tmp_path / "fabric.yaml")
    back = load_topology(tmp_path / "fabric.yaml")
    assert all(back.route(s, d) == ib_net.route(s, d) for s in back.hosts() for d in back.hosts())
    assert [l.capacity_Bps for l in back.links.values()] == [l.capacity_Bps for l in ib_net.links.values()]


NAMING_FABRIC = """\
Switch\t8 "S-0000000000000001"\t\t# "MF0;sw:SX6036/U1" enhanced port 0 lid 1 lmc 0
[1]\t"H-00000000000000a0"[1](a1) \t\t# "node5 mlx5_0" lid 11 4xEDR
[2]\t"H-00000000000000b0"[1](b1) \t\t# "node5 mlx5_1" lid 12 4xEDR
[3]\t"H-00000000000000c0"[1](c1) \t\t# "" lid 13 4xEDR
[4]\t"H-00000000000000d0"[1](d1) \t\t# "node6 HCA-1" lid 14 4xEDR
[5]\t"H-00000000000000d0"[2](d2) \t\t# "node6 HCA-1" lid 15 4xEDR

Ca\t1 "H-00000000000000a0"\t\t# "node5 mlx5_0"
[1](a1) \t"S-0000000000000001"[1]\t\t# lid 11 lmc 0 "MF0;sw:SX6036/U1" lid 1 4xEDR

Ca\t1 "H-00000000000000b0"\t\t# "node5 mlx5_1"
[1](b1) \t"S-0000000000000001"[2]\t\t# lid 12 lmc 0 "MF0;sw:SX6036/U1" lid 1 4xEDR

Ca\t1 "H-00000000000000c0"\t\t# ""
[1](c1) \t"S-0000000000000001"[3]\t\t# lid 13 lmc 0 "MF0;sw:SX6036/U1" lid 1 4xEDR

Ca\t2 "H-00000000000000d0"\t\t# "node6 HCA-1"
[1](d1) \t"S-0000000000000001"[4]\t\t# lid 14 lmc 0 "MF0;sw:SX6036/U1" lid 1 4xEDR
[2](d2) \t"S-0000000000000001"[5]\t\t# lid 15 lmc 0 "MF0;sw:SX6036/U1" lid 1 4xEDR
"""
NAMING_LFTS = ("Unicast lids [0x1-0xf] of switch Lid 1 guid 0x0000000000000001 (MF0;sw:SX6036/U1):\n"
               + "".join(f"0x{lid:04x} {lid - 10:03d}\n" for lid in range(11, 16)) + "5 valid lids dumped\n")


def test_host_names_from_descriptions_with_fallbacks():
    net = network_from_infiniband(NAMING_FABRIC, NAMING_LFTS)
    # Two CAs of one machine share "node5": their whole descriptions; no description: the port
    # GUID; a CA with two connected ports: the description and the port.
    assert net.hosts() == ["node5_mlx5_0", "node5_mlx5_1", "0x00000000000000c1", "node6_HCA-1-p1", "node6_HCA-1-p2"]
    assert net.switches() == ["MF0;sw:SX6036/U1"]
    assert net.route("node6_HCA-1-p1", "node6_HCA-1-p2") == ("node6_HCA-1-p1>MF0;sw:SX6036/U1",
                                                             "MF0;sw:SX6036/U1>node6_HCA-1-p2")


def variant(tmp_path, path: Path, old: str | tuple, new: str | None = None) -> Path:
    """A copy of ``path`` with an edit (``old`` → ``new``) or several (``old`` a tuple of pairs),
    each replacing the first occurrence, which must exist."""
    edits = old if isinstance(old, tuple) else ((old, new),)
    text = path.read_text()
    for before, after in edits:
        assert before in text, before
        text = text.replace(before, after, 1)
    out = tmp_path / path.name
    out.write_text(text)
    return out


def line_of(path: Path, text: str) -> int:
    return next(i for i, line in enumerate(path.read_text().splitlines(), 1) if text in line)


LEAF1_TO_NODE3 = "0x000d 005 : (Channel Adapter portguid 0x0002c90300000031: 'node3 mlx5_0')"

BAD_LFTS = {  # edit of lfts.txt, the line the error names (a text on it), what it says
    "missing LID": (((LEAF1_TO_NODE3 + "\n", ""), ("8 valid", "7 valid")), "of switch Lid 1 guid",
                    "the table of switch leaf1 has no entry for LID 0x000d (node3) (needed for node1 → node3)"),
    "loop": ("0x000d 002 : (Channel Adapter portguid 0x0002c90300000031", "0x000d 001 : (edited", "0x000d 001 : (edited",
             "the tables loop for LID 0x000d (node3): leaf1 → spine1 → leaf1 (from node1)"),
    "port without cable": (LEAF1_TO_NODE3, LEAF1_TO_NODE3.replace("005", "007"), "0x000d 007",
                           "switch leaf1 sends LID 0x000d (node3) out of port 7, which has no cable"),
    "wrong CA": (LEAF1_TO_NODE3, LEAF1_TO_NODE3.replace("005", "002"), "0x000d 002 : (Channel Adapter portguid 0x0002c90300000031",
                 "the route for LID 0x000d (node3) ends at node2"),
    "port 0": (LEAF1_TO_NODE3, LEAF1_TO_NODE3.replace("005", "000"), "0x000d 000",
               "switch leaf1 keeps LID 0x000d (node3) for itself (port 0)"),
    "malformed entry": (LEAF1_TO_NODE3, "0x000d five", "0x000d five", "cannot read '0x000d five'"),
    "count": ("8 valid lids dumped", "9 valid lids dumped", "9 valid lids dumped", "says 9 lids but the table from line 1 has 8"),
    "truncated": ("8 valid lids dumped \nUnicast lids [0x0-0xe] of switch Lid 2", "Unicast lids [0x0-0xe] of switch Lid 2",
                  "of switch Lid 2", "a new table before the 'lids dumped' line of the one on line 1"),
    "unknown switch": ("Lid 4 guid 0x0002c90200000004", "Lid 4 guid 0x0002c90200000009", "Lid 4 guid 0x0002c90200000009",
                       "switch guid 0x0002c90200000009 is not a switch of"),
    "LID out of range": ("0x000e 004 : (Channel Adapter portguid 0x0002c90300000041", "0x00ee 004 : (C", "0x00ee 004",
                         "LID 0x00ee outside the table's range [0x0-0xe]"),
    "multicast": ("Unicast lids [0x0-0xe] of switch Lid 1", "Multicast mlids [0xc000-0xc001] of switch Lid 1",
                  "Multicast", "a multicast table"),
}


@pytest.mark.parametrize("case", BAD_LFTS)
def test_a_bad_forwarding_table_names_the_file_and_line(case, tmp_path):
    *edit, on_line, expected = BAD_LFTS[case]
    lfts = variant(tmp_path, LFTS, *edit)
    with pytest.raises(TopologyError) as e:
        load_infiniband(FABRIC, lfts)
    assert one_line(e, expected).startswith(f"{lfts}: line {line_of(lfts, on_line)}: ")


BAD_FABRIC = {  # edit of fabric.txt, the line the error names (a text on it), what it says
    "malformed port line": ('[2]\t"S-0002c90200000002"[4]\t\t# "leaf2" lid 2 12xQDR',
                            '[2]\t"S-0002c90200000002"[4]\t\t# leaf2 12xQDR', "# leaf2 12xQDR",
                            "expected '# \"description\" lid N 4xEDR' after the ports"),
    "unknown rate": ('"node2 HCA-1" lid 12 4xEDR', '"node2 HCA-1" lid 12 4x???', "4x???", "expected a link width and speed"),
    "ends disagree on the port": ('[4]\t"S-0002c90200000004"[1]', '[4]\t"S-0002c90200000004"[2]', '[4]\t"S-0002c90200000004"[2]',
                                  "leads to port 2 of S-0002c90200000004 ('spine2'), whose port line (line"),
    "port beyond the switch": ('[5]\t"S-0002c90200000003"[3]', '[37]\t"S-0002c90200000003"[3]', "[37]",
                               "port 37 of S-0002c90200000001 ('leaf1'), which has 36 ports"),
    "unknown peer": ('"H-0002c90300000020"[1](2c90300000021) ', '"H-0002c90300000099"[1](2c90300000021) ',
                     '"H-0002c90300000099"', "leads to guid 0x0002c90300000099, which has no block"),
    "port line outside a block": ("# Initiated from node", '[1]\t"S-0002c90200000001"[1]\t\t# "leaf1" lid 1 4xEDR\n# Initiated',
                                  '[1]\t"S-0002c90200000001"[1]', "a port line outside a Switch or Ca block"),
    "garbage": ("devid=0xcf08", "devid=cf08", "devid=cf08", "cannot read 'devid=cf08' as ibnetdiscover output"),
    "router": ("caguid=0x2c90300000040", "rtguid=0x2c90300000040", "rtguid", "routers are not supported"),
    "switch line": ("enhanced port 0 lid 4 lmc 0", "enhanced port 0", 'Switch\t36 "S-0002c90200000004"',
                    "expected 'enhanced port 0 lid N lmc N'"),
    "guid mismatch": ("caguid=0x2c90300000040", "caguid=0x2c90300000041", 'Ca\t1 "H-0002c90300000040"',
                      "follows caguid=0x2c90300000041"),
    "LID mismatch": ('"node1 HCA-1" lid 11 4xEDR', '"node1 HCA-1" lid 21 4xEDR', '"node1 HCA-1" lid 21',
                     "says H-0002c90300000010 ('node1 HCA-1') has LID 21, but line"),
}


@pytest.mark.parametrize("case", BAD_FABRIC)
def test_a_bad_ibnetdiscover_output_names_the_file_and_line(case, tmp_path):
    old, new, on_line, expected = BAD_FABRIC[case]
    fabric = variant(tmp_path, FABRIC, old, new)
    with pytest.raises(TopologyError) as e:
        load_infiniband(fabric, LFTS)
    assert one_line(e, expected).startswith(f"{fabric}: line {line_of(fabric, on_line)}: ")


# -- every forwarding-table format, and fabrics as real captures show them -------------------------

# The tables of lfts.txt (ibroute by LID, as the old dump_lfts.sh wrote them) as each tool writes
# them: dump_lfts.sh today (dump_fts's tables, then its "*** WARNING ***" trailer), dump_fts -n
# (switches by direct-route path, no destination info), ibroute -a for each switch (invalid
# entries too, port 255), and opensm's /var/log/opensm-lfts.dump (decimal range, '#' before the
# destination, its top LID on the last line).
LFT_FORMATS = ["lfts.txt", "dump_lfts.txt", "dump_fts.txt", "ibroute.txt", "opensm-lfts.dump"]


@pytest.mark.parametrize("name", LFT_FORMATS)
def test_every_lft_format_gives_the_same_routes(ib_net, name):
    net = load_infiniband(FABRIC, DATA / "infiniband" / name)
    hosts = net.hosts()
    assert hosts == ["node1", "node2", "node3", "node4"]
    assert all(net.route(s, d) == ib_net.route(s, d) for s in hosts for d in hosts)
    for pair, nodes in ROUTES_BY_HAND.items():
        assert net.route(*pair) == tuple(f"{a}>{b}" for a, b in zip(nodes, nodes[1:]))


def test_the_dump_lfts_trailer_is_skipped_with_a_note(caplog):
    lfts = DATA / "infiniband" / "dump_lfts.txt"
    load_infiniband(FABRIC, lfts)
    notes = [r.getMessage() for r in caplog.records if r.levelname == "WARNING"]
    assert notes == [f"{lfts}: line {line_of(lfts, '*** WARNING ***')}: skipped tool messages, not part of the "
                     "output (captured with 2>&1?): '*** WARNING ***: this command has been replaced by dump_fts'"]


def test_other_formats_load_without_a_note(caplog):
    for name in ("dump_fts.txt", "ibroute.txt", "opensm-lfts.dump"):
        load_infiniband(FABRIC, DATA / "infiniband" / name)
    assert not [r for r in caplog.records if r.levelname == "WARNING"]


@pytest.mark.parametrize("name, old, new, expected", [
    ("opensm-lfts.dump", "14 lids dumped", "8 lids dumped",
     "says 8 lids but the table from line 1 goes up to LID 14 (opensm writes its top LID here)"),
    ("ibroute.txt", "15 lids dumped", "14 lids dumped", "says 14 lids but the table from line 1 has 15"),
    ("dump_fts.txt", "0x000b 001 ", "0x000b one", "cannot read '0x000b one' as a forwarding table line"),
    ("dump_lfts.txt", "*** WARNING ***", "WARNING", "cannot read 'WARNING: this command"),
])
def test_each_lft_format_still_checks_its_lines(tmp_path, name, old, new, expected):
    lfts = variant(tmp_path, DATA / "infiniband" / name, old, new)
    with pytest.raises(TopologyError) as e:
        load_infiniband(FABRIC, lfts)
    assert one_line(e, expected).startswith(f"{lfts}: line {line_of(lfts, new)}: ")


@pytest.mark.parametrize("message", [
    "SubnGet(LFT) failed on switch 'leaf1' DR path slid 0; dlid 0; 0,1 Node GUID 0x2c90200000001 SMA LID 1; "
    "MAD status 0x0 AM 0x0",
    "ibwarn: [3217] dump_unicast_tables: illegal lft top 49152, truncate to 49151",
    "dump_fts: iberror: failed: Failed to discover fabric",
])
def test_tool_messages_in_a_table_file_are_skipped_with_a_note(ib_net, tmp_path, caplog, message):
    lfts = tmp_path / "dump_fts.txt"
    lfts.write_text(message + "\n" + (DATA / "infiniband" / "dump_fts.txt").read_text())
    net = load_infiniband(FABRIC, lfts)
    assert all(net.route(s, d) == ib_net.route(s, d) for s in net.hosts() for d in net.hosts())
    assert [r.getMessage() for r in caplog.records] == [
        f"{lfts}: line 1: skipped tool messages, not part of the output (captured with 2>&1?): {message[:80]!r}"]


def test_a_line_that_is_no_tool_message_is_still_refused(tmp_path):
    lfts = tmp_path / "dump_fts.txt"
    lfts.write_text("warning: something\n" + (DATA / "infiniband" / "dump_fts.txt").read_text())
    with pytest.raises(TopologyError) as e:
        load_infiniband(FABRIC, lfts)
    assert one_line(e, "cannot read 'warning: something' as a forwarding table line").startswith(f"{lfts}: line 1: ")


CAPTURED = DATA / "infiniband" / "fabric-captured.txt"
NODE3_AT_LEAF2 = '[1]\t"H-0002c90300000030"'


def test_a_captured_fabric_loads_with_a_note_for_each_oddity(ib_net, caplog):
    net = load_infiniband(CAPTURED, LFTS)
    notes = [r.getMessage() for r in caplog.records if r.levelname == "WARNING"]
    first = "ibnetdisc/src/query_smp.c:228; umad (DR path slid 0; dlid 0; 0,1,3 Attr 0xff90:0) bad status"
    assert notes == [
        f"{CAPTURED}: line 1 and 1 more: skipped tool messages, not part of the output (captured with 2>&1?): "
        f"{first[:80]!r}",
        f"{CAPTURED}: line {line_of(CAPTURED, '[7]')}: ignored port 7 of S-0002c90200000003 ('spine1') cabled to "
        "its own port 8: such a cable carries nothing between nodes",
        f"{CAPTURED}: line {line_of(CAPTURED, NODE3_AT_LEAF2)}: the two ends of a cable "
        f"disagree on its rate (4xEDR here, 1xEDR on line {line_of(CAPTURED, '1xEDR')}): it takes the lower",
    ]
    # The loopback cable is no link; the rest of the fabric is fabric.txt's, routed alike.
    assert sorted(net.links) == sorted(ib_net.links)
    assert all(net.route(s, d) == ib_net.route(s, d) for s in net.hosts() for d in net.hosts())
    # node3's cable runs at the lower end's rate, 1xEDR = 25 Gbit/s, both ways; the others as before.
    capacity = {lid: l.capacity_Bps for lid, l in net.links.items()}
    assert capacity["node3>leaf2"] == capacity["leaf2>node3"] == 25 * GBIT
    assert all(c == ib_net.links[lid].capacity_Bps for lid, c in capacity.items() if "node3" not in lid)


def test_a_route_out_of_a_self_cabled_port_names_the_table_line(tmp_path):
    # spine1 sends node2 (LID 12) out of port 7, whose cable comes back to port 8.
    entry = "0x000c 003 : (Channel Adapter portguid 0x0002c90300000021: 'node2 HCA-1')"
    text = LFTS.read_text()
    start = text.index("of switch Lid 3")
    lfts = tmp_path / "lfts.txt"
    lfts.write_text(text[:start] + text[start:].replace(entry, entry.replace("003", "007"), 1))
    with pytest.raises(TopologyError) as e:
        load_infiniband(CAPTURED, lfts)
    assert one_line(e, "switch spine1 sends LID 0x000c (node2) out of port 7, which is cabled back to the switch "
                    "itself").startswith(f"{lfts}: line {line_of(lfts, '0x000c 007')}: ")


def test_a_switch_without_a_table_names_its_line(tmp_path):
    text = LFTS.read_text()
    lfts = tmp_path / "lfts.txt"
    lfts.write_text(text[:text.index("Unicast lids [0x0-0xe] of switch Lid 4")])
    with pytest.raises(TopologyError) as e:
        load_infiniband(FABRIC, lfts)
    assert one_line(e, f"switch spine2 has no table in {lfts}").startswith(
        f"{FABRIC}: line {line_of(FABRIC, 'Switch' + chr(9) + '36 ' + chr(34) + 'S-0002c90200000004')}: ")


def test_the_grouping_and_full_annotations_are_read():
    text = FABRIC.read_text().replace('[4]\t"S-0002c90200000004"[1]\t\t# "spine2" lid 4 4xHDR',
                                      '[4][ext 4]\t"S-0002c90200000004"[1][ext 1]\t\t# "spine2" lid 4 4xHDR s=1 w=2 v=3')
    text = text.replace("switchguid=0x2c90200000001(2c90200000001)",
                        "Chassis 1 (guid 0x2c90200000001)\nswitchguid=0x2c90200000001(2c90200000001)\t# ISR9024 Spine 1")
    net = network_from_infiniband(text, LFTS.read_text())
    assert net.route("node1", "node4") == ("node1>leaf1", "leaf1>spine2", "spine2>leaf2", "leaf2>node4")


# -- loading by name, and the command line ---------------------------------------------------------

import json  # noqa: E402

from liquidsched import load_topology, resolve_topology  # noqa: E402

from .cli_run import run  # noqa: E402

SLURM_SPEC = f"slurm:{CONF},hosts=10Gbit/s,switches=40Gbit/s"
IB_SPEC = f"infiniband:{FABRIC},{LFTS}"


def test_resolve_topology_reads_both_prefixes(ib_net):
    net = resolve_topology(SLURM_SPEC)
    assert net.route("tux00", "tux05") == ("tux00>leaf0", "leaf0>root", "root>leaf1", "leaf1>tux05")
    assert resolve_topology(f"slurm:{CONF},rates={RATES}").links["leaf0>root"].capacity_Bps == 20 * GBIT
    assert resolve_topology(IB_SPEC) == ib_net


@pytest.mark.parametrize("spec, expected", [
    (f"slurm:{CONF},hosts=10Gbit/s,speed=3", "unknown option 'speed' (options: hosts, switches, rates)"),
    (f"slurm:{CONF},hosts=10Gbit/s,hosts=1Gbit/s", "option hosts given twice"),
    (f"slurm:{CONF},hosts=ten", "hosts: expected a rate in bytes/s"),
    ("slurm:", "expected slurm:PATH"),
    (f"infiniband:{FABRIC}", "expected infiniband:NETDISCOVER,LFTS"),
    ("infiniband:nothere.txt,lfts.txt", "nothere.txt: no such file"),
])
def test_a_bad_spec_is_one_line(spec, expected):
    with pytest.raises(TopologyError) as e:
        resolve_topology(spec)
    one_line(e, expected)


@pytest.mark.parametrize("path, expected", [(CONF, "read it as slurm:"), (FABRIC, "read it as infiniband:")])
def test_a_fabric_file_given_as_a_topology_file_says_how_to_read_it(path, expected):
    with pytest.raises(TopologyError) as e:
        resolve_topology(path)
    assert one_line(e, expected).startswith(f"{path}: ")


def test_bound_on_both_fabrics_from_the_command_line(capsys):
    code, out, err = run(capsys, "bound", "--topology", SLURM_SPEC, "--traffic", "all-to-all", "--json")
    assert code == 0, err
    assert json.loads(out)["duration_s"] == pytest.approx(0.0056)
    code, out, err = run(capsys, "bound", "--topology", IB_SPEC, "--traffic", "all-to-all", "--json")
    assert code == 0, err
    assert sorted(json.loads(out)["bottlenecks"]) == ["leaf2>node4", "node4>leaf2"]


def test_plan_show_and_export_from_the_command_line(capsys, tmp_path):
    code, _, err = run(capsys, "plan", "--topology", IB_SPEC, "--output", str(tmp_path / "s.json"))
    assert code == 0, err
    code, out, err = run(capsys, "topology", "show", SLURM_SPEC, "--json")
    assert code == 0, err
    assert json.loads(out)["hosts_per_switch"] == {"leaf0": 4, "leaf1": 4}
    for spec, name in ((SLURM_SPEC, "slurm.yaml"), (IB_SPEC, "ib.yaml")):
        code, _, err = run(capsys, "topology", "export", spec, "--output", str(tmp_path / name))
        assert code == 0, err
        net, back = resolve_topology(spec), load_topology(tmp_path / name)
        assert all(back.route(s, d) == net.route(s, d) for s in net.hosts() for d in net.hosts())


@pytest.mark.parametrize("make_spec, expected", [
    (lambda tmp: f"slurm:{variant(tmp, CONF, 'Switches=leaf[0-1]', 'Switches=leaf[0-2]')},hosts=1,switches=1",
     "line 7: switch leaf2 has no SwitchName line"),
    (lambda tmp: f"slurm:{CONF},hosts=1", "no rate for the cables of switch root down: give switches=RATE"),
    (lambda tmp: f"infiniband:{FABRIC},{variant(tmp, LFTS, LEAF1_TO_NODE3, LEAF1_TO_NODE3.replace('005', '009'))}",
     "switch leaf1 sends LID 0x000d (node3) out of port 9, which has no cable"),
])
def test_a_bad_fabric_on_the_command_line_is_one_line_without_traceback(capsys, tmp_path, make_spec, expected):
    code, out, err = run(capsys, "bound", "--topology", make_spec(tmp_path))
    assert code == 2
    assert err.startswith("liquidsched: error: ") and err.count("\n") == 1 and "Traceback" not in err, err
    assert expected in err

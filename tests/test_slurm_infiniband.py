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
    "two parents": (TWO_LEVELS + "SwitchName=r2 Switches=a\n", 4, "switch a has two parents, r (line 3) and r2"),
    "node under two switches": ("SwitchName=a Nodes=x[1-2]\nSwitchName=b Nodes=x2\nSwitchName=r Switches=a,b\n", 2,
                                "node x2 is under two switches, a (line 1) and b"),
    "node named as a switch": ("SwitchName=a Nodes=x1\nSwitchName=r Switches=a\nSwitchName=b Nodes=a\n", 3,
                               "a is both a node and a switch"),
    "cycle": (TWO_LEVELS + "SwitchName=c Switches=d\nSwitchName=d Switches=c\n", 5, "switches form a cycle: c → d → c"),
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


def test_separate_trees_cannot_reach_each_other():
    with pytest.raises(TopologyError) as e:
        network_from_topology_conf("SwitchName=a Nodes=x1\nSwitchName=b Nodes=y1\n", "t.conf", hosts=1)
    one_line(e, "t.conf: the switches form 2 separate trees, with roots a (line 1), b (line 2)")


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

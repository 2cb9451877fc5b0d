"""Topology files: exact round trip, and one clear line for each kind of malformed file."""

from __future__ import annotations

import json

import pytest
import yaml

from liquidsched import TopologyError, load_topology, save_topology
from liquidsched.io.topology import topology_from_dict
from liquidsched.topologies import BUILDERS, build_topology

SMALL = {"two-switch": "two-switch", "swiss-t1": "swiss-t1", "hierarchical": "hierarchical:d1=3,d2=3,shared_uplinks=true",
         "fat-tree": "fat-tree:k=4,oversubscription=2", "torus": "torus:dims=3/3", "mesh": "mesh:dims=2/3",
         "crossbar": "crossbar:n=4", "backbone": "backbone:n1=3,n2=2",
         "random": "random:switches=5,hosts=7,seed=3", "rail-optimised": "rail-optimised:servers=3,gpus=2",
         "two-tier": "two-tier:servers=5,gpus=2,servers_per_leaf=2", "dragonfly": "dragonfly:a=2,p=2,h=2,g=4"}


def test_every_builder_is_covered():
    assert set(SMALL) == set(BUILDERS)


@pytest.mark.parametrize("spec", SMALL.values())
@pytest.mark.parametrize("ext", ["yaml", "json"])
def test_round_trip_is_exact(spec, ext, tmp_path):
    net = build_topology(spec)
    path = tmp_path / f"net.{ext}"
    save_topology(net, path)
    back = load_topology(path)
    assert back == net
    assert back.resources == net.resources
    assert all(back.route(s, d) == net.route(s, d) for s in net.senders() for d in net.receivers())
    again = tmp_path / f"again.{ext}"
    save_topology(back, again)
    assert again.read_text() == path.read_text()


def test_short_form_with_units_and_cables():
    doc = yaml.safe_load("""
name: rack
defaults: {capacity_Bps: 10Gbit/s, latency_s: 1us}
switches: [s1, s2]
hosts: [a, b]
cables:
  - {a: a, b: s1}
  - {a: b, b: s2}
  - {a: s1, b: s2, capacity_Bps: 100MB/s, shared_duplex: true}
""")
    net = topology_from_dict(doc)
    assert net.links["a>s1"].capacity_Bps == 1.25e9
    assert net.links["a>s1"].latency_s == pytest.approx(1e-6)
    assert net.resources[-1] == "s1>s2|s2>s1"
    assert net.path_resources("a", "b") & net.path_resources("b", "a")  # the shared uplink


BASE = {
    "nodes": [{"id": "s", "kind": "switch"}, {"id": "h1"}, {"id": "h2"}],
    "links": [{"src": "h1", "dst": "s", "capacity_Bps": 100}, {"src": "s", "dst": "h1", "capacity_Bps": 100},
              {"src": "h2", "dst": "s", "capacity_Bps": 100}, {"src": "s", "dst": "h2", "capacity_Bps": 100}],
}


def broken(edit) -> dict:
    doc = json.loads(json.dumps(BASE))
    edit(doc)
    return doc


MALFORMED = {
    "missing field": (lambda d: d["links"][1].pop("dst"), "links[1]: missing field 'dst'"),
    "wrong type": (lambda d: d["links"][2].update(capacity_Bps=[1]), "links[2].capacity_Bps: expected a rate"),
    "unknown node": (lambda d: d["links"][3].update(dst="h9"), "links[3].dst: unknown node 'h9'"),
    "non-positive capacity": (lambda d: d["links"][0].update(capacity_Bps=0), "links[0].capacity_Bps: expected a rate from"),
    "duplicate id": (lambda d: d["nodes"].append({"id": "h1"}), "nodes[3].id: duplicate id 'h1'"),
    "host without a link": (lambda d: [d["links"].pop(3), d["links"].pop(2)], "nodes[2]: host h2 has no link"),
    "unknown field": (lambda d: d["links"][0].update(capacity=5), "links[0]: unknown field 'capacity'"),
    "bad kind": (lambda d: d["nodes"][0].update(kind="router"), "nodes[0].kind: expected 'host' or 'switch'"),
}


@pytest.mark.parametrize("case", MALFORMED)
def test_malformed_file_names_the_field(case, tmp_path):
    edit, expected = MALFORMED[case]
    path = tmp_path / "bad.yaml"
    path.write_text(yaml.safe_dump(broken(edit)))
    with pytest.raises(TopologyError) as e:
        load_topology(path)
    message = str(e.value)
    assert message.startswith(f"{path}: ") and expected in message
    assert "\n" not in message


def test_a_pair_without_a_route_loads_and_is_listed():
    # h2's cable down is gone: h1 cannot reach it, which a traffic that needs it will be told.
    net = topology_from_dict(broken(lambda d: d["links"].pop(3)))
    assert [pair for pair in net.missing_routes] == [("h1", "h2"), ("h2", "h2")]
    assert "no route from h1 to h2" in str(net.missing_routes[("h1", "h2")])
    assert net.route("h2", "h1") == ("h2>s", "s>h1")


def test_routing_loop_is_reported():
    doc = yaml.safe_load("""
switches: [s1, s2, s3]
hosts: [a, b]
cables: [{a: a, b: s1, capacity_Bps: 1}, {a: b, b: s3, capacity_Bps: 1},
         {a: s1, b: s2, capacity_Bps: 1}, {a: s2, b: s3, capacity_Bps: 1}]
routing: {policy: next-hop, table: {s1: {s3: s2}, s2: {s3: s1}}}
""")
    with pytest.raises(TopologyError, match=r"routing.table: route from s1 to s3 loops: s1 → s2 → s1"):
        topology_from_dict(doc)


def test_next_hop_must_be_a_neighbour():
    doc = yaml.safe_load("""
switches: [s1, s2, s3]
hosts: [a, b]
cables: [{a: a, b: s1, capacity_Bps: 1}, {a: b, b: s3, capacity_Bps: 1},
         {a: s1, b: s2, capacity_Bps: 1}, {a: s2, b: s3, capacity_Bps: 1}]
routing: {policy: next-hop, table: {s1: {s3: s3}}}
""")
    with pytest.raises(TopologyError, match=r"routing.table.s1.s3: switch s1 has no link to next hop s3"):
        topology_from_dict(doc)


def test_explicit_paths_are_checked():
    doc = broken(lambda d: d.update(routing={"policy": "paths", "paths": [
        {"src": "h1", "dst": "h2", "via": ["h1", "s", "h2"]},
        {"src": "h2", "dst": "h1", "via": ["h2", "h1"]}]}))
    with pytest.raises(TopologyError, match=r"route h2 → h1 needs a link h2 → h1"):
        topology_from_dict(doc)


def test_invalid_yaml_is_one_line(tmp_path):
    path = tmp_path / "bad.yaml"
    path.write_text("nodes: [a, b\nlinks: {")
    with pytest.raises(TopologyError, match=r"not valid YAML: .* at line \d+, column \d+") as e:
        load_topology(path)
    assert "\n" not in str(e.value)


# -- forwarding tables written as one array ---------------------------------------------------------


@pytest.mark.parametrize("suffix", [".json", ".yaml"])
def test_a_builder_s_forwarding_array_is_written_as_an_array_and_read_back_to_the_same_routes(tmp_path, suffix):
    net = build_topology("fat-tree:k=6")
    path = tmp_path / f"ft{suffix}"
    save_topology(net, path)
    doc = json.loads(path.read_text()) if suffix == ".json" else yaml.safe_load(path.read_text())
    assert set(doc["routing"]) == {"policy", "nodes", "destinations", "next"}
    again = load_topology(path)
    assert again.routing == net.routing
    hosts = net.hosts()
    assert all(again.route(a, b) == net.route(a, b) for a in hosts for b in hosts)


def test_tables_written_by_hand_stay_tables(tmp_path):
    doc = {"hosts": ["a", "b"], "switches": ["s1", "s2"], "defaults": {"capacity_Bps": "1Gbit/s"},
           "cables": [{"a": "a", "b": "s1"}, {"a": "b", "b": "s2"}, {"a": "s1", "b": "s2"}],
           "routing": {"policy": "forwarding", "table": {"s1": {"b": "s2"}, "s2": {"a": "s1"}}}}
    path = tmp_path / "t.json"
    save_topology(topology_from_dict(doc, "t"), path)
    assert set(json.loads(path.read_text())["routing"]) == {"policy", "table"}


@pytest.mark.parametrize("change, message", [
    (lambda r: r.update(next=r["next"][:-1]), r"next: \d+ rows for \d+ destinations"),
    (lambda r: r["next"][0].append(0), r"next: expected \d+ rows of \d+ whole numbers"),
    (lambda r: r["next"][1].__setitem__(2, 999), r"next\[1\]\[2\]: 999 is not a node's index"),
    (lambda r: r["next"][0].__setitem__(0, -3), r"next\[0\]\[0\]: -3 is not a node's index"),
    (lambda r: r["next"][0].__setitem__(0, "e1"), r"next: expected \d+ rows of \d+ whole numbers"),
    (lambda r: r["nodes"].append(r["nodes"][0]), "nodes: a node is listed twice"),
])
def test_a_forwarding_array_that_is_wrong_is_refused_naming_where(change, message):
    from liquidsched.io.topology import topology_to_dict

    doc = topology_to_dict(build_topology("fat-tree:k=4"))
    change(doc["routing"])
    with pytest.raises(TopologyError, match=message):
        topology_from_dict(doc, "t")

"""Routing as switches do it: forwarding tables by destination host (D-mod-k in fat trees),
networks of hosts cabled to each other, and networks that route only some pairs."""

from __future__ import annotations

import json
import random
from collections import deque
from fractions import Fraction

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from liquidsched import compute_bound
from liquidsched.errors import MissingRouteError, RoutingError, TopologyError, TrafficError
from liquidsched.io.topology import load_topology, save_topology, topology_from_dict
from liquidsched.network import HOST, SWITCH, Link, Network, Node
from liquidsched.routing import Forwarding
from liquidsched.steady import Platform, PlatformEdge, PlatformNode, Series, solve_steady
from liquidsched.topologies import build_topology
from liquidsched.traffic import Traffic, Transfer, all_to_all, scatter

from .strategies import networks
from .test_scale import assert_routes_as_reference, bfs_tables, reference_bound, uneven_traffics


def _cable(a: str, b: str, capacity: float) -> list[Link]:
    return [Link(f"{a}>{b}", a, b, capacity), Link(f"{b}>{a}", b, a, capacity)]


# -- D-mod-k fat trees -----------------------------------------------------------------------------


@pytest.mark.parametrize("k", [4, 6, 8])
def test_d_mod_k_all_to_all_is_bound_by_the_hosts_links(k):
    # n = k³/4 hosts, k/2 on an edge switch. A host link carries n - 1 transfers. Traffic to host
    # d climbs to aggregation d mod k/2, so an edge up link carries its k/2 hosts' transfers to
    # the n/(k/2) hosts of that residue, less the one under the same edge switch: n - k/2. An
    # aggregation-core link carries the (k/2)² hosts of its pod to the one host of each other pod
    # whose residues pick that core: (k/2)² (k - 1).
    net = build_topology(f"fat-tree:k={k}")
    n, half = k ** 3 // 4, k // 2
    counts = compute_bound(net, all_to_all(net)).counts
    assert counts["h0.0.0>e0.0"] == counts["e0.0>h0.0.0"] == n - 1
    assert {counts[f"e0.0>a0.{x}"] for x in range(half)} == {n - half}
    assert {counts[f"a0.{x}>e0.0"] for x in range(half)} == {n - half}
    assert {counts[f"a0.0>c{z}"] for z in range(half)} == {half * half * (k - 1)}
    assert max(counts.values()) == n - 1


def test_d_mod_k_is_four_times_less_loaded_than_routing_by_edge_switch_at_k_8():
    # The figures: 496 transfers on an aggregation-to-edge link by edge switch, 127 on
    # the host links by destination host.
    by_host = compute_bound(build_topology("fat-tree:k=8"), all_to_all(build_topology("fat-tree:k=8")))
    by_edge = build_topology("fat-tree:k=8,routing=by-edge-switch")
    by_edge_bound = compute_bound(by_edge, all_to_all(by_edge))
    assert max(by_host.counts.values()) == 127 and len(by_host.bottlenecks) == 2 * 128
    assert all(r.startswith("h") or ">h" in r for r in by_host.bottlenecks)
    assert max(by_edge_bound.counts.values()) == 496
    assert by_edge_bound.duration_s / by_host.duration_s == Fraction(496, 127)


def test_d_mod_k_routes_follow_the_residues_of_the_destination():
    net = build_topology("fat-tree:k=4")
    # Host h1.1.1 is host 7: aggregation 7 mod 2 = 1, core 1·2 + (7 div 2) mod 2 = 3.
    assert net.route("h0.0.0", "h1.1.1") == ("h0.0.0>e0.0", "e0.0>a0.1", "a0.1>c3", "c3>a1.1", "a1.1>e1.1",
                                             "e1.1>h1.1.1")
    # Inside a pod the same aggregation switch, no core.
    assert net.route("h0.1.0", "h0.0.1") == ("h0.1.0>e0.1", "e0.1>a0.1", "a0.1>e0.0", "e0.0>h0.0.1")
    # Two hosts on one edge switch, and a host to itself, go through the edge switch alone.
    assert net.route("h0.0.1", "h0.0.0") == ("h0.0.1>e0.0", "e0.0>h0.0.0")
    assert net.route("h0.0.0", "h0.0.0") == ("h0.0.0>e0.0", "e0.0>h0.0.0")


def test_a_fat_tree_refuses_an_unknown_routing_by_name():
    with pytest.raises(TopologyError, match="routing must be one of d-mod-k, by-edge-switch, got 'ecmp'"):
        build_topology("fat-tree:k=4,routing=ecmp")


# -- forwarding tables against breadth-first search ------------------------------------------------


def _bfs_hops(net: Network, src: str, dst: str) -> int:
    """Hops of the shortest route from host ``src`` to host ``dst`` through switches."""
    dist = {src: 0}
    queue = deque([src])
    while queue:
        v = queue.popleft()
        for w in net.out_neighbours(v):
            if w not in dist and (net.is_switch(w) or w == dst):
                dist[w] = dist[v] + 1
                queue.append(w)
    return dist[dst]


@settings(max_examples=120, deadline=None)
@given(st.data(), networks(max_switches=6, max_hosts=8), st.integers(0, 2**32 - 1))
def test_forwarding_tables_compose_into_the_shortest_routes_they_encode(data, shortest, seed):
    table = bfs_tables(shortest, random.Random(seed).choice)
    net = Network(list(shortest.nodes.values()), list(shortest.links.values()), Forwarding(table),
                  shortest.shared_duplex)
    assert_routes_as_reference(net)
    for s in net.senders():
        for d in net.receivers():
            if s != d:
                route = net.route(s, d)
                assert len(route) == _bfs_hops(shortest, s, d)
                for link in route[1:]:
                    u, v = net.links[link].src, net.links[link].dst
                    assert table[u][d] == v
    traffic = data.draw(uneven_traffics(net))
    assert compute_bound(net, traffic) == reference_bound(net, traffic)


def test_a_table_that_loops_is_refused_when_the_network_loads():
    nodes = [Node("a"), Node("b"), Node("s1", SWITCH), Node("s2", SWITCH), Node("s3", SWITCH)]
    links = _cable("a", "s1", 1e9) + _cable("b", "s3", 1e9) + _cable("s1", "s2", 1e9) + _cable("s2", "s3", 1e9)
    with pytest.raises(RoutingError, match=r"route from s1 to b loops: s1 → s2 → s1"):
        Network(nodes, links, Forwarding({"s1": {"b": "s2"}, "s2": {"b": "s1"}}))
    with pytest.raises(RoutingError, match=r"routing.table.s1.b: s1 has no link to next hop s3"):
        Network(nodes, links, Forwarding({"s1": {"b": "s3"}}))
    with pytest.raises(RoutingError, match=r"routing.table.s1.s2: destination 's2' is not a host"):
        Network(nodes, links, Forwarding({"s1": {"s2": "s2"}}))


# -- networks of hosts cabled to each other --------------------------------------------------------


STAR = {"format": "liquidsched-topology", "version": 1, "name": "star", "hosts": ["S", "A", "B", "C"],
        "cables": [{"a": "S", "b": "A", "capacity_Bps": "10MB/s"}, {"a": "S", "b": "B", "capacity_Bps": "20MB/s"},
                   {"a": "S", "b": "C", "capacity_Bps": "5MB/s"}]}


def test_a_star_of_processors_loads_and_routes_what_its_cables_carry():
    net = topology_from_dict(STAR)
    assert net.route("S", "B") == ("S>B",) and net.route("C", "S") == ("C>S",)
    # S does not forward, so the leaves reach S but not each other, and no host reaches itself.
    assert set(net.missing_routes) == {(a, b) for a in "SABC" for b in "SABC" if a == b or "S" not in (a, b)}
    bound = compute_bound(net, scatter(net, "S", size_bytes=10**6))
    # 1 MB on S>A at 10 MB/s, S>B at 20 MB/s, S>C at 5 MB/s: C's cable is the bottleneck.
    assert bound.duration_s == Fraction(1, 5) and bound.bottlenecks == ["S>C"]
    with pytest.raises(TrafficError, match=r"transfers\[4\] \(A->B\): routing: no route from A to B"):
        compute_bound(net, all_to_all(net))
    with pytest.raises(TrafficError, match=r"\(A->A\): routing: host A has no switch to send to itself"):
        compute_bound(net, Traffic([Transfer("S", "A", 5), Transfer("A", "A", 5)]))


def test_steady_scatter_on_a_star_file_is_the_optimum_of_the_same_platform_built_by_hand(tmp_path, capsys):
    from liquidsched.cli import main

    path = tmp_path / "star.yaml"
    save_topology(topology_from_dict(STAR), path)
    code = main(["steady", "scatter", "--topology", str(path), "--source", "S", "--message-bytes", "1MB", "--json"])
    out = capsys.readouterr().out
    assert code == 0
    rho = Fraction(json.loads(out)["throughput_per_s"])
    mb = Fraction(10**6)
    by_hand = Platform([PlatformNode(n) for n in "SABC"],
                       [PlatformEdge(a, b, 1 / (Fraction(rate) * mb)) for x, rate in (("A", 10), ("B", 20), ("C", 5))
                        for a, b in (("S", x), (x, "S"))],
                       hosts="SABC")
    expected = solve_steady(by_hand, Series("scatter", ("A", "B", "C"), "S", 10**6)).throughput
    # One port at S: 1 MB at 10, 20 and 5 MB/s is 0.1 + 0.05 + 0.2 = 0.35 s a scatter.
    assert rho == expected == Fraction(20, 7)


def test_a_ring_of_forwarding_hosts_routes_the_shortest_way_first_declared_on_a_tie():
    doc = {"format": "liquidsched-topology", "version": 1, "name": "ring",
           "nodes": [{"id": f"h{i}", "forwards": True} for i in range(4)],
           "cables": [{"a": f"h{i}", "b": f"h{(i + 1) % 4}", "capacity_Bps": "10MB/s"} for i in range(4)]}
    net = topology_from_dict(doc)
    assert net.route("h0", "h2") == ("h0>h1", "h1>h2") and net.route("h1", "h3") == ("h1>h0", "h0>h3")
    bound = compute_bound(net, all_to_all(net, size_bytes=10**6))
    # h0>h1 carries h0→h1, h0→h2 and h3→h1 (h3 to h1 through h0, declared first): 3 × 0.1 s.
    assert bound.counts["h0>h1"] == 3 and bound.counts["h1>h2"] == 2
    assert bound.duration_s == Fraction(3, 10)
    # Without forwarding the hosts reach only their neighbours.
    plain = topology_from_dict({**doc, "nodes": [{"id": f"h{i}"} for i in range(4)]})
    assert ("h0", "h2") in plain.missing_routes and ("h0", "h1") not in plain.missing_routes


def test_a_switch_cannot_be_said_to_forward_and_a_file_round_trips_forwarding(tmp_path):
    with pytest.raises(TopologyError, match=r"forwards: expected true or false on a host"):
        Network([Node("s", SWITCH, forwards=True), Node("a")], _cable("a", "s", 1.0))
    net = build_topology("fat-tree:k=4")
    ring = topology_from_dict({"format": "liquidsched-topology", "version": 1, "name": "ring",
                               "nodes": [{"id": f"h{i}", "forwards": True} for i in range(3)],
                               "cables": [{"a": f"h{i}", "b": f"h{(i + 1) % 3}", "capacity_Bps": 1e6}
                                          for i in range(3)]})
    for original in (net, ring):
        path = tmp_path / f"{original.name}.yaml"
        save_topology(original, path)
        again = load_topology(path)
        assert again == original
        assert all(again.route(s, d) == original.route(s, d) for s in original.senders()
                   for d in original.receivers() if (s, d) not in original.missing_routes)


# -- partial routes --------------------------------------------------------------------------------


def test_a_network_that_routes_some_pairs_loads_and_refuses_traffic_needing_the_others():
    nodes = [Node("a"), Node("b"), Node("c"), Node("s1", SWITCH), Node("s2", SWITCH)]
    links = _cable("a", "s1", 1e9) + _cable("b", "s1", 1e9) + _cable("c", "s2", 1e9) + _cable("s1", "s2", 1e9)
    # s2 forwards to a and b, s1 has no entry for c: c is reached by nobody on s1.
    net = Network(nodes, links, Forwarding({"s2": {"a": "s1", "b": "s1"}}))
    assert net.route("c", "a") == ("c>s2", "s2>s1", "s1>a")
    assert isinstance(net.missing_routes[("a", "c")], MissingRouteError)
    assert "routing.table.s1.c: no entry and no direct link (needed for a to c)" in str(net.missing_routes[("a", "c")])
    ok = Traffic([Transfer("c", "a", 10), Transfer("a", "b", 20)])
    assert compute_bound(net, ok).counts == {"c>s2": 1, "s2>s1": 1, "s1>a": 1, "a>s1": 1, "s1>b": 1}
    with pytest.raises(TrafficError, match=r"transfers\[1\] \(b->c\): routing.table.s1.c: no entry"):
        compute_bound(net, Traffic([Transfer("c", "a", 10), Transfer("b", "c", 10)]))


def test_the_cli_loads_a_star_shows_its_missing_routes_and_refuses_traffic_needing_one(tmp_path, capsys):
    from liquidsched.cli import main

    path = tmp_path / "star.yaml"
    save_topology(topology_from_dict(STAR), path)
    assert main(["topology", "show", str(path), "--json"]) == 0
    shown = json.loads(capsys.readouterr().out)["missing_routes"]
    assert shown["A->B"] == "routing: no route from A to B"
    assert shown["S->S"].startswith("routing: host S has no switch to send to itself through")
    assert main(["bound", "--topology", str(path), "--traffic", "scatter:root=S"]) == 0
    capsys.readouterr()
    assert main(["bound", "--topology", str(path), "--traffic", "all-to-all"]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert err == [f"liquidsched: error: transfers[4] (A->B): {path}: routing: no route from A to B"]


def test_tables_held_as_an_array_are_checked_where_routes_use_them():
    import numpy as np

    from liquidsched.routing import NO_ENTRY, TO_DESTINATION, ForwardingMatrix

    nodes = [Node("a"), Node("b"), Node("s1", SWITCH), Node("s2", SWITCH), Node("s3", SWITCH)]
    links = _cable("a", "s1", 1e9) + _cable("b", "s3", 1e9) + _cable("s1", "s2", 1e9) + _cable("s2", "s3", 1e9)

    def table(s1_to_b: int, s2_to_b: int) -> Forwarding:
        # Rows a, b; columns s1, s2, s3. To a: s3 → s2 → s1 → a. To b: as given, then s3 → b.
        return Forwarding.from_matrix(ForwardingMatrix(("s1", "s2", "s3"), ("a", "b"), np.array(
            [[TO_DESTINATION, 0, 1], [s1_to_b, s2_to_b, TO_DESTINATION]], dtype=np.int32)))

    net = Network(nodes, links, table(1, 2))
    assert net.route("a", "b") == ("a>s1", "s1>s2", "s2>s3", "s3>b") and net.route("b", "a") == (
        "b>s3", "s3>s2", "s2>s1", "s1>a")
    assert net.routing.table["s1"] == {"a": "a", "b": "s2"}
    with pytest.raises(RoutingError, match=r"route from s1 to b loops: s1 → s2 → s1 \(needed for a to b\)"):
        Network(nodes, links, table(1, 0))
    with pytest.raises(RoutingError, match=r"needs a link s1 → s3, which does not exist \(needed for a to b\)"):
        Network(nodes, links, table(2, 2))
    partial = Network(nodes, links, table(NO_ENTRY, 2))
    assert "routing.table.s1.b: no entry and no direct link" in str(partial.missing_routes[("a", "b")])

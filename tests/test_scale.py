"""Routes composed per pair of switches and bounds counted column by column equal the simple way:
a breadth-first search per host pair, and loads summed transfer by transfer."""

from __future__ import annotations

from collections import Counter, deque
from fractions import Fraction

import numpy as np
import pytest
from hypothesis import assume, given, settings
from hypothesis import strategies as st

from liquidsched import compute_bound
from liquidsched.bounds import Bound, counted_frame_time_bound
from liquidsched.errors import RoutingError, TrafficError
from liquidsched.network import HOST, SWITCH, Link, Network, Node
from liquidsched.routing import ExplicitPaths, Forwarding, NextHop, ShortestPath, check_route
from liquidsched.topologies import build_topology
from liquidsched.traffic import Traffic, Transfer, all_to_all, half_all_to_all, random_matrix
from liquidsched.units import MAX_SIZE_BYTES

from .strategies import CAPACITIES, networks

# -- the simple way ------------------------------------------------------------------------------


def reference_route(net: Network, src: str, dst: str) -> tuple[str, ...]:
    """The route of one host pair by the policy's definition, searched from scratch."""
    if isinstance(net.routing, ShortestPath):
        nodes = _shortest(net, src, dst)
    elif isinstance(net.routing, NextHop):
        nodes = _next_hop(net, src, dst)
    elif isinstance(net.routing, Forwarding):
        nodes = _forwarding(net, src, dst)
    else:
        nodes = _explicit(net, src, dst)
    return check_route(net, src, dst, nodes)


def _bfs(net: Network, start: str, dst: str) -> list[str] | None:
    """The shortest path from ``start`` to ``dst`` forwarding through switches only, first in
    declaration order at each step: breadth first, neighbours in declaration order, so that the
    first path found to each node is the smallest in that order."""
    parent = {start: None}
    queue = deque([start])
    while queue:
        v = queue.popleft()
        if v == dst:
            path = []
            while v is not None:
                path.append(v)
                v = parent[v]
            return path[::-1]
        if v != start and not net.is_switch(v):
            continue
        for w in sorted(net.out_neighbours(v), key=net.node_index):
            if w not in parent and (w == dst or net.is_switch(w)):
                parent[w] = v
                queue.append(w)
    return None


def _shortest(net: Network, src: str, dst: str) -> list[str]:
    if src != dst:
        path = _bfs(net, src, dst)
        if path is None:
            raise RoutingError(f"no route from {src} to {dst}")
        return path
    # To itself: through the neighbouring switch closest to it (first declared on a tie).
    options = []
    for w in net.out_neighbours(src):
        back = _bfs(net, w, src) if net.is_switch(w) else None
        if back is not None:
            options.append((len(back), net.node_index(w), back))
    if not options:
        raise RoutingError(f"no route from {src} to itself")
    return [src] + min(options)[2]


def _next_hop(net: Network, src: str, dst: str) -> list[str]:
    first, last = net.home_switch(src), net.home_switch(dst)
    if first is None or last is None:
        raise RoutingError("not on one switch")
    nodes = [src, first]
    while nodes[-1] != last:
        nodes.append(net.routing.table.get(nodes[-1], {}).get(last, last))
        if len(nodes) > len(net.nodes) + 2:
            raise RoutingError("loops")
    return nodes + [dst]


def _forwarding(net: Network, src: str, dst: str) -> list[str]:
    """Hop by hop through the tables from the source host (to its switch first when the table
    says nothing), a missing entry meaning the direct link, then a host's switch."""
    table = net.routing.table
    nodes = [src]
    while len(nodes) == 1 or nodes[-1] != dst:
        v = nodes[-1]
        if dst in table.get(v, {}):
            nodes.append(table[v][dst])
        elif net.link_between(v, dst) is not None and not (v == src == dst):
            nodes.append(dst)
        else:
            nodes.append(net.home_switch(v))
        if len(nodes) > len(net.nodes) + 2:
            raise RoutingError("loops")
    return nodes


def _explicit(net: Network, src: str, dst: str) -> list[str]:
    if (src, dst) in net.routing.paths:
        return list(net.routing.paths[(src, dst)])
    return [src, net.home_switch(src), src]


def reference_bound(net: Network, traffic: Traffic) -> Bound:
    """The bound summed transfer by transfer, each on the resources of its reference route."""
    sets = [frozenset(net.link_resource[l] for l in reference_route(net, t.src, t.dst)) for t in traffic]
    counts: Counter[int] = Counter()
    bytes_on: Counter[int] = Counter()
    for t, resources in zip(traffic, sets):
        counts.update(resources)
        for r in resources:
            bytes_on[r] += t.size_bytes
    loads = {r: Fraction(b) / Fraction(net.resource_capacity[r]) for r, b in bytes_on.items()}
    duration = max(loads.values())
    used = sorted(loads)
    slots = net.resource_slots
    rate = [Fraction(net.resource_capacity[r]) / k for r, k in enumerate(slots)]
    on_resource: dict[int, Counter[Fraction]] = {r: Counter() for r in used}
    for t, resources in zip(traffic, sets):
        time = Fraction(t.size_bytes) / min(rate[r] for r in resources)
        for r in resources:
            on_resource[r][time] += 1
    frames = {r: -(-counts[r] // slots[r]) for r in used}
    frame_bound = max(frames.values())
    total = sum(t.size_bytes for t in traffic)
    return Bound(
        transfers=len(traffic), total_bytes=total,
        loads_s={net.resources[r]: loads[r] for r in used},
        counts={net.resources[r]: counts[r] for r in used},
        duration_s=duration, bottlenecks=[net.resources[r] for r in used if loads[r] == duration],
        liquid_throughput_Bps=Fraction(total) / duration,
        uniform=(len({t.size_bytes for t in traffic}) == 1 and len({net.resource_capacity[r] for r in used}) == 1
                 and all(slots[r] == 1 for r in used)),
        frame_lower_bound=frame_bound, slots={net.resources[r]: slots[r] for r in used},
        frame_bottlenecks=[net.resources[r] for r in used if frames[r] == frame_bound],
        frame_bound_time_s=max(counted_frame_time_bound(on_resource[r], slots[r]) for r in used),
    )


def assert_routes_as_reference(net: Network) -> None:
    for s in net.senders():
        for d in net.receivers():
            expected = reference_route(net, s, d)
            assert net.route(s, d) == expected, (s, d)
            assert net.path_resources(s, d) == frozenset(net.link_resource[l] for l in expected)


# -- networks the composition must handle ----------------------------------------------------------

BUILT_IN = [
    "two-switch", "swiss-t1", "hierarchical:d1=3,d2=3", "hierarchical:d1=2,d2=3,shared_uplinks=true",
    "fat-tree:k=4", "fat-tree:k=6,oversubscription=2", "fat-tree:k=4,hosts_per_edge=3", "torus:dims=3/4",
    "fat-tree:k=6,routing=by-edge-switch", "dragonfly:a=2,p=2,h=1", "dragonfly:a=3,p=1,h=2,g=5",
    "torus:dims=2/2/3", "mesh:dims=3/3", "crossbar:n=6", "backbone:n1=3,n2=4",
    "random:switches=6,hosts=10,seed=1", "random:switches=8,hosts=12,extra_cables=5,seed=7",
]


@pytest.mark.parametrize("spec", BUILT_IN)
def test_built_in_routes_equal_a_search_per_host_pair(spec):
    assert_routes_as_reference(build_topology(spec))


@pytest.mark.parametrize("spec", BUILT_IN)
def test_built_in_all_to_all_bounds_equal_the_sum_per_transfer(spec):
    net = build_topology(spec)
    for traffic in (all_to_all(net), half_all_to_all(net), random_matrix(net, seed=3, density=0.7)):
        assert compute_bound(net, traffic) == reference_bound(net, traffic)


@st.composite
def mixed_networks(draw) -> Network:
    """Random networks where some hosts hang off two switches, some hosts are linked to each
    other directly, some host cables are shared-duplex, under shortest-path routing."""
    n_sw = draw(st.integers(1, 4))
    links: list[Link] = []
    shared: list[tuple[str, str]] = []
    cables = {(draw(st.integers(0, i - 1)), i) for i in range(1, n_sw)}
    for a, b in sorted(cables):
        c = draw(st.sampled_from(CAPACITIES))
        links += [Link(f"s{a}>s{b}", f"s{a}", f"s{b}", c), Link(f"s{b}>s{a}", f"s{b}", f"s{a}", c)]
    n_hosts = draw(st.integers(2, 6))
    nodes = [Node(f"s{i}", SWITCH) for i in range(n_sw)]
    for h in range(n_hosts):
        nodes.append(Node(f"h{h}", HOST))
        homes = draw(st.lists(st.integers(0, n_sw - 1), min_size=1, max_size=2, unique=True))
        for sw in homes:
            c = draw(st.sampled_from(CAPACITIES))
            links += [Link(f"h{h}>s{sw}", f"h{h}", f"s{sw}", c), Link(f"s{sw}>h{h}", f"s{sw}", f"h{h}", c)]
            if draw(st.booleans()):
                shared.append((f"h{h}>s{sw}", f"s{sw}>h{h}"))
    if n_hosts > 2 and draw(st.booleans()):
        links += [Link("h0>h1", "h0", "h1", 100.0), Link("h1>h0", "h1", "h0", 100.0)]
    order = draw(st.permutations(nodes))  # declaration order decides ties
    return Network(order, links, ShortestPath(), shared, name="mixed")


def bfs_tables(net: Network, choose) -> dict[str, dict[str, str]]:
    """For every receiving host, a tree of shortest paths towards it through switches, each
    node's next hop one of its neighbours one hop closer, as ``choose`` picks from them (in name
    order): the tables a subnet manager would fill."""
    table: dict[str, dict[str, str]] = {}
    for d in net.receivers():
        dist = {d: 0}
        queue = deque([d])
        while queue:
            v = queue.popleft()
            for u in net.in_neighbours(v):
                if u not in dist and net.is_switch(u):
                    dist[u] = dist[v] + 1
                    queue.append(u)
        for v in dist:
            if v != d:
                table.setdefault(v, {})[d] = choose(sorted(w for w in net.out_neighbours(v)
                                                          if dist.get(w) == dist[v] - 1))
    return table


@st.composite
def forwarding_networks(draw) -> Network:
    """Random networks routed by forwarding tables by destination host, from a random tree of
    shortest paths towards each host (the array way of composing routes)."""
    shortest = draw(networks(max_switches=5, max_hosts=8))
    table = bfs_tables(shortest, lambda closer: draw(st.sampled_from(closer)))
    return Network(list(shortest.nodes.values()), list(shortest.links.values()), Forwarding(table),
                   shortest.shared_duplex, name="forwarding")


@st.composite
def uneven_traffics(draw, net: Network) -> Traffic:
    pairs = [(s, d) for s in net.senders() for d in net.receivers()]
    assume(pairs)
    chosen = draw(st.lists(st.sampled_from(pairs), min_size=1, max_size=30))
    sizes = draw(st.lists(st.sampled_from([1, 7, 1000, 1000, 2000, 4096, 10 ** 6]), min_size=len(chosen),
                          max_size=len(chosen)))
    return Traffic([Transfer(s, d, z) for (s, d), z in zip(chosen, sizes)])


@settings(max_examples=150, deadline=None)
@given(networks(max_switches=5, max_hosts=8))
def test_random_network_routes_equal_a_search_per_host_pair(net):
    assert_routes_as_reference(net)


@settings(max_examples=150, deadline=None)
@given(mixed_networks())
def test_hosts_on_several_switches_are_routed_as_before(net):
    assert_routes_as_reference(net)


@settings(max_examples=150, deadline=None)
@given(st.data(), st.one_of(networks(max_switches=5, max_hosts=8), mixed_networks()))
def test_bounds_equal_the_sum_per_transfer(data, net):
    traffic = data.draw(uneven_traffics(net))
    assert compute_bound(net, traffic) == reference_bound(net, traffic)
    columns = Traffic.from_arrays(traffic.host_table, traffic.src_index, traffic.dst_index, traffic.sizes)
    assert columns == traffic and compute_bound(net, columns) == reference_bound(net, traffic)


@settings(max_examples=150, deadline=None)
@given(st.data(), st.one_of(networks(max_switches=5, max_hosts=8), mixed_networks(), forwarding_networks()))
def test_bounds_transfer_by_transfer_in_integers_equal_the_sum_per_transfer(data, net):
    # The way of counting that traffics of many distinct sizes take, forced on small ones.
    from liquidsched import bounds

    traffic = data.draw(uneven_traffics(net))
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(bounds, "MANY_SIZES", 0)
        assert bounds._many_sizes(traffic) == (traffic.uniform_size is None)
        assert compute_bound(net, traffic) == reference_bound(net, traffic)


def test_many_uneven_transfers_are_bounded_as_their_classes_are():
    # 128 hosts of a 2:1 D-mod-k fat tree, 30,000 transfers of sizes from 1 B to 10 MB: the
    # integer way and the way by classes (Fractions) agree to the bit.
    from liquidsched import bounds

    net = build_topology("fat-tree:k=8,oversubscription=2")
    rng = np.random.default_rng(5)
    n = 30_000
    src = rng.integers(0, 128, n)
    dst = (src + rng.integers(1, 128, n)) % 128
    traffic = Traffic.from_arrays(net.hosts(), src, dst, rng.integers(1, 10**7, n))
    assert bounds._many_sizes(traffic)
    fast = compute_bound(net, traffic)
    used, counts, bytes_on, frame_time = bounds._per_class_sums(net, traffic)
    assert fast.frame_bound_time_s == frame_time
    assert fast.counts == {net.resources[r]: counts[r] for r in used}
    assert fast.loads_s == {net.resources[r]: Fraction(bytes_on[r]) / net.resource_capacity_exact(r) for r in used}


def test_self_transfer_over_a_shared_duplex_host_cable_counts_once():
    nodes = [Node("s", SWITCH), Node("a"), Node("b")]
    links = [Link("a>s", "a", "s", 100.0), Link("s>a", "s", "a", 100.0),
             Link("b>s", "b", "s", 100.0), Link("s>b", "s", "b", 100.0)]
    net = Network(nodes, links, shared_duplex=[("a>s", "s>a")])
    traffic = Traffic([Transfer("a", "a", 10), Transfer("a", "b", 10), Transfer("b", "a", 30)])
    bound = compute_bound(net, traffic)
    assert bound.counts["a>s|s>a"] == 3 and bound.loads_s["a>s|s>a"] == Fraction(50, 100)
    assert bound == reference_bound(net, traffic)


def test_explicit_paths_and_next_hop_tables_are_routed_as_before():
    nodes = [Node("s1", SWITCH), Node("s2", SWITCH), Node("s3", SWITCH), Node("a"), Node("b"), Node("c")]
    links = []
    for u, v in [("a", "s1"), ("b", "s2"), ("c", "s3"), ("s1", "s2"), ("s2", "s3"), ("s1", "s3")]:
        links += [Link(f"{u}>{v}", u, v, 100.0), Link(f"{v}>{u}", v, u, 100.0)]
    table = NextHop({"s1": {"s3": "s2"}, "s3": {"s1": "s2"}})
    paths = ExplicitPaths({("a", "b"): ("a", "s1", "s3", "s2", "b"), ("a", "c"): ("a", "s1", "s3", "c"),
                           ("b", "a"): ("b", "s2", "s1", "a"), ("b", "c"): ("b", "s2", "s3", "c"),
                           ("c", "a"): ("c", "s3", "s1", "a"), ("c", "b"): ("c", "s3", "s2", "b")})
    for routing in (table, paths):
        net = Network(nodes, links, routing)
        assert_routes_as_reference(net)
        traffic = Traffic([Transfer(s, d, 100 * (i + 1)) for i, (s, d) in
                           enumerate((s, d) for s in "abc" for d in "abc")])
        assert compute_bound(net, traffic) == reference_bound(net, traffic)
    assert Network(nodes, links, table).route("a", "c") == ("a>s1", "s1>s2", "s2>s3", "s3>c")


def test_a_failing_switch_path_names_the_first_host_pair_that_needs_it():
    nodes = [Node("s1", SWITCH), Node("s2", SWITCH), Node("a"), Node("b"), Node("c")]
    links = [Link("a>s1", "a", "s1", 1.0), Link("s1>a", "s1", "a", 1.0), Link("b>s2", "b", "s2", 1.0),
             Link("s2>b", "s2", "b", 1.0), Link("c>s2", "c", "s2", 1.0), Link("s2>c", "s2", "c", 1.0),
             Link("s1>s2", "s1", "s2", 1.0)]
    net = Network(nodes, links)
    # The network loads: the pairs it cannot route are kept, each pair of switches named by the
    # first host pair that needs it, and a traffic that needs one is refused.
    assert list(net.missing_routes) == [("b", "a")]
    assert str(net.missing_routes[("b", "a")]).endswith("no route from switch s2 to switch s1 (needed for b to a)")
    with pytest.raises(TrafficError, match=r"transfers\[1\] \(c->a\): .*no route from switch s2 to switch s1"):
        compute_bound(net, Traffic([Transfer("a", "c", 1), Transfer("c", "a", 1)]))


# -- large traffics as columns ---------------------------------------------------------------------


def test_columns_make_transfers_names_and_files_on_demand():
    t = Traffic.from_arrays(["a", "b", "c"], np.array([0, 0, 2, 0]), np.array([1, 1, 0, 2]), np.array([5, 6, 7, 8]))
    assert len(t) == 4 and t.total_bytes == 26 and t.uniform_size is None
    assert t[1] == Transfer("a", "b", 6) and t[-1] == Transfer("a", "c", 8) and t[1:3] == t.transfers[1:3]
    assert t.names == ["a->b", "a->b#2", "c->a", "a->c"] and t.index["c->a"] == 2
    assert Traffic.from_dict(t.to_dict()) == t and t == Traffic(list(t))
    assert t != Traffic.from_arrays(["a", "b", "c"], np.array([0, 0, 2, 0]), np.array([1, 1, 0, 2]), 5)
    with pytest.raises(IndexError):
        t[4]
    with pytest.raises(TrafficError, match="src must hold indices"):
        Traffic.from_arrays(["a"], np.array([1]), np.array([0]), 1)


def test_all_to_all_of_a_thousand_hosts_is_columns_with_the_bound_of_the_sum_per_transfer():
    net = build_topology("fat-tree:k=16")
    traffic = all_to_all(net)
    hosts = net.hosts()
    assert len(traffic) == 1024 * 1023 and traffic._transfers is None
    assert traffic[1023] == Transfer(hosts[1], hosts[0], 1_000_000)
    assert traffic[1024] == Transfer(hosts[1], hosts[2], 1_000_000)
    bound = compute_bound(net, traffic)
    assert bound.transfers == 1024 * 1023 and bound.uniform and traffic._transfers is None
    assert bound.duration == max(bound.counts.values()) and bound.total_bytes == 1024 * 1023 * 10 ** 6
    small = build_topology("fat-tree:k=6")
    assert compute_bound(small, all_to_all(small)) == reference_bound(small, all_to_all(small))


def test_sums_of_the_largest_sizes_stay_exact():
    net = build_topology("crossbar:n=3")
    top = MAX_SIZE_BYTES
    traffic = Traffic([Transfer("h1", "h2", top), Transfer("h3", "h2", top - 1), Transfer("h1", "h3", 3)] * 700)
    assert traffic.total_bytes == 700 * (2 * top + 2)
    assert compute_bound(net, traffic) == reference_bound(net, traffic)
    with pytest.raises(TrafficError, match=r"transfers\[1\]\.size_bytes"):
        Traffic([Transfer("h1", "h2"), Transfer("h1", "h3", top + 1)]).check(net)


def test_the_first_bad_transfer_is_named():
    net = build_topology("two-switch")
    traffic = Traffic([Transfer("t1", "r1"), Transfer("t2", "r2", 0), Transfer("zz", "r1")])
    with pytest.raises(TrafficError, match=r"transfers\[1\]\.size_bytes: expected a whole number of bytes .*, got 0"):
        traffic.check(net)
    with pytest.raises(TrafficError, match=r"transfers\[0\]\.src: host r1 does not send"):
        Traffic.from_arrays(["r1", "t1"], np.array([0]), np.array([1]), 1).check(net)


@st.composite
def backbone_networks(draw) -> Network:
    """Random networks where some hosts send to one switch and receive from another (a cluster
    whose backbone joins its switch to the far end), under shortest-path routing."""
    n_sw = draw(st.integers(2, 5))
    links: list[Link] = []
    cables = {(draw(st.integers(0, i - 1)), i) for i in range(1, n_sw)}
    for a, b in sorted(cables):
        c = draw(st.sampled_from(CAPACITIES))
        links += [Link(f"s{a}>s{b}", f"s{a}", f"s{b}", c), Link(f"s{b}>s{a}", f"s{b}", f"s{a}", c)]
    nodes = [Node(f"s{i}", SWITCH) for i in range(n_sw)]
    for h in range(draw(st.integers(2, 6))):
        nodes.append(Node(f"h{h}", HOST))
        up, down = draw(st.integers(0, n_sw - 1)), draw(st.integers(0, n_sw - 1))
        links += [Link(f"h{h}>s{up}", f"h{h}", f"s{up}", draw(st.sampled_from(CAPACITIES))),
                  Link(f"s{down}>h{h}", f"s{down}", f"h{h}", draw(st.sampled_from(CAPACITIES)))]
    return Network(draw(st.permutations(nodes)), links, ShortestPath(), name="backbone")


@settings(max_examples=150, deadline=None)
@given(st.data(), backbone_networks())
def test_hosts_sending_to_one_switch_and_receiving_from_another_are_composed(data, net):
    # Every host is composed both ways, whatever its two switches, and routes and bounds are
    # those of a search per host pair.
    table = net.route_table()
    assert (table.up_switch >= 0).all() and (table.down_target >= 0).all()
    assert_routes_as_reference(net)
    traffic = data.draw(uneven_traffics(net))
    assert compute_bound(net, traffic) == reference_bound(net, traffic)

"""Rail-optimised and two-tier networks: routes against hand-worked paths, and the all-to-all
bound against the load counted by hand on the links that carry the most."""

from __future__ import annotations

import pytest

from liquidsched.bounds import compute_bound
from liquidsched.errors import TopologyError
from liquidsched.topologies import build_topology
from liquidsched.traffic import make_traffic


def all_to_all_bound(spec: str):
    net = build_topology(spec)
    return net, compute_bound(net, make_traffic(net, "all-to-all", size_bytes=1_000_000))


@pytest.mark.parametrize("src, dst, path", [
    # inside a server: NVLink only
    ("s2.g0", "s2.g3", ["s2.g0", "p2.0", "nv2", "p2.3", "s2.g3"]),
    # one rail: its leaf only
    ("s7.g3", "s1.g3", ["s7.g3", "p7.3", "rail3", "p1.3", "s1.g3"]),
    # across rails: up rail 1, spine 5 mod 2, down rail 3
    ("s0.g1", "s5.g3", ["s0.g1", "p0.1", "rail1", "spine1", "rail3", "p5.3", "s5.g3"]),
    ("s0.g1", "s4.g3", ["s0.g1", "p0.1", "rail1", "spine0", "rail3", "p4.3", "s4.g3"]),
])
def test_rail_optimised_routes_by_rail_and_spreads_over_spines_by_destination_server(src, dst, path):
    net = build_topology("rail-optimised")
    assert net.route(src, dst) == tuple(f"{a}>{b}" for a, b in zip(path, path[1:]))


def test_rail_optimised_with_pxn_crosses_nvlink_first_and_never_a_spine():
    net = build_topology("rail-optimised:pxn=true")
    assert net.route("s0.g1", "s5.g3") == ("s0.g1>p0.1", "p0.1>nv0", "nv0>p0.3", "p0.3>rail3", "rail3>p5.3",
                                           "p5.3>s5.g3")
    assert not any("spine" in link for s in net.hosts() for d in net.hosts() if s != d for link in net.route(s, d))


def test_rail_optimised_all_to_all_is_bound_by_the_leaf_uplinks():
    # 8 servers × 4 accelerators, 50 GB/s NICs, 2:1 to 2 spines: each leaf uplink 100 GB/s.
    # Rail g's 8 accelerators send 1 MB to each of the 7 × 3 accelerators of other servers on other
    # rails: 168 MB, half through each spine: 84 MB in 0.84 ms. A NIC sends 28 MB: 0.56 ms.
    net, bound = all_to_all_bound("rail-optimised")
    assert float(bound.duration_s) == pytest.approx(0.84e-3)
    assert set(bound.bottlenecks) == {f"rail{g}>spine{x}" for g in range(4) for x in range(2)} | \
        {f"spine{x}>rail{g}" for g in range(4) for x in range(2)}
    assert bound.counts["rail0>spine0"] == 84 and bound.counts["p0.0>rail0"] == 28


def test_rail_optimised_with_pxn_moves_the_bound_to_the_nics():
    # Every message between servers now leaves by the NIC of the destination's rail: each NIC
    # carries 7 servers × 4 accelerators' messages from its server = 28 MB, 0.56 ms; nothing
    # crosses a spine.
    net, bound = all_to_all_bound("rail-optimised:pxn=true")
    assert float(bound.duration_s) == pytest.approx(0.56e-3)
    assert bound.counts["p0.0>rail0"] == 28


def test_two_tier_all_to_all_is_bound_by_the_oversubscribed_uplinks():
    # 16 servers × 4, 4 servers a leaf, 2:1 to 2 spines: each uplink 4 × 4 × 50 GB/s / 4 = 200 GB/s.
    # A leaf's 16 accelerators send 1 MB to each of the 48 on other leaves, half through each
    # spine: 384 MB, 1.92 ms. A server's link (200 GB/s) carries 4 × 60 MB: 1.2 ms.
    net, bound = all_to_all_bound("two-tier")
    assert float(bound.duration_s) == pytest.approx(1.92e-3)
    assert bound.counts["leaf0>spine0"] == 384 and bound.counts["x0>leaf0"] == 240
    assert net.route("s0.g0", "s0.g1") == ("s0.g0>x0", "x0>s0.g1")


def test_a_two_tier_of_one_leaf_has_no_spine():
    net = build_topology("two-tier:servers=3,gpus=2,servers_per_leaf=4")
    assert not [n for n in net.switches() if n.startswith("spine")]
    assert net.route("s0.g0", "s2.g1") == ("s0.g0>x0", "x0>leaf0", "leaf0>x2", "x2>s2.g1")


@pytest.mark.parametrize("spec, message", [
    ("rail-optimised:servers=0", "servers and gpus must be at least 1"),
    ("rail-optimised:oversubscription=0.5", "oversubscription must be at least 1"),
    ("two-tier:servers_per_leaf=0", "servers_per_leaf must be at least 1"),
    ("two-tier:spines=0", "spines must be at least 1"),
])
def test_a_bad_ml_cluster_is_refused_naming_the_parameter(spec, message):
    with pytest.raises(TopologyError, match=message):
        build_topology(spec)

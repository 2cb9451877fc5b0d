"""Dragonflies: the cables as the consecutive arrangement lays them, minimal routes, the bound of
an all-to-all by hand."""

from __future__ import annotations

from collections import Counter

import pytest

from liquidsched import compute_bound
from liquidsched.errors import TopologyError
from liquidsched.topologies import build_topology
from liquidsched.traffic import all_to_all


def _group(node: str) -> str:
    return node[1:].split(".")[0]


def _global(net, link: str) -> bool:
    l = net.links[link]
    return net.is_switch(l.src) and net.is_switch(l.dst) and _group(l.src) != _group(l.dst)


@pytest.mark.parametrize("spec,groups", [("dragonfly:a=2,p=1,h=1", 3), ("dragonfly:a=4,p=2,h=2", 9),
                                         ("dragonfly:a=3,p=1,h=2,g=5", 5)])
def test_every_two_groups_share_one_global_cable_and_every_route_is_minimal(spec, groups):
    net = build_topology(spec)
    cables = Counter(frozenset((_group(net.links[l].src), _group(net.links[l].dst)))
                     for l in net.links if _global(net, l))
    # Each cable is two links, one each way.
    assert len(cables) == groups * (groups - 1) // 2 and set(cables.values()) == {2}
    for s in net.hosts():
        for d in net.hosts():
            if s == d:
                continue
            route = net.route(s, d)
            inner = route[1:-1]
            globals_ = [l for l in inner if _global(net, l)]
            # Minimal: one global cable between groups, none inside; at most one local hop each side.
            assert len(globals_) == (0 if _group(s) == _group(d) else 1), (s, d, route)
            assert len(inner) <= (1 if _group(s) == _group(d) else 3), (s, d, route)


def test_a_balanced_dragonfly_uses_every_router_s_global_ports():
    net = build_topology("dragonfly:a=4,p=2,h=2")
    ports = Counter(net.links[l].src for l in net.links if _global(net, l))
    assert set(ports.values()) == {2} and len(ports) == 9 * 4


def test_all_to_all_of_three_groups_of_two_routers_by_hand():
    # Groups 0, 1, 2 of routers r.0 and r.1, one host each. Group G's port 0 (router 0) goes to
    # group G + 1, landing on its router 1; port 1 (router 1) to group G + 2, landing on router 0.
    # r0.1 > r0.0 carries h0.1's 2 transfers to group 1 and 1 to h0.0, and the 2 that group 2's
    # hosts send to h0.0 (they land on r0.1): 5, as many as a host link.
    net = build_topology("dragonfly:a=2,p=1,h=1")
    bound = compute_bound(net, all_to_all(net))
    assert bound.counts["r0.1>r0.0"] == 5 and bound.counts["h0.0.0>r0.0"] == 5
    assert bound.counts["r0.0>r1.1"] == 4  # the 2 × 2 transfers from group 0 to group 1
    assert bound.duration == 5


@pytest.mark.parametrize("spec,message", [
    ("dragonfly:a=0", "a must be at least 1"),
    ("dragonfly:a=2,h=1,g=4", "g must be from 2 to a·h \\+ 1 = 3"),
    ("dragonfly:a=2,h=1,g=1", "g must be from 2"),
    ("dragonfly:h=4096", "65,540 routers, more than the 6,000 liquidsched builds"),
])
def test_a_dragonfly_that_cannot_be_built_is_refused(spec, message):
    with pytest.raises(TopologyError, match=message):
        build_topology(spec)

"""Liquid schedules of square tori's all-to-all by a design over displacement classes, checked
link by link against the network's own routes, by the validator and by the frame bound."""

from __future__ import annotations

from collections import Counter

import pytest

from liquidsched import plan, validate
from liquidsched.bounds import compute_bound
from liquidsched.topologies import build_topology
from liquidsched.traffic import Traffic, all_to_all
from liquidsched.schedulers.torus_design import diagonal_groups, displacements, frames_of_groups, torus_design


def ring_frame_ok(n: int, uses: list[tuple[int, int]]) -> bool:
    """Ring transfers ``F → F + d``: each positive link once, negative links and targets at most
    once (written again here, not taken from the module's model)."""
    plus, minus, targets = Counter(), Counter(), Counter()
    for anchor, d in uses:
        targets[(anchor + d) % n] += 1
        plus.update(x % n for x in range(anchor, anchor + d))
        minus.update(x % n for x in range(anchor + d, anchor))
    return all(plus[x] == 1 for x in range(n)) and max(minus.values(), default=0) <= 1 \
        and max(targets.values()) <= 1


def links_used_once_per_frame(net, schedule) -> bool:
    for frame in schedule.frames:
        used = Counter()
        for piece in frame:
            src, dst = piece.transfer.split("->")
            used.update(net.route(src, dst))
        if max(used.values()) > 1:
            return False
    return True


@pytest.mark.parametrize("n", [6, 8, 10])
def test_square_torus_all_to_all_is_liquid_by_design(n):
    # Λ = n · (1 + 2 + … + n/2): the positive ring links, n times over (one per target row).
    net = build_topology(f"torus:dims={n}/{n}")
    traffic = all_to_all(net)
    frame_bound = n * (n // 2) * (n // 2 + 1) // 2
    assert compute_bound(net, traffic).frame_lower_bound == frame_bound
    s = plan(net, traffic, "liquid", time_limit=60)
    assert validate(s) == []
    assert (s.length, s.liquid, s.info.optimal, s.info.stats["source"]) == (frame_bound, True, True, "torus design")
    assert sorted(p.transfer for f in s.frames for p in f) == sorted(f"{t.src}->{t.dst}" for t in traffic.transfers)
    if n == 6:
        assert links_used_once_per_frame(net, s)


def test_every_group_is_two_ring_frames_and_groups_partition_the_classes():
    n = 8
    groups = diagonal_groups(n, time_limit=60)
    assert len(groups) == (n // 2) * (n // 2 + 1) // 2
    for group in groups:
        assert ring_frame_ok(n, [(f, a) for a, _, f in group])
        assert ring_frame_ok(n, [(f, b) for _, b, f in group])
    classes = sorted((a, b) for g in groups for a, b, _ in g)
    assert classes == sorted((a, b) for a in displacements(n) for b in displacements(n) if (a, b) != (0, 0))
    # Each group gives n frames of one transfer per host at most.
    frames = frames_of_groups(groups, n)
    assert len(frames) == n * len(groups)
    assert all(len({s for s, _ in f}) == len(f) == len({d for _, d in f}) for f in frames)


def test_six_cube_all_to_all_is_liquid_by_design():
    # 216 hosts, Λ = 36 · (1 + 2 + 3) = 216 frames: one more than the 215 targets of a host.
    net = build_topology("torus:dims=6/6/6")
    s = torus_design(net, all_to_all(net), time_limit=120)
    assert s is not None and validate(s) == []
    assert (s.length, s.liquid, s.info.optimal) == (216, True, True)


@pytest.mark.parametrize("topology", ["torus:dims=4/4", "torus:dims=8/4", "mesh:dims=6/6",
                                      "torus:dims=6/6,hosts_per_router=2", "torus:dims=4/4/4", "torus:dims=7/7"])
def test_no_design_where_it_does_not_apply(topology):
    net = build_topology(topology)
    assert torus_design(net, all_to_all(net), time_limit=10) is None


def test_no_design_for_a_traffic_that_is_not_the_all_to_all():
    net = build_topology("torus:dims=6/6")
    traffic = all_to_all(net)
    assert torus_design(net, Traffic(traffic.transfers[:-1]), time_limit=10) is None
    assert torus_design(net, Traffic(traffic.transfers + traffic.transfers[:1]), time_limit=10) is None


def test_four_by_four_torus_is_left_to_the_search():
    # At 4 × 4 the host links bind (15 targets each, Λ = 15), not the 12 transfers of a ring
    # link: the design's n · h(h + 1)/2 frames cannot hold the traffic, and the orbit cover
    # finds the liquid schedule instead.
    net = build_topology("torus:dims=4/4")
    traffic = all_to_all(net)
    assert compute_bound(net, traffic).frame_lower_bound == 15
    assert torus_design(net, traffic, time_limit=10) is None
    s = plan(net, traffic, "liquid", time_limit=60)
    assert validate(s) == [] and (s.length, s.liquid, s.info.stats["source"]) == (15, True, "orbit cover")

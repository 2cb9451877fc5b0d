"""Liquid schedules of meshes as products of line permutations: the lines' permutations checked
pair by pair and link by link, the frames against the network's own routes, the validator and
the frame bound, on meshes of every shape the construction takes and on those it must refuse."""

from __future__ import annotations

import math
from collections import Counter

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from liquidsched import plan, validate
from liquidsched.bounds import compute_bound
from liquidsched.schedulers.line_product import line_family, line_product, line_slots, product_frames
from liquidsched.topologies import build_topology
from liquidsched.topologies.torus import mesh
from liquidsched.traffic import Traffic, Transfer, all_to_all, half_all_to_all

from .cli_run import run
from .frame_routes import route_uses


def line_link_uses(segments) -> Counter:
    """How many segments ``(x, y)`` cross each directed link ``(j, j ± 1)`` of a line."""
    used: Counter = Counter()
    for x, y in segments:
        step = 1 if y > x else -1
        used.update((j, j + step) for j in range(x, y, step))
    return used


def mesh_frame_bound(dims, hosts_per_router=1) -> int:
    # Dimension-order routing: the middle link of a line of n = 2m routers is crossed each way by
    # m · m pairs of positions on the line for every choice of the other coordinates (the
    # target's before the line's axis, the source's after it): routers · n / 4, the longest line
    # binding, once for each pair of host ranks.
    return math.prod(dims) * max(dims) // 4 * hosts_per_router ** 2


@pytest.mark.parametrize("n", [2, 4, 8, 12, 16, 20, 24, 32, 48])
def test_a_line_family_sends_every_node_to_every_node_once_within_its_slots(n):
    slots = line_slots(n)
    assert slots == n // 4 or n < 4
    perms, colours = line_family(n, slots)
    assert len(perms) == len(colours) == n
    pairs = Counter((x, p[x]) for p in perms for x in range(n))
    assert pairs == Counter({(x, y): 1 for x in range(n) for y in range(n)})
    for perm, colour in zip(perms, colours):
        assert sorted(perm) == list(range(n))
        assert max(line_link_uses(enumerate(perm)).values(), default=0) <= slots
        assert set(colour) <= set(range(slots))
        for c in range(slots):
            same = [(x, y) for x, y in enumerate(perm) if colour[x] == c]
            assert max(line_link_uses(same).values(), default=0) <= 1


def test_cpsat_splits_the_classes_the_search_gives_up(monkeypatch):
    from liquidsched.schedulers import line_product as module

    monkeypatch.setattr(module, "CLASS_NODE_LIMIT", 0)
    monkeypatch.setattr(module, "_families", {})
    perms, _ = module.line_family(16, 4)
    assert Counter((x, p[x]) for p in perms for x in range(16)) == Counter({(x, y): 1 for x in range(16)
                                                                           for y in range(16)})
    assert max(max(line_link_uses(enumerate(p)).values()) for p in perms) <= 4


@pytest.mark.parametrize("dims, hosts_per_router", [((4, 4), 1), ((8, 8), 1), ((16, 16), 1), ((8, 4), 1),
                                                    ((4, 8), 1), ((4, 4, 4), 1), ((8, 8), 2), ((2, 8), 1),
                                                    ((1, 8), 1), ((8,), 1), ((4, 4), 3), ((12, 4), 1)])
def test_meshes_are_liquid_by_the_line_product(dims, hosts_per_router):
    net = mesh(dims, hosts_per_router=hosts_per_router)
    traffic = all_to_all(net)
    frames = mesh_frame_bound(dims, hosts_per_router)
    assert compute_bound(net, traffic).frame_lower_bound == frames
    s = line_product(net, traffic)
    assert validate(s) == []
    assert (s.length, s.liquid, s.info.optimal, s.info.stats["source"]) == (frames, True, True, "line product")
    assert sorted(p.transfer for f in s.frames for p in f) == sorted(f"{t.src}->{t.dst}" for t in traffic.transfers)
    if len(traffic) <= 20_000:
        for frame in s.frames:
            assert max(route_uses(net, frame).values()) == 1


def test_every_frame_of_the_16_by_16_mesh_uses_every_middle_link_once():
    net = build_topology("mesh:dims=16/16")
    s = line_product(net, all_to_all(net))
    assert s is not None and s.length == 1024
    middle = {f"r{a}.{k}>r{b}.{k}" for k in range(16) for a, b in ((7, 8), (8, 7))} \
        | {f"r{k}.{a}>r{k}.{b}" for k in range(16) for a, b in ((7, 8), (8, 7))}
    # The frames' transfers use each middle link once: 64 per frame, all of them in every frame.
    for frame in s.frames[::37]:
        used = route_uses(net, frame)
        assert max(used.values()) == 1
        assert all(used[link] == 1 for link in middle)


@settings(max_examples=25, deadline=None)
@given(dims=st.lists(st.sampled_from([1, 2, 4, 8]), min_size=1, max_size=3).filter(lambda d: math.prod(d) <= 64
                                                                                  and max(d) >= 2),
       hosts_per_router=st.integers(1, 2), seed=st.integers(0, 10**6))
def test_every_product_schedule_passes_the_validator(dims, hosts_per_router, seed):
    import random

    net = mesh(dims, hosts_per_router=hosts_per_router)
    transfers = list(all_to_all(net).transfers)
    # Any order of the transfers: the frames are mapped to them by their hosts.
    random.Random(seed).shuffle(transfers)
    traffic = Traffic(transfers)
    bound = compute_bound(net, traffic).frame_lower_bound
    s = line_product(net, traffic, frame_bound=bound)
    if s is None:
        # A side of 2 next to no side of 4 or more: the product needs a slot more than the bound.
        assert max(dims) < 4
        return
    assert validate(s) == []
    assert s.length == bound == mesh_frame_bound(dims, hosts_per_router)
    assert Counter(p.transfer for f in s.frames for p in f) == Counter(traffic.names)


def test_uneven_sizes_take_the_fewest_frames_and_the_claims_follow_the_times():
    net = mesh((4, 4))
    base = all_to_all(net)
    traffic = Traffic([Transfer(t.src, t.dst, 1000 * (1 + i % 3)) for i, t in enumerate(base.transfers)])
    s = plan(net, traffic, "liquid")
    assert validate(s) == [] and s.info.stats["source"] == "line product"
    assert s.length == compute_bound(net, traffic).frame_lower_bound == 16 and s.info.optimal
    # Liquid is a claim about time: it holds exactly when the schedule's time is Λ.
    assert s.liquid == (s.makespan_s() == s.bound.duration_s)


@pytest.mark.parametrize("topology", ["torus:dims=8/8", "mesh:dims=6/6", "mesh:dims=10/10", "two-switch"])
def test_no_product_where_it_cannot_reach_the_bound(topology):
    net = build_topology(topology)
    traffic = all_to_all(net)
    assert line_product(net, traffic) is None


@pytest.mark.parametrize("change", ["half the hosts", "one transfer less", "a pair twice"])
def test_no_product_for_a_traffic_other_than_the_all_to_all(change):
    net = mesh((4, 4))
    if change == "half the hosts":
        traffic = half_all_to_all(net)
    else:
        transfers = list(all_to_all(net).transfers)
        transfers = transfers[:-1] if change == "one transfer less" else transfers[:-1] + transfers[:1]
        traffic = Traffic(transfers)
    assert product_frames(net, traffic, compute_bound(net, traffic).frame_lower_bound) is None
    assert line_product(net, traffic) is None


def test_without_symmetry_the_search_runs():
    net = mesh((4, 4))
    s = plan(net, all_to_all(net), "liquid", time_limit=60, symmetric=False)
    assert validate(s) == [] and s.info.stats["source"] != "line product"


def test_the_command_line_says_liquid_and_proven(capsys, tmp_path):
    out = tmp_path / "mesh.json"
    code, stdout, err = run(capsys, "plan", "--topology", "mesh:dims=8/8", "--traffic", "all-to-all",
                            "--algorithm", "liquid", "--output", out)
    assert code == 0, err
    assert "128 (frame bound 128)" in stdout and "True: time = Λ" in stdout and "(proven)" in stdout
    code, stdout, err = run(capsys, "check", out)
    assert code == 0, err + stdout

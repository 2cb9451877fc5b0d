"""Liquid schedules of meshes whose frames a group of reflections moves, assigned by CP-SAT:
checked link by link against the network's own routes, by the validator and by the frame bound,
and the group's orbits against the reflections' node maps."""

from __future__ import annotations

import pytest

from liquidsched import plan, validate
from liquidsched.bounds import compute_bound
from liquidsched.topologies import build_topology
from liquidsched.traffic import Traffic, Transfer, all_to_all
from liquidsched.schedulers import orbit_assignment as module
from liquidsched.schedulers.orbit_assignment import free_orbits, orbit_assignment

from .frame_routes import route_uses


def mesh_frame_bound(side: int) -> int:
    # Dimension-order routing on a line of n = 2m routers: m · m transfers cross its middle link
    # each way, once for each of the n rows (or columns) they may end in: n · m² = n³/4.
    return side ** 3 // 4


@pytest.mark.parametrize("topology, frames", [("mesh:dims=4/4", 16), ("mesh:dims=6/4", 36), ("mesh:dims=8/4", 64),
                                              ("mesh:dims=4/4,hosts_per_router=2", 64),
                                              ("mesh:dims=6/6", mesh_frame_bound(6))])
def test_meshes_are_liquid_by_orbit_assignment(topology, frames):
    net = build_topology(topology)
    traffic = all_to_all(net)
    assert compute_bound(net, traffic).frame_lower_bound == frames
    # Called directly: on the meshes whose sides are multiples of 4, the liquid scheduler's
    # line product answers first.
    s = orbit_assignment(net, traffic, time_limit=60)
    assert validate(s) == []
    assert (s.length, s.liquid, s.info.optimal, s.info.stats["source"]) == (frames, True, True, "orbit assignment")
    assert sorted(p.transfer for f in s.frames for p in f) == sorted(f"{t.src}->{t.dst}" for t in traffic.transfers)
    for frame in s.frames:
        assert max(route_uses(net, frame).values()) == 1


def test_every_frame_of_the_square_mesh_uses_every_middle_link():
    # On mesh:dims=6/6 the bottlenecks are the links across the middle of each row and column,
    # both ways (6 · 9 = 54 transfers each): a liquid schedule of 54 frames uses all 24 in each.
    net = build_topology("mesh:dims=6/6")
    s = orbit_assignment(net, all_to_all(net), time_limit=60)
    assert s is not None and s.length == 54
    middle = {f"r{a}.{k}>r{b}.{k}" for k in range(6) for a, b in ((2, 3), (3, 2))} \
        | {f"r{k}.{a}>r{k}.{b}" for k in range(6) for a, b in ((2, 3), (3, 2))}
    assert len(middle) == 24
    for frame in s.frames:
        used = route_uses(net, frame)
        assert all(used[link] == 1 for link in middle)


def test_orbits_are_the_reflections_images_and_the_product_is_their_composition():
    net = build_topology("mesh:dims=6/4")
    traffic = all_to_all(net)
    orbits, product = free_orbits(net, traffic, 36)
    group = next(g for g in net.symmetry.groups(36))
    assert len(product) == len(group) == 4
    # Every transfer once, in orbits of four distinct transfers.
    assert sorted(i for o in orbits for i in o) == list(range(len(traffic)))
    for orbit in orbits:
        first = traffic.transfers[orbit[0]]
        for e, mapping in enumerate(group):
            image = traffic.transfers[orbit[e]]
            assert (image.src, image.dst) == (mapping[first.src], mapping[first.dst])
    for g, row in enumerate(product):
        for e, ge in enumerate(row):
            composed = {node: group[g][group[e][node]] for node in group[e]}
            assert composed == group[ge]


def test_sizes_the_reflections_keep_give_the_fewest_frames():
    # Uneven sizes that depend only on the distance are kept by every reflection: the frames
    # are as few as the frame bound says, though not liquid in time.
    net = build_topology("mesh:dims=4/4")
    base = all_to_all(net)

    def distance(t):
        (xs, ys), (xd, yd) = (tuple(map(int, h[1:].split("."))) for h in (t.src, t.dst))
        return abs(xs - xd) + abs(ys - yd)

    traffic = Traffic([Transfer(t.src, t.dst, 1000 * distance(t)) for t in base.transfers])
    s = orbit_assignment(net, traffic, time_limit=60)
    assert validate(s) == []
    assert s.info.stats["source"] == "orbit assignment"
    assert s.length == compute_bound(net, traffic).frame_lower_bound == 16 and s.info.optimal


@pytest.mark.parametrize("change", ["one transfer less", "a size the reflections do not keep", "a pair twice"])
def test_no_assignment_for_a_traffic_the_reflections_do_not_keep(change):
    net = build_topology("mesh:dims=4/4")
    transfers = list(all_to_all(net).transfers)
    if change == "one transfer less":
        transfers = transfers[:-1]
    elif change == "a size the reflections do not keep":
        transfers[0] = Transfer(transfers[0].src, transfers[0].dst, 2 * transfers[0].size_bytes)
    else:
        transfers.append(transfers[0])
    traffic = Traffic(transfers)
    assert free_orbits(net, traffic, compute_bound(net, traffic).frame_lower_bound) is None
    assert orbit_assignment(net, traffic, time_limit=10) is None


@pytest.mark.parametrize("topology", ["torus:dims=4/4", "two-switch", "fat-tree:k=4"])
def test_no_assignment_without_reflections(topology):
    net = build_topology(topology)
    assert orbit_assignment(net, all_to_all(net), time_limit=10) is None


def test_no_model_above_its_size(monkeypatch):
    # mesh:dims=4/4: 240 transfers × 4 base frames; one entry less and the model is not built.
    net = build_topology("mesh:dims=4/4")
    monkeypatch.setattr(module, "MAX_ENTRIES", 240 * 4 - 1)
    assert orbit_assignment(net, all_to_all(net), time_limit=10) is None
    monkeypatch.setattr(module, "MAX_ENTRIES", 240 * 4)
    assert orbit_assignment(net, all_to_all(net), time_limit=10) is not None


def test_without_symmetry_the_search_runs():
    net = build_topology("mesh:dims=4/4")
    s = plan(net, all_to_all(net), "liquid", time_limit=60, symmetric=False)
    assert validate(s) == [] and s.info.stats["source"] != "orbit assignment"


def test_a_zero_budget_builds_no_model_and_still_returns_a_valid_schedule():
    net = build_topology("mesh:dims=6/6")
    traffic = all_to_all(net)
    assert orbit_assignment(net, traffic, time_limit=0) is None
    s = plan(net, traffic, "liquid", time_limit=0)
    assert validate(s) == [] and s.info.stats["source"] != "orbit assignment"

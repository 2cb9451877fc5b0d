"""Proofs beyond the frame bound, interchangeable copies and symmetric schedules in the exact
search, checked against hand-worked arguments, brute force, CP-SAT and the validator."""

from __future__ import annotations

import dataclasses
from collections import Counter
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from liquidsched import _core, plan, validate
from liquidsched.network import Network
from liquidsched.symmetry import (resource_permutation, symmetry_candidates, translation_resource_images,
                                  with_resource_images)
from liquidsched.schedulers.liquid import orbit_structure
from liquidsched.topologies import build_topology
from liquidsched.traffic import Traffic, Transfer, all_to_all, load_traffic

from .brute_force import optimal_length
from .strategies import networks

CASE = Path(__file__).parent / "data" / "repeated-transfers-33.csv"
CASE_NETWORK = "random:switches=2,hosts=4,extra_cables=0,seed=2"


def frames_valid(paths: list[list[int]], slots: list[int], frames: list[list[int]]) -> bool:
    """Every transfer once, no resource over its slots in a frame (independent of the core)."""
    seen = sorted(t for f in frames for t in f)
    if seen != list(range(len(paths))):
        return False
    for f in frames:
        on = Counter(r for t in f for r in set(paths[t]))
        if any(n > slots[r] for r, n in on.items()):
            return False
    return True


def test_a_transfer_conflicting_with_a_whole_bottleneck_proves_one_frame_more():
    # One slot everywhere: the cable s0-s1 (one shared-duplex resource) carries 15 transfers, so
    # Λ = 15, and h2→h2 shares h2's only links with each of them: it needs a 16th frame.
    net = build_topology(CASE_NETWORK)
    traffic = load_traffic(CASE)
    paths = traffic.resource_lists(net)
    cable = net.link_resource["s0>s1"]
    on_cable = [p for p in paths if cable in p]
    lonely = paths[next(i for i, t in enumerate(traffic.transfers) if (t.src, t.dst) == ("h2", "h2"))]
    assert len(on_cable) == 15 and all(set(p) & set(lonely) for p in on_cable)
    raw = _core.liquid_schedule(paths, len(net.resources))
    assert (raw["duration"], len(raw["frames"]), raw["lower_bound"], raw["optimal"]) == (15, 16, 16, True)
    assert frames_valid(paths, [1] * len(net.resources), raw["frames"])
    # The bound proves it before any search: a few dozen nodes (the search without it needs
    # hundreds of thousands even with copies merged, hundreds of millions without).
    assert raw["nodes"] < 1000
    unbounded = _core.liquid_schedule(paths, len(net.resources), bounds=False)
    assert (len(unbounded["frames"]), unbounded["optimal"]) == (16, True)
    assert unbounded["nodes"] > 10 * raw["nodes"]


def test_with_the_networks_own_slots_the_same_case_is_liquid():
    # h2's links are four times the cable's rate: four slots each, so h2→h2 fits beside a cable
    # transfer and 15 frames suffice.
    net = build_topology(CASE_NETWORK)
    s = plan(net, load_traffic(CASE), "liquid")
    assert validate(s) == []
    assert (s.length, s.info.lower_bound, s.liquid, s.info.optimal) == (15, 15, True, True)


@st.composite
def multisets(draw) -> tuple[Network, Traffic]:
    """A small network and a traffic of a few distinct transfers, each repeated 1-4 times."""
    net = draw(networks(max_switches=3, max_hosts=4))
    pairs = [(s, d) for s in net.senders() for d in net.receivers()]
    distinct = draw(st.lists(st.sampled_from(pairs), min_size=1, max_size=4, unique=True)) if pairs else []
    counts = [draw(st.integers(1, 4)) for _ in distinct]
    transfers = [Transfer(s, d, 1000) for (s, d), c in zip(distinct, counts) for _ in range(c)]
    return net, Traffic(transfers[:11])


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much])
@given(multisets())
def test_repeated_transfers_liquid_cpsat_and_brute_force_agree(problem):
    net, traffic = problem
    if not traffic.transfers:
        return
    sets = traffic.resource_sets(net)
    best = optimal_length(sets, net.resource_slots)
    for algorithm, options in (("liquid", {}), ("liquid", {"bounds": False}), ("cpsat", {})):
        s = plan(net, traffic, algorithm, **options)
        assert validate(s) == []
        assert s.info.optimal, (algorithm, options)
        assert s.length == best, (algorithm, options)


def test_torus_all_to_all_is_liquid_by_translation_covered_frames():
    # 4×4 torus, 2 hosts per router: Λ = 48 = 3 × 16 translations. The orbit cover finds it
    # first; the search of frames the group moves finds it too.
    net = build_topology("torus:dims=4/4,hosts_per_router=2")
    traffic = all_to_all(net)
    s = plan(net, traffic, "liquid")
    assert validate(s) == []
    assert (s.length, s.info.lower_bound, s.liquid, s.info.optimal) == (48, 48, True, True)
    assert s.info.stats["symmetry_order"] == 16 and s.info.stats["source"] == "orbit cover"
    assert s.info.stats["memory_bytes"] > 0
    group = next(symmetry_candidates(net, 48))
    assert len(group) == 16
    paths = traffic.resource_lists(net)
    raw = _core.liquid_schedule(paths, len(net.resources), slots=net.resource_slots, symmetry=group)
    assert raw["source"] == "symmetric search" and raw["symmetry_order"] == 16
    assert len(raw["frames"]) == 48 and frames_valid(paths, net.resource_slots, raw["frames"])


@pytest.mark.parametrize("dims,frame_bound", [("8/8", 80), ("12/12", 252), ("4/4/4", 63)])
def test_torus_all_to_all_is_liquid_by_an_orbit_cover(dims, frame_bound):
    # Dimension order, positive on a tie: each link i → i+1 of a ring of k carries
    # 1 + 2 + ... + k/2 transfers of the ring's all-to-all, and k times that in a k × k torus
    # (one per target row): Λ = 10 × 8 = 80 and 21 × 12 = 252, above the k² - 1 of each host's
    # link. On 4 × 4 × 4 the ring links carry 3 × 16 = 48 and the host links bind: Λ = 63. Frames
    # that subgroups of the translations fix cover each in Λ frames; the plain search stopped at
    # 88 for 80 and 73 for 63 after a minute.
    # The square tori's design (tests/test_torus_design.py) would answer first: the core is
    # asked directly, with the orbit structure liquid() gives it.
    net = build_topology(f"torus:dims={dims}")
    traffic = all_to_all(net)
    paths = traffic.resource_lists(net)
    raw = _core.liquid_schedule(paths, len(net.resources), slots=net.resource_slots, time_limit=60,
                                orbits=orbit_structure(net, traffic))
    assert frames_valid(paths, net.resource_slots, raw["frames"])
    assert (len(raw["frames"]), raw["lower_bound"], raw["liquid"], raw["optimal"]) == (frame_bound, frame_bound, True, True)
    assert raw["source"] == "orbit cover" and raw["symmetry_order"] == len(net.hosts())
    assert raw["stopped_by"] is None


def test_translation_orbits_are_whole_displacement_classes():
    net = build_topology("torus:dims=4/3,hosts_per_router=2")
    traffic = all_to_all(net)
    o = net.symmetry.translation_orbits([(t.src, t.dst) for t in traffic.transfers])
    assert o is not None
    # 24 hosts: 23 targets each, in classes of (displacement, rank at source, rank at target).
    assert max(o.orbit) + 1 == len(traffic.transfers) // 12 == 46
    assert len(set(zip(o.orbit, o.element))) == len(traffic.transfers)
    assert sorted(len(k) for k in o.subgroups) == [1, 2, 3, 4, 6, 12]
    # Transfers of one class are the translates of each other: same route shapes.
    by_orbit: dict[int, set[int]] = {}
    for t, orbit in zip(traffic.transfers, o.orbit):
        by_orbit.setdefault(orbit, set()).add(len(net.route(t.src, t.dst)))
    assert all(len(lengths) == 1 for lengths in by_orbit.values())
    # The resources' images: translation g maps the route of each transfer onto the route of
    # its image, (orbit, g ∘ element).
    images = with_resource_images(net, o).resource_images
    order, resources = 12, len(net.resources)
    at = {(orbit, e): t for t, orbit, e in zip(traffic.transfers, o.orbit, o.element)}
    for g in range(order):
        perm = images[g * resources:(g + 1) * resources]
        assert sorted(perm) == list(range(resources))
        for t, orbit, e in list(zip(traffic.transfers, o.orbit, o.element))[::7]:
            image = at[(orbit, o.product[g * order + e])]
            route = {net.link_resource[link] for link in net.route(t.src, t.dst)}
            assert {perm[r] for r in route} == {net.link_resource[link] for link in net.route(image.src, image.dst)}
    # Not whole classes, or a mesh: no structure, and the plain search runs.
    assert net.symmetry.translation_orbits([(t.src, t.dst) for t in traffic.transfers[:-1]]) is None
    mesh = build_topology("mesh:dims=4/4")
    assert mesh.symmetry.translation_orbits([(t.src, t.dst) for t in all_to_all(mesh).transfers]) is None


@pytest.mark.parametrize("topology", ["torus:dims=4/3,hosts_per_router=2", "torus:dims=3/2/4", "torus:dims=5"])
def test_translation_orbits_of_a_traffic_s_columns_are_those_of_its_pairs(topology):
    # The columns' form (what liquid() hands the core) against the pairs' form, on a traffic
    # whose transfers come in a shuffled order; and a host outside the lattice refuses both.
    import numpy as np

    net = build_topology(topology)
    transfers = list(all_to_all(net).transfers)
    order = np.random.default_rng(5).permutation(len(transfers))
    traffic = Traffic([transfers[i] for i in order])
    pairs = [(t.src, t.dst) for t in traffic.transfers]
    by_pairs = net.symmetry.translation_orbits(pairs)
    by_columns = net.symmetry.translation_orbits_of_columns(traffic.host_table, traffic.src_index,
                                                             traffic.dst_index)
    assert by_pairs is not None and by_columns == by_pairs
    hosts = list(traffic.host_table)
    assert net.symmetry.translation_orbits_of_columns(hosts + ["elsewhere"], traffic.src_index,
                                                      traffic.dst_index) == by_pairs
    stranger = np.array(traffic.src_index)
    stranger[0] = len(hosts)
    assert net.symmetry.translation_orbits_of_columns(hosts + ["elsewhere"], stranger, traffic.dst_index) is None
    assert net.symmetry.translation_orbits(pairs[:1] + [("elsewhere", pairs[0][1])] + pairs[2:]) is None


def test_the_search_takes_a_traffic_s_routes_as_it_takes_its_lists():
    # The same paths either way, so the same deterministic search: the same frames.
    from liquidsched.transfer_routes import cached_transfer_routes

    net = build_topology("torus:dims=4/4,hosts_per_router=2")
    traffic = all_to_all(net)
    lists = _core.liquid_schedule(traffic.resource_lists(net), len(net.resources), slots=net.resource_slots,
                                  node_limit=20_000)
    routes = _core.liquid_schedule(cached_transfer_routes(net, traffic).core, len(net.resources),
                                   slots=net.resource_slots, node_limit=20_000)
    assert routes == lists and len(routes["frames"]) >= 48


@pytest.mark.parametrize("topology", ["torus:dims=5", "torus:dims=4/3,hosts_per_router=2", "torus:dims=6/4",
                                      "torus:dims=3/2/4", "torus:dims=2/2,hosts_per_router=3"])
def test_translation_resource_images_are_the_node_maps_images(topology):
    # All translations at once (arrays) against each translation's node map, link by link.
    net = build_topology(topology)
    images = translation_resource_images(net)
    expected = [resource_permutation(net, mapping) for mapping in net.symmetry.translations()]
    assert images.tolist() == expected
    # The groups the symmetric search is given are the same as from the node maps.
    for order in (2, 4, 6, 12):
        fast = list(symmetry_candidates(net, order))
        slow = [[resource_permutation(net, g) for g in group] for group in net.symmetry.groups(order)]
        assert fast == slow


def test_translation_resource_images_refuse_a_lattice_that_is_not_the_networks():
    # A symmetry claiming a ring of 2 on a ring of 4: links to nodes it does not know, no images;
    # a ring of 4 whose translations move the nodes of a ring of 6: not links of the network.
    net = build_topology("torus:dims=4")
    net.symmetry = dataclasses.replace(net.symmetry, dims=(2,))
    assert translation_resource_images(net) is None
    net = build_topology("torus:dims=6")
    net.symmetry = dataclasses.replace(net.symmetry, dims=(4,))
    assert translation_resource_images(net) is None


@settings(max_examples=12, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.integers(2, 6), st.integers(2, 6), st.integers(1, 2), st.integers(1, 10_000_000), st.booleans())
def test_every_orbit_cover_is_a_valid_optimal_schedule(a, b, hosts, size, uneven):
    # Every schedule passes the validator; one the orbit cover gave has as many frames as the
    # frame bound (optimal, proven), and is liquid when the sizes are even. Uneven sizes change
    # the frames' times, not the frames.
    net = build_topology(f"torus:dims={a}/{b},hosts_per_router={hosts}")
    traffic = Traffic([Transfer(t.src, t.dst, size + i * uneven) for i, t in enumerate(all_to_all(net).transfers)])
    s = plan(net, traffic, "liquid", time_limit=20)
    assert validate(s) == []
    if s.info.stats["source"] == "orbit cover":
        assert s.info.optimal and s.length == s.info.lower_bound == s.info.stats["proven_lower_bound"]
        assert s.liquid or uneven


def test_a_symmetry_that_is_not_one_of_the_traffic_is_ignored():
    # Half of a torus all-to-all is not invariant under the translations: the plain search runs.
    net = build_topology("torus:dims=3/3")
    traffic = Traffic([t for t in all_to_all(net).transfers if t.src < t.dst])
    s = plan(net, traffic, "liquid")
    assert validate(s) == [] and s.info.stats["symmetry_order"] == 1
    # A permutation that is not an automorphism is refused as a whole by the core.
    paths = all_to_all(net).resource_lists(net)
    n = len(net.resources)
    swap = list(range(n))
    swap[0], swap[1] = swap[1], swap[0]
    raw = _core.liquid_schedule(paths, n, symmetry=[swap])
    assert raw["symmetry_order"] == 1 and frames_valid(paths, [1] * n, raw["frames"])


def test_translations_of_a_torus_are_automorphisms_of_its_routes():
    net = build_topology("torus:dims=4/3")
    for group in net.symmetry.groups(12):
        for mapping in group:
            perm = resource_permutation(net, mapping)
            assert perm is not None
            for a in ("h0.0", "h2.1"):
                for b in ("h3.2", "h1.0"):
                    route = {net.link_resource[l] for l in net.route(a, b)}
                    image = {net.link_resource[l] for l in net.route(mapping[a], mapping[b])}
                    assert {perm[r] for r in route} == image


def test_mesh_reflections_are_automorphisms_of_its_routes():
    net = build_topology("mesh:dims=4/4")
    group = next(net.symmetry.groups(4))
    assert len(group) == 4
    for mapping in group:
        perm = resource_permutation(net, mapping)
        for a, b in (("h0.0", "h3.2"), ("h1.3", "h2.0")):
            route = {net.link_resource[l] for l in net.route(a, b)}
            image = {net.link_resource[l] for l in net.route(mapping[a], mapping[b])}
            assert {perm[r] for r in route} == image


def test_a_zero_budget_still_returns_a_valid_schedule():
    net = build_topology("torus:dims=8/8")
    s = plan(net, all_to_all(net), "liquid", time_limit=0)
    assert validate(s) == []
    assert s.info.stats["stopped_by"] == "time" and not s.info.optimal


def test_a_smaller_memo_budget_makes_the_same_proof_with_more_nodes_in_less_memory():
    # A 4 × 4 torus's all-to-all: 15 frames, proven by the plain search (the translations would
    # cover it at once); its memo saves searching sub-traffics again.
    net = build_topology("torus:dims=4/4")
    traffic = all_to_all(net)
    runs = {limit: plan(net, traffic, "liquid", memo_limit=limit, symmetric=False) for limit in (None, 1024, 64)}
    for limit, s in runs.items():
        assert validate(s) == [] and (s.length, s.info.optimal) == (15, True), limit
    stats = {limit: s.info.stats for limit, s in runs.items()}
    assert stats[None]["memo_limit_bytes"] == 256 << 20 and stats[1024]["memo_limit_bytes"] == 1024
    # The memo within 64 bytes holds no sub-traffic (one takes more): no hit, more nodes.
    assert stats[64]["memo_hits"] == 0 < stats[1024]["memo_hits"] < stats[None]["memo_hits"]
    assert stats[None]["nodes_explored"] < stats[64]["nodes_explored"]
    assert stats[64]["memory_bytes"] < stats[None]["memory_bytes"]


def test_the_memo_budget_is_a_size_and_only_the_liquid_search_takes_it(capsys):
    from liquidsched.cli import main

    assert main(["plan", "--topology", "two-switch", "--traffic", "half-all-to-all", "--algorithm", "liquid",
                 "--memo-limit", "1MiB", "--json"]) == 0
    import json

    assert json.loads(capsys.readouterr().out)["stats"]["memo_limit_bytes"] == 1 << 20
    assert main(["plan", "--topology", "two-switch", "--traffic", "half-all-to-all", "--algorithm", "dsatur",
                 "--memo-limit", "1MiB"]) == 2
    assert "--memo-limit applies to --algorithm liquid, not dsatur" in capsys.readouterr().err

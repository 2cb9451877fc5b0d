"""Liquid schedules (paper 000 §3-6), the CP-SAT model, and their agreement with brute force."""

from __future__ import annotations

import pytest
from hypothesis import given, settings

from liquidsched import _core, compute_bound, plan, validate
from liquidsched.bounds import transfer_slot_times_s
from liquidsched.errors import InputError
from liquidsched.network import HOST, SWITCH, Link, Network, Node
from liquidsched.routing import ShortestPath
from liquidsched.schedulers.liquid import REDUCTIONS, liquid
from liquidsched.sweep import run_sweep
from liquidsched.topologies import build_topology
from liquidsched.traffic import Traffic, Transfer, half_all_to_all

from .brute_force import full_teams, least_time, optimal_length
from .strategies import problems


def fig7_network() -> Network:
    """A one-way ring of three switches, a host on each: every two-hop route uses two of the
    three ring links, so three such transfers load each ring link twice and pairwise conflict
    (paper 000 Fig. 7: three bottlenecks, no team)."""
    nodes = [Node(f"s{i}", SWITCH) for i in range(3)] + [Node(f"x{i}", HOST) for i in range(3)]
    links = [Link(f"ring{i}", f"s{i}", f"s{(i + 1) % 3}", 100.0) for i in range(3)]
    for i in range(3):
        links += [Link(f"x{i}>s{i}", f"x{i}", f"s{i}", 100.0), Link(f"s{i}>x{i}", f"s{i}", f"x{i}", 100.0)]
    return Network(nodes, links, ShortestPath(), name="fig7-ring")


def fig7_traffic() -> Traffic:
    return Traffic([Transfer(f"x{i}", f"x{(i + 2) % 3}", 1000) for i in range(3)], name="fig7")


def test_two_switch_liquid_schedule_of_six_frames(two_switch_net):
    s = plan(two_switch_net, half_all_to_all(two_switch_net), "liquid")
    assert validate(s) == []
    assert (s.length, s.info.lower_bound, s.liquid, s.info.optimal) == (6, 6, True, True)
    # Each frame is a team: both bottlenecks busy in every frame (Theorem 1).
    for frame in s.frames:
        links = {l for p in frame for l in two_switch_net.route(*p.transfer.split("->"))}
        assert {"l_ab", "l_ba"} <= links


def test_fig7_traffic_has_no_liquid_schedule_and_an_optimal_one_of_lambda_plus_one():
    net, traffic = fig7_network(), fig7_traffic()
    assert sorted(len(r) for r in traffic.resource_sets(net)) == [4, 4, 4]
    s = plan(net, traffic, "liquid")
    assert validate(s) == []
    assert s.info.lower_bound == 2  # duration: each ring link carries two transfers
    assert s.length == 3 and not s.liquid and s.info.optimal
    assert s.info.stats["proven_lower_bound"] == 3 and s.info.stats["gap"] == 0
    # Without the optimum search the proof still stands: no schedule of 2 frames.
    raw = _core.liquid_schedule(traffic.resource_lists(net), len(net.resources), optimize=False)
    assert raw["lower_bound"] == 3 and not raw["liquid"]


def test_every_swiss_t1_class_representative_is_solved_with_proof():
    classes = run_sweep(build_topology("swiss-t1")).classes
    assert len(classes) == 362
    for c in classes:
        net = build_topology("swiss-t1:allocation=" + "/".join(map(str, c.allocation)))
        s = liquid(net, half_all_to_all(net))
        assert validate(s) == [], c.allocation
        assert s.info.optimal and s.info.stats["stopped_by"] is None, c.allocation


def test_budgets_return_a_valid_schedule_with_the_gap(t1_net):
    traffic = half_all_to_all(t1_net)
    for budget in ({"node_limit": 5}, {"time_limit": 0.0}):
        s = plan(t1_net, traffic, "liquid", **budget)
        assert validate(s) == []
        stats = s.info.stats
        assert stats["stopped_by"] in ("nodes", "time")
        assert stats["proven_lower_bound"] == 48
        assert stats["gap"] == s.length - 48
        assert s.info.optimal == (s.length == 48)


@pytest.mark.parametrize("off", REDUCTIONS)
def test_each_reduction_switched_off_keeps_the_answer(two_switch_net, off):
    s = liquid(two_switch_net, half_all_to_all(two_switch_net), **{off: False})
    assert validate(s) == [] and s.length == 6 and s.info.optimal


def test_unknown_reduction_and_bad_budget_are_input_errors(two_switch_net):
    traffic = half_all_to_all(two_switch_net)
    with pytest.raises(InputError, match="unknown reduction 'skelton'"):
        liquid(two_switch_net, traffic, skelton=False)
    with pytest.raises(InputError, match="time limit"):
        liquid(two_switch_net, traffic, time_limit=-1)


PRUNINGS = [(False, False, False), (True, False, False), (True, True, False), (True, True, True)]


def count_with_each_pruning(net, traffic) -> dict:
    paths, n = traffic.resource_lists(net), len(net.resources)
    counts = {}
    for blank, idle, skeleton in PRUNINGS:
        counts[blank, idle, skeleton] = _core.count_full_teams(paths, n, slots=net.resource_slots, blank=blank,
                                                               idle=idle, skeleton=skeleton)
    return counts


def test_prunings_shrink_the_fission_tree_but_not_the_teams(two_switch_net):
    counts = count_with_each_pruning(two_switch_net, half_all_to_all(two_switch_net))
    assert len({teams for teams, _, _ in counts.values()}) == 1
    nodes = [counts[flags][1] for flags in PRUNINGS]
    assert nodes == sorted(nodes, reverse=True) and nodes[-1] < nodes[0]


@settings(max_examples=60, deadline=None)
@given(problems())
def test_full_team_count_matches_brute_force_with_every_pruning(problem):
    net, traffic = problem
    expected = full_teams(traffic.resource_sets(net), net.resource_slots)
    for flags, (teams, _, complete) in count_with_each_pruning(net, traffic).items():
        assert complete and teams == expected, flags


def test_cpsat_agrees_on_the_two_examples(two_switch_net):
    s = plan(two_switch_net, half_all_to_all(two_switch_net), "cpsat")
    assert validate(s) == [] and s.length == 6 and s.info.optimal
    s = plan(fig7_network(), fig7_traffic(), "cpsat")
    assert validate(s) == [] and s.length == 3 and s.info.optimal


@settings(max_examples=200, deadline=None)
@given(problems())
def test_liquid_cpsat_and_brute_force_agree_on_small_traffics(problem):
    """On networks with capacities 1–4 times the port rate, shared-duplex cables and explicit
    slots: fewest frames, whether the frame bound is reached, and every claim about time."""
    net, traffic = problem
    sets = traffic.resource_sets(net)
    slots = net.resource_slots
    best = optimal_length(sets, slots)
    frame_bound = max(-(-sum(1 for s in sets if r in s) // slots[r]) for r in set().union(*sets))
    times = transfer_slot_times_s(net, traffic)
    fastest = least_time(sets, slots, times)
    duration = compute_bound(net, traffic).duration_s
    for algorithm in ("liquid", "cpsat"):
        s = plan(net, traffic, algorithm)
        assert validate(s) == []
        assert s.info.optimal, algorithm
        assert s.length == best, algorithm
        assert s.info.lower_bound == frame_bound
        assert (s.length == frame_bound) == (best == frame_bound), algorithm
        assert s.liquid == (s.makespan_s() == duration)
        assert s.makespan_s() >= fastest
        if s.liquid:
            assert fastest == duration
        if s.time_optimal:  # a claim of least time must hold, and so must "no liquid schedule"
            assert s.makespan_s() == fastest, algorithm
            assert s.liquid == (fastest == duration), algorithm


@pytest.mark.parametrize("k", [4, 8])
def test_a_d_mod_k_fat_tree_all_to_all_is_liquid_from_round_robin_s_shifts(k):
    # k³/4 hosts, each sending to every other: the host links carry k³/4 − 1 transfers each
    # (Λ in transfers), and the shifts of round-robin use every link of a D-mod-k tree once.
    from liquidsched.traffic import all_to_all

    net = build_topology(f"fat-tree:k={k}")
    traffic = all_to_all(net)
    s = liquid(net, traffic)
    hosts = k**3 // 4
    assert s.length == compute_bound(net, traffic).frame_lower_bound == hosts - 1
    assert s.liquid and s.info.optimal and s.info.stats["source"] == "round-robin"
    assert validate(s) == []


def test_the_search_runs_when_round_robin_misses_the_frame_bound(two_switch_net):
    traffic = half_all_to_all(two_switch_net)
    assert plan(two_switch_net, traffic, "round-robin").length == 7
    s = liquid(two_switch_net, traffic)
    assert s.length == 6 and s.info.stats["source"] != "round-robin" and s.info.stats["nodes_explored"] > 0

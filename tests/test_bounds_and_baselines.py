"""Bounds and baselines against the papers' worked examples and hand counts."""

from __future__ import annotations

from fractions import Fraction

import pytest
from hypothesis import assume, given, settings

from liquidsched import compute_bound, half_all_to_all, plan, validate
from liquidsched.network import Link, Network, Node
from liquidsched.schedulers.baselines import round_robin_steps
from liquidsched.traffic import Traffic, Transfer, all_to_all, allocation_hosts

from .brute_force import optimal_length
from .strategies import problems


def test_two_switch_bound_matches_papers(two_switch_net):
    b = compute_bound(two_switch_net, half_all_to_all(two_switch_net))
    assert b.transfers == 25
    assert b.uniform and b.duration == 6
    assert b.bottlenecks == ["l_ab", "l_ba"]
    # 25 MB over 0.06 s (paper 001 §1): 416.67 MB/s, 25/6 of a 100 MB/s link.
    assert b.liquid_throughput_Bps == Fraction(25, 6) * 100_000_000
    assert round(float(b.liquid_throughput_Bps) / 1e6, 2) == 416.67
    # every other link carries 5 transfers
    assert {r: c for r, c in b.counts.items() if r not in b.bottlenecks} == {
        f"l_{x}{i}": 5 for x in "tr" for i in range(1, 6)}


def test_two_switch_round_robin_takes_7_frames(two_switch_net):
    traffic = half_all_to_all(two_switch_net)
    s = plan(two_switch_net, traffic, "round-robin")
    assert s.length == 7 and s.info.lower_bound == 6 and s.liquid is False
    throughput = traffic.total_bytes / sum(s.frame_durations_s())
    assert round(float(throughput) / 1e6, 2) == 357.14


def test_round_robin_steps_are_the_papers(two_switch_net):
    traffic = half_all_to_all(two_switch_net)
    steps = [[traffic.names[k] for k in step] for step in round_robin_steps(two_switch_net, traffic)]
    # At step s sender t_i sends to r_{i+s} (indices mod 5).
    assert steps[0] == ["t1->r1", "t2->r2", "t3->r3", "t4->r4", "t5->r5"]
    assert steps[2] == ["t1->r3", "t2->r4", "t3->r5", "t4->r1", "t5->r2"]
    s = plan(two_switch_net, traffic, "round-robin")
    # Steps 3 and 4 (1-based) congest on l_ab and l_ba and take two frames each.
    assert [len(f) for f in s.frames] == [5, 5, 3, 2, 3, 2, 5]


def test_heterogeneous_bound_is_exact():
    # h1 -> s -> h2 over a 3 B/s link and a 2 B/s link; sizes 5 and 7 bytes on the slow link.
    nodes = [Node("h1"), Node("h2"), Node("h3"), Node("s", "switch")]
    links = [Link("h1>s", "h1", "s", 3), Link("s>h2", "s", "h2", 2), Link("h3>s", "h3", "s", 10),
             Link("s>h1", "s", "h1", 1), Link("h2>s", "h2", "s", 1), Link("s>h3", "s", "h3", 1)]
    net = Network(nodes, links)
    b = compute_bound(net, Traffic([Transfer("h1", "h2", 5), Transfer("h3", "h2", 7)]))
    assert b.duration_s == Fraction(12, 2)  # s>h2 carries 12 bytes at 2 B/s
    assert b.bottlenecks == ["s>h2"] and not b.uniform
    assert b.liquid_throughput_Bps == 2
    # The port rate is 1 B/s (s>h1, h2>s): s>h2 has 2 slots and takes both transfers in one
    # frame, each at a slot rate of 1 B/s; the frame lasts as long as the 7-byte one.
    assert b.slots == {"h1>s": 3, "s>h2": 2, "h3>s": 10}
    assert b.frame_lower_bound == 1 and b.frame_bound_time_s == 7
    assert b.slot_model_gap_s == 1 and b.frame_bound_ratio == Fraction(6, 7)


def test_t1_half_all_to_all_counts(t1_net):
    hosts = allocation_hosts(t1_net, [4, 0, 4, 0, 4, 0, 4, 0])
    b = compute_bound(t1_net, half_all_to_all(t1_net, hosts))
    # 16 nodes, N^2 = 256 transfers; same-parity switches route through a switch of the other
    # parity, so each used inter-switch link carries 32 transfers, twice the node links' 16.
    assert b.transfers == 256 and b.duration == 32
    assert all(">" in r and r.startswith("s") and r.split(">")[1].startswith("s") for r in b.bottlenecks)


def test_all_to_all_excludes_self(t1_net):
    hosts = allocation_hosts(t1_net, [2, 1, 0, 0, 0, 0, 0, 0])
    assert len(all_to_all(t1_net, hosts)) == 6
    assert len(half_all_to_all(t1_net, hosts)) == 9


def test_random_is_deterministic_per_seed(t1_net):
    traffic = half_all_to_all(t1_net, allocation_hosts(t1_net, [2, 2, 2, 2, 0, 0, 0, 0]))
    a = plan(t1_net, traffic, "random", seed=4)
    b = plan(t1_net, traffic, "random", seed=4)
    assert a.frames == b.frames and a.info.parameters == {"seed": 4}


def test_unknown_algorithm_is_an_input_error(two_switch_net):
    from liquidsched.errors import InputError

    with pytest.raises(InputError, match="unknown algorithm 'fastest'"):
        plan(two_switch_net, half_all_to_all(two_switch_net), "fastest")


def test_plan_accepts_a_callable(two_switch_net):
    traffic = half_all_to_all(two_switch_net)

    def one_per_frame(net, traffic):
        return [[i] for i in range(len(traffic))]

    s = plan(two_switch_net, traffic, one_per_frame)
    assert s.length == 25 and s.info.algorithm == "one_per_frame" and s.info.optimal is None


def test_dsatur_on_the_papers_examples(two_switch_net, t1_net):
    traffic = half_all_to_all(two_switch_net)
    s = plan(two_switch_net, traffic, "dsatur")
    assert 6 <= s.length <= 7 and s.info.algorithm == "dsatur"
    # Full T1 half all-to-all: 1024 transfers; no schedule beats Λ = 48 frames.
    s = plan(t1_net, half_all_to_all(t1_net), "dsatur")
    assert s.length >= 48 and s.info.lower_bound == 48


@settings(max_examples=60, deadline=None)
@given(problems())
def test_dsatur_against_brute_force_colouring(problem):
    net, traffic = problem
    assume(len(traffic) <= 7)
    sets = traffic.resource_sets(net)
    conflicts = [{v for v in range(len(sets)) if v != u and sets[u] & sets[v]} for u in range(len(sets))]
    s = plan(net, traffic, "dsatur")
    assert validate(s) == []
    # Never fewer frames than the optimum with slots, never more than a greedy colouring of the
    # (slot-free) conflict graph can need.
    assert optimal_length(sets, net.resource_slots) <= s.length <= max(len(c) for c in conflicts) + 1

"""The weighted scheduler (steps of pieces for any sizes on any network with slots) against the
bounds every frame schedule obeys and the fractional optimum found by column generation."""

from __future__ import annotations

from collections import Counter
from fractions import Fraction

import pytest
from hypothesis import assume, given, settings
from hypothesis import strategies as st

from liquidsched import build_topology, compute_bound, plan, validate
from liquidsched.bounds import frame_lower_bound, transfer_slot_times_s
from liquidsched.network import HOST, SWITCH, Link, Network, Node
from liquidsched.routing import ShortestPath
from liquidsched.schedulers.weighted import fractional_frame_optimum
from liquidsched.traffic import Traffic, Transfer, all_to_all, make_traffic

from .strategies import networks


@st.composite
def uneven_problems(draw, max_transfers: int = 12):
    net = draw(networks())
    senders = net.senders()
    receivers = net.receivers()
    assume(senders and receivers)
    pairs = draw(st.lists(st.tuples(st.sampled_from(senders), st.sampled_from(receivers)), min_size=1,
                          max_size=max_transfers))
    return net, Traffic([Transfer(s, d, draw(st.integers(1, 5 * 10**6))) for s, d in pairs])


@settings(max_examples=120, deadline=None)
@given(uneven_problems(), st.sampled_from([0.0, 0.001, 0.05]))
def test_weighted_is_valid_and_never_below_what_frames_allow(problem, beta):
    """Σ step lengths ≥ Λ (a step of length L carries at most L × capacity over a resource) and
    steps ≥ the frame bound, so the cost is at least Λ + β × frame bound."""
    net, traffic = problem
    s = plan(net, traffic, "weighted", overhead_s=beta)
    assert validate(s) == []
    bound = compute_bound(net, traffic).duration_s
    steps = frame_lower_bound(traffic.resource_sets(net), net.resource_slots)
    assert s.length >= steps
    assert s.makespan_s() >= bound
    assert s.makespan_s(beta) >= bound + Fraction(beta) * steps


def program_over_every_frame(net, traffic) -> float:
    """The fractional optimum by brute force: every slot-valid frame a column of one linear
    program, solved by HiGHS (tiny traffics only)."""
    import highspy

    paths, slots = traffic.resource_lists(net), net.resource_slots
    frames = []
    for mask in range(1, 1 << len(paths)):
        members = [t for t in range(len(paths)) if mask >> t & 1]
        load = Counter(r for t in members for r in paths[t])
        if all(n <= slots[r] for r, n in load.items()):
            frames.append(members)
    h = highspy.Highs()
    h.silent()
    x = [h.addVariable(lb=0) for _ in frames]
    for t, need in enumerate(transfer_slot_times_s(net, traffic)):
        h.addConstr(sum(x[f] for f, members in enumerate(frames) if t in members) >= float(need))
    h.minimize(sum(x))
    return h.getInfo().objective_function_value


@settings(max_examples=60, deadline=None)
@given(uneven_problems(max_transfers=9))
def test_fractional_optimum_is_the_program_over_every_frame(problem):
    """Column generation with the core's pricing reaches the optimum of the program that has
    every frame, and Λ ≤ that optimum ≤ weighted (β = 0)."""
    net, traffic = problem
    optimum = fractional_frame_optimum(net, traffic)
    assert float(optimum) == pytest.approx(program_over_every_frame(net, traffic), rel=1e-7)
    bound = compute_bound(net, traffic).duration_s
    assert optimum >= bound * (1 - Fraction(1, 10**6))
    assert plan(net, traffic, "weighted").makespan_s() >= optimum * (1 - Fraction(1, 10**6))


def shared_cable_star(hosts: int) -> Network:
    """Hosts on one switch, each by one shared-duplex cable of 1 MB/s: a transfer holds the
    cables of both its hosts."""
    names = [f"h{i}" for i in range(hosts)]
    links = [link for h in names for link in (Link(f"{h}>s", h, "s", 1e6), Link(f"s>{h}", "s", h, 1e6))]
    return Network([Node("s", SWITCH)] + [Node(h, HOST) for h in names], links, ShortestPath(),
                   [(f"{h}>s", f"s>{h}") for h in names], name="shared-cable star")


@pytest.mark.parametrize("hosts, optimum", [(3, 3), (5, Fraction(5, 2))])
def test_fractional_optimum_of_an_odd_cycle_of_conflicts(hosts, optimum):
    """h0 → h1 → … → h0, 1 s each: each cable carries two transfers, so Λ = 2 s, but transfers
    conflict along an odd cycle. With 3 hosts no two fit together: 3 s. With 5, a frame holds
    at most 2 and every transfer is in as many of the 5 such frames: 5 × 1/2 s (the fractional
    chromatic number of the 5-cycle), where whole frames need 3 s."""
    net = shared_cable_star(hosts)
    traffic = Traffic([Transfer(f"h{i}", f"h{(i + 1) % hosts}", 10**6) for i in range(hosts)])
    assert compute_bound(net, traffic).duration_s == 2
    assert fractional_frame_optimum(net, traffic) == optimum
    assert plan(net, traffic, "liquid").length == 3


@pytest.mark.parametrize("spec", ["two-switch", "hierarchical:d1=4,d2=2", "swiss-t1"])
def test_with_equal_sizes_weighted_is_never_worse_than_the_liquid_search(spec):
    net = build_topology(spec)
    traffic = all_to_all(net) if spec != "swiss-t1" else make_traffic(net, "half-all-to-all")
    w, l = plan(net, traffic, "weighted"), plan(net, traffic, "liquid", time_limit=10)
    assert validate(w) == [] and w.makespan_s() <= l.makespan_s()


def test_uneven_sizes_through_one_link_take_their_total_time():
    """One link, three transfers of 1, 2 and 3 MB at 1 MB/s: 6 s in three steps, whatever the
    order; the fractional optimum is the same 6 s."""
    net = build_topology("backbone:n1=3,n2=3,card_Bps=1MB/s,backbone_Bps=1MB/s")
    traffic = Traffic([Transfer(f"a{i}", f"b{i}", i * 10**6) for i in (1, 2, 3)])
    s = plan(net, traffic, "weighted")
    assert s.makespan_s() == 6 and s.length == 3
    assert fractional_frame_optimum(net, traffic) == 6


def test_heaviest_frame_binding_reports_bad_input_and_its_node_limit():
    """The pricing search across the boundary: a KPBS-like frame (sender, receiver, a backbone
    of 2 slots), a cut search flagged as not proven, bad input as InvalidInputError."""
    from liquidsched import _core
    from liquidsched.errors import InvalidInputError

    paths = [[0, 6, 3], [0, 6, 4], [1, 6, 4], [2, 6, 5]]
    slots = [1] * 6 + [2]
    frame, worth, proven, _ = _core.heaviest_frame(paths, 7, [5.0, 4.0, 3.0, 1.0], slots=slots)
    assert (frame, worth, proven) == ([0, 2], 8.0, True)
    assert _core.heaviest_frame(paths, 7, [5.0, 4.0, 3.0, 1.0], slots=slots, node_limit=1)[2] is False
    with pytest.raises(InvalidInputError, match="transfer 1: weight must be finite"):
        _core.heaviest_frame(paths, 7, [1.0, float("nan"), 1.0, 1.0], slots=slots)
    with pytest.raises(InvalidInputError, match="3 weights for 4 transfers"):
        _core.heaviest_frame(paths, 7, [1.0, 1.0, 1.0], slots=slots)

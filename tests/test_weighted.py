"""The weighted scheduler (steps of pieces for any sizes on any network with slots) against the
bounds every frame schedule obeys and the fractional optimum found by column generation."""

from __future__ import annotations

from fractions import Fraction

import pytest
from hypothesis import assume, given, settings
from hypothesis import strategies as st

from liquidsched import build_topology, compute_bound, plan, validate
from liquidsched.bounds import frame_lower_bound
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


@settings(max_examples=25, deadline=None)
@given(uneven_problems(max_transfers=8))
def test_weighted_against_the_fractional_optimum(problem):
    """Λ ≤ fractional optimum ≤ weighted (β = 0), the optimum by column generation in HiGHS."""
    net, traffic = problem
    optimum = fractional_frame_optimum(net, traffic)
    bound = compute_bound(net, traffic).duration_s
    assert optimum >= bound * (1 - Fraction(1, 10**6))
    assert plan(net, traffic, "weighted").makespan_s() >= optimum * (1 - Fraction(1, 10**6))


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

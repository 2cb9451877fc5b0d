"""KPBS (paper 004): the structure of a traffic through one backbone, the lower bound, GGP and
OGGP against the paper's examples, the validator and their proven factor."""

from __future__ import annotations

import json
from fractions import Fraction

import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

from liquidsched import TrafficError, build_topology, plan, validate
from liquidsched.cli import main
from liquidsched.schedulers.kpbs import kpbs_instance, kpbs_lower_bound_s
from liquidsched.simulate import simulate
from liquidsched.topologies import backbone
from liquidsched.traffic import Traffic, Transfer, all_to_all

MB = 10**6


def fig2():
    """Paper 004 Fig. 2: k = 2, three transfers of 1, 1 and 2 s at 1 MB/s cards."""
    net = backbone(3, 3, card_Bps=1e6, backbone_Bps=2e6)
    return net, Traffic([Transfer("a1", "b1", MB), Transfer("a2", "b2", MB), Transfer("a3", "b3", 2 * MB)], "fig2")


@pytest.mark.parametrize("algorithm", ["ggp", "oggp", "solstice"])
def test_paper_004_fig2_scheduled_in_two_steps_at_the_bound(algorithm):
    net, traffic = fig2()
    beta = Fraction(1, 10)
    s = plan(net, traffic, algorithm, overhead_s=float(beta))
    assert validate(s) == []
    assert s.length == 2
    # Scheduled 2 + 2β, and no schedule does better: the bound is 2 + 2β too.
    assert s.makespan_s(beta) == 2 + 2 * beta
    assert kpbs_lower_bound_s(kpbs_instance(net, traffic), beta) == 2 + 2 * beta


def test_paper_004_fig2_all_at_once_takes_25_percent_longer():
    """Brute force: all three at once, the backbone shared fairly, 2.5 s (paper 004 §3.1)."""
    net, traffic = fig2()
    s = plan(net, traffic, "ggp")
    assert simulate(s, "fluid", "all-at-once").makespan_s == pytest.approx(2.5)


@pytest.mark.parametrize("algorithm", ["ggp", "oggp"])
def test_fig1_steps_of_5_4_and_2_cost_14_the_bound(algorithm):
    """Fig. 1: steps of 5, 4 and 2 with β = 1 cost 3 + 11 = 14, the transfer of 7 cut into 5 and
    2. The figure's drawing is not in the text; this instance fits its caption (k = 2, times 7,
    5, 4, 4 and 2), and 14 is both its bound and its optimum."""
    net = backbone(3, 3, card_Bps=1e6, backbone_Bps=2e6)
    traffic = Traffic([Transfer("a1", "b1", 7 * MB), Transfer("a2", "b2", 5 * MB), Transfer("a2", "b1", 4 * MB),
                       Transfer("a3", "b3", 4 * MB), Transfer("a3", "b2", 2 * MB)])
    bound = kpbs_lower_bound_s(kpbs_instance(net, traffic), 1)
    assert bound == 14
    s = plan(net, traffic, algorithm, overhead_s=1.0)
    assert validate(s) == []
    assert sorted(s.frame_durations_s()) == [2, 4, 5] and s.makespan_s(1) == 14
    pieces_of_7 = sorted(p.bytes for f in s.frames for p in f if p.transfer == "a1->b1")
    assert pieces_of_7 == [2 * MB, 5 * MB]


@st.composite
def kpbs_problems(draw, on_beta_grid: bool):
    n1, n2 = draw(st.integers(1, 5)), draw(st.integers(1, 5))
    k = draw(st.integers(1, 5))
    net = backbone(n1, n2, card_Bps=1e6, backbone_Bps=k * 1e6)
    pairs = draw(st.lists(st.tuples(st.integers(1, n1), st.integers(1, n2)), min_size=1, max_size=12))
    # β = 0.5 s: sizes on the grid are whole multiples of 0.5 MB at 1 MB/s.
    sizes = st.integers(1, 8).map(lambda u: u * MB // 2) if on_beta_grid else st.integers(1, 4 * MB)
    traffic = Traffic([Transfer(f"a{s}", f"b{r}", draw(sizes)) for s, r in pairs])
    return net, traffic, draw(st.sampled_from(["ggp", "oggp"]))


@settings(max_examples=150, deadline=None)
@given(kpbs_problems(on_beta_grid=True))
def test_on_the_beta_grid_a_schedule_is_valid_and_within_twice_the_bound(problem):
    net, traffic, algorithm = problem
    beta = Fraction(1, 2)
    s = plan(net, traffic, algorithm, overhead_s=float(beta))
    assert validate(s) == []
    bound = kpbs_lower_bound_s(kpbs_instance(net, traffic), beta)
    assert bound <= s.makespan_s(beta) <= 2 * bound


@settings(max_examples=150, deadline=None)
@given(kpbs_problems(on_beta_grid=False), st.sampled_from([0.0, 0.01, 0.5]))
def test_any_sizes_give_a_valid_schedule_never_below_the_bound(problem, beta):
    net, traffic, algorithm = problem
    s = plan(net, traffic, algorithm, overhead_s=beta)
    assert validate(s) == []
    assert s.makespan_s(beta) >= kpbs_lower_bound_s(kpbs_instance(net, traffic), beta)
    if beta == 0:
        # Without a step cost, peeling is optimal: max(W, P/k), up to whole bytes (a piece is
        # never a fraction of a byte; a byte takes 1 µs on these 1 MB/s cards) in each step.
        bound = kpbs_lower_bound_s(kpbs_instance(net, traffic), 0)
        assert bound <= s.makespan_s(0) <= bound + Fraction(s.length, 10**6)


def test_a_network_that_is_not_kpbs_is_refused_naming_a_transfer():
    net = build_topology("fat-tree:k=4")
    with pytest.raises(TrafficError, match=r"transfer \S+ crosses (\d shared resources|\S+, not the backbone)"):
        plan(net, all_to_all(net), "ggp")


def test_the_backbone_and_k_come_from_the_network():
    net = build_topology("backbone:n1=4,n2=4,card_Bps=100Mbit/s,backbone_Bps=200Mbit/s")
    inst = kpbs_instance(net, all_to_all(net))
    assert (inst.backbone, inst.k, len(inst.senders), len(inst.receivers)) == ("A>B", 2, 4, 4)


def test_plan_ggp_on_the_command_line(capsys):
    argv = ["plan", "--topology", "backbone:n1=3,n2=3", "--traffic", "random:seed=2", "--algorithm", "oggp",
            "--overhead", "0.01", "--json"]
    assert main(argv) == 0
    data = json.loads(capsys.readouterr().out)
    assert data["algorithm"] == "oggp" and data["stats"]["cost_s"] >= data["stats"]["kpbs_lower_bound_s"]
    prediction = data["prediction"]
    assert prediction["scheduled_s"] >= prediction["lower_bound_s"] and prediction["all_at_once_s"] > 0.01
    assert main(["plan", "--topology", "two-switch", "--algorithm", "dsatur", "--overhead", "1"]) == 2
    assert "--overhead applies to --algorithm ggp or oggp" in capsys.readouterr().err


@settings(max_examples=10, deadline=None)
@given(st.integers(1, 3), st.integers(1, 3), st.integers(1, 3),
       st.lists(st.tuples(st.integers(1, 3), st.integers(1, 3), st.integers(1, 6)), min_size=1, max_size=4))
# Two transfers of one pair: HiGHS once left a sliver of one in the other's step, inside its
# integrality tolerance, and the schedule put both in one frame.
@example(2, 1, 1, [(2, 1, 1), (1, 1, 5), (2, 1, 1), (1, 1, 6)])
def test_ggp_and_oggp_against_the_exact_optimum(n1, n2, k, items):
    """The MILP optimum (HiGHS) lies between the lower bound and GGP/OGGP, which stay within
    twice it on the β grid (β = 1 s, whole seconds)."""
    from liquidsched.schedulers.kpbs import kpbs_optimum

    net = backbone(n1, n2, card_Bps=1e6, backbone_Bps=k * 1e6)
    traffic = Traffic([Transfer(f"a{min(s, n1)}", f"b{min(r, n2)}", u * MB) for s, r, u in items])
    best = kpbs_optimum(net, traffic, 1.0, time_limit=30)
    assert validate(best) == [] and best.info.stats["proven"]
    optimum = best.makespan_s(1)
    bound = kpbs_lower_bound_s(kpbs_instance(net, traffic), 1)
    assert bound <= optimum + Fraction(1, 10**6)
    for algorithm in ("ggp", "oggp"):
        cost = plan(net, traffic, algorithm, overhead_s=1.0).makespan_s(1)
        assert optimum - Fraction(1, 10**6) <= cost <= 2 * optimum + Fraction(1, 10**6)


@pytest.mark.parametrize("algorithm", ["ggp", "oggp"])
def test_without_a_step_cost_peeling_reaches_p_over_k_when_it_is_not_whole(algorithm):
    """Three disjoint 10 s transfers, k = 2: the backbone needs 15 s, which pieces of half a
    transfer reach (the unit must divide P/k, not only the times)."""
    net = backbone(3, 3, card_Bps=1e6, backbone_Bps=2e6)
    traffic = Traffic([Transfer(f"a{i}", f"b{i}", 10 * MB) for i in (1, 2, 3)])
    s = plan(net, traffic, algorithm)
    assert validate(s) == [] and s.makespan_s(0) == 15


def test_highs_works_after_or_tools_is_loaded():
    """OR-Tools and highspy each ship a libhighs.so.1; the project pins them to one HiGHS."""
    import subprocess
    import sys

    probe = ("from ortools.sat.python import cp_model\nimport highspy\n"
             "h = highspy.Highs(); h.silent(); x = h.addVariable(lb=0, ub=3); h.addConstr(x >= 1.5)\n"
             "h.minimize(x); print(h.val(x))")
    out = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True)
    assert out.returncode == 0 and out.stdout.strip() == "1.5", out.stderr


def test_plan_predicts_fig2_side_by_side(capsys):
    """Paper 004 Fig. 2 and 3 with β = 0.1 s: scheduled 2.2 s, bound 2.2 s, all at once 0.1 + 2.5 s."""
    net, traffic = fig2()
    from liquidsched.schedulers.kpbs import kpbs_prediction

    p = kpbs_prediction(plan(net, traffic, "oggp", overhead_s=0.1))
    assert p["scheduled_s"] == pytest.approx(2.2) and p["lower_bound_s"] == pytest.approx(2.2)
    assert p["all_at_once_s"] == pytest.approx(2.6)


@settings(max_examples=100, deadline=None)
@given(kpbs_problems(on_beta_grid=False), st.sampled_from([0.0, 0.5]))
def test_solstice_gives_valid_schedules_never_below_the_bound(problem, beta):
    net, traffic, _ = problem
    s = plan(net, traffic, "solstice", overhead_s=beta)
    assert validate(s) == [] and s.info.algorithm == "solstice"
    assert s.makespan_s(beta) >= kpbs_lower_bound_s(kpbs_instance(net, traffic), beta)

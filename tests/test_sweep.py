"""The sweep in the core against a plain Python loop and against full bound computations."""

from __future__ import annotations

from fractions import Fraction

import pytest
from hypothesis import given, settings

from liquidsched import TopologyError, compute_bound, half_all_to_all
from liquidsched.sweep import run_sweep, sweep_model, sweep_python
from liquidsched.topologies import build_topology
from liquidsched.traffic import allocation_hosts

from .strategies import networks


def as_reference(result):
    return {(c.hosts, c.liquid_throughput_Bps): (c.count, c.allocation) for c in result.classes}


@pytest.fixture(scope="module")
def t1_sweep(t1_net):
    return run_sweep(t1_net)


def test_t1_sweep_shape(t1_sweep):
    assert t1_sweep.allocations == 5**8
    assert sum(c.count for c in t1_sweep.classes) == 5**8 - 1  # all but the empty allocation
    # Paper 000 §7 reports 362 distinct liquid throughput values on the T1.
    assert len(t1_sweep.classes) == 362
    keys = [(c.hosts, c.liquid_throughput_Bps) for c in t1_sweep.classes]
    assert keys == sorted(keys) and len(set(keys)) == len(keys)


def test_t1_representatives_match_full_bound(t1_net, t1_sweep):
    for c in t1_sweep.classes[::3]:
        traffic = half_all_to_all(t1_net, allocation_hosts(t1_net, c.allocation))
        b = compute_bound(t1_net, traffic)
        assert b.liquid_throughput_Bps == c.liquid_throughput_Bps, c.allocation
        assert c.crossbar_throughput_Bps == c.hosts * Fraction(86_000_000)


def test_t1_full_allocation(t1_net, t1_sweep):
    full = [c for c in t1_sweep.classes if c.hosts == 32]
    assert len(full) == 1 and full[0].count == 1 and full[0].allocation == (4,) * 8
    # 32 nodes, 1024 transfers. An inter-switch link carries its own switch pair (4 x 4 = 16)
    # and the pairs routed over it; the 24 routed pairs make 48 hops over 32 links, and the
    # busiest links take two of them: 16 + 2 x 16 = 48.
    assert compute_bound(t1_net, half_all_to_all(t1_net)).duration == 48
    assert full[0].liquid_throughput_Bps == Fraction(1024 * 86_000_000, 48)


@settings(max_examples=40, deadline=None)
@given(networks(max_switches=4, max_hosts=6, roles=False))
def test_core_equals_python_loop(net):
    model = sweep_model(net)
    assert as_reference(run_sweep(net)) == sweep_python(model)


@pytest.mark.parametrize("spec", ["hierarchical:d1=3,d2=3,shared_uplinks=true",
                                  "fat-tree:k=4,oversubscription=2,routing=by-edge-switch"])
def test_core_equals_python_loop_on_builders(spec):
    net = build_topology(spec)
    result = run_sweep(net, include_self=False)
    assert as_reference(result) == sweep_python(sweep_model(net, include_self=False))


def test_the_sweep_refuses_routes_chosen_by_destination_host_naming_a_pair():
    # D-mod-k sends hosts of one edge switch up different aggregation switches: an allocation's
    # bound is then not a function of how many hosts it takes on each switch.
    with pytest.raises(TopologyError, match=r"the route h0.0.0 → h0.1.1 is not the route between their switches"):
        run_sweep(build_topology("fat-tree:k=4"))


def test_best_allocation_answers_which_nodes(t1_sweep):
    best = t1_sweep.best_allocation(16)
    worst = min((c for c in t1_sweep.classes if c.hosts == 16), key=lambda c: c.liquid_throughput_Bps)
    assert best.liquid_throughput_Bps == 16 * 86_000_000  # crossbar speed is reachable
    assert worst.liquid_throughput_Bps < best.liquid_throughput_Bps


def test_sweep_needs_hosts_that_send_and_receive(two_switch_net):
    with pytest.raises(TopologyError, match="does not both send and receive"):
        run_sweep(two_switch_net)


def test_core_errors_become_liquidsched_exceptions():
    from liquidsched import _core
    from liquidsched.errors import InvalidInputError, ProblemTooLargeError

    access = [[[(100, "up"), (100, "down")]]] * 2
    with pytest.raises(InvalidInputError, match="allocation has 3 entries but there are 2 groups"):
        _core.sweep_bound(access, [], True, [1, 1, 1])
    with pytest.raises(InvalidInputError, match="group pair \\(0, 7\\)"):
        _core.sweep_bound(access, [(100, [(0, 7)])], True, [1, 1])
    with pytest.raises(ProblemTooLargeError):
        _core.sweep_classes([[[(1, "up")]] * 9] * 12, [], True)
    hosts, transfers, duration, _ = _core.sweep_bound(access, [(100, [(0, 1)])], True, [1, 1])
    assert (hosts, transfers, Fraction(*duration)) == (2, 4, Fraction(2, 100))

"""Steady state (paper 003): hand-worked optima, the paper's settings, and properties of every
period on random heterogeneous platforms."""

from __future__ import annotations

from fractions import Fraction as F

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from liquidsched.errors import InputError, TopologyError
from liquidsched.steady import Platform, PlatformEdge, PlatformNode, Series, solve_steady
from liquidsched.steady.baselines import baseline_trees, binomial_reduce_tree, period_of_trees
from liquidsched.steady.exact import exact_solution
from liquidsched.steady.lp import build_program, solve_program
from liquidsched.steady.period import decompose
from liquidsched.steady.platform import chain, complete, platform_of_network, tiers
from liquidsched.steady.trees import activities_of, fixed_period, pipeline, stages
from liquidsched.topologies import build_topology
from liquidsched.validation import validate


def _platform(edges: dict[tuple[str, str], F], speeds: dict[str, F] | None = None) -> Platform:
    names = sorted({n for pair in edges for n in pair})
    speeds = speeds or {}
    return Platform([PlatformNode(n, speeds.get(n, F(1))) for n in names],
                    [PlatformEdge(a, b, c) for (a, b), c in edges.items()])


def _check_period(state) -> None:
    """The acceptance points every solved series must meet: the matchings fit in the period,
    every port and processor is busy at most T, the trees add up to the activities and carry ρT
    operations."""
    period = state.period
    assert period.operations == state.throughput * period.length_s
    for node, busy in period.busy_s(state.platform, state.series).items():
        assert max(busy.values()) <= period.length_s, node
    d = state.decomposition
    assert d.length_s <= d.repeat * period.length_s
    comm = max(max(b["send"], b["receive"]) for b in period.busy_s(state.platform, state.series).values())
    assert d.length_s == d.repeat * comm
    sends, tasks = activities_of(state.trees)
    assert sends == period.sends and tasks == period.tasks
    per_type: dict = {}
    for tree in state.trees:
        per_type[tree.type] = per_type.get(tree.type, 0) + tree.weight
    assert set(per_type.values()) == {period.operations}


# -- hand-worked optima --------------------------------------------------------------------------

def test_a_star_scatter_sends_every_message_through_the_source_port():
    # The source sends one message of each type per operation, at costs 1, 2 and 3: 6 s per
    # operation on its one port, nothing else is busier.
    p = _platform({("s", "a"): F(1), ("s", "b"): F(2), ("s", "c"): F(3),
                   ("a", "s"): F(1), ("b", "s"): F(2), ("c", "s"): F(3)})
    state = solve_steady(p, Series("scatter", ("a", "b", "c"), "s", 1))
    assert state.throughput == F(1, 6)
    assert state.period.length_s == 6 and state.period.operations == 1
    _check_period(state)
    assert state.decomposition.length_s == 6


def _two_routes() -> Platform:
    return _platform({("s", "a"): F(1, 10), ("s", "b"): F(1, 10), ("a", "t"): F(1), ("a", "u"): F(1),
                      ("b", "t"): F(2)})


def test_a_scatter_forced_over_two_routes():
    # m_t goes by a (x per s) or by b (y per s); a also forwards all of m_u. Ports:
    # a sends x + TP ≤ 1, b sends 2y ≤ 1, t receives x + 2y ≤ 1, TP = x + y. The optimum is
    # x = y = 1/3, TP = 2/3; a single route gives 1/2 (by a: 2x ≤ 1; by b: 2y ≤ 1).
    state = solve_steady(_two_routes(), Series("scatter", ("t", "u"), "s", 1))
    assert state.throughput == F(2, 3)
    p = state.platform
    via = {p.edges[e].src for (e, t), n in state.period.sends.items() if t == "t" and p.edges[e].dst == "t"}
    assert via == {"a", "b"}
    assert sorted(len(tree.tasks) for tree in state.trees if tree.type == "t") == [2, 2]
    _check_period(state)


def test_the_programs_as_printed_count_messages_that_go_round_a_target_again():
    # Chain s – a – b, targets a and b, s → a costs 1 and a ↔ b 1/10. The truth: s sends both
    # messages of an operation on its one port at cost 1, TP = 1/2. As printed, a and b may
    # pass their own messages back and forth and count each return as a delivery: a receives
    # two messages per operation at 1/10 each, TP = 5.
    p = _platform({("s", "a"): F(1), ("a", "s"): F(1), ("a", "b"): F(1, 10), ("b", "a"): F(1, 10)})
    series = Series("scatter", ("a", "b"), "s", 1)
    assert solve_steady(p, series).throughput == F(1, 2)
    printed = build_program(p, series, as_printed=True)
    assert exact_solution(printed, solve_program(printed)).objective == 5
    _check_period(solve_steady(p, series))


def _k3(costs: dict[tuple[int, int], int] | None = None, speed: int = 1) -> Platform:
    costs = costs or {}
    return _platform({(f"P{i}", f"P{j}"): F(costs.get((i, j), 1)) for i in range(3) for j in range(3) if i != j},
                     {f"P{i}": F(speed) for i in range(3)})


def test_k3_all_to_all_uniform_and_with_a_slow_edge_relayed():
    series = Series("all-to-all", ("P0", "P1", "P2"), message_bytes=1)
    # Uniform: each node sends two messages per operation at cost 1.
    uniform = solve_steady(_k3(), series)
    assert uniform.throughput == F(1, 2)
    _check_period(uniform)
    # P0 → P2 costs 10: a share f of m_{0,2} goes direct, the rest by P1. P0 sends
    # (1 + (1 - f) + 10 f) TP = (2 + 9f) TP, P1 sends and receives (3 - f) TP, P2 receives
    # (2 + 9f) TP: both are 1 at f = 1/10, TP = 10/29.
    relayed = solve_steady(_k3({(0, 2): 10}), series)
    assert relayed.throughput == F(10, 29)
    _check_period(relayed)


def test_k3_reduce_bound_by_the_target_port_then_by_computing():
    # One message into the target per operation bounds TP by 1, reached by v2 → P1, P1
    # computes v[1,2], sends it to P0. With tasks of 2 s, the two tasks of an operation on three
    # processors bound TP by 3/4, reached by mixing four trees (see the module doc of trees).
    fast = solve_steady(_k3(), Series("reduce", ("P0", "P1", "P2"), "P0", 1, 1))
    assert fast.throughput == 1
    _check_period(fast)
    slow = solve_steady(_k3(), Series("reduce", ("P0", "P1", "P2"), "P0", 1, 2))
    assert slow.throughput == F(3, 4)
    _check_period(slow)
    computing = {n: b["compute"] for n, b in slow.period.busy_s(slow.platform, slow.series).items()}
    assert set(computing.values()) == {slow.period.length_s}


# -- the paper's settings ----------------------------------------------------------------------

def test_fig13_multi_tree_against_the_binomial_tree_on_a_homogeneous_complete_graph():
    # 10 nodes, 100 MB/s, 100 Mflop/s, 100 MB values. Cheap tasks: the target receives one
    # message per operation (1 s), the binomial root four: 4×. Heavy tasks (1e11 flop, 1000 s):
    # 9 tasks over 10 processors against the binomial root's 4: 4000/900 = 4.44×.
    p = complete(10, bandwidth_Bps=100e6, speed_flops=100e6)
    for flops, rho, binomial in ((10**5, F(1), F(1, 4)), (10**11, F(1, 900), F(1, 4000))):
        series = Series("reduce", tuple(p.names), "P0", 100_000_000, flops)
        assert solve_steady(p, series).throughput == rho
        assert period_of_trees(p, series, [binomial_reduce_tree(p, series)]).throughput == binomial


def test_the_binomial_tree_reduces_in_rank_order():
    p = chain(5)
    tree = binomial_reduce_tree(p, Series("reduce", tuple(p.names), "P2", 1, 1))
    computed = [t.task for t in tree.tasks if not hasattr(t, "edge")]
    assert computed == [(0, 0, 1), (2, 2, 3), (0, 1, 3), (0, 3, 4)]
    # P4's partial result goes P4 → P3 → P2 → P1 → P0, then the result P0 → P1 → P2.
    assert [t for t in stages(p, tree).values()][-1] >= 3


# -- properties on random heterogeneous platforms --------------------------------------------------

@st.composite
def random_series(draw):
    n = draw(st.integers(3, 6))
    names = [f"N{i}" for i in range(n)]
    speeds = {m: F(draw(st.sampled_from([0, 1, 2, 5]))) for m in names}
    speeds[names[0]] = F(draw(st.sampled_from([1, 2, 5])))
    edges: dict[tuple[str, str], F] = {}
    for i in range(1, n):  # a random tree both ways, so that every node reaches every other
        j = draw(st.integers(0, i - 1))
        c = F(1, draw(st.sampled_from([1, 2, 4, 5, 10])))
        edges[(names[i], names[j])] = edges[(names[j], names[i])] = c
    for _ in range(draw(st.integers(0, n))):
        a, b = draw(st.sampled_from(names)), draw(st.sampled_from(names))
        if a != b:
            # Bandwidths exact in floating point, as the network of a schedule stores them.
            edges[(a, b)] = F(draw(st.sampled_from([1, 2, 4])), draw(st.sampled_from([1, 3, 10])))
    p = Platform([PlatformNode(m, speeds[m]) for m in names], [PlatformEdge(a, b, c) for (a, b), c in edges.items()])
    kind = draw(st.sampled_from(["scatter", "all-to-all", "reduce"]))
    members = draw(st.lists(st.sampled_from(names), min_size=2, max_size=n, unique=True))
    sizes = [1, 2, 3, 8]
    if kind == "scatter":
        root = draw(st.sampled_from(names))
        targets = tuple(m for m in members if m != root) or (names[1] if root == names[0] else names[0],)
        return p, Series(kind, targets, root, {t: draw(st.sampled_from(sizes)) for t in targets})
    if kind == "all-to-all":
        return p, Series(kind, tuple(members), None,
                         {(a, b): draw(st.sampled_from(sizes)) for a in members for b in members if a != b})
    return p, Series(kind, tuple(members), draw(st.sampled_from(names)), draw(st.sampled_from(sizes)),
                     draw(st.sampled_from([1, 3])))


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(random_series())
def test_every_period_is_valid_one_port_and_delivers_rho_t_operations(case):
    platform, series = case
    state = solve_steady(platform, series)
    _check_period(state)
    schedule = state.schedule()
    assert validate(schedule) == []
    # Each frame is a matching: no node sends or receives twice in it.
    at = schedule.traffic.index
    for frame in schedule.frames:
        senders = [schedule.traffic[at[p.transfer]].src for p in frame]
        receivers = [schedule.traffic[at[p.transfer]].dst for p in frame]
        assert len(set(senders)) == len(senders) and len(set(receivers)) == len(receivers)
    assert schedule.makespan_s() == state.decomposition.length_s
    # What reaches the destinations in a period: ρT of each message type.
    p, period = state.platform, state.period
    for t in series.message_types():
        dest = t if series.kind == "scatter" else t[1] if series.kind == "all-to-all" else None
        if dest is not None:
            got = sum(n for (e, ty), n in period.sends.items() if ty == t and p.edges[e].dst == dest)
            assert got == period.operations
    # No periodic schedule of the usual trees beats the optimum.
    if series.kind != "reduce" or not any(p.nodes[m].is_router for m in series.participants):
        assert period_of_trees(p, series, baseline_trees(p, series)).throughput <= state.throughput


@settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(random_series(), st.sampled_from([F(1, 2), F(3), F(10), F(100)]))
def test_a_fixed_period_fits_its_ports_and_loses_at_most_its_bound(case, length):
    platform, series = case
    state = solve_steady(platform, series)
    fixed = fixed_period(state.trees, state.period, length)
    assert state.throughput - fixed.throughput <= fixed.bound
    assert fixed.throughput <= state.throughput
    sends, tasks = activities_of(fixed.trees)
    run = type(state.period)(length, fixed.throughput, fixed.operations, sends, tasks)
    for busy in run.busy_s(platform, series).values():
        assert max(busy.values()) <= length
    d = decompose(platform, run.edge_bytes(series))
    assert d.length_s <= d.repeat * length


def test_the_pipeline_of_k_operations_approaches_rho():
    p = tiers(12, density=0.5, seed=4)
    hosts = p.processors()
    state = solve_steady(p, Series("reduce", tuple(hosts), hosts[0], 10**6, 10**6))
    previous = F(0)
    for k in (1, 10, 100, 1000, 10**5):
        run = pipeline(p, state.trees, state.period.length_s, k)
        assert run.throughput <= state.throughput
        assert run.throughput >= previous
        previous = run.throughput
    assert previous > F(95, 100) * state.throughput


# -- input -------------------------------------------------------------------------------------

def test_a_network_maps_onto_a_platform_and_refuses_shared_duplex():
    net = build_topology("two-switch")
    p = platform_of_network(net)
    assert len(p.edges) == len(net.links) and set(p.names) == set(net.nodes)
    assert all(p.nodes[s].is_router for s in net.switches())
    with pytest.raises(TopologyError, match="shared duplex"):
        platform_of_network(build_topology("hierarchical:d1=2,d2=2,shared_uplinks=true"))


@pytest.mark.parametrize("series, message", [
    (Series("scatter", ("P1", "X"), "P0", 1), "'X' is not a node"),
    (Series("scatter", ("P1",), None, 1), "needs a source"),
    (Series("reduce", ("P0", "P1"), "P0", 1, 0), "work of a task must be positive"),
    (Series("all-to-all", ("P0",)), "at least 2"),
    (Series("scatter", ("P1",), "P0", 0), "positive whole number of bytes"),
])
def test_bad_series_are_refused_with_what_is_wrong(series, message):
    with pytest.raises(InputError, match=message):
        solve_steady(chain(3), series)


# -- command line --------------------------------------------------------------------------------

def _cli(capsys, *argv):
    from liquidsched.cli import main

    code = main(list(argv))
    captured = capsys.readouterr()
    return code, captured.out, captured.err


def test_cli_steady_writes_a_period_that_check_and_simulate_take(capsys, tmp_path):
    import json

    out_file, plot_file = tmp_path / "period.json", tmp_path / "curve.png"
    code, out, _ = _cli(capsys, "steady", "all-to-all", "--topology", "complete:n=3,bandwidth_Bps=1MB/s",
                        "--message-bytes", "1MB", "--operations", "100", "--json", "--output", str(out_file),
                        "--plot", str(plot_file))
    assert code == 0
    report = json.loads(out)
    assert report["throughput_per_s"] == "1/2" and report["period_s"] == "2"
    assert report["baseline"]["gain"] == 1.0
    assert [r["operations"] for r in report["operations"]] == [1, 10, 100]
    # Every message crosses one edge: the pipeline has nothing to fill, K operations take K periods.
    assert [r["periods"] for r in report["operations"]] == [1, 10, 100]
    assert report["operations"][-1]["of_rho"] == 1.0
    assert plot_file.stat().st_size > 0
    assert _cli(capsys, "check", str(out_file))[0] == 0
    code, out, _ = _cli(capsys, "simulate", "--schedule", str(out_file), "--json")
    assert code == 0 and json.loads(out)["makespan_s"] == 2.0


def test_cli_steady_reduce_on_a_topology_with_speeds_and_a_fixed_period(capsys, tmp_path):
    import json

    import yaml

    topo = tmp_path / "t.yaml"
    topo.write_text(yaml.safe_dump({
        "format": "liquidsched-topology", "version": 1, "switches": ["s"],
        "nodes": [{"id": f"h{i}", "speed_flops": f"{(i + 1) * 100}Mflop/s"} for i in range(3)],
        "cables": [{"a": f"h{i}", "b": "s", "capacity_Bps": "10MB/s"} for i in range(3)]}))
    code, out, _ = _cli(capsys, "steady", "reduce", "--topology", str(topo), "--target", "h0", "--message-bytes",
                        "10MB", "--task-flops", "100Mflop", "--fixed-period", "7", "--json")
    assert code == 0
    report = json.loads(out)
    # The switch forwards one message at a time: it receives two per reduce at 1 s each, at best.
    assert report["throughput_per_s"] == "1/2"
    fixed = report["fixed_period"]
    assert fixed["period_s"] == "7" and fixed["operations"] == 3
    code, out, _ = _cli(capsys, "steady", "reduce", "--topology", str(topo), "--target", "s", "--task-flops", "1")
    assert code == 0 and "ρ (optimal, proven)" in out


@pytest.mark.parametrize("argv, message", [
    (["scatter", "--topology", "chain:n=3", "--source", "P9"], "'P9' is not a node"),
    (["scatter", "--topology", "chain:n=3", "--task-flops", "1"], "computes nothing"),
    (["all-to-all", "--topology", "chain:n=3", "--target", "P0"], "no --source or --target"),
    (["reduce", "--topology", "chain:n=3,speed=1"], "unknown parameter 'speed'"),
    (["reduce", "--topology", "two-switch", "--task-flops", "1"], "no processor"),
    (["reduce", "--topology", "hierarchical:shared_uplinks=true", "--task-flops", "1"], "shared duplex"),
])
def test_cli_steady_refuses_bad_input_in_one_line(capsys, argv, message):
    code, _, err = _cli(capsys, "steady", *argv)
    assert code == 2 and message in err and "Traceback" not in err

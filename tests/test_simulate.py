"""The simulator: hand-worked cases, paper 004 Fig. 2, and an independent exact fluid model."""

from __future__ import annotations

import dataclasses
import random

from fractions import Fraction

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from liquidsched import _core, compute_bound, plan, validate
from liquidsched.errors import InputError
from liquidsched.network import HOST, SWITCH, Link, Network, Node
from liquidsched.routing import ShortestPath
from liquidsched.schedule import Piece, Schedule, ScheduleInfo
from liquidsched.simulate import simulate
from liquidsched.traffic import Traffic, Transfer, half_all_to_all

from .fluid_reference import fluid_finish_times, gated_finish_times
from .strategies import problems

UNIT = 1_000_000  # bytes; 1 s on a 1 MB/s link


def fig2_network() -> Network:
    """Paper 004 Fig. 2 with k = 2: three senders and three receivers with 1 MB/s cards, the
    backbone carries two cards' worth."""
    nodes = [Node("A", SWITCH), Node("B", SWITCH)]
    links = [Link("A>B", "A", "B", 2.0 * UNIT)]
    for i in (1, 2, 3):
        nodes += [Node(f"a{i}", HOST, "sender"), Node(f"b{i}", HOST, "receiver")]
        links += [Link(f"a{i}>A", f"a{i}", "A", float(UNIT)), Link(f"B>b{i}", "B", f"b{i}", float(UNIT))]
    return Network(nodes, links, ShortestPath(), name="fig2")


def fig2_traffic() -> Traffic:
    return Traffic([Transfer("a1", "b1", UNIT), Transfer("a2", "b2", UNIT), Transfer("a3", "b3", 2 * UNIT)])


def test_paper_004_fig2_brute_force_scheduled_and_bound():
    net, traffic = fig2_network(), fig2_traffic()
    assert compute_bound(net, traffic).duration_s == 2  # the backbone carries 4 MB at 2 MB/s
    everything = Schedule.from_indices(net, traffic, [[0, 1, 2]], ScheduleInfo("all-at-once"))
    assert simulate(everything, "fluid", "all-at-once").makespan_s == pytest.approx(2.5, rel=1e-12)
    # The scheduled exchange: the big transfer in two halves, each beside one unit transfer.
    half = Piece("a3->b3", UNIT)
    scheduled = Schedule(net, traffic, [[Piece("a1->b1", UNIT), half], [Piece("a2->b2", UNIT), half]],
                         ScheduleInfo("kpbs"))
    # Two transfers share the backbone in each frame: it has 2 slots (2 MB/s over 1 MB/s cards),
    # as KPBS allows with k = 2, so the frames are valid and the schedule is liquid.
    assert net.resource_slots[net.link_resource["A>B"]] == 2
    assert validate(scheduled) == [] and scheduled.liquid and scheduled.makespan_s() == 2
    for model in ("fluid", "frames", "circuit"):
        p = simulate(scheduled, model, "frames")
        assert p.makespan_s == pytest.approx(2.0, rel=1e-12), model
        assert p.ratio_to_bound == pytest.approx(1.0)
    # With one slot, a circuit holds the whole backbone: the four unit pieces go one by one.
    one_slot = Network(net.nodes.values(), [dataclasses.replace(l, slots=1) for l in net.links.values()],
                       ShortestPath(), name="fig2-one-slot")
    pieces = Schedule(one_slot, traffic, scheduled.frames, ScheduleInfo("kpbs"))
    assert [v.kind for v in validate(pieces)] == ["conflict", "conflict"]
    assert simulate(pieces, "circuit").makespan_s == pytest.approx(4.0)


def test_two_switch_round_robin_seven_frames_liquid_six(two_switch_net):
    traffic = half_all_to_all(two_switch_net)
    frame_s = UNIT / 100e6  # 1 MB at 100 MB/s
    rr, liquid = plan(two_switch_net, traffic, "round-robin"), plan(two_switch_net, traffic, "liquid")
    for model in ("frames", "circuit"):
        assert simulate(rr, model).makespan_s == pytest.approx(7 * frame_s)
        assert simulate(liquid, model).makespan_s == pytest.approx(6 * frame_s)
    assert simulate(liquid, "fluid", "frames").ratio_to_bound == pytest.approx(1.0)


def test_frame_overhead_and_latency():
    net = fig2_network()
    traffic = Traffic([Transfer("a1", "b1", UNIT)])
    s = Schedule.from_indices(net, traffic, [[0]], ScheduleInfo("one"))
    assert simulate(s, "frames", overhead_s=0.5).makespan_s == pytest.approx(1.5)


def test_utilisation_map_of_a_saturated_backbone():
    net, traffic = fig2_network(), fig2_traffic()
    p = simulate(Schedule.from_indices(net, traffic, [[0, 1, 2]], ScheduleInfo("x")), "fluid", bins=5)
    backbone = net.resources.index("A>B")
    # Busy during the first 1.5 s (three flows), half busy after (one flow of 1 MB/s).
    assert p.utilisation.shape == (len(net.resources), 5)
    assert p.utilisation[backbone].tolist() == pytest.approx([1.0, 1.0, 1.0, 0.5, 0.5])


def test_bad_model_and_policy_are_input_errors(two_switch_net):
    s = plan(two_switch_net, half_all_to_all(two_switch_net), "round-robin")
    with pytest.raises(InputError, match="unknown model 'wormhole'"):
        simulate(s, "wormhole")
    with pytest.raises(InputError, match="unknown policy"):
        simulate(s, "fluid", "eager")
    with pytest.raises(InputError, match="simgrid backend has no steps policy"):
        simulate(s, "fluid", "steps", backend="simgrid")
    with pytest.raises(InputError, match="window applies to the fluid model's window policy"):
        simulate(s, "fluid", "frames", window=2)


def exact_flows(s: Schedule):
    """The schedule's pieces as the core takes them, sizes exact: paths, sizes, senders,
    receivers (hosts in network order) and frames of flow indices."""
    net, traffic = s.network, s.traffic
    sets = traffic.resource_lists(net)
    host = {h: i for i, h in enumerate(net.hosts())}
    paths, sizes, who, to, frames = [], [], [], [], []
    for frame in s.frames:
        frames.append([])
        for piece in frame:
            t = traffic.index[piece.transfer]
            frames[-1].append(len(paths))
            paths.append(sets[t])
            sizes.append(piece.bytes)
            who.append(host[traffic[t].src])
            to.append(host[traffic[t].dst])
    return paths, sizes, who, to, frames


@settings(max_examples=80, deadline=None)
@given(problems(), st.sampled_from(["all-at-once", "frames", "per-sender"]), st.sampled_from(["dsatur", "round-robin"]))
def test_fluid_model_equals_an_independent_exact_computation(problem, policy, algorithm):
    net, traffic = problem
    paths, sizes, who, _, frames = exact_flows(plan(net, traffic, algorithm))
    capacity = [Fraction(c) for c in net.resource_capacity]
    expected = fluid_finish_times(paths, sizes, who, frames, capacity, policy)
    got = _core.simulate(list(net.resource_capacity), paths, [float(z) for z in sizes], [0.0] * len(paths), who,
                         frames, "fluid", policy)
    for e, g in zip(expected, got["finish_s"]):
        assert g == pytest.approx(float(e), rel=1e-9)


@settings(max_examples=60, deadline=None)
@given(problems(), st.sampled_from([1, 2, 3, None]), st.integers(0, 2**16))
def test_window_and_steps_policies_equal_their_definitions(problem, window, seed):
    """The core's gated policies against a direct, exact re-evaluation of their rules after
    every event (tests/fluid_reference.py), on random networks, traffics and step groupings."""
    net, traffic = problem
    paths, sizes, who, to, frames = exact_flows(plan(net, traffic, "round-robin"))
    rng = random.Random(seed)
    steps = sorted(rng.randrange(len(frames)) for _ in frames)
    capacity = [Fraction(c) for c in net.resource_capacity]
    expected = gated_finish_times(paths, sizes, who, to, frames, steps, capacity, window)
    got = _core.simulate(list(net.resource_capacity), paths, [float(z) for z in sizes], [0.0] * len(paths), who,
                         frames, "fluid", "steps" if window is None else "window", receivers=to, frame_steps=steps,
                         window=window or 0)
    for e, g in zip(expected, got["finish_s"]):
        assert g == pytest.approx(float(e), rel=1e-9)


# -- the incremental fluid engine against the from-scratch one ------------------------------------

ENGINE_POLICIES = ["all-at-once", "frames", "per-sender", "window", "steps"]


def run_engine(engine: str, schedule: Schedule, policy: str, latencies=None, overhead_s: float = 0.0,
               steps=None, bins: int = 0) -> dict:
    """The core's fluid model on ``schedule``'s pieces with the given engine, window W = 2."""
    from liquidsched.simulate import flows_of

    net, f = schedule.network, flows_of(schedule)
    return _core.simulate(list(net.resource_capacity), f.paths, f.sizes, latencies or f.latencies, f.senders,
                          f.frames, "fluid", policy, overhead_s, bins, slots=net.resource_slots,
                          receivers=f.receivers, frame_steps=schedule.frame_steps() if steps is None else steps,
                          window=2, engine=engine)


def assert_same_times(got: dict, expected: dict, what: str) -> None:
    """Every start and finish time within 1e-9 (relative) of the expected one."""
    for key in ("start_s", "finish_s"):
        for i, (g, e) in enumerate(zip(got[key], expected[key])):
            assert g == pytest.approx(e, rel=1e-9, abs=1e-300), f"{what}: flow {i} {key} {g} against {e}"
    assert got["rate_updates"] == expected["rate_updates"], what


@settings(max_examples=150, deadline=None)
@given(problems(), st.sampled_from(ENGINE_POLICIES), st.sampled_from(["dsatur", "round-robin"]), st.data())
def test_incremental_fluid_engine_equals_the_from_scratch_one(problem, policy, algorithm, data):
    """Random networks (capacities equal or mixed, shared-duplex cables), random traffics and
    latencies, every start policy: the incremental engine gives the reference engine's times."""
    net, traffic = problem
    schedule = plan(net, traffic, algorithm)
    n = sum(len(frame) for frame in schedule.frames)
    latencies = data.draw(st.lists(st.sampled_from([0.0, 0.0, 1e-4, 2e-3]), min_size=n, max_size=n))
    overhead = data.draw(st.sampled_from([0.0, 1e-3]))
    steps = sorted(data.draw(st.lists(st.integers(0, len(schedule.frames)), min_size=len(schedule.frames),
                                      max_size=len(schedule.frames))))
    runs = {e: run_engine(e, schedule, policy, latencies, overhead, steps) for e in ("incremental", "reference")}
    assert_same_times(runs["incremental"], runs["reference"], policy)


@pytest.mark.parametrize("spec, sizes", [
    ("random:switches=4,hosts=12,extra_cables=2,seed=3", "random"),
    ("random:switches=7,hosts=18,extra_cables=4,seed=11", "random"),
    ("random:switches=3,hosts=16,extra_cables=0,seed=5", "equal"),
    ("fat-tree:k=4", "equal"),
    ("fat-tree:k=4,hosts_per_edge=4", "random"),
    ("crossbar:n=14", "random"),
    ("crossbar:n=30", "random"),
])
def test_incremental_fluid_engine_equals_the_from_scratch_one_on_hundreds_of_flows(spec, sizes):
    """Long cascades of rate changes: hundreds of flows on random networks (mixed capacities and
    latencies, shared-duplex cables), fat trees with equal sizes (ties everywhere) and crossbars
    (where an event changes the rates of most groups), under every policy, with the utilisation map."""
    from liquidsched.topologies import build_topology
    from liquidsched.traffic import random_matrix

    net = build_topology(spec)
    if sizes == "equal":
        traffic = half_all_to_all(net)
    else:
        traffic = random_matrix(net, seed=len(spec), min_bytes=1, max_bytes=5_000_000)
    schedule = plan(net, traffic, "round-robin")
    for policy in ENGINE_POLICIES:
        runs = {e: run_engine(e, schedule, policy, bins=6) for e in ("incremental", "reference", "auto")}
        assert_same_times(runs["incremental"], runs["reference"], f"{spec}, {policy}")
        assert_same_times(runs["auto"], runs["reference"], f"{spec}, {policy} (auto)")
        assert runs["incremental"]["utilisation"] == pytest.approx(runs["reference"]["utilisation"], abs=1e-9)
        # Only the incremental engine keeps bottleneck groups, and every run sets some rate.
        assert runs["incremental"]["level_changes"] > 0 and runs["reference"]["level_changes"] == 0


def test_prediction_counts_the_level_changes_of_the_core():
    # The Python prediction carries the engine's count, not a default of its own: 90 flows at
    # once are enough for the incremental engine, which sets rates; the reference sets none.
    from liquidsched.topologies.crossbar import crossbar
    from liquidsched.traffic import random_matrix

    net = crossbar(10)
    schedule = plan(net, random_matrix(net, seed=3, min_bytes=1, max_bytes=5_000_000), "round-robin")
    raw = run_engine("incremental", schedule, "all-at-once")
    got = simulate(schedule, "fluid", "all-at-once")
    assert got.level_changes == raw["level_changes"] > 0
    assert got.rate_updates == raw["rate_updates"]


def test_unknown_engine_is_refused(two_switch_net):
    schedule = plan(two_switch_net, half_all_to_all(two_switch_net), "round-robin")
    with pytest.raises(ValueError, match='unknown engine "fast"'):
        run_engine("fast", schedule, "all-at-once")


# -- the paced policy: the continuous form of a liquid schedule ------------------------------------

@settings(max_examples=60, deadline=None)
@given(problems(), st.sampled_from([0.0, 0.02, 0.3]))
def test_the_paced_policy_ends_every_transfer_at_its_paced_duration_on_any_network(problem, headroom):
    """Heterogeneous capacities, shared cables, uneven sizes: every transfer, paced from the start
    at size / (Λ · (1 + h)), ends at Λ · (1 + h) plus its path's latency (the closed form), no
    resource is ever asked for more than 1 / (1 + h) of its capacity, and paced is never later
    than all at once by more than a latency."""
    net, traffic = problem
    s = plan(net, traffic, "round-robin")
    paced_s = float(compute_bound(net, traffic).duration_s) * (1 + headroom)
    p = simulate(s, "fluid", "paced", pace_headroom=headroom, bins=32)
    assert p.policy == "paced" and p.utilisation.shape[0] == len(net.resources)
    latency = [sum(net.links[link].latency_s for link in net.route(t.src, t.dst)) for t in traffic]
    for t, start, finish, lat in zip(traffic, p.start_s, p.finish_s, latency):
        assert start == 0.0
        assert finish == pytest.approx(paced_s + lat, rel=1e-9, abs=1e-12)
    assert p.utilisation.max(initial=0.0) <= 1 / (1 + headroom) + 1e-9
    together = simulate(s, "fluid", "all-at-once").makespan_s
    assert p.makespan_s <= together * (1 + headroom) + max(latency) + 1e-12


def test_the_paced_policy_takes_a_headroom_and_no_other_policy_does():
    net = Network([Node("a", HOST, "sender"), Node("b", HOST, "receiver"), Node("s", SWITCH)],
                  [Link("a>s", "a", "s", 100.0), Link("s>b", "s", "b", 1000.0)], ShortestPath())
    s = plan(net, Traffic([Transfer("a", "b", 400), Transfer("a", "b", 100)]), "round-robin")
    # Λ = 5 s; with h = 0.25 each transfer runs at its size / 6.25 s: 64 and 16 B/s, 80 % of the link.
    p = simulate(s, "fluid", "paced", pace_headroom=0.25)
    assert p.finish_s == pytest.approx([6.25, 6.25]) and p.ratio_to_bound == pytest.approx(0.8)
    with pytest.raises(InputError, match="headroom applies to the fluid model's paced policy"):
        simulate(s, "fluid", "all-at-once", pace_headroom=0.1)
    with pytest.raises(InputError, match="pace headroom must be a share from 0 to 0.5"):
        simulate(s, "fluid", "paced", pace_headroom=0.9)

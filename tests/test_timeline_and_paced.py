"""The paced mode's chunks, the ways of waiting, and the timeline of a run with its breakdown."""

from __future__ import annotations

import json
import math

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from liquidsched import build_topology, plan
from liquidsched.cli import main
from liquidsched.errors import InputError
from liquidsched.execute import crossing_lambda_s, network_schedule, predict_mode, run_exchange
from liquidsched.execute.paced import MAX_CHUNKS_PER_PAIR, PACE_HEADROOM, paced_chunks, paced_duration_s
from liquidsched.execute.plan import exchange_plan, library_mode_env
from liquidsched.execute.timeline import PARTS, breakdown, union_length
from liquidsched.schedule import Piece, Schedule, ScheduleInfo
from liquidsched.traffic import Traffic, Transfer

from .test_execute import split_schedule

regions = st.lists(st.tuples(st.integers(0, 4), st.integers(0, 4), st.integers(0, 3_000_000)), min_size=1,
                   max_size=12)


@settings(max_examples=80, deadline=None)
@given(regions, st.floats(1e-4, 50.0), st.floats(1e-4, 0.1), st.integers(1, 100_000))
def test_paced_chunks_cover_each_crossing_transfer_once_before_lambda(raw, lambda_s, interval_s, min_chunk):
    layout, offset = [], 0
    for src, dst, nbytes in raw:
        layout.append((src, dst, nbytes, offset, offset + 7))
        offset += nbytes
    chunks = paced_chunks(layout, lambda_s, interval_s, min_chunk)
    assert [c.due_s for c in chunks] == sorted(c.due_s for c in chunks)
    for i, (src, dst, nbytes, s_off, r_off) in enumerate(layout):
        mine = sorted((c for c in chunks if c.transfer == i), key=lambda c: c.send_offset)
        if src == dst or nbytes == 0:
            assert not mine  # local copies and empty transfers cross nothing
            continue
        assert mine[0].send_offset == s_off and mine[0].recv_offset == r_off
        assert all(a.send_offset + a.nbytes == b.send_offset for a, b in zip(mine, mine[1:]))
        assert sum(c.nbytes for c in mine) == nbytes
        assert all(c.src == src and c.dst == dst and 0 <= c.due_s < lambda_s for c in mine)
        # Handed to MPI no faster than the paced rate: k chunks of n take k/n of Λ.
        for k, c in enumerate(sorted(mine, key=lambda c: c.due_s)):
            assert c.due_s >= k * lambda_s / len(mine) - 1e-12
    tags = [(c.src, c.dst, c.tag) for c in chunks]
    assert len(set(tags)) == len(tags) and all(t < 32767 for _, _, t in tags)


def test_paced_chunks_stay_within_the_tags_of_a_pair():
    chunks = paced_chunks([(0, 1, 10**9, 0, 0)], duration_s=1000.0, interval_s=0.001, min_chunk_bytes=1)
    assert len(chunks) <= MAX_CHUNKS_PER_PAIR
    assert sum(c.nbytes for c in chunks) == 10**9


def test_paced_rates_never_exceed_a_resource_on_uneven_traffic():
    """Each transfer paced at size / (Λ (1 + h)): on every resource of a heterogeneous network the
    rates add up to at most its capacity over 1 + h, and the bottlenecks' to exactly that (the
    argument that makes the mode valid for any sizes)."""
    net = build_topology("random:switches=3,hosts=8,seed=5")
    hosts = net.hosts()
    traffic = Traffic([Transfer(a, b, 1000 * (1 + (3 * i + 7 * j) % 11)) for i, a in enumerate(hosts)
                       for j, b in enumerate(hosts) if a != b], "uneven")
    lam = paced_duration_s(crossing_lambda_s(plan(net, traffic, "round-robin")))
    lists = traffic.resource_lists(net)
    for r, capacity in enumerate(net.resource_capacity):
        paced = sum(t.size_bytes / lam for i, t in enumerate(traffic) if r in lists[i])
        assert paced <= capacity / (1 + PACE_HEADROOM) * (1 + 1e-9)
    assert any(math.isclose(sum(t.size_bytes / lam for i, t in enumerate(traffic) if r in lists[i]),
                            c / (1 + PACE_HEADROOM)) for r, c in enumerate(net.resource_capacity))


@pytest.mark.parametrize("lambda_s, headroom", [(0.0, 0.03), (float("nan"), 0.03), (1.0, -0.01), (1.0, 1.0)])
def test_a_paced_duration_needs_a_positive_bound_and_a_headroom_below_the_link(lambda_s, headroom):
    with pytest.raises(InputError):
        paced_duration_s(lambda_s, headroom)


def test_library_modes_name_mpichs_algorithms():
    assert library_mode_env("alltoallv-scattered-4") == {
        "MPIR_CVAR_DEVICE_COLLECTIVES": "none", "MPIR_CVAR_ALLTOALLV_INTRA_ALGORITHM": "scattered",
        "MPIR_CVAR_ALLTOALL_THROTTLE": "4"}
    assert library_mode_env("alltoall-pairwise")["MPIR_CVAR_ALLTOALL_INTRA_ALGORITHM"] == "pairwise"
    assert library_mode_env("paced") is None and library_mode_env("alltoallv-scattered-x") is None


def test_union_and_breakdown_add_up_on_a_hand_made_frames_timeline():
    """Two frames of one piece each on crossbar:n=2 at 1 MB/s pieces of 1 MB: the model is 2 s.
    Measured: posted at 0.1 s, received 1.3 s, barrier, frame 2 posted at 1.5 s (the other rank
    at 1.6 s), received 2.8 s, run ends 3.0 s."""
    assert union_length([(0.0, 1.0), (2.0, 3.0), (2.5, 4.0)]) == 3.0
    net = build_topology("crossbar:n=2,capacity_Bps=1MB/s")
    traffic = Traffic([Transfer("h1", "h2", 1_000_000), Transfer("h2", "h1", 1_000_000)], "two")
    a, b = traffic.names
    schedule = Schedule(net, traffic, [[Piece(a, 1_000_000)], [Piece(b, 1_000_000)]], ScheduleInfo("hand"))
    ranks = [[("send", 0, 0, 0.1, 1.2), ("sync", -1, 0, 1.3, 1.5), ("recv", 1, 1, 0.0, 2.8)],
             [("recv", 0, 0, 0.0, 1.3), ("sync", -1, 0, 1.35, 1.6), ("send", 1, 1, 1.6, 2.7)]]
    got = breakdown(schedule, "frames", ranks, 3.0, 1.0)
    assert got["model_s"] == pytest.approx(2.0)
    parts = got["parts"]
    assert parts["start and end"] == pytest.approx(0.1 + 0.2)
    assert parts["synchronisation"] == pytest.approx(1.6 - 1.3)
    assert parts["stragglers"] == pytest.approx(0.0)
    assert parts["slow pieces"] == pytest.approx((1.3 - 0.1 - 1.0) + (2.8 - 1.6 - 1.0))
    assert sum(parts.values()) == pytest.approx(got["gap_s"]) == pytest.approx(1.0)
    # Without frames: against Λ = 1 s (each direction carries one transfer), the bottleneck idle
    # between the first post and the last byte.
    flat = breakdown(schedule, "all-at-once", ranks, 3.0, 1.0)
    assert flat["model_s"] == 1.0 and sum(flat["parts"].values()) == pytest.approx(2.0)
    assert flat["parts"]["bottleneck idle"] >= 0 and flat["parts"]["synchronisation"] == 0


@pytest.mark.parametrize("progress,prepost", [("sleep", True), ("spin", False), ("sleep", False)])
def test_every_way_of_waiting_delivers_every_byte_and_records_every_piece(progress, prepost):
    schedule = split_schedule(3)
    modes = ["frames", "dependency-driven", "paced", "all-at-once", "shuffle", "pairwise", "alltoallv"]
    result = run_exchange(schedule, modes, repeats=2, warmup=1, seed=3, progress=progress, prepost=prepost,
                          timeline=True)
    assert all(m.verified is True for m in result.modes), [(m.mode, m.verified) for m in result.modes]
    crossing = network_schedule(schedule)
    lam = crossing_lambda_s(schedule)
    pieces = exchange_plan(schedule).messages
    for m in result.modes:
        assert len(m.timelines) == 2 and all(len(run) == len(result.hosts) for run in m.timelines)
        events = [e for rank in m.timelines[0] for e in rank]
        if m.mode == "alltoallv":
            assert not events
            continue
        if m.mode in ("frames", "dependency-driven", "all-at-once"):
            # One send on its sender and one receive on its receiver per piece that crosses.
            crossing_pieces = [p for p in pieces if p.src != p.dst]
            for kind, rank_of in (("send", "src"), ("recv", "dst")):
                seen = sorted((r, e[1], e[2]) for r, rank in enumerate(m.timelines[0]) for e in rank if e[0] == kind)
                assert seen == sorted((getattr(p, rank_of), p.transfer, p.frame) for p in crossing_pieces)
        assert all(e[3] <= e[4] for e in events)
        got = breakdown(schedule, m.mode, m.timelines[0], m.times_s[0], lam)
        assert sum(got["parts"].values()) == pytest.approx(got["gap_s"], abs=1e-9)
    assert crossing is not None


def test_run_timeline_through_the_cli_writes_events_breakdown_and_plot(tmp_path, capsys):
    out, picture = tmp_path / "t.json", tmp_path / "t.png"
    status = main(["run", "--topology", "crossbar:n=3", "--traffic", "all-to-all", "--size", "20kB", "--algorithm",
                   "liquid", "--modes", "frames,paced,alltoallv", "--repeats", "2", "--timeline", str(out),
                   "--timeline-plot", str(picture)])
    assert status == 0
    doc = json.loads(out.read_text())
    assert set(doc["modes"]) == {"frames", "paced"} and doc["parts"] == list(PARTS)
    frames = doc["modes"]["frames"]["breakdown"]
    assert sum(frames["parts"].values()) == pytest.approx(frames["gap_s"], abs=1e-9)
    assert picture.stat().st_size > 0
    assert "where the time goes" in capsys.readouterr().out


def test_timeline_options_are_refused_where_they_do_not_apply(capsys):
    assert main(["run", "--topology", "crossbar:n=3", "--algorithm", "liquid", "--timeline-plot", "x.png"]) == 2
    assert "--timeline" in capsys.readouterr().err
    assert main(["run", "--topology", "crossbar:n=3", "--algorithm", "liquid", "--timeline", "x.json",
                 "--sizes", "1KiB,2KiB"]) == 2


def test_paced_needs_transfers_that_cross_the_network():
    net = build_topology("swiss-t1:allocation=2/0/0/0/0/0/0/0")
    traffic = Traffic([Transfer(h, h, 1000) for h in net.hosts()[:2]] + [Transfer(net.hosts()[0], net.hosts()[1], 10)],
                      "mostly-self")
    schedule = plan(net, traffic, "round-robin")
    result = run_exchange(schedule, ["paced"], repeats=1, warmup=0)
    assert result.modes[0].verified is True


@settings(max_examples=15, deadline=None)
@given(st.integers(0, 10_000), st.sampled_from([0.0, PACE_HEADROOM, 0.2]))
def test_the_paced_prediction_never_overloads_a_resource_and_ends_after_the_paced_duration(seed, headroom):
    """Heterogeneous links, uneven sizes: at every chunk's start, the paced rates of the chunks
    under way add up to at most each resource's capacity over 1 + h; the prediction ends after
    Λ (1 + h) and before it plus one chunk interval of the slowest transfer and its latency."""
    import random

    rng = random.Random(seed)
    net = build_topology(f"random:switches=3,hosts=6,seed={seed % 50}")
    hosts = net.hosts()
    traffic = Traffic([Transfer(a, b, rng.randint(1, 400_000)) for a in hosts for b in hosts
                       if a != b and rng.random() < 0.7] or [Transfer(hosts[0], hosts[1], 1000)], "uneven")
    schedule = plan(net, traffic, "round-robin")
    got = predict_mode(schedule, "paced", headroom)
    lam = crossing_lambda_s(schedule)
    duration = paced_duration_s(lam, headroom)
    chunks = paced_chunks(exchange_plan(schedule).regions, duration)
    lists = traffic.resource_lists(net)
    spans = [(c.due_s, c.due_s + c.nbytes * duration / traffic[c.transfer].size_bytes, c.transfer) for c in chunks]
    for t0, _, _ in spans:
        for r, capacity in enumerate(net.resource_capacity):
            # A set: one transfer's chunks follow each other (a chunk a byte longer than the next
            # overlaps it by a byte's time, which is not a second flow).
            under_way = {i for s, e, i in spans if s <= t0 < e and r in lists[i]}
            load = sum(traffic[i].size_bytes / duration for i in under_way)
            assert load <= capacity / (1 + headroom) * (1 + 1e-6)
    steps = [duration / sum(1 for c in chunks if c.transfer == i) for i in range(len(traffic))]
    latency = max(sum(net.links[link].latency_s for link in net.route(t.src, t.dst)) for t in traffic)
    assert duration * (1 - 1e-9) <= got.makespan_s <= duration + max(steps) + latency + 1e-9
    assert got.policy == "paced" and got.ratio_to_bound == pytest.approx(lam / got.makespan_s, rel=1e-9)


@settings(max_examples=40, deadline=None)
@given(st.integers(0, 50), st.lists(st.tuples(st.integers(0, 4), st.integers(0, 4), st.integers(0, 5_000_000)),
                                    min_size=1, max_size=10))
def test_a_paced_plan_from_the_last_one_is_the_bound_of_its_own_matrix(seed, changes):
    # Heterogeneous links (random cable capacities), uneven sizes: each warm plan must say the
    # bound compute_bound gives the same matrix, and what a cold plan of it says, bit for bit.
    import numpy as np

    from liquidsched.bounds import compute_bound
    from liquidsched.execute.paced import RankPacedPlanner

    net = build_topology(f"random:switches=3,hosts=5,extra_cables=2,seed={seed}")
    hosts = net.hosts()
    rng = np.random.default_rng(seed)
    matrix = rng.integers(0, 3_000_000, (5, 5)) * (1 - np.eye(5, dtype=np.int64))
    warm = RankPacedPlanner(net, hosts)
    for step, (i, j, nbytes) in enumerate([(0, 0, 0), *changes]):
        matrix[i, j] = 0 if i == j else nbytes
        got = warm.plan(matrix)
        cold = RankPacedPlanner(net, hosts).plan(matrix)
        assert (got.warm, cold.warm) == (step > 0, False)
        assert (got.bound_s, got.bottleneck, got.crossing_bytes) == (cold.bound_s, cold.bottleneck, cold.crossing_bytes)
        transfers = [Transfer(hosts[a], hosts[b], int(matrix[a, b])) for a in range(5) for b in range(5) if matrix[a, b]]
        if not transfers:
            assert got.bound_s == 0 and got.bottleneck is None
            continue
        bound = compute_bound(net, Traffic(transfers))
        assert got.bound_s == pytest.approx(float(bound.duration_s), rel=1e-12)
        assert got.bottleneck in bound.bottlenecks
        assert got.crossing_bytes == bound.total_bytes


def test_a_paced_plan_refuses_a_matrix_of_the_wrong_shape_or_counts_that_are_not_whole_bytes():
    import numpy as np

    from liquidsched.execute.paced import RankPacedPlanner

    net = build_topology("crossbar:n=3")
    planner = RankPacedPlanner(net, net.hosts())
    with pytest.raises(InputError, match="3 × 3"):
        planner.plan(np.zeros((2, 2), dtype=np.int64))
    with pytest.raises(InputError, match=">= 0"):
        planner.plan(-np.ones((3, 3), dtype=np.int64))
    with pytest.raises(InputError, match="integers"):
        planner.plan(np.full((3, 3), 1.5))

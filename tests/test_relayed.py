"""Relayed schedules — FAST, hierarchical dispatch, rails — against hand-worked times, the rules of
relaying as the validator checks them, and Birkhoff–von Neumann stages against their definition."""

from __future__ import annotations

import json

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from liquidsched import plan
from liquidsched.errors import InputError
from liquidsched.relay import Relay
from liquidsched.schedule import Piece, Schedule, ScheduleInfo
from liquidsched.schedulers.fast import birkhoff_von_neumann, padded
from liquidsched.schedulers.servers import server_groups
from liquidsched.simulate import simulate
from liquidsched.topologies import build_topology
from liquidsched.traffic import Traffic, Transfer, make_traffic
from liquidsched.validation import validate

from .cli_run import one_line_error, run

GB = 1_000_000_000
#: 2 servers × 2 accelerators: NICs of 50 GB/s, NVLink 450 GB/s, spine uplinks 25 GB/s (2:1, 2 spines).
SMALL_RAILS = "rail-optimised:servers=2,gpus=2"


def one_message(algorithm: str, **options):
    net = build_topology(SMALL_RAILS)
    return plan(net, Traffic([Transfer("s0.g0", "s1.g1", GB)]), algorithm, **options)


# -- hand-worked times ------------------------------------------------------------------------------

def test_straight_across_rails_the_message_crosses_a_spine_uplink():
    s = plan(build_topology(SMALL_RAILS), Traffic([Transfer("s0.g0", "s1.g1", GB)]), "round-robin")
    assert simulate(s, "fluid", "all-at-once").makespan_s == pytest.approx(GB / 25e9)


def test_hierarchical_dispatch_crosses_its_own_rail_then_nvlink():
    # Rail 0 at 50 GB/s, then NVLink at 450 GB/s inside server 1.
    p = simulate(one_message("hierarchical", chunks=1), "fluid", "steps")
    assert p.makespan_s == pytest.approx(GB / 50e9 + GB / 450e9)


def test_hierarchical_chunks_overlap_forwarding_with_the_network():
    # Four parts: the rail carries them back to back, and only the last one's forwarding is left.
    p = simulate(one_message("hierarchical", chunks=4), "fluid", "steps")
    assert p.makespan_s == pytest.approx(GB / 50e9 + GB / 4 / 450e9)


@pytest.mark.parametrize("algorithm", ["fast", "rails"])
def test_balancing_halves_the_message_over_both_rails(algorithm):
    # Half moves to s0.g1 over NVLink, both halves cross their rails at once, the half on rail 0
    # is forwarded to s1.g1 over NVLink.
    options = {"chunks": 1} if algorithm == "rails" else {}
    s = one_message(algorithm, **options)
    assert simulate(s, "fluid", "steps").makespan_s == pytest.approx(GB / 2 / 450e9 + GB / 2 / 50e9 + GB / 2 / 450e9)
    assert validate(s) == []


def test_fast_stages_are_the_birkhoff_von_neumann_permutations_of_the_padded_loads():
    # Server 0 sends 6 GB to server 1 and 2 GB to server 2; server 1 sends 4 GB to server 0.
    net = build_topology("rail-optimised:servers=3,gpus=2")
    t = Traffic([Transfer("s0.g0", "s1.g0", 6 * GB), Transfer("s0.g1", "s2.g1", 2 * GB),
                 Transfer("s1.g1", "s0.g0", 4 * GB)])
    s = plan(net, t, "fast")
    # Per-accelerator loads (targets) 3, 1 and 2 GB; padded to sums of 4 GB.
    assert s.info.stats["per_rail_bytes"] == 4 * GB
    assert s.info.stats["padding_bytes"] == 3 * 4 * GB - (3 + 1 + 2) * GB
    assert validate(s) == []


# -- the rules of relaying --------------------------------------------------------------------------

def relayed_by_hand(frames, contents=None, steps=None):
    net = build_topology("crossbar:n=3")
    original = Traffic([Transfer("h1", "h3", 10)])
    legs = Traffic([Transfer("h1", "h2", 10), Transfer("h2", "h3", 10)])
    info = ScheduleInfo("by hand", stats={"frame_steps": steps} if steps else {})
    return Schedule(net, legs, frames, info, Relay(original, contents or [[(0, 10)], [(0, 10)]]))


def test_a_relay_forwards_what_an_earlier_frame_brought():
    assert validate(relayed_by_hand([[Piece("h1->h2", 10)], [Piece("h2->h3", 10)]])) == []


def test_forwarding_before_the_bytes_arrive_is_caught():
    v = validate(relayed_by_hand([[Piece("h1->h2", 10), Piece("h2->h3", 10)]]))
    assert [x.kind for x in v] == ["causality", "undelivered"]
    assert "h2 does not hold" in v[0].message


def test_forwarding_within_one_step_is_caught_even_across_its_frames():
    # Frames 1 and 2 are one step: the steps policy may run them together.
    v = validate(relayed_by_hand([[Piece("h1->h2", 10)], [Piece("h2->h3", 10)]], steps=[0, 0]))
    assert "causality" in [x.kind for x in v]


def test_bytes_left_at_the_relay_are_caught():
    s = relayed_by_hand([[Piece("h1->h2", 10)], [Piece("h2->h3", 4)], [Piece("h2->h3", 6)]])
    assert validate(s) == []
    v = validate(relayed_by_hand([[Piece("h1->h2", 10)], [Piece("h2->h3", 4)]]))
    assert {x.kind for x in v} == {"missing", "undelivered"}
    assert any("6 bytes of h1->h3 end at h2" in x.message for x in v)


def test_a_leg_whose_parts_do_not_add_up_is_caught():
    v = validate(relayed_by_hand([[Piece("h1->h2", 10)], [Piece("h2->h3", 10)]], contents=[[(0, 10)], [(0, 7)]]))
    assert [x.kind for x in v] == ["relay-content"] and "7 bytes, the leg 10" in v[0].message


def test_moving_a_restore_into_its_stage_breaks_fast():
    s = one_message("fast")
    frames = [list(f) for f in s.frames]
    frames[1] += frames.pop(2)  # the restore of s1.g0 -> s1.g1 into the stage that brings it
    broken = Schedule(s.network, s.traffic, frames, ScheduleInfo("moved"), s.relay)
    assert "causality" in [x.kind for x in validate(broken)]


def test_a_relayed_schedule_file_reads_back_whole(tmp_path):
    s = plan(build_topology("rail-optimised:servers=2,gpus=2"),
             make_traffic(build_topology(SMALL_RAILS), "moe:experts=8,top_k=2,tokens=64,seed=3"), "fast")
    path = tmp_path / "fast.json"
    s.save(path)
    back = Schedule.load(path)
    assert back.relay.contents == s.relay.contents and back.relay.original == s.relay.original
    assert validate(back) == []


def test_a_relay_naming_an_unknown_transfer_is_a_format_error(tmp_path):
    s = one_message("fast")
    doc = s.to_dict()
    leg = next(iter(doc["relay"]["contents"]))
    doc["relay"]["contents"][leg][0][0] = "h9->h1"
    path = tmp_path / "bad.json"
    path.write_text(json.dumps(doc))
    with pytest.raises(InputError, match=r"relay.contents.*'h9->h1' is not a transfer of the relayed traffic"):
        Schedule.load(path)


def test_models_that_would_forward_early_refuse_a_relayed_schedule():
    s = one_message("fast")
    for model, policy in [("fluid", "all-at-once"), ("fluid", "per-sender"), ("circuit", "frames")]:
        with pytest.raises(InputError, match="relayed schedule"):
            simulate(s, model, policy)
    assert simulate(s, "frames").makespan_s > 0


# -- Birkhoff–von Neumann --------------------------------------------------------------------------

@settings(max_examples=150, deadline=None)
@given(st.integers(1, 6).flatmap(lambda n: st.lists(st.lists(st.integers(0, 50), min_size=n, max_size=n),
                                                    min_size=n, max_size=n)))
def test_padding_then_stages_add_up_to_the_padded_matrix(rows):
    n = len(rows)
    loads = {(r, c): rows[r][c] for r in range(n) for c in range(n) if rows[r][c]}
    m = np.array(padded(n, loads))
    given_matrix = np.array(rows)
    top = max(given_matrix.sum(0).max(), given_matrix.sum(1).max())
    assert (m >= given_matrix).all()
    assert set(m.sum(0)) | set(m.sum(1)) <= {top}
    total = np.zeros_like(m)
    for perm, weight in birkhoff_von_neumann(m.tolist()):
        assert sorted(perm) == list(range(n)) and weight > 0
        total[np.arange(n), perm] += weight
    assert (total == m).all()


# -- every relayed schedule, on the ML cluster shapes ----------------------------------------------

@settings(max_examples=40, deadline=None)
@given(st.sampled_from(["rail-optimised:servers=3,gpus=2", "rail-optimised:servers=2,gpus=3,pxn=true",
                        "two-tier:servers=4,gpus=2,servers_per_leaf=2"]),
       st.sampled_from(["fast", "hierarchical", "rails"]), st.integers(0, 1000),
       st.sampled_from(["uniform", "zipf", "lognormal"]))
def test_every_relayed_schedule_is_valid_and_fast_sends_one_server_to_one(spec, algorithm, seed, skew):
    net = build_topology(spec)
    traffic = make_traffic(net, f"moe:experts={2 * len(net.hosts())},top_k=3,tokens=40,skew={skew},seed={seed}")
    s = plan(net, traffic, algorithm)
    assert validate(s) == []
    if algorithm != "fast":
        return
    # In a stage every accelerator sends on its own rail to one server, and no server hears two.
    where = {h: (i, g) for i, group in enumerate(server_groups(net)) for g, h in enumerate(group)}
    for step in sorted(set(s.frame_steps())):
        pairs = {(where[s.traffic[s.traffic.index[p.transfer]].src], where[s.traffic[s.traffic.index[p.transfer]].dst])
                 for f, k in zip(s.frames, s.frame_steps()) if k == step for p in f}
        between = {(a, b) for a, b in pairs if a[0] != b[0]}
        assert all(a[1] == b[1] for a, b in between)
        servers_to = {(a[0], b[0]) for a, b in between}
        assert len({a for a, _ in servers_to}) == len(servers_to) == len({b for _, b in servers_to})


# -- the command line -----------------------------------------------------------------------------

def test_plan_says_a_schedule_is_relayed_and_against_which_bound(capsys, tmp_path):
    out_path = tmp_path / "fast.json"
    code, out, err = run(capsys, "plan", "--topology", SMALL_RAILS, "--traffic", "all-to-all", "--size", "1MB",
                         "--algorithm", "fast", "--output", str(out_path))
    assert code == 0, err
    flat = " ".join(out.split())
    assert "relayed" in flat and "legs carry the 12 transfers" in flat
    code, out, err = run(capsys, "check", str(out_path))
    assert code == 0, err


def test_a_server_option_given_to_another_algorithm_is_refused(capsys):
    code, _, err = run(capsys, "plan", "--topology", SMALL_RAILS, "--traffic", "all-to-all", "--size", "1MB",
                       "--algorithm", "round-robin", "--gpus", "2")
    one_line_error(code, err, "--gpus applies to --algorithm fast or hierarchical or rails")


def test_hosts_not_named_by_server_need_gpus():
    net = build_topology("crossbar:n=4")
    t = make_traffic(net, "all-to-all", size_bytes=1000)
    with pytest.raises(InputError, match="give gpus=G"):
        plan(net, t, "fast")
    assert validate(plan(net, t, "fast", gpus=2)) == []

"""The validator rejects each kind of broken schedule and names what is wrong."""

from __future__ import annotations

import pytest

from liquidsched import ScheduleInvalidError, check, half_all_to_all, plan, validate
from liquidsched.schedule import Piece, Schedule, ScheduleInfo


@pytest.fixture()
def rr(two_switch_net):
    return plan(two_switch_net, half_all_to_all(two_switch_net), "round-robin")


def edited(s: Schedule, frames) -> Schedule:
    return Schedule(s.network, s.traffic, frames, s.info)


def test_round_robin_is_valid(rr):
    assert validate(rr) == []
    assert check(rr) is rr


def test_missing_transfer_is_named(rr):
    frames = [list(f) for f in rr.frames]
    gone = frames[3].pop(0)
    v = validate(edited(rr, frames))
    assert [x.kind for x in v] == ["missing"]
    assert gone.transfer in v[0].message


def test_duplicated_transfer_is_named(rr):
    frames = [list(f) for f in rr.frames]
    frames.append([frames[0][0]])
    v = validate(edited(rr, frames))
    assert [x.kind for x in v] == ["duplicated"]
    assert "t1->r1" in v[0].message and "frames 1, 8" in v[0].message


def test_conflict_names_transfers_and_resource(rr):
    frames = [list(f) for f in rr.frames]
    # t2->r4 and t3->r5 both cross l_ab; put them in one frame.
    by_name = {p.transfer: p for f in frames for p in f}
    frames = [[p for p in f if p.transfer not in ("t2->r4", "t3->r5")] for f in frames]
    frames = [f for f in frames if f] + [[by_name["t2->r4"], by_name["t3->r5"]]]
    v = validate(edited(rr, frames))
    assert [x.kind for x in v] == ["conflict"]
    assert v[0].message == f"frame {len(frames)}: resource l_ab has 1 slot but carries 2 transfers: t2->r4, t3->r5"


def test_unknown_transfer_is_named(rr):
    frames = [list(f) for f in rr.frames] + [[Piece("t9->r1", 1)]]
    v = validate(edited(rr, frames))
    assert [x.kind for x in v] == ["unknown-transfer"]
    assert "'t9->r1'" in v[0].message


def test_check_raises_with_every_violation(rr):
    frames = [list(f) for f in rr.frames][1:] + [[Piece("nope", 1)]]
    with pytest.raises(ScheduleInvalidError) as e:
        check(edited(rr, frames))
    kinds = sorted(v.kind for v in e.value.violations)
    assert kinds == ["missing"] * 5 + ["unknown-transfer"]


def test_pieces_across_frames_are_valid(two_switch_net):
    traffic = half_all_to_all(two_switch_net, ["t1", "r1"])
    name, size = traffic.names[0], traffic[0].size_bytes
    s = Schedule(two_switch_net, traffic, [[Piece(name, size - 10)], [Piece(name, 10)]], ScheduleInfo("split"))
    assert validate(s) == []
    short = Schedule(two_switch_net, traffic, [[Piece(name, size - 10)]], ScheduleInfo("split"))
    assert "delivers 999990 of 1000000 bytes" in validate(short)[0].message


def test_schedule_file_round_trip(rr, tmp_path):
    path = tmp_path / "s.json"
    rr.save(path)
    back = Schedule.load(path)
    assert back.frames == rr.frames and back.traffic == rr.traffic and back.network == rr.network
    assert back.summary() == rr.summary()

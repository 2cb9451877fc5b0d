"""Relayed schedules executed: the plan's segments carry every byte to its destination through
the hosts that forward it, in frame order and in any order the data dependencies allow (checked
here by moving the bytes without MPI), and byte-exact under mpiexec in every mode that runs them."""

from __future__ import annotations

import random

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from liquidsched import plan
from liquidsched.errors import InputError
from liquidsched.execute import predict_mode, run_exchange
from liquidsched.execute.plan import RECV, RELAYED_MODES, SEND, STAGE, ExchangePlan, exchange_plan, pattern
from liquidsched.execute.prediction import crossing_lambda_s, direct_schedule
from liquidsched.relay import Relay
from liquidsched.schedule import Piece, Schedule, ScheduleInfo
from liquidsched.simulate import simulate
from liquidsched.topologies import build_topology
from liquidsched.traffic import Traffic, Transfer, make_traffic

GB = 1_000_000_000
ML_SHAPES = ["rail-optimised:servers=3,gpus=2", "rail-optimised:servers=2,gpus=3,pxn=true",
             "two-tier:servers=4,gpus=2,servers_per_leaf=2"]


def carry_out(p: ExchangePlan, order: list[list[int]]) -> list[np.ndarray]:
    """Move the bytes of ``p``'s messages as its segments say, without MPI: ``order`` lists
    groups of message ids, every message of a group reading its bytes before any writes them
    (as in one step); the receive buffer of each rank after all."""
    send, recv, stage = [], [], []
    for r in range(p.size):
        out = np.zeros(p.send_bytes[r], np.uint8)
        for i, (src, _, nbytes, s_off, _) in enumerate(p.regions):
            if src == r:
                out[s_off:s_off + nbytes] = pattern(i, nbytes, seed=7)
        send.append(out)
        recv.append(np.zeros(p.recv_bytes[r], np.uint8))
        # Bytes never written read as this, which no pattern is made of alone.
        stage.append(np.full(p.stage_bytes[r] if p.relayed else 0, 0xEE, np.uint8))
    for i, (src, dst, nbytes, s_off, r_off) in enumerate(p.regions):
        if src == dst:
            recv[dst][r_off:r_off + nbytes] = send[src][s_off:s_off + nbytes]
    buffers = {SEND: send, STAGE: stage, RECV: recv}
    for group in order:
        carried = []
        for mid in group:
            m = p.messages[mid]
            if not m.segments:
                carried.append((m, [send[m.src][m.send_offset:m.send_offset + m.nbytes].copy()]))
                continue
            carried.append((m, [buffers[s.source][m.src][s.source_offset:s.source_offset + s.nbytes].copy()
                                for s in m.segments]))
        for m, data in carried:
            if not m.segments:
                recv[m.dst][m.recv_offset:m.recv_offset + m.nbytes] = data[0]
            for s, d in zip(m.segments, data):
                buffers[s.target][m.dst][s.target_offset:s.target_offset + s.nbytes] = d
    return recv


def expected(p: ExchangePlan) -> list[np.ndarray]:
    out = [np.zeros(p.recv_bytes[r], np.uint8) for r in range(p.size)]
    for i, (_, dst, nbytes, _, r_off) in enumerate(p.regions):
        out[dst][r_off:r_off + nbytes] = pattern(i, nbytes, seed=7)
    return out


def by_steps(p: ExchangePlan) -> list[list[int]]:
    steps: dict[int, list[int]] = {}
    for m in p.messages:
        steps.setdefault(m.step, []).append(m.id)
    return [steps[k] for k in sorted(steps)]


def as_data_allows(p: ExchangePlan, rng: random.Random) -> list[list[int]]:
    """The messages one at a time in a random order that keeps only the data dependencies."""
    left = {m.id: len(p.data_waits[m.id]) for m in p.messages}
    ready = [m for m, n in left.items() if n == 0]
    order = []
    while ready:
        m = ready.pop(rng.randrange(len(ready)))
        order.append([m])
        for s in p.data_successors[m]:
            left[s] -= 1
            if left[s] == 0:
                ready.append(s)
    assert len(order) == len(p.messages), "the data dependencies have a cycle"
    return order


def assert_delivers(p: ExchangePlan, order: list[list[int]]) -> None:
    for got, want in zip(carry_out(p, order), expected(p)):
        assert np.array_equal(got, want)


def by_hand() -> Schedule:
    """h1 sends h3 40 bytes, 25 through h2 (in two pieces) and 15 through h4, which has no
    transfer of its own; h1 sends itself 5 bytes; h3 sends h1 7 bytes straight."""
    net = build_topology("crossbar:n=4")
    original = Traffic([Transfer("h1", "h3", 40), Transfer("h1", "h1", 5), Transfer("h3", "h1", 7)])
    legs = Traffic([Transfer("h1", "h2", 25), Transfer("h1", "h4", 15), Transfer("h2", "h3", 25),
                    Transfer("h4", "h3", 15), Transfer("h3", "h1", 7)])
    frames = [[Piece("h1->h2", 10), Piece("h1->h4", 15), Piece("h3->h1", 7)],
              [Piece("h1->h2", 15), Piece("h2->h3", 10), Piece("h4->h3", 15)],
              [Piece("h2->h3", 15)]]
    relay = Relay(original, [[(0, 25)], [(0, 15)], [(0, 25)], [(0, 15)], [(2, 7)]])
    return Schedule(net, legs, frames, ScheduleInfo("by hand"), relay)


# -- the plan, without MPI --------------------------------------------------------------------------

def test_the_hand_made_relay_stages_what_it_forwards_and_waits_for_what_brings_it():
    p = exchange_plan(by_hand())
    assert p.hosts == ["h1", "h2", "h3", "h4"]  # h4 only forwards, and is a rank all the same
    assert p.stage_bytes == [0, 25, 0, 15]
    name = {m.id: (m.frame, m.src, m.dst, m.nbytes) for m in p.messages}
    waits = {name[m]: [name[w] for w in ws] for m, ws in enumerate(p.data_waits) if ws}
    # h2 forwards the 10 bytes of frame 1 in frame 2 and the 15 of frame 2 in frame 3; h4 its 15.
    assert waits == {(1, 1, 2, 10): [(0, 0, 1, 10)], (1, 3, 2, 15): [(0, 0, 3, 15)], (2, 1, 2, 15): [(1, 0, 1, 15)]}
    # h1's bytes 0-9 and 10-24 go through h2, 25-39 through h4: each lands where h3 keeps it.
    h3 = [(s.target, s.target_offset, s.nbytes) for m in p.messages if m.dst == 2 for s in m.segments]
    r_off = p.regions[0][4]
    assert sorted(h3) == [(RECV, r_off, 10), (RECV, r_off + 10, 15), (RECV, r_off + 25, 15)]
    assert_delivers(p, by_steps(p))


def test_a_plan_refuses_a_relay_that_forwards_before_the_bytes_arrive():
    s = by_hand()
    early = Schedule(s.network, s.traffic, [s.frames[0] + s.frames[1][1:], [s.frames[1][0]], s.frames[2]],
                     s.info, s.relay)
    with pytest.raises(InputError, match="does not hold"):
        exchange_plan(early)


@settings(max_examples=40, deadline=None)
@given(st.sampled_from(ML_SHAPES), st.sampled_from(["fast", "hierarchical", "rails"]), st.integers(0, 1000),
       st.sampled_from(["uniform", "zipf", "lognormal"]))
def test_every_relayed_schedule_delivers_in_frame_order_and_as_its_data_allows(spec, algorithm, seed, skew):
    net = build_topology(spec)
    traffic = make_traffic(net, f"moe:experts={2 * len(net.hosts())},top_k=3,tokens=40,skew={skew},seed={seed}")
    p = exchange_plan(plan(net, traffic, algorithm))
    assert p.relayed and len(p.messages) == sum(len(f) for f in plan(net, traffic, algorithm).frames)
    for m, before in enumerate(p.data_waits):
        msg = p.messages[m]
        assert sum(s.nbytes for s in msg.segments) == msg.nbytes
        # What brings a message's bytes reaches its sender in an earlier step.
        assert all(p.messages[b].dst == msg.src and p.messages[b].step < msg.step for b in before)
        assert set(before) <= set(p.waits_for[m])
    assert_delivers(p, by_steps(p))
    assert_delivers(p, as_data_allows(p, random.Random(seed)))


# -- under mpiexec --------------------------------------------------------------------------------

@pytest.mark.parametrize("algorithm", ["fast", "hierarchical"])
def test_relayed_schedules_run_byte_exact_in_every_mode_that_runs_them(algorithm):
    net = build_topology("two-tier:servers=4,gpus=2,servers_per_leaf=2")
    traffic = make_traffic(net, "moe:skew=zipf,imbalance=1.35,seed=3,tokens=48")
    modes = [*RELAYED_MODES, "alltoallv"]
    result = run_exchange(plan(net, traffic, algorithm), modes, repeats=1, warmup=1, verify=True, seed=2)
    assert [(m.mode, m.verified) for m in result.modes] == [(m, True) for m in modes]


def test_a_host_that_only_forwards_runs_as_a_rank_and_own_transfers_are_copied():
    modes = ["frames", "dependency-driven", "all-at-once", "pairwise"]
    result = run_exchange(by_hand(), modes, repeats=1, warmup=0, verify=True)
    assert result.hosts == ["h1", "h2", "h3", "h4"]
    assert all(m.verified is True for m in result.modes), [(m.mode, m.verified) for m in result.modes]


def test_the_shuffle_mode_refuses_a_relayed_schedule_by_name():
    with pytest.raises(InputError, match="the shuffle mode does not run a relayed schedule.*frames"):
        run_exchange(by_hand(), ["shuffle"], repeats=1)


# -- what is predicted and compared beside a relayed run -------------------------------------------

def test_a_relayed_prediction_is_of_the_exchange_against_sending_it_straight():
    net = build_topology("rail-optimised:servers=2,gpus=2")
    s = plan(net, Traffic([Transfer("s0.g0", "s1.g1", GB)]), "fast")
    straight = GB / 25e9  # the spine uplink: Λ of the exchange sent straight
    assert crossing_lambda_s(s) == pytest.approx(straight)
    # Balanced over NVLink, both rails at once, restored over NVLink (hand-worked).
    relayed = GB / 2 / 450e9 + GB / 2 / 50e9 + GB / 2 / 450e9
    p = predict_mode(s, "dependency-driven")
    assert (p.model, p.policy) == ("fluid", "steps")
    assert p.makespan_s == pytest.approx(relayed)
    assert p.ratio_to_bound == pytest.approx(straight / relayed)
    assert predict_mode(s, "frames").makespan_s == pytest.approx(simulate(s, "frames").makespan_s)
    # The library's collective sends the exchange straight, through the spine.
    library = predict_mode(s, "alltoallv")
    assert library.makespan_s == pytest.approx(straight) and library.ratio_to_bound == pytest.approx(1.0)
    assert direct_schedule(s).relay is None

"""The exchange orders, the global window and the schedules of the synchronous shuffle and
pairwise exchanges (paper 002), against independent checks and the paper's numbers."""

from __future__ import annotations

from fractions import Fraction

import pytest

from liquidsched import build_topology, compute_bound, plan, validate
from liquidsched.errors import InputError, InvalidInputError
from liquidsched.schedulers.shuffle import (PERMUTATIONS, exchange_steps, global_window, is_complete,
                                            is_node_contention_free, is_switch_contention_free, packets_per_step,
                                            schedule_window)
from liquidsched.simulate import simulate
from liquidsched.traffic import Traffic, Transfer, all_to_all

SHAPES = [(d1, d2) for d1 in range(1, 9) for d2 in range(1, 9)]


@pytest.mark.parametrize("permutation", PERMUTATIONS)
def test_every_order_is_complete_and_node_contention_free_up_to_40_nodes(permutation):
    for p in range(2, 41):
        steps = exchange_steps(p, permutation)
        assert is_node_contention_free(steps) and is_complete(steps, p), p


@pytest.mark.parametrize("permutation", PERMUTATIONS)
def test_remapped_orders_stay_complete_and_node_contention_free_up_to_8_by_8(permutation):
    for d1, d2 in SHAPES:
        steps = exchange_steps(d1 * d2, permutation, remap=(d1, d2))
        assert is_node_contention_free(steps) and is_complete(steps, d1 * d2), (d1, d2)


def test_step_counts_are_the_papers():
    """Alg. 3: p rounds for odd p, p − 1 for even; XOR needs 2^⌈log2 p⌉ − 1 steps."""
    assert [len(exchange_steps(p, "edge-colour")) for p in (5, 6, 7, 8)] == [5, 5, 7, 7]
    assert [len(exchange_steps(p, "xor")) for p in (16, 17, 24, 32)] == [15, 31, 31, 31]
    assert len(exchange_steps(24, "shift")) == 23


def test_the_checks_catch_a_broken_order():
    steps = exchange_steps(4, "xor")
    assert not is_complete(steps[:-1], 4)
    assert not is_node_contention_free([[1, 0, 1, 2]])      # two packets to node 1
    assert not is_node_contention_free([[0, -1, -1, -1]])   # a node sending to itself


def powers_of_two(n: int) -> bool:
    return n & (n - 1) == 0


def test_which_orders_are_switch_contention_free():
    """Proven by hand, checked on every d1 × d2 up to 8 × 8:

    * remapped shift always: every logical id of switch a is ≡ a (mod d2), so at step j the
      whole switch sends to switch (a + j) mod d2, a bijection of the switches;
    * plain XOR when d1 is a power of two: the switch is the id's high bits, and XOR with j
      maps switch a to a XOR ⌊j / d1⌋ for all its hosts; remapped XOR when d2 is a power of
      two (the switch is then the logical id's low bits);
    * with two switches any order (one remote switch only); plain shift and edge colouring
      on no shape with two hosts per switch or more and three switches or more.
    """
    for d1, d2 in SHAPES:
        p = d1 * d2
        if d2 < 2:
            continue
        assert is_switch_contention_free(exchange_steps(p, "shift", remap=(d1, d2)), d1), (d1, d2)
        if powers_of_two(d1):
            assert is_switch_contention_free(exchange_steps(p, "xor"), d1), (d1, d2)
        if powers_of_two(d2):
            assert is_switch_contention_free(exchange_steps(p, "xor", remap=(d1, d2)), d1), (d1, d2)
        for permutation in PERMUTATIONS:
            if d2 == 2:
                assert is_switch_contention_free(exchange_steps(p, permutation), d1)
        if d1 >= 2 and d2 >= 3:
            assert not is_switch_contention_free(exchange_steps(p, "shift"), d1), (d1, d2)
            assert not is_switch_contention_free(exchange_steps(p, "edge-colour"), d1), (d1, d2)


def test_remapping_sends_consecutive_steps_to_different_switches():
    """Remapped shift on 8 × 3: logical ids x and x + 1 are on different switches, so a node's
    consecutive cross-switch packets go to different switches (eq. 5's purpose)."""
    d1, d2 = 8, 3
    steps = exchange_steps(d1 * d2, "shift", remap=(d1, d2))
    for x in range(d1 * d2):
        switches = [step[x] // d1 for step in steps]
        assert all(a != b for a, b in zip(switches, switches[1:])), x


def test_global_window_reproduces_the_papers_values():
    """Fig. 3's 4 × 4 example ⌊30/3.2⌋ = 9, the 8 × 2 theoretical 10 and calculated 5, 8 × 3
    → 4 and 8 × 4 → 3 (B_L = 45, both directions); the paper's 5 for 6 × 4 is ⌊4.79⌋ = 4 by the
    same rule."""
    assert global_window(4, 4, 30, directions=1) == 9
    assert global_window(8, 2, 45, directions=1) == 10
    assert [global_window(d1, d2, 45) for d1, d2 in [(8, 2), (8, 3), (8, 4)]] == [5, 4, 3]
    assert global_window(6, 4, 45) == 4
    with pytest.raises(InputError, match="two switches"):
        global_window(16, 1, 45)


@pytest.mark.parametrize("d1, d2, per_node_MBps", [(8, 2, "12.07"), (8, 3, "9.25"), (6, 4, "10.97"), (8, 4, "8.32")])
def test_best_per_node_bandwidth_of_the_four_clusters(d1, d2, per_node_MBps):
    """Hosts at 12.5 MB/s, shared uplinks of 103 MB/s: the liquid throughput per node is the
    paper's best achievable (p − 1)·103 / (2(p − d1)d1) MB/s (it prints 10.96 for 6 × 4,
    truncated)."""
    net = build_topology(f"hierarchical:d1={d1},d2={d2},c1=12.5MB/s,c2=103MB/s,shared_uplinks=true")
    bound = compute_bound(net, all_to_all(net))
    p = d1 * d2
    per_node = Fraction(bound.liquid_throughput_Bps) / p / 10**6
    assert per_node == Fraction((p - 1) * 103, 2 * (p - d1) * d1)
    assert f"{float(per_node):.2f}" == per_node_MBps


@pytest.mark.parametrize("permutation", PERMUTATIONS)
@pytest.mark.parametrize("remap", [False, True])
def test_shuffle_sends_every_byte_in_order_in_valid_frames(permutation, remap):
    net = build_topology("hierarchical:d1=3,d2=3")
    traffic = Traffic([Transfer(t.src, t.dst, 1000 + 37 * k) for k, t in enumerate(all_to_all(net))])
    s = plan(net, traffic, "shuffle", permutation=permutation, remap=remap, packet_bytes=300)
    assert validate(s) == []
    # Packet r of every message before packet r + 1 of any: 4 to 5 packets a message.
    first_round = s.info.stats["order_steps"]
    assert all(p.bytes == 300 for f in s.frames[:first_round] for p in f)


def test_pairwise_sends_one_whole_message_per_node_and_round():
    """Remapped edge colouring on 4 × 2: 7 rounds, whole messages, each frame a matching."""
    net = build_topology("hierarchical:d1=4,d2=2")
    traffic = all_to_all(net)
    s = plan(net, traffic, "pairwise", remap=True)
    assert validate(s) == [] and s.info.stats["steps"] == 7
    transfers = dict(zip(traffic.names, traffic))
    for frame in s.frames:
        pairs = [(transfers[p.transfer].src, transfers[p.transfer].dst) for p in frame]
        assert all(p.bytes == transfers[p.transfer].size_bytes for p in frame)
        assert len({a for a, _ in pairs}) == len({b for _, b in pairs}) == len(frame)


def test_bad_options_are_clear_errors():
    traffic = Traffic([Transfer("h1", "h2", 10)])
    with pytest.raises(InputError, match="at least two switches; crossbar has 1 switch with 4 hosts"):
        plan(build_topology("crossbar:n=4"), traffic, "shuffle", remap=True)
    with pytest.raises(InputError, match="packet_bytes"):
        plan(build_topology("crossbar:n=4"), traffic, "shuffle", packet_bytes=0)
    with pytest.raises(InputError, match="unknown permutation 'gray'"):
        plan(build_topology("crossbar:n=4"), traffic, "pairwise", permutation="gray")
    with pytest.raises(InvalidInputError, match="at least one node"):
        exchange_steps(0, "xor")


@pytest.mark.parametrize("d1, d2", [(8, 2), (8, 3), (6, 4), (8, 4)])
def test_window_from_the_uplink_buffers_is_the_papers(d1, d2):
    """With the shift order (p − 1 steps a round, no idle step), the window the schedule
    derives from its links' buffers is eq. 4 with the floor: 2ν on a shared-duplex uplink (one
    buffer for both directions), ν on an uplink with a buffer per direction."""
    spec = f"hierarchical:d1={d1},d2={d2},c1=12.5MB/s,c2=103MB/s,buffer=45"
    for shared, directions in [(True, 2), (False, 1)]:
        net = build_topology(spec + (",shared_uplinks=true" if shared else ""))
        s = plan(net, all_to_all(net, size_bytes=3 * 1500), "shuffle", permutation="shift", remap=True,
                 packet_bytes=1500)
        assert schedule_window(s) == s.info.parameters["window"] == global_window(d1, d2, 45, directions)


def test_window_counts_the_idle_steps_of_xor():
    """XOR on 24 nodes takes 31 steps a round (7 with idle nodes): the uplinks carry 256 packets
    a round, ν = 256/31, W = ⌊45·31/256⌋ = 5 (with shift's 23 steps it is 4)."""
    net = build_topology("hierarchical:d1=8,d2=3,c2=103MB/s,shared_uplinks=true,buffer=45")
    s = plan(net, all_to_all(net, size_bytes=1500), "shuffle", permutation="xor", remap=True, packet_bytes=1500)
    assert packets_per_step(s)[net.link_resource["e1>root"]] == Fraction(256, 31)
    assert s.info.parameters["window"] == 5
    # Packets of 4,000 bytes fill three frames of the buffer each: ⌊45·31/(256·3)⌋ = 1.
    s = plan(net, all_to_all(net, size_bytes=4000), "shuffle", permutation="xor", remap=True, packet_bytes=4000)
    assert s.info.parameters["window"] == 1


def test_window_options():
    with_buffer = build_topology("hierarchical:d1=2,d2=2,buffer=4")
    without = build_topology("hierarchical:d1=2,d2=2")
    traffic = all_to_all(without)
    assert plan(without, traffic, "shuffle").info.parameters["window"] is None
    assert plan(with_buffer, traffic, "shuffle", window="none").info.parameters["window"] is None
    assert plan(with_buffer, traffic, "shuffle", window=7).info.parameters["window"] == 7
    with pytest.raises(InputError, match="declares a buffer"):
        plan(without, traffic, "shuffle", window="auto")
    with pytest.raises(InputError, match="whole number of steps"):
        plan(with_buffer, traffic, "shuffle", window=0)


def test_an_unlimited_window_sends_like_all_at_once():
    """Whole messages (one packet each) and a window as long as the schedule: every node starts
    everything at once, which is the all-at-once policy; a window of one step keeps the nodes
    in step, and the slow uplinks idle while the hosts exchange within their switch."""
    net = build_topology("hierarchical:d1=3,d2=2,c2=20MB/s")
    traffic = Traffic([Transfer(t.src, t.dst, 50_000 + 999 * k) for k, t in enumerate(all_to_all(net))])
    s = plan(net, traffic, "shuffle", packet_bytes=10**6)
    everything = simulate(s, "fluid", "window", window=s.length)
    assert everything.makespan_s == pytest.approx(simulate(s, "fluid", "all-at-once").makespan_s, rel=1e-9)
    assert simulate(s, "fluid", "window", window=1).makespan_s > everything.makespan_s

"""Invariants over random networks and traffics (hypothesis)."""

from __future__ import annotations

from collections import Counter
from fractions import Fraction

from hypothesis import assume, given, settings
from hypothesis import strategies as st

from liquidsched import SCHEDULERS, compute_bound, plan, validate
from liquidsched.errors import TrafficError
from liquidsched.schedule import Schedule
from liquidsched.schedulers.kpbs import PEELING, kpbs_instance

from .strategies import problems


@settings(max_examples=150, deadline=None)
@given(problems(), st.sampled_from(sorted(SCHEDULERS)), st.integers(0, 5))
def test_every_schedule_of_every_algorithm_is_valid(problem, algorithm, seed):
    net, traffic = problem
    options = {"seed": seed} if algorithm == "random" else {}
    if algorithm in PEELING:
        # KPBS schedulers take traffics through one backbone only; others are refused.
        try:
            kpbs_instance(net, traffic)
        except TrafficError:
            assume(False)
        options = {"overhead_s": seed / 100}
    if algorithm == "shuffle":
        options = {"packet_bytes": 1 + 400 * seed, "permutation": ["xor", "shift", "edge-colour"][seed % 3]}
    if algorithm == "pairwise":
        options = {"permutation": ["xor", "shift", "edge-colour"][seed % 3]}
    s = plan(net, traffic, algorithm, **options)
    assert validate(s) == []
    assert s.length >= s.info.lower_bound


@settings(max_examples=100, deadline=None)
@given(problems())
def test_removing_a_piece_is_always_caught(problem):
    net, traffic = problem
    s = plan(net, traffic, "round-robin")
    frames = [list(f) for f in s.frames]
    gone = frames[-1].pop()
    v = validate(Schedule(net, traffic, frames, s.info))
    # Removing the only piece of the last frame also leaves that frame empty.
    expected = ["empty-frame", "missing"] if not frames[-1] else ["missing"]
    assert [x.kind for x in v] == expected and gone.transfer in v[-1].message


@settings(max_examples=100, deadline=None)
@given(problems())
def test_bound_equals_load_counted_link_by_link(problem):
    net, traffic = problem
    b = compute_bound(net, traffic)
    # Recount from the links of each route, merging shared-duplex pairs by hand.
    merge = {a: f"{a}|{b}" for a, b in net.shared_duplex} | {b: f"{a}|{b}" for a, b in net.shared_duplex}
    load: Counter = Counter()
    for t in traffic:
        for res in {merge.get(l, l) for l in net.route(t.src, t.dst)}:
            cap = net.links[res.split("|")[0]].capacity_Bps
            load[res] += Fraction(t.size_bytes) / Fraction(cap)
    top = max(load.values())
    assert b.duration_s == top
    assert sorted(b.bottlenecks) == sorted(r for r, v in load.items() if v == top)
    assert b.liquid_throughput_Bps == Fraction(traffic.total_bytes) / top

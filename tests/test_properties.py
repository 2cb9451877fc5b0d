"""Invariants over random networks and traffics (hypothesis)."""

from __future__ import annotations

from collections import Counter
from fractions import Fraction

from hypothesis import assume, given, settings
from hypothesis import strategies as st

from liquidsched import SCHEDULERS, _core, compute_bound, plan, validate
from liquidsched.errors import InputError, TrafficError
from liquidsched.schedule import Schedule
from liquidsched.schedulers.kpbs import PEELING, kpbs_instance

from .strategies import problems

#: The schedulers whose bytes go through other hosts (relayed schedules), planned for servers.
RELAYING = ("fast", "hierarchical", "rails")


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
    if algorithm in RELAYING:
        # Servers of any size that divides the hosts; relaying needs routes between them too.
        hosts = len(net.hosts())
        sizes = [g for g in range(1, hosts + 1) if hosts % g == 0]
        options = {"gpus": sizes[seed % len(sizes)]} | ({"chunks": 1 + seed % 3} if algorithm != "fast" else {})
        try:
            s = plan(net, traffic, algorithm, **options)
        except InputError as e:
            assume("cannot reach" not in str(e))
            raise
        assert validate(s) == [] and s.length >= s.info.lower_bound
        return
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


def _dsatur_by_its_rule(paths: list[list[int]], slots: list[int]) -> list[list[int]]:
    """DSatur written as its rule says, one scan of every vertex per step: the uncoloured
    transfer of most colours it can no longer take, then of most conflicting transfers, then
    of lowest index, takes the lowest colour none of its resources is full in."""
    users: dict[int, list[int]] = {}
    for t, p in enumerate(paths):
        for r in p:
            users.setdefault(r, []).append(t)
    degree = [len({u for r in p for u in users[r]} - {t}) for t, p in enumerate(paths)]
    blocked: list[set[int]] = [set() for _ in paths]
    colour: list[int | None] = [None] * len(paths)
    on: Counter = Counter()
    frames: list[list[int]] = []
    for _ in paths:
        v = max((t for t, c in enumerate(colour) if c is None), key=lambda t: (len(blocked[t]), degree[t], -t))
        c = min(set(range(len(frames) + 1)) - blocked[v])
        colour[v] = c
        if c == len(frames):
            frames.append([])
        frames[c].append(v)
        for r in paths[v]:
            on[r, c] += 1
            if on[r, c] >= slots[r]:
                for u in users[r]:
                    if colour[u] is None:
                        blocked[u].add(c)
    return [sorted(f) for f in frames]


@settings(max_examples=150, deadline=None)
@given(problems(), st.booleans())
def test_dsatur_colours_by_its_rule(problem, with_slots):
    net, traffic = problem
    paths = traffic.resource_lists(net)
    slots = net.resource_slots if with_slots else [1] * len(net.resources)
    frames = _core.dsatur(paths, len(net.resources), slots=slots if with_slots else [])
    assert frames == _dsatur_by_its_rule(paths, slots)

"""Exhaustive references for small traffics: every partition, every subset, counted against the
slots of each resource (one each when none are given)."""

from __future__ import annotations

from collections import Counter
from fractions import Fraction
from itertools import combinations
from typing import Sequence


def _slots(slots: Sequence[int] | None, r: int) -> int:
    return 1 if slots is None else slots[r]


def _fits(on: Counter, path: frozenset, slots: Sequence[int] | None) -> bool:
    return all(on[r] < _slots(slots, r) for r in path)


def optimal_length(sets: list[frozenset], slots: Sequence[int] | None = None) -> int:
    """Fewest frames over all partitions of the transfers into blocks that put no more transfers
    on a resource than its slots.

    Partitions are enumerated as restricted growth strings (transfer t joins one of the blocks
    opened so far or opens the next one); a branch stops once it cannot beat the best found.
    """
    best = len(sets)
    blocks: list[Counter] = []

    def place(t: int) -> None:
        nonlocal best
        if len(blocks) >= best:
            return
        if t == len(sets):
            best = len(blocks)
            return
        for block in blocks:
            if _fits(block, sets[t], slots):
                block.update(sets[t])
                place(t + 1)
                block.subtract(sets[t])
        blocks.append(Counter(sets[t]))
        place(t + 1)
        blocks.pop()

    place(0)
    return best if sets else 0


def least_time(sets: list[frozenset], slots: Sequence[int], times: Sequence[Fraction]) -> Fraction:
    """Least total time over all partitions into valid frames, a frame lasting as long as its
    longest transfer. Transfers are placed longest first, so a frame's duration is that of the
    transfer that opened it and only opening a frame costs time."""
    order = sorted(range(len(sets)), key=lambda t: -times[t])
    best = sum(times, Fraction(0))
    blocks: list[Counter] = []

    def place(k: int, cost: Fraction) -> None:
        nonlocal best
        if cost >= best and k < len(order):
            return
        if k == len(order):
            best = min(best, cost)
            return
        t = order[k]
        for block in blocks:
            if _fits(block, sets[t], slots):
                block.update(sets[t])
                place(k + 1, cost)
                block.subtract(sets[t])
        blocks.append(Counter(sets[t]))
        place(k + 1, cost + times[t])
        blocks.pop()

    place(0, Fraction(0))
    return best


def full_teams(sets: list[frozenset], slots: Sequence[int] | None = None) -> int:
    """Number of full teams of the first frame of a schedule reaching the frame bound Λ: valid
    subsets that put at least ``n_r − (Λ − 1)·k_r`` transfers on every resource (with one slot:
    use every bottleneck), to which no other transfer can be added."""
    load: Counter = Counter()
    for s in sets:
        load.update(s)
    frames = max(-(-n // _slots(slots, r)) for r, n in load.items())
    demand = {r: n - (frames - 1) * _slots(slots, r) for r, n in load.items()}
    demand = {r: d for r, d in demand.items() if d > 0}
    count = 0
    for k in range(1, len(sets) + 1):
        for subset in combinations(range(len(sets)), k):
            on: Counter = Counter()
            for t in subset:
                on.update(sets[t])
            if any(on[r] > _slots(slots, r) for r in on):
                continue
            if any(on[r] < d for r, d in demand.items()):
                continue
            if not any(_fits(on, sets[t], slots) for t in range(len(sets)) if t not in subset):
                count += 1
    return count

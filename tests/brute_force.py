"""Exhaustive references for small traffics: every partition, every subset."""

from __future__ import annotations

from itertools import combinations


def optimal_length(sets: list[frozenset]) -> int:
    """Fewest frames over all partitions of the transfers into conflict-free blocks.

    Partitions are enumerated as restricted growth strings (transfer t joins one of the blocks
    opened so far or opens the next one); a branch stops once it cannot beat the best found.
    """
    best = len(sets)
    blocks: list[set] = []

    def place(t: int) -> None:
        nonlocal best
        if len(blocks) >= best:
            return
        if t == len(sets):
            best = len(blocks)
            return
        for block in blocks:
            if not block & sets[t]:
                block |= sets[t]
                place(t + 1)
                block -= sets[t]
        blocks.append(set(sets[t]))
        place(t + 1)
        blocks.pop()

    place(0)
    return best if sets else 0


def full_teams(sets: list[frozenset]) -> int:
    """Number of full teams: conflict-free subsets using every bottleneck, to which no other
    transfer can be added."""
    load: dict = {}
    for s in sets:
        for r in s:
            load[r] = load.get(r, 0) + 1
    peak = max(load.values())
    bottlenecks = {r for r, v in load.items() if v == peak}
    count = 0
    for k in range(1, len(sets) + 1):
        for subset in combinations(range(len(sets)), k):
            used: set = set()
            ok = True
            for t in subset:
                if used & sets[t]:
                    ok = False
                    break
                used |= sets[t]
            if not ok or not bottlenecks <= used:
                continue
            if all(used & sets[t] for t in range(len(sets)) if t not in subset):
                count += 1
    return count

"""Weighted trees of a period (paper 003 §4.3–4.4, Fig. 8), the fixed-period approximation (§4.6)
and the whole schedule of K operations.

A *tree* is what one operation uses: for a reduce, the sends and computations that bring every
value into ``v[0,N]`` at the target (Definition 1); for a scatter or an all-to-all, the path one
message takes (an operation uses one path per message type). A tree's *weight* is how many
operations use it in a period; the weighted trees add up to the period's activities exactly.

Before extraction, the sends of each message type that go round a cycle are cancelled: such a
cycle delivers nothing, and the extraction of Fig. 8 would follow it for ever (it looks for where a
message comes from, and a cycle always has an answer).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from fractions import Fraction
from typing import Any

from ..errors import LiquidschedError
from .lp import Cons, Send
from .period import Period
from .platform import Platform
from .series import REDUCE, SCATTER, Series

Task = Send | Cons


@dataclass
class WeightedTree:
    """The tasks of one way to do an operation (inputs before their users) and how many
    operations use it per period; ``type`` is the message type of a path (None for a reduce)."""

    tasks: list[Task]
    weight: int
    type: Any = None


def cancel_send_cycles(platform: Platform, sends: dict[tuple[int, Any], int]) -> dict[tuple[int, Any], int]:
    """The sends with every cycle of one message type removed (each cycle cut by its smallest
    count), so that each type's sends form an acyclic graph. Conservation and throughput are
    unchanged; no port gets busier.

    Examples
    --------
    >>> from liquidsched.steady.platform import chain
    >>> p = chain(3)        # edges 0: P0>P1, 1: P1>P0, 2: P1>P2, 3: P2>P1
    >>> cancel_send_cycles(p, {(0, "P2"): 5, (2, "P2"): 5, (1, "P2"): 2})
    {(0, 'P2'): 3, (2, 'P2'): 5}
    """
    left = dict(sends)
    by_type: dict[Any, list[int]] = {}
    for (e, t), count in left.items():
        if count:
            by_type.setdefault(t, []).append(e)
    for t, edges in by_type.items():
        while True:
            cycle = _find_cycle(platform, [e for e in edges if left.get((e, t), 0) > 0])
            if cycle is None:
                break
            cut = min(left[(e, t)] for e in cycle)
            for e in cycle:
                left[(e, t)] -= cut
    return {key: count for key, count in left.items() if count}


def _find_cycle(platform: Platform, edges: list[int]) -> list[int] | None:
    """A directed cycle among ``edges`` (as edge indices), or None."""
    out: dict[str, list[int]] = {}
    for e in edges:
        out.setdefault(platform.edges[e].src, []).append(e)
    state: dict[str, int] = {}  # 1 on the current path, 2 finished
    parent: dict[str, int] = {}
    for start in list(out):
        if state.get(start):
            continue
        state[start] = 1
        stack = [(start, iter(out[start]))]
        while stack:
            node, nexts = stack[-1]
            e = next(nexts, None)
            if e is None:
                state[node] = 2
                stack.pop()
                continue
            head = platform.edges[e].dst
            if state.get(head) == 1:
                cycle, v = [e], node
                while v != head:
                    cycle.append(parent[v])
                    v = platform.edges[parent[v]].src
                return cycle
            if not state.get(head):
                state[head] = 1
                parent[head] = e
                stack.append((head, iter(out.get(head, []))))
    return None


def extract_trees(platform: Platform, series: Series, period: Period) -> list[WeightedTree]:
    """The weighted trees of a period whose sends have no cycle (:func:`cancel_send_cycles`):
    Fig. 8's EXTRACT_TREE for a reduce, a path decomposition of each message type otherwise.

    Raises
    ------
    LiquidschedError
        The activities do not add up to whole trees (which a checked optimum never gives).
    """
    sends = {k: v for k, v in period.sends.items() if v}
    tasks = {k: v for k, v in period.tasks.items() if v}
    if series.kind == REDUCE:
        trees = _reduce_trees(platform, series, period.operations, sends, tasks)
    else:
        trees = _path_trees(platform, series, period.operations, sends)
    if any(sends.values()) or any(tasks.values()):
        raise LiquidschedError("internal error: activities are left over after the trees were extracted")
    return trees


def entry_of(t: Task, sends: dict, tasks: dict) -> tuple[dict, tuple]:
    """Where a task's count is kept: the sends by (edge, type) or the tasks by (node, task)."""
    return (sends, (t.edge, t.type)) if isinstance(t, Send) else (tasks, (t.node, t.task))


def _remove(tree: list[Task], sends: dict, tasks: dict) -> int:
    """Take the tree off the activities as many times as they allow; return that weight."""
    weight = min(table[key] for table, key in (entry_of(t, sends, tasks) for t in tree))
    for t in tree:
        table, key = entry_of(t, sends, tasks)
        table[key] -= weight
        if not table[key]:
            del table[key]
    return weight


def _reduce_trees(platform: Platform, series: Series, operations: int, sends: dict, tasks: dict) -> list[WeightedTree]:
    index = platform.index
    owner = {k: index[p] for k, p in enumerate(series.participants)}
    last = len(series.participants) - 1
    into: dict[tuple[int, Any], list[int]] = {}
    for e, t in sends:
        into.setdefault((index[platform.edges[e].dst], t), []).append(e)
    trees: list[WeightedTree] = []
    done = 0
    while done < operations:
        tree: list[Task] = []

        def find(node: int, t: tuple[int, int]) -> None:
            """Append the tasks that make ``t`` at ``node``, inputs first (FIND_TREE)."""
            k, m = t
            if k == m and owner[k] == node:
                return
            for l in range(k, m):
                if tasks.get((node, (k, l, m)), 0) > 0:
                    find(node, (k, l))
                    find(node, (l + 1, m))
                    tree.append(Cons(node, (k, l, m)))
                    return
            for e in into.get((node, t), []):
                if sends.get((e, t), 0) > 0:
                    find(index[platform.edges[e].src], t)
                    tree.append(Send(e, t))
                    return
            raise LiquidschedError(f"internal error: nothing makes {series.describe_type(t)} at {platform.names[node]}")

        find(index[series.root], (0, last))
        if not tree:
            raise LiquidschedError("internal error: an empty reduction tree")
        weight = _remove(tree, sends, tasks)
        trees.append(WeightedTree(tree, weight))
        done += weight
    return trees


def _path_trees(platform: Platform, series: Series, operations: int, sends: dict) -> list[WeightedTree]:
    index = platform.index
    out: dict[tuple[int, Any], list[int]] = {}
    for e, t in sends:
        out.setdefault((index[platform.edges[e].src], t), []).append(e)
    trees: list[WeightedTree] = []
    for t in series.message_types():
        origin, destination = (series.root, t) if series.kind == SCATTER else t
        done = 0
        while done < operations:
            path: list[Task] = []
            node = index[origin]
            while node != index[destination]:
                e = next((e for e in out.get((node, t), []) if sends.get((e, t), 0) > 0), None)
                if e is None:
                    raise LiquidschedError(f"internal error: {series.describe_type(t)} stops at {platform.names[node]}")
                path.append(Send(e, t))
                node = index[platform.edges[e].dst]
            weight = _remove(path, sends, {})
            trees.append(WeightedTree(path, weight, t))
            done += weight
    return trees


def activities_of(trees: list[WeightedTree]) -> tuple[dict, dict]:
    """The sends and tasks per period that the weighted trees add up to."""
    sends: dict = {}
    tasks: dict = {}
    for tree in trees:
        for t in tree.tasks:
            table, key = entry_of(t, sends, tasks)
            table[key] = table.get(key, 0) + tree.weight
    return sends, tasks


def stages(platform: Platform, tree: WeightedTree) -> dict[int, int]:
    """The period (1, 2, …) of the pipeline in which each task of ``tree`` runs for the
    operations that enter in period 1: a send runs one period after its input is ready, a
    computation at the end of the period in which its last input arrived (0: before any
    communication, from values in place). Keys are positions in ``tree.tasks``."""
    ready: dict[tuple[int, Any], int] = {}
    stage: dict[int, int] = {}
    index = platform.index
    for pos, t in enumerate(tree.tasks):
        if isinstance(t, Send):
            src = index[platform.edges[t.edge].src]
            stage[pos] = ready.get((src, t.type), 0) + 1
            ready[(index[platform.edges[t.edge].dst], t.type)] = stage[pos]
        else:
            k, l, m = t.task
            stage[pos] = max(ready.get((t.node, (k, l)), 0), ready.get((t.node, (l + 1, m)), 0))
            ready[(t.node, (k, m))] = stage[pos]
    return stage


def depth(platform: Platform, trees: list[WeightedTree]) -> int:
    """The periods an operation spends in the pipeline: its last task's stage (at least 1)."""
    return max([1] + [max(stages(platform, tree).values(), default=1) for tree in trees])


@dataclass
class Pipeline:
    """The whole schedule of ``operations`` operations: ``batches`` periods that each start one
    batch of up to ``per_period`` operations, plus ``depth - 1`` periods to fill and drain the
    pipeline (the paper's initialisation and clean-up)."""

    operations: int
    per_period: int
    period_s: Fraction
    depth: int

    @property
    def batches(self) -> int:
        return math.ceil(self.operations / self.per_period)

    @property
    def periods(self) -> int:
        return self.batches + self.depth - 1

    @property
    def time_s(self) -> Fraction:
        return self.periods * self.period_s

    @property
    def throughput(self) -> Fraction:
        return Fraction(self.operations) / self.time_s


def pipeline(platform: Platform, trees: list[WeightedTree], period_s: Fraction, operations: int) -> Pipeline:
    """The schedule of ``operations`` operations with these trees, one period each."""
    per_period = operations_per_period(trees)
    if per_period == 0:
        raise LiquidschedError("the trees carry no operation in a period")
    return Pipeline(operations, per_period, period_s, depth(platform, trees))


def operations_per_period(trees: list[WeightedTree]) -> int:
    """Operations a period completes: the weights' sum for reduce trees, the smallest per-type
    sum for paths (an operation needs every message type)."""
    if all(t.type is None for t in trees):
        return sum(t.weight for t in trees)
    per_type: dict[Any, int] = {}
    for t in trees:
        per_type[t.type] = per_type.get(t.type, 0) + t.weight
    return min(per_type.values())


@dataclass
class FixedPeriod:
    """The §4.6 approximation: trees weighted ``r(T) = ⌊weight · T_fixed / T⌋`` on a period of
    ``length_s``; its throughput is within ``bound`` of the optimum."""

    trees: list[WeightedTree]
    length_s: Fraction
    operations: int
    throughput: Fraction
    bound: Fraction

    def period(self) -> Period:
        """This fixed period's activities, as a period to decompose and run."""
        sends, tasks = activities_of(self.trees)
        return Period(self.length_s, self.throughput, self.operations, sends, tasks)


def fixed_period(trees: list[WeightedTree], period: Period, length_s: Fraction) -> FixedPeriod:
    """Approximate the optimum with a period of ``length_s`` (§4.6): each tree keeps
    ``⌊weight · length_s / T⌋`` operations, which keeps every port within the new period. The
    loss is at most (trees of one message type, or all trees of a reduce) / ``length_s``.

    For paths, every message type must carry the same number of operations; the types that
    round to more give the excess back, from their last paths."""
    if not length_s > 0:
        raise LiquidschedError(f"the fixed period must be positive, got {length_s}")
    scaled = [WeightedTree(t.tasks, math.floor(t.weight * length_s / period.length_s), t.type) for t in trees]
    if all(t.type is None for t in trees):
        operations = sum(t.weight for t in scaled)
        bound = Fraction(len(trees)) / length_s
    else:
        per_type: dict[Any, list[WeightedTree]] = {}
        for t in scaled:
            per_type.setdefault(t.type, []).append(t)
        operations = min(sum(t.weight for t in group) for group in per_type.values())
        for group in per_type.values():
            excess = sum(t.weight for t in group) - operations
            for t in reversed(group):
                take = min(excess, t.weight)
                t.weight -= take
                excess -= take
        bound = Fraction(max(len(g) for g in per_type.values())) / length_s
    kept = [t for t in scaled if t.weight]
    return FixedPeriod(kept, length_s, operations, Fraction(operations) / length_s, bound)

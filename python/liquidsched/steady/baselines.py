"""What MPI libraries do instead, in the same model: MPICH's binomial-tree reduce (the order a
non-commutative operator needs), a flat scatter from the source, a direct all-to-all. Each is a
set of trees used by every operation, so its best periodic schedule, its throughput and its
matchings come from the same machinery as the optimum's (:func:`period_of_trees`).

A message between two participants that are not neighbours is stored and forwarded along the
fewest-hop path (:meth:`Platform.path`), as the platform model requires.
"""

from __future__ import annotations

from fractions import Fraction

from ..errors import InputError
from .lp import Cons, Send
from .period import Period, busy_s
from .platform import Platform
from .series import REDUCE, SCATTER, Series
from .trees import Task, WeightedTree, activities_of, operations_per_period


def _sends_along(platform: Platform, src: str, dst: str, t) -> list[Task]:
    return [Send(e, t) for e in platform.path(src, dst)]


def binomial_reduce_tree(platform: Platform, series: Series) -> WeightedTree:
    """MPICH's binomial reduce for a non-commutative operator: participants are ranks in their
    order, reduced to rank 0; at step ``mask`` a rank ``r`` with ``r & mask == 0`` receives the
    partial result of ``r + mask`` and computes ``v[r, …] ⊕ v[r + mask, …]``, the others send and
    stop. Rank 0 then sends the result to the target if it is not the target.

    Examples
    --------
    >>> from liquidsched.steady.platform import complete
    >>> p = complete(4)
    >>> tree = binomial_reduce_tree(p, Series("reduce", ("P0", "P1", "P2", "P3"), "P0", 1, 1))
    >>> [t.task for t in tree.tasks if isinstance(t, Cons)]
    [(0, 0, 1), (2, 2, 3), (0, 1, 3)]
    """
    if series.kind != REDUCE:
        raise InputError(f"a binomial reduce tree is for a reduce, not a {series.kind}")
    ranks = series.participants
    size = len(ranks)
    index = platform.index
    holds = {r: (r, r) for r in range(size)}
    tasks: list[Task] = []
    mask = 1
    while mask < size:
        for r in range(0, size, 2 * mask):
            source = r + mask
            if source >= size:
                continue
            received = holds[source]
            tasks += _sends_along(platform, ranks[source], ranks[r], received)
            k, l = holds[r]
            m = received[1]
            if platform.nodes[ranks[r]].is_router:
                raise InputError(f"participant {ranks[r]} is a router: the binomial tree needs it to compute")
            tasks.append(Cons(index[ranks[r]], (k, l, m)))
            holds[r] = (k, m)
        mask *= 2
    if ranks[0] != series.root:
        tasks += _sends_along(platform, ranks[0], series.root, (0, size - 1))
    return WeightedTree(tasks, 1)


def direct_paths(platform: Platform, series: Series) -> list[WeightedTree]:
    """Every message on its fewest-hop path: a flat scatter from the source, or a direct
    all-to-all."""
    if series.kind == REDUCE:
        raise InputError("a reduce has no direct paths: use binomial_reduce_tree")
    trees = []
    for t in series.message_types():
        src, dst = (series.root, t) if series.kind == SCATTER else t
        trees.append(WeightedTree(_sends_along(platform, src, dst, t), 1, t))
    return trees


def baseline_trees(platform: Platform, series: Series) -> list[WeightedTree]:
    """The binomial tree of a reduce, the direct paths of a scatter or an all-to-all."""
    if series.kind == REDUCE:
        return [binomial_reduce_tree(platform, series)]
    return direct_paths(platform, series)


def period_of_trees(platform: Platform, series: Series, trees: list[WeightedTree]) -> Period:
    """The shortest period that runs these weighted trees: as long as the busiest port or
    processor needs for them. Its throughput is what the trees achieve in steady state."""
    sends, tasks = activities_of(trees)
    operations = operations_per_period(trees)
    busiest = max(max(b.values()) for b in busy_s(platform, series, sends, tasks).values())
    if busiest == 0:
        raise InputError("the trees do no work")
    return Period(busiest, Fraction(operations) / busiest, operations, sends, tasks)

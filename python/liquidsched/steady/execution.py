"""Running a series of K operations with MPI by its periodic schedule, with real data: one rank
per platform node (routers included: they forward), here or on the emulated platform.

Every period runs the same matchings, in order; in matching ``j`` a rank sends at most one byte
range of one edge's stream and receives at most one (barrier-free: a rank waits only for its own
partners of the same matching, so no rank can wait for one that waits for it). An edge's stream
in a period is the messages of its sends, in a fixed order known to both ends: tree by tree, task
by task, copy by copy. A task of stage ``s`` (:func:`~liquidsched.steady.trees.stages`) runs for
batch ``b`` in period ``b + s − 1``; computations run at the end of their period (stage 0: at its
start, from values in place). During the fill and the drain a message without an operation is
sent as padding, so every period lasts what the model says and K operations take
``⌈K / ρT⌉ + depth − 1`` periods.

The reduce computes a real non-commutative operator: each value is a batch of 2 × 2 integer
matrices and ``⊕`` their product modulo a prime, so a wrong order gives a wrong result. Every
destination checks every result it gets against one computed directly. The same run also times
``MPI_Reduce`` (with that operator declared non-commutative) or ``MPI_Scatter`` K times, for
comparison.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from fractions import Fraction
from typing import Any, Mapping, Sequence

from ..errors import InputError
from .lp import Send
from .period import Decomposition, Period
from .platform import Platform
from .series import ALL_TO_ALL, REDUCE, SCATTER, Series
from .trees import WeightedTree, depth, operations_per_period, stages

#: The reduce's values are 2 × 2 matrices of int64: 32 bytes each.
MATRIX_BYTES = 32


@dataclass
class PeriodicRun:
    """What one schedule of a series runs: its trees (weights per period), its matchings, its
    period, and the model's time for K operations."""

    name: str
    trees: list[WeightedTree]
    decomposition: Decomposition
    period_s: Fraction
    throughput: Fraction

    def operations_per_period(self) -> int:
        return operations_per_period(self.trees)


def periodic_run(name: str, trees: list[WeightedTree], period: Period, decomposition: Decomposition) -> PeriodicRun:
    """A schedule to run; when the matchings cover several periods (``repeat``), one run period
    is that many periods, with every tree's weight multiplied alike."""
    r = decomposition.repeat
    scaled = [WeightedTree(t.tasks, t.weight * r, t.type) for t in trees]
    return PeriodicRun(name, scaled, decomposition, period.length_s * r, period.throughput)


def type_key(series: Series, t: Any, ranks: Mapping[str, int]) -> list[int]:
    """A message type as integers the worker reads: a target's rank, a (source, destination)
    pair of ranks, or a reduce's interval."""
    if series.kind == SCATTER:
        return [ranks[t]]
    if series.kind == ALL_TO_ALL:
        return [ranks[t[0]], ranks[t[1]]]
    return [t[0], t[1]]


def run_job(platform: Platform, series: Series, run: PeriodicRun) -> dict[str, Any]:
    """The part of the worker's job that describes one schedule."""
    ranks = platform.index
    offsets: dict[Any, int] = {}
    trees = []
    for tree in run.trees:
        stage = stages(platform, tree)
        tasks = []
        for pos, t in enumerate(tree.tasks):
            if isinstance(t, Send):
                edge = platform.edges[t.edge]
                tasks.append({"send": [ranks[edge.src], ranks[edge.dst]],
                              "type": type_key(series, t.type, ranks), "stage": stage[pos]})
            else:
                tasks.append({"compute": t.node, "task": list(t.task), "stage": stage[pos]})
        trees.append({"weight": tree.weight, "offset": offsets.get(tree.type, 0), "tasks": tasks})
        offsets[tree.type] = offsets.get(tree.type, 0) + tree.weight
    matchings = []
    done: dict[int, int] = {}
    for m in run.decomposition.matchings:
        parts = []
        for e, nbytes in m.edges:
            edge = platform.edges[e]
            parts.append([ranks[edge.src], ranks[edge.dst], done.get(e, 0), nbytes])
            done[e] = done.get(e, 0) + nbytes
        matchings.append(parts)
    return {"name": run.name, "operations_per_period": run.operations_per_period(),
            "depth": depth(platform, run.trees), "period_s": float(run.period_s), "trees": trees,
            "matchings": matchings}


def check_runnable(platform: Platform, series: Series) -> None:
    """Refuse what the worker cannot run, naming why."""
    if series.kind == ALL_TO_ALL:
        raise InputError("running a series of all-to-alls is not supported: run one period with "
                         "'liquidsched run --schedule' instead")
    sizes = {series.size(t) for t in series.message_types()}
    if len(sizes) != 1:
        raise InputError("running a series needs one message size for every message type")
    if series.kind == REDUCE and series.message_bytes % MATRIX_BYTES:
        raise InputError(f"a reduce runs on {MATRIX_BYTES}-byte matrices: the message size must be a multiple "
                         f"of {MATRIX_BYTES} bytes, got {series.message_bytes}")


def expected_time_s(run: PeriodicRun, platform: Platform, operations: int) -> Fraction:
    """The model's time of ``operations`` operations: ``⌈K / per period⌉ + depth − 1`` periods."""
    periods = math.ceil(operations / run.operations_per_period()) + depth(platform, run.trees) - 1
    return periods * run.period_s


def run_series(platform: Platform, series: Series, runs: Sequence[PeriodicRun], operations: int,
               namespaces: Mapping[str, str] | None = None, mpi_collective: bool = True, seed: int = 0,
               timeout_s: float = 1800.0, launcher: Any = None,
               extra_args: Sequence[str] = ()) -> dict[str, Any]:
    """Run ``operations`` operations of ``series`` by each of ``runs`` (and by the MPI
    collective) with one rank per platform node, started by ``launcher`` (a
    :class:`~liquidsched.execute.Launcher` or a name; default mpiexec, given ``extra_args``);
    every result is checked. Returns, per schedule, the measured time and throughput, the results checked and
    the model's time.

    Raises
    ------
    InputError
        The series cannot be run (see :func:`check_runnable`).
    ExchangeFailedError
        The MPI run failed or timed out.
    """
    from ..execute import launch_job

    check_runnable(platform, series)
    if operations < 1:
        raise InputError(f"the number of operations must be at least 1, got {operations}")
    ranks = platform.index
    job = {"kind": series.kind, "nodes": platform.names,
           "participants": [ranks[p] for p in series.participants], "root": ranks[series.root],
           "message_bytes": series.message_bytes, "operations": operations, "seed": seed,
           "mpi_collective": mpi_collective, "runs": [run_job(platform, series, r) for r in runs]}
    spaces = None if namespaces is None else [namespaces[n] for n in platform.names]
    raw = launch_job(job, len(platform.names), "liquidsched.execute.steady_worker", "the series", spaces, launcher,
                     extra_args, timeout_s)
    for r in runs:
        row = raw["runs"][r.name]
        row["model_time_s"] = float(expected_time_s(r, platform, operations))
        row["steady_throughput_per_s"] = float(r.throughput)
    return raw

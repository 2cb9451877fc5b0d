"""One period of the steady state (paper 003 §3.3): integer activities, and the period cut into
weighted matchings of sends and receives.

The period ``T`` is the smallest time in which every activity of the exact optimum is a whole
number: the paper takes the least common multiple of the denominators, which depends on the unit
of time; the smallest such ``T`` (``lcm of denominators / gcd of numerators``) does not, and
divides it.

The matchings are computed in the core (:func:`liquidsched._core.steady_matchings`) on busy times
in a common unit. Each edge's bytes in a matching must be whole, as liquidsched schedules count
bytes: where one period does not allow it, the decomposition covers ``repeat`` periods (the paper
does the same to avoid split messages: its period 12 becomes 48).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from fractions import Fraction
from typing import Any

from ..errors import ProblemTooLargeError
from ..wording import plural
from .lp import THROUGHPUT, Cons, LinearProgram, Send
from .exact import ExactSolution
from .platform import Platform
from .series import Series

#: The core decomposes busy times in 64-bit units.
MAX_UNITS = 2**63 - 1


@dataclass
class Period:
    """The activities of one period of length ``length_s``, all whole numbers."""

    length_s: Fraction
    throughput: Fraction
    operations: int
    #: messages per period, by (edge, message type)
    sends: dict[tuple[int, Any], int]
    #: tasks per period, by (node index, task)
    tasks: dict[tuple[int, tuple[int, int, int]], int]

    def edge_bytes(self, series: Series) -> dict[int, int]:
        """The bytes each edge carries in a period."""
        return edge_bytes_of(series, self.sends)

    def busy_s(self, platform: Platform, series: Series) -> dict[str, dict[str, Fraction]]:
        """Each node's time sending, receiving and computing in a period."""
        return busy_s(platform, series, self.sends, self.tasks)


def edge_bytes_of(series: Series, sends: dict[tuple[int, Any], int]) -> dict[int, int]:
    """The bytes each edge carries for these sends."""
    out: dict[int, int] = {}
    for (e, t), count in sends.items():
        out[e] = out.get(e, 0) + count * series.size(t)
    return out


def busy_s(platform: Platform, series: Series, sends: dict, tasks: dict) -> dict[str, dict[str, Fraction]]:
    """Each node's time sending, receiving and computing for these activities."""
    names = platform.names
    busy = {n: {"send": Fraction(0), "receive": Fraction(0), "compute": Fraction(0)} for n in names}
    for e, nbytes in edge_bytes_of(series, sends).items():
        edge = platform.edges[e]
        busy[edge.src]["send"] += nbytes * edge.cost_s_per_byte
        busy[edge.dst]["receive"] += nbytes * edge.cost_s_per_byte
    for (i, _task), count in tasks.items():
        busy[names[i]]["compute"] += count * series.task_flops / platform.speed(names[i])
    return busy


def smallest_period(values: list[Fraction]) -> Fraction:
    """The smallest ``T > 0`` with every ``v * T`` whole.

    Examples
    --------
    >>> smallest_period([Fraction(2, 3), Fraction(4, 3), Fraction(1, 2)])
    Fraction(6, 1)
    >>> smallest_period([Fraction(2, 3), Fraction(4, 3)])
    Fraction(3, 2)
    """
    nonzero = [v for v in values if v]
    if not nonzero:
        return Fraction(1)
    denominators = math.lcm(*(v.denominator for v in nonzero))
    numerators = math.gcd(*(v.numerator for v in nonzero))
    return Fraction(denominators, numerators)


def period_of(lp: LinearProgram, solution: ExactSolution) -> Period:
    """The period of an exact optimum and its whole activities."""
    values = solution.values
    length = smallest_period(values)
    sends: dict[tuple[int, Any], int] = {}
    tasks: dict[tuple[int, tuple[int, int, int]], int] = {}
    for col, var in enumerate(lp.columns):
        v = values[col] * length
        if not v:
            continue
        assert v.denominator == 1
        if isinstance(var, Send):
            sends[(var.edge, var.type)] = int(v)
        elif isinstance(var, Cons):
            tasks[(var.node, var.task)] = int(v)
    throughput = values[lp.column_index[THROUGHPUT]]
    return Period(length, throughput, int(throughput * length), sends, tasks)


@dataclass
class Matching:
    """A part of the period in which each node sends on at most one edge and receives on at most
    one: ``length_s`` long, with the bytes each of its edges carries."""

    length_s: Fraction
    edges: list[tuple[int, int]]


@dataclass
class Decomposition:
    """The matchings of ``repeat`` periods, and their common time unit (``1 / unit_per_s`` s)."""

    matchings: list[Matching]
    repeat: int
    unit_per_s: int

    @property
    def length_s(self) -> Fraction:
        return sum((m.length_s for m in self.matchings), Fraction(0))


def decompose(platform: Platform, edge_bytes: dict[int, int]) -> Decomposition:
    """Cut the period whose edges carry ``edge_bytes`` into weighted matchings (in the core).

    Raises
    ------
    ProblemTooLargeError
        The busy times need a unit too fine for 64 bits (many unrelated bandwidths).
    """
    from .. import _core

    used = sorted(e for e, b in edge_bytes.items() if b)
    if not used:
        return Decomposition([], 1, 1)
    costs = {e: platform.edges[e].cost_s_per_byte for e in used}
    unit_per_s = math.lcm(*(c.denominator for c in costs.values()))
    per_byte = {e: int(c * unit_per_s) for e, c in costs.items()}
    common = math.lcm(*per_byte.values())
    # With every edge's units a multiple of each edge's units per byte, every matching is too
    # (its lengths are integer combinations of the weights), so its bytes are whole: ``safe``
    # periods always work; one period often does already, and is tried first.
    safe = math.lcm(*(common // math.gcd(common, edge_bytes[e] * per_byte[e]) for e in used))
    index = platform.index
    for repeat in sorted({1, safe}):
        weights = {e: repeat * edge_bytes[e] * per_byte[e] for e in used}
        heaviest = max(weights.values())
        if heaviest > MAX_UNITS:
            raise ProblemTooLargeError(
                f"the period's busy times need a unit of 1/{unit_per_s} s and {plural(repeat, 'period')}: "
                f"{heaviest:,} units on one edge do not fit in 64 bits; use fewer distinct bandwidths "
                f"or a fixed period")
        core_edges = [(index[platform.edges[e].src], index[platform.edges[e].dst], weights[e]) for e in used]
        steps = _core.steady_matchings(len(platform.names), core_edges)
        if all(units % per_byte[used[k]] == 0 for _, pieces in steps for k, units in pieces):
            break
    matchings = [Matching(Fraction(length, unit_per_s),
                          [(used[k], units // per_byte[used[k]]) for k, units in pieces])
                 for length, pieces in steps]
    return Decomposition(matchings, repeat, unit_per_s)


def period_schedule(platform: Platform, series: Series, period: Period, decomposition: Decomposition,
                    parameters: dict[str, Any] | None = None):
    """The decomposition as a liquidsched :class:`~liquidsched.schedule.Schedule` on
    :meth:`Platform.network`: one transfer per used edge carrying its bytes of ``repeat``
    periods, one frame per matching."""
    from ..schedule import Piece, Schedule, ScheduleInfo
    from ..traffic import Traffic, Transfer

    edge_bytes = period.edge_bytes(series)
    used = sorted(e for e, b in edge_bytes.items() if b)
    traffic = Traffic([Transfer(platform.edges[e].src, platform.edges[e].dst, decomposition.repeat * edge_bytes[e])
                       for e in used], name=f"{series.kind} period")
    name = dict(zip(used, traffic.names))
    frames = [[Piece(name[e], nbytes) for e, nbytes in m.edges] for m in decomposition.matchings]
    info = ScheduleInfo(
        algorithm="steady-state",
        parameters={"operation": series.kind, "root": series.root, "participants": list(series.participants),
                    **(parameters or {})},
        stats={"period_s": str(period.length_s), "repeat": decomposition.repeat,
               "throughput_per_s": str(period.throughput),
               "operations_per_period": period.operations,
               "matchings_s": str(decomposition.length_s)})
    return Schedule(platform.network(), traffic, frames, info)

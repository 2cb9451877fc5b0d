"""The exact rational optimum of a linear program from the basis HiGHS ends on.

HiGHS solves in floating point. Its optimal basis says which variables are basic and which
constraints are tight; solving that square system again in fractions gives the vertex exactly,
and the same basis gives the duals. Primal feasibility, dual feasibility and equal objectives are
then checked exactly, so the optimum is proven, not only computed.
"""

from __future__ import annotations

import heapq
from dataclasses import dataclass
from fractions import Fraction

from ..errors import LiquidschedError
from .lp import LinearProgram, LpSolution


class ExactnessError(LiquidschedError):
    """The basis HiGHS returned does not give an exact optimum (tolerances misled it)."""


@dataclass
class ExactSolution:
    """The optimum in fractions, its duals (of the maximisation; negated for a minimisation),
    and the proof it holds."""

    values: list[Fraction]
    objective: Fraction
    #: a dual value per row (0 where the row is not tight)
    duals: list[Fraction]
    basic_columns: int


def solve_sparse(equations: list[dict[int, Fraction]], rhs: list[Fraction]) -> dict[int, Fraction]:
    """Solve a square sparse system exactly by Gaussian elimination with Markowitz pivoting
    (the row with fewest entries, in it the column in fewest rows), so that fill-in stays low.

    Raises
    ------
    ExactnessError
        The system is singular.

    Examples
    --------
    >>> x = solve_sparse([{0: Fraction(2), 1: Fraction(1)}, {1: Fraction(3)}], [Fraction(5), Fraction(3)])
    >>> x[0], x[1]
    (Fraction(2, 1), Fraction(1, 1))
    """
    rows = [dict(eq) for eq in equations]
    rhs = list(rhs)
    in_rows: dict[int, set[int]] = {}
    for r, row in enumerate(rows):
        for c in row:
            in_rows.setdefault(c, set()).add(r)
    active = set(range(len(rows)))
    heap = [(len(row), r) for r, row in enumerate(rows)]
    heapq.heapify(heap)
    pivots: list[tuple[int, int]] = []
    while heap:
        length, r = heapq.heappop(heap)
        if r not in active or length != len(rows[r]):
            if r in active:
                heapq.heappush(heap, (len(rows[r]), r))
            continue
        if not rows[r]:
            raise ExactnessError("the basis matrix is singular")
        pivot_row = rows[r]
        c = min(pivot_row, key=lambda col: (len(in_rows[col]), col))
        pivot = pivot_row[c]
        active.discard(r)
        for col in pivot_row:
            in_rows[col].discard(r)
        for r2 in list(in_rows[c]):
            row2 = rows[r2]
            factor = row2[c] / pivot
            for col, v in pivot_row.items():
                new = row2.get(col, 0) - factor * v
                if new:
                    if col not in row2:
                        in_rows[col].add(r2)
                    row2[col] = new
                elif col in row2:
                    del row2[col]
                    in_rows[col].discard(r2)
            rhs[r2] -= factor * rhs[r]
            heapq.heappush(heap, (len(row2), r2))
        pivots.append((r, c))
    if len(pivots) != len(rows):
        raise ExactnessError("the basis matrix is singular")
    x: dict[int, Fraction] = {}
    for r, c in reversed(pivots):
        row = rows[r]
        total = rhs[r] - sum((v * x[col] for col, v in row.items() if col != c), Fraction(0))
        x[c] = total / row[c]
    return x


def exact_solution(lp: LinearProgram, solution: LpSolution) -> ExactSolution:
    """The exact optimum of ``lp`` at the basis of ``solution``, checked.

    Raises
    ------
    ExactnessError
        The basis is not square, not primal feasible or not dual feasible in exact arithmetic.
    """
    n = len(lp.columns)
    basic = [j for j in range(n) if solution.column_basic[j]]
    if any(solution.column_at_upper[j] for j in range(n)):
        raise ExactnessError("a variable sits at an upper bound it does not have")
    tight = [i for i in range(len(lp.rows)) if not solution.row_basic[i]]
    if len(tight) != len(basic):
        raise ExactnessError(f"the basis is not square: {len(basic)} basic variables, {len(tight)} tight rows")
    is_basic = set(basic)

    def bound(i: int) -> Fraction:
        lower, upper = lp.row_lower[i], lp.row_upper[i]
        if lower is None or (upper is not None and solution.row_at_upper[i]):
            return upper
        return lower

    primal = solve_sparse([{c: v for c, v in lp.rows[i].items() if c in is_basic} for i in tight],
                          [bound(i) for i in tight])
    values = [primal.get(j, Fraction(0)) for j in range(n)]
    _check_primal(lp, values)
    # A minimisation is checked as the maximisation of the opposite objective.
    sign = 1 if lp.maximize else -1
    cost = [Fraction(0)] * n
    for c, v in lp.objective.items():
        cost[c] = sign * v
    columns: dict[int, dict[int, Fraction]] = {j: {} for j in basic}
    position = {i: p for p, i in enumerate(tight)}
    for i in tight:
        for c, v in lp.rows[i].items():
            if c in is_basic:
                columns[c][position[i]] = v
    dual_tight = solve_sparse([columns[j] for j in basic], [cost[j] for j in basic]) if basic else {}
    duals = [Fraction(0)] * len(lp.rows)
    for p, i in enumerate(tight):
        duals[i] = dual_tight.get(p, Fraction(0))
    _check_dual(lp, duals, cost, is_basic)
    objective = sum((cost[j] * values[j] for j in range(n)), Fraction(0))
    dual_objective = sum((duals[i] * bound(i) for i in tight), Fraction(0))
    objective *= sign
    dual_objective *= sign
    if objective != dual_objective:
        raise ExactnessError(f"primal {objective} and dual {dual_objective} objectives differ")
    return ExactSolution(values, objective, duals, len(basic))


def _check_primal(lp: LinearProgram, values: list[Fraction]) -> None:
    for j, v in enumerate(values):
        if v < 0:
            raise ExactnessError(f"variable {lp.columns[j]} is negative ({v}) at the basis")
    for i, row in enumerate(lp.rows):
        activity = sum((v * values[c] for c, v in row.items()), Fraction(0))
        lower, upper = lp.row_lower[i], lp.row_upper[i]
        if (lower is not None and activity < lower) or (upper is not None and activity > upper):
            raise ExactnessError(f"row {lp.row_names[i]!r} is violated at the basis ({activity})")


def _check_dual(lp: LinearProgram, duals: list[Fraction], cost: list[Fraction], is_basic: set[int]) -> None:
    """Optimality of a maximisation: no reduced cost positive, row duals of the right sign."""
    reduced = list(cost)
    for i, row in enumerate(lp.rows):
        if duals[i]:
            for c, v in row.items():
                reduced[c] -= duals[i] * v
    for j, d in enumerate(reduced):
        if j not in is_basic and d > 0:
            raise ExactnessError(f"variable {lp.columns[j]} has a positive reduced cost {d}: not optimal")
    for i, y in enumerate(duals):
        lower, upper = lp.row_lower[i], lp.row_upper[i]
        if (y > 0 and upper is None) or (y < 0 and lower is None):
            raise ExactnessError(f"row {lp.row_names[i]!r} has a dual of the wrong sign ({y}): not optimal")

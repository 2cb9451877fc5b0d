"""From a platform and a series to the optimal steady state, end to end: the LP, its exact
optimum, the period, the trees, the matchings and the schedule of one period."""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from fractions import Fraction
from typing import Any

from ..errors import InputError
from .exact import ExactnessError, ExactSolution, exact_solution
from .lp import LinearProgram, build_program, least_busy_program, solve_program
from .period import Decomposition, Period, decompose, period_of
from .platform import Platform
from .series import Series
from .trees import FixedPeriod, WeightedTree, cancel_send_cycles, extract_trees, fixed_period


@dataclass
class SteadyState:
    """The optimal steady state of a series on a platform.

    ``period`` holds the exact optimum's activities (sends without cycles); ``trees`` add up to
    it; ``decomposition`` cuts the period that is run (``fixed``'s when a fixed period was asked
    for) into matchings. ``times_s`` says how long each stage took.
    """

    platform: Platform
    series: Series
    lp: LinearProgram
    exact: ExactSolution
    period: Period
    trees: list[WeightedTree]
    decomposition: Decomposition
    fixed: FixedPeriod | None = None
    times_s: dict[str, float] = field(default_factory=dict)

    @property
    def throughput(self) -> Fraction:
        """ρ: the optimal operations per second, exactly."""
        return self.period.throughput

    @property
    def run_period(self) -> Period:
        """The period that is run: the optimum's, or the fixed one's."""
        return self.period if self.fixed is None else self.fixed.period()

    def schedule(self):
        """The run period as a liquidsched Schedule on the platform's network."""
        from .period import period_schedule

        params = {"fixed_period_s": str(self.fixed.length_s)} if self.fixed else {}
        return period_schedule(self.platform, self.series, self.run_period, self.decomposition, params)

    def summary(self) -> dict[str, Any]:
        run = self.run_period
        out = {
            "platform": self.platform.name,
            "operation": self.series.kind,
            "root": self.series.root,
            "participants": list(self.series.participants),
            "throughput_per_s": str(self.throughput),
            "throughput_per_s_float": float(self.throughput),
            "period_s": str(self.period.length_s),
            "operations_per_period": self.period.operations,
            "trees": len(self.trees),
            "matchings": len(self.decomposition.matchings),
            "repeat": self.decomposition.repeat,
            "lp": {"columns": len(self.lp.columns), "rows": len(self.lp.rows),
                   "basic_columns": self.exact.basic_columns},
            "times_s": dict(self.times_s),
        }
        if self.fixed is not None:
            out["fixed_period"] = {"period_s": str(self.fixed.length_s), "operations": self.fixed.operations,
                                   "throughput_per_s": str(self.fixed.throughput),
                                   "loss_bound_per_s": str(self.fixed.bound)}
        out["run_period_s"] = str(run.length_s)
        return out


def _exact_optimum(lp: LinearProgram, times: dict[str, float]) -> ExactSolution:
    """Solve ``lp`` and make its optimum exact (checked), adding the time of each to ``times``."""
    for solver in ("ipm", "simplex"):
        t0 = time.perf_counter()
        solution = solve_program(lp, solver)
        t1 = time.perf_counter()
        times["lp"] = times.get("lp", 0.0) + t1 - t0
        try:
            return exact_solution(lp, solution)
        except ExactnessError:
            if solver == "simplex":
                raise
            # The crossover's basis missed by a tolerance: the simplex's own is tried instead.
        finally:
            times["exact"] = times.get("exact", 0.0) + time.perf_counter() - t1
    raise AssertionError("unreachable")


def optimal_throughput(platform: Platform, series: Series) -> Fraction:
    """ρ alone, exact and proven (one linear program, no period or schedule).

    Examples
    --------
    >>> from liquidsched.steady.platform import star
    >>> optimal_throughput(star(4, bandwidth_Bps=1e6), Series("scatter", ("P1", "P2", "P3"), "P0", 10**6))
    Fraction(1, 3)
    """
    return _exact_optimum(build_program(platform, series), {}).objective


def solve_steady(platform: Platform, series: Series, fixed_period_s: Fraction | None = None) -> SteadyState:
    """Solve ``series`` on ``platform``: ρ exact, the period, the trees, the matchings.

    Examples
    --------
    >>> from liquidsched.steady.platform import complete
    >>> p = complete(3, bandwidth_Bps=1e6, speed_flops=1e6)
    >>> s = solve_steady(p, Series("all-to-all", ("P0", "P1", "P2"), message_bytes=10**6))
    >>> s.throughput, s.period.length_s, len(s.decomposition.matchings)
    (Fraction(1, 2), Fraction(2, 1), 2)
    """
    times: dict[str, float] = {}
    t0 = time.perf_counter()
    lp = build_program(platform, series)
    times["build"] = time.perf_counter() - t0
    exact = _exact_optimum(lp, times)
    second = least_busy_program(lp, platform, series, exact.objective)
    least_busy = _exact_optimum(second, times)
    period = period_of(second, least_busy)
    period.sends = cancel_send_cycles(platform, period.sends)
    t0 = time.perf_counter()
    trees = extract_trees(platform, series, period)
    times["trees"] = time.perf_counter() - t0
    fixed = None if fixed_period_s is None else fixed_period(trees, period, Fraction(fixed_period_s))
    if fixed is not None and fixed.operations == 0:
        # A period that completes nothing has no throughput to report or schedule to run.
        raise InputError(f"fixed period {fixed.length_s} s ({float(fixed.length_s):g} s): too short to carry one "
                         f"whole operation (the optimal period is {period.length_s} s for {period.operations} "
                         f"operation{'' if period.operations == 1 else 's'})")
    run = period if fixed is None else fixed.period()
    t0 = time.perf_counter()
    decomposition = decompose(platform, run.edge_bytes(series))
    times["decomposition"] = time.perf_counter() - t0
    return SteadyState(platform, series, lp, exact, period, trees, decomposition, fixed, times)

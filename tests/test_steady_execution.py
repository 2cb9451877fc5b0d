"""Running series of K reduces and scatters with MPI by periodic schedules: every result right,
nothing left behind, here and on an emulated platform."""

from __future__ import annotations

import os
import shutil
from fractions import Fraction as F

import numpy as np
import pytest

from liquidsched.errors import InputError
from liquidsched.execute.steady_worker import PRIME, combine, expected_reduce, value_of
from liquidsched.steady import Series, solve_steady
from liquidsched.steady.baselines import baseline_trees, period_of_trees
from liquidsched.steady.execution import expected_time_s, periodic_run, run_series
from liquidsched.steady.period import decompose
from liquidsched.steady.platform import chain, tiers

needs_root = pytest.mark.skipif(os.geteuid() != 0 or shutil.which("ip") is None or shutil.which("tc") is None,
                                reason="needs root and iproute2")


def test_the_operator_is_a_non_commutative_matrix_product():
    a = value_of(1, (0,), 0, 64, "reduce")
    b = value_of(1, (1,), 0, 64, "reduce")
    # By hand on the first matrix: [[a, b], [c, d]] · [[e, f], [g, h]] mod PRIME.
    x, y = a.view(np.int64)[:4], b.view(np.int64)[:4]
    first = combine(a, b).view(np.int64)[:4]
    assert list(first) == [(x[0] * y[0] + x[1] * y[2]) % PRIME, (x[0] * y[1] + x[1] * y[3]) % PRIME,
                           (x[2] * y[0] + x[3] * y[2]) % PRIME, (x[2] * y[1] + x[3] * y[3]) % PRIME]
    assert not np.array_equal(combine(a, b), combine(b, a))
    c = value_of(1, (2,), 0, 64, "reduce")
    assert np.array_equal(combine(combine(a, b), c), combine(a, combine(b, c)))
    assert np.array_equal(expected_reduce(1, 3, 0, 64), combine(combine(a, b), c))


def _runs(platform, series, fixed=None):
    state = solve_steady(platform, series, fixed)
    base = period_of_trees(platform, series, baseline_trees(platform, series))
    trees = state.fixed.trees if state.fixed else state.trees
    return state, [periodic_run("optimal", trees, state.run_period, state.decomposition),
                   periodic_run("baseline", baseline_trees(platform, series), base,
                                decompose(platform, base.edge_bytes(series)))]


@pytest.mark.parametrize("kind, seed", [("reduce", 1), ("reduce", 4), ("scatter", 2)])
def test_a_series_runs_with_every_result_right(kind, seed):
    p = tiers(8, density=0.5, seed=seed)
    h = p.hosts
    series = (Series("reduce", tuple(h), h[-1], 256, 10**5) if kind == "reduce"
              else Series("scatter", tuple(h[1:]), h[0], 256))
    state, runs = _runs(p, series)
    k = 2 * runs[0].operations_per_period() + 3
    raw = run_series(p, series, runs, k)
    expected = k * (1 if kind == "reduce" else len(h) - 1)
    for name in ("optimal", "baseline", "MPI_Reduce" if kind == "reduce" else "MPI_Scatter"):
        row = raw["runs"][name]
        assert (row["checked_right"], row["expected"]) == (expected, expected), name
        assert row.get("left_over", 0) == 0
    # The run takes the periods the model counts: the batches, then the pipeline's depth − 1.
    assert raw["runs"]["optimal"]["periods"] * runs[0].period_s == expected_time_s(runs[0], p, k)


def test_a_fixed_period_runs_too_and_a_target_outside_the_participants_skips_mpi_reduce():
    p = chain(4, bandwidth_Bps=1e6, speed_flops=1e6)
    series = Series("reduce", ("P0", "P1", "P2"), "P3", 64, 10)
    state, runs = _runs(p, series, F(1, 100))
    raw = run_series(p, series, runs, 7)
    assert set(raw["runs"]) == {"optimal", "baseline"}
    assert all(r["checked_right"] == 7 for r in raw["runs"].values())


def test_what_cannot_run_is_refused():
    p = chain(3)
    with pytest.raises(InputError, match="multiple of 32"):
        run_series(p, Series("reduce", ("P0", "P1"), "P0", 100, 1), [], 1)
    with pytest.raises(InputError, match="all-to-alls"):
        run_series(p, Series("all-to-all", ("P0", "P1")), [], 1)


@needs_root
def test_a_series_of_reduces_on_an_emulated_platform():
    from liquidsched import emulate as em

    p = tiers(7, density=0.75, extra_wan=1, seed=0, rate_scale=0.2)
    h = p.hosts
    series = Series("reduce", tuple(h), h[0], 1024, 10**5)
    state, runs = _runs(p, series)
    with em.Emulation(p.network(), "lsst") as plan:
        raw = run_series(p, series, runs, 12, plan.namespace)
    assert em.existing("lsst") == []
    for row in raw["runs"].values():
        assert row["checked_right"] == row["expected"] == 12


def test_cli_steady_run_checks_every_result(capsys):
    import json

    from liquidsched.cli import main

    code = main(["steady", "reduce", "--topology", "chain:n=3", "--message-bytes", "64", "--task-flops", "1",
                 "--operations", "5", "--run", "--json"])
    report = json.loads(capsys.readouterr().out)
    assert code == 0 and report["run"]["where"] == "local"
    assert set(report["run"]["runs"]) == {"steady state", "binomial tree", "MPI_Reduce"}
    assert all(r["checked_right"] == r["expected"] == 5 for r in report["run"]["runs"].values())
    assert main(["steady", "reduce", "--topology", "chain:n=3", "--task-flops", "1", "--emulate"]) == 2
    assert "--emulate and --prefix apply to --run" in capsys.readouterr().err


def test_run_executes_a_steady_period_file_byte_exact(capsys, tmp_path):
    import json

    from liquidsched.cli import main

    period = tmp_path / "period.json"
    assert main(["steady", "scatter", "--topology", "star:n=4,bandwidth_Bps=1MB/s", "--message-bytes", "4KiB",
                 "--output", str(period), "--json"]) == 0
    capsys.readouterr()
    assert main(["run", "--schedule", str(period), "--modes", "frames,barrier-free", "--repeats", "1",
                 "--warmup", "0", "--json"]) == 0
    report = json.loads(capsys.readouterr().out)
    assert report["schedule_valid"] and all(m["verified"] for m in report["modes"])

"""What every benchmark script shares: its command line, its progress bar, and running cases
each in a process of its own."""

from __future__ import annotations

import argparse
import math
import multiprocessing
import resource
from typing import Any, Callable, Sequence

from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn


def benchmark_parser(doc: str) -> argparse.ArgumentParser:
    """A parser described by the script's first doc line, with ``--output`` (JSON, required)
    and ``--plot`` (PNG)."""
    parser = argparse.ArgumentParser(description=doc.splitlines()[0])
    parser.add_argument("--output", required=True, metavar="FILE.json")
    parser.add_argument("--plot", metavar="FILE.png")
    return parser


def progress_bar(label: str, console: Console | None = None) -> Progress:
    """A transient progress bar on standard error: label, bar, done/total, time elapsed."""
    columns = (TextColumn(label), BarColumn(), MofNCompleteColumn(), TimeElapsedColumn())
    return Progress(*columns, console=console or Console(stderr=True), transient=True)


def run_each_in_own_process(run_case: Callable[[Any], dict[str, Any]], cases: Sequence[Any],
                            console: Console) -> list[dict[str, Any]]:
    """``run_case`` on every case, each in a spawned process of its own, so that a case's peak
    memory (``ru_maxrss``) is its own; with a progress bar."""
    rows = []
    context = multiprocessing.get_context("spawn")
    with progress_bar("networks", console) as progress:
        task = progress.add_task("networks", total=len(cases))
        for case in cases:
            with context.Pool(1) as pool:
                rows.append(pool.apply(run_case, (case,)))
            progress.advance(task)
    return rows


def peak_rss_mb() -> float:
    """Peak resident memory of this process so far, in MB."""
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def power_fit(xs: Sequence[float], ys: Sequence[float]) -> tuple[float, float] | None:
    """The least-squares line through (log x, log y): (slope, intercept), so y ≈ e^b · x^slope;
    None with fewer than two positive points or no spread in x."""
    points = [(math.log(x), math.log(y)) for x, y in zip(xs, ys) if x > 0 and y > 0]
    if len(points) < 2:
        return None
    mx = sum(x for x, _ in points) / len(points)
    my = sum(y for _, y in points) / len(points)
    sxx = sum((x - mx) ** 2 for x, _ in points)
    if not sxx:
        return None
    slope = sum((x - mx) * (y - my) for x, y in points) / sxx
    return slope, my - slope * mx


def growth_exponent(xs: Sequence[float], ys: Sequence[float]) -> float | None:
    """The slope of :func:`power_fit`: y ∝ x^slope."""
    fit = power_fit(xs, ys)
    return None if fit is None else fit[0]


def report_results(rows: list[dict[str, Any]], result: dict[str, Any], console: Console, output: str,
                   plot_path: str | None, plot: Callable[[list[dict[str, Any]], str], None]) -> None:
    """Print the goals, write rows and goals to ``output`` (JSON), and plot when asked."""
    import json

    from liquidsched.io.files import write_document

    console.print(json.dumps(result, indent=1))
    write_document({"rows": rows, "goals": result}, output)
    if plot_path:
        plot(rows, plot_path)

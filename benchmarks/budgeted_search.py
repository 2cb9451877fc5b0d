"""The liquid search under a time budget against DSatur alone, on traffics the search does not settle.

    python benchmarks/budgeted_search.py --output out/budgeted-search.json --plot out/budgeted-search.png   # 3 minutes

When its budget runs out, ``liquid`` returns the deepest partial schedule of its searches (the
symmetric search's or the plain search's) completed by DSatur — or by a first fit when DSatur
would not finish in the time left — or, time permitting, the other one completed or DSatur's
own schedule when that is shorter. The share of the budget kept for that completion is
what DSatur is expected to take on the traffic (15 % of the budget at least, two thirds at
most): with a fixed 15 %, and 4.3 s of the budget spent in Python turning the traffic into
lists before the search began, the half all-to-all of ``torus:dims=8/8/8`` (DSatur 3.9 s) got
983 and 946 frames from budgets of 10 s and 20 s, by first fit, where DSatur alone gives 770
(measured 2026-11-28). With the symmetric search's 512 frames completed (its group's images
composed rather than looked up, 0.8 s instead of 17 s), 10, 20 and 40 s give 703 frames on both
traffics, against DSatur's 770 and 783 (2026-11-28).

Each case runs in a process of its own, on one core as the user runs ``plan --algorithm
liquid --time-limit T``: frames, where the schedule came from (``source``), wall time, and the
frames over DSatur's. Goal: from a budget of 10 s on, no more frames than DSatur alone.
"""

from __future__ import annotations

import time
from typing import Any

from common import benchmark_parser, report_results, run_each_in_own_process
from rich.console import Console
from rich.table import Table

#: One network (the table and the plot are titled by it), two traffics.
CASES = [("torus:dims=8/8/8", "half-all-to-all"), ("torus:dims=8/8/8", "all-to-all")]
BUDGETS_S = (10.0, 20.0, 40.0)
#: From this budget on, the search's schedule should be no longer than DSatur's.
GOAL_FROM_S = 10.0


def run_case(case: tuple[str, str, float | None]) -> dict[str, Any]:
    """Schedule one traffic: by DSatur when the budget is None, else by the liquid search."""
    from liquidsched.schedulers import plan
    from liquidsched.topologies import build_topology
    from liquidsched.traffic import make_traffic

    spec, traffic_name, budget = case
    net = build_topology(spec)
    traffic = make_traffic(net, traffic_name)
    start = time.perf_counter()
    if budget is None:
        schedule = plan(net, traffic, "dsatur")
    else:
        schedule = plan(net, traffic, "liquid", time_limit=budget)
    wall = time.perf_counter() - start
    return {"topology": spec, "traffic": traffic_name, "budget_s": budget, "frames": schedule.length,
            "frame_bound": schedule.bound.frame_lower_bound, "source": schedule.info.stats.get("source", "dsatur"),
            "wall_s": wall}


def dsatur_rows(rows: list[dict[str, Any]]) -> dict[tuple[str, str], dict[str, Any]]:
    """DSatur's row of each (topology, traffic)."""
    return {(r["topology"], r["traffic"]): r for r in rows if r["budget_s"] is None}


def plot_rows(rows: list[dict[str, Any]], path: str) -> None:
    """Frames against the budget for each traffic, DSatur's frames as a line."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    alone = dsatur_rows(rows)
    fig, ax = plt.subplots(figsize=(6, 4))
    for (spec, name), colour in zip(CASES, ("C0", "C1")):
        searched = [r for r in rows if (r["topology"], r["traffic"]) == (spec, name) and r["budget_s"] is not None]
        ax.plot([r["budget_s"] for r in searched], [r["frames"] for r in searched], "o-", color=colour,
                label=f"liquid, {name}")
        ax.axhline(alone[spec, name]["frames"], color=colour, linestyle="--", label=f"DSatur alone, {name}")
    ax.axhline(rows[0]["frame_bound"], color="grey", linestyle=":", label="frame bound")
    ax.set_xlabel("time budget (s)")
    ax.set_ylabel("frames")
    ax.set_title(f"{CASES[0][0]}: the search's schedule under a budget")
    ax.legend(fontsize=8)
    fig.tight_layout()
    fig.savefig(path, dpi=120)


def main() -> None:
    args = benchmark_parser(__doc__).parse_args()
    console = Console()
    if not console.is_terminal:
        # Written to a file or a pipe: wide enough for the table's columns.
        console = Console(width=120)
    cases = [(spec, name, budget) for spec, name in CASES for budget in (None, *BUDGETS_S)]
    rows = run_each_in_own_process(run_case, cases, console)
    table = Table(title=f"{CASES[0][0]}: liquid under a time budget against DSatur alone")
    for column in ("traffic", "budget", "frames", "bound", "over DSatur", "source", "wall"):
        table.add_column(column, no_wrap=True)
    alone = dsatur_rows(rows)
    verdicts = []
    for row in rows:
        dsatur_frames = alone[row["topology"], row["traffic"]]["frames"]
        row["over_dsatur"] = row["frames"] / dsatur_frames
        if row["budget_s"] is not None and row["budget_s"] >= GOAL_FROM_S:
            verdicts.append(row["frames"] <= dsatur_frames)
        budget = "DSatur alone" if row["budget_s"] is None else f"{row['budget_s']:g} s"
        table.add_row(row["traffic"], budget, str(row["frames"]), str(row["frame_bound"]), f"{row['over_dsatur']:.3f}",
                      row["source"], f"{row['wall_s']:.2f} s")
    console.print(table)
    result = {"goal": f"from {GOAL_FROM_S:g} s on, no more frames than DSatur alone", "met": all(verdicts)}
    report_results(rows, result, console, args.output, args.plot, plot_rows)


if __name__ == "__main__":
    main()

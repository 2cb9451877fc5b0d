"""Traffic files of up to a million uneven transfers: `bound` and `plan --algorithm dsatur` as a user runs them.

    python benchmarks/million_transfers.py --output out/million.json --plot out/million.png

On ``fat-tree:k=16`` (1,024 hosts, D-mod-k), CSV files of 125,000 to 1,000,000 transfers between
random hosts, sizes uniform from 1 B to 10 MB (seeded), are written once; then each command runs
in a process of its own, as a user runs it (interpreter start-up, reading, checking, bounding,
scheduling, validating and writing the schedule included): its wall time and peak memory (the
child's ``ru_maxrss``). The plan's own report gives the time DSatur took inside it. Goals (issue
*Real machines at their real size*): at a million transfers, ``bound`` ≤ 3 s and ≤ 500 MB, ``plan
--algorithm dsatur`` ≤ 10 s. Growth exponents of both times with the transfers are fitted too.
"""

from __future__ import annotations

import json
import os
import platform
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import numpy as np
from common import benchmark_parser, growth_exponent, progress_bar
from rich.console import Console
from rich.table import Table

from liquidsched.io.files import write_document
from liquidsched.topologies import build_topology

TOPOLOGY = "fat-tree:k=16"
SIZES = (125_000, 250_000, 500_000, 1_000_000)
GOALS = {"bound_s": 3.0, "bound_mb": 500.0, "plan_s": 10.0}


def write_traffic(path: Path, transfers: int, seed: int = 1) -> None:
    """A CSV of ``transfers`` rows between random distinct hosts of the network."""
    hosts = build_topology(TOPOLOGY).hosts()
    rng = np.random.default_rng(seed)
    src = rng.integers(0, len(hosts), transfers)
    dst = (src + rng.integers(1, len(hosts), transfers)) % len(hosts)
    size = rng.integers(1, 10**7, transfers)
    rows = "".join(f"{hosts[s]},{hosts[d]},{z}\n" for s, d, z in zip(src.tolist(), dst.tolist(), size.tolist()))
    path.write_text("src,dst,size_bytes\n" + rows)


def timed(command: list[str]) -> tuple[float, float, str]:
    """Run ``command``: its wall time, its peak memory in MB and its standard output."""
    start = time.perf_counter()
    with tempfile.TemporaryFile() as out:
        child = subprocess.Popen(command, stdout=out, stderr=subprocess.PIPE)
        _, status, usage = os.wait4(child.pid, 0)
        elapsed = time.perf_counter() - start
        child.returncode = os.waitstatus_to_exitcode(status)
        errors = child.stderr.read().decode()
        child.stderr.close()
        if child.returncode:
            raise SystemExit(f"{' '.join(command)} failed ({child.returncode}): {errors.strip()}")
        out.seek(0)
        return elapsed, usage.ru_maxrss / 1024, out.read().decode()


def measure(traffic: Path, transfers: int, work: Path) -> dict[str, Any]:
    """Both commands on one traffic file."""
    cli = [sys.executable, "-m", "liquidsched.cli"]
    bound_s, bound_mb, _ = timed(cli + ["bound", "--topology", TOPOLOGY, "--traffic", str(traffic), "--json"])
    schedule = work / f"schedule-{transfers}.json"
    plan_s, plan_mb, out = timed(cli + ["plan", "--algorithm", "dsatur", "--topology", TOPOLOGY, "--traffic",
                                        str(traffic), "--output", str(schedule), "--json"])
    summary = json.loads(out)
    return {"transfers": transfers, "bound_s": bound_s, "bound_mb": bound_mb, "plan_s": plan_s, "plan_mb": plan_mb,
            "dsatur_s": summary["time_s"], "frames": summary["length"], "frame_bound": summary["lower_bound"],
            "schedule_mb": schedule.stat().st_size / 1e6}


def plot(rows: list[dict[str, Any]], path: str) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(6.4, 4.2))
    n = [r["transfers"] for r in rows]
    for key, label in (("bound_s", "bound (command)"), ("plan_s", "plan --algorithm dsatur (command)"),
                       ("dsatur_s", "DSatur inside plan")):
        ax.plot(n, [r[key] for r in rows], marker="o", label=label)
    ax.axhline(GOALS["bound_s"], color="grey", linestyle=":", label="goals at 10⁶: bound 3 s, plan 10 s")
    ax.axhline(GOALS["plan_s"], color="grey", linestyle=":")
    ax.set(xscale="log", yscale="log", xlabel="transfers (uneven sizes, fat-tree:k=16)", ylabel="seconds",
           title="Traffic files of up to a million transfers")
    ax.legend(fontsize=8)
    fig.tight_layout()
    fig.savefig(path, dpi=120)


def main() -> None:
    parser = benchmark_parser(__doc__)
    parser.add_argument("--sizes", type=lambda s: [int(x) for x in s.split(",")], default=list(SIZES),
                        help="transfers per file, comma-separated")
    args = parser.parse_args()
    console = Console(stderr=True)
    rows = []
    with tempfile.TemporaryDirectory() as tmp, progress_bar("traffic files", console) as progress:
        task = progress.add_task("files", total=len(args.sizes))
        for transfers in args.sizes:
            traffic = Path(tmp) / f"traffic-{transfers}.csv"
            write_traffic(traffic, transfers)
            rows.append(measure(traffic, transfers, Path(tmp)))
            progress.advance(task)
    table = Table(title=f"{TOPOLOGY}: traffic files of uneven transfers, each command in its own process")
    for column in ("transfers", "bound", "bound memory", "plan dsatur", "of which DSatur", "plan memory",
                   "frames (bound)", "schedule file"):
        table.add_column(column, justify="right")
    for r in rows:
        table.add_row(f"{r['transfers']:,}", f"{r['bound_s']:.2f} s", f"{r['bound_mb']:.0f} MB", f"{r['plan_s']:.2f} s",
                      f"{r['dsatur_s']:.2f} s", f"{r['plan_mb']:.0f} MB", f"{r['frames']:,} ({r['frame_bound']:,})",
                      f"{r['schedule_mb']:.0f} MB")
    Console(width=140).print(table)
    largest = max(rows, key=lambda r: r["transfers"])
    n = [r["transfers"] for r in rows]
    goals = {"at_transfers": largest["transfers"],
             "bound_s": largest["bound_s"], "bound_s_goal": GOALS["bound_s"],
             "bound_mb": largest["bound_mb"], "bound_mb_goal": GOALS["bound_mb"],
             "plan_s": largest["plan_s"], "plan_s_goal": GOALS["plan_s"],
             "met": {"bound_s": largest["bound_s"] <= GOALS["bound_s"], "bound_mb": largest["bound_mb"] <= GOALS["bound_mb"],
                     "plan_s": largest["plan_s"] <= GOALS["plan_s"]},
             "growth": {key: growth_exponent(n, [r[key] for r in rows]) for key in ("bound_s", "plan_s", "dsatur_s")},
             "machine": platform.platform(), "cpus": os.cpu_count()}
    console.print(json.dumps(goals, indent=1))
    write_document({"rows": rows, "goals": goals}, args.output)
    if args.plot:
        plot(rows, args.plot)


if __name__ == "__main__":
    main()

"""Time from Ctrl-C to exit for each long-running family, and what the core's interrupt probe costs.

    python benchmarks/interrupt_latency.py --output out/interrupt-latency.json
    python benchmarks/interrupt_latency.py --runs 5 --output out/interrupt-latency.json

Latency: each command of ``tests/test_interrupt.py`` (the liquid search, the core's weighted
steps, OGGP's peeling, CP-SAT, a steady program solved by HiGHS, the simulator on a big
schedule) is started, sent SIGINT once it has used the CPU seconds after which its long
computation runs, and timed from the signal to its exit (status 130 expected), ``--runs`` times;
the table shows the median and the slowest. The issue's target is 0.5 s. The exit itself
(Python's teardown, unloading OR-Tools) is part of what the user waits for, so it is counted.

Probe cost: the liquid search of two traffics, one of large levels on a worker thread
(fat-tree:k=10 all-to-all, probed at every level and by the waiting thread every 10 ms) and one
of small levels and many nodes inline (torus all-to-all 20 times over, probed every 4,096 nodes),
with and without the probe (``_core.liquid_schedule(..., interruptible=False)``), taking turns;
the ratio of the fastest runs, in processor time. The issue's bound is about 2 %.
"""

from __future__ import annotations

import json
import os
import signal
import statistics
import subprocess
import sys
import time
from pathlib import Path

from common import benchmark_parser
from rich.console import Console
from rich.table import Table

LIQUIDSCHED = str(Path(sys.executable).with_name("liquidsched"))

#: (family, argv after the program name, CPU seconds after which its long computation runs).
FAMILIES = [
    ("liquid search", ["plan", "--topology", "mesh:dims=10/10", "--traffic", "all-to-all", "--algorithm", "liquid"],
     5.0),
    ("weighted steps", ["plan", "--topology", "fat-tree:k=10", "--traffic", "random:seed=1,density=0.7",
                        "--algorithm", "weighted"], 5.0),
    ("OGGP peeling", ["plan", "--topology", "backbone:n1=400,n2=400", "--traffic", "random:seed=1,density=0.7",
                      "--algorithm", "oggp"], 6.0),
    ("CP-SAT", ["plan", "--topology", "fat-tree:k=6", "--traffic", "all-to-all", "--algorithm", "cpsat"], 8.0),
    ("steady (HiGHS)", ["steady", "reduce", "--topology", "complete:n=16", "--task-flops", "1e9"], 3.0),
    ("simulator", ["simulate", "--schedule", "{schedule}", "--policy", "all-at-once"], 3.0),
]


def cpu_seconds(pid: int) -> float:
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def latency(argv: list[str], cpu_s: float) -> tuple[float, int]:
    """Seconds from SIGINT to exit, and the exit status."""
    p = subprocess.Popen([LIQUIDSCHED, *argv], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    while cpu_seconds(p.pid) < cpu_s:
        if p.poll() is not None:
            raise RuntimeError(f"{argv} ended before the signal")
        time.sleep(0.02)
    sent = time.monotonic()
    p.send_signal(signal.SIGINT)
    # Polled every 2 ms: Popen.wait with a timeout polls every 50 ms, too coarse for this.
    while (status := p.poll()) is None:
        if time.monotonic() - sent > 120:
            p.kill()
            raise RuntimeError(f"{argv} did not end within 120 s of SIGINT")
        time.sleep(0.002)
    return time.monotonic() - sent, status


def probe_cost(runs: int) -> list[dict]:
    from liquidsched import _core, all_to_all, build_topology

    rows = []
    for name, spec, repeat in (("fat-tree:k=10 (large levels, worker thread)", "fat-tree:k=10", 1),
                               ("torus x 20 (many nodes, inline)", "torus", 20)):
        net = build_topology(spec)
        paths = all_to_all(net).resource_lists(net)
        times: dict[bool, list[float]] = {False: [], True: []}
        for _ in range(runs):
            for probed in (False, True):
                # Processor time (every thread of this process): on a machine busy with other
                # work, the wall clock also counts the time the search waited for a core.
                start = time.process_time()
                for _ in range(repeat):
                    r = _core.liquid_schedule(paths, len(net.resources), slots=net.resource_slots,
                                              interruptible=probed)
                times[probed].append(time.process_time() - start)
        rows.append({"traffic": name, "transfers": len(paths), "nodes": r["nodes"],
                     "without_s": min(times[False]), "with_s": min(times[True]),
                     "ratio": min(times[True]) / min(times[False]),
                     "all_without_s": times[False], "all_with_s": times[True]})
    return rows


def main() -> None:
    parser = benchmark_parser(__doc__)
    parser.add_argument("--runs", type=int, default=3, help="runs of each command (default 3)")
    parser.add_argument("--skip-latency", action="store_true")
    args = parser.parse_args()
    console = Console()
    out: dict = {"runs": args.runs, "latency": [], "probe_cost": []}
    if not args.skip_latency:
        schedule = Path(args.output).with_name("interrupt-big-schedule.json")
        # fat-tree:k=12's all-to-all: the simulator runs for seconds after the file is read.
        subprocess.run([LIQUIDSCHED, "plan", "--topology", "fat-tree:k=12", "--traffic", "all-to-all",
                        "--algorithm", "round-robin", "--output", str(schedule)], check=True,
                       stdout=subprocess.DEVNULL)
        table = Table(title=f"SIGINT to exit ({args.runs} runs each)")
        for column in ("family", "median", "slowest", "statuses"):
            table.add_column(column)
        for family, argv, cpu_s in FAMILIES:
            argv = [a.replace("{schedule}", str(schedule)) for a in argv]
            measured = [latency(argv, cpu_s) for _ in range(args.runs)]
            seconds = [s for s, _ in measured]
            statuses = sorted({st for _, st in measured})
            out["latency"].append({"family": family, "argv": argv, "cpu_s_before_signal": cpu_s,
                                   "seconds": seconds, "median_s": statistics.median(seconds),
                                   "statuses": statuses})
            table.add_row(family, f"{statistics.median(seconds):.3f} s", f"{max(seconds):.3f} s",
                          ", ".join(map(str, statuses)))
        console.print(table)
    out["probe_cost"] = probe_cost(args.runs)
    table = Table(title="liquid search with and without the interrupt probe (fastest of each, CPU time)")
    for column in ("traffic", "transfers", "nodes", "without", "with", "ratio"):
        table.add_column(column)
    for row in out["probe_cost"]:
        table.add_row(row["traffic"], f"{row['transfers']:,}", f"{row['nodes']:,}", f"{row['without_s']:.3f} s",
                      f"{row['with_s']:.3f} s", f"{row['ratio']:.4f}")
    console.print(table)
    out["load_average"] = os.getloadavg()
    Path(args.output).parent.mkdir(parents=True, exist_ok=True)
    Path(args.output).write_text(json.dumps(out, indent=2))


if __name__ == "__main__":
    main()

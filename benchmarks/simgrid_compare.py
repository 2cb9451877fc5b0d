"""The fluid model against SimGrid (CM02): agreement and speed on the same flow sets.

    python benchmarks/simgrid_compare.py --output out/simgrid-compare.json --plot out/simgrid-compare.png

Cases: the 60 random flow sets of the agreement test (random topologies with shared-duplex and
split-duplex links, mixed capacities and latencies, all three start policies), and larger ones:
the full swiss-t1 half all-to-all and all-to-alls on a fat tree and a random network. Each case is
simulated by the core (median of ``--repeat`` runs) and by SimGrid. Times compared are the
simulations themselves: the core's call, and SimGrid's engine run (process start and platform
loading excluded, and reported apart). Run it pinned to one core (``taskset -c 0``) for one-core
figures.
"""

from __future__ import annotations

import statistics
import sys
from pathlib import Path

from common import benchmark_parser, progress_bar
from rich.console import Console
from rich.table import Table

from liquidsched import plan
from liquidsched.io.files import write_document
from liquidsched.simulate import simulate
from liquidsched.simgrid import simgrid_available
from liquidsched.topologies import build_topology
from liquidsched.traffic import all_to_all, half_all_to_all

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
from tests.test_simgrid import random_case  # noqa: E402  (the agreement test's own cases)

LARGE = (
    ("swiss-t1 half all-to-all", "swiss-t1", half_all_to_all, "round-robin", "all-at-once"),
    ("swiss-t1 half all-to-all", "swiss-t1", half_all_to_all, "round-robin", "per-sender"),
    ("fat-tree k=4 all-to-all", "fat-tree:k=4,oversubscription=2", all_to_all, "round-robin", "all-at-once"),
    ("random 64 hosts all-to-all", "random:switches=16,hosts=64,extra_cables=8,seed=1", all_to_all, "dsatur",
     "all-at-once"),
    ("random 64 hosts all-to-all", "random:switches=16,hosts=64,extra_cables=8,seed=1", all_to_all, "dsatur",
     "frames"),
)


def cases(random_cases: int):
    for seed in range(random_cases):
        schedule, policy, overhead = random_case(seed)
        yield f"random case {seed}", schedule, policy, overhead
    for label, spec, traffic_of, algorithm, policy in LARGE:
        net = build_topology(spec)
        yield label, plan(net, traffic_of(net), algorithm), policy, 0.0


def compare(label: str, schedule, policy: str, overhead: float, repeat: int) -> dict:
    ours = [simulate(schedule, "fluid", policy, overhead) for _ in range(repeat)]
    theirs = simulate(schedule, "fluid", policy, overhead, backend="simgrid")
    makespan = ours[0].makespan_s
    worst = max(abs(a - b) for a, b in zip(ours[0].finish_s, theirs.finish_s))
    rust_s = statistics.median(p.wall_s for p in ours)
    return {"case": label, "policy": policy, "flows": len(ours[0].finish_s), "makespan_s": makespan,
            "simgrid_makespan_s": theirs.makespan_s,
            "relative_difference": abs(makespan - theirs.makespan_s) / theirs.makespan_s,
            "worst_finish_difference": worst / makespan, "rust_s": rust_s, "simgrid_s": theirs.wall_s,
            "speedup": theirs.wall_s / rust_s}


def plot(records: list[dict], path: str) -> None:
    from liquidsched.plot import _save, plt

    fig, (left, right) = plt.subplots(1, 2, figsize=(12, 4.8))
    flows = [r["flows"] for r in records]
    left.loglog(flows, [r["simgrid_s"] for r in records], "o", ms=4, color="tab:orange", label="SimGrid CM02 (engine run)")
    left.loglog(flows, [r["rust_s"] for r in records], "o", ms=4, color="tab:blue", label="liquidsched fluid (core)")
    left.set_xlabel("flows")
    left.set_ylabel("simulation time (s)")
    left.set_title("time to simulate the same flows")
    left.grid(alpha=0.3, which="both")
    left.legend()
    diffs = [max(r["relative_difference"], 1e-17) for r in records]
    right.semilogy(range(len(records)), diffs, "o", ms=4, color="black")
    right.axhline(1e-6, color="tab:red", lw=1, label="tolerance 1e-6")
    right.set_xlabel("case")
    right.set_ylabel("relative makespan difference (0 drawn at 1e-17)")
    right.set_title("agreement with SimGrid")
    right.grid(alpha=0.3, which="both")
    right.legend()
    fig.tight_layout()
    _save(fig, path)


def main() -> None:
    parser = benchmark_parser(__doc__)
    parser.add_argument("--random-cases", type=int, default=60)
    parser.add_argument("--repeat", type=int, default=3, help="runs of the core per case (median)")
    args = parser.parse_args()
    if not simgrid_available():
        raise SystemExit("SimGrid is not installed: apt-get install python3-simgrid")
    todo = list(cases(args.random_cases))
    records = []
    with progress_bar("cases") as progress:
        for label, schedule, policy, overhead in progress.track(todo):
            records.append(compare(label, schedule, policy, overhead, args.repeat))
    small = [r for r in records if r["case"].startswith("random case")]
    large = [r for r in records if not r["case"].startswith("random case")]
    table = Table("case", "policy", "flows", "rel. makespan diff", "core", "SimGrid", "SimGrid / core",
                  title="fluid model against SimGrid CM02")
    table.add_row(f"{len(small)} random cases (median)", "all three",
                  str(statistics.median(r["flows"] for r in small)),
                  f"max {max(r['relative_difference'] for r in small):.1e}",
                  f"{statistics.median(r['rust_s'] for r in small) * 1e3:.3f} ms",
                  f"{statistics.median(r['simgrid_s'] for r in small) * 1e3:.2f} ms",
                  f"{statistics.median(r['speedup'] for r in small):.0f}×")
    for r in large:
        table.add_row(r["case"], r["policy"], str(r["flows"]), f"{r['relative_difference']:.1e}",
                      f"{r['rust_s'] * 1e3:.2f} ms", f"{r['simgrid_s'] * 1e3:.1f} ms", f"{r['speedup']:.0f}×")
    Console(width=150).print(table)
    summary = {"random_cases": len(small),
               "max_relative_difference": max(r["relative_difference"] for r in records),
               "max_worst_finish_difference": max(r["worst_finish_difference"] for r in records),
               "median_speedup_random": statistics.median(r["speedup"] for r in small),
               "speedup_large": {f"{r['case']} ({r['policy']})": r["speedup"] for r in large}}
    write_document({"benchmark": "simgrid_compare", "summary": summary, "cases": records}, args.output)
    if args.plot:
        plot(records, args.plot)


if __name__ == "__main__":
    main()

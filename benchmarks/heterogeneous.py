"""Schedules on heterogeneous networks: links that carry several transfers at once (slots).

    python benchmarks/heterogeneous.py --output out/heterogeneous.json --plot out/heterogeneous.png [--skip-large]

For each network and traffic: Λ (the fluid bound), the frame bound (frames and their least time
in the slot model, and the share of the liquid throughput it allows), then the liquid search
(frames, time in the frames model, ratio to the liquid throughput, proof, search time and peak
memory of its process), DSatur, round-robin, and the fluid model's prediction for every transfer
sent at once (TCP-like fair sharing). Each case runs in a fresh process pinned to one CPU, so
times are one-core times and the peak memory is the case's own.
"""

from __future__ import annotations

import os
import platform
import time
from typing import Any

from common import benchmark_parser, peak_rss_mb, run_each_in_own_process
from rich.console import Console
from rich.table import Table

#: (label, topology, traffic, large): the 4 × 2 hierarchies, paper 002's four clusters with shared
#: 103 MB/s uplinks, paper 004's backbone, fat trees, and a random network with uneven sizes.
CASES = [
    ("4x2, 1 Gbit/s uplinks", "hierarchical:d1=4,d2=2", "all-to-all", False),
    ("4x2, 200 Mbit/s uplinks (2:1)", "hierarchical:d1=4,d2=2,c2=200Mbit/s", "all-to-all", False),
    ("4x2, 400 Mbit/s uplinks", "hierarchical:d1=4,d2=2,c2=400Mbit/s", "all-to-all", False),
    ("paper 002, 8x2", "hierarchical:d1=8,d2=2,c2=103MB/s,shared_uplinks=true", "all-to-all", False),
    ("paper 002, 8x3", "hierarchical:d1=8,d2=3,c2=103MB/s,shared_uplinks=true", "all-to-all", False),
    ("paper 002, 6x4", "hierarchical:d1=6,d2=4,c2=103MB/s,shared_uplinks=true", "all-to-all", False),
    ("paper 002, 8x4", "hierarchical:d1=8,d2=4,c2=103MB/s,shared_uplinks=true", "all-to-all", False),
    ("paper 004 backbone, k=5", "backbone", "all-to-all", False),
    ("random, uneven sizes", "random:switches=6,hosts=12,seed=4", "random:seed=4,density=0.6", False),
    ("fat-tree k=8, 2:1", "fat-tree:k=8,oversubscription=2", "all-to-all", False),
    ("fat-tree k=12", "fat-tree:k=12", "all-to-all", True),
]

#: Time budget of the liquid search, and the largest traffic the Python-side baselines and the
#: fluid prediction are run on.
TIME_LIMIT_S = 120.0
BASELINE_MAX_TRANSFERS = 20_000


def run_case(case: tuple[str, str, str, bool]) -> dict[str, Any]:
    """One network in a fresh process: bound, liquid search, DSatur, round-robin, fluid."""
    if hasattr(os, "sched_setaffinity"):
        os.sched_setaffinity(0, {sorted(os.sched_getaffinity(0))[0]})
    from liquidsched import compute_bound, plan, validate
    from liquidsched.simulate import simulate
    from liquidsched.topologies import build_topology
    from liquidsched.traffic import make_traffic

    label, spec, traffic_spec, _ = case
    net = build_topology(spec)
    traffic = make_traffic(net, traffic_spec)
    bound = compute_bound(net, traffic)
    row: dict[str, Any] = {
        "network": label, "topology": spec, "traffic": traffic_spec, "transfers": len(traffic),
        "duration_s": float(bound.duration_s), "liquid_throughput_Bps": float(bound.liquid_throughput_Bps),
        "frame_bound": bound.frame_lower_bound, "frame_bound_time_s": float(bound.frame_bound_time_s),
        "frame_bound_ratio": float(bound.frame_bound_ratio),
        "slots": sorted({k for k in bound.slots.values() if k != 1}),
    }
    rss_before = peak_rss_mb()
    start = time.perf_counter()
    schedule = plan(net, traffic, "liquid", time_limit=TIME_LIMIT_S)
    seconds = time.perf_counter() - start
    if validate(schedule):
        raise RuntimeError(f"the liquid schedule of {spec} is invalid")
    summary = schedule.summary()
    row["liquid"] = {"frames": schedule.length, "time_s": summary["makespan_s"], "ratio": summary["ratio_to_bound"],
                     "liquid": summary["liquid"], "optimal": bool(schedule.info.optimal),
                     "time_optimal": summary["time_optimal"], "search_s": seconds,
                     "nodes": schedule.info.stats["nodes_explored"], "stopped_by": schedule.info.stats["stopped_by"],
                     "rss_before_mb": rss_before, "peak_rss_mb": peak_rss_mb()}
    for algorithm in ("dsatur", "round-robin"):
        if algorithm == "round-robin" and len(traffic) > BASELINE_MAX_TRANSFERS:
            continue
        s = plan(net, traffic, algorithm)
        if validate(s):
            raise RuntimeError(f"the {algorithm} schedule of {spec} is invalid")
        sm = s.summary()
        row[algorithm] = {"frames": s.length, "time_s": sm["makespan_s"], "ratio": sm["ratio_to_bound"]}
    if len(traffic) <= BASELINE_MAX_TRANSFERS:
        fluid = simulate(schedule, "fluid", "all-at-once")
        row["fluid_all_at_once"] = {"time_s": fluid.makespan_s, "ratio": fluid.ratio_to_bound}
    return row


def _ratio(entry: dict | None) -> str:
    return "-" if entry is None else f"{entry['ratio']:.1%}"


def print_table(rows: list[dict], console: Console) -> None:
    t = Table("network", "transfers", "slots", "Λ", "frame bound", "liquid", "liquid time", "proven", "search",
              "peak", "DSatur", "round-robin", "all at once (fluid)",
              title="heterogeneous networks: frames in the slot model against the liquid throughput (one core)")
    for r in rows:
        lq = r["liquid"]
        proof = ("fewest frames" if lq["optimal"] else "no") + (", least time" if lq["time_optimal"] else "")
        t.add_row(r["network"], f"{r['transfers']:,}", ",".join(map(str, r["slots"])) or "1",
                  f"{r['duration_s'] * 1e3:.1f} ms",
                  f"{r['frame_bound']} ({r['frame_bound_ratio']:.1%})",
                  f"{lq['frames']}", f"{lq['time_s'] * 1e3:.1f} ms ({lq['ratio']:.1%})", proof,
                  f"{lq['search_s']:.2f} s", f"{lq['peak_rss_mb']:.0f} MB",
                  f"{r['dsatur']['frames']} ({_ratio(r['dsatur'])})",
                  "-" if "round-robin" not in r else f"{r['round-robin']['frames']} ({_ratio(r['round-robin'])})",
                  _ratio(r.get("fluid_all_at_once")))
    console.print(t)


def plot(rows: list[dict], path: str) -> None:
    from liquidsched.plot import _save, plt

    fig, ax = plt.subplots(figsize=(12, 5))
    x = range(len(rows))
    series = [("liquid", "tab:blue", "liquid search"), ("dsatur", "tab:green", "DSatur"),
              ("round-robin", "tab:orange", "round-robin"), ("fluid_all_at_once", "tab:gray", "all at once (fluid)")]
    width = 0.2
    for k, (key, colour, label) in enumerate(series):
        ax.bar([i + (k - 1.5) * width for i in x], [r[key]["ratio"] if key in r else 0 for r in rows], width,
               color=colour, label=label)
    ax.plot(list(x), [r["frame_bound_ratio"] for r in rows], "k_", ms=22, mew=2, label="slot-model limit")
    ax.set_xticks(list(x), [r["network"] for r in rows], rotation=30, ha="right", fontsize=8)
    ax.set_ylabel("share of the liquid throughput")
    ax.set_ylim(0, 1.05)
    ax.grid(axis="y", alpha=0.3)
    ax.legend(loc="upper center", bbox_to_anchor=(0.5, -0.32), ncol=5, fontsize=8)
    ax.set_title("each schedule's time against Λ (schedules: frames model; all at once: fluid model); "
                 "no bar: not run at that size")
    fig.tight_layout()
    _save(fig, path)


def main() -> None:
    from liquidsched.io.files import write_document

    parser = benchmark_parser(__doc__)
    parser.add_argument("--skip-large", action="store_true", help="leave out fat-tree k=12 (186,192 transfers)")
    args = parser.parse_args()
    console = Console(width=200)
    cases = [c for c in CASES if not (args.skip_large and c[3])]
    rows = run_each_in_own_process(run_case, cases, Console(stderr=True))
    print_table(rows, console)
    write_document({"benchmark": "heterogeneous", "machine": platform.processor() or platform.machine(),
                    "time_limit_s": TIME_LIMIT_S, "rows": rows}, args.output)
    if args.plot:
        plot(rows, args.plot)


if __name__ == "__main__":
    main()

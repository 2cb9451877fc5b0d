"""Predicted round-robin throughput on every Swiss-T1 class representative, against the liquid
throughput (in the style of paper 000 Fig. 12 / paper 001 Fig. 9).

    python benchmarks/predict_t1.py --output out/predict-t1.json --plot out/predict-t1.png

Round-robin is predicted in the circuit model (a transfer holds its whole path) and in the fluid
model (max-min sharing, each sender in schedule order without barriers, and all at once).
"""

from __future__ import annotations

import statistics
import time

from common import benchmark_parser, progress_bar
from rich.console import Console
from rich.table import Table

from liquidsched import compute_bound, plan
from liquidsched.io.files import write_document
from liquidsched.simulate import simulate
from liquidsched.sweep import run_sweep
from liquidsched.topologies import build_topology
from liquidsched.traffic import half_all_to_all

#: (label, model, policy) of each prediction of the round-robin schedule.
PREDICTIONS = (("circuit", "circuit", "all-at-once"), ("fluid per-sender", "fluid", "per-sender"),
               ("fluid all-at-once", "fluid", "all-at-once"))


def predict_class(allocation: list[int]) -> dict:
    net = build_topology("swiss-t1:allocation=" + "/".join(map(str, allocation)))
    traffic = half_all_to_all(net)
    rr = plan(net, traffic, "round-robin")
    record = {"allocation": allocation, "hosts": sum(allocation),
              "liquid_throughput_Bps": float(compute_bound(net, traffic).liquid_throughput_Bps)}
    for label, model, policy in PREDICTIONS:
        start = time.perf_counter()
        p = simulate(rr, model, policy)
        record[label] = {"throughput_Bps": p.throughput_Bps, "ratio_to_bound": p.ratio_to_bound,
                         "time_s": time.perf_counter() - start}
    return record


def plot(records: list[dict], path: str) -> None:
    from liquidsched.plot import _save, plt

    x = range(len(records))
    fig, ax = plt.subplots(figsize=(11, 5))
    ax.plot(x, [r["liquid_throughput_Bps"] / 1e6 for r in records], color="0.5", lw=1.5, label="liquid throughput")
    for (label, _, _), colour in zip(PREDICTIONS, ("black", "tab:orange", "tab:blue")):
        ax.plot(x, [r[label]["throughput_Bps"] / 1e6 for r in records], ".", ms=3, color=colour,
                label=f"round-robin, {label} model")
    ax.set_xlabel("sub-topology classes, by number of hosts then liquid throughput")
    ax.set_ylabel("throughput (MB/s)")
    ax.set_title("swiss-t1: predicted round-robin throughput against the liquid throughput")
    ax.grid(alpha=0.3)
    ax.legend(loc="upper left")
    fig.tight_layout()
    _save(fig, path)


def main() -> None:
    parser = benchmark_parser(__doc__)
    args = parser.parse_args()
    classes = run_sweep(build_topology("swiss-t1")).classes
    records = []
    with progress_bar("classes") as progress:
        for c in progress.track(classes):
            records.append(predict_class(list(c.allocation)))
    table = Table("round-robin model", "median ratio to liquid", "min", "max", "median time",
                  title=f"swiss-t1: {len(records)} class representatives")
    summary = {}
    for label, _, _ in PREDICTIONS:
        ratios = [r[label]["ratio_to_bound"] for r in records]
        times = [r[label]["time_s"] for r in records]
        summary[label] = {"median_ratio": statistics.median(ratios), "min_ratio": min(ratios),
                          "max_ratio": max(ratios), "median_time_s": statistics.median(times)}
        s = summary[label]
        table.add_row(label, f"{s['median_ratio']:.1%}", f"{s['min_ratio']:.1%}", f"{s['max_ratio']:.1%}",
                      f"{s['median_time_s'] * 1e3:.2f} ms")
    Console().print(table)
    write_document({"benchmark": "predict_t1", "summary": summary, "classes": records}, args.output)
    if args.plot:
        plot(records, args.plot)


if __name__ == "__main__":
    main()

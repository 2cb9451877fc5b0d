"""Is the exchange faster when it runs? Every mode of liquidsched and the MPI library's own
collective, measured in the same emulated network, in both buffer regimes, against the liquid
throughput and beside the model's prediction. Needs root (network namespaces, tc).

    python benchmarks/win_when_run.py --repeats 7 --output out/win-when-run.json --plot out/win-when-run.png

The networks are those of ``emulated_networks.py`` (the backbone's all-to-all is of an eighth of
``--size``).

For each network and regime (``deep``, ``shallow``: :mod:`liquidsched.emulate.shaping`), the
schedule (the liquid search's; OGGP's with β = 10 ms on the backbone) runs frame by frame,
dependency-driven and paced, every send posted at once, and as ``MPI_Alltoallv``; one TCP
flow's efficiency is measured first in the same network, and that of flows through a bottleneck
both ways at once, as many each way as fill it ("2 ways": each direction then also carries the
other's acknowledgements, as every bottleneck of an all-to-all does; not a goal, the reference
the paced mode's headroom is set against). The **selected** mode of a cell is what
``liquidsched tune``'s rule (:func:`liquidsched.execute.selection.best_mode`) picks from these
same measurements. The goals of the *Win when run* issue are checked and printed: the selected
mode ≥ 95 % of the liquid throughput with the deep buffers, never more than 1 point below the
better of all at once and ``MPI_Alltoallv``, and ≥ 10 points above it wherever that one is
below 85 %.

Then, unless ``--no-c-benchmark``, the C benchmark of ``pmpi_versus_mpich.py`` on the same
networks (those with an all-to-all of every host) and regimes, options prefixed ``--c-``: MPICH's
time over the interposition library's per size with a tuned table, and the cost without emulation
or table; in the same JSON (``c_benchmark``) and a second plot beside ``--plot`` (time per size
and strategy, log scale: ``NAME-c-benchmark.png``).
"""

from __future__ import annotations

import statistics
from pathlib import Path

import pmpi_versus_mpich
from common import benchmark_parser, progress_bar
from emulated_networks import MB, NETWORKS, REGIMES, add_network_options, chosen_networks
from rich.console import Console
from rich.table import Table

from liquidsched import build_topology, plan
from liquidsched.bounds import compute_bound
from liquidsched.emulate import Emulation, opposing_flows_check, single_flow_check
from liquidsched.execute import network_schedule, predict_mode, run_exchange
from liquidsched.execute.selection import best_mode
from liquidsched.io.files import write_document
from liquidsched.units import parse_size

MODES = ("frames", "dependency-driven", "paced", "all-at-once", "alltoallv")


def schedule_of(topology: str, traffic_of, algorithm: str, size_bytes: int):
    net = build_topology(topology)
    traffic = traffic_of(net, size_bytes=size_bytes)
    options = {"overhead_s": 0.01} if algorithm == "oggp" else {"time_limit": 10}
    return plan(net, traffic, algorithm, **options)


def measure_cell(schedule, regime: str, repeats: int, prefix: str, time_scale: float, tcp: str = "tuned") -> dict:
    """Every mode in one emulated network of ``regime`` whose hosts' TCP is ``tcp``, one TCP
    flow first."""
    net = schedule.network
    with Emulation(net, prefix, buffers=regime, time_scale=time_scale, tcp=tcp) as emu:
        senders = [h for h in net.hosts() if net.nodes[h].sends]
        receivers = [h for h in net.hosts() if net.nodes[h].receives and h != senders[0]]
        flow = single_flow_check(emu, senders[0], receivers[-1], seconds=0.5)
        opposing = next(filter(None, (opposing_flows_check(emu, link, seconds=1.0) for link in bottlenecks(schedule))),
                        None)
        result = run_exchange(schedule, list(MODES), repeats=repeats, warmup=1, verify=True,
                              namespaces=emu.namespace, seed=1, time_scale=time_scale)
    modes = {}
    for m in result.modes:
        prediction = predict_mode(schedule, m.mode)
        modes[m.mode] = {"times_s": m.times_s, "median_s": m.median_s,
                         "spread": (max(m.times_s) - min(m.times_s)) / m.median_s,
                         "ratio_to_bound": m.ratio_to_bound, "verified": m.verified,
                         "predicted_ratio": None if prediction is None else prediction.ratio_to_bound}
    selected = best_mode({k: v["median_s"] for k, v in modes.items()})
    return {"regime": regime, "tcp": tcp, "single_flow_ratio": flow["ratio"], "opposing_flows": opposing,
            "opposing_flows_ratio": None if opposing is None else opposing["ratio"], "modes": modes,
            "selected": selected}


def bottlenecks(schedule) -> list[str]:
    """The bottlenecks of the transfers that cross the network, then every other resource they
    use, most loaded first (a bottleneck that no flows can fill both ways gives way to the next)."""
    crossing = network_schedule(schedule)
    bound = compute_bound(schedule.network, crossing.traffic)
    return sorted(bound.loads_s, key=lambda r: -bound.loads_s[r])


def goals(cell: dict) -> dict:
    """The issue's goals for one cell."""
    modes = cell["modes"]
    chosen = modes[cell["selected"]]["ratio_to_bound"]
    better = max(modes["all-at-once"]["ratio_to_bound"], modes["alltoallv"]["ratio_to_bound"])
    out = {"selected_ratio": chosen, "better_of_all_at_once_and_alltoallv": better,
           "never_1_point_below": chosen >= better - 0.01}
    if cell["regime"] == "deep":
        out["at_least_95"] = chosen >= 0.95
        out["within_3_points_of_a_single_flow"] = chosen >= cell["single_flow_ratio"] - 0.03
    if better < 0.85:
        out["10_points_ahead"] = chosen >= better + 0.10
    return out


def plot(records: list[dict], path: str) -> None:
    from liquidsched.plot import _save, plt

    fig, axes = plt.subplots(1, len(REGIMES), figsize=(6.5 * len(REGIMES), 4.8), sharey=True, squeeze=False)
    for ax, regime in zip(axes[0], REGIMES):
        cells = [(r["network"], c) for r in records for c in r["cells"] if c["regime"] == regime]
        width = 0.8 / (len(MODES) + 1)
        for k, mode in enumerate([*MODES, "selected"]):
            xs = [n + k * width for n in range(len(cells))]
            ys = [c["modes"][c["selected"] if mode == "selected" else mode]["ratio_to_bound"] for _, c in cells]
            ax.bar(xs, ys, width, label=mode, edgecolor="black" if mode == "selected" else None)
        ax.axhline(0.95, color="0.3", ls="--", lw=1)
        ax.set_xticks([n + 0.4 - width / 2 for n in range(len(cells))], [name for name, _ in cells], rotation=25,
                      ha="right", fontsize=8)
        ax.set_title(f"{regime} buffers", fontsize=10)
        ax.set_ylim(0, 1.05)
        ax.grid(alpha=0.3, axis="y")
    axes[0][0].set_ylabel("throughput / liquid throughput (median)")
    axes[0][0].legend(fontsize=7, loc="lower left")
    fig.suptitle("measured in emulated networks: every mode, the MPI library and the selected mode", fontsize=11)
    fig.tight_layout()
    _save(fig, path)


def save(records: list[dict], args, c_benchmark: dict | None = None) -> None:
    """Keep what was measured so far: a cell of the emulated network takes minutes."""
    write_document({"benchmark": "win_when_run", "size_bytes": args.size, "repeats": args.repeats,
                    "time_scale": args.time_scale, "modes": list(MODES), "networks": records,
                    "c_benchmark": c_benchmark}, args.output)


def c_benchmark_plot_path(plot_path: str) -> str:
    """Where the C benchmark's plot goes beside the modes' plot: ``out/w.png`` → ``out/w-c-benchmark.png``."""
    path = Path(plot_path)
    return str(path.with_name(f"{path.stem}-c-benchmark{path.suffix}"))


def main() -> None:
    parser = benchmark_parser(__doc__)
    parser.add_argument("--repeats", type=int, default=7, help="timed runs per mode (default 7)")
    add_network_options(parser, "lswin")
    parser.add_argument("--size", type=parse_size, default=4 * MB, metavar="BYTES", help="bytes per transfer")
    parser.add_argument("--time-scale", type=float, default=1.0, help="links this many times slower (default 1)")
    parser.add_argument("--no-c-benchmark", action="store_true",
                        help="leave out the C benchmark under liquidsched launch (pmpi_versus_mpich.py)")
    pmpi_versus_mpich.add_options(parser, prefix="c-")
    args = parser.parse_args()
    todo, regimes = chosen_networks(args, [k for k, *_ in NETWORKS])
    if not args.no_c_benchmark:
        pmpi_versus_mpich.check_built()
    records = []
    with progress_bar("{task.description}") as progress:
        task = progress.add_task("cells", total=len(todo) * len(regimes))
        for key, label, topology, traffic_of, algorithm, divisor in todo:
            schedule = schedule_of(topology, traffic_of, algorithm, args.size // divisor)
            record = {"network": label, "key": key, "topology": topology, "algorithm": algorithm,
                      "frames": schedule.length, "cells": []}
            for regime in regimes:
                progress.update(task, description=f"{key}, {regime}")
                cell = measure_cell(schedule, regime, args.repeats, args.prefix, args.time_scale)
                cell["goals"] = goals(cell)
                record["cells"].append(cell)
                progress.advance(task)
                save(records + [record], args)
            records.append(record)
    table = Table("network", "buffers", "flow", "2 ways", *MODES, "selected", "goals met", title=(
        f"% of the liquid throughput, median of {args.repeats} runs (spread), predicted in brackets"))
    for rec in records:
        for cell in rec["cells"]:
            row = []
            for mode in MODES:
                m = cell["modes"][mode]
                guess = "" if m["predicted_ratio"] is None else f" [{m['predicted_ratio']:.0%}]"
                row.append(f"{m['ratio_to_bound']:.1%} ({m['spread']:.0%}){guess}")
            met = [k for k, v in cell["goals"].items() if isinstance(v, bool)]
            opposing = cell.get("opposing_flows_ratio")
            table.add_row(rec["key"], cell["regime"], f"{cell['single_flow_ratio']:.1%}",
                          "—" if opposing is None else f"{opposing:.1%}", *row,
                          f"{cell['selected']}: {cell['goals']['selected_ratio']:.1%}",
                          f"{sum(cell['goals'][k] for k in met)}/{len(met)}")
    Console(width=220).print(table)
    met = [v for r in records for c in r["cells"] for v in c["goals"].values() if isinstance(v, bool)]
    print(f"goals met: {sum(met)} of {len(met)}; median selected ratio "
          f"{statistics.median(c['goals']['selected_ratio'] for r in records for c in r['cells']):.1%}")
    c_benchmark = None
    if not args.no_c_benchmark:
        c_keys = pmpi_versus_mpich.default_keys()
        opts = pmpi_versus_mpich.options_of(args, prefix="c-")
        keep = lambda local, done: save(records, args, pmpi_versus_mpich.document(opts, local, done))  # noqa: E731
        with progress_bar("{task.description}") as progress:
            local, c_records = pmpi_versus_mpich.measure(opts, [n for n in todo if n[0] in c_keys], regimes,
                                                         args.prefix, progress, on_cell=keep)
        c_met = pmpi_versus_mpich.report(local, c_records, Console(width=200))
        print(f"C benchmark goals met: {sum(c_met)} of {len(c_met)}")
        c_benchmark = pmpi_versus_mpich.document(opts, local, c_records)
    save(records, args, c_benchmark)
    if args.plot:
        plot(records, args.plot)
        if c_benchmark is not None:
            pmpi_versus_mpich.plot(c_benchmark["networks"], c_benchmark_plot_path(args.plot))


if __name__ == "__main__":
    main()

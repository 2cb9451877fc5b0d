"""Do a tuned cluster's TCP settings matter to an exchange? Every mode of ``win_when_run.py`` in
the same emulated networks with the hosts' TCP tuned as a cluster sets it and with the kernel's
defaults, one after the other. Needs root (network namespaces, tc).

    python benchmarks/tcp_settings.py --repeats 7 --output out/tcp-settings.json --plot out/tcp-settings.png

``tuned`` (the emulation's default, :mod:`liquidsched.emulate.namespaces`):
``net.ipv4.tcp_slow_start_after_idle=0`` and autotuned socket buffers up to 32 MiB
(``tcp_rmem``/``tcp_wmem``); ``default``: a new namespace's kernel defaults (slow start after an
idle retransmission timeout, send buffers up to 4 MiB). Both keep ``tcp_limit_output_bytes`` at
half the host's link queue. What the comparison shows is the README's advice for real clusters.
"""

from __future__ import annotations

from common import benchmark_parser, progress_bar
from emulated_networks import MB, add_network_options, chosen_networks
from rich.console import Console
from rich.table import Table
from win_when_run import MODES, measure_cell, schedule_of

from liquidsched.io.files import write_document
from liquidsched.units import parse_size

SETTINGS = ("tuned", "default")


def plot(records: list[dict], path: str) -> None:
    from liquidsched.plot import _save, plt

    cells = [(f"{r['key']}, {c['regime']}", c) for r in records for c in r["cells"]]
    fig, axes = plt.subplots(1, len(cells), figsize=(4.2 * len(cells), 4.2), sharey=True, squeeze=False)
    for ax, (title, cell) in zip(axes[0], cells):
        width = 0.8 / len(SETTINGS)
        for k, tcp in enumerate(SETTINGS):
            ys = [cell["by_tcp"][tcp]["modes"][m]["ratio_to_bound"] for m in MODES]
            ax.bar([n + k * width for n in range(len(MODES))], ys, width, label=f"TCP {tcp}")
        ax.set_xticks([n + width / 2 for n in range(len(MODES))], MODES, rotation=30, ha="right", fontsize=8)
        ax.set_title(title, fontsize=10)
        ax.set_ylim(0, 1.05)
        ax.grid(alpha=0.3, axis="y")
    axes[0][0].set_ylabel("throughput / liquid throughput (median)")
    axes[0][0].legend(fontsize=8, loc="lower left")
    fig.tight_layout()
    _save(fig, path)


def main() -> None:
    parser = benchmark_parser(__doc__)
    parser.add_argument("--repeats", type=int, default=7, help="timed runs per mode (default 7)")
    add_network_options(parser, "lstcp", only="2:1,swiss-t1", regimes="deep")
    parser.add_argument("--size", type=parse_size, default=4 * MB, metavar="BYTES", help="bytes per transfer")
    args = parser.parse_args()
    todo, regimes = chosen_networks(args, [])
    records: list[dict] = []
    with progress_bar("{task.description}") as progress:
        task = progress.add_task("cells", total=len(todo) * len(regimes) * len(SETTINGS))
        for key, label, topology, traffic_of, algorithm, divisor in todo:
            schedule = schedule_of(topology, traffic_of, algorithm, args.size // divisor)
            record = {"network": label, "key": key, "topology": topology, "cells": []}
            for regime in regimes:
                cell = {"regime": regime, "by_tcp": {}}
                record["cells"].append(cell)
                for tcp in SETTINGS:
                    progress.update(task, description=f"{key}, {regime}, TCP {tcp}")
                    cell["by_tcp"][tcp] = measure_cell(schedule, regime, args.repeats, args.prefix, 1.0, tcp=tcp)
                    progress.advance(task)
                    write_document({"benchmark": "tcp_settings", "size_bytes": args.size, "repeats": args.repeats,
                                    "modes": list(MODES), "networks": records + [record]}, args.output)
            records.append(record)
    table = Table("network", "buffers", "TCP", "flow", *MODES,
                  title=f"% of the liquid throughput, median of {args.repeats} runs (spread)")
    for rec in records:
        for cell in rec["cells"]:
            for tcp in SETTINGS:
                c = cell["by_tcp"][tcp]
                table.add_row(rec["key"], cell["regime"], tcp, f"{c['single_flow_ratio']:.1%}",
                              *(f"{c['modes'][m]['ratio_to_bound']:.1%} ({c['modes'][m]['spread']:.0%})"
                                for m in MODES))
    Console(width=200).print(table)
    if args.plot:
        plot(records, args.plot)


if __name__ == "__main__":
    main()

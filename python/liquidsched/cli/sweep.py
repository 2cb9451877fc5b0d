"""``liquidsched sweep``: the liquid throughput of every allocation of a topology."""

from __future__ import annotations

import argparse

from .common import command_help, err, mbps, out, print_json, progress_bar


def cmd_sweep(args: argparse.Namespace) -> int:
    from rich.progress import BarColumn, MofNCompleteColumn, TextColumn, TimeElapsedColumn
    from rich.table import Table

    from ..io.files import write_document
    from ..sweep import run_sweep
    from ..topologies import resolve_topology

    net = resolve_topology(args.topology)
    with progress_bar(TextColumn("sweep"), BarColumn(), MofNCompleteColumn(), TimeElapsedColumn(),
                      hidden=args.json) as progress:
        task = progress.add_task("sweep", total=None)
        result = run_sweep(net, include_self=not args.no_self,
                           progress=lambda done, total: progress.update(task, completed=done, total=total))
    if args.plot:
        from ..plot import plot_sweep

        plot_sweep(result, args.plot)
    write_document(result.to_dict(), args.output)
    summary = {"allocations": result.allocations, "classes": len(result.classes), "time_s": result.time_s,
               "output": str(args.output), "plot": str(args.plot) if args.plot else None}
    if args.json:
        print_json(summary)
        return 0
    console = err if "-" in (args.output, args.plot) else out
    console.print(f"{net.name}: {result.allocations} allocations in {len(result.classes)} classes "
                  f"of equal (hosts, liquid throughput), {result.time_s * 1e3:.1f} ms; wrote {args.output}"
                  + (f" and {args.plot}" if args.plot else ""), markup=False)
    table = Table("hosts", "classes", "best liquid throughput", "best allocation", title="best allocation per size")
    for n in sorted({c.hosts for c in result.classes}):
        best = result.best_allocation(n)
        table.add_row(str(n), str(sum(1 for c in result.classes if c.hosts == n)),
                      mbps(float(best.liquid_throughput_Bps)), ",".join(map(str, best.allocation)))
    console.print(table)
    return 0


def add_parsers(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("sweep", help=command_help("sweep"))
    p.add_argument("--topology", required=True, metavar="NAME|FILE")
    p.add_argument("--output", required=True, metavar="CLASSES.json", help="the classes (- for standard output)")
    p.add_argument("--plot", metavar="FILE.png|pdf|svg", help="plot the classes with the crossbar throughput")
    p.add_argument("--no-self", action="store_true", help="hosts do not send to themselves")
    p.add_argument("--json", action="store_true")
    p.set_defaults(run=cmd_sweep)

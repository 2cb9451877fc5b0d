"""The ``liquidsched`` command line.

Every command has ``--help``. A user error prints one line, ``liquidsched: error: ...``, and
exits with status 2; ``check`` exits with 1 when the schedule is invalid.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any, Sequence

from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn
from rich.table import Table

from .bounds import compute_bound
from .errors import InputError, LiquidschedError
from .io.files import write_document
from .io.topology import save_topology
from .network import Network
from .schedule import Schedule
from .schedulers import SCHEDULERS, plan
from .topologies import BUILDERS, resolve_topology
from .traffic import DEFAULT_SIZE_BYTES, GENERATORS, Traffic, allocation_hosts, make_traffic
from .units import parse_size
from .validate import validate

out = Console(highlight=False)
err = Console(stderr=True, highlight=False)


class UserError(LiquidschedError):
    """A bad command-line argument."""


def _allocation(text: str) -> list[int]:
    try:
        return [int(v) for v in text.split(",")]
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected comma-separated counts such as 4,4,0,0, got {text!r}") from None


def _size(text: str) -> int:
    try:
        return parse_size(text)
    except ValueError as e:
        raise argparse.ArgumentTypeError(str(e)) from None


def _add_problem_options(p: argparse.ArgumentParser, topology_required: bool = True) -> None:
    p.add_argument("--topology", required=topology_required, metavar="NAME|FILE",
                   help=f"a built-in ({', '.join(BUILDERS)}), with parameters as NAME:k=v,..., or a YAML/JSON file")
    p.add_argument("--alloc", type=_allocation, metavar="N0,N1,...",
                   help="use the first N_i hosts of the i-th switch with hosts (paper 000 §7)")
    p.add_argument("--traffic", default="half-all-to-all", metavar="NAME|FILE",
                   help=f"a generator ({', '.join(GENERATORS)}) or a CSV/JSON/YAML transfer file "
                        "(default: half-all-to-all)")
    p.add_argument("--size", type=_size, default=DEFAULT_SIZE_BYTES, metavar="BYTES",
                   help="transfer size for generated traffics, e.g. 1MB, 64KiB (default: 1MB)")
    p.add_argument("--json", action="store_true", help="print JSON instead of a table")


def _problem(args: argparse.Namespace) -> tuple[Network, Traffic]:
    net = resolve_topology(args.topology)
    hosts = allocation_hosts(net, args.alloc) if args.alloc is not None else None
    return net, make_traffic(net, args.traffic, hosts, args.size)


def _print_json(data: Any) -> None:
    print(json.dumps(data, indent=2))


def _mbps(rate: float) -> str:
    return f"{rate / 1e6:,.2f} MB/s"


# -- commands ------------------------------------------------------------------------------------


def cmd_topology_list(args: argparse.Namespace) -> int:
    if args.json:
        _print_json([{"name": b.name, "summary": b.summary, "parameters": {k: v for k, v in b.parameters().items()}}
                     for b in BUILDERS.values()])
        return 0
    table = Table("name", "what", "parameters (defaults)")
    for b in BUILDERS.values():
        table.add_row(b.name, b.summary, ", ".join(f"{k}={v}" for k, v in b.parameters().items()))
    out.print(table)
    return 0


def cmd_topology_show(args: argparse.Namespace) -> int:
    net = resolve_topology(args.name)
    caps = sorted(set(net.resource_capacity))
    try:
        groups = {s: len(h) for s, h in net.host_groups().items()}
    except LiquidschedError:
        groups = {}
    slots = {r: k for r, k in zip(net.resources, net.resource_slots) if k != 1}
    info = {"name": net.name, "description": net.description, "hosts": len(net.hosts()),
            "switches": len(net.switches()), "links": len(net.links), "resources": len(net.resources),
            "shared_duplex": len(net.shared_duplex), "routing": net.routing.policy,
            "senders": len(net.senders()), "receivers": len(net.receivers()),
            "capacities_Bps": caps,
            "port_rate_Bps": None if net.port_rate_Bps is None else float(net.port_rate_Bps),
            "slots": slots, "hosts_per_switch": groups}
    if args.json:
        _print_json(info)
        return 0
    table = Table(show_header=False)
    for k, v in info.items():
        if k == "capacities_Bps":
            v = ", ".join(_mbps(c) for c in v)
        elif k == "port_rate_Bps":
            v = "-" if v is None else _mbps(v)
        elif k == "slots":
            v = _slot_summary(v) or "1 on every resource"
        elif k == "hosts_per_switch":
            v = " ".join(f"{s}:{n}" for s, n in v.items()) or "(hosts not each on one switch)"
        table.add_row(k, str(v))
    out.print(table)
    return 0


def _slot_summary(slots: dict[str, int], shown: int = 6) -> str:
    """Resources with more than one slot, grouped by slot count: ``10: e1>root, root>e1``."""
    by_count: dict[int, list[str]] = {}
    for r, k in slots.items():
        by_count.setdefault(k, []).append(r)
    parts = []
    for k in sorted(by_count):
        names = by_count[k]
        more = f" and {len(names) - shown} more" if len(names) > shown else ""
        parts.append(f"{k}: {', '.join(names[:shown])}{more}")
    return "; ".join(parts)


def cmd_topology_export(args: argparse.Namespace) -> int:
    net = resolve_topology(args.name)
    save_topology(net, args.output)
    err.print(f"wrote {args.output}: {len(net.hosts())} hosts, {len(net.links)} links")
    return 0


def cmd_bound(args: argparse.Namespace) -> int:
    net, traffic = _problem(args)
    bound = compute_bound(net, traffic)
    if args.json:
        _print_json(bound.to_dict())
        return 0
    table = Table(show_header=False, title=f"{net.name}: {traffic.name}")
    table.add_row("transfers", str(bound.transfers))
    in_transfers = f"{bound.duration} transfers (" if bound.uniform else ""
    table.add_row("duration Λ", f"{in_transfers}{float(bound.duration_s) * 1e3:.3f} ms" + (")" if bound.uniform else ""))
    table.add_row("bottlenecks", _names(bound.bottlenecks))
    table.add_row("liquid throughput", _mbps(float(bound.liquid_throughput_Bps)))
    if not bound.uniform:
        table.add_row("frame bound", f"{bound.frame_lower_bound} frames ({float(bound.frame_bound_time_s) * 1e3:.3f} ms)")
        if bound.frame_bottlenecks != bound.bottlenecks:
            table.add_row("frame bottlenecks", _names(bound.frame_bottlenecks))
        if bound.slot_model_gap_s:
            table.add_row("slot-model gap", f"{float(bound.slot_model_gap_s) * 1e3:.3f} ms: frames of whole transfers "
                          f"reach at most {float(bound.frame_bound_ratio):.1%} of the liquid throughput")
    slots = {r: k for r, k in bound.slots.items() if k != 1}
    if slots:
        table.add_row("slots", _slot_summary(slots))
    out.print(table)
    return 0


def _names(resources: list[str], shown: int = 12) -> str:
    more = f" and {len(resources) - shown} more" if len(resources) > shown else ""
    return ", ".join(resources[:shown]) + more


def _plan_options(args: argparse.Namespace) -> dict[str, Any]:
    """The options of the chosen algorithm; a budget given to one that has none is an error."""
    options: dict[str, Any] = {"seed": args.seed} if args.algorithm == "random" else {}
    budgets = {"time_limit": ("--time-limit", ("liquid", "cpsat")), "node_limit": ("--node-limit", ("liquid",))}
    for key, (flag, algorithms) in budgets.items():
        value = getattr(args, key, None)  # simulate has no budget options
        if value is None:
            continue
        if args.algorithm not in algorithms:
            raise InputError(f"{flag} applies to --algorithm {' or '.join(algorithms)}, not {args.algorithm}")
        if not value >= 0:
            raise InputError(f"{flag}: must be non-negative, got {value}")
        options[key] = value
    return options


def cmd_plan(args: argparse.Namespace) -> int:
    net, traffic = _problem(args)
    schedule = plan(net, traffic, args.algorithm, **_plan_options(args))
    violations = validate(schedule)
    if violations:  # a scheduler bug, never a user error: refuse to write it
        raise LiquidschedError(f"the {args.algorithm} schedule failed validation: {violations[0]}")
    if args.output:
        schedule.save(args.output)
    if args.plot:
        from .plot import plot_schedule

        plot_schedule(schedule, args.plot)
    summary = schedule.summary()
    if args.json:
        _print_json(summary)
        return 0
    bound = schedule.bound
    table = Table(show_header=False, title=f"{net.name}: {traffic.name}, {args.algorithm}")
    table.add_row("frames", f"{schedule.length} (frame bound {schedule.info.lower_bound})")
    table.add_row("time (frames model)", f"{summary['makespan_s'] * 1e3:.3f} ms for Λ = "
                  f"{float(bound.duration_s) * 1e3:.3f} ms: {summary['ratio_to_bound']:.1%} of the liquid throughput")
    if bound.slot_model_gap_s:
        table.add_row("slot-model limit", f"{float(bound.frame_bound_time_s) * 1e3:.3f} ms "
                      f"({float(bound.frame_bound_ratio):.1%}): no schedule of whole transfers in frames is faster")
    table.add_row("liquid", str(schedule.liquid))
    table.add_row("optimal", {True: "yes, fewest frames (proven)", False: "not proven",
                              None: "unknown"}[schedule.info.optimal]
                  + (", least time" if summary["time_optimal"] else ""))
    if "note" in summary:
        table.add_row("note", summary["note"])
    if summary["gap"]:
        table.add_row("gap to the proven bound", f"{summary['gap']} frame{'s' if summary['gap'] > 1 else ''}")
    if summary["nodes_explored"] is not None:
        table.add_row("nodes explored", f"{summary['nodes_explored']:,}")
    if schedule.info.stats.get("stopped_by"):
        table.add_row("budget ran out", f"{schedule.info.stats['stopped_by']} (schedule from {schedule.info.stats['source']})")
    table.add_row("throughput (frames model)", _mbps(summary["throughput_Bps"]))
    table.add_row("liquid throughput", _mbps(summary["liquid_throughput_Bps"]))
    table.add_row("scheduling time", f"{schedule.info.time_s * 1e3:.2f} ms")
    if args.output:
        table.add_row("written", str(args.output))
    out.print(table)
    return 0


def schedule_from_args(args: argparse.Namespace) -> Schedule:
    """The schedule of ``--schedule FILE``, or built by ``--algorithm`` for ``--topology``."""
    if args.schedule:
        if args.topology or args.algorithm:
            raise InputError("give either --schedule FILE or --topology with --algorithm, not both")
        return Schedule.load(args.schedule)
    if not (args.topology and args.algorithm):
        raise InputError("give --schedule FILE, or --topology and --algorithm to build the schedule")
    net, traffic = _problem(args)
    return plan(net, traffic, args.algorithm, **_plan_options(args))


def add_schedule_options(p: argparse.ArgumentParser) -> None:
    """``--schedule FILE`` or the problem options with ``--algorithm``."""
    p.add_argument("--schedule", metavar="SCHEDULE.json", help="a schedule file (from plan --output)")
    _add_problem_options(p, topology_required=False)
    p.add_argument("--algorithm", choices=list(SCHEDULERS), help="build the schedule with this algorithm")
    p.add_argument("--seed", type=int, default=0, help="seed of the random algorithm (default 0)")


def cmd_simulate(args: argparse.Namespace) -> int:
    from .simulate import simulate

    schedule = schedule_from_args(args)
    if args.backend == "simgrid" and args.plot:
        raise InputError("--plot needs the utilisation map of the rust backend; SimGrid gives finish times only")
    violations = validate(schedule)
    if violations and args.model != "fluid":
        raise InputError(f"the schedule is not valid in the liquid model ({violations[0]}); "
                         "only the fluid model simulates it")
    prediction = simulate(schedule, args.model, args.policy, args.overhead, bins=200 if args.plot else 0,
                          backend=args.backend)
    if args.plot:
        from .plot import plot_utilisation

        plot_utilisation(schedule, prediction, args.plot)
    bound = schedule.bound
    summary = {"algorithm": schedule.info.algorithm, "frames": schedule.length, **prediction.to_dict(),
               "duration_s": float(bound.duration_s), "frame_lower_bound": bound.frame_lower_bound,
               "frame_bound_time_s": float(bound.frame_bound_time_s)}
    if args.json:
        _print_json(summary)
        return 0
    title = f"{schedule.network.name}: {schedule.traffic.name}, {schedule.info.algorithm}"
    table = Table(show_header=False, title=title)
    table.add_row("model", args.model + (f", {args.policy}" if args.model == "fluid" else "")
                  + (" (SimGrid CM02)" if args.backend == "simgrid" else ""))
    table.add_row("makespan", f"{prediction.makespan_s * 1e3:.3f} ms")
    table.add_row("throughput", _mbps(prediction.throughput_Bps))
    table.add_row("of the liquid throughput", f"{prediction.ratio_to_bound:.1%}")
    if args.plot:
        table.add_row("written", str(args.plot))
    out.print(table)
    return 0


def cmd_check(args: argparse.Namespace) -> int:
    schedule = Schedule.load(args.schedule)
    violations = validate(schedule)
    if args.json:
        _print_json({"valid": not violations, "length": schedule.length,
                     "violations": [{"kind": v.kind, "message": v.message} for v in violations]})
    elif violations:
        err.print(f"{args.schedule}: invalid, {len(violations)} violation(s):")
        for v in violations:
            err.print(f"  {v.message}")
    else:
        out.print(f"{args.schedule}: valid, {schedule.length} frames, {len(schedule.traffic)} transfers")
    return 1 if violations else 0


def cmd_sweep(args: argparse.Namespace) -> int:
    from .sweep import run_sweep

    net = resolve_topology(args.topology)
    with Progress(TextColumn("sweep"), BarColumn(), MofNCompleteColumn(), TimeElapsedColumn(),
                  console=err, transient=True, disable=args.json) as progress:
        task = progress.add_task("sweep", total=None)
        result = run_sweep(net, include_self=not args.no_self,
                           progress=lambda done, total: progress.update(task, completed=done, total=total))
    write_document(result.to_dict(), args.output)
    if args.plot:
        from .plot import plot_sweep

        plot_sweep(result, args.plot)
    summary = {"allocations": result.allocations, "classes": len(result.classes), "time_s": result.time_s,
               "output": str(args.output), "plot": str(args.plot) if args.plot else None}
    if args.json:
        _print_json(summary)
        return 0
    out.print(f"{net.name}: {result.allocations} allocations in {len(result.classes)} classes "
              f"of equal (hosts, liquid throughput), {result.time_s * 1e3:.1f} ms; wrote {args.output}"
              + (f" and {args.plot}" if args.plot else ""))
    table = Table("hosts", "classes", "best liquid throughput", "best allocation", title="best allocation per size")
    for n in sorted({c.hosts for c in result.classes}):
        best = result.best_allocation(n)
        table.add_row(str(n), str(sum(1 for c in result.classes if c.hosts == n)),
                      _mbps(float(best.liquid_throughput_Bps)), ",".join(map(str, best.allocation)))
    out.print(table)
    return 0


# -- parser --------------------------------------------------------------------------------------


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="liquidsched", description=(
        "Topology-aware scheduling of collective data exchanges: the liquid throughput of a traffic, "
        "schedules, and their validation."))
    sub = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")

    topo = sub.add_parser("topology", help="list, show and export topologies")
    tsub = topo.add_subparsers(dest="action", required=True, metavar="ACTION")
    p = tsub.add_parser("list", help="the built-in topologies and their parameters")
    p.add_argument("--json", action="store_true")
    p.set_defaults(run=cmd_topology_list)
    p = tsub.add_parser("show", help="summary of a topology")
    p.add_argument("name", metavar="NAME|FILE")
    p.add_argument("--json", action="store_true")
    p.set_defaults(run=cmd_topology_show)
    p = tsub.add_parser("export", help="write a topology as YAML, JSON or a SimGrid platform (.xml)")
    p.add_argument("name", metavar="NAME|FILE")
    p.add_argument("--output", required=True, metavar="FILE")
    p.set_defaults(run=cmd_topology_export)

    p = sub.add_parser("bound", help="loads, duration, bottlenecks and liquid throughput of a traffic")
    _add_problem_options(p)
    p.set_defaults(run=cmd_bound)

    p = sub.add_parser("plan", help="build a schedule and write it")
    _add_problem_options(p)
    p.add_argument("--algorithm", choices=list(SCHEDULERS), default="round-robin")
    p.add_argument("--seed", type=int, default=0, help="seed of the random algorithm (default 0)")
    p.add_argument("--output", metavar="SCHEDULE.json", help="where to write the schedule")
    p.add_argument("--time-limit", type=float, metavar="S",
                   help="liquid, cpsat: stop after S seconds with the best schedule found")
    p.add_argument("--node-limit", type=int, metavar="N", help="liquid: stop after N search nodes")
    p.add_argument("--plot", metavar="FILE.png", help="draw the schedule: frames against resources")
    p.set_defaults(run=cmd_plan)

    p = sub.add_parser("simulate", help="predict what a schedule achieves: frames, circuit or fluid model")
    add_schedule_options(p)
    p.add_argument("--model", choices=["frames", "circuit", "fluid"], default="fluid")
    p.add_argument("--policy", choices=["all-at-once", "frames", "per-sender"], default="all-at-once",
                   help="fluid model: start all flows at once, frame by frame behind a barrier, or per sender")
    p.add_argument("--overhead", type=float, default=0.0, metavar="S", help="β added to every frame (default 0)")
    p.add_argument("--backend", choices=["rust", "simgrid"], default="rust",
                   help="rust (default) or SimGrid's CM02 model (fluid model; needs python3-simgrid)")
    p.add_argument("--plot", metavar="FILE.png", help="utilisation of every resource over time")
    p.set_defaults(run=cmd_simulate)

    from .cli_execute import add_execute_parsers

    add_execute_parsers(sub)

    p = sub.add_parser("check", help="validate a schedule file (exit 0 valid, 1 invalid)")
    p.add_argument("schedule", metavar="SCHEDULE.json")
    p.add_argument("--json", action="store_true")
    p.set_defaults(run=cmd_check)

    p = sub.add_parser("sweep", help="liquid throughput of every allocation, grouped into classes")
    p.add_argument("--topology", required=True, metavar="NAME|FILE")
    p.add_argument("--output", required=True, metavar="CLASSES.json")
    p.add_argument("--plot", metavar="FILE.png", help="plot the classes with the crossbar throughput")
    p.add_argument("--no-self", action="store_true", help="hosts do not send to themselves")
    p.add_argument("--json", action="store_true")
    p.set_defaults(run=cmd_sweep)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    for name in ("output", "plot"):
        target = getattr(args, name, None)
        if target and not Path(target).parent.exists():
            parser.exit(2, f"liquidsched: error: --{name} {target}: directory {Path(target).parent} does not exist\n")
    try:
        return args.run(args)
    except LiquidschedError as e:
        err.print(f"liquidsched: error: {e}", markup=False, soft_wrap=True)
        return 2
    except KeyboardInterrupt:
        err.print("liquidsched: interrupted")
        return 130


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())

"""``liquidsched steady``: the optimal steady state of a series of scatters, all-to-alls or
reduces on a platform (paper 003): ρ exact and in operations per second, the period, the
weighted trees, the matchings, the gain over what MPI libraries do, and the throughput of K
operations as K grows. ``--output`` writes one period as a schedule file that ``simulate``,
``check`` and ``run`` take."""

from __future__ import annotations

import argparse
import dataclasses
from fractions import Fraction
from typing import Any

from ..errors import InputError
from ..wording import percent, plural
from .common import command_help, count_arg, err, host_list_arg, name_arg, number_arg, out, print_json, size_arg

OPERATIONS = ("scatter", "all-to-all", "reduce")
#: The K of the asymptotic curve: a decade per point up to ``--operations``.
CURVE_POINTS = (1, 10, 100, 1_000, 10_000, 100_000, 1_000_000)


def fraction_arg(text: str) -> Fraction:
    """``--fixed-period 0.5``: a duration above 0, exact: ``10``, ``0.5``, ``3/4`` (seconds) or
    with a unit, ``250ms`` (:func:`~liquidsched.units.parse_exact_duration`)."""
    from ..units import parse_exact_duration

    return number_arg(parse_exact_duration, "duration")(text)


def flops_arg(text: str) -> Fraction:
    """``--task-flops 10Mflop``: the work of one reduction task (:func:`~liquidsched.units.parse_work`)."""
    from ..units import parse_work

    return Fraction(repr(number_arg(parse_work, "work")(text)))


def series_of(args: argparse.Namespace, platform):
    """The series the options describe; participants default to the platform's hosts, the root
    to the first of them."""
    from ..steady import Series

    hosts = platform.hosts
    if not hosts:
        raise InputError(f"platform {platform.name} has no host to take part; give --participants")
    participants = tuple(args.participants.split(",")) if args.participants else tuple(hosts)
    kind = args.operation
    root = args.source if kind == "scatter" else args.target if kind == "reduce" else None
    if kind == "scatter" and args.target or kind == "reduce" and args.source:
        raise InputError(f"a {kind} takes --{'source' if kind == 'scatter' else 'target'}, not "
                         f"--{'target' if kind == 'scatter' else 'source'}")
    if kind == "all-to-all" and (args.source or args.target):
        raise InputError("an all-to-all has no --source or --target")
    if kind != "all-to-all" and root is None:
        root = participants[0]
    if kind == "scatter" and not args.participants:
        participants = tuple(h for h in participants if h != root)
    if kind != "reduce" and args.task_flops is not None:
        raise InputError(f"--task-flops is the work of a reduction task; a {kind} computes nothing")
    if kind == "reduce" and args.task_flops is None:
        raise InputError("a reduce needs --task-flops, the work of one reduction task, such as 10Mflop")
    return Series(kind, participants, root, args.message_bytes,
                  args.task_flops if args.task_flops is not None else Fraction(0))


def report_of(state, baseline, operations: int) -> dict[str, Any]:
    """Everything the command prints, as data."""
    from ..steady.trees import pipeline

    platform, series = state.platform, state.series
    report = state.summary()
    report["throughput_ops_per_s"] = float(state.throughput)
    report["baseline"] = {"name": baseline_name(series),
                          "throughput_per_s": str(baseline.throughput),
                          "gain": float(state.throughput / baseline.throughput)}
    report["trees_detail"] = [{"weight": t.weight, "tasks": len(t.tasks),
                               **({"message": series.describe_type(t.type)} if t.type is not None else {})}
                              for t in state.trees]
    # The pipeline's depth is found once; only the number of operations changes along the curve.
    longest = pipeline(platform, state.fixed.trees if state.fixed else state.trees, state.run_period.length_s,
                       operations)
    runs = [dataclasses.replace(longest, operations=k)
            for k in sorted({k for k in CURVE_POINTS if k <= operations} | {operations})]
    report["operations"] = [{"operations": r.operations, "periods": r.periods, "time_s": float(r.time_s),
                             "throughput_per_s": float(r.throughput),
                             "of_rho": float(r.throughput / state.throughput)} for r in runs]
    return report


def operations(count: int, word: str) -> str:
    """``count`` operations of a series, ``word`` its plural (``scatters``): ``1 scatter``."""
    return plural(count, word.removesuffix("s"), word)


def print_report(state, report: dict[str, Any]) -> None:
    from rich.table import Table

    series = state.series
    rho = state.throughput
    word = series.operations_word
    t = Table("quantity", "value", title=f"series of {word} on {state.platform.name}")
    t.add_row("participants", f"{len(series.participants)}" + (f", {'source' if series.kind == 'scatter' else 'target'} "
                                                             f"{series.root}" if series.root else ""))
    t.add_row("ρ (optimal, proven)", f"{rho} {word}/s = {float(rho):.6g} {word}/s")
    t.add_row("period T", f"{state.period.length_s} s, {operations(state.period.operations, word)}")
    t.add_row("weighted trees", f"{len(state.trees)}")
    d = state.decomposition
    t.add_row("matchings", f"{len(d.matchings)}, {float(d.length_s):.6g} s"
              + (f" over {d.repeat} periods" if d.repeat > 1 else ""))
    if state.fixed is not None:
        f = state.fixed
        t.add_row("fixed period", f"{f.length_s} s, {operations(f.operations, word)}: {float(f.throughput):.6g}/s, "
                  f"{percent(f.throughput / rho, exact_one=f.throughput == rho)} of ρ (loss ≤ {float(f.bound):.3g}/s)")
    b = report["baseline"]
    t.add_row(b["name"], f"{float(Fraction(b['throughput_per_s'])):.6g} {word}/s; ρ is {b['gain']:.2f}×")
    times = report["times_s"]
    t.add_row("time", ", ".join(f"{k} {v:.3f} s" for k, v in times.items()))
    out.print(t)
    k = Table("K", "periods", "time", f"{word}/s", "of ρ", title=f"K {word} with the periodic schedule "
              "(fill and drain included)")
    for row in report["operations"]:
        k.add_row(f"{row['operations']:,}", f"{row['periods']:,}", f"{row['time_s']:.6g} s",
                  f"{row['throughput_per_s']:.6g}", percent(row['of_rho']))
    out.print(k)


def run_report(state, baseline, args: argparse.Namespace, launcher) -> dict[str, Any]:
    """Run K operations by the optimal schedule, the baseline's and the MPI collective, on the
    emulated platform (``--emulate``/``--prefix``) or where ``launcher`` puts the ranks."""
    from ..execute import network_kind
    from ..steady.baselines import baseline_trees
    from ..steady.execution import check_runnable, periodic_run, run_series
    from ..steady.period import decompose
    from .emulation import emulated_hosts, launcher_args

    platform, series = state.platform, state.series
    check_runnable(platform, series)
    extra_args = launcher_args(args)
    trees = state.fixed.trees if state.fixed else state.trees
    runs = [periodic_run("steady state", trees, state.run_period, state.decomposition),
            periodic_run(baseline_name(series), baseline_trees(platform, series), baseline,
                         decompose(platform, baseline.edge_bytes(series)))]
    network = platform.network()
    with emulated_hosts(network, args.emulate, args.prefix) as namespaces:
        kind = network_kind(namespaces, False, extra_args, launcher)
        where = {"emulated": "emulated platform", "local": "this machine (not the platform: times not comparable)",
                 "undeclared": "the launcher's placement (not the platform: times not comparable)"}[kind]
        err.print(f"running {operations(args.operations, series.operations_word)} on {where} …")
        raw = run_series(platform, series, runs, args.operations, namespaces, timeout_s=args.timeout,
                         launcher=launcher, extra_args=extra_args)
    rho = float(state.throughput)
    raw["where"] = kind
    for row in raw["runs"].values():
        row["throughput_per_s"] = args.operations / row["time_s"]
        # Only a run on the platform's links can be held to the platform's optimum.
        row["of_rho"] = row["throughput_per_s"] / rho if raw["where"] == "emulated" else None
    return raw


def baseline_name(series) -> str:
    """What MPI libraries do instead, by operation."""
    return {"reduce": "binomial tree", "scatter": "flat scatter"}.get(series.kind, "direct all-to-all")


def print_run(report: dict[str, Any], word: str) -> None:
    from rich.table import Table

    run = report["run"]
    t = Table("schedule", "time", f"{word}/s", "of ρ", "model", "results right",
              title=f"{operations(report['operations'][-1]['operations'], word)}, measured ({run['where']}; "
                    f"{run['mpi_library']})")
    for name, row in run["runs"].items():
        model = f"{row['model_time_s']:.3f} s" if "model_time_s" in row else "—"
        of_rho = "n/a" if row["of_rho"] is None else percent(row["of_rho"])
        t.add_row(name, f"{row['time_s']:.3f} s", f"{row['throughput_per_s']:.4g}", of_rho, model,
                  f"{row['checked_right']:,} of {row['expected']:,}")
    out.print(t)


def cmd_steady(args: argparse.Namespace) -> int:
    from ..steady import solve_steady
    from ..steady.baselines import baseline_trees, period_of_trees
    from ..steady.platform import resolve_platform
    from .emulation import launcher_of

    platform = resolve_platform(args.topology)
    series = series_of(args, platform)
    if args.operations < 1:
        raise InputError(f"--operations: at least 1, got {args.operations}")
    if (args.emulate or args.prefix) and not args.execute:
        raise InputError("--emulate and --prefix apply to --run")
    # The launcher is checked before the solve, which may take a while.
    launcher = launcher_of(args) if args.execute else None
    if err.is_terminal:  # a note for whoever waits, not a line of a refusal's output
        err.print(f"solving the series of {series.operations_word} on {platform!r} …")
    state = solve_steady(platform, series, args.fixed_period)
    baseline = period_of_trees(platform, series, baseline_trees(platform, series))
    report = report_of(state, baseline, args.operations)
    if args.execute:
        report["run"] = run_report(state, baseline, args, launcher)
    if args.output:
        schedule = state.schedule()
        schedule.save(args.output)
        err.print(f"wrote one period ({plural(len(schedule.frames), 'frame')}) to {args.output}")
    if args.plot:
        from ..plot import plot_steady

        plot_steady(report, args.plot)
    if args.json:
        print_json(report)
    else:
        print_report(state, report)
        if args.execute:
            print_run(report, series.operations_word)
    failed = [n for n, r in report.get("run", {}).get("runs", {}).items() if r["checked_right"] != r["expected"]]
    if failed:
        from ..execute import ExchangeFailedError

        raise ExchangeFailedError(f"wrong results from {', '.join(failed)} (see the table)")
    return 0


def add_parsers(sub: argparse._SubParsersAction) -> None:
    from .emulation import add_launch_options, timeout_arg

    p = sub.add_parser("steady", help=command_help("steady"), description=__doc__)
    p.add_argument("operation", choices=OPERATIONS)
    p.add_argument("--topology", required=True, metavar="PLATFORM|NAME|FILE",
                   help="a platform (complete, star, chain, tiers, with parameters: 'complete:n=10') or any "
                        "topology, whose hosts compute at their speed_flops and switches forward")
    p.add_argument("--source", type=name_arg, metavar="NODE", help="the source of a scatter (default: the first host)")
    p.add_argument("--target", type=name_arg, metavar="NODE", help="the target of a reduce (default: the first participant)")
    p.add_argument("--participants", type=host_list_arg, metavar="A,B,...",
                   help="the targets, the nodes of the all-to-all, or the values of the reduce in the operator's "
                        "order (default: every host)")
    p.add_argument("--message-bytes", type=size_arg, default=size_arg("1MB"), metavar="SIZE",
                   help="the size of every message (default 1MB)")
    p.add_argument("--task-flops", type=flops_arg, metavar="WORK", help="the work of one reduction task, e.g. 10Mflop")
    p.add_argument("--operations", type=count_arg, default=1000, metavar="K",
                   help="the throughput of K operations, fill and drain included (default 1000)")
    p.add_argument("--fixed-period", type=fraction_arg, metavar="TIME",
                   help="run a period of this length instead (§4.6), such as 0.5, 3/4 or 250ms (plain numbers are "
                        "seconds): fewer operations, a bounded loss")
    p.add_argument("--output", metavar="FILE", help="write the period that is run as a schedule file")
    p.add_argument("--plot", metavar="FILE", help="plot the throughput of K operations against ρ")
    p.add_argument("--run", action="store_true", dest="execute",
                   help="run K operations with MPI (one rank per node) by the schedule, the baseline and the MPI "
                        "collective, checking every result")
    p.add_argument("--emulate", action="store_true", help="run on the platform built as an emulated network (root)")
    p.add_argument("--prefix", help="run in the emulated platform 'netem up' built with this prefix")
    add_launch_options(p, timeout_s=None)
    p.add_argument("--timeout", type=timeout_arg, default=1800.0, metavar="TIME",
                   help="give up a run after TIME, such as 1800 or 30min (plain numbers are seconds; default 30min)")
    p.add_argument("--json", action="store_true")
    p.set_defaults(run=cmd_steady)

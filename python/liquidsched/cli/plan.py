"""``liquidsched bound``, ``plan`` and ``check``: the bound of a traffic, a schedule for it, and
the validation of a schedule file."""

from __future__ import annotations

import argparse

from ..errors import LiquidschedError
from ..wording import milliseconds, percent, plural, short_time
from .common import (DEFAULT_ALGORITHM, add_algorithm_options, add_problem_options, algorithm_options, command_help, err, mbps,
                     names, out, planned, print_json, print_violations, problem, slot_summary)


def cmd_bound(args: argparse.Namespace) -> int:
    from rich.table import Table

    from ..bounds import compute_bound

    net, traffic = problem(args)
    bound = compute_bound(net, traffic)
    fractional = fractional_optimum(net, traffic) if args.fractional else None
    if args.json:
        print_json(bound.to_dict() | ({"fractional_frame_optimum_s": float(fractional)} if args.fractional else {}))
        return 0
    table = Table(show_header=False, title=f"{net.name}: {traffic.name}")
    table.add_row("transfers", str(bound.transfers))
    in_transfers = f"{plural(bound.duration, 'transfer')} (" if bound.uniform else ""
    table.add_row("duration Λ", f"{in_transfers}{float(bound.duration_s) * 1e3:.3f} ms" + (")" if bound.uniform else ""))
    table.add_row("bottlenecks", names(bound.bottlenecks))
    table.add_row("liquid throughput", mbps(float(bound.liquid_throughput_Bps)))
    if not bound.uniform:
        table.add_row("frame bound", f"{plural(bound.frame_lower_bound, 'frame')} ({float(bound.frame_bound_time_s) * 1e3:.3f} ms)")
        if bound.frame_bottlenecks != bound.bottlenecks:
            table.add_row("frame bottlenecks", names(bound.frame_bottlenecks))
        if bound.slot_model_gap_s:
            table.add_row("slot-model gap", f"{float(bound.slot_model_gap_s) * 1e3:.3f} ms: frames of whole transfers "
                          f"reach at most {percent(bound.frame_bound_ratio)} of the liquid throughput")
    if fractional is not None:
        table.add_row("fractional optimum of frames", f"{float(fractional) * 1e3:.3f} ms "
                      f"({float(fractional / bound.duration_s):.4f} × Λ): no schedule of frames, pieces at will, is faster")
    slots = {r: k for r, k in bound.slots.items() if k != 1}
    if slots:
        table.add_row("slots", slot_summary(slots))
    out.print(table)
    return 0


def fractional_optimum(net, traffic):
    """The fractional optimum of frames, with a spinner: column generation may take seconds."""
    from ..schedulers.weighted import fractional_frame_optimum

    with out.status("column generation: the fractional optimum of frames"):
        return fractional_frame_optimum(net, traffic)


def cmd_plan(args: argparse.Namespace) -> int:
    from rich.table import Table

    from ..validation import validate

    algorithm = args.algorithm or DEFAULT_ALGORITHM
    options = algorithm_options(args, algorithm)
    net, traffic = problem(args)
    schedule = planned(net, traffic, algorithm, options, hidden=args.json)
    violations = validate(schedule)
    if violations:  # a scheduler bug, never a user error: refuse to write it
        raise LiquidschedError(f"the {algorithm} schedule failed validation: {violations[0]}")
    if args.plot:
        from ..plot import plot_schedule

        plot_schedule(schedule, args.plot)
    if args.output:
        schedule.save(args.output)
    summary = schedule.summary() | {"algorithm": algorithm, "algorithm_defaulted": args.algorithm is None,
                                    "stats": schedule.info.stats}
    if "kpbs_lower_bound_s" in schedule.info.stats:
        from ..schedulers.kpbs import kpbs_prediction

        summary["prediction"] = kpbs_prediction(schedule)
    if args.json:
        print_json(summary)
        return 0
    bound = schedule.bound
    table = Table(show_header=False, title=f"{net.name}: {traffic.name}, {algorithm}")
    table.add_row("algorithm", algorithm + (" (the default; --algorithm chooses another)"
                                            if args.algorithm is None else ""))
    makespan, duration = summary["makespan_s"], float(bound.duration_s)
    exact = schedule.makespan_s() == bound.duration_s
    pieces = "" if summary["whole_transfers"] else " of pieces"
    table.add_row("frames", f"{schedule.length}{pieces} (frame bound {schedule.info.lower_bound}"
                  + (" in frames of whole transfers)" if pieces else ")"))
    # Plan's frames model counts neither route latency nor β (simulate counts latency); the
    # times are shown to as many digits as tell them apart, so that the ratio never contradicts them.
    table.add_row("time (frames model, latency excluded)",
                  f"{milliseconds(makespan, beside=duration)} for Λ = {milliseconds(duration, beside=makespan)}: "
                  f"{percent(summary['ratio_to_bound'], exact_one=exact)} of the liquid throughput")
    if summary.get("relayed"):
        direct = summary["direct_duration_s"]
        table.add_row("relayed", f"{summary['legs']:,} legs carry the {len(schedule.exchange):,} transfers through other "
                      f"hosts: Λ above is the legs'; sent straight, the transfers' Λ is "
                      f"{milliseconds(direct, beside=makespan)}, which this schedule takes "
                      f"{makespan / direct:.3f} × (frames model; the fluid model's steps policy predicts it as run)")
    if bound.slot_model_gap_s:
        table.add_row("slot-model limit", f"{float(bound.frame_bound_time_s) * 1e3:.3f} ms "
                      f"({percent(bound.frame_bound_ratio)}): no schedule of whole transfers in frames is faster")
    if "makespan_with_overhead_s" in summary:
        beta = summary["overhead_s"]
        table.add_row("time with β", f"{milliseconds(summary['makespan_with_overhead_s'])} "
                      f"(β = {beta * 1e3:g} ms a frame × {schedule.length}): "
                      f"{percent(summary['ratio_with_overhead'])} of the liquid throughput")
    over = schedule.makespan_s() - bound.duration_s
    table.add_row("liquid", "True: time = Λ" + (" (β excluded)" if "makespan_with_overhead_s" in summary else "")
                  if summary["liquid"] else f"False: time − Λ = {short_time(over)}")
    table.add_row("optimal", {True: "yes, fewest frames (proven)", False: "not proven",
                              None: "unknown"}[schedule.info.optimal]
                  + (", least time" if summary["time_optimal"] else ""))
    if "note" in summary:
        table.add_row("note", summary["note"])
    if summary["gap"]:
        # The search may prove a bound above the frame bound: its gap is to the bound it proved.
        table.add_row("gap to the proven bound", f"{plural(summary['gap'], 'frame')} ({schedule.length} for a "
                      f"proven bound of {schedule.length - summary['gap']})")
    elif not summary["whole_transfers"] and summary["gap_s"]:
        # Frames of pieces are not counted against a bound in frames of whole transfers: time is.
        table.add_row("gap to the frame bound, in time", f"{short_time(summary['gap_s'])}: "
                      f"{milliseconds(makespan)} against the bound's {float(bound.frame_bound_time_s) * 1e3:.3f} ms")
    if summary["nodes_explored"] is not None:
        table.add_row("nodes explored", f"{summary['nodes_explored']:,}")
    stats = schedule.info.stats
    if "kpbs_lower_bound_s" in stats:
        beta = schedule.info.parameters.get("overhead_s", 0.0)
        table.add_row("step cost", f"{stats['cost_s'] * 1e3:.3f} ms: Σ (β + longest piece), β = {beta * 1e3:g} ms, "
                      f"backbone {stats['backbone'] or '(none)'} with k = {stats['k']}")
        table.add_row("KPBS lower bound", f"{stats['kpbs_lower_bound_s'] * 1e3:.3f} ms "
                      f"(cost / bound {stats['cost_over_bound']:.3f})")
        brute = summary["prediction"]["all_at_once_s"]
        if brute is not None:
            cost = stats["cost_s"]
            winner = (f"the schedule takes {1 - cost / brute:.1%} less" if cost <= brute
                      else f"all at once takes {1 - brute / cost:.1%} less")
            table.add_row("all at once (predicted)", f"{brute * 1e3:.3f} ms: β once, then every transfer at once "
                          f"sharing fairly (fluid model); {winner}")
    stopped_by = schedule.info.stats.get("stopped_by")
    source = schedule.info.stats.get("source", algorithm)
    if stopped_by == "request":
        table.add_row("stopped early", f"by Ctrl-C: the best schedule known (from {source})")
    elif stopped_by:
        table.add_row("budget ran out", f"{stopped_by} (schedule from {source})")
    table.add_row("throughput (latency excluded)", mbps(summary["throughput_Bps"]))
    table.add_row("liquid throughput" + (" of the legs" if summary.get("relayed") else ""),
                  mbps(summary["liquid_throughput_Bps"]))
    table.add_row("scheduling time", f"{schedule.info.time_s * 1e3:.2f} ms")
    written = [p for p in (args.output, args.plot) if p and p != "-"]
    if written:
        table.add_row("written", ", ".join(map(str, written)))
    (err if "-" in (args.output, args.plot) else out).print(table)
    return 0


def cmd_check(args: argparse.Namespace) -> int:
    from ..schedule import Schedule
    from ..validation import validate

    schedule = Schedule.load(args.schedule)
    violations = validate(schedule)
    if args.json:
        print_json({"valid": not violations, "length": schedule.length,
                    "violations": [{"kind": v.kind, "message": v.message} for v in violations]})
    elif violations:
        print_violations(args.schedule, [v.message for v in violations])
    else:
        out.print(f"{args.schedule}: valid, {plural(schedule.length, 'frame')}, {plural(len(schedule.traffic), 'transfer')}", markup=False)
    return 1 if violations else 0


def add_parsers(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("bound", help=command_help("bound"))
    add_problem_options(p)
    p.add_argument("--fractional", action="store_true",
                   help="also the fractional optimum of frames: the least time of slot-valid frames when transfers "
                        "may be cut at will (column generation; seconds on a thousand transfers)")
    p.set_defaults(run=cmd_bound)

    p = sub.add_parser("plan", help=command_help("plan"))
    add_problem_options(p)
    add_algorithm_options(p, default=DEFAULT_ALGORITHM)
    p.add_argument("--output", metavar="SCHEDULE.json", help="where to write the schedule (- for standard output)")
    p.add_argument("--plot", metavar="FILE.png|pdf|svg", help="draw the schedule: frames against resources")
    p.set_defaults(run=cmd_plan)

    p = sub.add_parser("check", help=command_help("check"))
    p.add_argument("schedule", metavar="SCHEDULE.json")
    p.add_argument("--json", action="store_true")
    p.set_defaults(run=cmd_check)

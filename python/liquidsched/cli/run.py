"""``liquidsched run`` and ``liquidsched netem up|down|status``: executing schedules for real.

``run`` refuses an invalid schedule (as ``check`` finds it) unless ``--force``, and a run whose
ranks cannot fit in this machine's memory, before launching anything. Its report says on which
network the ranks ran (:data:`liquidsched.execute.NETWORKS`): ``emulated`` (``--emulate`` or
``--prefix``), ``declared`` (``--on-modelled-network``: the user vouches that the ranks run on
the modelled network, e.g. a cluster whose host file puts rank r on the machine of host r;
``--mpiexec-args`` alone does not say so, since a host file does not tell which network joins
the machines), ``undeclared`` (``--mpiexec-args`` without that declaration) or ``local`` (this
machine, through shared memory). Only on the first two is the ratio to the liquid throughput
shown; elsewhere the table says it is not comparable and the JSON's ``ratio_to_bound`` is null.
Self transfers are local copies in execution, so the throughput, the bound and the prediction
count only the transfers that cross the network, and the report says how many were copies.
"""

from __future__ import annotations

import argparse
from typing import Any

from rich.table import Table

from ..errors import InputError, LiquidschedError
from ..execute import (DEFAULT_MODES, DEFAULT_TIMEOUT_S, ExchangeFailedError, ExchangeResult, is_mode, mode_names, predict_mode,
                       prediction_of_mode, run_exchange)
from ..io.files import write_document
from ..schedule import Schedule
from ..wording import percent, plural
from .common import (add_pace_headroom, add_schedule_options, algorithm_options, command_help, count_arg, err, mbps,
                     natural_arg, out, print_json, print_violations, progress_bar, schedule_from_args)
from ..execute.paced import PACE_HEADROOM
from ..execute.plan import STEPPED_MODES
from ..emulate.addressing import time_scale_of
from .emulation import (EMULATION_DEFAULTS, add_emulation_options, add_launch_options, describe_emulation,
                        emulated_hosts, emulation_settings, launcher_args, launcher_of, report_single_flow)

#: The options of the schedulers of the stepped modes (:data:`~liquidsched.execute.plan.STEPPED_MODES`),
#: whose schedules are built for the same traffic when ``--algorithm`` is another.
STEPPED_OPTIONS = ("permutation", "remap", "packet_bytes", "window")


def _modes(text: str) -> list[str]:
    modes = [m.strip() for m in text.split(",") if m.strip()]
    bad = [m for m in modes if not is_mode(m)]
    if bad or not modes:
        raise argparse.ArgumentTypeError(f"unknown mode {bad[0] if bad else '(none)'!r} (modes: {mode_names()})")
    twice = sorted({m for m in modes if modes.count(m) > 1})
    if twice:
        raise argparse.ArgumentTypeError(f"mode {twice[0]!r} given twice")
    return modes


def _sizes(text: str) -> list[int]:
    from ..execute.sizes import parse_sizes

    try:
        return parse_sizes(text)
    except ValueError as e:
        raise argparse.ArgumentTypeError(str(e)) from None


def predictions(schedule: Schedule, modes: list[str], mode_schedules: dict[str, Schedule] | None = None,
                pace_headroom: float = PACE_HEADROOM) -> dict[str, float | None]:
    """The simulator's ratio to the liquid throughput for each mode (of its own schedule, see
    :func:`stepped_schedules`; the paced mode with ``pace_headroom``), of the transfers that
    cross the network; None when none does."""
    predicted: dict[str, float | None] = {}
    # all-at-once, alltoallv and the library's alltoall share one prediction
    by_model: dict[tuple[int, str, str], float | None] = {}
    for mode in modes:
        own = (mode_schedules or {}).get(mode, schedule)
        model, policy = prediction_of_mode(mode, own.relay is not None)
        key = (id(own) if policy != "all-at-once" else 0, model, policy)
        try:
            if key not in by_model:
                prediction = predict_mode(own, mode, pace_headroom)
                by_model[key] = None if prediction is None else prediction.ratio_to_bound
            predicted[mode] = by_model[key]
        except LiquidschedError:
            predicted[mode] = None  # an invalid schedule run with --force: no model applies
    return predicted


def transfers_of(schedule: Schedule) -> str:
    """The transfers ``schedule`` exchanges, for a message: a relayed schedule's with its legs."""
    said = plural(len(schedule.exchange), "transfer")
    return said if schedule.relay is None else f"{said} ({plural(len(schedule.traffic), 'leg')})"


def stepped_schedules(args: argparse.Namespace, schedule: Schedule, modes: list[str]) -> dict[str, Schedule]:
    """The schedules of the shuffle and pairwise modes: ``--algorithm``'s when it is that
    scheduler, else that scheduler's for the same network and traffic, with the options given
    (those it does not take are left out)."""
    from ..schedulers import plan

    own = {}
    for mode in modes:
        if mode in STEPPED_MODES and schedule.info.algorithm != mode:
            own[mode] = plan(schedule.network, schedule.exchange, mode,
                             **algorithm_options(args, mode, shared=STEPPED_OPTIONS))
    return own


def checked_schedule(schedule: Schedule, force: bool, where: str) -> list[str]:
    """The violations of ``schedule`` (one line each, as ``check`` prints them); an invalid
    schedule is refused, with every violation on the error stream, unless ``force``."""
    from ..validation import require_exact_delivery, validate

    # --force runs a schedule over its slots, never one that delivers other bytes than its traffic's.
    require_exact_delivery(schedule, where)
    violations = [v.message for v in validate(schedule)]
    if violations:
        print_violations(where, violations)
        if not force:
            raise InputError(f"{where}: the schedule is invalid (liquidsched check lists the same); "
                             "--force runs it anyway")
        err.print("running it anyway (--force): the report marks it invalid", markup=False)
    return violations


def cmd_run(args: argparse.Namespace) -> int:
    from ..execute import check_memory_on, exchange_plan, network_kind
    from ..execute.metadata import utc_now

    if args.on_modelled_network and (args.emulate or args.prefix):
        raise InputError("--on-modelled-network declares a network other than an emulated one; "
                         "it cannot be given with --emulate or --prefix")
    if args.timeline_plot and not args.timeline:
        raise InputError("--timeline-plot draws the runs --timeline records: give --timeline FILE.json too")
    if args.timeline and args.sizes:
        raise InputError("--timeline records a run at one size; it cannot be given with --sizes")
    if args.plot and not args.sizes:
        raise InputError("--plot draws a --sizes sweep; a run at one size has its table and --output")
    if args.sizes and args.size is not None:
        raise InputError("--size and --sizes both set the transfers' size: give one")
    launcher, mpiexec_args = launcher_of(args), launcher_args(args)
    # Where the ranks will run, told before an emulated network is built for them.
    network = network_kind(bool(args.emulate or args.prefix), args.on_modelled_network, mpiexec_args, launcher)
    if args.selection and args.modes is not None:
        raise InputError("--selection chooses the mode; --modes cannot be given with it")
    if args.selection and args.sizes:
        raise InputError("--selection chooses one mode for the run's size; a --sizes sweep measures them all (tune)")
    args.modes = args.modes or list(DEFAULT_MODES)
    stepped = any(m in STEPPED_MODES for m in args.modes)
    schedule = schedule_from_args(args, shared=STEPPED_OPTIONS if stepped else ())
    if args.selection:
        args.modes = [selected_mode(args.selection, schedule)]
    violations = checked_schedule(schedule, args.force, args.schedule or "the schedule")
    validity = {"schedule_valid": not violations, "violations": violations}
    if args.sizes:
        return cmd_run_sizes(args, schedule, launcher, mpiexec_args, validity, network)
    mode_schedules = stepped_schedules(args, schedule, args.modes)
    plan = exchange_plan(schedule)
    # Refuse what cannot fit before building an emulated network or launching anything
    # (run_exchange checks again, by the same rule, once the network is up).
    check_memory_on(network, plan)
    title = (f"{schedule.network.name}: {schedule.exchange.name}, {schedule.info.algorithm} "
             f"({plural(schedule.length, 'frame')})")
    started = utc_now()
    with emulated_hosts(schedule.network, args.emulate, args.prefix, args) as namespace:
        if namespace is not None:
            err.print(f"emulated network up: {plural(len(namespace), 'namespace')}")
        err.print(f"running {schedule.info.algorithm} on {transfers_of(schedule)}: "
                  f"{', '.join(args.modes)}, {args.warmup} warm-up and {plural(args.repeats, 'timed run')} each")
        try:
            result = run_exchange(schedule, args.modes, args.repeats, args.warmup, not args.no_verify, namespace,
                                  timeout_s=args.timeout, mpiexec_args=mpiexec_args,
                                  on_modelled_network=args.on_modelled_network, plan=plan,
                                  mode_schedules=mode_schedules, launcher=launcher, progress=args.progress,
                                  prepost=not args.no_prepost, timeline=bool(args.timeline),
                                  time_scale=time_scale_of(namespace), pace_headroom=args.pace_headroom)
        except ExchangeFailedError as e:
            if e.partial is not None:
                about = metadata(args, schedule, launcher, mpiexec_args, e.partial.mpi_library, started)
                report_result(args, e.partial, schedule, title, validity | {"failed": str(e), "metadata": about},
                              mode_schedules)
            raise
    about = metadata(args, schedule, launcher, mpiexec_args, result.mpi_library, started)
    if args.timeline:
        report_timeline(args, result, schedule, mode_schedules)
    return report_result(args, result, schedule, title, validity | {"metadata": about}, mode_schedules)


def selected_mode(path: str, schedule: Schedule) -> str:
    """The mode the selection table at ``path`` chooses for ``schedule``'s mean message (the
    bytes that cross the network over the transfers that cross it), refused where the table was
    measured with other ranks or on another network; says what it chose and why."""
    from ..execute import exchange_plan
    from ..execute.prediction import crossing_exchange
    from ..execute.selection import SelectionTable, network_fingerprint

    table = SelectionTable.load(path)
    table.check(exchange_plan(schedule).size, network_fingerprint(schedule.network))
    crossing = crossing_exchange(schedule)
    mean = crossing.total_bytes / len(crossing) if crossing is not None else 0
    choice = table.choose(mean)
    err.print(f"selected by {path}: {choice.mode} ({choice.reason}; these messages average {mean:,.0f} bytes)",
              markup=False)
    return choice.mode


def report_timeline(args: argparse.Namespace, result: ExchangeResult, schedule: Schedule,
                    mode_schedules: dict[str, Schedule] | None) -> None:
    """Write ``--timeline`` (every timed run's events, each mode's breakdown of its median run),
    draw ``--timeline-plot`` and print the breakdown."""
    from ..execute import crossing_lambda_s
    from ..execute.timeline import PARTS, breakdown_rows, median_run, mode_breakdown, plot_timelines

    lambda_s = crossing_lambda_s(schedule) or 0.0
    breakdowns, runs, doc = {}, [], {"lambda_s": lambda_s, "parts": list(PARTS), "modes": {}}
    for m in result.modes:
        if not m.timelines or not any(any(rank) for run in m.timelines for rank in run):
            continue  # the library's own modes record nothing
        own = (mode_schedules or {}).get(m.mode, schedule)
        breakdowns[m.mode] = mode_breakdown(own, m.mode, m.times_s, m.timelines, lambda_s)
        runs.append((m.mode, m.timelines[median_run(m.times_s)]))
        doc["modes"][m.mode] = {"times_s": m.times_s, "breakdown": breakdowns[m.mode],
                                "events": "per timed run, per rank: [kind, transfer, frame, start_s, end_s]",
                                "timelines": m.timelines}
    write_document(doc, args.timeline)
    if args.timeline_plot and runs:
        plot_timelines(runs, args.timeline_plot)
    if not args.json:
        table = Table("mode", "measured ms", "model ms", "gap ms", *(f"{p} ms" for p in PARTS),
                      title="where the time goes (median run; the parts add up to the gap)")
        for row in breakdown_rows(breakdowns):
            table.add_row(*row)
        print_unwrapped(table)


def metadata(args: argparse.Namespace, schedule: Schedule, launcher: Any, mpiexec_args: list[str],
             mpi_library: str, started: str, sizes: list[int] | None = None) -> dict[str, Any]:
    """The ``metadata`` block of a run's report: what ran, how, where and when.

    Parameters
    ----------
    args
        The ``run`` command's arguments: its modes, repeats, warm-up runs, timeout and command
        line.
    schedule
        The schedule given (its network's, traffic's and algorithm's names).
    launcher
        The :class:`~liquidsched.execute.Launcher` that started the ranks.
    mpiexec_args
        The launcher's further arguments (``--launcher-args``), as split into words.
    mpi_library
        The MPI library the ranks reported (empty when no rank reported it).
    started
        When the run started (:func:`~liquidsched.execute.metadata.utc_now`).
    sizes
        The sizes of a ``--sizes`` sweep, in bytes; None for a run at one size.

    Returns
    -------
    dict
        :func:`~liquidsched.execute.metadata.run_metadata`'s block.
    """
    from ..execute.metadata import run_metadata

    return run_metadata(topology=schedule.network.name, traffic=schedule.exchange.name,
                        algorithm=schedule.info.algorithm, modes=args.modes, repeats=args.repeats,
                        warmup=args.warmup, mpi_library=mpi_library, launcher=launcher, launcher_args=mpiexec_args,
                        timeout_s=args.timeout, sizes_bytes=sizes, started_utc=started,
                        command_line=getattr(args, "command_line", None))


def cmd_run_sizes(args: argparse.Namespace, schedule: Schedule, launcher: Any, mpiexec_args: list[str],
                  validity: dict[str, Any], network: str) -> int:
    """``run --sizes``: every mode at every size, with a progress bar over the sizes. Every
    size's schedule (scaled or planned again) is validated like the one given, and the largest
    checked against this machine's memory (``network``: :func:`~liquidsched.execute.network_kind`),
    before an emulated network is built or anything launched."""
    from rich.progress import BarColumn, MofNCompleteColumn, TextColumn, TimeElapsedColumn

    from ..execute import check_memory_on, exchange_plan
    from ..execute.metadata import utc_now
    from ..execute.sizes import SizedSchedules, SizesFailedError, format_size, run_sizes
    from ..schedulers import plan

    sizes = args.sizes
    stepped = any(m in STEPPED_MODES for m in args.modes)
    replan = None
    if not args.schedule:
        # The options as schedule_from_args took them, for the same scheduler at another size.
        options = algorithm_options(args, args.algorithm, shared=STEPPED_OPTIONS if stepped else ())
        replan = lambda traffic: plan(schedule.network, traffic, args.algorithm, **options)  # noqa: E731
    sized = SizedSchedules(schedule, replan)
    validity = sized_validity(args, sized, sizes, validity)
    check_memory_on(network, exchange_plan(sized(max(sizes))))
    own = (lambda s: stepped_schedules(args, s, args.modes)) if stepped else None
    started = utc_now()
    with emulated_hosts(schedule.network, args.emulate, args.prefix, args) as namespace:
        err.print(f"running {schedule.info.algorithm} on {transfers_of(schedule)} at "
                  f"{plural(len(sizes), 'size')} ({format_size(sizes[0])} to {format_size(sizes[-1])}): "
                  f"{', '.join(args.modes)}, {args.warmup} warm-up and {plural(args.repeats, 'timed run')} each")
        columns = (TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(), TimeElapsedColumn())
        with progress_bar(*columns) as progress:
            task = progress.add_task(f"size {format_size(sizes[0])}", total=len(sizes))

            def advance(done: int, total: int) -> None:
                shown = f"size {format_size(sizes[done])}" if done < total else "sizes"
                progress.update(task, completed=done, description=shown)

            try:
                result = run_sizes(sized, sizes, args.modes, own, advance, repeats=args.repeats, warmup=args.warmup,
                                   verify=not args.no_verify, namespaces=namespace, timeout_s=args.timeout,
                                   mpiexec_args=mpiexec_args, on_modelled_network=args.on_modelled_network,
                                   launcher=launcher, time_scale=time_scale_of(namespace),
                                   pace_headroom=args.pace_headroom)
            except SizesFailedError as e:
                if e.partial.points:
                    about = metadata(args, schedule, launcher, mpiexec_args, e.partial.mpi_library, started, sizes)
                    report_sizes(args, e.partial, schedule, validity | {"failed": str(e), "metadata": about})
                raise
    about = metadata(args, schedule, launcher, mpiexec_args, result.mpi_library, started, sizes)
    return report_sizes(args, result, schedule, validity | {"metadata": about})


def sized_validity(args: argparse.Namespace, sized: Any, sizes: list[int],
                   validity: dict[str, Any]) -> dict[str, Any]:
    """Validate the schedule at every size of a sweep (:func:`checked_schedule`: refused unless
    ``--force``), made once here so that the sweep runs the schedules validated.

    Parameters
    ----------
    args
        The ``run`` command's arguments (``--schedule``, ``--force``).
    sized
        The :class:`~liquidsched.execute.sizes.SizedSchedules` of the sweep.
    sizes
        The sizes, in bytes.
    validity
        The given schedule's ``schedule_valid`` and ``violations``.

    Returns
    -------
    dict
        ``schedule_valid`` (every schedule valid) and ``violations``: the given schedule's, then
        each size's, prefixed with that size.

    Raises
    ------
    InputError
        when a size's schedule is invalid and ``--force`` is not given.
    """
    from ..execute.sizes import format_size

    violations = list(validity["violations"])
    for size in sizes:
        at = sized(size)
        where = f"{args.schedule or 'the schedule'} {sized.made[size]} for {format_size(size)}"
        violations += [f"at {format_size(size)}: {v}" for v in checked_schedule(at, getattr(args, "force", False),
                                                                                where)]
    return {"schedule_valid": not violations, "violations": violations}


def report_sizes(args: argparse.Namespace, result: Any, schedule: Schedule, extra: dict[str, Any]) -> int:
    """Write (``--output``), plot (``--plot``) and print a sweep; the exit status (1 when bytes
    were wrong)."""
    doc = {"metadata": extra.pop("metadata"), **result.to_dict(), **extra}
    if args.output:
        write_document(doc, args.output)
    if args.plot:
        from ..plot import plot_message_sizes

        plot_message_sizes(doc, args.plot)
    if args.json:
        print_json(doc)
    else:
        table = sizes_table(result, f"{schedule.network.name}: {schedule.exchange.name}, {schedule.info.algorithm}; "
                                   f"{args.repeats} timed runs per size and mode")
        print_unwrapped(table)
        liquid = result.points[0].result.info.get("liquid_throughput_Bps") if result.points else None
        if result.comparable and liquid:
            out.print(f"liquid throughput: {mbps(liquid)} at every size (equal transfers)", markup=False)
        for line in report_notes(result.points[0].result, extra):
            out.print(line, markup=False)
    wrong = [m for p in result.points for m in p.result.modes if m.verified is False]
    return 1 if wrong else 0


def print_unwrapped(renderable: Any) -> None:
    """Print on the standard output: to a file or a pipe as wide as it needs to be, in a
    terminal folded, never cut (the rule of :data:`~liquidsched.cli.common.out`)."""
    out.print(renderable)


def format_time(seconds: float) -> str:
    """A time in µs below a millisecond, in ms below a second, else in s."""
    if seconds < 1e-3:
        return f"{seconds * 1e6:.1f} µs"
    return f"{seconds * 1e3:.2f} ms" if seconds < 1 else f"{seconds:.3f} s"


def sizes_table(result: Any, title: str) -> Table:
    """Sizes as rows, one row per mode within each: the timed runs' statistics, the throughput
    (median) and, on the modelled network only, its ratio to the liquid throughput."""
    from ..execute.sizes import format_size

    table = Table(title=title, caption=f"network: {result.network}; p95: nearest rank; throughput: bytes that "
                                       "cross the network / median")
    for name in ("size", "mode", "mean", "std", "min", "median", "p95", "throughput", "of liquid", "bytes"):
        table.add_column(name, justify="left" if name in ("size", "mode", "bytes") else "right")
    for point in result.points:
        rows = point.mode_rows()
        for k, row in enumerate(rows):
            ratio = "n/a" if row["ratio_to_bound"] is None else percent(row["ratio_to_bound"])
            check = {True: "exact", False: "WRONG", None: "not checked"}[row["verified"]]
            table.add_row(format_size(point.size_bytes) if k == 0 else "", row["mode"],
                          # One run has no spread: a std of 0 would claim one.
                          *("one run" if key == "std_s" and len(row["times_s"]) == 1 else format_time(row[key])
                            for key in ("mean_s", "std_s", "min_s", "median_s", "p95_s")),
                          mbps(row["throughput_Bps"]), ratio, check, end_section=k == len(rows) - 1)
    return table


def report_result(args: argparse.Namespace, result: ExchangeResult, schedule: Schedule, title: str,
                  extra: dict[str, Any], mode_schedules: dict[str, Schedule] | None = None) -> int:
    """Write and print the report of ``result``; the exit status (1 when bytes were wrong)."""
    modes = [m.mode for m in result.modes]
    predicted = predictions(schedule, modes, mode_schedules, args.pace_headroom)
    report = result.to_dict() | extra | {"predicted_ratio_to_bound": predicted,
                                         "emulated": result.network == "emulated",
                                         "pace_headroom": args.pace_headroom}
    if args.output:
        write_document(report, args.output)
    if args.json:
        print_json(report)
    else:
        print_unwrapped(result_table(result, predicted, title, mbps))
        for line in report_notes(result, extra):
            out.print(line, markup=False)
    return 0 if all(m.verified is not False for m in result.modes) else 1


def report_notes(result: ExchangeResult, extra: dict[str, Any]) -> list[str]:
    """The lines under the table: the network, the self transfers, an invalid schedule."""
    from ..execute import NETWORKS

    notes = [f"network: {NETWORKS[result.network]}"]
    if not result.comparable:
        notes.append("  not compared with the liquid throughput, which is the modelled network's "
                     "(--emulate runs on an emulated one; --on-modelled-network declares a real one)")
    selfs = result.info.get("self_transfers", {})
    if selfs.get("count"):
        notes.append(f"self transfers: {selfs['count']} ({selfs['bytes']:,} bytes) were local copies; throughput, "
                     "liquid throughput and prediction count only the transfers that cross the network")
    if not extra.get("schedule_valid", True):
        notes.append(f"schedule: INVALID ({plural(len(extra['violations']), 'violation')}), run with --force")
    return notes


def result_table(result: ExchangeResult, predicted: dict[str, float | None], title: str, mbps: Any) -> Table:
    """One row per mode: runs, median and spread, throughput, ratio to the bound (only when
    measured on the modelled network), prediction."""
    table = Table("mode", "schedule", "runs", "median", "min – max", "throughput", "of liquid", "predicted", "bytes",
                  title=title, caption=f"network: {result.network}")
    for m in result.modes:
        check = {True: "exact", False: "WRONG", None: "not checked"}[m.verified]
        ratio = percent(m.ratio_to_bound) if m.comparable else "n/a"
        guess = predicted.get(m.mode)
        table.add_row(m.mode, m.algorithm, str(len(m.times_s)), f"{m.median_s * 1e3:.2f} ms",
                      "one run" if len(m.times_s) == 1 else f"{min(m.times_s) * 1e3:.2f} – {max(m.times_s) * 1e3:.2f} ms",
                      mbps(m.throughput_Bps),
                      ratio, "—" if guess is None else percent(guess), check)
    return table


def cmd_netem_up(args: argparse.Namespace) -> int:
    from .. import emulate as em
    from ..topologies import resolve_topology

    settings = EMULATION_DEFAULTS | emulation_settings(args)
    plan = em.plan_emulation(resolve_topology(args.topology), args.prefix, **settings)
    em.up(plan)
    err.print(f"up: {len(plan.namespace)} namespaces {args.prefix}-n*, {len(plan.cables)} cables "
              f"(liquidsched netem down --prefix {args.prefix} removes them)")
    err.print(describe_emulation(plan), markup=False)
    if not args.no_check:
        report_single_flow(plan)
    return 0


def cmd_netem_down(args: argparse.Namespace) -> int:
    from .. import emulate as em

    removed = em.down(args.prefix)
    err.print(f"down: removed {removed} namespaces {args.prefix}-n*")
    return 0


def cmd_netem_status(args: argparse.Namespace) -> int:
    from .. import emulate as em

    names = em.existing(args.prefix)
    info: dict[str, Any] = {"prefix": args.prefix, "namespaces": len(names)}
    if names:
        plan = em.load_state(args.prefix)
        info |= {"network": plan.network.name, **plan.settings(),
                 "tcp_congestion_control": em.congestion_control(plan),
                 "hosts": {h: plan.namespace[h] for h in plan.hosts()},
                 "links_tx_bytes": em.link_counters(plan),
                 "links_queue_bytes": {lid: em.link_queue_bytes(plan, lid) for lid in plan.network.links}}
    if args.json:
        print_json(info)
        return 0
    if not names:
        out.print(f"no emulated network with prefix {args.prefix!r}")
        return 0
    table = Table("link", "namespace", "queue", "sent", title=f"{info['network']}: {len(names)} namespaces "
                                                               f"{args.prefix}-n*")
    for lid, sent in info["links_tx_bytes"].items():
        table.add_row(lid, plan.egress(lid)[0], f"{info['links_queue_bytes'][lid]:,} B", f"{sent:,} B")
    out.print(table)
    out.print(f"{describe_emulation(plan)}; congestion control {info['tcp_congestion_control']}", markup=False)
    return 0


def add_parsers(sub: argparse._SubParsersAction) -> None:
    from ..emulate import DEFAULT_PREFIX

    p = sub.add_parser("run", help=command_help("run"))
    add_schedule_options(p)
    p.add_argument("--selection", metavar="TABLE.json",
                   help="run the one mode this selection table (from liquidsched tune) measured fastest at the size "
                        "nearest these messages' mean; refused when measured with other ranks or on another network")
    p.add_argument("--modes", type=_modes, default=None, metavar="M1,M2",
                   help=f"execution modes (default {','.join(DEFAULT_MODES)}; all: {mode_names()}); shuffle and "
                        "pairwise run their scheduler's schedule for the same traffic unless --algorithm is it, with "
                        "--permutation, --remap, --packet-bytes and --window")
    p.add_argument("--repeats", type=count_arg, default=5, help="timed runs per mode (default 5)")
    p.add_argument("--warmup", type=natural_arg, default=1, help="untimed runs before them (default 1)")
    p.add_argument("--no-verify", action="store_true", help="do not check the received bytes")
    p.add_argument("--progress", choices=("sleep", "spin"), default="sleep",
                   help="how liquidsched's modes wait for their messages: sleep (test, sleep up to 0.5 ms, test "
                        "again: leaves the processor to the kernel; default) or spin (as MPI does)")
    p.add_argument("--no-prepost", action="store_true",
                   help="frames mode: post each frame's receives when the frame starts, not all before the first")
    add_pace_headroom(p)
    p.add_argument("--timeline", metavar="FILE.json",
                   help="record every timed run's timeline (per rank: each piece posted and received, each barrier) "
                        "and print where the time goes against the model")
    p.add_argument("--timeline-plot", metavar="FILE.png|pdf|svg",
                   help="with --timeline: ranks against time for the median run of each mode")
    p.add_argument("--emulate", action="store_true",
                   help="build the schedule's network as an emulated network for this run (root)")
    p.add_argument("--prefix", help=f"the emulated network's prefix (default {DEFAULT_PREFIX}); without "
                                    "--emulate, run in the network 'netem up' built with it")
    add_emulation_options(p)
    add_launch_options(p, DEFAULT_TIMEOUT_S)
    p.add_argument("--on-modelled-network", action="store_true",
                   help="declare that the ranks run on the modelled network (a cluster, with its host file in "
                        "--launcher-args): only then, or emulated, is the ratio to the liquid throughput shown")
    p.add_argument("--force", action="store_true", help="run a schedule that check finds invalid (the report says so)")
    p.add_argument("--sizes", type=_sizes, metavar="FIRST:LAST:xK|FIRST:LAST:+STEP|A,B,...",
                   help="run at each of these sizes (units allowed, e.g. 1KiB:64MiB:x4), every transfer carrying it: "
                        "an all-to-all-like traffic of equal transfers; mean, std, min, median and p95 per size and "
                        "mode")
    p.add_argument("--plot", metavar="FILE.png|pdf|svg", help="with --sizes: time and throughput against size")
    p.add_argument("--output", metavar="RESULTS.json", help="write the measurements (- for standard output)")
    p.set_defaults(run=cmd_run)

    netem = sub.add_parser("netem", help=command_help("netem"))
    nsub = netem.add_subparsers(dest="netem_command", required=True)
    p = nsub.add_parser("up", help="build a topology as namespaces, veth cables and tc rate limits")
    p.add_argument("--topology", required=True, metavar="NAME|FILE")
    p.add_argument("--prefix", default=DEFAULT_PREFIX)
    p.add_argument("--no-check", action="store_true",
                   help="skip the check that one TCP flow reaches its link rate (0.5 s)")
    add_emulation_options(p)
    p.set_defaults(run=cmd_netem_up)
    p = nsub.add_parser("down", help="remove everything an emulated network created")
    p.add_argument("--prefix", default=DEFAULT_PREFIX)
    p.set_defaults(run=cmd_netem_down)
    p = nsub.add_parser("status", help="the emulated network, how it models the network, its queues and link "
                                       "counters")
    p.add_argument("--prefix", default=DEFAULT_PREFIX)
    p.add_argument("--json", action="store_true")
    p.set_defaults(run=cmd_netem_status)

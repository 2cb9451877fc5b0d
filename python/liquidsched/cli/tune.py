"""``liquidsched tune``: measure every way of running an exchange at each message size and write
the selection table that ``run --selection``, the mpi4py API and the interposition library
choose from (:mod:`liquidsched.execute.selection`).

The candidates are liquidsched's modes (frames, dependency-driven, paced, all at once, paper
002's pairwise exchange) and the MPI library's own collectives: ``MPI_Alltoallv`` and, for an
all-to-all of equal messages, ``MPI_Alltoall`` with MPICH's own choice and each of its
algorithms forced. Every candidate runs the same number of times at each size, in the same
launch order, on the same network; the table keeps every run.
"""

from __future__ import annotations

import argparse
from typing import Any

from rich.table import Table

from ..errors import InputError
from ..io.files import write_document
from .common import (add_pace_headroom, add_schedule_options, algorithm_options, command_help, count_arg, err,
                     natural_arg, print_json, schedule_from_args)
from .emulation import add_launch_options, emulated_hosts, launcher_args, launcher_of

#: liquidsched's modes measured unless told.
OWN_CANDIDATES = ("frames", "dependency-driven", "paced", "all-at-once", "pairwise")
#: The library's collectives measured unless told; the ``MPI_Alltoall`` ones only for an
#: all-to-all of equal messages.
LIBRARY_CANDIDATES = ("alltoallv",)
ALLTOALL_CANDIDATES = ("alltoall", "alltoall-brucks", "alltoall-pairwise")


def candidates(schedule: Any) -> list[str]:
    """The modes measured for ``schedule`` unless ``--modes`` says: every mode of liquidsched and
    the library's collectives that apply to its traffic."""
    from ..execute.plan import exchange_plan

    equal = exchange_plan(schedule).block_bytes() is not None
    return [*OWN_CANDIDATES, *LIBRARY_CANDIDATES, *(ALLTOALL_CANDIDATES if equal else ())]


def cmd_tune(args: argparse.Namespace) -> int:
    from ..execute.selection import SelectionTable, measured_on

    if args.repeats < 1 or args.warmup < 0:
        raise InputError(f"--repeats must be at least 1 and --warmup at least 0, got {args.repeats}, {args.warmup}")
    if args.calls is not None and not args.pmpi:
        raise InputError("--calls: for --pmpi only (the benchmark's calls per launch)")
    network, traffic_name, sweep, time_scale = (measure_through_pmpi if args.pmpi else measure_in_executor)(args)
    about = measured_on(network, sweep["hosts"], sweep["mpi_library"], sweep["network"],
                        getattr(args, "buffers", None), time_scale, traffic_name, args.pace_headroom)
    if args.pmpi:
        about["measured_through"] = sweep["measured_through"]
    table = SelectionTable.from_sweep(sweep, about)
    write_document(table.to_dict(), args.output)
    if args.plot:
        from ..plot import plot_message_sizes

        plot_message_sizes({"metadata": {}, **sweep}, args.plot)
    if args.json:
        print_json(table.to_dict())
    else:
        from .run import print_unwrapped

        print_unwrapped(selection_table(table))
    err.print(f"selection table written to {args.output}", markup=False)
    return 0


def measure_in_executor(args: argparse.Namespace) -> tuple[Any, str, dict[str, Any], float]:
    """Every candidate run by liquidsched's executor (mpi4py) at every size: the network, the
    traffic's name, the sweep's document and the emulation's time scale."""
    from ..execute import check_memory_on, exchange_plan, network_kind
    from ..execute.plan import STEPPED_MODES
    from ..execute.sizes import SizedSchedules, format_size, run_sizes
    from ..schedulers import plan
    from ..emulate.addressing import time_scale_of
    from .run import STEPPED_OPTIONS, sized_validity, stepped_schedules

    launcher, mpiexec_args = launcher_of(args), launcher_args(args)
    network = network_kind(bool(args.emulate or args.prefix), args.on_modelled_network, mpiexec_args, launcher)
    schedule = schedule_from_args(args, shared=STEPPED_OPTIONS)
    modes = args.modes or candidates(schedule)
    replan = None
    if not args.schedule:
        options = algorithm_options(args, args.algorithm, shared=STEPPED_OPTIONS)
        replan = lambda traffic: plan(schedule.network, traffic, args.algorithm, **options)  # noqa: E731
    sized = SizedSchedules(schedule, replan)
    sized_validity(args, sized, args.sizes, {"violations": []})
    check_memory_on(network, exchange_plan(sized(max(args.sizes))))
    own = (lambda s: stepped_schedules(args, s, modes)) if any(m in STEPPED_MODES for m in modes) else None
    with emulated_hosts(schedule.network, args.emulate, args.prefix, args) as namespace:
        err.print(f"tuning {len(modes)} candidates at {len(args.sizes)} sizes ({format_size(args.sizes[0])} to "
                  f"{format_size(args.sizes[-1])}), {args.warmup} warm-up and {args.repeats} timed runs each: "
                  f"{', '.join(modes)}", markup=False)
        result = run_sizes(sized, args.sizes, modes, own, on_size=lambda done, total: err.print(
            f"  {done}/{total} sizes measured", markup=False), repeats=args.repeats, warmup=args.warmup,
            verify=True, namespaces=namespace, timeout_s=args.timeout, mpiexec_args=mpiexec_args,
            on_modelled_network=args.on_modelled_network, launcher=launcher, time_scale=time_scale_of(namespace),
            pace_headroom=args.pace_headroom)
        time_scale = time_scale_of(namespace)
    return schedule.network, schedule.traffic.name, result.to_dict(), time_scale


#: Timed calls per size in each launch of the benchmark under ``--pmpi`` unless told.
PMPI_CALLS = 10


def measure_through_pmpi(args: argparse.Namespace) -> tuple[Any, str, dict[str, Any], float]:
    """Every candidate timed by the C benchmark as the interposition library runs it
    (:mod:`liquidsched.execute.library_tuning`): the network, the traffic's name, the sweep's
    document and the emulation's time scale."""
    from ..emulate import DEFAULT_PREFIX
    from ..emulate.addressing import time_scale_of
    from ..execute import network_kind
    from ..execute.library_tuning import (PMPI_CANDIDATES, SMALL_CALLS_FACTOR, benchmark_program, benchmark_run,
                                          check_all_to_all, measure_through_library)
    from ..execute.launch import application_hosts, pmpi_library
    from ..execute.sizes import format_size
    from rich.progress import BarColumn, MofNCompleteColumn, TextColumn, TimeElapsedColumn

    from .common import problem, progress_bar

    given = [flag for flag, key in (("--schedule", "schedule"), ("--algorithm", "algorithm"), ("--alloc", "alloc"))
             if getattr(args, key, None) is not None]
    if given:
        raise InputError(f"{', '.join(given)}: not with --pmpi, where the interposition library plans its own "
                         "schedules for the benchmark's all-to-all of every host (as in an application)")
    if not args.topology:
        raise InputError("--pmpi needs --topology (and an all-to-all --traffic)")
    if args.traffic is None:
        args.traffic = "all-to-all"
    modes = args.modes or list(PMPI_CANDIDATES)
    for m in modes:
        benchmark_run(m)
    net, traffic = problem(args)
    check_all_to_all(traffic, application_hosts(net))
    benchmark = benchmark_program()
    pmpi_library()  # refused before any network is built when it is missing
    launcher, extra = launcher_of(args), launcher_args(args)
    kind = network_kind(bool(args.emulate or args.prefix), args.on_modelled_network, extra, launcher)
    calls = args.calls or PMPI_CALLS
    prefix = args.prefix or (DEFAULT_PREFIX if args.emulate else None)
    with emulated_hosts(net, args.emulate, args.prefix, args) as namespace:
        time_scale = time_scale_of(namespace)
        sizes = (f"{len(args.sizes)} sizes ({format_size(args.sizes[0])} to {format_size(args.sizes[-1])})"
                 if len(args.sizes) > 1 else format_size(args.sizes[0]))
        rounds = f"{args.repeats} round{'s' if args.repeats > 1 else ''}"
        err.print(f"tuning through the interposition library: {len(modes)} candidates at {sizes}, {rounds} of one "
                  f"launch each, {calls} timed calls per size ({SMALL_CALLS_FACTOR * calls} up to 8 KiB) after "
                  f"{args.warmup} warm-up: "
                  f"{', '.join(modes)}",
                  markup=False)
        columns = (TextColumn("launches"), BarColumn(), MofNCompleteColumn(), TimeElapsedColumn())
        with progress_bar(*columns, hidden=args.json) as bar:
            task = bar.add_task("launches", total=args.repeats * len(modes))

            def on_launch(done: int, total: int) -> None:
                bar.update(task, completed=done)
                if not err.is_interactive:
                    err.print(f"  {done}/{total} launches done", markup=False)

            sweep = measure_through_library(
                net, traffic, args.sizes, modes, benchmark, rounds=args.repeats, calls=calls, warmup=args.warmup,
                namespace=namespace, prefix=prefix, network_kind=kind,
                launcher=launcher, launcher_args=extra, timeout_s=args.timeout, time_scale=time_scale,
                pace_headroom=args.pace_headroom, on_launch=on_launch)
    return net, traffic.name, sweep, time_scale


def selection_table(table: Any) -> Table:
    """One row per size: the mode chosen, its median, the best library mode's and the ratio."""
    from ..execute.plan import library_mode_env
    from ..execute.sizes import format_size
    from .run import format_time

    view = Table("size", "chosen", "median", "best library mode", "its median", "library / chosen",
                 title=f"selection on {table.measured_on['topology']} ({table.measured_on['ranks']} ranks, "
                       f"{table.measured_on['network']})")
    for row in table.sizes:
        modes = row["modes"]
        library = [m for m in modes if library_mode_env(m) is not None]
        chosen = modes[row["best"]]["median_s"]
        if library:
            best_library = min(library, key=lambda m: modes[m]["median_s"])
            lib_median = modes[best_library]["median_s"]
            view.add_row(format_size(row["size_bytes"]), row["best"], format_time(chosen), best_library,
                         format_time(lib_median), f"{lib_median / chosen:.2f}")
        else:
            view.add_row(format_size(row["size_bytes"]), row["best"], format_time(chosen), "—", "—", "—")
    return view


def add_parsers(sub: argparse._SubParsersAction) -> None:
    from ..emulate import DEFAULT_PREFIX
    from ..execute import DEFAULT_TIMEOUT_S
    from .emulation import add_emulation_options
    from .run import _modes, _sizes

    p = sub.add_parser("tune", help=command_help("tune"))
    add_schedule_options(p)
    p.add_argument("--sizes", type=_sizes, required=True, metavar="FIRST:LAST:xK|A,B,...",
                   help="message sizes to measure, units allowed (e.g. 1KiB:16MiB:x4)")
    p.add_argument("--modes", type=_modes, metavar="M1,M2",
                   help="the candidates (default: every liquidsched mode, MPI_Alltoallv and, for an all-to-all of "
                        "equal messages, MPI_Alltoall with each of MPICH's algorithms)")
    p.add_argument("--repeats", type=count_arg, default=7, help="timed runs per size and candidate (default 7)")
    p.add_argument("--warmup", type=natural_arg, default=1, help="untimed runs before them (default 1)")
    add_pace_headroom(p)
    p.add_argument("--emulate", action="store_true", help="measure on the schedule's network, emulated (root)")
    p.add_argument("--prefix", help=f"the emulated network's prefix (default {DEFAULT_PREFIX}); without --emulate, "
                                    "measure in the network 'netem up' built with it")
    add_emulation_options(p)
    add_launch_options(p, DEFAULT_TIMEOUT_S)
    p.add_argument("--pmpi", action="store_true",
                   help="time the candidates as the interposition library runs them: the C benchmark "
                        "(pmpi/build/alltoall_bench, make pmpi) under the library with frames or paced forced, and "
                        "MPICH's own collectives alone; the table for launch --pmpi --selection (default candidates "
                        "frames, paced, alltoall, alltoallv; --repeats rounds of one launch per candidate)")
    p.add_argument("--calls", type=count_arg, metavar="N",
                   help=f"--pmpi: timed calls per size in each launch, ten times as many up to 8 KiB (default "
                        f"{PMPI_CALLS}); their average is one timed run")
    p.add_argument("--on-modelled-network", action="store_true",
                   help="declare that the ranks run on the modelled network (a cluster, with its host file)")
    p.add_argument("--output", required=True, metavar="TABLE.json", help="the selection table to write")
    p.add_argument("--plot", metavar="FILE.png|pdf|svg", help="time and throughput against size, per candidate")
    p.set_defaults(run=cmd_tune)

"""``liquidsched run`` and ``liquidsched netem up|down|status``: executing schedules for real."""

from __future__ import annotations

import argparse
import contextlib
from typing import Any, Iterator

from rich.table import Table

from ..errors import InputError
from ..execute import MODES, PREDICTION_OF_MODE, ExchangeResult, run_exchange
from ..io.files import write_document
from ..schedule import Schedule
from .common import add_schedule_options, command_help, err, mbps, out, print_json, schedule_from_args


def _modes(text: str) -> list[str]:
    modes = [m.strip() for m in text.split(",") if m.strip()]
    bad = [m for m in modes if m not in MODES]
    if bad or not modes:
        raise argparse.ArgumentTypeError(f"unknown mode {bad[0] if bad else '(none)'!r} (modes: {', '.join(MODES)})")
    twice = sorted({m for m in modes if modes.count(m) > 1})
    if twice:
        raise argparse.ArgumentTypeError(f"mode {twice[0]!r} given twice")
    return modes


def predictions(schedule: Schedule, modes: list[str]) -> dict[str, float]:
    """The simulator's ratio to the liquid throughput for each mode."""
    from ..simulate import simulate

    return {mode: simulate(schedule, *PREDICTION_OF_MODE[mode]).ratio_to_bound for mode in modes}


@contextlib.contextmanager
def emulated_hosts(schedule: Schedule, emulate: bool, prefix: str | None) -> Iterator[dict[str, str] | None]:
    """Host namespaces for the run: a network built for it (``emulate``), one already up
    (``prefix``), or None to run the ranks here."""
    from .. import emulate as em

    if emulate:
        with em.Emulation(schedule.network, prefix or em.DEFAULT_PREFIX) as plan:
            report_single_flow(plan)
            yield plan.namespace
    elif prefix:
        plan = em.load_state(prefix)
        if plan.network != schedule.network:
            raise InputError(f"the emulated network {prefix!r} is {plan.network.name}, "
                             f"not the schedule's network {schedule.network.name}")
        yield plan.namespace
    else:
        yield None


def cmd_run(args: argparse.Namespace) -> int:
    schedule = schedule_from_args(args)
    with emulated_hosts(schedule, args.emulate, args.prefix) as namespace:
        if namespace is not None:
            err.print(f"emulated network up: {len(namespace)} namespaces")
        err.print(f"running {schedule.info.algorithm} on {len(schedule.traffic)} transfers: "
                  f"{', '.join(args.modes)}, {args.warmup} warm-up and {args.repeats} timed runs each")
        result = run_exchange(schedule, args.modes, args.repeats, args.warmup, not args.no_verify, namespace,
                              mpiexec_args=args.mpiexec_args.split() if args.mpiexec_args else ())
    predicted = predictions(schedule, args.modes)
    report = result.to_dict() | {"predicted_ratio_to_bound": predicted,
                                 "emulated": namespace is not None}
    if args.output:
        write_document(report, args.output)
    if args.json:
        print_json(report)
        return 0
    out.print(result_table(result, predicted, f"{schedule.network.name}: {schedule.traffic.name}, "
                                              f"{schedule.info.algorithm} ({schedule.length} frames)", mbps))
    return 0 if all(m.verified is not False for m in result.modes) else 1


def result_table(result: ExchangeResult, predicted: dict[str, float], title: str, mbps: Any) -> Table:
    """One row per mode: runs, median and spread, throughput, ratio to the bound, prediction."""
    table = Table("mode", "runs", "median", "min – max", "throughput", "of liquid", "predicted", "bytes",
                  title=title)
    for m in result.modes:
        check = {True: "exact", False: "WRONG", None: "not checked"}[m.verified]
        table.add_row(m.mode, str(len(m.times_s)), f"{m.median_s * 1e3:.2f} ms",
                      f"{min(m.times_s) * 1e3:.2f} – {max(m.times_s) * 1e3:.2f} ms", mbps(m.throughput_Bps),
                      f"{m.ratio_to_bound:.1%}", f"{predicted[m.mode]:.1%}", check)
    return table


def cmd_netem_up(args: argparse.Namespace) -> int:
    from .. import emulate as em
    from ..topologies import resolve_topology

    plan = em.plan_emulation(resolve_topology(args.topology), args.prefix)
    em.up(plan)
    err.print(f"up: {len(plan.namespace)} namespaces {args.prefix}-n*, {len(plan.cables)} cables "
              f"(liquidsched netem down --prefix {args.prefix} removes them)")
    if not args.no_check:
        report_single_flow(plan)
    return 0


def report_single_flow(plan: Any) -> None:
    """Check that one TCP flow between the first sender and the last other receiver reaches
    its narrowest link's rate; warn when the machine, not the emulated links, is the limit."""
    from .. import emulate as em

    net = plan.network
    src = net.senders()[0]
    dst = [h for h in net.receivers() if h != src][-1]
    check = em.single_flow_check(plan, src, dst, seconds=0.5)
    err.print(f"single flow {src} → {dst}: {check['ratio']:.1%} of its narrowest link")
    if check["ratio"] < 0.9:
        err.print("warning: below 90 %: the machine, not the emulated links, limits this flow")


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
        info |= {"network": plan.network.name, "hosts": {h: plan.namespace[h] for h in plan.hosts()},
                 "links_tx_bytes": em.link_counters(plan)}
    if args.json:
        print_json(info)
        return 0
    if not names:
        out.print(f"no emulated network with prefix {args.prefix!r}")
        return 0
    table = Table("link", "namespace", "sent", title=f"{info['network']}: {len(names)} namespaces {args.prefix}-n*")
    for lid, sent in info["links_tx_bytes"].items():
        table.add_row(lid, plan.egress(lid)[0], f"{sent:,} B")
    out.print(table)
    return 0


def add_parsers(sub: argparse._SubParsersAction) -> None:
    from ..emulate import DEFAULT_PREFIX

    p = sub.add_parser("run", help=command_help("run"))
    add_schedule_options(p)
    p.add_argument("--modes", type=_modes, default=list(MODES), metavar="M1,M2",
                   help=f"execution modes (default all: {','.join(MODES)})")
    p.add_argument("--repeats", type=int, default=5, help="timed runs per mode (default 5)")
    p.add_argument("--warmup", type=int, default=1, help="untimed runs before them (default 1)")
    p.add_argument("--no-verify", action="store_true", help="do not check the received bytes")
    p.add_argument("--emulate", action="store_true",
                   help="build the schedule's network as an emulated network for this run (root)")
    p.add_argument("--prefix", help=f"the emulated network's prefix (default {DEFAULT_PREFIX}); without "
                                    "--emulate, run in the network 'netem up' built with it")
    p.add_argument("--mpiexec-args", metavar="'ARGS'", help="further mpiexec arguments, e.g. '-f hostfile'")
    p.add_argument("--output", metavar="RESULTS.json", help="write the measurements (- for standard output)")
    p.set_defaults(run=cmd_run)

    netem = sub.add_parser("netem", help=command_help("netem"))
    nsub = netem.add_subparsers(dest="netem_command", required=True)
    p = nsub.add_parser("up", help="build a topology as namespaces, veth cables and tc rate limits")
    p.add_argument("--topology", required=True, metavar="NAME|FILE")
    p.add_argument("--prefix", default=DEFAULT_PREFIX)
    p.add_argument("--no-check", action="store_true",
                   help="skip the check that one TCP flow reaches its link rate (0.5 s)")
    p.set_defaults(run=cmd_netem_up)
    p = nsub.add_parser("down", help="remove everything an emulated network created")
    p.add_argument("--prefix", default=DEFAULT_PREFIX)
    p.set_defaults(run=cmd_netem_down)
    p = nsub.add_parser("status", help="the emulated network and its link counters")
    p.add_argument("--prefix", default=DEFAULT_PREFIX)
    p.add_argument("--json", action="store_true")
    p.set_defaults(run=cmd_netem_status)

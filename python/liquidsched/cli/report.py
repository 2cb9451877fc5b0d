"""``liquidsched report``: one self-contained HTML page for a network and traffic, a schedule or
a run (:mod:`liquidsched.report`)."""

from __future__ import annotations

import argparse

from ..errors import InputError
from .common import add_schedule_options, command_help, out, problem, schedule_from_args


def cmd_report(args: argparse.Namespace) -> int:
    from ..io.files import read_document
    from ..report import write_report
    from ..report.content import read_run_measurements

    if args.json:
        raise InputError("report writes a page (--output); --json does not apply")
    run = (read_run_measurements(read_document(args.run_file, InputError), args.run_file)
           if args.run_file else None)
    if args.schedule or args.algorithm:
        data = write_report(args.output, schedule=schedule_from_args(args), run=run)
    elif args.topology:
        net, traffic = problem(args)
        data = write_report(args.output, net=net, traffic=traffic, run=run)
    elif run is not None:
        data = write_report(args.output, run=run)
    else:
        raise InputError("give --topology (with --traffic and, to draw a schedule, --algorithm), --schedule FILE "
                         "or --run RUN.json")
    shown = [k for k, v in data.items() if v is not None]
    if args.output != "-":
        out.print(f"wrote {args.output}: {', '.join(shown)}")
    return 0


def add_parsers(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("report", help=command_help("report"))
    add_schedule_options(p)
    p.add_argument("--run", dest="run_file", metavar="RUN.json", help="a run's JSON (run --output): measured against predicted")
    p.add_argument("--output", required=True, metavar="REPORT.html", help="the page to write ('-': standard output)")
    p.set_defaults(run=cmd_report)

"""The ``liquidsched`` command line: one module per command group (``topology``, ``plan`` for
bound/plan/check, ``simulate``, ``sweep``, ``run`` for run/netem), with what they share in
:mod:`~liquidsched.cli.common` below them.

Every command has ``--help``. A user error prints one line, ``liquidsched: error: ...``, and
exits with status 2; ``check`` exits with 1 when the schedule is invalid; a reader that closes
the pipe early (``| head``) ends the command quietly with status 141, as a shell tool killed by
SIGPIPE. Output paths are checked before any work starts (:mod:`liquidsched.io.output`).
Modules are imported by the commands that need them, so ``--help`` starts fast.
"""

from __future__ import annotations

import argparse
import os
import sys
from typing import Sequence

from . import plan as plan_commands
from . import run as run_commands
from . import simulate as simulate_commands
from . import sweep as sweep_commands
from . import topology as topology_commands
from .common import check_outputs, err

#: Exit status of a command whose reader closed the pipe (128 + SIGPIPE).
EXIT_CLOSED_PIPE = 141


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="liquidsched", description=(
        "Topology-aware scheduling of collective data exchanges: the liquid throughput of a traffic, "
        "schedules, their validation, prediction and execution."))
    sub = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")
    topology_commands.add_parsers(sub)
    plan_commands.add_parsers(sub)
    simulate_commands.add_parsers(sub)
    run_commands.add_parsers(sub)
    sweep_commands.add_parsers(sub)
    return parser


def _silence_stdout() -> None:
    """Point standard output at /dev/null, so that flushing it at exit after the reader went
    away does not raise again."""
    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
    except (OSError, ValueError):
        pass


def main(argv: Sequence[str] | None = None) -> int:
    from ..errors import LiquidschedError

    parser = build_parser()
    args = parser.parse_args(argv)
    try:
        check_outputs(args)
        return args.run(args)
    except LiquidschedError as e:
        err.print(f"liquidsched: error: {e}", markup=False, soft_wrap=True)
        return 2
    except BrokenPipeError:
        _silence_stdout()
        return EXIT_CLOSED_PIPE
    except KeyboardInterrupt:
        err.print("liquidsched: interrupted")
        return 130


__all__ = ["EXIT_CLOSED_PIPE", "build_parser", "main"]

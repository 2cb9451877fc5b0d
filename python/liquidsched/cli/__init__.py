"""The ``liquidsched`` command line: one module per command group (``topology``, ``plan`` for
bound/plan/check, ``simulate``, ``sweep``, ``run`` for run/netem, ``calibrate``, ``steady``, ``hostfile``), with what they
share in :mod:`~liquidsched.cli.common` and :mod:`~liquidsched.cli.emulation` below them.

Every command has ``--help``. A user error prints one line, ``liquidsched: error: ...``, and
exits with status 2; ``check`` exits with 1 when the schedule is invalid; a reader that closes
the pipe early (``| head``) ends the command quietly with status 141, as a shell tool killed by
SIGPIPE. Output paths are checked before any work starts (:mod:`liquidsched.io.output`).
Modules are imported by the commands that need them, so ``--help`` starts fast.
"""

from __future__ import annotations

import argparse
import importlib
import os
import sys
from typing import Sequence

from .common import COMMANDS, check_outputs, err

#: Exit status of a command whose reader closed the pipe (128 + SIGPIPE).
EXIT_CLOSED_PIPE = 141


def _command_word(argv: Sequence[str]) -> str | None:
    return next((a for a in argv if not a.startswith("-")), None)


def build_parser(argv: Sequence[str] | None = None) -> argparse.ArgumentParser:
    """The parser, with the arguments of the command ``argv`` names (all commands when
    ``argv`` is None); the other commands are listed by name and help only, so that their
    modules, and what they import, stay unloaded."""
    parser = argparse.ArgumentParser(prog="liquidsched", description=(
        "Topology-aware scheduling of collective data exchanges: the liquid throughput of a traffic, "
        "schedules, their validation, prediction and execution."))
    sub = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")
    word = None if argv is None else _command_word(argv)
    wanted = {module for module, _ in COMMANDS.values()} if argv is None else (
        {COMMANDS[word][0]} if word in COMMANDS else set())
    for module in dict.fromkeys(module for module, _ in COMMANDS.values()):
        if module in wanted:
            importlib.import_module(f".{module}", __name__).add_parsers(sub)
    for name, (module, help_text) in COMMANDS.items():
        if module not in wanted:
            sub.add_parser(name, help=help_text)
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

    argv = sys.argv[1:] if argv is None else list(argv)
    args = build_parser(argv).parse_args(argv)
    # Kept for the reports that say what was run (run's JSON metadata).
    args.command_line = ["liquidsched", *argv]
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

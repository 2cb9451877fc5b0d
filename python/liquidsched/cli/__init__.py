"""The ``liquidsched`` command line: one module per command group (``topology``, ``plan`` for
bound/plan/check, ``simulate``, ``sweep``, ``run`` for run/netem, ``calibrate``, ``steady``, ``hostfile``), with what they
share in :mod:`~liquidsched.cli.common` and :mod:`~liquidsched.cli.emulation` below them.

Every command has ``--help``. A user error prints one line, ``liquidsched: error: ...`` (an
option the parser refuses: ``liquidsched plan: error: ... (see liquidsched plan --help)``), and
exits with status 2; ``check`` exits with 1 when the schedule is invalid; a reader that closes
the pipe early (``| head``) ends the command quietly with status 141, as a shell tool killed by
SIGPIPE; Ctrl-C, at any moment, ends it with one line and status 130. Output paths are checked
before any work starts (:mod:`liquidsched.io.output`). Modules are imported by the commands that
need them, so ``--help`` starts fast.
"""

# The console script calls main() as soon as this module is loaded: it imports nothing the
# interpreter has not loaded already, so that Ctrl-C while a command's modules load is caught by
# main like Ctrl-C at any other moment.
from __future__ import annotations

import os
import sys

import _signal

TYPE_CHECKING = False
if TYPE_CHECKING:  # pragma: no cover
    import argparse
    from typing import Sequence

#: Exit status of a command whose reader closed the pipe (128 + SIGPIPE).
EXIT_CLOSED_PIPE = 141
#: Exit status of a command stopped by Ctrl-C (128 + SIGINT).
EXIT_INTERRUPTED = 130
#: Exit status of a command stopped by a bug of liquidsched (EX_SOFTWARE of sysexits.h).
EXIT_INTERNAL_ERROR = 70

# Run as the console script, whose next statements call main(): until main is running, Ctrl-C
# ends the process as the system's default does, quietly (status 128 + 2 in the shell), not
# with a KeyboardInterrupt traceback from the script's own lines. Imported by anything else (a
# test, a notebook), the module leaves signals alone.
_QUIET_UNTIL_MAIN = (os.path.basename(sys.argv[0]) in ("liquidsched", "liquidsched.exe")
                     and _signal.getsignal(_signal.SIGINT) is _signal.default_int_handler)
if _QUIET_UNTIL_MAIN:
    _signal.signal(_signal.SIGINT, _signal.SIG_DFL)


def main(argv: Sequence[str] | None = None) -> int:
    """Run the command ``argv`` (default: the process's arguments) and return its exit status.

    Parameters
    ----------
    argv : sequence of str, optional
        The arguments after ``liquidsched``.

    Returns
    -------
    int
        0 on success; 1 for an invalid schedule (``check``) or wrong bytes received (``run``);
        2 for a user error, printed as one line; 130 after Ctrl-C; 141 when the reader of
        standard output went away; 70 for a bug of liquidsched, one line too (its traceback
        when the environment sets ``LIQUIDSCHED_TRACEBACK``).

    Raises
    ------
    SystemExit
        from the parser: after ``--help`` (status 0) or an option it refuses (status 2, one line).
    """
    global _QUIET_UNTIL_MAIN
    try:
        if _QUIET_UNTIL_MAIN:
            _QUIET_UNTIL_MAIN = False
            _signal.signal(_signal.SIGINT, _signal.default_int_handler)
        return _run(sys.argv[1:] if argv is None else list(argv))
    except KeyboardInterrupt:
        return _interrupted()
    except BrokenPipeError:
        _silence_stdout()
        return EXIT_CLOSED_PIPE
    except Exception as e:
        from ..errors import LiquidschedError

        if _caused_by_interrupt(e):
            return _interrupted()
        if isinstance(e, LiquidschedError):  # standard output failed at the command's last flush
            _say(f"liquidsched: error: {e}")
            return 2
        # A bug, not the user's error: still one line, with a way to see where it happened.
        if os.environ.get("LIQUIDSCHED_TRACEBACK"):
            raise
        _say(f"liquidsched: internal error: {type(e).__name__}: {' '.join(str(e).split())[:500]} "
             f"(a bug in liquidsched; LIQUIDSCHED_TRACEBACK=1 shows where)")
        return EXIT_INTERNAL_ERROR


def _interrupted() -> int:
    """Say that Ctrl-C ended the command, in one line, and return its exit status."""
    _say("liquidsched: interrupted")
    return EXIT_INTERRUPTED


def _caused_by_interrupt(error: BaseException) -> bool:
    """Whether Ctrl-C is what ``error`` wraps: Python turns a KeyboardInterrupt raised while a
    class is being created (in a descriptor's ``__set_name__``: ``ipaddress``, which ``pathlib``
    imports at start-up, has such classes) into a RuntimeError whose cause it is; no bug."""
    seen: set[int] = set()
    while error is not None and id(error) not in seen:
        if isinstance(error, KeyboardInterrupt):
            return True
        seen.add(id(error))
        error = error.__cause__ or error.__context__
    return False


def _run(argv: list[str]) -> int:
    stdout, unraisable = sys.stdout, sys.unraisablehook
    sys.stdout = wrapped = _StandardOutput(stdout)
    sys.unraisablehook = _interrupt_again(unraisable)
    try:
        status = _command(argv)
    finally:
        sys.unraisablehook = unraisable
        # Flushed here, not at exit: a reader gone by the last write is a closed pipe too.
        try:
            wrapped.flush()
        except BrokenPipeError:
            _silence_stdout()
            raise
        finally:
            sys.stdout = stdout
    return status


def _interrupt_again(hook):
    """An unraisable-exception hook that raises Ctrl-C again when Python had to drop it.

    A signal that arrives while Python runs a callback it cannot propagate from (a weak
    reference's, as the import system's locks have) raises KeyboardInterrupt there; Python then
    prints it as "Exception ignored" with a traceback, and the command goes on as if no one had
    pressed Ctrl-C. Raised again, the interrupt is handled at the next ordinary step: in the main
    thread not from the hook itself (a hook is such a callback too, and a signal raised there is
    handled there), but from a timer's signal a millisecond later; from another thread, the
    signal goes to the main thread as it is."""

    def hook_or_interrupt(unraisable) -> None:
        if not isinstance(unraisable.exc_value, KeyboardInterrupt):
            hook(unraisable)
            return
        import threading

        if threading.current_thread() is not threading.main_thread():
            _signal.raise_signal(_signal.SIGINT)
            return
        _signal.signal(_signal.SIGALRM, _interrupt_now)
        _signal.setitimer(_signal.ITIMER_REAL, 0.001)

    return hook_or_interrupt


def _interrupt_now(signum, frame) -> None:
    """The timer's signal handler of :func:`_interrupt_again`: Ctrl-C, where it can propagate."""
    raise KeyboardInterrupt


def _command(argv: list[str]) -> int:
    from ..errors import LiquidschedError
    from .common import check_outputs, err

    args = build_parser(argv).parse_args(argv)
    # Kept for the reports that say what was run (run's JSON metadata).
    args.command_line = ["liquidsched", *argv]
    try:
        check_outputs(args)
        return args.run(args)
    except LiquidschedError as e:
        err.print(f"liquidsched: error: {e}", markup=False, soft_wrap=True)
        return 2


class _StandardOutput:
    """Standard output for the length of a command: written whole (:func:`_whole_writes`); a
    character its encoding cannot show escaped; a write that fails for another reason than a
    closed pipe (a full device, descriptor 1 closed when Python started) is the one-line error
    :func:`~liquidsched.io.output.stdout_error`."""

    def __init__(self, stream) -> None:
        self._stream = _closed_output() if stream is None else _whole_writes(stream)

    def write(self, text: str) -> int:
        try:
            return self._call("write", text)
        except UnicodeEncodeError:
            # An encoding that cannot show a character (Λ under PYTHONIOENCODING=ascii): escaped,
            # as Python writes standard error, rather than the command lost.
            encoding = getattr(self._stream, "encoding", None) or "ascii"
            return self._call("write", text.encode(encoding, "backslashreplace").decode(encoding))

    def flush(self) -> None:
        self._call("flush")

    def _call(self, method: str, *args):
        try:
            return getattr(self._stream, method)(*args)
        except BrokenPipeError:
            raise
        except OSError as e:
            from ..io.output import stdout_error

            _silence_stdout()  # what is still buffered goes nowhere, now or at exit
            raise stdout_error(e) from None

    def __getattr__(self, name: str):
        return getattr(self._stream, name)


def _closed_output():
    """A stream in place of standard output when Python found descriptor 1 closed: every write
    fails as a write to it would (made when needed: io is not imported at start-up)."""
    import errno
    import io

    class ClosedOutput(io.TextIOBase):
        def write(self, text: str) -> int:
            raise OSError(errno.EBADF, os.strerror(errno.EBADF))

    return ClosedOutput()


def _whole_writes(stream):
    """``stream``, or when it writes straight to its file descriptor (``PYTHONUNBUFFERED``,
    ``python -u``) a buffered writer on the same descriptor: unbuffered, a write the kernel cuts
    short (the reader went away, a signal) loses the rest without an error, where a buffered
    writer finishes it or raises :class:`BrokenPipeError`. Lines still go out as they are
    written."""
    import io

    raw = getattr(stream, "buffer", None)
    if not isinstance(raw, io.FileIO) or raw.closed:
        return stream
    return io.TextIOWrapper(io.BufferedWriter(io.FileIO(raw.fileno(), "w", closefd=False)),
                            encoding=stream.encoding, errors=stream.errors, line_buffering=True)


def _say(line: str) -> None:
    try:
        sys.stderr.write(line + "\n")
        sys.stderr.flush()
    except (AttributeError, OSError, ValueError):  # standard error closed too
        pass


def _silence_stdout() -> None:
    """Point standard output at /dev/null, so that flushing it at exit after the reader went
    away does not raise again."""
    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
    except (OSError, ValueError):
        pass


def _command_word(argv: Sequence[str]) -> str | None:
    return next((a for a in argv if not a.startswith("-")), None)


def build_parser(argv: Sequence[str] | None = None) -> argparse.ArgumentParser:
    """The parser, with the arguments of the command ``argv`` names (all commands when
    ``argv`` is None); the other commands are listed by name and help only, so that their
    modules, and what they import, stay unloaded."""
    import importlib

    from .common import COMMANDS, Parser

    parser = Parser(prog="liquidsched", description=(
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


__all__ = ["EXIT_CLOSED_PIPE", "EXIT_INTERNAL_ERROR", "EXIT_INTERRUPTED", "build_parser", "main"]

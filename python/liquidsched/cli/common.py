"""What every command shares: the consoles, the problem options (topology, allocation, traffic,
size), the schedule options, output paths, and number formats. Command modules import this one,
never each other."""

from __future__ import annotations

import argparse
import os
import sys
from typing import TYPE_CHECKING, Any, Callable, Iterable, Iterator, NoReturn, Sequence

from rich.console import Console, ConsoleDimensions

if TYPE_CHECKING:  # pragma: no cover
    from rich.progress import Progress
    from rich.table import Table

from ..errors import InputError
from ..io.output import check_output, plot_format

#: The width of a console that is not a terminal (a pipe, a file) when ``COLUMNS`` does not set
#: one: a table is as wide as its longest cells need, up to this.
UNBOUNDED_WIDTH = 10_000


class _Console(Console):
    """A rich console that never cuts a number: written to a pipe or a file, it is as wide as the
    output needs (not the 80 columns rich assumes, nor the width of the terminal the pipe leads
    to); in a terminal, a table cell too wide for its column is folded onto the next line, never
    shortened with "…". A closed pipe reaches :func:`liquidsched.cli.main`, which ends every
    command the same way then (rich would exit with status 1 by itself)."""

    @property
    def size(self) -> ConsoleDimensions:
        size = super().size
        if self._width is None and not self.is_terminal:
            return ConsoleDimensions(UNBOUNDED_WIDTH, size.height)
        return size

    @size.setter
    def size(self, new_size: tuple[int, int]) -> None:
        self._width, self._height = new_size

    def print(self, *objects: Any, **kwargs: Any) -> None:
        # No table can exist before rich.table is loaded, and --help need not load it.
        table_module = sys.modules.get("rich.table")
        for o in objects:
            if table_module is not None and isinstance(o, table_module.Table):
                fold_cells(o)
        super().print(*objects, **kwargs)

    def on_broken_pipe(self) -> None:
        self.quiet = True
        raise BrokenPipeError


def progress_bar(*columns: Any, hidden: bool = False) -> Progress:
    """A transient progress bar of ``columns`` on the error stream, shown only to someone
    watching a terminal: elsewhere rich would draw nothing and still end it with an empty line,
    the line before a one-line error."""
    from rich.progress import Progress

    return Progress(*columns, console=err, transient=True, disable=hidden or not err.is_interactive)


def fold_cells(table: Table) -> Table:
    """``table`` with every column, and every table nested in a cell, wrapping and folding its
    cells rather than cutting them ("…"): the one rule of every table a command prints."""
    for column in table.columns:
        column.no_wrap = False
        if column.overflow in ("ellipsis", "crop"):
            column.overflow = "fold"
        for cell in column._cells:
            if isinstance(cell, type(table)):
                fold_cells(cell)
    return table


# No emoji: a name such as ":x:" in a topology is data, printed as it is written.
out = _Console(highlight=False, emoji=False)
err = _Console(stderr=True, highlight=False, emoji=False)


def _one_line(prog: str, message: str) -> str:
    return f"{prog}: error: {' '.join(message.split())} (see {prog} --help)\n"


def _terminal_columns() -> int:
    """The width :func:`shutil.get_terminal_size` would give, without importing shutil (and bz2
    and lzma with it) to build every parser."""
    columns = os.environ.get("COLUMNS", "")
    if columns.isdigit() and int(columns) > 0:
        return int(columns)
    try:
        return os.get_terminal_size(sys.__stdout__.fileno()).columns or 80
    except (AttributeError, ValueError, OSError):
        return 80


class _HelpFormatter(argparse.HelpFormatter):
    def __init__(self, prog: str, indent_increment: int = 2, max_help_position: int = 24,
                 width: int | None = None) -> None:
        super().__init__(prog, indent_increment, max_help_position,
                         _terminal_columns() - 2 if width is None else width)


class Parser(argparse.ArgumentParser):
    """The parser of every command and subcommand (:meth:`add_subparsers` passes the class on).

    An option refused is one line naming the command, ``liquidsched plan: error: ... (see
    liquidsched plan --help)``, status 2, not argparse's usage block; an argument left over is
    blamed on the command that could not place it. An option added with ``verbatim=True`` takes
    the next word as its value even when it starts with ``-``: the arguments of another program,
    ``--launcher-args --distribution=arbitrary``.
    """

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        kwargs.setdefault("formatter_class", _HelpFormatter)
        super().__init__(*args, **kwargs)
        self._verbatim: set[str] = set()

    def add_argument(self, *args: Any, verbatim: bool = False, **kwargs: Any) -> argparse.Action:
        action = super().add_argument(*args, **kwargs)
        if verbatim:
            self._verbatim.update(action.option_strings)
        return action

    def parse_known_args(self, args: Sequence[str] | None = None,
                         namespace: argparse.Namespace | None = None) -> tuple[argparse.Namespace, list[str]]:
        if args is not None and self._verbatim:
            args = _join_verbatim(list(args), self._verbatim)
        namespace, extras = super().parse_known_args(args, namespace)
        if extras and not hasattr(namespace, _LEFT_OVER_IN):
            # The innermost parser gets here first; the outer ones copy its namespace.
            setattr(namespace, _LEFT_OVER_IN, self.prog)
        return namespace, extras

    def parse_args(self, args: Sequence[str] | None = None,  # type: ignore[override]
                   namespace: argparse.Namespace | None = None) -> argparse.Namespace:
        namespace, extras = self.parse_known_args(args, namespace)
        prog = vars(namespace).pop(_LEFT_OVER_IN, self.prog)
        if extras:
            self.exit(2, _one_line(prog, f"unrecognized arguments: {' '.join(extras)}"))
        return namespace

    def _get_values(self, action: argparse.Action, arg_strings: list[str]) -> Any:
        # Python 3.11 reads ``--size=--`` as the value [] without calling the option's type:
        # the option got no value, and says so as a missing one does.
        if arg_strings == ["--"] and action.option_strings and action.nargs in (None, argparse.OPTIONAL):
            self.error(f"argument {'/'.join(action.option_strings)}: expected one argument")
        return super()._get_values(action, arg_strings)

    def error(self, message: str) -> NoReturn:
        self.exit(2, _one_line(self.prog, message))


#: The namespace attribute naming the command that left an argument over.
_LEFT_OVER_IN = "_liquidsched_left_over_in"


def _join_verbatim(args: list[str], options: set[str]) -> list[str]:
    """``--opt VALUE`` as ``--opt=VALUE`` for the ``options`` that take another program's
    arguments, so that a VALUE starting with ``-`` is not read as an option."""
    joined: list[str] = []
    words = iter(args)
    for word in words:
        if word == "--":
            joined += [word, *words]
            break
        if word in options:
            value = next(words, None)
            joined.append(word if value is None else f"{word}={value}")
        else:
            joined.append(word)
    return joined


class Later:
    """Text made when first shown: the names in a help line (topologies, generators, schedulers)
    whose modules building a parser need not load; argparse formats it like a string."""

    def __init__(self, make: Callable[[], str]) -> None:
        self._make = make

    def __str__(self) -> str:
        return self._make()

    def __mod__(self, params: Any) -> str:
        return str(self) % params

    def strip(self) -> str:
        return str(self).strip()


class LaterChoices:
    """The choices of an option, listed when first needed (an argument to check, help to show)."""

    def __init__(self, make: Callable[[], Iterable[str]]) -> None:
        self._make = make
        self._names: list[str] | None = None

    def _list(self) -> list[str]:
        if self._names is None:
            self._names = list(self._make())
        return self._names

    def __contains__(self, name: object) -> bool:
        return name in self._list()

    def __iter__(self) -> Iterator[str]:
        return iter(self._list())

    def __len__(self) -> int:
        return len(self._list())

#: Every command: the module of :mod:`liquidsched.cli` that defines it, and its one-line help.
COMMANDS = {
    "topology": ("topology", "list, show and export topologies"),
    "bound": ("plan", "loads, duration, bottlenecks and liquid throughput of a traffic"),
    "plan": ("plan", "build a schedule and write it"),
    "simulate": ("simulate", "predict what a schedule achieves: frames, circuit or fluid model"),
    "run": ("run", "execute a schedule with MPI, here or in an emulated network, and time it"),
    "netem": ("run", "an emulated network on this machine: up, down, status (root)"),
    "check": ("plan", "validate a schedule file (exit 0 valid, 1 invalid)"),
    "sweep": ("sweep", "liquid throughput of every allocation, grouped into classes"),
    "calibrate": ("calibrate", "measure paper 002's cost parameters by ping-pong; predict exchanges from them"),
    "steady": ("steady", "optimal steady state of a series of scatters, all-to-alls or reduces (paper 003)"),
    "hostfile": ("hostfile", "write the rank-to-machine order of a run as a launcher's host file"),
    "pmpi-config": ("pmpi", "write the fabric file that lets unmodified MPI applications run liquid schedules"),
    "launch": ("launch", "run your own MPI program, one rank per host, here or in an emulated network"),
    "tune": ("tune", "measure every mode and the MPI library's algorithms per message size; write a selection table"),
    "report": ("report", "one HTML page: the network and its bottlenecks, the bound, the schedule, predictions and "
                         "measurements"),
}


def command_help(name: str) -> str:
    """The one-line help of command ``name``."""
    return COMMANDS[name][1]


#: The traffic of the problem options when ``--traffic`` is not given.
DEFAULT_TRAFFIC = "half-all-to-all"

#: The algorithm ``plan`` uses when none is named (it says so).
DEFAULT_ALGORITHM = "round-robin"


def allocation_arg(text: str) -> list[int]:
    """``--alloc 4,4,0,0``: hosts to use on each switch."""
    try:
        return [int(v) for v in text.split(",")]
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected comma-separated counts such as 4,4,0,0, got {text!r}") from None


def number_arg(parse: Any, name: str, **bounds: Any) -> Any:
    """An argparse ``type`` that reads an option's value with ``parse``, one of the functions of
    :mod:`liquidsched.units` (the one numeric rule), ``bounds`` passed on; a refused value is
    argparse's error, which names the option."""

    def convert(text: str) -> Any:
        try:
            return parse(text, **bounds)
        except ValueError as e:
            raise argparse.ArgumentTypeError(str(e)) from None

    convert.__name__ = name
    return convert


def headroom_arg(text: str) -> float:
    """``--pace-headroom 0.02``: the paced mode's headroom h
    (:func:`~liquidsched.execute.paced.parse_headroom`)."""
    from ..execute.paced import parse_headroom

    return number_arg(parse_headroom, "share")(text)


def add_pace_headroom(parser: Any) -> None:
    """``--pace-headroom SHARE`` of ``run`` and ``tune``."""
    from ..execute.paced import PACE_HEADROOM

    parser.add_argument("--pace-headroom", type=headroom_arg, default=PACE_HEADROOM, metavar="SHARE",
                        help=f"paced mode: spread every transfer over Λ × (1 + SHARE), so that it takes at most "
                             f"1 / (1 + SHARE) of every link and leaves the rest to TCP's acknowledgements of the other "
                             f"direction (default {PACE_HEADROOM:g}; 0 paces at Λ)")


def size_arg(text: str) -> int:
    """``--size 1MB``: an exact whole number of bytes, units allowed."""
    from ..units import parse_size

    return number_arg(parse_size, "size")(text)


def duration_arg(text: str) -> float:
    """``--latency 30us``: a duration, units allowed (plain numbers are seconds), from 0 to
    :data:`~liquidsched.units.MAX_DURATION_S`."""
    from ..units import parse_duration

    return number_arg(parse_duration, "duration")(text)


def positive_duration_arg(text: str) -> float:
    """``--timeout 10min``: a duration above 0, units allowed."""
    from ..units import parse_duration

    return number_arg(parse_duration, "duration", positive=True)(text)


def rate_arg(text: str) -> float:
    """``--rate 10Gbit/s``: a rate in bytes/s, units allowed."""
    from ..units import parse_rate

    return number_arg(parse_rate, "rate")(text)


def count_arg(text: str) -> int:
    """``--repeats 5``: a whole number of at least 1 (counts of runs, operations, nodes)."""
    from ..units import parse_count

    return number_arg(parse_count, "count")(text)


def natural_arg(text: str) -> int:
    """``--warmup 0``, ``--seed 0``: a whole number of at least 0."""
    from ..units import parse_count

    return number_arg(parse_count, "count", least=0, most=2**63 - 1)(text)


def name_arg(text: str) -> str:
    """``--source NODE``, ``--target NODE``: one name, not empty (an empty one would read as
    "not given", or name no node, depending on the command)."""
    if not text.strip():
        raise argparse.ArgumentTypeError("expected a name, got an empty one")
    return text


def host_list_arg(text: str) -> str:
    """``--hosts A,B,...``, ``--participants A,B,...``: host names separated by commas, none of
    them empty; an empty list is refused rather than read as "every host", which leaving the
    option out means. The text is returned as given."""
    names = [n.strip() for n in text.split(",")]
    if not text.strip():
        raise argparse.ArgumentTypeError("expected host names separated by commas, got an empty list "
                                         "(leave the option out for every host)")
    if "" in names:
        raise argparse.ArgumentTypeError(f"expected host names separated by commas, got an empty name in {text!r}")
    return text


def window_arg(text: str) -> int | str:
    """``--window auto|none|N``: a whole number of steps >= 1, or ``auto`` / ``none``."""
    if text in ("auto", "none"):
        return text
    if not text.strip().lstrip("+").isdigit() or int(text) < 1:
        raise argparse.ArgumentTypeError(f"expected auto, none or a whole number of steps >= 1, got {text!r}")
    # Bounded as every count is (a window of 10^20 steps does not fit the core's integers).
    return count_arg(text)


def add_problem_options(p: argparse.ArgumentParser, topology_required: bool = True) -> None:
    """``--topology``, ``--alloc``, ``--traffic``, ``--size`` and ``--json``."""
    p.add_argument("--topology", required=topology_required, metavar="NAME|FILE",
                   help=Later(lambda: f"a built-in ({', '.join(_topology_names())}), with parameters as "
                                      "NAME:k=v,..., or a YAML/JSON file"))
    p.add_argument("--alloc", type=allocation_arg, metavar="N0,N1,...",
                   help="use the first N_i hosts of the i-th switch with hosts (paper 000 §7)")
    p.add_argument("--traffic", metavar="NAME|FILE",
                   help=Later(lambda: f"a generator ({', '.join(_generator_names())}) or a CSV/JSON/YAML transfer "
                                      "file (default: half-all-to-all)"))
    p.add_argument("--size", type=size_arg, metavar="BYTES",
                   help="transfer size of a generated traffic, or of a JSON/YAML file's transfers that give "
                        "none, e.g. 1MB, 64KiB (default: 1MB for a generator)")
    p.add_argument("--json", action="store_true", help="print JSON instead of a table")


# The names of built-ins, for help and choices: imported when shown or checked, not to build a
# parser (the schedulers and the traffic generators pull in numpy and the core).
def _topology_names() -> list[str]:
    from ..topologies import BUILDERS

    return list(BUILDERS)


def _generator_names() -> list[str]:
    from ..traffic import GENERATORS

    return list(GENERATORS)


def _scheduler_names() -> list[str]:
    from ..schedulers import SCHEDULERS

    return list(SCHEDULERS)


def problem(args: argparse.Namespace):
    """The network and traffic the problem options describe."""
    from ..topologies import resolve_topology
    from ..traffic import DEFAULT_SIZE_BYTES, GENERATORS, SIZED_BY_SPEC, allocation_hosts, make_traffic

    spec = args.traffic or DEFAULT_TRAFFIC
    name = spec.partition(":")[0]
    sized = ", ".join(g for g in GENERATORS if g not in SIZED_BY_SPEC)
    # A CSV gives every transfer its size; a JSON/YAML transfer without size_bytes takes --size.
    if args.size is not None and name not in GENERATORS and spec.lower().endswith(".csv"):
        raise InputError(f"--size applies to a generated traffic ({sized}) or to the transfers "
                         f"of a JSON/YAML file that give no size_bytes; the sizes of {spec} are in the file")
    if args.size is not None and name in SIZED_BY_SPEC:
        raise InputError(f"--size applies to a generated traffic ({sized}); {name} sizes its transfers itself "
                         f"({SIZED_BY_SPEC[name]})")
    net = resolve_topology(args.topology)
    hosts = allocation_hosts(net, args.alloc) if args.alloc is not None else None
    return net, make_traffic(net, spec, hosts, args.size or DEFAULT_SIZE_BYTES, file_size_bytes=args.size)


def add_algorithm_options(p: argparse.ArgumentParser, default: str | None, overhead: bool = True) -> None:
    """``--algorithm`` and the options of some algorithms: ``--seed``, ``--time-limit``,
    ``--node-limit`` and, unless the command has its own, ``--overhead``."""
    shown = f" (default {default})" if default else ""
    p.add_argument("--algorithm", choices=LaterChoices(_scheduler_names), default=None, metavar="NAME",
                   help=Later(lambda: f"the scheduler: {', '.join(_scheduler_names())}{shown}"))
    p.add_argument("--seed", type=natural_arg, help="random: the seed (default 0)")
    p.add_argument("--time-limit", type=duration_arg, metavar="TIME",
                   help="liquid, cpsat: stop after TIME (such as 30s, 500ms or 2min; plain numbers are seconds) "
                        "with the best schedule found")
    p.add_argument("--node-limit", type=natural_arg, metavar="N", help="liquid: stop after N search nodes")
    p.add_argument("--memo-limit", type=size_arg, metavar="SIZE",
                   help="liquid: the memory its memo of sub-traffics without a schedule may take, such as 64MiB "
                        "(default 256MiB; a smaller one makes proofs longer, never wrong)")
    p.add_argument("--permutation", choices=["shift", "xor", "edge-colour"],
                   help="shuffle, pairwise: the node-contention-free order (default xor for shuffle, edge-colour "
                        "for pairwise)")
    p.add_argument("--remap", action="store_true", default=None,
                   help="shuffle, pairwise: remap node ids so that the hosts of one switch do not converge on the "
                        "same remote switch (paper 002 eq. 5)")
    p.add_argument("--packet-bytes", type=size_arg, metavar="SIZE",
                   help="shuffle: the packet each message is cut into (default 64KiB)")
    p.add_argument("--window", type=window_arg, metavar="auto|none|N",
                   help="shuffle: the global window W_g in steps (in a step a node sends one packet to one "
                        "partner): it sends step k while fewer than W earlier steps are not wholly received "
                        "(auto: from the links' buffer_packets; default auto where a link declares one, else none)")
    p.add_argument("--gpus", type=count_arg, metavar="G",
                   help="fast, hierarchical, rails: accelerators per server, G consecutive hosts in network order "
                        "(default: from host names such as s3.g1, as the rail-optimised and two-tier builders give)")
    p.add_argument("--chunks", type=count_arg, metavar="N",
                   help="hierarchical, rails: parts each message between servers is cut into, pipelined through "
                        "the forwarding accelerator (default 4)")
    if overhead:
        p.add_argument("--overhead", type=duration_arg, metavar="TIME",
                       help="ggp, oggp, solstice, weighted: β, the cost of starting a step, such as 1ms or 250us "
                            "(plain numbers are seconds; default 0)")


#: Options that only some algorithms take: argument → (flag, algorithms, keyword of the algorithm).
ALGORITHM_OPTIONS = {"seed": ("--seed", ("random",), "seed"),
                     "time_limit": ("--time-limit", ("liquid", "cpsat"), "time_limit"),
                     "node_limit": ("--node-limit", ("liquid",), "node_limit"),
                     "memo_limit": ("--memo-limit", ("liquid",), "memo_limit"),
                     "overhead": ("--overhead", ("ggp", "oggp", "solstice", "weighted"), "overhead_s"),
                     "permutation": ("--permutation", ("shuffle", "pairwise"), "permutation"),
                     "remap": ("--remap", ("shuffle", "pairwise"), "remap"),
                     "packet_bytes": ("--packet-bytes", ("shuffle",), "packet_bytes"),
                     "window": ("--window", ("shuffle",), "window"),
                     "gpus": ("--gpus", ("fast", "hierarchical", "rails"), "gpus"),
                     "chunks": ("--chunks", ("hierarchical", "rails"), "chunks")}


def algorithm_options(args: argparse.Namespace, algorithm: str, shared: tuple[str, ...] = ()) -> dict[str, Any]:
    """The options given for ``algorithm``; one given to an algorithm that does not take it is
    an error, unless it is ``shared``: an option of the command itself (``simulate``'s β), which
    an algorithm that takes it receives too."""
    options: dict[str, Any] = {}
    for key, (flag, algorithms, keyword) in ALGORITHM_OPTIONS.items():
        value = getattr(args, key, None)
        if key in shared:
            if value and algorithm in algorithms:
                options[keyword] = value
            continue
        if value is None:
            continue
        if algorithm not in algorithms:
            raise InputError(f"{flag} applies to --algorithm {' or '.join(algorithms)}, not {algorithm}")
        if key in ("time_limit", "node_limit", "overhead") and not value >= 0:
            raise InputError(f"{flag}: must be non-negative, got {value}")
        options[keyword] = value
    return options


def add_schedule_options(p: argparse.ArgumentParser, overhead: bool = True) -> None:
    """``--schedule FILE``, or the problem options with ``--algorithm`` (and ``--overhead``
    unless the command has its own)."""
    p.add_argument("--schedule", metavar="SCHEDULE.json", help="a schedule file (from plan --output)")
    add_problem_options(p, topology_required=False)
    add_algorithm_options(p, default=None, overhead=overhead)


def schedule_from_args(args: argparse.Namespace, shared: tuple[str, ...] = ()):
    """The schedule of ``--schedule FILE``, or built by ``--algorithm`` for ``--topology``
    (``shared``: see :func:`algorithm_options`)."""
    from ..schedule import Schedule

    if args.schedule:
        given = [flag for flag, key in (("--topology", "topology"), ("--algorithm", "algorithm"),
                                        ("--alloc", "alloc"), ("--traffic", "traffic"), ("--size", "size"))
                 if getattr(args, key, None) is not None]
        given += [flag for key, (flag, _, _) in ALGORITHM_OPTIONS.items()
                  if getattr(args, key, None) is not None and key not in shared]
        if given:
            raise InputError(f"--schedule FILE already fixes the network, traffic and schedule; "
                             f"{', '.join(given)} cannot be given with it")
        return Schedule.load(args.schedule)
    if not (args.topology and args.algorithm):
        raise InputError("give --schedule FILE, or --topology and --algorithm to build the schedule")
    net, traffic = problem(args)
    return planned(net, traffic, args.algorithm, algorithm_options(args, args.algorithm, shared),
                   hidden=getattr(args, "json", False))


def planned(net: Any, traffic: Any, algorithm: str, options: dict[str, Any], hidden: bool = False) -> Any:
    """``plan(net, traffic, algorithm, **options)`` with a transient line on a terminal (unless
    ``hidden``) saying what runs and for how long, with a bar to the time limit if one is given.
    For liquid and cpsat it follows the search (liquid: phase, frames placed, deepest partial
    schedule, nodes; cpsat: best schedule and bound), and a first Ctrl-C stops the search with
    the best schedule it knows, as a spent time limit does; a second one aborts."""
    from rich.progress import BarColumn, SpinnerColumn, TextColumn, TimeElapsedColumn

    from ..schedulers import plan

    limit = options.get("time_limit")
    columns = [SpinnerColumn(), TextColumn("{task.description}")]
    if limit:
        columns.append(BarColumn())
    columns.append(TimeElapsedColumn())
    with progress_bar(*columns, hidden=hidden) as bar:
        task = bar.add_task(algorithm, total=limit or None)
        if algorithm not in ("liquid", "cpsat"):
            return plan(net, traffic, algorithm, **options)
        with _FirstInterruptStops() as interrupt:
            def report(progress: Any) -> bool:
                shown = describe_search(progress)
                if interrupt.asked:
                    shown = f"stopping, the best schedule known follows (Ctrl-C again aborts): {shown}"
                bar.update(task, description=shown, completed=min(progress.elapsed_s, limit) if limit else None)
                return interrupt.asked

            return plan(net, traffic, algorithm, progress=report, **options)


def describe_search(progress: Any) -> str:
    """One line of what a liquid search (its :class:`~liquidsched.schedulers.liquid.SearchProgress`)
    or CP-SAT (:class:`~liquidsched.schedulers.cpsat.CpSatProgress`) is doing.

    Examples
    --------
    >>> from liquidsched.schedulers.liquid import SearchProgress
    >>> describe_search(SearchProgress("search", 640, 500, 512, 12345, 3.0))
    'liquid: search for 640 frames, 500 placed (deepest 512), 12,345 nodes'
    >>> from liquidsched.schedulers.cpsat import CpSatProgress
    >>> describe_search(CpSatProgress(34, 32, 3, 1.0)), describe_search(CpSatProgress(None, 32, 0, 1.0))
    ('cpsat: best 34 frames, bound 32', 'cpsat: no schedule yet, bound 32')
    """
    if not hasattr(progress, "phase"):
        best = "no schedule yet" if progress.best_frames is None else f"best {progress.best_frames:,} frames"
        return f"cpsat: {best}, bound {progress.bound:,}"
    if progress.phase in ("search", "symmetric search"):
        return (f"liquid: {progress.phase} for {progress.target:,} frames, {progress.frames:,} placed "
                f"(deepest {progress.deepest:,}), {progress.nodes:,} nodes")
    if progress.phase == "completion":
        return "liquid: completing the deepest partial schedule"
    return f"liquid: {progress.phase}"


class _FirstInterruptStops:
    """While active, the first Ctrl-C only sets :attr:`asked` (the search then stops with its
    best schedule); Ctrl-C's usual handler is back for the next one. Off the main thread, where
    no handler can be set, Ctrl-C keeps its usual meaning."""

    def __enter__(self) -> _FirstInterruptStops:
        import signal
        import threading

        self.asked = False
        self.previous: Any = None
        if threading.current_thread() is threading.main_thread():
            self.previous = signal.signal(signal.SIGINT, self._first)
        return self

    def _first(self, signum: int, frame: Any) -> None:
        import signal

        self.asked = True
        signal.signal(signal.SIGINT, self.previous)

    def __exit__(self, *exc: Any) -> None:
        import signal

        if self.previous is not None:
            signal.signal(signal.SIGINT, self.previous)


#: The options that name a file to write: argument → (option, whether it is a plot, whose
#: format is its extension's).
OUTPUT_OPTIONS = {"output": ("--output", False), "plot": ("--plot", True),
                  "timeline": ("--timeline", False), "timeline_plot": ("--timeline-plot", True)}


def check_outputs(args: argparse.Namespace) -> None:
    """Refuse, before any work starts, an output path (:data:`OUTPUT_OPTIONS`) that is empty,
    cannot be written or has no plot format, two options that name the same file, and ``-``
    (standard output) beside ``--json``, which prints there."""
    named: dict[str, str] = {}
    for key, (flag, is_plot) in OUTPUT_OPTIONS.items():
        path = getattr(args, key, None)
        if path is None:
            continue
        path = str(path)
        if not path.strip():
            raise InputError(f"{flag}: the path is empty; give a file name, or - for standard output")
        if is_plot:
            plot_format(path)
        check_output(path)
        if path != "-" and path in named:
            raise InputError(f"{named[path]} and {flag} are both {path}")
        named[path] = flag
    if getattr(args, "json", False) and "-" in named:
        raise InputError(f"--json and {named['-']} - would both write to standard output; give {named['-']} a file")


def print_violations(where: str, violations: list[str]) -> None:
    """Every violation of a schedule on the error stream, under one line naming it."""
    from ..wording import plural

    err.print(f"{where}: invalid, {plural(len(violations), 'violation')}:", markup=False)
    for v in violations:
        err.print(f"  {v}", markup=False)


def print_json(data: Any) -> None:
    import json

    print(json.dumps(data, indent=2))


def mbps(rate: float) -> str:
    return f"{rate / 1e6:,.2f} MB/s"


def names(resources: list[str], shown: int = 12) -> str:
    """The first ``shown`` names, then how many more."""
    more = f" and {len(resources) - shown} more" if len(resources) > shown else ""
    return ", ".join(resources[:shown]) + more


def slot_summary(slots: dict[str, int], shown: int = 6) -> str:
    """Resources with more than one slot, grouped by slot count: ``10: e1>root, root>e1``."""
    by_count: dict[int, list[str]] = {}
    for r, k in slots.items():
        by_count.setdefault(k, []).append(r)
    parts = []
    for k in sorted(by_count):
        listed = by_count[k]
        more = f" and {len(listed) - shown} more" if len(listed) > shown else ""
        parts.append(f"{k}: {', '.join(listed[:shown])}{more}")
    return "; ".join(parts)

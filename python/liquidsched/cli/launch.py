"""``liquidsched launch``: the user's own MPI program, one rank per host of a network, here or
in an emulated network, with or without the interposition library.

    liquidsched launch --topology crossbar:n=3 --emulate --prefix lsb --pmpi -- ./app args…

The logic is :func:`liquidsched.execute.launch.launch`'s; this module parses the options, says
where the ranks run, and turns how the launch ended into the exit status: the application's
(the first rank that failed, as the launcher reports it), 124 after ``--timeout``, 128 + N after
signal N (130 for a Ctrl-C, 143 for SIGTERM), 2 for a user error (one line). The application's
output passes through untouched; launch's own lines go to standard error.
"""

from __future__ import annotations

import argparse
import contextlib
from types import SimpleNamespace
from typing import Iterator

from ..errors import InputError
from ..network import Network
from .common import command_help, err, host_list_arg
from .emulation import (EMULATION_DEFAULTS, add_emulation_options, add_launch_options, describe_emulation,
                        emulated_hosts, launcher_args, launcher_of, timeout_arg)


def _say(line: str) -> None:
    err.print(line, markup=False, soft_wrap=True)


def _program(argv: list[str]) -> list[str]:
    """The application's command line: what follows ``--`` (or the first word that is not an
    option of launch)."""
    return argv[1:] if argv[:1] == ["--"] else argv


def _emulation(args: argparse.Namespace):
    """The namespaces of the launch as ``run`` builds them (:func:`emulated_hosts`: the emulation
    options, one flow timed), with a line saying how the network is modelled."""

    @contextlib.contextmanager
    def hosts(network: Network, emulate: bool, prefix: str | None) -> Iterator[dict[str, str] | None]:
        with emulated_hosts(network, emulate, prefix, args) as namespace:
            if namespace is not None:
                settings = SimpleNamespace(**{k: getattr(args, k) for k in EMULATION_DEFAULTS})
                _say(f"emulated network {prefix}: {describe_emulation(settings)}")
            yield namespace

    return hosts


def cmd_launch(args: argparse.Namespace) -> int:
    from ..execute.launch import EXIT_TIMEOUT, LaunchInterrupted, launch, signal_name
    from ..topologies import resolve_topology

    argv = _program(args.argv)
    if not argv:
        raise InputError("no application given: liquidsched launch --topology T [options] -- ./app [args]")
    if args.topology:
        network = resolve_topology(args.topology)
    elif args.prefix and not args.emulate:
        from .. import emulate as em

        network = em.load_state(args.prefix).network
    else:
        raise InputError("give --topology (or --prefix P of a network netem up built)")
    hosts = [h.strip() for h in args.hosts.split(",") if h.strip()] if args.hosts is not None else None
    launcher = launcher_of(args)
    if not (args.emulate or args.prefix):
        given = [f"--{k.replace('_', '-')}" for k in EMULATION_DEFAULTS if getattr(args, k, None) is not None]
        if given:
            raise InputError(f"{', '.join(given)}: for an emulated network only (give --emulate, or --prefix)")
    try:
        result = launch(argv, network, hosts, emulate=args.emulate, prefix=args.prefix, pmpi=args.pmpi,
                        selection=args.selection, launcher=launcher, launcher_args=launcher_args(args),
                        timeout_s=args.timeout, emulation=_emulation(args), report=_say)
    except LaunchInterrupted as e:
        _say(f"liquidsched: interrupted ({signal_name(e.signum)}) before the application started; "
             "everything built was removed")
        return 128 + e.signum
    if result.signum is not None:
        ended = (": the application was ended" + (" (killed)" if result.killed else "") if result.signal_forwarded
                 else f" after the application ended (exit status {result.launcher_returncode})")
        _say(f"liquidsched: interrupted ({signal_name(result.signum)}){ended}")
    elif result.timed_out:
        _say(f"liquidsched: error: the application did not finish within {args.timeout:g} s: it was ended"
             + (" (killed)" if result.killed else "") + f"; exit {EXIT_TIMEOUT}")
    elif result.returncode != 0:
        _say(f"launch: the application failed: exit status {result.returncode}")
    return result.returncode


def add_parsers(sub: argparse._SubParsersAction) -> None:
    from ..emulate import DEFAULT_PREFIX

    p = sub.add_parser("launch", help=command_help("launch"),
                       usage="liquidsched launch --topology NAME|FILE [--emulate [--buffers ...] [--time-scale N] "
                             "[--tcp ...]] [--prefix P] [--pmpi] [--selection TABLE.json] [--hosts H1,H2,...] "
                             "[--launcher ...] [--timeout S] -- PROGRAM [ARGS...]",
                       description="Run your own MPI program with one rank per host of the network, in the network's "
                                   "host order: in an emulated network (--emulate, or --prefix of one netem up built; "
                                   "each rank in its host's namespace, MPICH forced onto TCP), else on this machine. "
                                   "The program's output passes through; its exit status becomes launch's (124 after "
                                   "--timeout, 128+N after signal N). An emulated network built for the launch is "
                                   "removed however it ends.")
    p.add_argument("--topology", metavar="NAME|FILE",
                   help="the network: a built-in with parameters, or a YAML/JSON file (with --prefix alone: "
                        "default the network that is up)")
    p.add_argument("--hosts", type=host_list_arg, metavar="H1,H2,...",
                   help="run on these hosts only, one rank each, ranks in the network's order (default every host)")
    p.add_argument("--emulate", action="store_true",
                   help="build the network as an emulated network for the launch and remove it after (root)")
    p.add_argument("--prefix", help=f"the emulated network's prefix (default {DEFAULT_PREFIX}); without --emulate, "
                                    "launch in the network 'netem up' built with it")
    p.add_argument("--pmpi", action="store_true",
                   help="preload the interposition library (make pmpi builds it) with the network's fabric: "
                        "MPI_Alltoall(v) planned by liquidsched")
    p.add_argument("--selection", metavar="TABLE.json",
                   help="a selection table (liquidsched tune) measured with these ranks on this network, named to "
                        "the ranks by LIQUIDSCHED_SELECTION: the interposition library and the mpi4py API choose "
                        "from it")
    add_emulation_options(p)
    add_launch_options(p, timeout_s=None)
    p.add_argument("--timeout", type=timeout_arg, metavar="TIME",
                   help="end the application after TIME, such as 600 or 10min (plain numbers are seconds; exit 124; "
                        "default: no limit)")
    p.add_argument("argv", nargs=argparse.REMAINDER, metavar="-- PROGRAM [ARGS...]",
                   help="the MPI program and its arguments, after --")
    p.set_defaults(run=cmd_launch)

"""What the commands that run MPI (``run``, ``calibrate``, ``steady --run``) share: the emulated
network, one built for the command or one already up, and the launcher that starts the ranks
(``--launcher``, ``--launcher-args``, ``--timeout``)."""

from __future__ import annotations

import argparse
import contextlib
from typing import Any, Iterator

from ..errors import InputError
from ..network import Network
from .common import err


@contextlib.contextmanager
def emulated_hosts(network: Network, emulate: bool, prefix: str | None) -> Iterator[dict[str, str] | None]:
    """Host namespaces for the run: a network built for it (``emulate``), one already up
    (``prefix``), or None to run the ranks here."""
    from .. import emulate as em

    if emulate:
        with em.Emulation(network, prefix or em.DEFAULT_PREFIX) as plan:
            report_single_flow(plan)
            yield plan.namespace
    elif prefix:
        plan = em.load_state(prefix)
        if plan.network != network:
            raise InputError(f"the emulated network {prefix!r} is {plan.network.name}, "
                             f"not the network {network.name}")
        yield plan.namespace
    else:
        yield None


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


def timeout_arg(text: str) -> float:
    """``--timeout 600``: a positive number of seconds."""
    try:
        value = float(text)
    except ValueError:
        value = float("nan")
    if not value > 0 or value == float("inf"):
        raise argparse.ArgumentTypeError(f"expected a positive number of seconds, got {text!r}")
    return value


def add_launch_options(p: argparse.ArgumentParser, timeout_s: float | None) -> None:
    """``--launcher``, ``--launcher-args`` (also spelt ``--mpiexec-args``) and, with a default
    ``timeout_s``, ``--timeout``."""
    p.add_argument("--launcher", default="mpiexec", metavar="mpiexec|srun|PATH",
                   help="what starts the ranks: mpiexec (default: the one beside this Python, else on PATH), srun "
                        "(Slurm; not with --emulate or --prefix) or the path of an mpiexec-compatible launcher, "
                        "e.g. /opt/openmpi/bin/mpirun")
    p.add_argument("--launcher-args", "--mpiexec-args", dest="mpiexec_args", metavar="'ARGS'",
                   help="further launcher arguments, e.g. '-f hostfile' (mpiexec) or '--distribution=arbitrary' "
                        "(srun; see liquidsched hostfile)")
    if timeout_s is not None:
        p.add_argument("--timeout", type=timeout_arg, default=timeout_s, metavar="SECONDS",
                       help=f"give up the run (every mode; with run --sizes, each size's) after SECONDS, keeping what "
                            f"was measured before (default {timeout_s:g})")


def launcher_of(args: argparse.Namespace) -> Any:
    """The launcher ``--launcher`` names, refused with srun when the ranks would run in this
    machine's namespaces (``--emulate``, ``--prefix``)."""
    from ..execute import SRUN_NAMESPACES, resolve_launcher

    if args.launcher == "srun" and (getattr(args, "emulate", False) or getattr(args, "prefix", None)):
        raise InputError(f"--launcher srun with --emulate or --prefix: {SRUN_NAMESPACES}")
    return resolve_launcher(args.launcher)


def launcher_args(args: argparse.Namespace) -> list[str]:
    """``--launcher-args``, split as a shell would split words (without expansions)."""
    import shlex

    try:
        return shlex.split(args.mpiexec_args) if args.mpiexec_args else []
    except ValueError as e:
        raise InputError(f"--launcher-args {args.mpiexec_args!r}: {e}") from None

"""What the commands that run MPI (``run``, ``calibrate``, ``steady --run``) share: the emulated
network, one built for the command or one already up, how it models the network (``--buffers``,
``--time-scale``, ``--tcp``, ``--queue-bytes``, ``--queue-packets``: :func:`add_emulation_options`),
and the launcher that starts the ranks (``--launcher``, ``--launcher-args``, ``--timeout``)."""

from __future__ import annotations

import argparse
import contextlib
from typing import Any, Iterator

from ..errors import InputError
from ..network import Network
from .common import err


#: The emulation options (:func:`add_emulation_options`) and their defaults.
EMULATION_DEFAULTS: dict[str, Any] = {"buffers": "deep", "time_scale": 1.0, "tcp": "tuned", "queue_bytes": None,
                                      "queue_packets": None}
_OPTION = {"buffers": "--buffers", "time_scale": "--time-scale", "tcp": "--tcp", "queue_bytes": "--queue-bytes",
           "queue_packets": "--queue-packets"}


class _Checked(argparse.Action):
    """An option whose value is refused, when bad, with one line (``liquidsched: error: ...``,
    status 2, as every user error), not argparse's usage and error."""

    def __init__(self, *args: Any, check: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.check = check

    def __call__(self, parser: argparse.ArgumentParser, namespace: argparse.Namespace, values: Any,
                 option_string: str | None = None) -> None:
        try:
            setattr(namespace, self.dest, self.check(values))
        except (InputError, ValueError) as e:
            parser.exit(2, f"liquidsched: error: {option_string} {values}: {_reason(e)}\n")


def _reason(e: Exception) -> str:
    text = str(e)
    return text.split(": ", 1)[1] if ": " in text else text


#: The largest --time-scale: a link a million times slower is already slower than any measurement wants.
MAX_TIME_SCALE = 1e6


def _time_scale(text: str) -> float:
    from ..emulate import check_time_scale
    from ..units import parse_number

    return parse_number(check_time_scale(text), "time scale", least=1, most=MAX_TIME_SCALE)


def _whole(text: str) -> int:
    """``--queue-packets``: a count of frames, by the one numeric rule."""
    from ..units import parse_count

    return parse_count(text, "frames", least=1, most=2**31 - 1)


def _bytes(text: str) -> int:
    """``--queue-bytes``: a size, units allowed (``64KiB``), by the one numeric rule."""
    from ..units import parse_size

    return parse_size(text, "bytes")


def add_emulation_options(p: argparse.ArgumentParser) -> None:
    """``--buffers deep|shallow``, ``--time-scale N``, ``--tcp tuned|default`` and
    ``--queue-bytes`` / ``--queue-packets``: how an emulated network models the network. Left
    out, they are None (the defaults of :data:`EMULATION_DEFAULTS`, or those of the network
    already up with ``--prefix``); a bad time scale or queue is refused with one line."""
    from ..emulate.shaping import SWITCH_CLASSES

    g = p.add_argument_group("emulated network (with --emulate, or netem up)")
    g.add_argument("--buffers", choices=tuple(SWITCH_CLASSES), default=None,
                   help="the switches' queues: deep (a Broadcom Jericho-class switch: 533 bandwidth-delay products "
                        "per port) or shallow (a Broadcom Trident II-class commodity switch: 0.75 of one, here never "
                        "less than 0.4 ms of traffic); a link's own buffer wins (default deep)")
    g.add_argument("--time-scale", action=_Checked, check=_time_scale, default=None, metavar="N",
                   help="run every link N times slower and every latency N times longer (N ≥ 1), so that the "
                        "processors are never the limit; measured times / N are the modelled network's (default 1)")
    g.add_argument("--tcp", choices=("tuned", "default"), default=None,
                   help="the hosts' TCP: tuned (no slow start after idle, socket buffers past the bandwidth-delay "
                        "product, as a tuned cluster) or the kernel's default (default tuned)")
    queue = g.add_mutually_exclusive_group()
    queue.add_argument("--queue-bytes", action=_Checked, check=_bytes, default=None, metavar="SIZE",
                       help="every link's queue in bytes, such as 64KiB, over the regime and the links' own buffers")
    queue.add_argument("--queue-packets", action=_Checked, check=_whole, default=None, metavar="FRAMES",
                       help="every link's queue in full-size frames, over the regime and the links' own buffers")


def emulation_settings(args: argparse.Namespace | None = None, **settings: Any) -> dict[str, Any]:
    """The emulation options given, by keyword of :func:`~liquidsched.emulate.plan_emulation`:
    those of ``args`` (:func:`add_emulation_options`) that are set, over ``settings`` that are not
    None. Options left out are missing."""
    given = {k: v for k, v in settings.items() if v is not None}
    unknown = set(given) - set(EMULATION_DEFAULTS)
    if unknown:
        raise TypeError(f"unknown emulation settings: {', '.join(sorted(unknown))}")
    if args is not None:
        given |= {k: getattr(args, k) for k in EMULATION_DEFAULTS if getattr(args, k, None) is not None}
    return given


@contextlib.contextmanager
def emulated_hosts(network: Network, emulate: bool, prefix: str | None, args: argparse.Namespace | None = None, *,
                   buffers: str | None = None, time_scale: float | None = None, tcp: str | None = None,
                   queue_bytes: int | None = None,
                   queue_packets: int | None = None) -> Iterator[dict[str, str] | None]:
    """Host namespaces for the run: a network built for it (``emulate``), one already up
    (``prefix``), or None to run the ranks here.

    The emulation's settings are the options of ``args`` (:func:`add_emulation_options`) or the
    keywords, else the defaults (deep buffers, time scale 1, tuned TCP). With ``prefix`` alone,
    the network already up has its own, and a setting given that differs is refused.

    Yields
    ------
    Namespaces or None
        Node → namespace (a ``dict``), whose ``time_scale`` attribute is the emulated network's:
        times measured on it, divided by it, are the modelled network's
        (:func:`liquidsched.emulate.time_scale_of` gives 1 for None). With ``args``, its
        ``time_scale`` and the other settings are also written back to ``args``, so that they
        say what the ranks run on.
    """
    from .. import emulate as em

    given = emulation_settings(args, buffers=buffers, time_scale=time_scale, tcp=tcp, queue_bytes=queue_bytes,
                               queue_packets=queue_packets)
    if emulate:
        with em.Emulation(network, prefix or em.DEFAULT_PREFIX, **(EMULATION_DEFAULTS | given)) as plan:
            _record(args, plan)
            report_single_flow(plan)
            yield plan.namespace
    elif prefix:
        plan = em.existing_emulation(network, prefix, given, _OPTION.get)
        _record(args, plan)
        yield plan.namespace
    else:
        yield None


def _record(args: argparse.Namespace | None, plan: Any) -> None:
    if args is not None:
        for key, value in plan.settings().items():
            setattr(args, key, value)


def describe_emulation(plan: Any) -> str:
    """One line: how the emulated network of ``plan`` models the network.

    Examples
    --------
    >>> from liquidsched import build_topology
    >>> from liquidsched.emulate import plan_emulation
    >>> print(describe_emulation(plan_emulation(build_topology("two-switch"), time_scale=2)))
    buffers deep (Broadcom Jericho (BCM88670), as in the Arista 7500R), time scale 2 (links at 1/2 of their capacity: measured times / 2 are the modelled network's), TCP tuned
    """
    from ..emulate.shaping import SWITCH_CLASSES

    if plan.queue_bytes is not None or plan.queue_packets is not None:
        queues = (f"every queue {plan.queue_bytes:,} bytes" if plan.queue_bytes is not None
                  else f"every queue {plan.queue_packets:,} frames")
    else:
        queues = f"buffers {plan.buffers} ({SWITCH_CLASSES[plan.buffers].name})"
    n = f"{plan.time_scale:g}"
    scale = "time scale 1" if plan.time_scale == 1 else (
        f"time scale {n} (links at 1/{n} of their capacity: measured times / {n} are the modelled network's)")
    return f"{queues}, {scale}, TCP {plan.tcp}"


def report_single_flow(plan: Any) -> None:
    """Check that one TCP flow between the first sender and the last other receiver reaches
    its narrowest link's rate; warn when the machine, not the emulated links, is the limit."""
    from .. import emulate as em

    net = plan.network
    src = net.senders()[0]
    dst = [h for h in net.receivers() if h != src][-1]
    check = em.single_flow_check(plan, src, dst, seconds=0.5)
    scaled = f" (at 1/{plan.time_scale:g} of its capacity)" if plan.time_scale != 1 else ""
    err.print(f"single flow {src} → {dst}: {check['ratio']:.1%} of its narrowest link{scaled}")
    if check["ratio"] < 0.9:
        err.print("warning: below 90 %: the machine, not the emulated links, limits this flow")


def timeout_arg(text: str) -> float:
    """``--timeout 600``, ``--timeout 10min``: a duration above 0, units allowed (plain numbers
    are seconds), by the one numeric rule (:func:`~liquidsched.cli.common.positive_duration_arg`)."""
    from .common import positive_duration_arg

    return positive_duration_arg(text)


def add_launch_options(p: argparse.ArgumentParser, timeout_s: float | None) -> None:
    """``--launcher``, ``--launcher-args`` (also spelt ``--mpiexec-args``) and, with a default
    ``timeout_s``, ``--timeout``."""
    p.add_argument("--launcher", default="mpiexec", metavar="mpiexec|srun|PATH",
                   help="what starts the ranks: mpiexec (default: the one beside this Python, else on PATH), srun "
                        "(Slurm; not with --emulate or --prefix) or the path of an mpiexec-compatible launcher, "
                        "e.g. /opt/openmpi/bin/mpirun")
    p.add_argument("--launcher-args", "--mpiexec-args", dest="mpiexec_args", metavar="'ARGS'", verbatim=True,
                   help="further launcher arguments, e.g. '-f hostfile' (mpiexec) or '--distribution=arbitrary' "
                        "(srun; see liquidsched hostfile)")
    if timeout_s is not None:
        p.add_argument("--timeout", type=timeout_arg, default=timeout_s, metavar="TIME",
                       help=f"give up the run (every mode; with run --sizes, each size's) after TIME (such as 600, "
                            f"10min; plain numbers are seconds), keeping what "
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

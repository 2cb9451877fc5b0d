"""Execute a schedule with MPI: an alltoallv-like exchange of numpy buffers between ranks.

Ranks are the traffic's hosts in network order, one process each, started by a launcher
(:func:`launch_command`): ``mpiexec`` (the ``mpich`` wheel's locally; on a cluster, the site's),
Slurm's ``srun``, or another mpiexec-compatible one given by path. Modes:

* ``frames``: frame by frame, a barrier between frames;
* ``dependency-driven`` (formerly ``barrier-free``, still accepted): a piece starts once the
  pieces before it on each of its resources have been received, told by point-to-point
  notifications;
* ``paced``: every transfer sent from the start in chunks at the rate that ends it at Λ
  (:mod:`.paced`), no barrier: the continuous form of a liquid schedule, for any sizes;
* ``all-at-once``: every send and receive posted together;
* ``alltoallv``, ``alltoallv-scattered-N``: ``MPI_Alltoallv`` itself, as the library orders it
  or with MPICH's scattered algorithm posting N messages at a time;
* ``shuffle``: paper 002's synchronous shuffle exchange (Alg. 2): every receive posted, each
  piece sent non-blocking in schedule order while fewer than W of the steps before it are not
  yet wholly received (the schedule's window, ``info.parameters["window"]``), no barrier; a
  waiting rank gives the processor up between polls;
* ``pairwise``: paper 002's pairwise exchange (Alg. 3): each rank one step at a time, waiting
  for its own sends and receives of a step before the next;
* ``alltoall``, ``alltoall-brucks``, ``alltoall-pairwise``, ``alltoall-scattered-N``:
  ``MPI_Alltoall`` with MPICH's own choice, or one of its algorithms forced through its control
  variables (the scattered one posting N sends and receives at a time), for an all-to-all of
  equal messages; each such mode is a launch of its own, since MPICH reads them at start.

The shuffle and pairwise modes are usually given their own schedules (``mode_schedules``: the
``shuffle`` and ``pairwise`` schedulers' for the same traffic); the others run the schedule
given, or ignore it (the MPI library's modes).

How a rank waits (``progress``, :mod:`.progress`): ``spin`` as MPI does, or ``sleep``, testing
its requests and sleeping in between, so that many ranks on few cores leave the processor to
the kernel that moves their bytes. The frames mode can post every receive before its first
frame (``prepost``). Every run can record a timeline (``timeline``): per rank, when each piece
was posted and seen complete and each synchronisation entered and left (:mod:`.timeline`).

Every run can check every received byte. Inside an emulated network
(:mod:`liquidsched.emulate`), each rank runs in its host's namespace and MPICH is told to use TCP
between them (``MPIR_CVAR_NOLOCAL=1``, ``MPIR_CVAR_CH4_NETMOD=ofi``, ``FI_PROVIDER=tcp``): without
that it would silently use shared memory.

Every result says on which network it was measured (:data:`NETWORKS`): the emulated network,
the modelled network as the user declares it (a cluster run with its host file), or somewhere
else (by default: this machine, where the ranks talk through shared memory). Only on the first
two is a ratio to the model's liquid throughput a measurement of the model; elsewhere the
ratio is left out.

A transfer from a host to itself is a local copy in execution, whatever the model says (on the
Swiss-T1 a host sends to itself through its switch). So the measured throughput counts only
the bytes that cross the network and is compared with the liquid throughput of those transfers
alone (:func:`network_schedule`); the result says how many self transfers were local copies.

Before launching, a run whose ranks all run here (:func:`network_kind`) is refused when their
buffers cannot fit in the available memory (:func:`check_memory_on`). A run that fails, or
outlives its timeout (the launcher and every rank are then ended), keeps the modes it measured
before (:class:`ExchangeFailedError`).
"""

from __future__ import annotations

import json
import os
import re
import shutil
import signal
import statistics
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, field
from fractions import Fraction
from pathlib import Path
from typing import Any, Mapping, Sequence

from ..bounds import compute_bound
from ..cost_model import CostParameters
from ..errors import BackendError, InputError
from ..schedule import Piece, Schedule
from ..traffic import Traffic
from .memory import InsufficientMemoryError, MemoryEstimate, check_memory, memory_estimate
from .plan import (ALLTOALL_ALGORITHMS, DEFAULT_MODES, MODES, ExchangePlan, alltoall_mode_env, exchange_plan, is_mode,
                   library_mode_env, mode_names)
from .progress import PROGRESS

#: The simulator's prediction beside each execution mode: (model, policy).
PREDICTION_OF_MODE = {"frames": ("frames", "all-at-once"), "barrier-free": ("circuit", "all-at-once"),
                      "dependency-driven": ("circuit", "all-at-once"),
                      "all-at-once": ("fluid", "all-at-once"), "alltoallv": ("fluid", "all-at-once"),
                      "shuffle": ("fluid", "window"), "pairwise": ("fluid", "steps")}


def prediction_of_mode(mode: str) -> tuple[str, str]:
    """The simulator's (model, policy) for ``mode``: the MPI library's alltoall as all at once."""
    return PREDICTION_OF_MODE.get(mode, ("fluid", "all-at-once"))


def predict_mode(schedule: Schedule, mode: str):
    """The simulator's prediction of ``schedule`` run in ``mode``, for the transfers that cross
    the network (self transfers are local copies in execution); None when none does. The
    shuffle mode without a window may send every packet at once, in order."""
    from ..simulate import simulate

    crossing = network_schedule(schedule)
    if crossing is None or mode == "paced":
        # No model of the simulators paces flows yet: no prediction rather than another mode's.
        return None
    model, policy = prediction_of_mode(mode)
    window = None
    if policy == "window" and schedule.info.parameters.get("window") is None:
        window = max(1, len(crossing.frames))
    return simulate(crossing, model, policy, window=window)

#: How long a run may take unless told (seconds, every mode included).
DEFAULT_TIMEOUT_S = 600.0

#: Environment that makes MPICH ranks in different network namespaces talk over TCP.
NAMESPACE_ENV = {"MPIR_CVAR_NOLOCAL": "1", "MPIR_CVAR_CH4_NETMOD": "ofi", "FI_PROVIDER": "tcp"}

#: Where the ranks of a run talk to each other, and what that means for the measurement.
NETWORKS = {
    "emulated": "the emulated network (namespaces, shaped veth links)",
    "declared": "the modelled network, as declared by the user",
    "local": "local, not the modelled network: the ranks talk through this machine's memory",
    "undeclared": "where mpiexec placed the ranks, not declared to be the modelled network",
}
#: The networks on which a ratio to the model's liquid throughput is a measurement of the model.
COMPARABLE_NETWORKS = ("emulated", "declared")


class ExchangeFailedError(BackendError):
    """The MPI run failed; ``partial`` holds the modes measured before the failure (None when
    there were none)."""

    def __init__(self, message: str, partial: ExchangeResult | None = None) -> None:
        super().__init__(message)
        self.partial = partial


@dataclass
class ModeResult:
    """The timed runs of one mode."""

    mode: str
    times_s: list[float]
    verified: bool | None
    #: the bytes that crossed the network: the traffic's, less its self transfers
    network_bytes: int
    #: the liquid throughput of the transfers that cross the network (None: there are none)
    liquid_throughput_Bps: float | None
    #: measured on the modelled network (emulated or declared), so that the ratio is meaningful
    comparable: bool = True

    #: the algorithm of the schedule the mode executed (``MPI`` for the library's own modes)
    algorithm: str = ""
    #: per timed run, per rank, the events of its timeline (when recorded)
    timelines: list | None = None

    @property
    def median_s(self) -> float:
        return statistics.median(self.times_s)

    @property
    def throughput_Bps(self) -> float:
        return self.network_bytes / self.median_s

    @property
    def ratio_to_bound(self) -> float:
        """Throughput over the liquid throughput, whatever the network (see :attr:`comparable`)."""
        if not self.liquid_throughput_Bps:
            return float("nan")
        return self.throughput_Bps / self.liquid_throughput_Bps

    def to_dict(self) -> dict[str, Any]:
        """The runs; ``ratio_to_bound`` is None when the network was not the modelled one."""
        ratio = self.ratio_to_bound if self.comparable and self.liquid_throughput_Bps else None
        return {"mode": self.mode, "algorithm": self.algorithm, "times_s": self.times_s, "median_s": self.median_s,
                "min_s": min(self.times_s), "max_s": max(self.times_s), "throughput_Bps": self.throughput_Bps,
                "ratio_to_bound": ratio, "verified": self.verified}


@dataclass
class ExchangeResult:
    """What an execution measured, mode by mode, and on which network (:data:`NETWORKS`)."""

    schedule_algorithm: str
    hosts: list[str]
    modes: list[ModeResult]
    mpi_library: str = ""
    network: str = "local"
    info: dict[str, Any] = field(default_factory=dict)

    @property
    def comparable(self) -> bool:
        """Whether the ratios to the liquid throughput measure the modelled network."""
        return self.network in COMPARABLE_NETWORKS

    def to_dict(self) -> dict[str, Any]:
        return {"algorithm": self.schedule_algorithm, "hosts": self.hosts, "mpi_library": self.mpi_library,
                "network": self.network, "network_note": NETWORKS[self.network],
                "comparable_to_bound": self.comparable, "modes": [m.to_dict() for m in self.modes], **self.info}


def network_schedule(schedule: Schedule) -> Schedule | None:
    """``schedule`` without its self transfers (and the frames they leave empty): what crosses
    the network in execution, where a transfer from a host to itself is a local copy. None when
    no transfer crosses it.

    Examples
    --------
    >>> from liquidsched import build_topology, plan, half_all_to_all
    >>> net = build_topology("swiss-t1:allocation=1/1/0/0/0/0/0/0")
    >>> s = plan(net, half_all_to_all(net), "round-robin")
    >>> len(s.traffic), len(network_schedule(s).traffic)
    (4, 2)
    """
    traffic = schedule.traffic
    keep = [i for i, t in enumerate(traffic) if t.src != t.dst]
    if len(keep) == len(traffic):
        return schedule
    if not keep:
        return None
    crossing = Traffic([traffic[i] for i in keep], traffic.name)
    names = traffic.names
    rename = {names[i]: crossing.names[k] for k, i in enumerate(keep)}
    frames = [[Piece(rename[p.transfer], p.bytes) for p in f if p.transfer in rename] for f in schedule.frames]
    return Schedule(schedule.network, crossing, [f for f in frames if f], schedule.info)


def network_kind(emulated: Mapping[str, str] | bool | None, declared: bool, mpiexec_args: Sequence[str],
                 launcher: Launcher | None = None) -> str:
    """The key of :data:`NETWORKS` for a run: where its ranks run. The one place that rule is
    written: :func:`run_exchange`, the ``run``, ``calibrate`` and ``steady`` commands ask it.

    Parameters
    ----------
    emulated
        The hosts' network namespaces when the ranks run in an emulated network, or True when
        they will (before the namespaces are built); None or False when they do not.
    declared
        The user's declaration that the ranks run on the modelled network.
    mpiexec_args
        Further launcher arguments (a host file places the ranks elsewhere).
    launcher
        What starts the ranks: srun places them on a Slurm allocation's nodes.

    Returns
    -------
    str
        ``emulated`` with namespaces, ``declared`` when the user says the ranks run on the
        modelled network, ``undeclared`` when launcher arguments or srun place them without
        that declaration, ``local`` otherwise (every rank on this machine).

    Examples
    --------
    >>> network_kind(None, False, []), network_kind(True, False, []), network_kind(None, False, ["-f", "hosts"])
    ('local', 'emulated', 'undeclared')
    """
    if emulated is not None and emulated is not False:
        return "emulated"
    if declared:
        return "declared"
    elsewhere = mpiexec_args or (launcher is not None and launcher.kind == "srun")
    return "undeclared" if elsewhere else "local"


#: The networks (:data:`NETWORKS`) on which every rank runs on this machine: an emulated one
#: (its namespaces are this machine's) and the local one.
HERE_NETWORKS = ("emulated", "local")


def check_memory_on(network: str, plan: ExchangePlan) -> MemoryEstimate | None:
    """Refuse ``plan`` when its ranks all run on this machine (``network`` in
    :data:`HERE_NETWORKS`, as :func:`network_kind` tells) and their buffers cannot fit in the
    available memory; elsewhere this machine's memory says nothing.

    Parameters
    ----------
    network
        A key of :data:`NETWORKS`.
    plan
        The run's :func:`exchange_plan`.

    Returns
    -------
    MemoryEstimate or None
        The estimate when the ranks run here, None otherwise.

    Raises
    ------
    InsufficientMemoryError
        when the ranks run here and do not fit (:func:`check_memory`).
    """
    return check_memory(plan) if network in HERE_NETWORKS else None


def find_mpiexec() -> str:
    """The ``mpiexec`` beside this Python (the mpich wheel's), else the one on PATH."""
    beside = Path(sys.executable).parent / "mpiexec"
    found = str(beside) if beside.exists() else shutil.which("mpiexec")
    if found is None:
        raise BackendError("mpiexec not found: pip install mpich mpi4py (or load the site's MPI)")
    return found


#: The launchers ``--launcher`` names; anything else is the path (or the name on PATH) of an
#: mpiexec-compatible launcher.
LAUNCHERS = ("mpiexec", "srun")

#: Why a run in network namespaces cannot be launched by Slurm.
SRUN_NAMESPACES = ("srun starts ranks on the allocation's nodes, not in this machine's network namespaces: "
                   "an emulated network runs under mpiexec (--launcher mpiexec or PATH)")


@dataclass(frozen=True)
class Launcher:
    """What starts the ranks, and how it passes them their environment.

    ``kind`` is ``mpiexec`` (MPICH's Hydra, the mpich wheel's or the site's: ``-genv`` for every
    rank, ``-env`` for one MPMD block), ``srun`` (Slurm: ``--export=ALL,K=V``; no network
    namespaces, the ranks run on the allocation's nodes) or ``path`` (another mpiexec-compatible
    launcher, e.g. Open MPI's ``mpirun``: ``-n`` and MPMD ``:`` blocks only, the environment set
    by ``env K=V`` in front of the program, which every launcher passes through unchanged).
    ``program`` is the executable.
    """

    kind: str
    program: str

    def to_dict(self) -> dict[str, str]:
        """The launcher as a run's metadata records it.

        Returns
        -------
        dict
            ``kind`` (``mpiexec``, ``srun`` or ``path``) and ``program`` (the executable's path).

        Examples
        --------
        >>> Launcher("srun", "/usr/bin/srun").to_dict()
        {'kind': 'srun', 'program': '/usr/bin/srun'}
        """
        return {"kind": self.kind, "program": self.program}


def resolve_launcher(name: str | None = None) -> Launcher:
    """The launcher ``name`` denotes: ``mpiexec`` (the default: :func:`find_mpiexec`), ``srun``
    (found on PATH), or the path of an mpiexec-compatible launcher (a bare name is looked up on
    PATH).

    Raises
    ------
    InputError
        when a launcher given by path does not exist or is not executable.
    BackendError
        when ``mpiexec`` or ``srun`` is not found.
    """
    if name is None or name == "mpiexec":
        return Launcher("mpiexec", find_mpiexec())
    if name == "srun":
        found = shutil.which("srun")
        if found is None:
            raise BackendError("srun not found on PATH: --launcher srun runs where Slurm is installed")
        return Launcher("srun", found)
    path = Path(name).expanduser() if "/" in name else Path(shutil.which(name) or name)
    if not path.is_file():
        raise InputError(f"launcher {name}: no such file (expected mpiexec, srun or the path of an "
                         "mpiexec-compatible launcher)")
    if not os.access(path, os.X_OK):
        raise InputError(f"launcher {name}: not executable")
    return Launcher("path", str(path))


def launch_command(ranks: int, job: str | None, namespaces: Sequence[str] | None = None,
                   launcher: Launcher | str | None = None, extra_args: Sequence[str] = (),
                   env: Mapping[str, str] | None = None,
                   program: str = "liquidsched.execute.worker", argv: Sequence[str] | None = None) -> list[str]:
    """The command that starts one ``program`` (a module run with ``python -m``, given the job
    file) per rank under ``launcher`` (a :class:`Launcher`, or a name for
    :func:`resolve_launcher`); or, given ``argv``, that command line itself (an application).

    With ``namespaces``, rank ``r`` runs inside network namespace ``namespaces[r]`` (MPMD form,
    one ``-n 1`` block per rank, each told to talk TCP: :data:`NAMESPACE_ENV`); srun refuses
    them. ``extra_args`` go to the launcher before the ranks (a host file on a cluster, srun's
    ``--distribution=arbitrary``); ``env`` is set for every rank.

    Raises
    ------
    InputError
        namespaces with srun, a namespace count other than ``ranks``, or an environment value
        srun cannot pass (a comma).
    """
    if not isinstance(launcher, Launcher):
        launcher = resolve_launcher(launcher)
    env = dict(env or {})
    if namespaces is not None and len(namespaces) != ranks:
        raise InputError(f"{ranks} ranks but {len(namespaces)} namespaces")
    worker = list(argv) if argv is not None else [sys.executable, "-m", program, str(job)]
    if launcher.kind == "srun":
        return [launcher.program, "-n", str(ranks), *extra_args, *_srun_export(env, namespaces), *worker]
    if launcher.kind == "mpiexec":
        head = [launcher.program, *extra_args, *(a for k, v in env.items() for a in ("-genv", k, v))]
        if namespaces is None:
            return [*head, "-n", str(ranks), *worker]
        block_env = [a for k, v in NAMESPACE_ENV.items() for a in ("-env", k, v)]
        return head + _mpmd_blocks([[*block_env, "ip", "netns", "exec", ns, *worker] for ns in namespaces])
    if namespaces is None:
        return [launcher.program, *extra_args, "-n", str(ranks), *_env_prefix(env), *worker]
    return [launcher.program, *extra_args] + _mpmd_blocks(
        [["ip", "netns", "exec", ns, *_env_prefix(env | NAMESPACE_ENV), *worker] for ns in namespaces])


def _mpmd_blocks(blocks: Sequence[list[str]]) -> list[str]:
    """One ``-n 1`` block per rank, separated by ``:``."""
    cmd: list[str] = []
    for r, block in enumerate(blocks):
        cmd += [*([":"] if r else []), "-n", "1", *block]
    return cmd


def _env_prefix(env: Mapping[str, str]) -> list[str]:
    """``env K=V … `` in front of a program: the one way to set a rank's environment that every
    launcher passes through."""
    return ["env", *(f"{k}={v}" for k, v in env.items())] if env else []


def _srun_export(env: Mapping[str, str], namespaces: Sequence[str] | None) -> list[str]:
    """srun's ``--export=ALL,K=V,…`` (none when there is nothing to add to the environment)."""
    if namespaces is not None:
        raise InputError(SRUN_NAMESPACES)
    commas = [k for k, v in env.items() if "," in v]
    if commas:
        raise InputError(f"srun cannot pass {commas[0]}={env[commas[0]]!r} to the ranks: --export splits at commas")
    return [f"--export={','.join(['ALL', *(f'{k}={v}' for k, v in env.items())])}"] if env else []


def run_launched(cmd: Sequence[str], timeout_s: float) -> subprocess.CompletedProcess:
    """Run a launch command to its end and return what it printed.

    The launcher runs in a session of its own so that, when it outlives ``timeout_s`` or this
    process is interrupted, every process it started (its proxies, the ranks) is ended with it,
    not only the launcher; its standard input is closed, as nothing reads it.

    Raises
    ------
    subprocess.TimeoutExpired
        when the command did not finish within ``timeout_s`` (it has been ended).
    """
    proc = subprocess.Popen(list(cmd), stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            text=True, start_new_session=True)
    try:
        stdout, stderr = proc.communicate(timeout=timeout_s)
    except BaseException:
        _end_session(proc)
        raise
    return subprocess.CompletedProcess(list(cmd), proc.returncode, stdout, stderr)


def _end_session(proc: subprocess.Popen) -> None:
    """End ``proc``'s process group: SIGTERM, then SIGKILL to what is left a few seconds later."""
    for sig in (signal.SIGTERM, signal.SIGKILL):
        try:
            os.killpg(proc.pid, sig)
        except ProcessLookupError:
            break
        try:
            proc.communicate(timeout=3.0)
            return
        except subprocess.TimeoutExpired:
            continue
    proc.kill()
    proc.wait()


def run_exchange(schedule: Schedule, modes: Sequence[str] = DEFAULT_MODES, repeats: int = 5, warmup: int = 1,
                 verify: bool = True, namespaces: Mapping[str, str] | None = None, seed: int = 0,
                 timeout_s: float = DEFAULT_TIMEOUT_S, mpiexec_args: Sequence[str] = (),
                 on_modelled_network: bool = False, plan: ExchangePlan | None = None,
                 mode_schedules: Mapping[str, Schedule] | None = None,
                 launcher: Launcher | str | None = None, progress: str = "sleep", prepost: bool = True,
                 timeline: bool = False, time_scale: float = 1.0) -> ExchangeResult:
    """Execute ``schedule`` in every mode of ``modes`` under MPI and time it.

    Parameters
    ----------
    modes
        Any of :data:`MODES` and the ``MPI_Alltoall`` modes (:func:`alltoall_mode_env`).
    repeats, warmup
        Timed runs and untimed runs before them, per mode.
    verify
        Check every received byte of every run.
    namespaces
        The network namespace of each host (an emulated network's): each rank runs in its
        host's.
    timeout_s
        The whole run's limit, every mode and launch included: past it the launcher and its
        ranks are ended, and the modes measured before are kept (:class:`ExchangeFailedError`).
    mpiexec_args
        Further launcher arguments (on a cluster, its host file: rank ``r`` must land on the
        machine that plays host ``r``, the traffic's hosts being taken in network order, as
        ``liquidsched hostfile`` writes them).
    on_modelled_network
        The user's declaration that the ranks run on the modelled network (without namespaces):
        the result then compares with the model's bound (``network`` ``declared``).
    plan
        ``exchange_plan(schedule)`` when the caller has it already.
    mode_schedules
        The schedule a mode executes instead of ``schedule`` (same network and traffic): the
        shuffle scheduler's for ``shuffle``, say.
    launcher
        What starts the ranks (:func:`resolve_launcher`; default the mpich wheel's mpiexec).
    progress
        How liquidsched's modes wait (:data:`~liquidsched.execute.progress.PROGRESS`).
    prepost
        The frames mode posts every receive before its first frame.
    timeline
        Record every timed run's timeline (:attr:`ModeResult.timelines`).
    time_scale
        The emulated network runs this many times slower than the modelled one: times are
        divided by it, and the paced mode paces at Λ times it.

    Raises
    ------
    InsufficientMemoryError
        when every rank runs here (:func:`network_kind` ``local`` or ``emulated``) and their
        buffers do not fit in the available memory; checked before launching
        (:func:`check_memory_on`).
    ExchangeFailedError
        if the run fails: one line naming what failed, and the modes measured before.
    BackendError
        if MPI is missing.
    """
    bad = [m for m in modes if not is_mode(m)]
    if bad or not modes:
        raise InputError(f"unknown mode {bad[0] if bad else '(none)'!r} (modes: {mode_names()})")
    if repeats < 1 or warmup < 0:
        raise InputError(f"need repeats >= 1 and warmup >= 0, got {repeats}, {warmup}")
    if namespaces is not None and on_modelled_network:
        raise InputError("an emulated run is on the emulated network, not declared to be on the modelled one")
    if not timeout_s > 0:
        raise InputError(f"the timeout must be a positive number of seconds, got {timeout_s}")
    if progress not in PROGRESS:
        raise InputError(f"unknown progress {progress!r} (expected one of {', '.join(PROGRESS)})")
    if not (time_scale >= 1 and time_scale < float("inf")):
        raise InputError(f"the time scale must be a finite number >= 1, got {time_scale}")
    launcher = launcher if isinstance(launcher, Launcher) else resolve_launcher(launcher)
    if launcher.kind == "srun" and namespaces is not None:
        raise InputError(SRUN_NAMESPACES)
    plan = plan or exchange_plan(schedule)
    if plan.size < 2:
        raise InputError("an exchange needs at least two hosts")
    schedules = {m: (mode_schedules or {}).get(m, schedule) for m in modes}
    for m, s in schedules.items():
        if s is not schedule and (s.network != schedule.network or list(s.traffic) != list(schedule.traffic)):
            raise InputError(f"mode {m}: its schedule is not of the same network and traffic")
    if any(alltoall_mode_env(m) is not None for m in modes) and plan.block_bytes() is None:
        raise InputError("the MPI_Alltoall modes need an all-to-all of equal messages (every host the same bytes "
                         "to every other); this traffic is not one: use alltoallv")
    network = network_kind(namespaces, on_modelled_network, mpiexec_args, launcher)
    check_memory_on(network, plan)
    lambdas: dict[str, float] = {}
    if "paced" in schedules:
        paced_lambda = crossing_lambda_s(schedules["paced"])
        if paced_lambda is None:
            raise InputError("the paced mode needs transfers that cross the network")
        lambdas["paced"] = paced_lambda * time_scale
    deadline = time.monotonic() + timeout_s
    measured: dict[str, Any] = {}
    raw: dict[str, Any] | None = None
    with tempfile.TemporaryDirectory(prefix="liquidsched-run-") as tmp:
        os.chmod(tmp, 0o755)
        files = _schedule_files(schedules, Path(tmp))
        ranks = None if namespaces is None else [namespaces[h] for h in plan.hosts]
        for k, (env, group) in enumerate(_launches(modes)):
            runs = [{"mode": m, "schedule": files[m], "window": _window_of(m, schedules[m]), "progress": progress,
                     "prepost": prepost, "lambda_s": lambdas.get(m)} for m in group]
            job_path, out_path = Path(tmp) / f"job{k}.json", Path(tmp) / f"out{k}.json"
            job_path.write_text(json.dumps({"runs": runs, "repeats": repeats, "warmup": warmup, "verify": verify,
                                            "seed": seed, "output": str(out_path), "timeline": timeline,
                                            "shared_clock": network in HERE_NETWORKS}),
                                encoding="utf-8")
            cmd = launch_command(plan.size, str(job_path), ranks, launcher, extra_args=mpiexec_args, env=env)
            try:
                done = run_launched(cmd, max(deadline - time.monotonic(), 0.0))
                failure = None if done.returncode == 0 else failure_line(done.stderr + done.stdout, done.returncode)
            except subprocess.TimeoutExpired:
                failure = f"did not finish within {timeout_s:g} s"
            raw = json.loads(out_path.read_text(encoding="utf-8")) if out_path.exists() else None
            if raw is not None:
                measured.update({m: scaled_back(r, time_scale) for m, r in raw["modes"].items()})
            if failure is None and (raw is None or raw.get("running")):
                failure = "ended without writing its results"
            if failure is not None:
                merged = raw | {"modes": measured} if raw else {"modes": measured}
                partial = _result(schedule, plan, merged, network, schedules) if measured else None
                where = f" in mode {raw['running']}" if raw and raw.get("running") else ""
                kept = f" ({', '.join(measured)} measured before)" if partial else ""
                raise ExchangeFailedError(f"the MPI run failed{where}: {failure}{kept}", partial)
    assert raw is not None
    return _result(schedule, plan, raw | {"modes": measured}, network, schedules)


def crossing_lambda_s(schedule: Schedule) -> float | None:
    """Λ of the transfers of ``schedule`` that cross the network, in seconds (None: none does)."""
    crossing = network_schedule(schedule)
    if crossing is None:
        return None
    return float(Fraction(compute_bound(schedule.network, crossing.traffic).duration_s))


def scaled_back(raw: dict[str, Any], time_scale: float) -> dict[str, Any]:
    """A mode's measurements on a network ``time_scale`` times slower, as times of the modelled
    network: every time divided by the scale (timelines included).

    Examples
    --------
    >>> scaled_back({"times_s": [4.0], "verified": True, "timelines": [[[("send", 0, 0, 1.0, 2.0)]]]}, 2.0)
    {'times_s': [2.0], 'verified': True, 'timelines': [[[('send', 0, 0, 0.5, 1.0)]]]}
    """
    if time_scale == 1:
        return raw
    out = dict(raw, times_s=[t / time_scale for t in raw["times_s"]])
    if raw.get("timelines") is not None:
        out["timelines"] = [[[(e[0], e[1], e[2], e[3] / time_scale, e[4] / time_scale) for e in rank]
                             for rank in run] for run in raw["timelines"]]
    return out


def _schedule_files(schedules: Mapping[str, Schedule], tmp: Path) -> dict[str, str]:
    """Each distinct schedule saved once; the file of each mode's."""
    files: dict[int, str] = {}
    by_mode = {}
    for mode, s in schedules.items():
        if id(s) not in files:
            files[id(s)] = str(tmp / f"schedule{len(files)}.json")
            s.save(files[id(s)])
        by_mode[mode] = files[id(s)]
    return by_mode


def _window_of(mode: str, schedule: Schedule) -> int | None:
    """The window the shuffle mode runs under: the schedule's own (None: no window)."""
    return schedule.info.parameters.get("window") if mode == "shuffle" else None


def _launches(modes: Sequence[str]) -> list[tuple[dict[str, str], list[str]]]:
    """The modes grouped by the MPI environment they need, in order: one launch each (MPICH
    reads its control variables when it starts)."""
    groups: dict[tuple[tuple[str, str], ...], list[str]] = {}
    for m in modes:
        groups.setdefault(tuple(sorted((library_mode_env(m) or {}).items())), []).append(m)
    return [(dict(env), group) for env, group in groups.items()]


def launch_job(job: dict[str, Any], ranks: int, program: str, what: str, namespaces: Sequence[str] | None = None,
               launcher: Launcher | str | None = None, extra_args: Sequence[str] = (),
               timeout_s: float = 600.0) -> dict[str, Any]:
    """Run ``program`` (a module run with ``python -m``) on ``ranks`` ranks with ``job`` as its job
    file, and return the results it wrote to the job's ``output``.

    Parameters
    ----------
    namespaces, launcher, extra_args
        As :func:`launch_command` takes them.
    what
        The run's name in messages ("the calibration").

    Raises
    ------
    ExchangeFailedError
        when the run fails (one line saying why), writes no results, or outlives ``timeout_s``.
    """
    with tempfile.TemporaryDirectory(prefix="liquidsched-job-") as tmp:
        os.chmod(tmp, 0o755)
        job_file, result = Path(tmp) / "job.json", Path(tmp) / "out.json"
        job_file.write_text(json.dumps(job | {"output": str(result)}), encoding="utf-8")
        cmd = launch_command(ranks, str(job_file), namespaces, launcher, extra_args, program=program)
        try:
            done = run_launched(cmd, timeout_s)
        except subprocess.TimeoutExpired:
            raise ExchangeFailedError(f"{what} did not finish within {timeout_s:g} s") from None
        if done.returncode != 0 or not result.exists():
            raise ExchangeFailedError(f"{what} failed: " + failure_line(done.stderr + done.stdout, done.returncode))
        return json.loads(result.read_text(encoding="utf-8"))


def calibrate(hosts: Sequence[str], packet_bytes: int, repeats: int = 50,
              namespaces: Mapping[str, str] | None = None, mpiexec_args: Sequence[str] = (),
              timeout_s: float = 300.0,
              launcher: Launcher | str | None = None) -> tuple[CostParameters, dict[str, Any]]:
    """Paper 002's cost parameters between two hosts, measured by ping-pong
    (:mod:`.pingpong`), and the raw measurements (with the round trip and the MPI library),
    the two ranks started by ``launcher`` (:func:`resolve_launcher`).

    Raises
    ------
    InputError
        unless two distinct hosts are given, a packet of at least one byte and two repeats.
    ExchangeFailedError
        if the MPI run fails or outlives ``timeout_s``.
    """
    if len(hosts) != 2 or hosts[0] == hosts[1]:
        raise InputError(f"calibration runs between two distinct hosts, got {list(hosts)}")
    if packet_bytes < 1 or repeats < 2:
        raise InputError(f"need a packet of at least 1 byte and at least 2 repeats, got {packet_bytes}, {repeats}")
    ranks = None if namespaces is None else [namespaces[h] for h in hosts]
    raw = launch_job({"packet_bytes": packet_bytes, "repeats": repeats}, 2, "liquidsched.execute.pingpong",
                     "the calibration", ranks, launcher, mpiexec_args, timeout_s)
    params = CostParameters(raw["send_overhead_s"], raw["latency_s"], raw["gap_s"], raw["recv_overhead_s"],
                            raw["user_recv_s"], packet_bytes)
    return params, raw


#: What MPICH and the ranks print when a run fails, most telling first: a fatal MPI error, a
#: Python exception in a rank, a rank killed by a signal.
_FAILURE_PATTERNS = (
    (re.compile(r"(Fatal error in \S+: [^,\n]*)"), "{0}"),
    (re.compile(r"^(\w+(?:Error|Exception)(?:: .*)?)$", re.M), "a rank raised {0}"),
    (re.compile(r"KILLED BY SIGNAL: (9) \((\w+)\)"), "a rank was killed by signal {0} ({1}; out of memory?)"),
    (re.compile(r"KILLED BY SIGNAL: (\d+) \(([^)]*)\)"), "a rank was killed by signal {0} ({1})"),
    (re.compile(r"liquidsched worker: (.*)"), "{0}"),
)


def failure_line(output: str, returncode: int) -> str:
    """One line naming why an MPI run failed, from what its ranks and ``mpiexec`` printed.

    Examples
    --------
    >>> failure_line("=   RANK 2 PID 77 RUNNING AT x\\n=   KILLED BY SIGNAL: 9 (Killed)\\nsee the FAQ page", 9)
    'a rank was killed by signal 9 (Killed; out of memory?) (exit 9)'
    """
    for pattern, form in _FAILURE_PATTERNS:
        found = pattern.search(output)
        if found:
            return f"{form.format(*(g.strip() for g in found.groups()))} (exit {returncode})"
    lines = [line.strip(" =") for line in output.splitlines() if line.strip(" =")]
    return f"{lines[-1] if lines else '(no message)'} (exit {returncode})"


def _result(schedule: Schedule, plan: ExchangePlan, raw: dict, network: str,
            schedules: Mapping[str, Schedule] | None = None) -> ExchangeResult:
    traffic = schedule.traffic
    crossing = network_schedule(schedule)
    bound = None if crossing is None else float(Fraction(compute_bound(schedule.network,
                                                                        crossing.traffic).liquid_throughput_Bps))
    network_bytes = 0 if crossing is None else crossing.traffic.total_bytes
    comparable = network in COMPARABLE_NETWORKS and bound is not None
    schedules = schedules or {}

    def algorithm(mode: str) -> str:
        if library_mode_env(mode) is not None:
            return "MPI"
        return schedules.get(mode, schedule).info.algorithm

    modes = [ModeResult(mode, r["times_s"], r["verified"], network_bytes, bound, comparable, algorithm(mode),
                        r.get("timelines")) for mode, r in raw["modes"].items()]
    selfs = [t for t in traffic if t.src == t.dst]
    estimate = memory_estimate(plan)
    info = {"liquid_throughput_Bps": bound, "network_bytes": network_bytes,
            "self_transfers": {"count": len(selfs), "bytes": sum(t.size_bytes for t in selfs),
                               "executed_as": "local copies, left out of the throughput and the bound"},
            "memory_estimate_bytes": estimate.total_bytes}
    if raw.get("max_rss_bytes"):
        info["max_rss_bytes"] = raw["max_rss_bytes"]
    return ExchangeResult(schedule.info.algorithm, plan.hosts, modes, raw.get("mpi_library", ""), network, info)


__all__ = ["ALLTOALL_ALGORITHMS", "COMPARABLE_NETWORKS", "DEFAULT_MODES", "MODES", "NAMESPACE_ENV", "NETWORKS",
           "PREDICTION_OF_MODE", "DEFAULT_TIMEOUT_S", "HERE_NETWORKS", "LAUNCHERS", "ExchangeFailedError",
           "ExchangeResult", "InsufficientMemoryError", "Launcher", "MemoryEstimate", "ModeResult",
           "alltoall_mode_env", "calibrate", "crossing_lambda_s", "library_mode_env", "scaled_back", "check_memory", "check_memory_on", "exchange_plan", "failure_line",
           "find_mpiexec", "launch_job", "is_mode", "launch_command", "memory_estimate", "mode_names", "network_kind",
           "network_schedule", "predict_mode", "prediction_of_mode", "resolve_launcher", "run_exchange", "run_launched"]

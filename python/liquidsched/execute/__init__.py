"""Execute a schedule with MPI: an alltoallv-like exchange of numpy buffers between ranks.

Ranks are the traffic's hosts in network order, one process each, launched by ``mpiexec`` (the
``mpich`` wheel's locally; on a cluster, the site's). Modes:

* ``frames``: frame by frame, a barrier between frames;
* ``barrier-free``: a piece starts once the pieces before it on each of its resources have been
  received, told by point-to-point notifications;
* ``all-at-once``: every send and receive posted together;
* ``alltoallv``: ``MPI_Alltoallv`` itself, as the library orders it.

Every run can check every received byte. Inside an emulated network
(:mod:`liquidsched.emulate`), each rank runs in its host's namespace and MPICH is told to use TCP
between them (``MPIR_CVAR_NOLOCAL=1``, ``MPIR_CVAR_CH4_NETMOD=ofi``, ``FI_PROVIDER=tcp``): without
that it would silently use shared memory.
"""

from __future__ import annotations

import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
from dataclasses import dataclass, field
from fractions import Fraction
from pathlib import Path
from typing import Any, Mapping, Sequence

from ..bounds import compute_bound
from ..errors import BackendError, InputError
from ..schedule import Schedule
from .plan import MODES, ExchangePlan, exchange_plan

#: The simulator's prediction beside each execution mode: (model, policy).
PREDICTION_OF_MODE = {"frames": ("frames", "all-at-once"), "barrier-free": ("circuit", "all-at-once"),
                      "all-at-once": ("fluid", "all-at-once"), "alltoallv": ("fluid", "all-at-once")}

#: Environment that makes MPICH ranks in different network namespaces talk over TCP.
NAMESPACE_ENV = {"MPIR_CVAR_NOLOCAL": "1", "MPIR_CVAR_CH4_NETMOD": "ofi", "FI_PROVIDER": "tcp"}


@dataclass
class ModeResult:
    """The timed runs of one mode."""

    mode: str
    times_s: list[float]
    verified: bool | None
    total_bytes: int
    liquid_throughput_Bps: float

    @property
    def median_s(self) -> float:
        return statistics.median(self.times_s)

    @property
    def throughput_Bps(self) -> float:
        return self.total_bytes / self.median_s

    @property
    def ratio_to_bound(self) -> float:
        return self.throughput_Bps / self.liquid_throughput_Bps

    def to_dict(self) -> dict[str, Any]:
        return {"mode": self.mode, "times_s": self.times_s, "median_s": self.median_s,
                "min_s": min(self.times_s), "max_s": max(self.times_s), "throughput_Bps": self.throughput_Bps,
                "ratio_to_bound": self.ratio_to_bound, "verified": self.verified}


@dataclass
class ExchangeResult:
    """What an execution measured, mode by mode."""

    schedule_algorithm: str
    hosts: list[str]
    modes: list[ModeResult]
    mpi_library: str = ""
    info: dict[str, Any] = field(default_factory=dict)

    def to_dict(self) -> dict[str, Any]:
        return {"algorithm": self.schedule_algorithm, "hosts": self.hosts, "mpi_library": self.mpi_library,
                "modes": [m.to_dict() for m in self.modes], **self.info}


def find_mpiexec() -> str:
    """The ``mpiexec`` beside this Python (the mpich wheel's), else the one on PATH."""
    beside = Path(sys.executable).parent / "mpiexec"
    found = str(beside) if beside.exists() else shutil.which("mpiexec")
    if found is None:
        raise BackendError("mpiexec not found: pip install mpich mpi4py (or load the site's MPI)")
    return found


def mpiexec_command(ranks: int, job: str, namespaces: Sequence[str] | None = None,
                    mpiexec: str | None = None, extra_args: Sequence[str] = ()) -> list[str]:
    """The command that starts one worker per rank; with ``namespaces``, rank ``r`` runs inside
    network namespace ``namespaces[r]`` (MPMD form, one ``-n 1`` block per rank). ``extra_args``
    go to ``mpiexec`` first (a host file on a cluster)."""
    mpiexec = mpiexec or find_mpiexec()
    worker = [sys.executable, "-m", "liquidsched.execute.worker", job]
    if namespaces is None:
        return [mpiexec, *extra_args, "-n", str(ranks), *worker]
    if len(namespaces) != ranks:
        raise InputError(f"{ranks} ranks but {len(namespaces)} namespaces")
    cmd = [mpiexec, *extra_args]
    for r, ns in enumerate(namespaces):
        env = [arg for k, v in NAMESPACE_ENV.items() for arg in ("-env", k, v)]
        cmd += [*([":"] if r else []), "-n", "1", *env, "ip", "netns", "exec", ns, *worker]
    return cmd


def run_exchange(schedule: Schedule, modes: Sequence[str] = MODES, repeats: int = 5, warmup: int = 1,
                 verify: bool = True, namespaces: Mapping[str, str] | None = None, seed: int = 0,
                 timeout_s: float = 600.0, mpiexec_args: Sequence[str] = ()) -> ExchangeResult:
    """Execute ``schedule`` in every mode of ``modes`` under MPI and time it.

    Parameters
    ----------
    modes
        Any of ``frames``, ``barrier-free``, ``all-at-once``, ``alltoallv``.
    repeats, warmup
        Timed runs and untimed runs before them, per mode.
    verify
        Check every received byte of every run.
    namespaces
        The network namespace of each host (an emulated network's): each rank runs in its
        host's.
    mpiexec_args
        Further ``mpiexec`` arguments (on a cluster, its host file: rank ``r`` must land on the
        machine that plays host ``r``, the traffic's hosts being taken in network order).

    Raises
    ------
    BackendError
        if MPI is missing or the run fails (with the last line the ranks printed).
    """
    bad = [m for m in modes if m not in MODES]
    if bad or not modes:
        raise InputError(f"unknown mode {bad[0] if bad else '(none)'!r} (modes: {', '.join(MODES)})")
    if repeats < 1 or warmup < 0:
        raise InputError(f"need repeats >= 1 and warmup >= 0, got {repeats}, {warmup}")
    plan = exchange_plan(schedule)
    if plan.size < 2:
        raise InputError("an exchange needs at least two hosts")
    with tempfile.TemporaryDirectory(prefix="liquidsched-run-") as tmp:
        os.chmod(tmp, 0o755)
        sched_path, job_path, out_path = (str(Path(tmp) / n) for n in ("schedule.json", "job.json", "out.json"))
        schedule.save(sched_path)
        Path(job_path).write_text(json.dumps({"schedule": sched_path, "modes": list(modes), "repeats": repeats,
                                              "warmup": warmup, "verify": verify, "seed": seed,
                                              "output": out_path}), encoding="utf-8")
        ranks = None if namespaces is None else [namespaces[h] for h in plan.hosts]
        cmd = mpiexec_command(plan.size, job_path, ranks, extra_args=mpiexec_args)
        try:
            done = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout_s)
        except subprocess.TimeoutExpired:
            raise BackendError(f"the MPI run did not finish within {timeout_s:g} s") from None
        if done.returncode != 0 or not Path(out_path).exists():
            lines = (done.stderr + done.stdout).strip().splitlines() or ["(no message)"]
            raise BackendError(f"the MPI run failed (exit {done.returncode}): {lines[-1]}")
        raw = json.loads(Path(out_path).read_text(encoding="utf-8"))
    return _result(schedule, plan, raw)


def _result(schedule: Schedule, plan: ExchangePlan, raw: dict) -> ExchangeResult:
    traffic = schedule.traffic
    bound = float(Fraction(compute_bound(schedule.network, traffic).liquid_throughput_Bps))
    modes = [ModeResult(mode, r["times_s"], r["verified"], traffic.total_bytes, bound)
             for mode, r in raw["modes"].items()]
    return ExchangeResult(schedule.info.algorithm, plan.hosts, modes, raw.get("mpi_library", ""))


__all__ = ["MODES", "NAMESPACE_ENV", "PREDICTION_OF_MODE", "ExchangeResult", "ModeResult", "exchange_plan", "find_mpiexec",
           "mpiexec_command", "run_exchange"]

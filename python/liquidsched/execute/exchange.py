"""Run a schedule under MPI in every mode asked for, and time it (:func:`run_exchange`)."""

from __future__ import annotations

import json
import os
import subprocess
import tempfile
import time
from pathlib import Path
from typing import Any, Mapping, Sequence

from ..errors import InputError
from ..schedule import Schedule
from .launcher import SRUN_NAMESPACES, Launcher, failure_line, launch_command, resolve_launcher, run_launched
from .networks import HERE_NETWORKS, check_memory_on, network_kind
from .plan import (DEFAULT_MODES, RELAYED_MODES, ExchangePlan, alltoall_mode_env, exchange_plan, is_mode,
                   library_mode_env, mode_names)
from .paced import PACE_HEADROOM, paced_duration_s
from .prediction import crossing_lambda_s
from .progress import PROGRESS
from .results import ExchangeFailedError, ExchangeResult, exchange_result, scaled_back

#: How long a run may take unless told (seconds, every mode included).
DEFAULT_TIMEOUT_S = 600.0


def run_exchange(schedule: Schedule, modes: Sequence[str] = DEFAULT_MODES, repeats: int = 5, warmup: int = 1,
                 verify: bool = True, namespaces: Mapping[str, str] | None = None, seed: int = 0,
                 timeout_s: float = DEFAULT_TIMEOUT_S, mpiexec_args: Sequence[str] = (),
                 on_modelled_network: bool = False, plan: ExchangePlan | None = None,
                 mode_schedules: Mapping[str, Schedule] | None = None,
                 launcher: Launcher | str | None = None, progress: str = "sleep", prepost: bool = True,
                 timeline: bool = False, time_scale: float = 1.0,
                 pace_headroom: float = PACE_HEADROOM) -> ExchangeResult:
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
        divided by it, and the paced mode spreads every transfer over Λ × ``time_scale`` ×
        (1 + ``pace_headroom``).
    pace_headroom
        The share of every link the paced mode leaves free
        (:func:`~liquidsched.execute.paced.paced_duration_s`; default
        :data:`~liquidsched.execute.paced.PACE_HEADROOM`).

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
        if s is not schedule and (s.network != schedule.network or list(s.exchange) != list(schedule.exchange)):
            raise InputError(f"mode {m}: its schedule is not of the same network and traffic")
        if s.relay is not None and m not in RELAYED_MODES and library_mode_env(m) is None:
            raise InputError(f"the {m} mode does not run a relayed schedule (the {s.info.algorithm} schedule "
                             f"forwards bytes through hosts); its modes: {', '.join(RELAYED_MODES)}, and the "
                             "library's own")
    if any(alltoall_mode_env(m) is not None for m in modes) and plan.block_bytes() is None:
        raise InputError("the MPI_Alltoall modes need an all-to-all of equal messages (every host the same bytes "
                         "to every other); this traffic is not one: use alltoallv")
    network = network_kind(namespaces, on_modelled_network, mpiexec_args, launcher)
    check_memory_on(network, plan)
    paced_s = None
    if "paced" in schedules:
        paced_lambda = crossing_lambda_s(schedules["paced"])
        if paced_lambda is None:
            raise InputError("the paced mode needs transfers that cross the network")
        paced_s = paced_duration_s(paced_lambda * time_scale, pace_headroom)
    deadline = time.monotonic() + timeout_s
    measured: dict[str, Any] = {}
    raw: dict[str, Any] | None = None
    with tempfile.TemporaryDirectory(prefix="liquidsched-run-") as tmp:
        os.chmod(tmp, 0o755)
        files = _schedule_files(schedules, Path(tmp))
        ranks = None if namespaces is None else [namespaces[h] for h in plan.hosts]
        for k, (env, group) in enumerate(_launches(modes)):
            runs = [{"mode": m, "schedule": files[m], "window": _window_of(m, schedules[m]), "progress": progress,
                     "prepost": prepost, "paced_s": paced_s if m == "paced" else None} for m in group]
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
                # Only modes with a timed run were measured: the one that failed, or one with no
                # run written, is not announced as kept.
                running = raw.get("running") if raw else None
                measured = {m: r for m, r in measured.items() if r.get("times_s") and m != running}
                merged = raw | {"modes": measured} if raw else {"modes": measured}
                partial = exchange_result(schedule, plan, merged, network, schedules) if measured else None
                where = f" in mode {running}" if running else ""
                kept = f" ({', '.join(measured)} measured before)" if partial else ""
                raise ExchangeFailedError(f"the MPI run failed{where}: {failure}{kept}", partial)
    assert raw is not None
    return exchange_result(schedule, plan, raw | {"modes": measured}, network, schedules)


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

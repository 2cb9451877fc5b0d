"""The candidates timed as the interposition library runs them (``liquidsched tune --pmpi``).

A selection table is worth what its times say about the runs it chooses between. ``tune``
alone times liquidsched's modes in the Python executor (mpi4py); the interposition library
runs frames and paced in C through PMPI, with its own planning, and the two do not cost the
same at every size. Measured on the both-ways backbone (20 ranks, deep buffers) at 4 KiB:
paced took 40.8 ms in the executor and 57 ms in the library, MPICH's ``MPI_Alltoall`` 48.1 ms,
so the table chose paced where the library lost to MPICH. Here each candidate is timed by the
OSU-like benchmark (``pmpi/bench/alltoall_bench.c``), an unmodified MPI program: ``frames`` and
``paced`` under the library with the mode forced (``LIQUIDSCHED_MODE``), the MPI library's own
modes (``alltoall``, ``alltoallv``, or one of MPICH's algorithms forced) without it. The
table's times are then those of the very code an application's call runs.

Each of ``rounds`` rounds launches every candidate once, in an order rotated every round so
that a drift of the machine favours none; a launch times every size (``calls`` calls, ten
times as many up to 8 KiB, after ``warmup`` untimed ones, each from a barrier, as OSU does)
and its average per call is one timed run of the table. The library's own summary (``LIQUIDSCHED_VERBOSE``) must say that
every call of a forced mode ran that mode: a call it left to MPICH would make the mode look
like MPICH's.
"""

from __future__ import annotations

import contextlib
import json
import re
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable, Mapping, Sequence, TypeVar

from ..errors import BackendError, InputError
from ..network import Network
from ..traffic import Traffic
from .plan import alltoall_mode_env, alltoallv_mode_env, library_mode_env
from .pmpi import built_file
from .sizes import resized_traffic, time_statistics

#: liquidsched's modes the interposition library runs (``LIQUIDSCHED_MODE``).
LIBRARY_RUNS_MODES = ("frames", "paced")
#: The candidates unless told: what the library chooses between for ``MPI_Alltoall`` and
#: ``MPI_Alltoallv`` calls (``crates/capi/src/selection.rs``).
PMPI_CANDIDATES = ("frames", "paced", "alltoall", "alltoallv")
#: The benchmark's largest "small" message: it times sizes up to this one over more calls.
SMALL_MESSAGE_BYTES = 8192
#: How many times more calls small sizes take than large ones (cheap, and noisier: OSU's
#: collectives run 1,000 and 100).
SMALL_CALLS_FACTOR = 10
#: The library's line at ``MPI_Finalize`` under ``LIQUIDSCHED_VERBOSE=1`` (liquidsched_pmpi.c).
SUMMARY_LINE = re.compile(r"liquidsched: rank 0 made (\d+) planned, (\d+) reused and (\d+) fallback exchanges, "
                          r"and left (\d+) to the library by choice")


@dataclass(frozen=True)
class BenchmarkRun:
    """How the benchmark times one candidate."""

    mode: str
    #: the collective it calls: ``alltoall`` or ``alltoallv``
    collective: str
    #: under the interposition library (else MPICH alone)
    preload: bool
    #: the ranks' further environment
    env: Mapping[str, str]


def benchmark_program() -> Path:
    """The benchmark ``make pmpi`` builds (:func:`~liquidsched.execute.pmpi.built_file`)."""
    return built_file("alltoall_bench", "the benchmark")


def benchmark_run(mode: str, pace_headroom: float | None = None) -> BenchmarkRun:
    """How the benchmark times ``mode``.

    Examples
    --------
    >>> benchmark_run("paced", 0.02).env["LIQUIDSCHED_MODE"], benchmark_run("alltoallv").preload
    ('paced', False)
    >>> benchmark_run("alltoall-brucks").env["MPIR_CVAR_ALLTOALL_INTRA_ALGORITHM"]
    'brucks'

    Raises
    ------
    InputError
        for a mode the interposition library does not run.
    """
    if mode in LIBRARY_RUNS_MODES:
        env = {"LIQUIDSCHED_MODE": mode, "LIQUIDSCHED_VERBOSE": "1"}
        if pace_headroom is not None:
            env["LIQUIDSCHED_PACE_HEADROOM"] = repr(pace_headroom)
        return BenchmarkRun(mode, "alltoall", True, env)
    if alltoall_mode_env(mode) is not None:
        return BenchmarkRun(mode, "alltoall", False, alltoall_mode_env(mode) or {})
    if alltoallv_mode_env(mode) is not None:
        return BenchmarkRun(mode, "alltoallv", False, alltoallv_mode_env(mode) or {})
    raise InputError(f"{mode}: the interposition library does not run it (it runs frames, paced and the MPI "
                     "library's own collectives: alltoall, alltoall-brucks, alltoall-pairwise, alltoallv)")


def check_all_to_all(traffic: Traffic, hosts: Sequence[str]) -> None:
    """Refuse a traffic the benchmark does not run: every host of ``hosts`` the same bytes to
    every other (its ``MPI_Alltoall``).

    Raises
    ------
    InputError
        naming what differs.
    """
    pairs = {(t.src, t.dst) for t in traffic}
    wanted = {(a, b) for a in hosts for b in hosts if a != b}
    sizes = {t.size_bytes for t in traffic}
    if pairs != wanted or len(sizes) != 1 or len(traffic) != len(wanted):
        raise InputError("--pmpi times the benchmark's MPI_Alltoall: the traffic must be an all-to-all of equal "
                         f"messages between every host of the network ({len(hosts)} hosts), "
                         f"not {traffic.name or 'this one'}")


def forced_mode_ran_every_call(stderr: str, calls: int) -> str | None:
    """None when the library's summary says all ``calls`` ran the forced mode, else why not.

    >>> line = "liquidsched: rank 0 made {} planned, {} reused and {} fallback exchanges, and left {} to the library by choice"
    >>> forced_mode_ran_every_call(line.format(2, 10, 0, 0), 12) is None
    True
    >>> forced_mode_ran_every_call(line.format(2, 8, 2, 0), 12)
    '10 of 12 calls ran it (2 fell back to the MPI library, 0 left to it)'
    """
    found = SUMMARY_LINE.findall(stderr)
    if not found:
        return "the library printed no summary (was it preloaded?)"
    planned, reused, fallback, left = (int(x) for x in found[-1])
    if planned + reused == calls and fallback == 0 and left == 0:
        return None
    return f"{planned + reused} of {calls} calls ran it ({fallback} fell back to the MPI library, {left} left to it)"


def launch_benchmark(run: BenchmarkRun, benchmark: Path, network: Network, sizes: Sequence[int], calls: int,
                     warmup: int, *, namespace: Mapping[str, str] | None, prefix: str | None,
                     launcher: Any = None, launcher_args: Sequence[str] = (),
                     timeout_s: float | None = None) -> tuple[dict[int, float], str]:
    """One launch of the benchmark timing ``run`` at ``sizes`` (``calls`` timed calls each,
    :data:`SMALL_CALLS_FACTOR` times as many up to :data:`SMALL_MESSAGE_BYTES`): the average seconds per call
    at each size (over ranks and calls), as measured (not scaled back), and the MPI library's
    version line.

    Raises
    ------
    BackendError
        when the launch fails or times out, the benchmark received wrong bytes, or a forced
        mode did not run every call.
    """
    from .launch import launch

    # One size alone is written MIN:MAX: the benchmark reads a lone number as 1 to MAX.
    listed = ",".join(str(s) for s in sizes) if len(sizes) > 1 else f"{sizes[0]}:{sizes[0]}"
    argv = [str(benchmark), "-m", listed, "-i", str(calls * SMALL_CALLS_FACTOR),
            "-I", str(calls), "-x", str(warmup), "-X", str(warmup), "-c", run.collective, "-f", "json"]
    given = contextlib.nullcontext(namespace)
    with tempfile.TemporaryFile("w+") as out, tempfile.TemporaryFile("w+") as err:
        result = launch(argv, network, emulate=False, prefix=prefix, pmpi=run.preload, launcher=launcher,
                        launcher_args=launcher_args, timeout_s=timeout_s, env=dict(run.env),
                        emulation=lambda *_: given, stdout=out, stderr=err)
        out.seek(0), err.seek(0)
        stdout, stderr = out.read(), err.read()
    tail = "\n".join(stderr.strip().splitlines()[-5:])
    if result.timed_out:
        raise BackendError(f"{run.mode}: the benchmark did not finish within {timeout_s:g} s")
    if result.returncode != 0:
        raise BackendError(f"{run.mode}: the benchmark failed (exit status {result.returncode}):\n{tail}")
    try:
        doc = json.loads(stdout)
    except json.JSONDecodeError:
        raise BackendError(f"{run.mode}: the benchmark's output is not its JSON:\n{stdout[-500:]}") from None
    if doc.get("verified") is not True:
        raise BackendError(f"{run.mode}: the benchmark received wrong bytes:\n{tail}")
    if run.preload:
        every = sum(warmup + calls * (SMALL_CALLS_FACTOR if s <= SMALL_MESSAGE_BYTES else 1) for s in sizes)
        why = forced_mode_ran_every_call(stderr, every)
        if why is not None:
            raise BackendError(f"{run.mode}: the interposition library did not run every call in this mode: {why}")
    return {int(r["size_bytes"]): r["avg_latency_us"] * 1e-6 for r in doc["results"]
            if r["collective"] == run.collective}, doc.get("mpi_library", "")


T = TypeVar("T")


def rotated(items: Sequence[T], by: int) -> list[T]:
    """``items`` starting at position ``by`` (modulo their number).

    >>> rotated(["a", "b", "c"], 4)
    ['b', 'c', 'a']
    """
    k = by % len(items)
    return [*items[k:], *items[:k]]


def measure_through_library(network: Network, traffic: Traffic, sizes: Sequence[int], modes: Sequence[str],
                            benchmark: Path, *, rounds: int, calls: int, warmup: int,
                            namespace: Mapping[str, str] | None = None, prefix: str | None = None,
                            network_kind: str = "local", launcher: Any = None, launcher_args: Sequence[str] = (),
                            timeout_s: float | None = None, time_scale: float = 1.0,
                            pace_headroom: float | None = None,
                            on_launch: Callable[[int, int], None] | None = None) -> dict[str, Any]:
    """Time every mode at every size through the benchmark (see the module's description) and
    return a sweep document as :meth:`~liquidsched.execute.sizes.SizesResult.to_dict` writes
    it, which :meth:`~liquidsched.execute.selection.SelectionTable.from_sweep` reads.

    Times are divided by ``time_scale`` (the modelled network's). ``ratio_to_bound`` is given
    where the ranks ran on the modelled network (emulated or declared): the liquid time of
    ``traffic`` at the size over the median.

    Parameters
    ----------
    on_launch
        Called after each launch with (launches done, launches in all).
    """
    from .networks import COMPARABLE_NETWORKS, NETWORKS
    from ..bounds import compute_bound
    from .launch import application_hosts

    hosts = application_hosts(network)
    check_all_to_all(traffic, hosts)
    runs = [benchmark_run(m, pace_headroom) for m in modes]
    sizes = sorted(set(sizes))
    times: dict[str, dict[int, list[float]]] = {m: {s: [] for s in sizes} for m in modes}
    library = ""
    total, done = rounds * len(runs), 0
    for k in range(rounds):
        for run in rotated(runs, k):
            measured, library = launch_benchmark(run, benchmark, network, sizes, calls, warmup, namespace=namespace,
                                                 prefix=prefix, launcher=launcher, launcher_args=launcher_args,
                                                 timeout_s=timeout_s)
            for s in sizes:
                times[run.mode][s].append(measured[s] / time_scale)
            done += 1
            if on_launch:
                on_launch(done, total)
    comparable = network_kind in COMPARABLE_NETWORKS
    points = []
    for s in sizes:
        bound = compute_bound(network, resized_traffic(traffic, s))
        liquid_s = float(bound.duration_s)
        rows = []
        for run in runs:
            t = times[run.mode][s]
            stats = time_statistics(t)
            rows.append({"mode": run.mode, "algorithm": "interposition library" if run.preload else "MPI", **stats,
                         "times_s": t, "throughput_Bps": bound.total_bytes / stats["median_s"],
                         "ratio_to_bound": liquid_s / stats["median_s"] if comparable else None, "verified": True})
        points.append({"size_bytes": s, "network_bytes": bound.total_bytes,
                       "liquid_throughput_Bps": float(bound.liquid_throughput_Bps), "modes": rows})
    return {"network": network_kind, "network_note": NETWORKS[network_kind], "comparable_to_bound": comparable,
            "hosts": hosts, "mpi_library": library, "measured_through": "interposition library",
            "benchmark": {"program": benchmark.name, "rounds": rounds, "calls": calls, "warmup": warmup},
            "sizes": points}


__all__ = ["LIBRARY_RUNS_MODES", "PMPI_CANDIDATES", "BenchmarkRun", "benchmark_program", "benchmark_run", "check_all_to_all",
           "forced_mode_ran_every_call", "launch_benchmark", "measure_through_library", "rotated"]

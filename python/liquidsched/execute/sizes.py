"""A sweep over message sizes: one exchange run at each size, every mode timed, reported as the
OSU micro-benchmarks do (mean, standard deviation, min, median and p95 of the timed runs).

The traffic is all-to-all-like: every transfer carries the same size, and at each size of the
sweep every transfer carries that size. A schedule made without regard to the size (frames of
whole transfers from a scheduler that only counts transfers, :data:`SIZE_INDEPENDENT`) is planned
once and its bytes scaled exactly; any other (pieces cut by bytes, packets, β) is planned again
for each size.

Statistics (:func:`time_statistics`): the standard deviation is the sample one (n − 1 in the
denominator; 0 for a single run), the p95 is the nearest-rank percentile (the ⌈0.95 n⌉-th
smallest time, so always a measured time), the throughput is the bytes that cross the network
over the median time.
"""

from __future__ import annotations

import math
import statistics
from dataclasses import dataclass, field
from typing import Any, Callable, Mapping, Sequence

from ..errors import BackendError, InputError
from ..schedule import Piece, Schedule
from ..traffic import Traffic, Transfer
from ..units import parse_size
from . import (ExchangeFailedError, ExchangeResult, ModeResult, check_memory_on, exchange_plan, network_kind,
               run_exchange)

#: Schedulers whose frames, for transfers of one size, do not depend on that size (they count
#: transfers against slots): their schedule at one size is their schedule at every size.
SIZE_INDEPENDENT = ("liquid", "dsatur", "cpsat", "round-robin", "random", "pairwise")
#: The most sizes one sweep takes: a range with a small step is more likely a typo than a wish.
MAX_SIZES = 200


def parse_sizes(text: str) -> list[int]:
    """The sizes ``text`` names, smallest first: ``FIRST:LAST:xK`` (FIRST multiplied by K while
    it is at most LAST), ``FIRST:LAST:+STEP`` (STEP added), a list ``A,B,C``, or one size;
    sizes take units (:func:`~liquidsched.units.parse_size`).

    Examples
    --------
    >>> parse_sizes("1KiB:64KiB:x4")
    [1024, 4096, 16384, 65536]
    >>> parse_sizes("1kB:3kB:+1kB"), parse_sizes("4KiB,1KiB")
    ([1000, 2000, 3000], [1024, 4096])

    Raises
    ------
    ValueError
        naming what is wrong: a bad size, a range whose first size exceeds its last, a factor
        below 2, a size given twice, more than :data:`MAX_SIZES` sizes.
    """
    parts = text.split(":")
    if len(parts) == 1:
        sizes = [parse_size(s.strip()) for s in text.split(",")]
        twice = sorted({s for s in sizes if sizes.count(s) > 1})
        if twice:
            raise ValueError(f"size {twice[0]} given twice in {text!r}")
        return sorted(sizes)
    if len(parts) != 3:
        raise ValueError(f"expected FIRST:LAST:xFACTOR, FIRST:LAST:+STEP or A,B,C, got {text!r}")
    first, last, step = parse_size(parts[0]), parse_size(parts[1]), parts[2].strip()
    if first > last:
        raise ValueError(f"the first size {first} is larger than the last {last} in {text!r}")
    if step[:1] in ("x", "*"):
        factor = _factor(step[1:], text)
        count = 1 + int(math.floor(math.log(last / first, factor) + 1e-9))
        sizes = [first * factor ** k for k in range(count) if first * factor ** k <= last]
    elif step[:1] == "+":
        increment = parse_size(step[1:])
        count = (last - first) // increment + 1
        sizes = [] if count > MAX_SIZES else list(range(first, last + 1, increment))
    else:
        raise ValueError(f"the step {step!r} of {text!r} is neither xFACTOR nor +SIZE")
    if count > MAX_SIZES:
        raise ValueError(f"{text!r} names {count} sizes, more than {MAX_SIZES}")
    return sizes


def _factor(text: str, whole: str) -> int:
    """A whole factor of at least 2, so that every size of the range is a whole number of bytes."""
    try:
        factor = int(text)
    except ValueError:
        factor = 0
    if factor < 2:
        raise ValueError(f"the factor of {whole!r} must be a whole number >= 2, got {text!r}")
    return factor


def time_statistics(times_s: Sequence[float]) -> dict[str, float]:
    """Mean, sample standard deviation, min, median, p95 and max of timed runs.

    The p95 is the nearest-rank percentile: the ⌈0.95·n⌉-th smallest time (with 20 runs the
    19th, with 5 runs or fewer the largest). The standard deviation divides by n − 1 (0 for one
    run).

    Examples
    --------
    >>> s = time_statistics([3.0, 1.0, 10.0, 2.0, 4.0])
    >>> s["mean_s"], s["median_s"], s["p95_s"], round(s["std_s"], 4)
    (4.0, 3.0, 10.0, 3.5355)
    """
    if not times_s:
        raise InputError("no timed run to summarise")
    ordered = sorted(times_s)
    n = len(ordered)
    return {"runs": n, "mean_s": statistics.fmean(ordered), "std_s": statistics.stdev(ordered) if n > 1 else 0.0,
            "min_s": ordered[0], "median_s": statistics.median(ordered),
            "p95_s": ordered[math.ceil(0.95 * n) - 1], "max_s": ordered[-1]}


def format_size(size_bytes: int) -> str:
    """A size as people write it: binary units when it is a whole number of them, else decimal.

    Examples
    --------
    >>> format_size(65536), format_size(1_000_000), format_size(1500)
    ('64 KiB', '1 MB', '1,500 B')
    """
    for scale, unit in ((2**30, "GiB"), (2**20, "MiB"), (2**10, "KiB"), (10**9, "GB"), (10**6, "MB"), (10**3, "kB")):
        if size_bytes >= scale and size_bytes % scale == 0:
            return f"{size_bytes // scale:,} {unit}"
    return f"{size_bytes:,} B"


def common_size(traffic: Traffic) -> int:
    """The size every transfer of ``traffic`` carries.

    Raises
    ------
    InputError
        when the transfers differ in size: a sweep sets every transfer to each size.
    """
    size = traffic.uniform_size
    if size is None:
        raise InputError(f"--sizes sets every transfer to each size; the transfers of {traffic.name} differ in "
                         "size (a sweep runs an all-to-all-like traffic of equal transfers)")
    return size


def resized_traffic(traffic: Traffic, size_bytes: int) -> Traffic:
    """``traffic`` with every transfer carrying ``size_bytes`` (same transfers, same order)."""
    return Traffic([Transfer(t.src, t.dst, size_bytes) for t in traffic], traffic.name)


def scaled_schedule(schedule: Schedule, size_bytes: int) -> Schedule | None:
    """``schedule`` with every transfer carrying ``size_bytes``, when its frames do not depend
    on the size: a :data:`SIZE_INDEPENDENT` scheduler's, every piece a whole transfer. None
    otherwise (plan again for that size)."""
    traffic = schedule.traffic
    whole = dict(zip(traffic.names, (t.size_bytes for t in traffic)))
    pieces = [p for frame in schedule.frames for p in frame]
    if (schedule.info.algorithm not in SIZE_INDEPENDENT or len(pieces) != len(whole)
            or any(p.bytes != whole.get(p.transfer) for p in pieces)):
        return None
    frames = [[Piece(p.transfer, size_bytes) for p in frame] for frame in schedule.frames]
    return Schedule(schedule.network, resized_traffic(traffic, size_bytes), frames, schedule.info)


class SizedSchedules:
    """The schedule at each size: ``schedule`` scaled when it can be (:func:`scaled_schedule`),
    else ``replan`` of the traffic at that size; remembers how each was made."""

    def __init__(self, schedule: Schedule, replan: Callable[[Traffic], Schedule] | None = None) -> None:
        common_size(schedule.traffic)
        self.schedule = schedule
        self.replan = replan
        self.made: dict[int, str] = {}
        self._cache: dict[int, Schedule] = {}

    def __call__(self, size_bytes: int) -> Schedule:
        """The schedule at ``size_bytes``, made once and remembered, with how it was made in
        :attr:`made` (``scaled`` or ``planned``).

        Parameters
        ----------
        size_bytes
            The size every transfer carries.

        Returns
        -------
        Schedule
            The schedule scaled to that size (:func:`scaled_schedule`) when its frames do not
            depend on the size, else ``replan`` of the traffic resized to it. Neither is
            validated here: the caller checks it (``run --sizes`` validates every size's).

        Raises
        ------
        InputError
            when the schedule cannot be scaled and there is no ``replan``.
        """
        if size_bytes not in self._cache:
            scaled = scaled_schedule(self.schedule, size_bytes)
            if scaled is not None:
                self.made[size_bytes] = "scaled"
            elif self.replan is None:
                raise InputError(f"the {self.schedule.info.algorithm} schedule's frames depend on the size (pieces, "
                                 "packets or step costs), so it cannot be scaled: give --topology and --algorithm so "
                                 "that it is planned for each size")
            else:
                scaled = self.replan(resized_traffic(self.schedule.traffic, size_bytes))
                self.made[size_bytes] = "planned"
            self._cache[size_bytes] = scaled
        return self._cache[size_bytes]


@dataclass
class SizePoint:
    """The run at one size."""

    size_bytes: int
    result: ExchangeResult
    #: ``scaled`` (the schedule planned once, its bytes scaled) or ``planned`` (for this size)
    made: str
    frames: int

    def mode_rows(self) -> list[dict[str, Any]]:
        """Per mode: the statistics of its timed runs, its throughput (median) and, on the
        modelled network only, its ratio to the liquid throughput."""
        return [mode_row(m) for m in self.result.modes]

    def to_dict(self) -> dict[str, Any]:
        info = self.result.info
        return {"size_bytes": self.size_bytes, "schedule": {"algorithm": self.result.schedule_algorithm,
                                                            "frames": self.frames, "made": self.made},
                "network_bytes": info.get("network_bytes"), "liquid_throughput_Bps": info.get("liquid_throughput_Bps"),
                "modes": self.mode_rows()}


def mode_row(m: ModeResult) -> dict[str, Any]:
    """One mode's timed runs summarised (:func:`time_statistics`)."""
    ratio = m.ratio_to_bound if m.comparable and m.liquid_throughput_Bps else None
    return {"mode": m.mode, "algorithm": m.algorithm, **time_statistics(m.times_s), "times_s": m.times_s,
            "throughput_Bps": m.throughput_Bps, "ratio_to_bound": ratio, "verified": m.verified}


@dataclass
class SizesResult:
    """The runs of a sweep, size by size."""

    points: list[SizePoint] = field(default_factory=list)

    @property
    def network(self) -> str:
        return self.points[0].result.network if self.points else "local"

    @property
    def comparable(self) -> bool:
        return bool(self.points) and self.points[0].result.comparable

    @property
    def mpi_library(self) -> str:
        return self.points[0].result.mpi_library if self.points else ""

    def to_dict(self) -> dict[str, Any]:
        from . import NETWORKS

        first = self.points[0].result if self.points else None
        return {"network": self.network, "network_note": NETWORKS[self.network],
                "comparable_to_bound": self.comparable, "hosts": first.hosts if first else [],
                "mpi_library": self.mpi_library, "sizes": [p.to_dict() for p in self.points]}


class SizesFailedError(BackendError):
    """A sweep's run failed at one size; ``partial`` holds the sizes (and modes) measured before."""

    def __init__(self, message: str, partial: SizesResult) -> None:
        super().__init__(message)
        self.partial = partial


def run_sizes(schedule_at: Callable[[int], Schedule], sizes: Sequence[int], modes: Sequence[str],
              mode_schedules_at: Callable[[Schedule], Mapping[str, Schedule]] | None = None,
              on_size: Callable[[int, int], None] | None = None, **run_options: Any) -> SizesResult:
    """Run every mode at every size, smallest first.

    Parameters
    ----------
    schedule_at
        The schedule at a size (a :class:`SizedSchedules`).
    mode_schedules_at
        The schedules of the modes that run their own (shuffle, pairwise) for a size's schedule.
    on_size
        Called after each size with (sizes done, sizes in all).
    run_options
        :func:`~liquidsched.execute.run_exchange`'s options (repeats, warm-up, namespaces,
        timeout for each size, launcher, …).

    Raises
    ------
    InsufficientMemoryError
        before anything runs, when the largest size cannot fit (ranks run here).
    SizesFailedError
        when a size's run fails: what was measured before it, that size's modes included.
    """
    sizes = sorted(sizes)
    largest = schedule_at(sizes[-1])
    kind = network_kind(run_options.get("namespaces"), run_options.get("on_modelled_network", False),
                        run_options.get("mpiexec_args", ()), run_options.get("launcher"))
    check_memory_on(kind, exchange_plan(largest))
    made = getattr(schedule_at, "made", {})
    done = SizesResult()
    for k, size in enumerate(sizes):
        schedule = schedule_at(size)
        own = mode_schedules_at(schedule) if mode_schedules_at else None
        try:
            result = run_exchange(schedule, modes, mode_schedules=own, **run_options)
        except ExchangeFailedError as e:
            if e.partial is not None:
                done.points.append(SizePoint(size, e.partial, made.get(size, "given"), schedule.length))
            raise SizesFailedError(f"at {format_size(size)}: {e}", done) from None
        done.points.append(SizePoint(size, result, made.get(size, "given"), schedule.length))
        if on_size:
            on_size(k + 1, len(sizes))
    return done


__all__ = ["MAX_SIZES", "SIZE_INDEPENDENT", "SizePoint", "SizedSchedules", "SizesFailedError", "SizesResult",
           "common_size", "format_size", "mode_row", "parse_sizes", "resized_traffic", "run_sizes", "scaled_schedule",
           "time_statistics"]

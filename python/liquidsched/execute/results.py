"""What an execution measured, mode by mode (:class:`ModeResult`, :class:`ExchangeResult`), and
the error that keeps what was measured before a failure."""

from __future__ import annotations

import statistics
from dataclasses import dataclass, field
from fractions import Fraction
from typing import Any, Mapping

from ..bounds import compute_bound
from ..errors import BackendError
from ..schedule import Schedule
from .memory import memory_estimate
from .networks import COMPARABLE_NETWORKS, NETWORKS
from .plan import ExchangePlan, library_mode_env
from .prediction import crossing_exchange

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


def exchange_result(schedule: Schedule, plan: ExchangePlan, raw: dict, network: str,
            schedules: Mapping[str, Schedule] | None = None) -> ExchangeResult:
    traffic = schedule.exchange
    crossing = crossing_exchange(schedule)
    bound = None if crossing is None else float(Fraction(compute_bound(schedule.network,
                                                                        crossing).liquid_throughput_Bps))
    network_bytes = 0 if crossing is None else crossing.total_bytes
    comparable = network in COMPARABLE_NETWORKS and bound is not None
    schedules = schedules or {}

    def algorithm(mode: str) -> str:
        if library_mode_env(mode) is not None:
            return "MPI"
        own = schedules.get(mode, schedule)
        # Paced sends a relayed schedule's exchange straight, not along its legs.
        return "straight" if mode == "paced" and own.relay is not None else own.info.algorithm

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

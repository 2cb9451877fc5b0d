"""Schedules: ordered timeframes of pieces of transfers, and their file format.

A timeframe is a list of pieces (transfer name, bytes). In the liquid model a frame is valid
when no resource is used twice in it; a schedule is valid when every transfer's bytes are
delivered exactly once (:mod:`liquidsched.validate` checks both). A schedule carries the network
and traffic it is for and how it was made, so a schedule file can be checked on its own.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from fractions import Fraction
from typing import Any, Iterable, Sequence

from .errors import ScheduleFormatError
from .io.fields import Fields, read_count, read_id, read_list, read_mapping, read_number, read_str
from .io.files import read_document, write_document
from .io.topology import topology_from_dict, topology_to_dict
from .network import Network
from .traffic import Traffic

FORMAT = "liquidsched-schedule"
VERSION = 1
E = ScheduleFormatError


@dataclass(frozen=True)
class Piece:
    """``bytes`` of the transfer named ``transfer`` sent in one frame."""

    transfer: str
    bytes: int


@dataclass
class ScheduleInfo:
    """How a schedule was made."""

    algorithm: str
    parameters: dict[str, Any] = field(default_factory=dict)
    #: no valid schedule has fewer frames (the most transfers on one resource)
    lower_bound: int | None = None
    #: True when the length is proven optimal, False when known not to be, None if unknown
    optimal: bool | None = None
    stats: dict[str, Any] = field(default_factory=dict)
    time_s: float = 0.0


class Schedule:
    """An ordered list of timeframes for ``traffic`` on ``network``."""

    def __init__(self, network: Network, traffic: Traffic, frames: Sequence[Sequence[Piece]],
                 info: ScheduleInfo) -> None:
        self.network = network
        self.traffic = traffic
        self.frames: list[list[Piece]] = [list(f) for f in frames]
        self.info = info

    @classmethod
    def from_indices(cls, network: Network, traffic: Traffic, frames: Iterable[Iterable[int]],
                     info: ScheduleInfo) -> Schedule:
        """A schedule of whole transfers, frames given as transfer indices."""
        pieces = traffic.derived.get("whole_pieces")
        if pieces is None:
            pieces = traffic.derived["whole_pieces"] = [Piece(n, t.size_bytes) for n, t in zip(traffic.names, traffic)]
        return cls(network, traffic, [[pieces[i] for i in f] for f in frames], info)

    @property
    def length(self) -> int:
        """Number of timeframes."""
        return len(self.frames)

    @property
    def liquid(self) -> bool | None:
        """Whether the length equals the traffic's duration Λ (only defined for whole-transfer
        frame counts, i.e. when a lower bound is known)."""
        if self.info.lower_bound is None:
            return None
        return self.length == self.info.lower_bound

    def frame_durations_s(self, overhead_s: float = 0.0) -> list[Fraction]:
        """Each frame as long as its longest piece (bytes over the narrowest link of its path),
        plus ``overhead_s``."""
        net, index = self.network, self.traffic.index
        out = []
        for frame in self.frames:
            longest = Fraction(0)
            for p in frame:
                t = self.traffic[index[p.transfer]]
                narrowest = min(net.resource_capacity_exact(r) for r in net.path_resources(t.src, t.dst))
                longest = max(longest, Fraction(p.bytes) / narrowest)
            out.append(longest + Fraction(overhead_s))
        return out

    def summary(self) -> dict[str, Any]:
        """The fields other tools read: algorithm, length, lower bound, time."""
        return {
            "algorithm": self.info.algorithm,
            "length": self.length,
            "lower_bound": self.info.lower_bound,
            "liquid": self.liquid,
            "optimal": self.info.optimal,
            "nodes_explored": self.info.stats.get("nodes_explored"),
            "gap": self.info.stats.get("gap", self._gap_to_lower_bound()),
            "time_s": self.info.time_s,
            "parameters": self.info.parameters,
        }

    def _gap_to_lower_bound(self) -> int | None:
        return None if self.info.lower_bound is None else self.length - self.info.lower_bound

    def to_dict(self) -> dict[str, Any]:
        info = self.info
        return {
            "format": FORMAT,
            "version": VERSION,
            "info": {"algorithm": info.algorithm, "parameters": info.parameters,
                     "lower_bound": info.lower_bound, "optimal": info.optimal,
                     "stats": info.stats, "time_s": info.time_s},
            "network": topology_to_dict(self.network),
            "traffic": self.traffic.to_dict(),
            "frames": [[{"transfer": p.transfer, "bytes": p.bytes} for p in f] for f in self.frames],
        }

    @classmethod
    def from_dict(cls, doc: Any, where: str = "") -> Schedule:
        """Read a schedule document. Only the format is checked here; validity is
        :func:`liquidsched.validate.validate`'s job."""
        top = Fields(doc, "", E, ("format", "version", "info", "network", "traffic", "frames"))
        prefix = f"{where}: " if where else ""
        try:
            if top.get("format", read_str) != FORMAT:
                raise E(f"format: expected {FORMAT!r}")
            if top.get("version", read_count) != VERSION:
                raise E(f"version: unsupported (this liquidsched reads {VERSION})")
            info = _read_info(top.get("info", read_mapping, {"algorithm": "unknown"}))
            frames = []
            for i, frame in enumerate(top.get("frames", read_list)):
                pieces = []
                for j, item in enumerate(read_list(frame, f"frames[{i}]", E)):
                    p = Fields(item, f"frames[{i}][{j}]", E, ("transfer", "bytes"))
                    pieces.append(Piece(p.get("transfer", read_id), p.get("bytes", _read_bytes)))
                frames.append(pieces)
        except E as e:
            raise E(f"{prefix}{e}") from None
        network = topology_from_dict(top.get("network", read_mapping), f"{where}: network" if where else "network")
        traffic = Traffic.from_dict(top.get("traffic", read_mapping), f"{prefix}traffic")
        return cls(network, traffic, frames, info)

    def save(self, path: str | os.PathLike) -> None:
        """Write the schedule file (JSON), atomically."""
        write_document(self.to_dict(), path)

    @classmethod
    def load(cls, path: str | os.PathLike) -> Schedule:
        return cls.from_dict(read_document(path, E), str(path))

    def __repr__(self) -> str:
        return f"Schedule({self.info.algorithm!r}, {self.length} frames, {len(self.traffic)} transfers)"


def _read_bytes(value: Any, where: str, error: type[Exception]) -> int:
    # Non-positive sizes are a validity problem the validator reports; here only the type matters.
    if isinstance(value, bool) or not isinstance(value, int):
        raise error(f"{where}: expected a whole number of bytes, got {value!r}")
    return value


def _read_info(value: dict) -> ScheduleInfo:
    f = Fields(value, "info", E, ("algorithm", "parameters", "lower_bound", "optimal", "stats", "time_s"))
    optimal = f.value.get("optimal")
    if optimal is not None and not isinstance(optimal, bool):
        raise E(f"info.optimal: expected true, false or null, got {optimal!r}")
    lower = f.value.get("lower_bound")
    return ScheduleInfo(
        algorithm=f.get("algorithm", read_str, "unknown"),
        parameters=f.get("parameters", read_mapping, {}),
        lower_bound=read_count(lower, "info.lower_bound", E) if lower is not None else None,
        optimal=optimal,
        stats=f.get("stats", read_mapping, {}),
        time_s=f.get("time_s", read_number, 0.0),
    )

"""Schedules: ordered timeframes of pieces of transfers, and their file format.

A timeframe is a list of pieces (transfer name, bytes). A frame is valid when no resource
carries more pieces than its slots (with one slot everywhere: no resource is used twice); a
schedule is valid when every transfer's bytes are delivered exactly once
(:mod:`liquidsched.validation` checks both). In a frame each piece runs at its slot rate and the
frame lasts as long as its longest piece; the schedule's time is the sum over its frames, and the
schedule is **liquid** when that time equals the traffic's duration Λ, exactly. A schedule carries
the network and traffic it is for and how it was made, so a schedule file can be checked on its
own.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from fractions import Fraction
from typing import Any, Callable, Iterable, Sequence

import numpy as np

from .bounds import Bound, SlotTimes, compute_bound, slot_times
from .errors import ScheduleFormatError, TrafficError
from .io.fields import Fields, read_count, read_id, read_list, read_mapping, read_number, read_str
from . import _core
from .io.files import (EncodedItems, EncodedList, encoded_numbers, encoded_strings, read_document, write_document,
                       writes_json)
from .io.topology import topology_from_dict, topology_to_dict
from .network import Network
from .relay import Relay
from .traffic import Traffic
from .transfer_routes import cached_transfer_routes, time_weights

FORMAT = "liquidsched-schedule"
VERSION = 1
E = ScheduleFormatError
#: Schedules of this many transfers or more are written without indentation (faster, smaller).
COMPACT_TRANSFERS = 10_000


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
    #: no valid schedule has fewer frames (the frame bound: the most frames one resource needs)
    lower_bound: int | None = None
    #: True when the number of frames is proven minimal (in the slot model), False when known
    #: not to be, None if unknown; minimal frames is minimal time only when every transfer takes
    #: as long in its slot (see :attr:`Schedule.time_optimal`)
    optimal: bool | None = None
    stats: dict[str, Any] = field(default_factory=dict)
    time_s: float = 0.0


class Schedule:
    """An ordered list of timeframes for ``traffic`` on ``network``.

    A relayed schedule (``relay`` given, :mod:`liquidsched.relay`) is a schedule of the legs of
    an exchange whose bytes go through other hosts: ``traffic`` holds the legs, and
    ``relay.original`` the exchange's own transfers.
    """

    def __init__(self, network: Network, traffic: Traffic, frames: Sequence[Sequence[Piece]],
                 info: ScheduleInfo, relay: Relay | None = None) -> None:
        self.network = network
        self.traffic = traffic
        self._frames: list[list[Piece]] | None = [list(f) for f in frames]
        self._columns: FrameColumns | None = None
        #: each frame's longest time in units and the units in a second, for a column (made once)
        self._longest_units: tuple[np.ndarray, int] | None = None
        self.info = info
        self.relay = relay

    @classmethod
    def from_frame_of(cls, network: Network, traffic: Traffic, frame_of: np.ndarray, info: ScheduleInfo,
                      order: np.ndarray | None = None) -> Schedule:
        """A schedule of whole transfers given as each transfer's frame (numbered from 0),
        held as that column: a schedule of millions of transfers takes no Python object per
        transfer until its frames are asked for (:attr:`frames`). ``order`` lists the
        transfers frame after frame in the order each frame has them (by index when not given).

        Examples
        --------
        >>> from liquidsched.topologies import crossbar
        >>> from liquidsched.traffic import Traffic, Transfer
        >>> t = Traffic([Transfer("h1", "h2"), Transfer("h2", "h3"), Transfer("h3", "h1")])
        >>> s = Schedule.from_frame_of(crossbar(3), t, np.array([1, 0, 0]), ScheduleInfo("by hand"))
        >>> s.length, [[p.transfer for p in f] for f in s.frames]
        (2, [['h2->h3', 'h3->h1'], ['h1->h2']])
        """
        schedule = cls(network, traffic, (), info)
        schedule._frames = None
        schedule._columns = FrameColumns.of(frame_of, len(traffic), order)
        return schedule

    @property
    def frames(self) -> list[list[Piece]]:
        """The frames as lists of pieces. A schedule held as a column (:meth:`from_frame_of`)
        makes them at the first call and is held by them from then on, as they may be changed."""
        if self._frames is None:
            pieces = _whole_pieces(self.traffic)
            order = self._columns.order.tolist()
            starts = self._columns.starts.tolist()
            self._frames = [[pieces[i] for i in order[a:b]] for a, b in zip(starts, starts[1:])]
            self._columns = None
        return self._frames

    @property
    def frame_columns(self) -> FrameColumns | None:
        """The frame of each transfer while the schedule is held as a column, else None."""
        return self._columns

    @property
    def exchange(self) -> Traffic:
        """The exchange the schedule carries out: the relayed traffic of a relayed schedule,
        else its own traffic."""
        return self.traffic if self.relay is None else self.relay.original

    @classmethod
    def from_indices(cls, network: Network, traffic: Traffic, frames: Iterable[Iterable[int]],
                     info: ScheduleInfo) -> Schedule:
        """A schedule of whole transfers, frames given as transfer indices. Held as a column
        (:meth:`from_frame_of`, checked and timed in the core) when the frames hold every
        transfer once and none is empty; as lists of pieces otherwise, for the validator to
        name what is wrong."""
        frames = [list(f) for f in frames]
        order = np.fromiter((i for f in frames for i in f), dtype=np.int64)
        n = len(traffic)
        if (frames and all(frames) and len(order) == n and order.min() >= 0 and order.max() < n
                and np.bincount(order, minlength=n).max() == 1):
            frame_of = np.empty(n, dtype=np.int64)
            frame_of[order] = np.repeat(np.arange(len(frames)), [len(f) for f in frames])
            return cls.from_frame_of(network, traffic, frame_of, info, order)
        pieces = _whole_pieces(traffic)
        return cls(network, traffic, [[pieces[i] for i in f] for f in frames], info)

    @property
    def length(self) -> int:
        """Number of timeframes."""
        return len(self._columns.starts) - 1 if self._columns is not None else len(self.frames)

    def frame_steps(self) -> list[int]:
        """The step of each frame, non-decreasing. A stepped algorithm (shuffle, pairwise) that
        splits a step into several frames records its steps (``info.stats["frame_steps"]``);
        otherwise each frame is a step of its own. The window and steps policies of the
        simulator, and the shuffle and pairwise modes of the executor, go step by step."""
        steps = self.info.stats.get("frame_steps")
        if steps is None:
            return list(range(self.length))
        if len(steps) != self.length or any(b < a for a, b in zip(steps, steps[1:])):
            raise ScheduleFormatError(f"info.stats.frame_steps: expected {self.length} non-decreasing steps, "
                             f"one per frame")
        return [int(s) for s in steps]

    @property
    def bound(self) -> Bound:
        """The bound of the schedule's traffic on its network (:func:`compute_bound` keeps it
        with the traffic)."""
        return compute_bound(self.network, self.traffic)

    @property
    def liquid(self) -> bool | None:
        """Whether the schedule's time equals the traffic's duration Λ, exactly: every
        bottleneck busy all the time (None when a piece names an unknown transfer)."""
        return self._liquid(self._known_makespan())

    @property
    def time_optimal(self) -> bool | None:
        """True when no schedule of whole transfers in frames takes less time: the schedule is
        liquid, reaches the frame bound's time, or has proven fewest frames while every transfer
        takes as long in its slot. None when not known (fewest frames is then not least time)."""
        return self._time_optimal(self._known_makespan())

    def _known_makespan(self) -> Fraction | None:
        """The makespan, or None when a piece names an unknown transfer."""
        if self._columns is not None:
            return self.makespan_s()
        if any(p.transfer not in self.traffic.index for frame in self.frames for p in frame):
            return None
        return self.makespan_s()

    def _liquid(self, makespan: Fraction | None) -> bool | None:
        return None if makespan is None else makespan == self.bound.duration_s

    def _time_optimal(self, makespan: Fraction | None) -> bool | None:
        if makespan is None:
            return None
        if makespan in (self.bound.duration_s, self.bound.frame_bound_time_s):
            return True
        if self.info.optimal and self._one_slot_time():
            return True
        return None

    def _one_slot_time(self) -> bool:
        """Whether every transfer takes as long in its slots."""
        units = self._columns and self._columns.time_units(self.network, self.traffic)
        if units:
            return len(np.unique(units[0])) <= 1
        return len(self._slot_times().values) == 1

    def _column_frame_units(self) -> tuple[np.ndarray, int] | None:
        """Each frame's longest transfer time in units, and the units in a second, for a
        schedule held as a column (None otherwise, or when the units do not fit in 64 bits)."""
        if self._columns is None:
            return None
        if self._longest_units is None:
            units = self._columns.time_units(self.network, self.traffic)
            if units is None:
                return None
            times, scale = units
            longest = np.zeros(self.length, dtype=np.int64)
            np.maximum.at(longest, self._columns.frame_of, times)
            self._longest_units = (longest, scale)
        return self._longest_units

    def _slot_times(self) -> SlotTimes:
        return slot_times(self.network, self.traffic)

    def frame_durations_s(self, overhead_s: float = 0.0) -> list[Fraction]:
        """Each frame as long as its longest piece at its slot rate (bytes over the smallest
        capacity / slots on its path), plus ``overhead_s``."""
        longest = self._column_frame_units()
        if longest is not None:
            # Transfer by transfer in integers: a frame's longest in units, then one Fraction.
            units, scale = longest
            return [Fraction(u, scale) + Fraction(overhead_s) for u in units.tolist()]
        index, sizes = self.traffic.index, self.traffic.transfers
        times = self._slot_times()
        ranks, values = times.ranks, times.values
        overhead = Fraction(overhead_s)
        out = []
        for frame in self.frames:
            whole, longest = -1, Fraction(0)
            for p in frame:
                i = index[p.transfer]
                if p.bytes == sizes[i].size_bytes:
                    whole = max(whole, ranks[i])
                else:
                    longest = max(longest, values[ranks[i]] * p.bytes / sizes[i].size_bytes)
            if whole >= 0:
                longest = max(longest, values[whole])
            out.append(longest + overhead)
        return out

    def makespan_s(self, overhead_s: float = 0.0) -> Fraction:
        """The schedule's time in the frames model: the sum of its frames' durations."""
        return sum(self.frame_durations_s(overhead_s), Fraction(0))

    def summary(self) -> dict[str, Any]:
        """The fields other tools read: frames against the frame bound (``length``,
        ``lower_bound``, ``optimal`` in frames, ``gap`` — None when transfers are cut into pieces,
        as the bound counts frames of whole transfers), time against Λ and the frame bound's time
        (``makespan_s``, ``duration_s``, ``ratio_to_bound``, ``liquid``, ``time_optimal``,
        ``gap_s``; all without latency, and without β: with a β the schedule was made for,
        ``makespan_with_overhead_s`` and ``ratio_with_overhead`` too), and how the schedule was
        made (``time_s`` is the time spent making it)."""
        bound = self.bound
        makespan = self._known_makespan()
        # The frame bound counts frames of whole transfers: a schedule that cuts transfers into
        # pieces (packets, shares) is compared with it in time, not in frames.
        whole = self.whole_transfers()
        summary = {
            "algorithm": self.info.algorithm,
            "length": self.length,
            "lower_bound": self.info.lower_bound,
            "liquid": self._liquid(makespan),
            "optimal": self.info.optimal,
            "time_optimal": self._time_optimal(makespan),
            "nodes_explored": self.info.stats.get("nodes_explored"),
            "whole_transfers": whole,
            "gap": self.info.stats.get("gap", self._gap_to_lower_bound()) if whole else None,
            "gap_s": None if makespan is None else float(makespan - bound.frame_bound_time_s),
            "makespan_s": None if makespan is None else float(makespan),
            "duration_s": float(bound.duration_s),
            "frame_bound_time_s": float(bound.frame_bound_time_s),
            "ratio_to_bound": float(bound.duration_s / makespan) if makespan else None,
            "throughput_Bps": float(self.traffic.total_bytes / makespan) if makespan else None,
            "liquid_throughput_Bps": float(bound.liquid_throughput_Bps),
            "time_s": self.info.time_s,
            "parameters": self.info.parameters,
        }
        overhead = self.info.parameters.get("overhead_s") or 0.0
        if overhead and makespan is not None:
            # β is part of what the schedule costs when it was made for one: its time with β,
            # beside the time without it that "liquid" is about.
            with_overhead = self.makespan_s(overhead)
            summary["overhead_s"] = overhead
            summary["makespan_with_overhead_s"] = float(with_overhead)
            summary["ratio_with_overhead"] = float(bound.duration_s / with_overhead)
        if self.relay is not None and makespan:
            # A relayed schedule's bound is that of its legs; what the user exchanges, and the
            # bound of sending it straight, are the relayed traffic's.
            direct = compute_bound(self.network, self.relay.original).duration_s
            summary.update(relayed=True, legs=len(self.traffic), direct_duration_s=float(direct),
                           ratio_to_direct_bound=float(direct / makespan),
                           throughput_Bps=float(self.relay.original.total_bytes / makespan))
        if self.info.optimal and not summary["time_optimal"]:
            summary["note"] = ("fewest frames proven; transfers take different times in their slots, "
                               "so fewest frames is not proven least time")
        return summary

    def whole_transfers(self) -> bool:
        """Whether every piece is a whole transfer (what the frame bound counts frames of)."""
        if self._columns is not None:
            return True
        index, transfers = self.traffic.index, self.traffic.transfers
        return all(p.transfer in index and p.bytes == transfers[index[p.transfer]].size_bytes
                   for frame in self.frames for p in frame)

    def _gap_to_lower_bound(self) -> int | None:
        return None if self.info.lower_bound is None else self.length - self.info.lower_bound

    def to_dict(self) -> dict[str, Any]:
        return self._document(encoded=False)

    def _document(self, encoded: bool) -> dict[str, Any]:
        """The schedule document; ``encoded``: its transfers and the pieces of a schedule made
        as a column encoded already (:class:`EncodedItems`), for a compact JSON file."""
        info = self.info
        doc = {
            "format": FORMAT,
            "version": VERSION,
            "info": {"algorithm": info.algorithm, "parameters": info.parameters,
                     "lower_bound": info.lower_bound, "optimal": info.optimal,
                     "stats": info.stats, "time_s": info.time_s},
            "network": topology_to_dict(self.network),
            "traffic": self.traffic.encoded_dict() if encoded else self.traffic.to_dict(),
            "frames": self._encoded_frames() if encoded and self._columns is not None else self._frame_dicts(),
        }
        if self.relay is not None:
            doc["relay"] = self.relay.to_dict(self.traffic)
        return doc

    def _frame_dicts(self) -> list[list[dict[str, Any]]]:
        """The frames as the file writes them (from the column where the schedule is one)."""
        if self._columns is None:
            return [[{"transfer": p.transfer, "bytes": p.bytes} for p in f] for f in self.frames]
        names, sizes = self.traffic.names, np.asarray(self.traffic.sizes).tolist()
        order, starts = self._columns.order.tolist(), self._columns.starts.tolist()
        return [[{"transfer": names[i], "bytes": sizes[i]} for i in order[a:b]] for a, b in zip(starts, starts[1:])]

    def _encoded_frames(self) -> EncodedList | list[EncodedItems]:
        """:meth:`_frame_dicts` of a schedule made as a column, its pieces encoded already: the
        frames' text written by the core (one frame a line, each frame's pieces as a list one
        level deeper), or else each frame's pieces encoded by Python."""
        columns = self.traffic.json_columns()
        if columns is not None:
            order = self._columns.order.astype("<u4").tobytes()
            starts = self._columns.starts.astype("<u8").tobytes()
            return EncodedList(lambda level, per_line: _core.frames_json(*columns, order, starts, per_line, level))
        sizes = np.asarray(self.traffic.sizes)
        sizes = encoded_numbers(sizes if sizes.dtype != object else sizes.tolist())
        pieces = [f'{{"transfer": {n}, "bytes": {z}}}' for n, z in zip(encoded_strings(self.traffic.names), sizes)]
        order, starts = self._columns.order.tolist(), self._columns.starts.tolist()
        return [EncodedItems([pieces[i] for i in order[a:b]]) for a, b in zip(starts, starts[1:])]

    @classmethod
    def from_dict(cls, doc: Any, where: str = "") -> Schedule:
        """Read a schedule document. Only the format is checked here; validity is
        :func:`liquidsched.validation.validate`'s job."""
        prefix = f"{where}: " if where else ""
        try:
            _check_is_schedule_document(doc)
            top = Fields(doc, "", E, ("format", "version", "info", "network", "traffic", "frames", "relay"))
            if top.get("version", read_count) != VERSION:
                raise E(f"version: unsupported (this liquidsched reads {VERSION})")
            info = _read_info(top.get("info", read_mapping, {"algorithm": "unknown"}))
            frames_doc = top.get("frames", read_list)
            traffic, whole = (None, None) if "relay" in doc else _whole_frames(frames_doc, doc.get("traffic"), prefix)
            frames = []
            for i, frame in enumerate(frames_doc if whole is None else ()):
                pieces = []
                # Frames and pieces are numbered from 1, as check and the plots number them.
                for j, item in enumerate(read_list(frame, f"frame {i + 1}", E)):
                    p = Fields(item, f"frame {i + 1}, piece {j + 1}", E, ("transfer", "bytes"))
                    pieces.append(Piece(p.get("transfer", read_id), p.get("bytes", _read_bytes)))
                frames.append(pieces)
            network_doc, traffic_doc = top.get("network", read_mapping), top.get("traffic", read_mapping)
            relay_doc = top.get("relay", read_mapping, None)
        except E as e:
            raise E(f"{prefix}{e}") from None
        network = topology_from_dict(network_doc, f"{prefix}network")
        if traffic is None:
            traffic = Traffic.from_dict(traffic_doc, f"{prefix}traffic")
        if whole is not None:
            return cls.from_indices(network, traffic, whole, info)
        relay = None if relay_doc is None else Relay.from_dict(relay_doc, traffic, f"{prefix}relay")
        return cls(network, traffic, frames, info, relay)

    def save(self, path: str | os.PathLike) -> None:
        """Write the schedule file (JSON), atomically; without indentation from
        :data:`COMPACT_TRANSFERS` transfers on."""
        compact = len(self.traffic) >= COMPACT_TRANSFERS
        write_document(self._document(encoded=compact and writes_json(path)), path, compact=compact)

    @classmethod
    def load(cls, path: str | os.PathLike) -> Schedule:
        return cls.from_dict(read_document(path, E), str(path))

    def __repr__(self) -> str:
        return f"Schedule({self.info.algorithm!r}, {self.length} frames, {len(self.traffic)} transfers)"


def _whole_pieces(traffic: Traffic) -> list[Piece]:
    """A piece of each whole transfer, made once per traffic."""
    pieces = traffic.derived.get("whole_pieces")
    if pieces is None:
        pieces = traffic.derived["whole_pieces"] = [Piece(n, t.size_bytes) for n, t in zip(traffic.names, traffic)]
    return pieces


@dataclass(frozen=True)
class FrameColumns:
    """A schedule of whole transfers as columns: transfer ``t`` is in frame ``frame_of[t]``;
    ``order`` lists the transfers frame after frame (by index within a frame), frame ``f``
    being ``order[starts[f]:starts[f + 1]]``."""

    frame_of: np.ndarray
    order: np.ndarray
    starts: np.ndarray

    @classmethod
    def of(cls, frame_of: np.ndarray, transfers: int, order: np.ndarray | None = None) -> FrameColumns:
        frame_of = np.asarray(frame_of)
        if frame_of.shape != (transfers,) or frame_of.dtype.kind not in "iu" or (transfers and frame_of.min() < 0):
            raise ValueError(f"frame_of: expected a frame number from 0 for each of the {transfers} transfers")
        frame_of = frame_of.astype(np.int64)
        frames = int(frame_of.max()) + 1 if transfers else 0
        starts = np.concatenate([[0], np.cumsum(np.bincount(frame_of, minlength=frames))])
        if order is None:
            order = np.argsort(frame_of, kind="stable")
        else:
            order = np.asarray(order, dtype=np.int64)
            if (order.shape != (transfers,) or np.any(np.diff(frame_of[order]) < 0)
                    or np.bincount(order, minlength=transfers).max(initial=1) != 1):
                raise ValueError("order: expected every transfer once, frame after frame")
        return cls(frame_of, order, starts)

    def time_units(self, net: Network, traffic: Traffic) -> tuple[np.ndarray, int] | None:
        """Each transfer's time in its slots as a whole number of units, and the units in a
        second; None when they do not fit in 64 bits."""
        sizes = np.asarray(traffic.sizes)
        weights = time_weights(net, cached_transfer_routes(net, traffic).slowest)
        if weights is None or sizes.dtype == object:
            return None
        weight, scale = weights
        if len(sizes) and int(sizes.max()) * int(weight.max()) >= 2**63:
            return None
        return sizes.astype(np.int64) * weight.astype(np.int64), scale


def frames_of_shares(traffic: Traffic, steps: Iterable[Iterable[tuple[int, Any]]],
                     upto: Callable[[int, Any], int]) -> list[list[Piece]]:
    """Frames of whole-byte pieces from steps of ``(transfer index, amount)``: a transfer's bytes
    are cut at ``upto(t, its amount so far)`` (the bytes sent once that much of it is done), so
    that its pieces add up to its size whatever the rounding; empty pieces and frames are left
    out. The schedulers that cut transfers (KPBS, weighted) share it."""
    names = traffic.names
    done: list[Any] = [0] * len(traffic)
    sent = [0] * len(traffic)
    frames = []
    for step in steps:
        frame = []
        for t, amount in step:
            done[t] += amount
            cut = upto(t, done[t])
            if cut > sent[t]:
                frame.append(Piece(names[t], cut - sent[t]))
                sent[t] = cut
        if frame:
            frames.append(frame)
    return frames


def _check_is_schedule_document(doc: Any) -> None:
    """Say what a document is when it is not a schedule: a topology or a traffic given where a
    schedule is expected gets that, not a complaint about its first field."""
    if not isinstance(doc, dict):
        raise E(f"not a schedule file: expected a mapping with format {FORMAT!r}, got {type(doc).__name__}")
    if doc.get("format") == FORMAT:
        return
    looks = ("a topology file" if "links" in doc or "nodes" in doc or "hosts" in doc
             else "a traffic file" if "transfers" in doc else None)
    if "format" in doc and looks is None:
        raise E(f"not a schedule file: format is {doc['format']!r}, expected {FORMAT!r}")
    raise E("not a schedule file" + (f": it looks like {looks}" if looks else f" (no 'format: {FORMAT}')")
            + "; schedule files are written by liquidsched plan --output")


def _whole_frames(frames: list, traffic_doc: Any, prefix: str) -> tuple[Traffic | None, list[list[int]] | None]:
    """The traffic of a schedule document, if it reads, and, when every piece of its frames is
    a whole transfer of it as ``{"transfer": name, "bytes": size}``, the frames as transfer
    indices, for :meth:`Schedule.from_indices` (which holds them as a column when every
    transfer is there once: no object is made per transfer). Otherwise the frames are read piece
    by piece, which names what is wrong in them."""
    if not isinstance(traffic_doc, dict):
        return None, None
    try:
        traffic = Traffic.from_dict(traffic_doc, f"{prefix}traffic")
    except TrafficError:
        return None, None
    if traffic.sizes.dtype != np.int64:
        return traffic, None
    index, sizes = traffic.index, traffic.sizes.tolist()
    indices = []
    for frame in frames:
        if type(frame) is not list:
            return traffic, None
        ts = []
        for item in frame:
            if type(item) is not dict or len(item) != 2:
                return traffic, None
            name, size = item.get("transfer"), item.get("bytes")
            t = index.get(name) if type(name) is str else None
            if t is None or type(size) is not int or size != sizes[t]:
                return traffic, None
            ts.append(t)
        indices.append(ts)
    return traffic, indices


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

"""Loads, duration Λ, bottlenecks, liquid throughput (paper 000 §3, paper 001 §3) and the frame
bound of the slot model.

The load of a resource is the time it must be busy: Σ size / capacity over the transfers that
use it. Λ is the largest load, the bottlenecks are the resources at Λ and the liquid throughput
is total bytes / Λ. No schedule, of any kind, finishes before Λ.

Schedules of whole transfers in frames also obey the slots of each resource (how many transfers
it carries at once, :mod:`liquidsched.network`): a resource carrying ``n`` transfers with ``k``
slots needs ``⌈n / k⌉`` frames, and the **frame bound** is the largest such count. Its time — the
shortest a frame schedule can take on that resource, each frame lasting as long as its longest
transfer at its slot rate — may exceed Λ when slots cannot fill a link exactly (an uplink of
103 MB/s over 12.5 MB/s hosts has 8 slots, not 8.24): that gap is the slot model's, not a
scheduler's. Everything is exact (:class:`fractions.Fraction`); when all sizes and capacities are
equal and every slot count is 1, Λ is also given as a whole number of transfers (paper 000's Λ(X)).
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field
from fractions import Fraction
from typing import Any, Iterable, Sequence

import numpy as np

from .errors import ProblemTooLargeError
from .network import Network, RouteTable
from .traffic import CHUNK, Traffic
from .transfer_routes import HostRoutes, cached_transfer_routes, time_weights


@dataclass(frozen=True)
class Bound:
    """The liquid bound of a traffic on a network, and its frame bound in the slot model."""

    transfers: int
    total_bytes: int
    #: load of every used resource, in seconds, by resource name
    loads_s: dict[str, Fraction]
    #: number of transfers using each used resource
    counts: dict[str, int]
    duration_s: Fraction
    bottlenecks: list[str]
    liquid_throughput_Bps: Fraction
    #: True when every transfer has the same size, every used resource the same capacity and
    #: one slot: then Λ is a whole number of transfers and equals the frame bound
    uniform: bool
    #: no schedule of whole transfers has fewer frames: the largest ⌈transfers / slots⌉ of a resource
    frame_lower_bound: int
    #: slots of every used resource, by resource name
    slots: dict[str, int]
    #: the resources that need ``frame_lower_bound`` frames
    frame_bottlenecks: list[str]
    #: no schedule of whole transfers in frames takes less time (≥ Λ)
    frame_bound_time_s: Fraction

    @property
    def duration(self) -> int | Fraction:
        """Λ in transfers when the traffic is uniform, else in seconds."""
        return self.frame_lower_bound if self.uniform else self.duration_s

    @property
    def slot_model_gap_s(self) -> Fraction:
        """Time the slot model loses against Λ whatever the scheduler: frame bound time − Λ."""
        return self.frame_bound_time_s - self.duration_s

    @property
    def frame_bound_ratio(self) -> Fraction:
        """The best ratio to the liquid throughput a schedule of whole transfers in frames can
        reach: Λ / frame bound time (1 when the slot model loses nothing)."""
        return self.duration_s / self.frame_bound_time_s if self.frame_bound_time_s else Fraction(1)

    def to_dict(self) -> dict[str, Any]:
        return {
            "transfers": self.transfers,
            "total_bytes": self.total_bytes,
            "duration": self.duration if self.uniform else float(self.duration_s),
            "duration_unit": "transfers" if self.uniform else "s",
            "duration_s": float(self.duration_s),
            "bottlenecks": list(self.bottlenecks),
            "liquid_throughput_Bps": float(self.liquid_throughput_Bps),
            "frame_lower_bound": self.frame_lower_bound,
            "frame_bottlenecks": list(self.frame_bottlenecks),
            "frame_bound_time_s": float(self.frame_bound_time_s),
            "slot_model_gap_s": float(self.slot_model_gap_s),
            "frame_bound_ratio": float(self.frame_bound_ratio),
            "slots": {r: k for r, k in self.slots.items() if k != 1},
            "uniform": self.uniform,
        }


def resource_counts(resource_sets: Iterable[frozenset[int]]) -> Counter[int]:
    """How many transfers use each resource."""
    counts: Counter[int] = Counter()
    for resources in resource_sets:
        counts.update(resources)
    return counts


def frame_lower_bound(resource_sets: Iterable[frozenset[int]], slots: Sequence[int] | None = None) -> int:
    """No schedule of whole transfers has fewer frames than the most frames one resource needs:
    ``⌈transfers on it / its slots⌉`` (one slot each when ``slots`` is None).

    Examples
    --------
    >>> frame_lower_bound([frozenset({0, 1}), frozenset({0}), frozenset({0})], slots=[2, 1])
    2
    """
    counts = resource_counts(resource_sets)
    return max((-(-n // (1 if slots is None else slots[r])) for r, n in counts.items()), default=0)


def frame_time_bound(durations: Iterable[Fraction], slots: int) -> Fraction:
    """The least total time of frames carrying these transfers of one resource, at most
    ``slots`` of them a frame, a frame lasting as long as its longest: the longest ``slots``
    together, then the next ``slots``, and so on (the 1st, (k+1)-th, ... longest count).

    Examples
    --------
    >>> frame_time_bound([Fraction(3), Fraction(1), Fraction(2), Fraction(2)], 2)
    Fraction(5, 1)
    """
    return counted_frame_time_bound(Counter(durations), slots)


def counted_frame_time_bound(durations: dict[Fraction, int], slots: int) -> Fraction:
    """:func:`frame_time_bound` of durations given with their counts."""
    total, position = Fraction(0), 0
    for value, n in sorted(durations.items(), reverse=True):
        # Positions position .. position + n - 1 hold this value; multiples of ``slots`` count.
        total += value * ((position + n - 1) // slots - (position - 1) // slots)
        position += n
    return total


@dataclass(frozen=True)
class SlotTimes:
    """Each transfer's time alone in its slots (size over its slot rate), as a rank into the
    distinct times in increasing order, so that the longest of a frame is an integer maximum."""

    values: list[Fraction]
    ranks: list[int]
    network: Network = field(repr=False, compare=False)

    def __getitem__(self, i: int) -> Fraction:
        return self.values[self.ranks[i]]

    def __len__(self) -> int:
        return len(self.ranks)


def slot_times(net: Network, traffic: Traffic) -> SlotTimes:
    """The :class:`SlotTimes` of ``traffic`` on ``net`` (computed once per network)."""
    cached = traffic.derived.get("slot_times")
    if cached is not None and cached.network is net:
        return cached
    rate_values, rate_rank = net.slot_rate_ranks()
    time_of: dict[tuple[int, int], Fraction] = {}
    keys = []
    for t, path in zip(traffic, traffic.resource_lists(net)):
        key = (t.size_bytes, min(rate_rank[r] for r in path))
        if key not in time_of:
            time_of[key] = Fraction(key[0]) / rate_values[key[1]]
        keys.append(key)
    values = sorted(set(time_of.values()))
    rank_of = {v: i for i, v in enumerate(values)}
    result = SlotTimes(values, [rank_of[time_of[k]] for k in keys], net)
    traffic.derived["slot_times"] = result
    return result


def transfer_slot_times_s(net: Network, traffic: Traffic) -> list[Fraction]:
    """Each transfer's time alone in its slots: size over its slot rate."""
    times = slot_times(net, traffic)
    return [times.values[k] for k in times.ranks]


def compute_bound(net: Network, traffic: Traffic) -> Bound:
    """The liquid bound of ``traffic`` on ``net``, with its frame bound.

    Computed once per traffic and network. The transfers are counted column by column
    (:func:`resource_usage`), so that the bound of millions of transfers takes no object per
    transfer; the arithmetic is exact.

    Examples
    --------
    >>> from liquidsched.topologies import two_switch
    >>> from liquidsched.traffic import half_all_to_all
    >>> net = two_switch()
    >>> b = compute_bound(net, half_all_to_all(net))
    >>> b.transfers, b.duration, b.bottlenecks, b.liquid_throughput_Bps
    (25, 6, ['l_ab', 'l_ba'], Fraction(1250000000, 3))

    A 1 Gbit/s uplink over 100 Mbit/s hosts carries ten transfers at once, so the host links,
    each with 7 transfers, are the bottlenecks of an all-to-all of 4 × 2 hosts:

    >>> from liquidsched.topologies import hierarchical
    >>> from liquidsched.traffic import all_to_all
    >>> net = hierarchical(4, 2)
    >>> b = compute_bound(net, all_to_all(net))
    >>> b.frame_lower_bound, b.duration_s, b.frame_bound_time_s
    (7, Fraction(14, 25), Fraction(14, 25))
    """
    cached = traffic.derived.get("bound")
    if cached is not None and cached[0] is net:
        return cached[1]
    bound = _bound_of(net, traffic)
    traffic.derived["bound"] = (net, bound)
    return bound


def _bound_of(net: Network, traffic: Traffic) -> Bound:
    """:func:`compute_bound`, computed."""
    per_resource = _per_transfer_sums(net, traffic) if _many_sizes(traffic) else None
    if per_resource is None:
        per_resource = _per_class_sums(net, traffic)
    used, counts, bytes_on, frame_time = per_resource
    loads = {r: Fraction(bytes_on[r]) / net.resource_capacity_exact(r) for r in used}
    duration = max(loads.values())
    slots = net.resource_slots
    uniform = (traffic.uniform_size is not None
               and len({net.resource_capacity[r] for r in used}) == 1
               and all(slots[r] == 1 for r in used))
    frames_needed = {r: -(-counts[r] // slots[r]) for r in used}
    frame_bound = max(frames_needed.values())
    total = traffic.total_bytes
    return Bound(
        transfers=len(traffic),
        total_bytes=total,
        loads_s={net.resources[r]: loads[r] for r in used},
        counts={net.resources[r]: counts[r] for r in used},
        duration_s=duration,
        bottlenecks=[net.resources[r] for r in used if loads[r] == duration],
        liquid_throughput_Bps=Fraction(total) / duration,
        uniform=uniform,
        frame_lower_bound=frame_bound,
        slots={net.resources[r]: slots[r] for r in used},
        frame_bottlenecks=[net.resources[r] for r in used if frames_needed[r] == frame_bound],
        frame_bound_time_s=frame_time,
    )


#: Traffics with more distinct sizes than this are bounded transfer by transfer in integers
#: (:func:`_per_transfer_sums`) rather than counted by (size, slot rate) classes.
MANY_SIZES = 256

PerResource = tuple[list[int], dict[int, int], dict[int, int], Fraction]


def _many_sizes(traffic: Traffic) -> bool:
    """Whether the traffic has more distinct sizes than counting by classes suits (judged on
    its first transfers, which is enough to choose a way of counting: both are exact)."""
    if traffic.uniform_size is not None:
        return False
    return len(np.unique(np.asarray(traffic.sizes[:max(4096, 16 * MANY_SIZES)]))) > MANY_SIZES


def _per_class_sums(net: Network, traffic: Traffic) -> PerResource:
    """Per used resource: transfers, bytes and the frame time bound, counted by (size, slot
    rate) classes (:func:`resource_usage`), exact."""
    usage = resource_usage(net, traffic)
    rate_values, _ = net.slot_rate_ranks()
    used = sorted(usage)
    counts = {r: sum(usage[r].values()) for r in used}
    bytes_on = {r: sum(size * n for (size, _), n in usage[r].items()) for r in used}
    time_of: dict[tuple[int, int], Fraction] = {}
    frame_time = Fraction(0)
    slots = net.resource_slots
    for r in used:
        durations: Counter[Fraction] = Counter()
        for key, n in usage[r].items():
            if key not in time_of:
                time_of[key] = Fraction(key[0]) / rate_values[key[1]]
            durations[time_of[key]] += n
        frame_time = max(frame_time, counted_frame_time_bound(durations, slots[r]))
    return used, counts, bytes_on, frame_time


def _per_transfer_sums(net: Network, traffic: Traffic) -> PerResource | None:
    """Per used resource: transfers, bytes and the frame time bound, transfer by transfer in
    the core's integers (:func:`liquidsched.transfer_routes.transfer_routes` gives each one's
    route): a transfer's time in its slots is its size times the inverse of its slot rate
    scaled to a common denominator, so that sorting a resource's transfers by time and adding
    every ``slots``-th is exact. None when the units or sums do not fit (the counting by classes
    then does it with unbounded integers)."""
    traffic.check(net)
    sizes = np.asarray(traffic.sizes)
    if sizes.dtype == object:
        return None
    routes = cached_transfer_routes(net, traffic)
    weights = time_weights(net, routes.slowest)
    if weights is None:
        return None
    weight, scale = weights
    try:
        counts_bytes, bytes_on, frame_units = routes.core.resource_sums(
            sizes.astype("<u8").tobytes(), weight.astype("<u8").tobytes(), net.resource_slots)
    except ProblemTooLargeError:
        return None
    counts = np.frombuffer(counts_bytes, dtype="<u8")
    used = np.flatnonzero(counts).tolist()
    frame_time = Fraction(max(frame_units), scale)
    return (used, {r: int(counts[r]) for r in used}, {r: bytes_on[r] for r in used}, frame_time)


def _pair_positions(table: RouteTable, pairs: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """How many resources each of ``pairs`` (switch, target) has, and where they all stand in
    ``table.pair_resources``, pair after pair."""
    lengths = table.pair_offsets[pairs + 1] - table.pair_offsets[pairs]
    # Each pair's resources from its offset on: the offset less where its run starts, plus the run.
    start = np.repeat(table.pair_offsets[pairs] - (np.cumsum(lengths) - lengths), lengths)
    return lengths, start + np.arange(int(lengths.sum()))


# -- what crosses each resource, column by column --------------------------------------------------

#: Key spaces up to this size are counted in a dense array, larger ones by sorting.
_DENSE = 1 << 22


class _Tally:
    """Counts of integer keys in ``range(space)``, added an array at a time."""

    def __init__(self, space: int) -> None:
        self.space = space
        self.dense = np.zeros(space, dtype=np.int64) if space <= _DENSE else None
        self.parts: list[tuple[np.ndarray, np.ndarray]] = []

    def add(self, keys: np.ndarray, weights: np.ndarray | None = None) -> None:
        if not len(keys):
            return
        if self.dense is not None:
            self.dense += _counts(np.bincount(keys, weights, minlength=self.space))
            return
        unique, inverse = np.unique(keys, return_inverse=True)
        self.parts.append((unique.astype(np.int64), _counts(np.bincount(inverse, weights))))

    def items(self) -> tuple[np.ndarray, np.ndarray]:
        """The keys counted at least once, increasing, and their counts."""
        if self.dense is not None:
            keys = np.flatnonzero(self.dense)
            return keys, self.dense[keys]
        if not self.parts:
            return np.zeros(0, dtype=np.int64), np.zeros(0, dtype=np.int64)
        keys = np.concatenate([k for k, _ in self.parts])
        counts = np.concatenate([c for _, c in self.parts])
        unique, inverse = np.unique(keys, return_inverse=True)
        return unique, _counts(np.bincount(inverse, counts.astype(np.float64)))


def _counts(summed: np.ndarray) -> np.ndarray:
    """Sums of counts as integers. Summed as floats (with weights), they are whole numbers of
    transfers far below 2**53, so exact."""
    return summed if summed.dtype == np.int64 else np.rint(summed).astype(np.int64)


def resource_usage(net: Network, traffic: Traffic) -> dict[int, dict[tuple[int, int], int]]:
    """How many transfers of each size and slot rate cross each resource:
    ``usage[r][(size_bytes, rate_rank)]``, ``rate_rank`` indexing ``net.slot_rate_ranks()[0]``
    (the rate of the transfer's slots: the smallest on its path).

    Composed routes (:class:`liquidsched.network.RouteTable`) are counted with arrays: by
    source host for its link up, by destination host for its link down, and by pair of switches,
    whose count then goes to every resource between them. Other routes are counted per host pair.
    """
    traffic.check(net)
    ends = _Ends(net, traffic)
    n_hosts, classes = len(traffic.host_table), ends.classes
    up, down = _Tally(n_hosts * classes), _Tally(n_hosts * classes)
    itself, pairs = _Tally(n_hosts * classes), _Tally(len(ends.pair_rank) * classes)
    alone = _Tally(n_hosts * n_hosts * len(ends.size_values))
    for start in range(0, len(traffic), CHUNK):
        part = slice(start, start + CHUNK)
        src, dst = traffic.src_index[part], traffic.dst_index[part]
        size = None if ends.size_of is None else ends.size_of[part]
        if ends.all_composed:
            pair = ends.pair_up[src] + ends.pair_down[dst]
        else:
            pair, composed = ends.pairs(src, dst)
            apart = ~composed
            alone.add((src[apart].astype(np.int64) * n_hosts + dst[apart])
                      * len(ends.size_values) + (0 if size is None else size[apart]))
            src, dst, pair = src[composed], dst[composed], pair[composed]
            size = None if size is None else size[composed]
        same = src == dst
        if classes == 1:  # one size and one slot rate: the hosts and pairs are the keys
            up.add(src)
            down.add(dst)
            pairs.add(pair)
            itself.add(src[same])
            continue
        cls = ends.class_of(src, dst, pair, size)
        up.add(ends.host_key[src] + cls)
        down.add(ends.host_key[dst] + cls)
        pairs.add(pair * classes + cls)
        itself.add(ends.host_key[src[same]] + cls[same])
    usage: dict[int, dict[tuple[int, int], int]] = {}
    ends.add_hosts(usage, up, ends.up_resource)
    ends.add_hosts(usage, down, ends.down_resource)
    # A host's route to itself crosses a shared-duplex cable to its switch once, as a set.
    ends.add_hosts(usage, itself, np.where(ends.up_resource == ends.down_resource, ends.up_resource, -1), -1)
    ends.add_pairs(usage, pairs, net.route_table())
    _add_alone(net, traffic, alone, ends.size_values, usage)
    return usage


class _Ends(HostRoutes):
    """What :func:`resource_usage` needs besides the routes: keys into the counts and the
    transfers' classes (size and slot rate)."""

    def __init__(self, net: Network, traffic: Traffic) -> None:
        super().__init__(net, traffic)
        self.size_values, self.size_of = _distinct_sizes(traffic)
        self.classes = len(self.size_values) * self.n_rates
        self.host_key = np.arange(len(self.up_switch), dtype=np.int64) * self.classes

    def class_of(self, src: np.ndarray, dst: np.ndarray, pair: np.ndarray, size: np.ndarray | None) -> np.ndarray:
        """Each transfer's class, ``size index × rates + rank of its slot rate``."""
        rate = self.slowest(src, dst, pair)
        return rate if size is None else size * self.n_rates + rate

    def add_hosts(self, usage: dict[int, dict[tuple[int, int], int]], tally: _Tally, resource: np.ndarray,
                  sign: int = 1) -> None:
        """Add the counts by (host, class) to the resource each host has (none where -1)."""
        keys, counts = tally.items()
        host, cls = np.divmod(keys, self.classes)
        for r, c, n in zip(resource[host].tolist(), cls.tolist(), counts.tolist()):
            if r >= 0:
                self._add(usage, r, c, sign * n)

    def add_pairs(self, usage: dict[int, dict[tuple[int, int], int]], tally: _Tally, table: RouteTable) -> None:
        """Add the counts by (pair of switches, class) to every resource between the switches."""
        keys, counts = tally.items()
        pair, cls = np.divmod(keys, self.classes)
        lengths, position = _pair_positions(table, pair)
        entry = np.repeat(np.arange(len(keys)), lengths)
        spread = _Tally(len(table.pair_resources) and int(table.pair_resources.max() + 1) * self.classes)
        spread.add(table.pair_resources[position] * self.classes + cls[entry], counts[entry].astype(np.float64))
        keys, counts = spread.items()
        for key, n in zip(keys.tolist(), counts.tolist()):
            self._add(usage, *divmod(key, self.classes), n)

    def _add(self, usage: dict[int, dict[tuple[int, int], int]], r: int, c: int, n: int) -> None:
        on = usage.setdefault(r, {})
        key = (self.size_values[c // self.n_rates], c % self.n_rates)
        on[key] = on.get(key, 0) + n
        if not on[key]:
            del on[key]


def _distinct_sizes(traffic: Traffic) -> tuple[list[int], np.ndarray | None]:
    """The distinct sizes, and each transfer's index among them (None when all are equal)."""
    if traffic.uniform_size is not None:
        return [traffic.uniform_size], None
    values, inverse = np.unique(traffic.sizes, return_inverse=True)
    return [int(v) for v in values], inverse.astype(np.int64).reshape(-1)


def _add_alone(net: Network, traffic: Traffic, alone_tally: _Tally, size_values: list[int],
               usage: dict[int, dict[tuple[int, int], int]]) -> None:
    """Add to ``usage`` the transfers routed per host pair (counted by host pair and size)."""
    keys, counts = alone_tally.items()
    hosts, n_sizes = traffic.host_table, len(size_values)
    rank = net.slot_rate_ranks()[1]
    for key, n in zip(keys.tolist(), counts.tolist()):
        pair, s = divmod(key, n_sizes)
        src, dst = divmod(pair, len(hosts))
        resources = net.path_resources(hosts[src], hosts[dst])
        cls = (size_values[s], min(rank[r] for r in resources))
        for r in resources:
            on = usage.setdefault(r, {})
            on[cls] = on.get(cls, 0) + n

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

from .network import Network
from .traffic import Traffic


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
    sets = traffic.resource_sets(net)
    counts = resource_counts(sets)
    bytes_on: Counter[int] = Counter()
    for t, resources in zip(traffic, sets):
        for r in resources:
            bytes_on[r] += t.size_bytes
    loads = {r: Fraction(b) / net.resource_capacity_exact(r) for r, b in bytes_on.items()}
    duration = max(loads.values())
    used = sorted(loads)
    slots = net.resource_slots
    uniform = (len({t.size_bytes for t in traffic}) == 1
               and len({net.resource_capacity[r] for r in used}) == 1
               and all(slots[r] == 1 for r in used))
    frames_needed = {r: -(-counts[r] // slots[r]) for r in used}
    frame_bound = max(frames_needed.values())
    times = slot_times(net, traffic)
    on_resource: dict[int, Counter[int]] = {r: Counter() for r in used}
    for rank, resources in zip(times.ranks, sets):
        for r in resources:
            on_resource[r][rank] += 1
    frame_time = max(counted_frame_time_bound({times.values[k]: n for k, n in on_resource[r].items()}, slots[r])
                     for r in used)
    return Bound(
        transfers=len(traffic),
        total_bytes=traffic.total_bytes,
        loads_s={net.resources[r]: loads[r] for r in used},
        counts={net.resources[r]: counts[r] for r in used},
        duration_s=duration,
        bottlenecks=[net.resources[r] for r in used if loads[r] == duration],
        liquid_throughput_Bps=Fraction(traffic.total_bytes) / duration,
        uniform=uniform,
        frame_lower_bound=frame_bound,
        slots={net.resources[r]: slots[r] for r in used},
        frame_bottlenecks=[net.resources[r] for r in used if frames_needed[r] == frame_bound],
        frame_bound_time_s=frame_time,
    )

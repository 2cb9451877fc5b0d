"""Loads, duration Λ, bottlenecks and liquid throughput (paper 000 §3, paper 001 §3).

The load of a resource is the time it must be busy: Σ size / capacity over the transfers that
use it. Λ is the largest load, the bottlenecks are the resources at Λ and the liquid throughput
is total bytes / Λ. Everything is exact (:class:`fractions.Fraction`); when all sizes and all
capacities are equal, Λ is also given as a whole number of transfers (paper 000's Λ(X)).
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass
from fractions import Fraction
from typing import Any, Iterable

from .network import Network
from .traffic import Traffic


@dataclass(frozen=True)
class Bound:
    """The liquid bound of a traffic on a network."""

    transfers: int
    total_bytes: int
    #: load of every used resource, in seconds, by resource name
    loads_s: dict[str, Fraction]
    #: number of transfers using each used resource
    counts: dict[str, int]
    duration_s: Fraction
    bottlenecks: list[str]
    liquid_throughput_Bps: Fraction
    #: True when every transfer has the same size and every used resource the same capacity
    uniform: bool
    #: no schedule of whole transfers has fewer frames: the most transfers on one resource
    frame_lower_bound: int

    @property
    def duration(self) -> int | Fraction:
        """Λ in transfers when the traffic is uniform, else in seconds."""
        return self.frame_lower_bound if self.uniform else self.duration_s

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
            "uniform": self.uniform,
        }


def resource_counts(resource_sets: Iterable[frozenset[int]]) -> Counter[int]:
    """How many transfers use each resource."""
    counts: Counter[int] = Counter()
    for resources in resource_sets:
        counts.update(resources)
    return counts


def frame_lower_bound(resource_sets: Iterable[frozenset[int]]) -> int:
    """No schedule of whole transfers has fewer frames than the most transfers on one resource."""
    return max(resource_counts(resource_sets).values(), default=0)


def compute_bound(net: Network, traffic: Traffic) -> Bound:
    """The liquid bound of ``traffic`` on ``net``.

    Examples
    --------
    >>> from liquidsched.topologies import two_switch
    >>> from liquidsched.traffic import half_all_to_all
    >>> net = two_switch()
    >>> b = compute_bound(net, half_all_to_all(net))
    >>> b.transfers, b.duration, b.bottlenecks, b.liquid_throughput_Bps
    (25, 6, ['l_ab', 'l_ba'], Fraction(1250000000, 3))
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
    uniform = (len({t.size_bytes for t in traffic}) == 1
               and len({net.resource_capacity[r] for r in used}) == 1)
    return Bound(
        transfers=len(traffic),
        total_bytes=traffic.total_bytes,
        loads_s={net.resources[r]: loads[r] for r in used},
        counts={net.resources[r]: counts[r] for r in used},
        duration_s=duration,
        bottlenecks=[net.resources[r] for r in used if loads[r] == duration],
        liquid_throughput_Bps=Fraction(traffic.total_bytes) / duration,
        uniform=uniform,
        frame_lower_bound=max(counts.values()),
    )

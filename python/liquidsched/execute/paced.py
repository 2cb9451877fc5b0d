"""Paced all at once: every transfer sent from the start, in chunks, at the rate that ends it at
Λ · (1 + h) — the continuous form of a liquid schedule, with a little headroom.

A transfer of ``s`` bytes is paced at ``s / D``, ``D = Λ · (1 + h)`` (:func:`paced_duration_s`).
On every resource the paced rates add up to its load times its capacity over ``D``, at most
``1 / (1 + h)`` of its capacity, so no link is ever asked for more than it carries and every
transfer ends at ``D`` (plus the last chunk's own time), on any network, for any sizes, without a
barrier.

The headroom ``h`` (:data:`PACE_HEADROOM`) is the share of a link that a TCP exchange cannot
give to payload. The liquid throughput counts payload bytes against the capacity; a link loaded
in both directions, as every bottleneck of an all-to-all is, also carries the acknowledgements of
the other direction's flows (a 66-byte frame for every two 1,514-byte ones: 2.2 %, fewer where
the receiver coalesces segments). Measured in emulated networks (4 MB transfers, deep buffers,
median of 7 runs, % of the liquid throughput), one TCP flow reaching 99.2–99.8 % of its link:

=========================  ==========  ==========  ==========  ==========  ==========
h                          0           0.015       0.02        0.025       0.03
=========================  ==========  ==========  ==========  ==========  ==========
Swiss-T1 0,0,1,2,1,0,2,2   94.1–95.1   96.3        97.2        97.0        96.5–96.7
4 × 2, 400 Mbit/s uplinks  97.1–97.2   97.6        97.1        96.8        96.3–96.5
4 × 2, 2:1 uplinks         97.0                                            96.7
=========================  ==========  ==========  ==========  ==========  ==========

Two flows through the Swiss-T1 bottleneck, one each way, carried 97.1–97.7 % of it each. Pacing
at 100 % of a link that carries 97–98 % of it in payload builds a queue that never drains, and a
chunk handed over late leaves the bottleneck idle for good; pacing far below it leaves the
bottleneck idle by design.

The sender hands chunk ``k`` of a transfer cut into ``n`` chunks to MPI at ``(k + φ) · D / n``,
``φ`` in [0, 1) a phase that staggers the transfers so that their chunks
do not leave together. Chunks are about :data:`CHUNK_INTERVAL_S` of the transfer's paced rate
apart, at least :data:`MIN_CHUNK_BYTES`, and never more than :data:`MAX_CHUNKS_PER_PAIR` for the
transfers between two ranks (their MPI tags). A chunk's receive is posted
:data:`RECEIVE_LEAD_S` before it is due, so that a rank tests only the few requests under way.

This part knows nothing of MPI, so it is tested on its own; the worker runs it.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from ..errors import InputError
from ..simulate import MAX_PACE_HEADROOM  # the simulator's paced policy takes the same

#: The headroom h: the paced rates take at most 1 / (1 + h) of every link's capacity, leaving the
#: rest to the acknowledgements of the opposite direction and TCP's own losses (see the module's
#: documentation).
PACE_HEADROOM = 0.02
#: The variable that sets the headroom of the interposition library and the mpi4py API.
PACE_HEADROOM_ENV = "LIQUIDSCHED_PACE_HEADROOM"
#: The time between two chunks of one transfer, at its paced rate.
CHUNK_INTERVAL_S = 0.004
#: The smallest chunk, in bytes.
MIN_CHUNK_BYTES = 16384
#: How long before its due time a chunk's receive is posted: early enough that a rank a little
#: behind still finds it posted, late enough that only the next few chunks' requests are under way.
RECEIVE_LEAD_S = 0.05
#: The most chunks between two ranks: tags stay under MPI's guaranteed upper bound (32767).
MAX_CHUNKS_PER_PAIR = 32000


@dataclass(frozen=True)
class Chunk:
    """Bytes ``[offset, offset + nbytes)`` of transfer ``transfer`` (an index of the plan's
    regions), sent from rank ``src`` to ``dst`` at ``due_s`` after the start, with MPI tag ``tag``."""

    transfer: int
    src: int
    dst: int
    send_offset: int
    recv_offset: int
    nbytes: int
    tag: int
    due_s: float
    #: a chunk goes straight to its destination: it carries no relayed segments, as a message
    #: that does not (the worker sends both alike)
    segments: tuple = ()


def paced_duration_s(lambda_s: float, headroom: float = PACE_HEADROOM) -> float:
    """The time over which the paced mode spreads every transfer: Λ · (1 + ``headroom``).

    Parameters
    ----------
    lambda_s
        Λ of the crossing transfers, in seconds (on an emulated network, times its time scale).
    headroom
        h, from 0 to :data:`MAX_PACE_HEADROOM`: the paced rates take at most 1 / (1 + h) of
        every link.

    Raises
    ------
    InputError
        when Λ is not a positive finite number of seconds or ``headroom`` is outside
        [0, :data:`MAX_PACE_HEADROOM`].

    Examples
    --------
    >>> round(paced_duration_s(2.0), 6), paced_duration_s(2.0, headroom=0)
    (2.04, 2.0)
    """
    if not (lambda_s > 0 and math.isfinite(lambda_s)):
        raise InputError(f"paced mode: Λ must be a positive number of seconds, got {lambda_s}")
    return lambda_s * (1 + parse_headroom(headroom, "paced mode headroom"))


def parse_headroom(value: object, where: str = "") -> float:
    """A headroom h: a plain number from 0 to :data:`MAX_PACE_HEADROOM` (the one rule of the
    option, the variable and the API).

    >>> parse_headroom("0.05")
    0.05
    """
    from ..units import parse_number

    return parse_number(value, where, least=0, most=MAX_PACE_HEADROOM, what="a share of the links")


def headroom_from_environment() -> float:
    """:data:`PACE_HEADROOM_ENV` when set (a plain number from 0 to :data:`MAX_PACE_HEADROOM`),
    else :data:`PACE_HEADROOM`: the interposition library's rule, for the mpi4py API.

    Raises
    ------
    InputError
        when the variable is set to something else, naming it.
    """
    import os

    text = os.environ.get(PACE_HEADROOM_ENV, "")
    return parse_headroom(text, PACE_HEADROOM_ENV) if text else PACE_HEADROOM


def paced_chunks(regions: list[tuple[int, int, int, int, int]], duration_s: float,
                 interval_s: float = CHUNK_INTERVAL_S, min_chunk_bytes: int = MIN_CHUNK_BYTES) -> list[Chunk]:
    """The chunks of every transfer that crosses the network (``regions``: the exchange plan's
    source rank, destination rank, bytes, send and receive offsets), in sending order.

    Parameters
    ----------
    regions
        :attr:`~liquidsched.execute.plan.ExchangePlan.regions`; a transfer from a rank to itself
        is a local copy and has no chunk.
    duration_s
        The time over which every transfer is spread (:func:`paced_duration_s` of Λ of the
        crossing transfers on the network the ranks run on), in seconds.
    interval_s, min_chunk_bytes
        The time between two chunks of a transfer at its paced rate, and the smallest chunk.

    Returns
    -------
    list of Chunk
        Sorted by due time; the same on every rank.

    Raises
    ------
    InputError
        when ``duration_s`` is not a positive finite number of seconds.

    Examples
    --------
    >>> chunks = paced_chunks([(0, 1, 100_000, 0, 0), (1, 0, 50_000, 0, 0)], duration_s=0.1, interval_s=0.02)
    >>> [(c.transfer, c.nbytes, round(c.due_s, 3)) for c in chunks if c.transfer == 0]
    [(0, 20000, 0.0), (0, 20000, 0.02), (0, 20000, 0.04), (0, 20000, 0.06), (0, 20000, 0.08)]
    >>> sum(c.nbytes for c in chunks if c.transfer == 1)
    50000
    """
    if not (duration_s > 0 and math.isfinite(duration_s)):
        raise InputError(f"paced mode: the duration must be a positive number of seconds, got {duration_s}")
    crossing = [(i, r) for i, r in enumerate(regions) if r[0] != r[1] and r[2] > 0]
    per_pair: dict[tuple[int, int], int] = {}
    counts = {}
    for i, (src, dst, nbytes, _, _) in crossing:
        rate = nbytes / duration_s
        size = max(min_chunk_bytes, int(rate * interval_s))
        counts[i] = max(1, math.ceil(nbytes / size))
        per_pair[src, dst] = per_pair.get((src, dst), 0) + counts[i]
    # Too many chunks between two ranks for their tags: coarser chunks, in proportion.
    for i, (src, dst, nbytes, _, _) in crossing:
        total = per_pair[src, dst]
        if total > MAX_CHUNKS_PER_PAIR:
            counts[i] = max(1, counts[i] * MAX_CHUNKS_PER_PAIR // total)
    chunks: list[Chunk] = []
    tags: dict[tuple[int, int], int] = {}
    for order, (i, (src, dst, nbytes, s_off, r_off)) in enumerate(crossing):
        n = counts[i]
        phase = _phase(order, len(crossing))
        step = duration_s / n
        for k in range(n):
            lo, hi = nbytes * k // n, nbytes * (k + 1) // n
            tag = tags.get((src, dst), 0)
            tags[src, dst] = tag + 1
            chunks.append(Chunk(i, src, dst, s_off + lo, r_off + lo, hi - lo, tag, (k + phase) * step))
    chunks.sort(key=lambda c: (c.due_s, c.src, c.dst, c.tag))
    return chunks


def _phase(order: int, count: int) -> float:
    """A phase in [0, 1) that spreads ``count`` transfers evenly (bit-reversed order, so that
    neighbours in the list, often of one sender, are far apart).

    Examples
    --------
    >>> [_phase(k, 4) for k in range(4)]
    [0.0, 0.5, 0.25, 0.75]
    """
    bits = max(1, (count - 1).bit_length())
    reversed_order = int(format(order % (1 << bits), f"0{bits}b")[::-1], 2)
    return reversed_order / (1 << bits)


@dataclass(frozen=True)
class PacedPlan:
    """What a paced plan of a matrix promises (:class:`RankPacedPlanner`)."""

    #: Λ of the bytes that cross the network, in seconds; paced, every message ends at
    #: :func:`paced_duration_s` of it
    bound_s: float
    #: the busiest resource's name (None when no byte crosses the network)
    bottleneck: str | None
    crossing_bytes: int
    #: the messages whose bytes differ from the previous plan's (all of them when cold)
    changed: int
    #: whether the plan started from the previous one
    warm: bool


class RankPacedPlanner:
    """Paced plans of the matrices exchanged by ranks on hosts of a network, computed in the
    core in one pass over the messages' routes, each from the previous plan when there is one:
    only the messages whose bytes changed are walked again (a warm start gives the cold plan of
    the same matrix, to the bit; the resources' bytes are integers).

    Parameters
    ----------
    net
        The network.
    rank_hosts
        The host of each rank; ranks of one host exchange without crossing a resource.

    Examples
    --------
    >>> import numpy as np
    >>> from liquidsched import build_topology
    >>> net = build_topology("hierarchical:d1=2,d2=2")        # 100 Mbit/s hosts
    >>> planner = RankPacedPlanner(net, net.hosts())
    >>> matrix = np.full((4, 4), 10**6) - np.diag([10**6] * 4)  # 1 MB from every rank to every other
    >>> cold = planner.plan(matrix)
    >>> round(cold.bound_s, 6), cold.warm                       # 3 MB out of a 12.5 MB/s host link
    (0.24, False)
    >>> matrix[0, 1] = 2 * 10**6
    >>> warm = planner.plan(matrix)
    >>> round(warm.bound_s, 6), warm.changed, warm.warm
    (0.32, 1, True)
    """

    def __init__(self, net, rank_hosts: list[str]) -> None:
        from .. import _core

        self.network = net
        self.rank_hosts = list(rank_hosts)
        n = len(self.rank_hosts)
        routes = [sorted(net.path_resources(a, b)) if a != b else [] for a in self.rank_hosts for b in self.rank_hosts]
        self._core = _core.PacedPlanner(n, routes, list(net.resource_capacity))

    def plan(self, matrix) -> PacedPlan:
        """The paced plan of ``matrix`` (bytes, ranks × ranks, row the sender; the diagonal
        does not cross the network and counts for nothing).

        Raises
        ------
        InputError
            when ``matrix`` is not square of the planner's ranks or holds counts that are not
            integers or are negative.
        """
        import numpy as np

        m = np.asarray(matrix)
        n = len(self.rank_hosts)
        if m.shape != (n, n):
            raise InputError(f"paced plan: a matrix of {n} × {n} byte counts expected, got shape {m.shape}")
        if not np.issubdtype(m.dtype, np.integer):
            raise InputError(f"paced plan: byte counts must be integers, got {m.dtype}")
        if m.size and m.min() < 0:
            raise InputError("paced plan: byte counts must be >= 0")
        bound_s, bottleneck, crossing, changed, warm = self._core.plan(np.ascontiguousarray(m, dtype="<u8").tobytes())
        name = self.network.resources[bottleneck] if bottleneck is not None else None
        return PacedPlan(bound_s, name, crossing, changed, warm)

    def forget(self) -> None:
        """Forget the previous plan: the next starts from nothing."""
        self._core.forget()

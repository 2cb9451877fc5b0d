"""Paced all at once: every transfer sent from the start, in chunks, at the rate that ends it at
Λ — the continuous form of a liquid schedule.

A transfer of ``s`` bytes is paced at ``s / Λ``. On every resource the paced rates add up to
its load times its capacity over Λ, at most its capacity, so no link is ever asked for more than
it carries and every transfer ends at Λ (plus the last chunk's own time), on any network, for any
sizes, without a barrier. The sender hands chunk ``k`` of a transfer cut into ``n`` chunks to MPI
at ``(k + φ) · Λ / n``, ``φ`` in [0, 1) a phase that staggers the transfers so that their chunks
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


def paced_chunks(regions: list[tuple[int, int, int, int, int]], lambda_s: float,
                 interval_s: float = CHUNK_INTERVAL_S, min_chunk_bytes: int = MIN_CHUNK_BYTES) -> list[Chunk]:
    """The chunks of every transfer that crosses the network (``regions``: the exchange plan's
    source rank, destination rank, bytes, send and receive offsets), in sending order.

    Parameters
    ----------
    regions
        :attr:`~liquidsched.execute.plan.ExchangePlan.regions`; a transfer from a rank to itself
        is a local copy and has no chunk.
    lambda_s
        Λ of the crossing transfers on the network the ranks run on, in seconds.
    interval_s, min_chunk_bytes
        The time between two chunks of a transfer at its paced rate, and the smallest chunk.

    Returns
    -------
    list of Chunk
        Sorted by due time; the same on every rank.

    Raises
    ------
    InputError
        when Λ is not a positive finite number of seconds.

    Examples
    --------
    >>> chunks = paced_chunks([(0, 1, 100_000, 0, 0), (1, 0, 50_000, 0, 0)], lambda_s=0.1, interval_s=0.02)
    >>> [(c.transfer, c.nbytes, round(c.due_s, 3)) for c in chunks if c.transfer == 0]
    [(0, 20000, 0.0), (0, 20000, 0.02), (0, 20000, 0.04), (0, 20000, 0.06), (0, 20000, 0.08)]
    >>> sum(c.nbytes for c in chunks if c.transfer == 1)
    50000
    """
    if not (lambda_s > 0 and math.isfinite(lambda_s)):
        raise InputError(f"paced mode: Λ must be a positive number of seconds, got {lambda_s}")
    crossing = [(i, r) for i, r in enumerate(regions) if r[0] != r[1] and r[2] > 0]
    per_pair: dict[tuple[int, int], int] = {}
    counts = {}
    for i, (src, dst, nbytes, _, _) in crossing:
        rate = nbytes / lambda_s
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
        step = lambda_s / n
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

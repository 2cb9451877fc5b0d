"""How much memory a run needs, estimated before anything is launched.

Every rank (:mod:`liquidsched.execute.worker`) holds its send buffer, its receive buffer and the
expected bytes it checks them against, each as large as its share of the traffic, plus, at
times, one temporary as large as the biggest of its transfers (filling the buffers with each
transfer's pattern) or as its receive buffer (the comparison's result), and one more of its
biggest transfer (measured: ranks of a 4-host all-to-all of 30 MB transfers peaked 30 MB above
their buffers, those of a 2-host one of 50 MB did not). Above that a rank costs
:data:`RANK_OVERHEAD_BYTES`: the Python interpreter with numpy, mpi4py and liquidsched, and
MPICH's own buffers (peak resident memory of the ranks of 1-byte exchanges under the ``mpich``
wheel: 56 to 60 MB, rounded up).
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from ..errors import ProblemTooLargeError
from .plan import ExchangePlan

#: What a rank needs beside its buffers, in bytes (measured: see the module's docstring).
RANK_OVERHEAD_BYTES = 64 * 2**20


class InsufficientMemoryError(ProblemTooLargeError):
    """A run needs more memory than the machine has available."""


@dataclass(frozen=True)
class MemoryEstimate:
    """The memory each rank of a run needs, in bytes."""

    #: per rank: send, receive and expected buffers, and the temporaries
    buffer_bytes: list[int]
    overhead_bytes: int

    @property
    def rank_bytes(self) -> list[int]:
        return [b + self.overhead_bytes for b in self.buffer_bytes]

    @property
    def total_bytes(self) -> int:
        return sum(self.rank_bytes)


def memory_estimate(plan: ExchangePlan, overhead_bytes: int | None = None) -> MemoryEstimate:
    """The memory every rank of ``plan`` needs: its three buffers, its temporaries and the
    per-rank overhead.

    Examples
    --------
    >>> from liquidsched import plan, build_topology, all_to_all
    >>> from liquidsched.execute.plan import exchange_plan
    >>> net = build_topology("crossbar:n=3")
    >>> p = exchange_plan(plan(net, all_to_all(net, size_bytes=1000), "round-robin"))
    >>> memory_estimate(p, overhead_bytes=0).buffer_bytes  # 2000 sent, 2000 received twice, 1000 + 2000
    [9000, 9000, 9000]
    """
    largest = [0] * plan.size
    for src, dst, nbytes, _, _ in plan.regions:
        largest[src] = max(largest[src], nbytes)
        largest[dst] = max(largest[dst], nbytes)
    # A relayed plan's ranks also keep what they forward, and gather or receive a message of
    # several segments in a buffer of its own.
    relaying = [plan.stage_bytes[r] if plan.relayed else 0 for r in range(plan.size)]
    for m in plan.messages:
        if len(m.segments) > 1:
            relaying[m.src] += m.nbytes
            relaying[m.dst] += m.nbytes
    buffers = []
    for r in range(plan.size):
        send, recv = max(plan.send_bytes[r], 1), max(plan.recv_bytes[r], 1)
        buffers.append(send + 2 * recv + largest[r] + max(largest[r], recv) + relaying[r])
    return MemoryEstimate(buffers, RANK_OVERHEAD_BYTES if overhead_bytes is None else overhead_bytes)


def available_memory_bytes(meminfo: str = "/proc/meminfo") -> int | None:
    """The kernel's estimate of the memory available to new work (``MemAvailable``), or None
    where it is not known (not Linux)."""
    try:
        for line in Path(meminfo).read_text(encoding="ascii").splitlines():
            if line.startswith("MemAvailable:"):
                return int(line.split()[1]) * 1024
    except (OSError, ValueError, IndexError):
        return None
    return None


def check_memory(plan: ExchangePlan, available_bytes: int | None = None) -> MemoryEstimate:
    """The estimate of ``plan``'s run with every rank on this machine; refused when it does
    not fit in the available memory.

    Raises
    ------
    InsufficientMemoryError
        naming the need, its parts and what is available.
    """
    estimate = memory_estimate(plan)
    available = available_memory_bytes() if available_bytes is None else available_bytes
    if available is not None and estimate.total_bytes > available:
        raise InsufficientMemoryError(
            f"the run needs about {_size(estimate.total_bytes)} of memory ({plan.size} ranks: "
            f"{_size(sum(estimate.buffer_bytes))} of send, receive and expected buffers, "
            f"{_size(estimate.overhead_bytes)} per rank beside them) but {_size(available)} is available "
            "(MemAvailable): use smaller transfers or fewer hosts")
    return estimate


def _size(nbytes: int) -> str:
    for unit, scale in (("GB", 1e9), ("MB", 1e6), ("kB", 1e3)):
        if nbytes >= scale:
            return f"{nbytes / scale:.1f} {unit}"
    return f"{nbytes} B"

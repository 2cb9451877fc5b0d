"""How a rank waits for its requests, and what it records while it waits.

MPICH's ``Waitall`` spins: with more ranks than cores on the machine that also forwards the
emulated network's packets, a spinning rank takes the processor from the kernel threads that
move its own bytes. :class:`Progress` completes requests either by spinning (``spin``: MPI's own
``Waitsome``, as the library does) or by testing and sleeping between tests (``sleep``: a
back-off from :data:`FIRST_NAP_S` doubling up to :data:`LONGEST_NAP_S`, short enough that the
kernel's socket buffers never run dry at the emulated rates: 1 ms of a 100 Mbit/s link is
12.5 kB, far below a socket buffer).

Every completion can be recorded in a :class:`Timeline`: the time each message was posted and
the time its completion was seen, each synchronisation's start and end, relative to the start
of the run on the rank's own clock (``MPI.Wtime`` just after the barrier that starts the run).
The end of a message is when its completion was seen: the last byte arrived at most one nap
earlier (``sleep``), or at most one ``Waitsome`` earlier (``spin``).
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from typing import Any, Callable, Sequence

#: The ways of waiting (:class:`Progress`).
PROGRESS = ("spin", "sleep")
#: First and longest sleep between two tests of the ``sleep`` progress.
FIRST_NAP_S = 2e-5
LONGEST_NAP_S = 5e-4


@dataclass
class Timeline:
    """One rank's events of one run: ``(kind, transfer, frame, start_s, end_s)``, kinds ``send``
    and ``recv`` (a piece of ``transfer``: posted, completion seen; ``frame`` -1 where the mode
    has none) and ``sync`` (a synchronisation after ``frame``: entered, left; transfer -1); times
    from the start of the run.

    Examples
    --------
    >>> t = Timeline(origin=10.0)
    >>> t.add("sync", -1, 0, 10.5, 10.75)
    >>> t.events
    [('sync', -1, 0, 0.5, 0.75)]
    """

    origin: float = 0.0
    events: list[tuple[str, int, int, float, float]] = field(default_factory=list)

    def add(self, kind: str, transfer: int, frame: int, start: float, end: float) -> None:
        self.events.append((kind, transfer, frame, start - self.origin, end - self.origin))


class Progress:
    """Completes requests in one of the :data:`PROGRESS` ways, telling ``done(k, now)`` of each
    request ``k`` as it completes.

    Parameters
    ----------
    way
        ``spin`` or ``sleep``.
    clock
        The clock completions are stamped with (``MPI.Wtime``).
    """

    def __init__(self, way: str, clock: Callable[[], float]) -> None:
        if way not in PROGRESS:
            raise ValueError(f"unknown progress {way!r} (expected one of {', '.join(PROGRESS)})")
        self.way = way
        self.clock = clock

    def wait(self, mpi: Any, requests: Sequence[Any], done: Callable[[int, float], None] | None = None) -> None:
        """Complete every request of ``requests``, telling ``done`` of each as it completes."""
        if not requests:
            return
        if done is None and self.way == "spin":
            mpi.Request.Waitall(list(requests))
            return
        live = list(requests)
        left = len(live)
        while left:
            finished = self.some(mpi, live)
            now = self.clock()
            for k in finished:
                if done is not None:
                    done(k, now)
            left -= len(finished)

    def some(self, mpi: Any, requests: list[Any]) -> list[int]:
        """Wait until at least one request of ``requests`` completes; the indices of those that
        have (completed requests become null, as MPI leaves them); [] when all are null."""
        nap = FIRST_NAP_S
        while True:
            found = (mpi.Request.Waitsome if self.way == "spin" else mpi.Request.Testsome)(requests)
            if found is None:
                return []
            if found:
                return list(found)
            time.sleep(nap)
            nap = min(2 * nap, LONGEST_NAP_S)

    def nap(self, seconds: float) -> None:
        """Give the processor up for ``seconds`` at most (nothing under ``spin``)."""
        if self.way == "sleep" and seconds > 0:
            time.sleep(min(seconds, LONGEST_NAP_S))

    def barrier(self, comm: Any, mpi: Any) -> None:
        """A barrier waited for in this way (a non-blocking one under ``sleep``)."""
        if self.way == "spin":
            comm.Barrier()
        else:
            self.wait(mpi, [comm.Ibarrier()])

"""Measure paper 002's cost parameters between two ranks by ping-pong:
``python -m liquidsched.execute.pingpong JOB.json`` under ``mpiexec -n 2``.

For packets of ``b`` bytes (:class:`~liquidsched.cost_model.CostParameters`):

* round trip: ``b`` bytes there and back, ``repeats`` times; half of it is eq. 1 for one
  packet, ``O_s + L + O_r + U_r``;
* ``O_s``: how long starting a send takes (``MPI_Isend`` returning), the receive posted first;
* ``g``: ``repeats`` packets sent back to back; the time between the first and the last
  arrival over ``repeats − 1`` at the receiver, and the sender's time per packet: the larger;
* ``O_r``: a blocking receive of a packet sent well before it is posted (above the library's
  eager limit the packet only moves once the receive is posted, so ``O_r`` then includes its
  transfer and ``L`` comes out smaller);
* ``U_r``: the receiver's user-space handling of a packet: copying it out of the receive buffer;
* ``L``: what is left of the half round trip, ``RTT/2 − O_s − O_r − U_r`` (at least 0).

Each is the median of its ``repeats`` samples. Rank 0 writes the results as JSON.
"""

from __future__ import annotations

import json
import statistics
import sys
import time
from pathlib import Path

import numpy as np
from mpi4py import MPI

from ..io.output import write_output


def round_trip_s(comm: MPI.Comm, packet: np.ndarray, repeats: int) -> float:
    """The median time of a packet there and back."""
    rank, peer = comm.Get_rank(), 1 - comm.Get_rank()
    back = np.ones_like(packet)
    samples = []
    for _ in range(repeats):
        comm.Barrier()
        t0 = MPI.Wtime()
        if rank == 0:
            comm.Send([packet, MPI.BYTE], peer, 1)
            comm.Recv([back, MPI.BYTE], peer, 1)
        else:
            comm.Recv([back, MPI.BYTE], peer, 1)
            comm.Send([packet, MPI.BYTE], peer, 1)
        samples.append(MPI.Wtime() - t0)
    return statistics.median(samples)


def send_overhead_and_gap_s(comm: MPI.Comm, packet: np.ndarray, repeats: int) -> tuple[float, float]:
    """(O_s, g): the median time an ``Isend`` call takes, and the gap between packets sent back
    to back (the larger of the sender's and the receiver's), every receive posted first."""
    rank, peer = comm.Get_rank(), 1 - comm.Get_rank()
    inbox = np.ones((repeats, packet.size), np.uint8)  # written once: no page faults while timed
    calls, gap = [], 0.0
    if rank == 1:
        requests = [comm.Irecv([inbox[i], MPI.BYTE], peer, 2) for i in range(repeats)]
    comm.Barrier()
    if rank == 0:
        start = MPI.Wtime()
        requests = []
        for _ in range(repeats):
            t0 = MPI.Wtime()
            requests.append(comm.Isend([packet, MPI.BYTE], peer, 2))
            calls.append(MPI.Wtime() - t0)
        MPI.Request.Waitall(requests)
        gap = (MPI.Wtime() - start) / repeats
    else:
        requests[0].Wait()
        first = MPI.Wtime()
        MPI.Request.Waitall(requests[1:])
        gap = (MPI.Wtime() - first) / max(1, repeats - 1)
    gaps = comm.allgather(gap)
    overhead = comm.bcast(statistics.median(calls) if rank == 0 else None, root=0)
    return overhead, max(gaps)


def receive_overheads_s(comm: MPI.Comm, packet: np.ndarray, repeats: int, settle_s: float) -> tuple[float, float]:
    """(O_r, U_r): the median time of a blocking receive of a packet sent ``settle_s`` before
    it is posted, and of copying a received packet out of its buffer."""
    rank, peer = comm.Get_rank(), 1 - comm.Get_rank()
    got, copy = np.ones_like(packet), np.ones_like(packet)
    receives, copies = [], []
    for _ in range(repeats):
        comm.Barrier()
        if rank == 0:
            request = comm.Isend([packet, MPI.BYTE], peer, 3)
            comm.Barrier()
            request.Wait()
        else:
            comm.Barrier()
            time.sleep(settle_s)
            t0 = MPI.Wtime()
            comm.Recv([got, MPI.BYTE], peer, 3)
            receives.append(MPI.Wtime() - t0)
            t0 = MPI.Wtime()
            np.copyto(copy, got)
            copies.append(MPI.Wtime() - t0)
    result = (statistics.median(receives), statistics.median(copies)) if rank == 1 else None
    return comm.bcast(result, root=1)


def main() -> None:
    job = json.loads(Path(sys.argv[1]).read_text(encoding="utf-8"))
    comm = MPI.COMM_WORLD
    if comm.Get_size() != 2:
        if comm.Get_rank() == 0:
            sys.stderr.write(f"liquidsched calibrate: needs 2 ranks, got {comm.Get_size()}\n")
        comm.Abort(2)
    packet = np.random.default_rng(0).integers(0, 256, job["packet_bytes"], dtype=np.uint8)
    repeats = job["repeats"]
    round_trip_s(comm, packet, min(repeats, 10))  # warm-up: connections, registrations
    rtt = round_trip_s(comm, packet, repeats)
    send_overhead, gap = send_overhead_and_gap_s(comm, packet, repeats)
    recv_overhead, user = receive_overheads_s(comm, packet, repeats, settle_s=rtt + 2 * gap)
    latency = max(0.0, rtt / 2 - send_overhead - recv_overhead - user)
    if comm.Get_rank() == 0:
        write_output(job["output"], json.dumps({
            "packet_bytes": job["packet_bytes"], "repeats": repeats, "round_trip_s": rtt,
            "send_overhead_s": send_overhead, "latency_s": latency, "gap_s": gap,
            "recv_overhead_s": recv_overhead, "user_recv_s": user,
            "mpi_library": MPI.Get_library_version().splitlines()[0].strip()}, indent=2))


if __name__ == "__main__":
    main()

"""An mpi4py application whose exchange changes counts from call to call, as a
mixture-of-experts layer's dispatch does: run under mpiexec by tests/test_application.py. Every
call is compared with MPI_Alltoallv on the same buffers; rank 0 prints one JSON line per mode,
and the exit status is 1 when any byte differs."""

from __future__ import annotations

import json
import sys

import numpy as np
from mpi4py import MPI

from liquidsched import build_topology
from liquidsched.bounds import compute_bound
from liquidsched.execute.application import plan_alltoallv
from liquidsched.execute.paced import headroom_from_environment, paced_duration_s
from liquidsched.traffic import Traffic, Transfer

comm = MPI.COMM_WORLD
size, me = comm.Get_size(), comm.Get_rank()
topology = sys.argv[1]
modes = sys.argv[2].split(",")
net = build_topology(topology)
hosts = net.hosts()[:size]
wrong = 0


def counts_of(variant: int, i: int, j: int) -> int:
    """Elements from rank i to rank j in matrix ``variant``: uneven, some empty, each matrix
    different from the others in many messages."""
    return ((7 * i + 3 * j + 5 * variant) % 5) * (40 + 30 * variant) + (i == j)


def layout(variant: int) -> tuple[list[int], list[int], list[int], list[int]]:
    """This rank's counts and displacements in ``variant``, with gaps that change too."""
    sc = [counts_of(variant, me, j) for j in range(size)]
    rc = [counts_of(variant, i, me) for i in range(size)]
    sd = [sum(sc[:j]) + (variant + 1) * j for j in range(size)]
    rd = [sum(rc[:i]) + (2 + variant) * i for i in range(size)]
    return sc, sd, rc, rd


def paced_bound_s(variant: int) -> float:
    transfers = [Transfer(hosts[i], hosts[j], 4 * counts_of(variant, i, j)) for i in range(size) for j in range(size)
                 if i != j and counts_of(variant, i, j)]
    return float(compute_bound(net, Traffic(transfers)).duration_s)


SEQUENCE = [1, 0, 2, 1, 0, 0]  # planned first with matrix 0; then 1, 0 (reused), 2, 1 (reused), 0 (reused), again
for mode in modes:
    sc, sd, rc, rd = layout(0)
    ex = plan_alltoallv(comm, topology, sc, sdispls=sd, rdispls=rd, itemsize=4, mode=mode)
    ok, paced_ok = True, True
    for call, variant in enumerate(SEQUENCE):
        sc, sd, rc, rd = layout(variant)
        send = (np.arange(sum(sc) + (variant + 1) * size) * 11 + me * 100_000 + call).astype(np.int32)
        got = np.full(sum(rc) + (2 + variant) * size + 4, -1, np.int32)
        want = got.copy()
        if call == len(SEQUENCE) - 1:
            ex.alltoallv(send, got)  # no counts: the last call's
        else:
            ex.alltoallv(send, got, sendcounts=sc, sdispls=sd, rdispls=rd)
        comm.Alltoallv([send, (sc, sd)], [want, (rc, rd)])
        ok &= bool(np.array_equal(got, want))
        if mode == "paced" and me == 0:
            paced_ok &= abs(ex.paced_s - paced_duration_s(paced_bound_s(variant), headroom_from_environment())) \
                <= 1e-9 * ex.paced_s
    ok = comm.allreduce(ok, op=MPI.LAND)
    wrong |= not ok
    if me == 0:
        print(json.dumps({"mode": mode, "exact": ok, "planned": ex.planned, "reused": ex.reused,
                          "paced_duration_checked": paced_ok if mode == "paced" else None}), flush=True)
    ex.free()

sys.exit(1 if wrong else 0)

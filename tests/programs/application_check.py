"""An mpi4py application using liquidsched's persistent exchanges: run under mpiexec by
tests/test_application.py. Every case's result is compared with MPI_Alltoallv's on the same
buffers; rank 0 prints one JSON line per case, and the exit status is 1 when any byte differs."""

from __future__ import annotations

import json
import sys

import numpy as np
from mpi4py import MPI

from liquidsched.errors import InputError
from liquidsched.execute.application import plan_alltoall, plan_alltoallv
from liquidsched.execute.plan import MODES

comm = MPI.COMM_WORLD
size, me = comm.Get_size(), comm.Get_rank()
topology = sys.argv[1]
wrong = 0


def check(name, exchange, send, counts, sdispls, rcounts, rdispls, dtype, repeats=3):
    """Run the exchange ``repeats`` times on fresh data; compare with MPI_Alltoallv."""
    global wrong
    ok = True
    for run in range(repeats):
        send[:] = (np.arange(send.size) * 7 + me * 1000 + run).astype(dtype)
        got = np.full(sum(rcounts) + size + 8, -1, dtype)
        want = got.copy()
        exchange.alltoallv(send, got)
        comm.Alltoallv([send, (counts, sdispls)], [want, (rcounts, rdispls)])
        ok &= bool(np.array_equal(got, want))
    ok = comm.allreduce(ok, op=MPI.LAND)
    wrong |= not ok
    if me == 0:
        info = exchange.schedule.info if exchange.schedule is not None else None
        print(json.dumps({"case": name, "exact": ok, "algorithm": info.algorithm if info else None,
                          "frames": exchange.schedule.length if exchange.schedule else 0}), flush=True)


if sys.argv[2:] == ["relayed"]:
    # FAST's and hierarchical dispatch's legs through other ranks: uneven counts with gaps, some
    # empty, int32 elements, in every mode that runs legs.
    counts = [((5 * me + 3 * j) % 4) * 50 + 7 * (j != me) for j in range(size)]
    sdispls = [sum(counts[:j]) + j for j in range(size)]
    rcounts = [((5 * i + 3 * me) % 4) * 50 + 7 * (i != me) for i in range(size)]
    rdispls = [sum(rcounts[:i]) + 2 * i for i in range(size)]
    for algorithm in ("fast", "hierarchical"):
        for mode in ("frames", "barrier-free", "all-at-once", "pairwise", "paced", "alltoallv"):
            ex = plan_alltoallv(comm, topology, counts, sdispls=sdispls, rdispls=rdispls, itemsize=4, mode=mode,
                                algorithm=algorithm)
            check(f"relayed-{algorithm}-{mode}", ex, np.zeros(sum(counts) + size, np.int32), counts, sdispls,
                  rcounts, rdispls, np.int32)
            ex.free()
    try:
        plan_alltoallv(comm, topology, counts, sdispls=sdispls, rdispls=rdispls, itemsize=4, mode="shuffle",
                       algorithm="fast")
        refused = None
    except InputError as e:
        refused = str(e)
    if me == 0:
        print(json.dumps({"case": "relayed-shuffle-refused", "exact": refused is not None, "message": refused}),
              flush=True)
    sys.exit(1 if wrong or refused is None else 0)

# Equal messages, every mode, float64 elements: MPI_Alltoall's shape.
for mode in MODES:
    count = 300
    ex = plan_alltoall(comm, topology, count, itemsize=8, mode=mode)
    counts = [count] * size
    displs = [count * k for k in range(size)]
    check(f"alltoall-{mode}", ex, np.zeros(count * size), counts, displs, counts, displs, np.float64)
    ex.free()

# Uneven counts with gaps between messages and some empty, int32 elements.
counts = [((5 * me + 3 * j) % 4) * 50 for j in range(size)]
sdispls = [sum(counts[:j]) + j for j in range(size)]
rcounts = [((5 * i + 3 * me) % 4) * 50 for i in range(size)]
rdispls = [sum(rcounts[:i]) + 2 * i for i in range(size)]
for mode in ("frames", "barrier-free", "shuffle", "alltoallv"):
    ex = plan_alltoallv(comm, topology, counts, sdispls=sdispls, rdispls=rdispls, itemsize=4, mode=mode)
    check(f"alltoallv-{mode}", ex, np.zeros(sum(counts) + size, np.int32), counts, sdispls, rcounts, rdispls,
          np.int32)
    ex.free()

# Back to back, nothing between the calls: a fast rank's next call must not disturb a slow one's.
for mode in ("barrier-free", "frames", "shuffle"):
    ex = plan_alltoallv(comm, topology, counts, sdispls=sdispls, rdispls=rdispls, itemsize=4, mode=mode)
    sends = [(np.arange(sum(counts) + size) * (k + 3) + me).astype(np.int32) for k in range(6)]
    gots = [np.full(sum(rcounts) + 2 * size, -1, np.int32) for _ in sends]
    for send, got in zip(sends, gots):
        ex.alltoallv(send, got)
    ok = True
    for send, got in zip(sends, gots):
        want = np.full_like(got, -1)
        comm.Alltoallv([send, (counts, sdispls)], [want, (rcounts, rdispls)])
        ok &= bool(np.array_equal(got, want))
    ok = comm.allreduce(ok, op=MPI.LAND)
    wrong |= not ok
    if me == 0:
        print(json.dumps({"case": f"back-to-back-{mode}", "exact": ok}), flush=True)
    ex.free()

# mode="selected": without a table MPI_Alltoallv itself; with one, the mode it measured fastest.
import os  # noqa: E402
import tempfile  # noqa: E402

from liquidsched import build_topology  # noqa: E402
from liquidsched.execute.selection import SelectionTable, measured_on  # noqa: E402

os.environ.pop("LIQUIDSCHED_SELECTION", None)
ex = plan_alltoallv(comm, topology, counts, sdispls=sdispls, rdispls=rdispls, itemsize=4, mode="selected")
check(f"selected-without-table-{ex.mode}", ex, np.zeros(sum(counts) + size, np.int32), counts, sdispls, rcounts,
      rdispls, np.int32)
ex.free()
path = None
if me == 0:
    net = build_topology(topology)
    about = measured_on(net, net.hosts()[:size], MPI.Get_library_version(), "local")
    rows = [{"size_bytes": s, "best": "paced", "modes": {"paced": {"median_s": 1.0}, "alltoallv": {"median_s": 2.0}}}
            for s in (1, 1 << 20)]
    fd, path = tempfile.mkstemp(suffix=".json")
    os.write(fd, json.dumps(SelectionTable(about, rows).to_dict()).encode())
    os.close(fd)
path = comm.bcast(path, root=0)
ex = plan_alltoallv(comm, topology, counts, sdispls=sdispls, rdispls=rdispls, itemsize=4, mode="selected",
                    selection=path)
check(f"selected-by-table-{ex.mode}", ex, np.zeros(sum(counts) + size, np.int32), counts, sdispls, rcounts, rdispls,
      np.int32)
ex.free()
comm.Barrier()
if me == 0:
    os.unlink(path)

# A bad argument on one rank only: every rank raises, none waits for ever.
from liquidsched.errors import InputError  # noqa: E402

try:
    plan_alltoallv(comm, topology, counts if me != size - 1 else counts[:-1])
    raised = None
except InputError as e:
    raised = str(e)
everyone = comm.allgather(raised)
ok = all(e is not None and e.startswith(f"rank {size - 1}: sendcounts") for e in everyone)
wrong |= not ok
if me == 0:
    print(json.dumps({"case": "bad-on-one-rank", "exact": ok}), flush=True)

sys.exit(1 if wrong else 0)

"""Run a series of K scatters or reduces by periodic schedules, then by the MPI collective:
``python -m liquidsched.execute.steady_worker JOB.json`` under ``mpiexec``, one rank per node of
the platform (see :mod:`liquidsched.steady.execution` for the job and the rules).

Rank 0 writes, per schedule, the time of the K operations (the slowest rank's), the results
checked and how many were right.
"""

from __future__ import annotations

import json
import math
import sys
import time
from typing import Any

import numpy as np
from mpi4py import MPI

from ..io.output import write_output

#: The modulus of the matrix products: products of two entries and their sums fit in int64.
PRIME = 1_000_000_007


def value_of(seed: int, who: tuple[int, ...], op: int, nbytes: int, kind: str) -> np.ndarray:
    """The bytes a participant holds (a reduce: matrices mod PRIME) or the source sends (a
    scatter) for operation ``op``, the same wherever it is computed."""
    rng = np.random.default_rng([seed, *who, op])
    if kind == "reduce":
        return rng.integers(0, PRIME, nbytes // 8, dtype=np.int64).view(np.uint8)
    return rng.integers(0, 256, nbytes, dtype=np.uint8)


def combine(left: np.ndarray, right: np.ndarray) -> np.ndarray:
    """``left ⊕ right``: the product of each pair of 2 × 2 matrices, modulo PRIME; not
    commutative, so a reduction in the wrong order gives a wrong result."""
    a = left.view(np.int64).reshape(-1, 2, 2)
    b = right.view(np.int64).reshape(-1, 2, 2)
    return (np.matmul(a, b) % PRIME).reshape(-1).view(np.uint8)


def expected_reduce(seed: int, participants: int, op: int, nbytes: int) -> np.ndarray:
    result = value_of(seed, (0,), op, nbytes, "reduce")
    for k in range(1, participants):
        result = combine(result, value_of(seed, (k,), op, nbytes, "reduce"))
    return result


#: How long a waiting rank sleeps between polls: a fraction of a millisecond, in which the
#: kernel's socket buffers take what arrives, so that waiting ranks leave the processors to the
#: ranks with data to move (MPI's own waits spin, and ranks outnumber cores here).
POLL_SLEEP_S = 0.0002


def wait_all(requests: list[MPI.Request]) -> None:
    """Wait for every request, sleeping between polls (:data:`POLL_SLEEP_S`)."""
    while not MPI.Request.Testall(requests):
        time.sleep(POLL_SLEEP_S)


class PeriodicSchedule:
    """One rank's part of a periodic schedule: its streams, its computations, its matchings."""

    def __init__(self, job: dict[str, Any], run: dict[str, Any], me: int) -> None:
        self.job, self.run, self.me = job, run, me
        self.kind = job["kind"]
        self.delta = job["message_bytes"]
        self.operations = job["operations"]
        self.per_period = run["operations_per_period"]
        self.batches = math.ceil(self.operations / self.per_period)
        self.periods = self.batches + run["depth"] - 1
        self.participants = job["participants"]
        self.root = job["root"]
        self.out: dict[int, list[tuple]] = {}
        self.into: dict[int, list[tuple]] = {}
        self.early: list[tuple] = []
        self.late: list[tuple] = []
        for ti, tree in enumerate(run["trees"]):
            for task in tree["tasks"]:
                for c in range(tree["weight"]):
                    slot = (tree["offset"] + c, tuple(task.get("type", task.get("task"))), task["stage"])
                    if "send" in task:
                        src, dst = task["send"]
                        if src == me:
                            self.out.setdefault(dst, []).append(slot)
                        if dst == me:
                            self.into.setdefault(src, []).append(slot)
                    elif task["compute"] == me:
                        (self.early if task["stage"] == 0 else self.late).append(slot)
        self.sends: list[tuple | None] = []
        self.receives: list[tuple | None] = []
        for parts in run["matchings"]:
            self.sends.append(next(((d, a, n) for s, d, a, n in parts if s == me), None))
            self.receives.append(next(((s, a, n) for s, d, a, n in parts if d == me), None))
        self.out_buffers = {d: np.zeros(len(slots) * self.delta, np.uint8) for d, slots in self.out.items()}
        self.in_buffers = {s: np.zeros(len(slots) * self.delta, np.uint8) for s, slots in self.into.items()}
        self.store: dict[tuple, np.ndarray] = {}
        self.results: list[tuple[int, tuple, np.ndarray]] = []

    def operation(self, offset: int, stage: int, period: int) -> int | None:
        """The operation a slot carries in ``period``, None during the fill or the drain."""
        batch = period - max(stage, 1) + 1
        op = batch * self.per_period + offset
        if 0 <= batch < self.batches and op < self.operations:
            return op
        return None

    def holds(self, op: int, t: tuple) -> np.ndarray:
        """The message of type ``t`` of operation ``op`` here: a value in place, or one received
        or computed (used once, then dropped)."""
        if self.kind == "reduce":
            k, m = t
            if k == m and self.participants[k] == self.me:
                return value_of(self.job["seed"], (k,), op, self.delta, self.kind)
        elif self.me == self.root:
            return value_of(self.job["seed"], t, op, self.delta, self.kind)
        return self.store.pop((op, t))

    def compute(self, slots: list[tuple], period: int, early: bool) -> None:
        for offset, (k, l, m), stage in slots:
            op = self.operation(offset, 1 if early else stage, period)
            if op is not None:
                self.keep(op, (k, m), combine(self.holds(op, (k, l)), self.holds(op, (l + 1, m))))

    def keep(self, op: int, t: tuple, data: np.ndarray) -> None:
        """Store a message, or set it aside when this rank is its destination."""
        final = (self.kind == "reduce" and self.me == self.root and t == (0, len(self.participants) - 1)) or \
                (self.kind == "scatter" and t == (self.me,))
        if final:
            self.results.append((op, t, data))
        else:
            self.store[(op, t)] = data

    def run_period(self, comm: MPI.Comm, period: int) -> None:
        self.compute(self.early, period, early=True)
        d = self.delta
        for dst, slots in self.out.items():
            buf = self.out_buffers[dst]
            for j, (offset, t, stage) in enumerate(slots):
                op = self.operation(offset, stage, period)
                if op is not None:
                    buf[j * d:(j + 1) * d] = self.holds(op, t)
        for send, receive in zip(self.sends, self.receives):
            requests = []
            if receive is not None:
                src, start, n = receive
                requests.append(comm.Irecv([self.in_buffers[src][start:start + n], MPI.BYTE], src, 7))
            if send is not None:
                dst, start, n = send
                requests.append(comm.Isend([self.out_buffers[dst][start:start + n], MPI.BYTE], dst, 7))
            wait_all(requests)
        for src, slots in self.into.items():
            buf = self.in_buffers[src]
            for j, (offset, t, stage) in enumerate(slots):
                op = self.operation(offset, stage, period)
                if op is not None:
                    self.keep(op, t, buf[j * d:(j + 1) * d].copy())
        self.compute(self.late, period, early=False)


def expected_result(job: dict[str, Any], op: int, t: tuple) -> np.ndarray:
    if job["kind"] == "reduce":
        return expected_reduce(job["seed"], len(job["participants"]), op, job["message_bytes"])
    return value_of(job["seed"], t, op, job["message_bytes"], job["kind"])


def timed(comm: MPI.Comm, work) -> float:
    comm.Barrier()
    t0 = MPI.Wtime()
    work()
    elapsed = MPI.Wtime() - t0
    comm.Barrier()
    return comm.allreduce(elapsed, op=MPI.MAX)


def tally(comm: MPI.Comm, job: dict[str, Any], results: list[tuple[int, tuple, np.ndarray]]) -> tuple[int, int]:
    """(results checked right, results expected), over every rank."""
    right = sum(bool(np.array_equal(data, expected_result(job, op, t))) for op, t, data in results)
    expected = job["operations"] * (1 if job["kind"] == "reduce" else len(job["participants"]))
    return comm.allreduce(right, op=MPI.SUM), expected


def run_periodic(comm: MPI.Comm, job: dict[str, Any], run: dict[str, Any]) -> dict[str, Any]:
    schedule = PeriodicSchedule(job, run, comm.Get_rank())
    elapsed = timed(comm, lambda: [schedule.run_period(comm, p) for p in range(schedule.periods)])
    right, expected = tally(comm, job, schedule.results)
    return {"time_s": elapsed, "periods": schedule.periods, "checked_right": right, "expected": expected,
            "left_over": comm.allreduce(len(schedule.store), op=MPI.SUM)}


def run_collective(comm: MPI.Comm, job: dict[str, Any]) -> dict[str, Any] | None:
    """K calls of MPI_Reduce (the operator declared non-commutative) or MPI_Scatter among the
    participants (and the source); None when the reduce's target is not a participant."""
    me, kind, delta = comm.Get_rank(), job["kind"], job["message_bytes"]
    participants, root = job["participants"], job["root"]
    members = participants if kind == "reduce" else [root] + participants
    if kind == "reduce" and root not in participants:
        return None
    sub = comm.Split(0 if me in members else MPI.UNDEFINED, members.index(me) if me in members else 0)
    results: list[tuple[int, tuple, np.ndarray]] = []
    if kind == "reduce":
        matrix = MPI.INT64_T.Create_contiguous(4).Commit()

        def product(inbuf, inoutbuf, datatype):
            a = np.frombuffer(inbuf, np.int64).reshape(-1, 2, 2)
            b = np.frombuffer(inoutbuf, np.int64).reshape(-1, 2, 2)
            np.copyto(b, np.matmul(a, b) % PRIME)

        op_product = MPI.Op.Create(product, commute=False)

        def work():
            if sub == MPI.COMM_NULL:
                return
            k, target = members.index(me), members.index(root)
            out = np.empty(delta, np.uint8)
            for op in range(job["operations"]):
                mine = value_of(job["seed"], (k,), op, delta, kind)
                sub.Reduce([mine, delta // 32, matrix], [out, delta // 32, matrix], op_product, root=target)
                if me == root:
                    results.append((op, (0, len(participants) - 1), out.copy()))
    else:
        def work():
            if sub == MPI.COMM_NULL:
                return
            out = np.empty(delta, np.uint8)
            for op in range(job["operations"]):
                sendbuf = None
                if me == root:
                    sendbuf = np.zeros((len(members), delta), np.uint8)
                    for i, k in enumerate(participants):
                        sendbuf[i + 1] = value_of(job["seed"], (k,), op, delta, kind)
                sub.Scatter(sendbuf, [out, MPI.BYTE], root=0)
                if me != root:
                    results.append((op, (me,), out.copy()))
    elapsed = timed(comm, work)
    right, expected = tally(comm, job, results)
    if kind == "reduce":
        op_product.Free()
        matrix.Free()
    if sub != MPI.COMM_NULL:
        sub.Free()
    return {"time_s": elapsed, "checked_right": right, "expected": expected}


def main(path: str) -> None:
    job = json.loads(open(path, encoding="utf-8").read())
    comm = MPI.COMM_WORLD
    out: dict[str, Any] = {"runs": {}, "mpi_library": MPI.Get_library_version().splitlines()[0].strip()}
    for run in job["runs"]:
        out["runs"][run["name"]] = run_periodic(comm, job, run)
    if job.get("mpi_collective"):
        collective = run_collective(comm, job)
        if collective is not None:
            out["runs"]["MPI_Reduce" if job["kind"] == "reduce" else "MPI_Scatter"] = collective
    if comm.Get_rank() == 0:
        write_output(job["output"], json.dumps(out, indent=2))


if __name__ == "__main__":
    try:
        main(sys.argv[1])
    except Exception as e:  # one line for failure_line, then the whole job ends
        print(f"liquidsched worker: {type(e).__name__}: {e}", file=sys.stderr, flush=True)
        MPI.COMM_WORLD.Abort(1)

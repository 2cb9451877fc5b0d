"""The program every MPI rank runs: ``python -m liquidsched.execute.worker JOB.json``.

The job names the runs (a mode, the schedule file it executes and, for the shuffle mode, its
window), warm-up and timed runs, and where rank 0 writes the results (after each mode, with
the mode under way, so that a failed run keeps what it measured). Every rank builds the same
:class:`~liquidsched.execute.plan.ExchangePlan` from each schedule file, fills its send buffer
with each transfer's pattern and, for every run, exchanges and (optionally) checks every
received byte.
"""

from __future__ import annotations

import bisect
import json
import resource
import sys
import time
from typing import Sequence
from pathlib import Path

import numpy as np
from mpi4py import MPI

from ..io.output import write_output
from ..schedule import Schedule
from .paced import RECEIVE_LEAD_S, Chunk, paced_chunks
from .plan import (RECV, RELAYED_MODES, SEND, STAGE, ExchangePlan, Message, alltoall_mode_env, alltoallv_mode_env,
                   exchange_plan, pattern)
from .progress import LONGEST_NAP_S, Progress, Timeline


class Pending:
    """Requests under way and what each is: (kind, transfer, frame, posted at); and the relayed
    messages among their receives whose bytes are spread to their places once all complete."""

    def __init__(self) -> None:
        self.requests: list[MPI.Request] = []
        self.labels: list[tuple[str, int, int, float]] = []
        self.landing: list[Message] = []

    def add(self, request: MPI.Request | None, kind: str, transfer: int, frame: int, posted: float) -> None:
        if request is not None:
            self.requests.append(request)
            self.labels.append((kind, transfer, frame, posted))

    def drop(self, done: Sequence[int]) -> None:
        """Forget the requests at indices ``done`` (completed)."""
        gone = set(done)
        self.requests = [r for k, r in enumerate(self.requests) if k not in gone]
        self.labels = [x for k, x in enumerate(self.labels) if k not in gone]


class RankExchange:
    """One rank's buffers and messages, and the ways of exchanging them."""

    def __init__(self, comm: MPI.Comm, plan: ExchangePlan, seed: int, window: int | None = None,
                 buffers: tuple[np.ndarray, np.ndarray] | None = None, progress: str = "spin",
                 prepost: bool = False, paced_s: float | None = None) -> None:
        """``buffers``: an application's send and receive buffers (bytes, where the plan's
        offsets point); without them, buffers of the plan's layout filled with each transfer's
        pattern, to be checked after each run. ``progress``: how the rank waits
        (:data:`~liquidsched.execute.progress.PROGRESS`); ``prepost``: the frames mode posts
        every receive before the first frame; ``paced_s``: the time over which the paced mode
        spreads every transfer (:func:`~liquidsched.execute.paced.paced_duration_s`)."""
        self.comm = comm
        self.notes = comm.Dup()
        self.plan = plan
        self.rank = comm.Get_rank()
        me = self.rank
        if buffers is not None:
            self.send, self.recv = buffers
            self.expected = None
        else:
            self.send, self.recv, self.expected = self.patterned_buffers(seed)
        self.outgoing = [m for m in plan.messages if m.src == me]
        self.incoming = [m for m in plan.messages if m.dst == me and m.src != me]
        frames = 1 + max((m.frame for m in plan.messages), default=-1)
        self.by_frame: list[tuple[list[Message], list[Message]]] = [([], []) for _ in range(frames)]
        for m in self.outgoing:
            self.by_frame[m.frame][0].append(m)
        for m in self.incoming:
            self.by_frame[m.frame][1].append(m)
        self.by_step: dict[int, tuple[list[Message], list[Message]]] = {}
        for k, messages in ((0, self.outgoing), (1, self.incoming)):
            for m in messages:
                self.by_step.setdefault(m.step, ([], []))[k].append(m)
        self.counts = plan.counts(me)
        self.stage = np.zeros(max(plan.stage_bytes[me], 1), np.uint8) if plan.relayed else None
        # A relayed message of several segments is gathered into, or received into, a buffer of
        # its own; one of a single segment is sent from, or received into, its place.
        self.carried = {m.id: np.empty(m.nbytes, np.uint8) for m in self.outgoing if len(m.segments) > 1}
        self.landing = {m.id: np.empty(m.nbytes, np.uint8) for m in self.incoming if len(m.segments) > 1}
        #: the shuffle mode's window, in steps (None: none)
        self.window = window
        self.progress = Progress(progress, MPI.Wtime)
        self.prepost = prepost
        self.paced_s = paced_s
        self.chunks: list[Chunk] | None = None
        #: the run's events, when recorded (:meth:`record`)
        self.timeline: Timeline | None = None
        self.block: np.ndarray | None = None
        #: bytes of each rank's block to every other, for MPI_Alltoall (:meth:`prepare_alltoall`)
        self.block_bytes = 0

    def patterned_buffers(self, seed: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """Send and receive buffers of the plan's layout, what is sent filled with each
        transfer's pattern, and what should be received."""
        plan, me = self.plan, self.rank
        send = np.zeros(max(plan.send_bytes[me], 1), np.uint8)
        recv = np.zeros(max(plan.recv_bytes[me], 1), np.uint8)
        expected = np.zeros_like(recv)
        for i, (src, dst, nbytes, s_off, r_off) in enumerate(plan.regions):
            if src == me:
                send[s_off:s_off + nbytes] = pattern(i, nbytes, seed)
            if dst == me:
                expected[r_off:r_off + nbytes] = pattern(i, nbytes, seed)
        return send, recv, expected

    # -- the pieces of an exchange ------------------------------------------------------------

    def buffer(self, name: str) -> np.ndarray:
        """The send, staging or receive buffer (a :class:`~.plan.Segment`'s ``source`` or ``target``)."""
        buffer = {SEND: self.send, STAGE: self.stage, RECV: self.recv}[name]
        assert buffer is not None, "only a relayed plan stages bytes"
        return buffer

    def arrival_buffer(self, m: Message) -> np.ndarray:
        """Where ``m``'s bytes are received: their place, or ``m``'s own buffer when they go to
        several (:meth:`land` spreads them)."""
        if not m.segments:
            return self.recv[m.recv_offset:m.recv_offset + m.nbytes]
        if m.id in self.landing:
            return self.landing[m.id]
        seg = m.segments[0]
        return self.buffer(seg.target)[seg.target_offset:seg.target_offset + seg.nbytes]

    def departure_bytes(self, m: Message) -> np.ndarray:
        """``m``'s bytes, gathered from their places when they come from several."""
        if not m.segments:
            return self.send[m.send_offset:m.send_offset + m.nbytes]
        if m.id not in self.carried:
            seg = m.segments[0]
            return self.buffer(seg.source)[seg.source_offset:seg.source_offset + seg.nbytes]
        out, at = self.carried[m.id], 0
        for seg in m.segments:
            out[at:at + seg.nbytes] = self.buffer(seg.source)[seg.source_offset:seg.source_offset + seg.nbytes]
            at += seg.nbytes
        return out

    def land(self, m: Message, data: np.ndarray | None = None) -> None:
        """Spread a relayed message's bytes (``data``, or its landing buffer once received) to
        their places."""
        data = self.landing[m.id] if data is None else data
        at = 0
        for seg in m.segments:
            self.buffer(seg.target)[seg.target_offset:seg.target_offset + seg.nbytes] = data[at:at + seg.nbytes]
            at += seg.nbytes

    def post_recv(self, m: Message) -> MPI.Request:
        return self.comm.Irecv([self.arrival_buffer(m), MPI.BYTE], m.src, m.tag)

    def start_send(self, m: Message) -> MPI.Request | None:
        """Send ``m``, or copy it when it stays on this rank (MPI does not cross the network
        for it, whatever the model says)."""
        data = self.departure_bytes(m)
        if m.dst == self.rank:
            if m.segments:
                self.land(m, data)
            else:
                self.recv[m.recv_offset:m.recv_offset + m.nbytes] = data
            return None
        return self.comm.Isend([data, MPI.BYTE], m.dst, m.tag)

    def copy_own_transfers(self) -> None:
        """The transfers from this rank to itself, copied: what a mode that runs no message
        for them (paced, a relayed schedule's legs) leaves to the rank."""
        me = self.rank
        for src, dst, nbytes, s_off, r_off in self.plan.regions:
            if src == me and dst == me:
                self.recv[r_off:r_off + nbytes] = self.send[s_off:s_off + nbytes]

    def record(self, origin: float | None) -> None:
        """Record the next run's events from ``origin`` (its start on this rank's clock), or
        stop recording (None)."""
        self.timeline = None if origin is None else Timeline(origin)

    def posted_recv(self, pending: Pending, m: Message) -> None:
        pending.add(self.post_recv(m), "recv", m.transfer, m.frame, MPI.Wtime())
        if m.id in self.landing:
            pending.landing.append(m)

    def started_send(self, pending: Pending, m: Message) -> None:
        pending.add(self.start_send(m), "send", m.transfer, m.frame, MPI.Wtime())

    def seen(self, pending: Pending, k: int, now: float) -> None:
        """Record that request ``k`` of ``pending`` was seen complete at ``now``."""
        if self.timeline is not None:
            kind, transfer, frame, posted = pending.labels[k]
            self.timeline.add(kind, transfer, frame, posted, now)

    def finish(self, pending: Pending) -> None:
        """Complete every request of ``pending``, recording each as it completes, and spread
        the relayed bytes received."""
        if self.timeline is None:
            self.progress.wait(MPI, pending.requests)
        else:
            self.progress.wait(MPI, pending.requests, lambda k, now: self.seen(pending, k, now))
        for m in pending.landing:
            self.land(m)
        pending.requests.clear()
        pending.labels.clear()
        pending.landing.clear()

    def sync(self, frame: int) -> None:
        """A barrier after ``frame``, recorded."""
        entered = MPI.Wtime()
        self.progress.barrier(self.comm, MPI)
        if self.timeline is not None:
            self.timeline.add("sync", -1, frame, entered, MPI.Wtime())

    def together(self, sends: list[Message], recvs: list[Message]) -> None:
        pending = Pending()
        for m in recvs:
            self.posted_recv(pending, m)
        for m in sends:
            self.started_send(pending, m)
        self.finish(pending)

    # -- the modes ------------------------------------------------------------------------------

    def frames(self) -> None:
        """Frame by frame, a barrier between frames; with ``prepost``, every receive posted
        before the first frame, so that no sender of a frame waits for its receiver to post."""
        if not self.prepost:
            for k, (sends, recvs) in enumerate(self.by_frame):
                if k:
                    self.sync(k - 1)
                self.together(sends, recvs)
            return
        posted = [Pending() for _ in self.by_frame]
        for k, (_, recvs) in enumerate(self.by_frame):
            for m in recvs:
                self.posted_recv(posted[k], m)
        for k, (sends, _) in enumerate(self.by_frame):
            if k:
                self.sync(k - 1)
            for m in sends:
                self.started_send(posted[k], m)
            self.finish(posted[k])

    def all_at_once(self) -> None:
        """Every message posted at once; a relayed message as soon as its bytes have reached
        its sender."""
        if self.plan.relayed:
            self.driven(self.plan.data_waits, self.plan.data_successors)
        else:
            self.together(self.outgoing, self.incoming)

    def alltoallv(self) -> None:
        sc, sd, rc, rd = self.counts
        self.comm.Alltoallv([self.send, (sc, sd), MPI.BYTE], [self.recv, (rc, rd), MPI.BYTE])

    def dependency_driven(self) -> None:
        """Each message starts once the messages before it on each of its resources (and, for a
        relayed message, those that bring its bytes) have been received; their receivers notify
        its sender point to point."""
        self.driven(self.plan.waits_for, self.plan.successors)

    def driven(self, waits_for: list[list[int]], successors: list[list[int]]) -> None:
        """Each message starts once the messages it waits for (``waits_for``; ``successors``:
        the messages that wait for each) have been received: by this rank, or by another that
        notifies it."""
        me = self.rank
        msgs = self.plan.messages
        pending = {m.id: len(waits_for[m.id]) for m in self.outgoing}
        # Each note is received from the rank that sends it, not from any source: MPI keeps the
        # messages of one sender in order, so a faster rank's note of the next exchange cannot be
        # taken for one of this exchange (an application runs the same plan again and again).
        note_sources = [msgs[p].dst for m in self.outgoing for p in waits_for[m.id] if msgs[p].dst != me]
        note_bufs = [np.zeros(1, np.int64) for _ in note_sources]
        requests: list[MPI.Request] = []
        actions: list[tuple[str, object, float]] = []
        timeline = self.timeline

        def watch(request: MPI.Request, what: str, item: object) -> None:
            requests.append(request)
            actions.append((what, item, MPI.Wtime()))

        def received(p: int) -> None:
            for s in successors[p]:
                if msgs[s].src == me:
                    release(s)
                else:
                    note = np.array([s], np.int64)
                    watch(self.notes.Isend([note, MPI.INT64_T], msgs[s].src, 0), "noted", note)

        def release(s: int) -> None:
            pending[s] -= 1
            if pending[s] == 0:
                start(msgs[s])

        def start(m: Message) -> None:
            request = self.start_send(m)
            if request is None:
                received(m.id)
            else:
                watch(request, "sent", m)

        for m in self.incoming:
            watch(self.post_recv(m), "data", m)
        for buf, source in zip(note_bufs, note_sources):
            watch(self.notes.Irecv([buf, MPI.INT64_T], source, 0), "note", buf)
        # Collected first: starting one may release others, which must not start twice.
        for m in [m for m in self.outgoing if pending[m.id] == 0]:
            start(m)
        while requests:
            finished = self.progress.some(MPI, requests)
            now = MPI.Wtime()
            done = [actions[k] for k in finished]
            for k in sorted(finished, reverse=True):
                requests[k], actions[k] = requests[-1], actions[-1]
                requests.pop()
                actions.pop()
            for what, item, posted in done:
                if timeline is not None and what in ("data", "sent"):
                    timeline.add("recv" if what == "data" else "send", item.transfer, item.frame,  # type: ignore[attr-defined]
                                 posted, now)
                if what == "data":
                    if item.id in self.landing:  # type: ignore[attr-defined]
                        self.land(item)  # type: ignore[arg-type]
                    received(item.id)  # type: ignore[attr-defined]
                elif what == "note":
                    release(int(item[0]))  # type: ignore[index]

    def paced(self) -> None:
        """Paced all at once (:mod:`.paced`): each chunk handed to MPI at its due time, its
        receive posted :data:`~.paced.RECEIVE_LEAD_S` before, the rank testing only the requests
        under way and sleeping in between."""
        assert self.chunks is not None, "prepare_paced comes first"
        me, origin = self.rank, MPI.Wtime()
        self.copy_own_transfers()
        # Only the requests under way are tested: testing every request of the run at each turn
        # cost each of 8 ranks on 2 cores enough processor to hand its chunks late.
        live = Pending()
        incoming = [c for c in self.chunks if c.dst == me]
        mine = [c for c in self.chunks if c.src == me]
        posted = following = 0
        while following < len(mine) or posted < len(incoming) or live.requests:
            now = MPI.Wtime()
            elapsed = now - origin
            while posted < len(incoming) and incoming[posted].due_s - RECEIVE_LEAD_S <= elapsed:
                # A chunk has a message's fields (offsets, bytes, peers, tag) and never stays on its rank.
                live.add(self.post_recv(incoming[posted]), "recv", incoming[posted].transfer, -1, now)
                posted += 1
            while following < len(mine) and mine[following].due_s <= elapsed:
                c = mine[following]
                live.add(self.start_send(c), "send", c.transfer, -1, now)
                following += 1
            found = MPI.Request.Testsome(live.requests) if live.requests else None
            if found:
                seen = MPI.Wtime()
                for k in found:
                    self.seen(live, k, seen)
                live.drop(found)
                continue
            upcoming = []
            if following < len(mine):
                upcoming.append(mine[following].due_s)
            if posted < len(incoming):
                upcoming.append(incoming[posted].due_s - RECEIVE_LEAD_S)
            self.progress.nap(min(upcoming, default=elapsed + LONGEST_NAP_S) - elapsed)

    def prepare_paced(self) -> None:
        """The chunks of the paced mode, the same on every rank."""
        if self.paced_s is None:
            raise ValueError("the paced mode needs the time over which it spreads the transfers")
        self.chunks = paced_chunks(self.plan.regions, self.paced_s)

    def shuffle(self) -> None:
        """Paper 002's Alg. 2: every receive posted, the sends started one after the other in
        schedule order while fewer than W of the steps before the next one are not yet wholly
        received (sent minus received below W_g, counted in steps so that no traffic, however
        uneven, can leave every rank waiting); no barrier."""
        pending: dict[int, int] = {}
        for m in self.incoming:
            pending[m.step] = pending.get(m.step, 0) + 1
        unfinished = sorted(pending)  # steps with a receive outstanding
        recvs = [self.post_recv(m) for m in self.incoming]
        posted = list(self.incoming)
        sends: list[MPI.Request] = []
        window = self.window
        next_send = 0
        while True:
            while next_send < len(self.outgoing) and (
                    window is None or bisect.bisect_left(unfinished, self.outgoing[next_send].step) < window):
                request = self.start_send(self.outgoing[next_send])
                if request is not None:
                    sends.append(request)
                next_send += 1
            if not recvs:
                break
            finished = self.progress.some(MPI, recvs)
            done = [posted[k] for k in finished]
            for k in sorted(finished, reverse=True):
                recvs[k], posted[k] = recvs[-1], posted[-1]
                recvs.pop()
                posted.pop()
            for m in done:
                pending[m.step] -= 1
                if pending[m.step] == 0:
                    unfinished.pop(bisect.bisect_left(unfinished, m.step))
        self.progress.wait(MPI, sends)

    def pairwise(self) -> None:
        """Paper 002's Alg. 3: one step at a time, each rank waiting for its own sends and
        receives of a step before the next; no barrier."""
        for step in sorted(self.by_step):
            self.together(*self.by_step[step])

    def alltoall(self) -> None:
        """``MPI_Alltoall`` on blocks of the common message size (:meth:`prepare_alltoall`)."""
        assert self.block is not None
        self.comm.Alltoall([self.block, MPI.BYTE], [self.block_recv, MPI.BYTE])

    def prepare_alltoall(self) -> None:
        """The contiguous blocks ``MPI_Alltoall`` takes, one per rank, from the send buffer (a
        rank's block to itself left empty where the traffic has none)."""
        n = self.block_bytes = self.plan.block_bytes()
        assert n is not None, "the run checks the traffic before launching"
        size = self.comm.Get_size()
        self.block = np.zeros(max(n * size, 1), np.uint8)
        self.block_recv = np.zeros_like(self.block)
        sc, sd, _, _ = self.counts
        for d in range(size):
            if sc[d]:
                self.block[d * n:(d + 1) * n] = self.send[sd[d]:sd[d] + n]

    def unpack_alltoall(self) -> None:
        """Received blocks back to the receive buffer's layout, for the byte check."""
        _, _, rc, rd = self.counts
        n = self.block_bytes
        for s in range(self.comm.Get_size()):
            if rc[s]:
                self.recv[rd[s]:rd[s] + n] = self.block_recv[s * n:(s + 1) * n]

    def prepare(self, mode: str) -> None:
        """Untimed work before a mode's runs."""
        if alltoall_mode_env(mode) is not None:
            self.prepare_alltoall()
        elif mode == "paced":
            self.prepare_paced()

    def run(self, mode: str) -> None:
        if alltoall_mode_env(mode) is not None:
            self.alltoall()
            return
        if alltoallv_mode_env(mode) is not None:
            self.alltoallv()
            return
        if self.plan.relayed:
            if mode not in RELAYED_MODES:
                raise ValueError(f"the {mode} mode does not run a relayed schedule")
            if mode != "paced":
                self.copy_own_transfers()
        {"frames": self.frames, "all-at-once": self.all_at_once, "barrier-free": self.dependency_driven,
         "dependency-driven": self.dependency_driven, "paced": self.paced, "shuffle": self.shuffle,
         "pairwise": self.pairwise}[mode]()

    def after_run(self, mode: str) -> None:
        """Untimed work after a run, before its bytes are checked."""
        if alltoall_mode_env(mode) is not None:
            self.unpack_alltoall()

    def verified(self) -> bool:
        return bool(np.array_equal(self.recv, self.expected))


def timed_runs(ex: RankExchange, mode: str, warmup: int, repeats: int, verify: bool,
               timeline: bool = False, shared_clock: bool = False) -> dict:
    """Warm-up runs, then timed runs: each the slowest rank's time from a common barrier. With
    ``timeline``, every timed run's events of every rank (gathered on rank 0; ``timelines``:
    per run, per rank, the events of :class:`~liquidsched.execute.progress.Timeline`), from the
    earliest rank's start when the ranks share a clock (``shared_clock``: they run on one
    machine), else from each rank's own start."""
    comm = ex.comm
    times, ok, timelines = [], True, []
    ex.prepare(mode)
    for k in range(warmup + repeats):
        if verify:
            ex.recv[:] = 0
        comm.Barrier()
        t0 = MPI.Wtime()
        ex.record(0.0 if timeline and k >= warmup else None)
        ex.run(mode)
        elapsed = comm.allreduce(MPI.Wtime() - t0, op=MPI.MAX)
        ex.after_run(mode)
        if k >= warmup:
            times.append(elapsed)
            if ex.timeline is not None:
                origin = comm.allreduce(t0, op=MPI.MIN) if shared_clock else t0
                events = [(kind, i, f, a - origin, b - origin) for kind, i, f, a, b in ex.timeline.events]
                timelines.append(comm.gather(events, root=0))
        if verify:
            ok = comm.allreduce(ex.verified(), op=MPI.LAND) and ok
    out = {"times_s": times, "verified": ok if verify else None}
    if timeline and comm.Get_rank() == 0:
        out["timelines"] = timelines
    return out


def main() -> None:
    job = json.loads(Path(sys.argv[1]).read_text(encoding="utf-8"))
    comm = MPI.COMM_WORLD
    plans: dict[str, ExchangePlan] = {}
    out: dict = {"ranks": comm.Get_size(), "modes": {},
                 "mpi_library": MPI.Get_library_version().splitlines()[0].strip(), "started": time.time()}
    for run in job["runs"]:
        mode = run["mode"]
        if run["schedule"] not in plans:
            plans[run["schedule"]] = exchange_plan(Schedule.load(run["schedule"]))
        plan = plans[run["schedule"]]
        if comm.Get_size() != plan.size:
            if comm.Get_rank() == 0:
                sys.stderr.write(f"liquidsched worker: {comm.Get_size()} ranks for {plan.size} hosts\n")
            comm.Abort(2)
        out["hosts"] = plan.hosts
        if comm.Get_rank() == 0:
            write_output(job["output"], json.dumps(out | {"running": mode}, indent=2))
        ex = RankExchange(comm, plan, job.get("seed", 0), run.get("window"), progress=run.get("progress", "spin"),
                          prepost=run.get("prepost", False), paced_s=run.get("paced_s"))
        out["modes"][mode] = timed_runs(ex, mode, job["warmup"], job["repeats"], job["verify"],
                                        job.get("timeline", False), job.get("shared_clock", False))
        del ex
    # Peak resident memory of every rank (kB on Linux), to keep the memory estimate honest.
    rss = comm.gather(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024, root=0)
    if comm.Get_rank() == 0:
        write_output(job["output"], json.dumps(out | {"max_rss_bytes": rss}, indent=2))


if __name__ == "__main__":
    main()

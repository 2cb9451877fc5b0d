"""A schedule as messages between ranks: what every rank sends, receives and waits for.

This part knows nothing of MPI, so it is tested on its own. Ranks are the traffic's hosts in
network order. Each rank keeps one send buffer (its outgoing transfers, by destination rank then
transfer) and one receive buffer (its incoming transfers, by source rank then transfer), the
layout ``MPI_Alltoallv`` needs; a piece is a slice of its transfer's region, the pieces of a
transfer following each other in schedule order.

A relayed schedule (:mod:`liquidsched.relay`) is run leg by leg: its buffers are still those of
the exchange's own transfers, and a rank that forwards bytes keeps them meanwhile in a staging
buffer of its own. Each message of a leg carries segments (:class:`Segment`): byte ranges of original
transfers, read from the sender's send, staging or receive buffer and written to the receiver's
receive buffer (their destination) or staging buffer (a host that forwards them). Which bytes
leave a host is decided first in, first out per original transfer, with what a step brings
available from the next step on, as the validator counts it; a message waits, beside the
messages before it on its resources, for the messages that brought its bytes to its sender.
"""

from __future__ import annotations

from collections import deque
from dataclasses import dataclass, field

from typing import Iterable, NamedTuple

import numpy as np

from ..errors import InputError
from ..network import Network
from ..schedule import Schedule
from ..traffic import Traffic, Transfer

#: How an exchange is executed, by liquidsched's ranks (the MPI library's own alltoall and
#: alltoallv algorithms are :func:`library_mode_env`'s). ``barrier-free`` is the former name of
#: ``dependency-driven``.
MODES = ("frames", "dependency-driven", "barrier-free", "paced", "all-at-once", "alltoallv", "shuffle", "pairwise")
#: The modes that run the MPI library's own collective, not a schedule.
LIBRARY_MODES = ("alltoallv",)
#: The modes that run a schedule of steps of their own: paper 002's shuffle and pairwise
#: exchanges, each of its scheduler's schedule.
STEPPED_MODES = ("shuffle", "pairwise")
#: The modes that run a relayed schedule (:mod:`liquidsched.relay`): frame by frame, step by
#: step (pairwise), dependency-driven, and all at once (each leg as soon as its bytes have
#: arrived), each keeping what a host forwards after what brings it; paced and the library's own
#: collectives send the exchange's transfers straight, as for any schedule. The shuffle mode,
#: which starts sends whatever has arrived, does not.
RELAYED_MODES = ("frames", "dependency-driven", "barrier-free", "all-at-once", "pairwise", "paced")
#: The modes measured unless told: the schedule's own ways and the library's alltoallv.
DEFAULT_MODES = ("frames", "barrier-free", "all-at-once", "alltoallv")
#: ``MPI_Alltoall`` with MPICH's choice (``alltoall``) or one of its algorithms forced through its
#: control variables; ``alltoall-scattered-N`` posts N sends and receives at a time (0: all).
ALLTOALL_ALGORITHMS = {"alltoall": None, "alltoall-brucks": "brucks", "alltoall-pairwise": "pairwise",
                       "alltoall-scattered": "scattered"}


def alltoall_mode_env(mode: str) -> dict[str, str] | None:
    """The MPICH control variables that make ``MPI_Alltoall`` run ``mode``'s algorithm
    (``alltoall``, ``alltoall-brucks``, ``alltoall-pairwise``, ``alltoall-scattered-N``); None
    when ``mode`` is not one of them. The device's own collectives are turned off so that the
    MPIR-level choice holds.

    Examples
    --------
    >>> alltoall_mode_env("alltoall-scattered-4")["MPIR_CVAR_ALLTOALL_THROTTLE"]
    '4'
    >>> alltoall_mode_env("frames") is None
    True
    """
    name, throttle = mode, None
    head, _, tail = mode.rpartition("-")
    if head == "alltoall-scattered" and tail.isdigit():
        name, throttle = head, tail
    if name not in ALLTOALL_ALGORITHMS or name == "alltoall-scattered" and throttle is None:
        return None
    algorithm = ALLTOALL_ALGORITHMS[name]
    if algorithm is None:
        return {}
    env = {"MPIR_CVAR_DEVICE_COLLECTIVES": "none", "MPIR_CVAR_ALLTOALL_INTRA_ALGORITHM": algorithm}
    if throttle is not None:
        env["MPIR_CVAR_ALLTOALL_THROTTLE"] = throttle
    return env


def alltoallv_mode_env(mode: str) -> dict[str, str] | None:
    """The MPICH control variables that make ``MPI_Alltoallv`` run ``mode``'s algorithm:
    ``alltoallv`` (MPICH's choice) or ``alltoallv-scattered-N`` (N sends and receives posted at a
    time, 0: all); None when ``mode`` is not one of them.

    Examples
    --------
    >>> alltoallv_mode_env("alltoallv-scattered-8")["MPIR_CVAR_ALLTOALLV_INTRA_ALGORITHM"]
    'scattered'
    >>> alltoallv_mode_env("alltoallv"), alltoallv_mode_env("alltoallv-scattered")
    ({}, None)
    """
    if mode == "alltoallv":
        return {}
    head, _, tail = mode.rpartition("-")
    if head != "alltoallv-scattered" or not tail.isdigit():
        return None
    return {"MPIR_CVAR_DEVICE_COLLECTIVES": "none", "MPIR_CVAR_ALLTOALLV_INTRA_ALGORITHM": "scattered",
            "MPIR_CVAR_ALLTOALL_THROTTLE": tail}


def library_mode_env(mode: str) -> dict[str, str] | None:
    """The MPICH control variables of a mode that runs the MPI library's own collective
    (:func:`alltoall_mode_env`, :func:`alltoallv_mode_env`); None for liquidsched's modes.

    Examples
    --------
    >>> library_mode_env("alltoall-brucks")["MPIR_CVAR_ALLTOALL_INTRA_ALGORITHM"], library_mode_env("paced")
    ('brucks', None)
    """
    env = alltoall_mode_env(mode)
    return env if env is not None else alltoallv_mode_env(mode)


def is_mode(mode: str) -> bool:
    """Whether ``mode`` is an execution mode: one of :data:`MODES` or the library's own."""
    return mode in MODES or library_mode_env(mode) is not None


def mode_names() -> str:
    """The modes, for messages."""
    return (", ".join(MODES) + ", alltoallv-scattered-N, alltoall, alltoall-brucks, alltoall-pairwise, "
            "alltoall-scattered-N")


#: Where a segment's bytes are read from and written to (:class:`Segment`).
SEND, STAGE, RECV = "send", "stage", "recv"


class Segment(NamedTuple):
    """Bytes of original transfer ``transfer`` (an index of the plan's regions) that a relayed
    message carries: ``nbytes`` read at ``source_offset`` of the sender's ``source`` buffer
    (send, stage or recv) and written at ``target_offset`` of the receiver's ``target`` buffer
    (recv at their destination, stage at a host that forwards them)."""

    transfer: int
    source: str
    source_offset: int
    target: str
    target_offset: int
    nbytes: int


@dataclass(frozen=True)
class Message:
    """One piece, sent from ``src`` to ``dst`` (ranks) in ``frame``, of ``step``."""

    id: int
    frame: int
    transfer: int
    src: int
    dst: int
    #: where the piece is in the sender's and the receiver's buffer
    send_offset: int
    recv_offset: int
    nbytes: int
    #: the piece's number among the messages from src to dst, in schedule order (its MPI tag)
    tag: int
    #: the step of its frame (:meth:`Schedule.frame_steps`)
    step: int = 0
    #: a relayed message's byte ranges, in the order it carries them (empty: a piece of a
    #: transfer, at ``send_offset`` and ``recv_offset``)
    segments: tuple[Segment, ...] = ()


@dataclass
class ExchangePlan:
    """Every rank's view of a schedule."""

    hosts: list[str]
    messages: list[Message]
    #: per transfer: (source rank, destination rank, bytes, offset in the send and receive buffers)
    regions: list[tuple[int, int, int, int, int]]
    send_bytes: list[int]
    recv_bytes: list[int]
    #: barrier-free order: the messages each message waits for (the one before it on each of its
    #: resources), and the messages that wait for it
    waits_for: list[list[int]] = field(default_factory=list)
    successors: list[list[int]] = field(default_factory=list)
    #: a relayed schedule's: the messages that bring each message's bytes to its sender, the
    #: messages that wait for each so, and the bytes each rank keeps while it forwards them
    data_waits: list[list[int]] = field(default_factory=list)
    data_successors: list[list[int]] = field(default_factory=list)
    stage_bytes: list[int] = field(default_factory=list)
    #: whether hosts forward bytes that others send them (a relayed schedule's plan)
    relayed: bool = False

    @property
    def size(self) -> int:
        return len(self.hosts)

    def block_bytes(self) -> int | None:
        """The bytes every rank sends every other rank when they are all equal, as
        ``MPI_Alltoall`` needs (a rank's block to itself: the same or nothing); None when not."""
        pairs: dict[tuple[int, int], int] = {}
        for src, dst, nbytes, _, _ in self.regions:
            pairs[src, dst] = pairs.get((src, dst), 0) + nbytes
        others = {pairs.get((a, b), 0) for a in range(self.size) for b in range(self.size) if a != b}
        selves = {pairs.get((a, a), 0) for a in range(self.size)}
        if len(others) != 1 or not selves <= others | {0}:
            return None
        return others.pop()

    def counts(self, rank: int) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
        """``MPI_Alltoallv`` send counts, send displacements, receive counts and receive
        displacements of ``rank``, in bytes."""
        sc, rc = np.zeros(self.size, np.int64), np.zeros(self.size, np.int64)
        sd, rd = np.full(self.size, -1, np.int64), np.full(self.size, -1, np.int64)
        for src, dst, nbytes, s_off, r_off in self.regions:
            if src == rank:
                sc[dst] += nbytes
                sd[dst] = s_off if sd[dst] < 0 else min(sd[dst], s_off)
            if dst == rank:
                rc[src] += nbytes
                rd[src] = r_off if rd[src] < 0 else min(rd[src], r_off)
        sd[sd < 0] = 0
        rd[rd < 0] = 0
        return sc, sd, rc, rd


def rank_hosts(network: Network, traffic: Iterable[Transfer]) -> list[str]:
    """The host of each rank: the hosts ``traffic`` uses, in ``network``'s order (rank ``r`` is
    the ``r``-th). A host file must put rank ``r`` on the machine of this list's ``r``-th host.

    Examples
    --------
    >>> from liquidsched import build_topology
    >>> from liquidsched.traffic import Traffic, Transfer
    >>> rank_hosts(build_topology("two-switch"), Traffic([Transfer("t5", "r1", 1), Transfer("t2", "r4", 1)]))
    ['t2', 't5', 'r1', 'r4']
    """
    used = {h for t in traffic for h in (t.src, t.dst)}
    return [h for h in network.hosts() if h in used]


def schedule_hosts(schedule: Schedule) -> list[str]:
    """The host of each rank that runs ``schedule``: the hosts of its exchange and, for a
    relayed schedule, of its legs (a host may only forward), in the network's order."""
    used = list(schedule.exchange) + (list(schedule.traffic) if schedule.relay is not None else [])
    return rank_hosts(schedule.network, used)


def exchange_plan(schedule: Schedule) -> ExchangePlan:
    """The messages of ``schedule``, their buffer places and their barrier-free order; for a
    relayed schedule, the segments each message carries, the messages that bring them and the
    staging buffers (see the module).

    Examples
    --------
    >>> from liquidsched import plan, build_topology, all_to_all
    >>> net = build_topology("crossbar:n=3")
    >>> p = exchange_plan(plan(net, all_to_all(net), "round-robin"))
    >>> p.hosts, len(p.messages), p.send_bytes
    (['h1', 'h2', 'h3'], 6, [2000000, 2000000, 2000000])
    """
    from ..validation import require_exact_delivery

    # Buffers hold each transfer's bytes once: other bytes would overrun or leave them unfilled;
    # a relayed schedule must also bring what it forwards before it forwards it.
    require_exact_delivery(schedule)
    hosts = schedule_hosts(schedule)
    rank = {h: r for r, h in enumerate(hosts)}
    regions, send_bytes, recv_bytes = _buffer_regions(schedule.exchange, rank)
    if schedule.relay is None:
        messages = _direct_messages(schedule, rank, regions)
        waits_for = _resource_order(schedule, messages)
        return ExchangePlan(hosts, messages, regions, send_bytes, recv_bytes, waits_for, _successors_of(waits_for))
    messages, data_waits, stage_bytes = _relayed_messages(schedule, rank, regions)
    on_resources = _resource_order(schedule, messages)
    waits_for = [sorted(set(a) | set(b)) for a, b in zip(on_resources, data_waits)]
    return ExchangePlan(hosts, messages, regions, send_bytes, recv_bytes, waits_for, _successors_of(waits_for),
                        data_waits, _successors_of(data_waits), stage_bytes, relayed=True)


def _buffer_regions(traffic: Traffic, rank: dict[str, int]) -> tuple[list[tuple[int, int, int, int, int]],
                                                                      list[int], list[int]]:
    """Each transfer's (source rank, destination rank, bytes, send offset, receive offset), in
    ``MPI_Alltoallv``'s layout, and every rank's send and receive buffer sizes."""
    n = len(rank)
    send_bytes, recv_bytes = [0] * n, [0] * n
    send_at, recv_at = [0] * len(traffic), [0] * len(traffic)
    for i in sorted(range(len(traffic)), key=lambda i: (rank[traffic[i].src], rank[traffic[i].dst], i)):
        t = traffic[i]
        send_at[i] = send_bytes[rank[t.src]]
        send_bytes[rank[t.src]] += t.size_bytes
    for i in sorted(range(len(traffic)), key=lambda i: (rank[traffic[i].dst], rank[traffic[i].src], i)):
        t = traffic[i]
        recv_at[i] = recv_bytes[rank[t.dst]]
        recv_bytes[rank[t.dst]] += t.size_bytes
    regions = [(rank[t.src], rank[t.dst], t.size_bytes, send_at[i], recv_at[i]) for i, t in enumerate(traffic)]
    return regions, send_bytes, recv_bytes


def _direct_messages(schedule: Schedule, rank: dict[str, int],
                     regions: list[tuple[int, int, int, int, int]]) -> list[Message]:
    """The pieces of a schedule whose transfers go straight to their destination, each a slice
    of its transfer's region, the pieces of a transfer one after the other."""
    traffic = schedule.traffic
    done = [0] * len(traffic)
    tags: dict[tuple[int, int], int] = {}
    messages = []
    steps = schedule.frame_steps()
    for k, frame in enumerate(schedule.frames):
        for piece in frame:
            i = traffic.index[piece.transfer]
            src, dst, _, send_at, recv_at = regions[i]
            tag = tags.get((src, dst), 0)
            tags[src, dst] = tag + 1
            messages.append(Message(len(messages), k, i, src, dst, send_at + done[i], recv_at + done[i],
                                    int(piece.bytes), tag, steps[k]))
            done[i] += int(piece.bytes)
    for i, t in enumerate(traffic):
        if done[i] != t.size_bytes:
            raise InputError(f"transfer {traffic.names[i]}: the schedule sends {done[i]} of its {t.size_bytes} bytes")
    return messages


#: What a rank holds of an original transfer: [first byte in the transfer, bytes, buffer, offset
#: in it, the message that brought them (-1: the rank is the transfer's source)].
Held = list


def _relayed_messages(schedule: Schedule, rank: dict[str, int], regions: list[tuple[int, int, int, int, int]]
                      ) -> tuple[list[Message], list[list[int]], list[int]]:
    """The messages of a relayed schedule's legs with their segments, the messages that bring
    each one's bytes to its sender, and each rank's staging bytes (see the module)."""
    legs, relay = schedule.traffic, schedule.relay
    assert relay is not None
    held: dict[tuple[int, int], deque[Held]] = {}
    for c, (src, _, nbytes, send_at, _) in enumerate(regions):
        held[src, c] = deque([[0, nbytes, SEND, send_at, -1]] if nbytes else [])
    stage_bytes = [0] * len(rank)
    cursor = [[0, 0] for _ in legs]
    arriving: list[tuple[int, int, Held]] = []
    tags: dict[tuple[int, int], int] = {}
    messages: list[Message] = []
    data_waits: list[list[int]] = []
    steps = schedule.frame_steps()
    for k, frame in enumerate(schedule.frames):
        if k and steps[k] != steps[k - 1]:
            # What a step brings can leave from the next step on, as the validator counts it.
            for r, c, entry in arriving:
                held.setdefault((r, c), deque()).append(entry)
            arriving = []
        for piece in frame:
            leg = legs.index[piece.transfer]
            src, dst = rank[legs[leg].src], rank[legs[leg].dst]
            mid, amount = len(messages), int(piece.bytes)
            segments: list[Segment] = []
            brought: set[int] = set()
            parts, at = relay.contents[leg], cursor[leg]
            while amount > 0:
                c, b = parts[at[0]]
                take = min(amount, b - at[1])
                for start, nbytes, buffer, offset, by in _take_held(held.get((src, c)), take, legs.names[leg]):
                    if by >= 0:
                        brought.add(by)
                    if dst == regions[c][1]:
                        target, target_at = RECV, regions[c][4] + start
                    else:
                        target, target_at = STAGE, stage_bytes[dst]
                        stage_bytes[dst] += nbytes
                    segments.append(Segment(c, buffer, offset, target, target_at, nbytes))
                    arriving.append((dst, c, [start, nbytes, target, target_at, mid]))
                amount -= take
                at[1] += take
                if at[1] == b:
                    at[0], at[1] = at[0] + 1, 0
            tag = tags.get((src, dst), 0)
            tags[src, dst] = tag + 1
            messages.append(Message(mid, k, leg, src, dst, 0, 0, int(piece.bytes), tag, steps[k],
                                    _merged(segments)))
            data_waits.append(sorted(brought))
    return messages, data_waits, stage_bytes


def _take_held(queue: deque[Held] | None, amount: int, leg: str) -> list[Held]:
    """The first ``amount`` bytes of ``queue`` (taken from it), as held entries."""
    taken: list[Held] = []
    while amount > 0:
        if not queue:
            # The validator's causality check refuses this first; kept as the executor's own guard.
            raise InputError(f"leg {leg} forwards bytes its sender does not hold yet")
        start, nbytes, buffer, offset, by = queue[0]
        n = min(amount, nbytes)
        taken.append([start, n, buffer, offset, by])
        if n == nbytes:
            queue.popleft()
        else:
            queue[0] = [start + n, nbytes - n, buffer, offset + n, by]
        amount -= n
    return taken


def _merged(segments: list[Segment]) -> tuple[Segment, ...]:
    """``segments`` with each one that continues the one before, of the same transfer, in both
    buffers joined to it."""
    out: list[Segment] = []
    for s in segments:
        last = out[-1] if out else None
        if (last is not None and last.transfer == s.transfer and last.source == s.source and last.target == s.target
                and last.source_offset + last.nbytes == s.source_offset
                and last.target_offset + last.nbytes == s.target_offset):
            out[-1] = last._replace(nbytes=last.nbytes + s.nbytes)
        else:
            out.append(s)
    return tuple(out)


def _successors_of(waits_for: list[list[int]]) -> list[list[int]]:
    """For each message, the messages that wait for it."""
    successors: list[list[int]] = [[] for _ in waits_for]
    for m, before in enumerate(waits_for):
        for p in before:
            successors[p].append(m)
    return successors


def _resource_order(schedule: Schedule, messages: list[Message]) -> list[list[int]]:
    """Each message waits, on each of its resources, for the message that held the slot it
    takes: with ``k`` slots, the ``k``-th message before it in schedule order (the one before it
    with one slot)."""
    net = schedule.network
    lists = schedule.traffic.resource_lists(net)
    slots = net.resource_slots
    # The last k_r messages on each resource, oldest first.
    recent: dict[int, deque[int]] = {}
    waits_for: list[list[int]] = []
    for m in messages:
        path = lists[m.transfer]
        waits_for.append(sorted({recent[r][0] for r in path if r in recent and len(recent[r]) == slots[r]}))
        for r in path:
            held = recent.setdefault(r, deque())
            if len(held) == slots[r]:
                held.popleft()
            held.append(m.id)
    return waits_for


def pattern(transfer: int, nbytes: int, seed: int = 0) -> np.ndarray:
    """The bytes transfer ``transfer`` carries: a seeded pseudo-random pattern, so that every
    receiver can check what it got without being sent the expected data."""
    return np.random.default_rng([seed, transfer]).integers(0, 256, nbytes, dtype=np.uint8)

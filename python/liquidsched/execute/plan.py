"""A schedule as messages between ranks: what every rank sends, receives and waits for.

This part knows nothing of MPI, so it is tested on its own. Ranks are the traffic's hosts in
network order. Each rank keeps one send buffer (its outgoing transfers, by destination rank then
transfer) and one receive buffer (its incoming transfers, by source rank then transfer), the
layout ``MPI_Alltoallv`` needs; a piece is a slice of its transfer's region, the pieces of a
transfer following each other in schedule order.
"""

from __future__ import annotations

from collections import deque

from dataclasses import dataclass, field

import numpy as np

from ..errors import InputError
from ..network import Network
from ..schedule import Schedule
from ..traffic import Traffic

#: How an exchange is executed, by liquidsched's ranks (the MPI library's own alltoall and
#: alltoallv algorithms are :func:`library_mode_env`'s). ``barrier-free`` is the former name of
#: ``dependency-driven``.
MODES = ("frames", "dependency-driven", "barrier-free", "paced", "all-at-once", "alltoallv", "shuffle", "pairwise")
#: The modes that run the MPI library's own collective, not a schedule.
LIBRARY_MODES = ("alltoallv",)
#: The modes that run a schedule of steps of their own: paper 002's shuffle and pairwise
#: exchanges, each of its scheduler's schedule.
STEPPED_MODES = ("shuffle", "pairwise")
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


def rank_hosts(network: Network, traffic: Traffic) -> list[str]:
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


def exchange_plan(schedule: Schedule) -> ExchangePlan:
    """The messages of ``schedule``, their buffer places and their barrier-free order.

    Examples
    --------
    >>> from liquidsched import plan, build_topology, all_to_all
    >>> net = build_topology("crossbar:n=3")
    >>> p = exchange_plan(plan(net, all_to_all(net), "round-robin"))
    >>> p.hosts, len(p.messages), p.send_bytes
    (['h1', 'h2', 'h3'], 6, [2000000, 2000000, 2000000])
    """
    from ..validation import require_exact_delivery

    # Buffers hold each transfer's bytes once: other bytes would overrun or leave them unfilled.
    require_exact_delivery(schedule)
    if schedule.relay is not None:
        # Its legs as messages of their own would move bytes no rank forwards: not this exchange.
        raise InputError(f"the {schedule.info.algorithm} schedule is relayed (hosts forward what others send them); "
                         "the executor runs schedules whose messages go straight to their destination")
    net, traffic = schedule.network, schedule.traffic
    hosts = rank_hosts(net, traffic)
    rank = {h: r for r, h in enumerate(hosts)}
    order = sorted(range(len(traffic)), key=lambda i: (rank[traffic[i].src], rank[traffic[i].dst], i))
    send_bytes, recv_bytes = [0] * len(hosts), [0] * len(hosts)
    send_at, recv_at = [0] * len(traffic), [0] * len(traffic)
    for i in order:
        t = traffic[i]
        send_at[i] = send_bytes[rank[t.src]]
        send_bytes[rank[t.src]] += t.size_bytes
    for i in sorted(range(len(traffic)), key=lambda i: (rank[traffic[i].dst], rank[traffic[i].src], i)):
        t = traffic[i]
        recv_at[i] = recv_bytes[rank[t.dst]]
        recv_bytes[rank[t.dst]] += t.size_bytes
    regions = [(rank[t.src], rank[t.dst], t.size_bytes, send_at[i], recv_at[i]) for i, t in enumerate(traffic)]

    done = [0] * len(traffic)
    tags: dict[tuple[int, int], int] = {}
    messages = []
    steps = schedule.frame_steps()
    for k, frame in enumerate(schedule.frames):
        for piece in frame:
            i = traffic.index[piece.transfer]
            t = traffic[i]
            pair = (rank[t.src], rank[t.dst])
            tag = tags.get(pair, 0)
            tags[pair] = tag + 1
            messages.append(Message(len(messages), k, i, pair[0], pair[1], send_at[i] + done[i],
                                    recv_at[i] + done[i], int(piece.bytes), tag, steps[k]))
            done[i] += int(piece.bytes)
    for i, t in enumerate(traffic):
        if done[i] != t.size_bytes:
            raise InputError(f"transfer {traffic.names[i]}: the schedule sends {done[i]} of its {t.size_bytes} bytes")
    waits_for, successors = _resource_order(schedule, messages)
    return ExchangePlan(hosts, messages, regions, send_bytes, recv_bytes, waits_for, successors)


def _resource_order(schedule: Schedule, messages: list[Message]) -> tuple[list[list[int]], list[list[int]]]:
    """Each message waits, on each of its resources, for the message that held the slot it
    takes: with ``k`` slots, the ``k``-th message before it in schedule order (the one before it
    with one slot)."""
    net = schedule.network
    lists = schedule.traffic.resource_lists(net)
    slots = net.resource_slots
    # The last k_r messages on each resource, oldest first.
    recent: dict[int, deque[int]] = {}
    waits_for: list[list[int]] = []
    successors: list[list[int]] = [[] for _ in messages]
    for m in messages:
        path = lists[m.transfer]
        before = sorted({recent[r][0] for r in path if r in recent and len(recent[r]) == slots[r]})
        waits_for.append(before)
        for p in before:
            successors[p].append(m.id)
        for r in path:
            held = recent.setdefault(r, deque())
            if len(held) == slots[r]:
                held.popleft()
            held.append(m.id)
    return waits_for, successors


def pattern(transfer: int, nbytes: int, seed: int = 0) -> np.ndarray:
    """The bytes transfer ``transfer`` carries: a seeded pseudo-random pattern, so that every
    receiver can check what it got without being sent the expected data."""
    return np.random.default_rng([seed, transfer]).integers(0, 256, nbytes, dtype=np.uint8)

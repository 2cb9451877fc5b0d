"""Liquid schedules inside an mpi4py application: plan an exchange once, run it on the
application's own buffers as often as needed.

.. code-block:: python

    from mpi4py import MPI
    import numpy as np
    from liquidsched.execute.application import plan_alltoallv

    comm = MPI.COMM_WORLD
    counts = [1000] * comm.size                       # this rank's elements to each rank
    plan = plan_alltoallv(comm, "hierarchical:d1=4,d2=2", counts, itemsize=8)
    send = np.ones(sum(counts)); recv = np.empty(sum(plan.recvcounts))
    for step in range(100):
        plan.alltoallv(send, recv)                    # as MPI_Alltoallv would, by the schedule

Planning is collective: every rank gives its own send counts (and displacements); the counts
are gathered, rank 0 plans the traffic between the ranks' hosts (rank ``r`` on the r-th host
of the network unless ``hosts`` says otherwise; one rank per host) and broadcasts the schedule.

Counts that change from call to call (a mixture-of-experts layer's dispatch) are given to the
call itself, by every rank alike, as to ``MPI_Alltoallv``::

    for step in range(100):
        plan.alltoallv(send, recv, sendcounts=counts_of(step))   # re-planned, or a plan reused

The counts are gathered (every rank learns the whole matrix, so all decide alike); a matrix and
layout met before reuses its plan (the last :data:`MAX_PLANS` are kept), a new one is planned;
``selected`` chooses the mode again for the new matrix. The paced mode needs only Λ: rank 0
plans it in the core from the last paced plan (:class:`~liquidsched.execute.paced.RankPacedPlanner`,
milliseconds for hundreds of ranks), with no schedule.
Each call then moves the bytes in one of ``liquidsched run``'s modes (:data:`MODES`): frame by
frame, barrier-free, all at once, ``MPI_Alltoallv`` itself, or paper 002's shuffle and pairwise
exchanges (of the shuffle and pairwise schedulers' schedules). A rank's message to itself is
copied.
"""

from __future__ import annotations

import dataclasses
from collections import OrderedDict
from typing import Any, Sequence

import numpy as np

from ..errors import InputError
from ..network import Network
from ..schedule import Schedule
from ..traffic import Traffic, Transfer
from .paced import RankPacedPlanner, headroom_from_environment, paced_duration_s
from .prediction import crossing_lambda_s
from .plan import MODES, RECV, RELAYED_MODES, SEND, STEPPED_MODES, ExchangePlan, Segment, exchange_plan



def _byte_view(buffer: Any, what: str) -> np.ndarray:
    """A writable one-dimensional uint8 view of an application buffer (numpy array, bytearray,
    anything with the buffer protocol)."""
    try:
        view = memoryview(buffer)
    except TypeError:
        raise InputError(f"{what}: expected a buffer (a numpy array, a bytearray, ...), got "
                         f"{type(buffer).__name__}") from None
    if not view.c_contiguous:
        raise InputError(f"{what}: the buffer must be contiguous")
    return np.frombuffer(view.cast("B"), dtype=np.uint8) if view.nbytes else np.zeros(0, np.uint8)


def _counts(values: Sequence[int] | None, size: int, what: str) -> list[int]:
    if values is None or len(values) != size:
        raise InputError(f"{what}: expected {size} values (one per rank), got "
                         f"{'none' if values is None else len(values)}")
    out = [int(v) for v in values]
    if any(v < 0 for v in out):
        raise InputError(f"{what}: counts and displacements must be >= 0")
    return out


def _packed(counts: list[int]) -> list[int]:
    """Displacements of messages packed one after the other, in rank order."""
    return [sum(counts[:k]) for k in range(len(counts))]


#: The plans of other matrices a :class:`PersistentExchange` keeps for reuse.
MAX_PLANS = 16
#: The fields of a :class:`PersistentExchange` that make one plan (swapped when the counts change).
_PLAN_FIELDS = ("mode", "schedule", "sendcounts", "sdispls", "recvcounts", "rdispls", "plan", "sub", "window",
                "runner", "paced_s")


@dataclasses.dataclass
class _Replanning:
    """What planning new counts needs: the network, the ranks' hosts and the choices the
    exchange was planned with; the plans made so far, by signature (oldest first)."""

    network: Network
    rank_hosts: list[str]
    algorithm: str
    mode: str
    selection: str | None
    options: dict[str, Any]
    plans: "OrderedDict[tuple, dict[str, Any]]" = dataclasses.field(default_factory=OrderedDict)
    #: rank 0's paced planner, made with the first paced plan
    paced: RankPacedPlanner | None = None
    planned: int = 0
    reused: int = 0


@dataclasses.dataclass
class PersistentExchange:
    """An exchange planned for a communicator and counts; :meth:`alltoallv` runs it, with new
    counts when they are given."""

    comm: Any
    mode: str
    schedule: Schedule | None
    #: this rank's counts and displacements in elements of ``itemsize`` bytes
    sendcounts: list[int]
    sdispls: list[int]
    recvcounts: list[int]
    rdispls: list[int]
    itemsize: int
    #: the plan in the sub-communicator of the ranks that send or receive across the network
    plan: ExchangePlan | None
    sub: Any
    window: int | None = None
    #: this rank's :class:`~liquidsched.execute.worker.RankExchange` (None off the network)
    runner: Any = None
    #: the paced mode's duration, Λ × (1 + headroom), in seconds (None in other modes)
    paced_s: float | None = None
    _replanning: _Replanning | None = None
    _signature: tuple | None = None
    _freed: bool = False

    @property
    def planned(self) -> int:
        """How many matrices were planned (the first included)."""
        return self._replanning.planned if self._replanning else 1

    @property
    def reused(self) -> int:
        """How many calls with new counts reused a plan made before."""
        return self._replanning.reused if self._replanning else 0

    def alltoallv(self, sendbuf: Any, recvbuf: Any, sendcounts: Sequence[int] | None = None,
                  sdispls: Sequence[int] | None = None, recvcounts: Sequence[int] | None = None,
                  rdispls: Sequence[int] | None = None) -> None:
        """Send ``sendbuf``'s messages and receive into ``recvbuf`` by the plan, as
        ``MPI_Alltoallv(sendbuf, sendcounts, sdispls, recvbuf, recvcounts, rdispls)`` would.

        Parameters
        ----------
        sendcounts, sdispls, recvcounts, rdispls
            New counts and displacements (elements of ``itemsize`` bytes), given by every rank
            or by none: the call is then collective, re-plans for a matrix not met before and
            reuses the plan of one met before. Defaults as in :func:`plan_alltoallv`. Without
            them, the counts of the last call.

        Raises
        ------
        InputError
            when a buffer is too small for the counts and displacements, when displacements or
            receive counts come without send counts, when the exchange was freed, or (on every
            rank) when new counts are wrong on any rank or planning them fails.
        """
        if self._freed:
            raise InputError("this exchange was freed: plan it again")
        if sendcounts is not None:
            self._use_counts(sendcounts, sdispls, recvcounts, rdispls)
        elif (sdispls, recvcounts, rdispls) != (None, None, None):
            raise InputError("sdispls, recvcounts and rdispls come with sendcounts: give the new sendcounts too")
        send, recv = _byte_view(sendbuf, "sendbuf"), _byte_view(recvbuf, "recvbuf")
        if recv.flags.writeable is False:
            raise InputError("recvbuf: the buffer is read-only")
        self._check_size(send, self.sendcounts, self.sdispls, "sendbuf")
        self._check_size(recv, self.recvcounts, self.rdispls, "recvbuf")
        if self.mode == "alltoallv":
            b = self.itemsize
            self.comm.Alltoallv([send, ([c * b for c in self.sendcounts], [d * b for d in self.sdispls]), "B"],
                                [recv, ([c * b for c in self.recvcounts], [d * b for d in self.rdispls]), "B"])
            return
        me, b = self.comm.Get_rank(), self.itemsize
        n = self.sendcounts[me] * b
        recv[self.rdispls[me] * b:self.rdispls[me] * b + n] = send[self.sdispls[me] * b:self.sdispls[me] * b + n]
        if self.runner is not None:
            self.runner.send, self.runner.recv = send, recv
            self.runner.run(self.mode)

    alltoall = alltoallv

    def _check_size(self, buf: np.ndarray, counts: list[int], displs: list[int], what: str) -> None:
        need = max((d + c for c, d in zip(counts, displs) if c), default=0) * self.itemsize
        if buf.size < need:
            raise InputError(f"{what}: {buf.size} bytes, but the counts and displacements reach byte {need}")

    def _use_counts(self, sendcounts: Sequence[int], sdispls: Sequence[int] | None,
                    recvcounts: Sequence[int] | None, rdispls: Sequence[int] | None) -> None:
        """Make the plan of these counts the current one: reused when every rank's counts and
        displacements are those of a plan kept, else planned (collective)."""
        comm, size, me = self.comm, self.comm.Get_size(), self.comm.Get_rank()
        mine = _agreed(comm, lambda: _counts(sendcounts, size, "sendcounts"))
        matrix = comm.allgather(mine)
        recv, sd, rd = _agreed(comm, lambda: _layout(mine, recvcounts, sdispls, rdispls,
                                                     [matrix[i][me] for i in range(size)], size))
        signature = (tuple(map(tuple, matrix)), tuple(comm.allgather((tuple(sd), tuple(rd)))))
        if signature == self._signature:
            return
        replanning = self._replanning
        assert replanning is not None, "plan_alltoallv makes every exchange"
        kept = replanning.plans.get(signature)
        if kept is not None:
            replanning.plans.move_to_end(signature)
            replanning.reused += 1
        else:
            kept = _planned_exchange(comm, replanning, matrix, self.itemsize, mine, sd, recv, rd)
            replanning.plans[signature] = kept
            replanning.planned += 1
            if len(replanning.plans) > MAX_PLANS:
                # The same oldest signature on every rank: its communicators are freed together.
                _free_plan(replanning.plans.popitem(last=False)[1])
        for name in _PLAN_FIELDS:
            setattr(self, name, kept[name])
        self._signature = signature

    def free(self) -> None:
        """Free the communicators of every plan kept (collective, like ``MPI_Comm_free``)."""
        if self._replanning is not None:
            for kept in self._replanning.plans.values():
                _free_plan(kept)
            self._replanning.plans.clear()
        else:
            _free_plan({"runner": self.runner, "sub": self.sub})
        self.runner = self.sub = None
        self._signature = None
        self._freed = True


def _free_plan(kept: dict[str, Any]) -> None:
    if kept["runner"] is not None:
        kept["runner"].notes.Free()
        kept["runner"] = None
    if kept["sub"] is not None and kept["sub"] != _comm_null():
        kept["sub"].Free()
    kept["sub"] = None


def plan_alltoallv(comm: Any, topology: str | Network, sendcounts: Sequence[int], *,
                   sdispls: Sequence[int] | None = None, recvcounts: Sequence[int] | None = None,
                   rdispls: Sequence[int] | None = None, itemsize: int = 1, hosts: Sequence[str] | None = None,
                   algorithm: str = "auto", mode: str = "frames", selection: str | None = None,
                   **options: Any) -> PersistentExchange:
    """Plan, collectively, the ``MPI_Alltoallv`` every rank of ``comm`` describes by its counts.

    Parameters
    ----------
    comm
        An mpi4py intracommunicator.
    topology
        The network: a :class:`~liquidsched.network.Network`, a built-in name or a file.
    sendcounts, sdispls, recvcounts, rdispls
        This rank's counts and displacements, in elements of ``itemsize`` bytes, as
        ``MPI_Alltoallv`` takes them; displacements default to packed, receive counts to what
        the other ranks send.
    hosts
        The host of each rank of ``comm`` (default: the network's first hosts, in order); one
        rank per host.
    algorithm, options
        The scheduler (:func:`liquidsched.plan`) and its options. ``auto``: the mode's own for
        shuffle and pairwise, else the liquid search when every message takes the same time,
        the weighted scheduler otherwise.
    mode
        One of :data:`liquidsched.execute.plan.MODES`, or ``selected``: the mode a selection
        table (``liquidsched tune``) measured fastest at the size nearest these messages' mean,
        the table named by ``selection`` or the ``LIQUIDSCHED_SELECTION`` variable; without a
        table, ``MPI_Alltoallv`` itself (the cost model's answer: :func:`_selected_mode`). The
        paced mode's headroom is rank 0's ``LIQUIDSCHED_PACE_HEADROOM``
        (:func:`~liquidsched.execute.paced.headroom_from_environment`), as in the interposition
        library.
    selection
        The selection table's path, for ``mode="selected"``.

    Raises
    ------
    InputError
        on every rank, when any rank gives counts of the wrong length, an unknown mode, hosts
        that are not the network's or repeat, receive counts other than what the ranks send it;
        or when planning fails.
    """
    size = comm.Get_size()
    # A rank that raised alone would leave the others waiting in the next collective call:
    # every check is agreed before anyone goes on.
    net, rank_hosts, sendcounts = _agreed(comm, lambda: _local_setup(topology, hosts, sendcounts, size, mode, itemsize))
    replanning = _Replanning(net, rank_hosts, algorithm, mode, selection, dict(options))
    exchange = PersistentExchange(comm, mode, None, [], [], [], [], itemsize, None, None, _replanning=replanning)
    exchange._use_counts(sendcounts, sdispls, recvcounts, rdispls)
    return exchange


def _planned_exchange(comm: Any, replanning: _Replanning, matrix: list[list[int]], itemsize: int,
                      sendcounts: list[int], sdispls: list[int], recvcounts: list[int],
                      rdispls: list[int]) -> dict[str, Any]:
    """The plan of ``matrix`` (every rank's send counts) with this rank's layout, as the fields
    :data:`_PLAN_FIELDS` of a :class:`PersistentExchange` (collective)."""
    mode, traffic = replanning.mode, _traffic(matrix, replanning.rank_hosts, itemsize)
    if mode == "selected":
        mode = _agreed(comm, lambda: _selected_mode(replanning.network, matrix, itemsize, replanning.selection))
    exchange = PersistentExchange(comm, mode, None, sendcounts, sdispls, recvcounts, rdispls, itemsize, None, None)
    # MPI_Alltoallv itself needs no plan of its own to run on.
    if traffic is not None and mode != "alltoallv":
        if mode == "paced" and replanning.algorithm == "auto":
            _place_paced(exchange, replanning, matrix)
        else:
            _place_scheduled(exchange, replanning, traffic)
    return {name: getattr(exchange, name) for name in _PLAN_FIELDS}


def _place_paced(exchange: PersistentExchange, replanning: _Replanning, matrix: list[list[int]]) -> None:
    """The paced mode without a schedule: Λ alone, planned on rank 0 (collective)."""
    comm, itemsize = exchange.comm, exchange.itemsize
    me = comm.Get_rank()
    # Rank 0's Λ and headroom for all: ranks that cut their chunks otherwise would not match.
    paced_s = comm.bcast(_agreed(comm, lambda: _paced_duration(replanning, matrix, itemsize) if me == 0 else None),
                         root=0)
    _place(exchange, _paced_plan(matrix, replanning.rank_hosts, itemsize), replanning.rank_hosts, paced_s)


def _place_scheduled(exchange: PersistentExchange, replanning: _Replanning, traffic: Traffic) -> None:
    """A schedule of ``traffic``, planned on rank 0 and broadcast, run in the exchange's mode
    (collective)."""
    comm, mode = exchange.comm, exchange.mode
    doc: dict[str, Any] | None = None
    if comm.Get_rank() == 0:
        doc = _planned(replanning.network, traffic, replanning.algorithm, mode, replanning.options)
    doc = comm.bcast(doc, root=0)
    if "error" in doc:
        raise InputError(f"planning on rank 0 failed: {doc['error']}")
    exchange.schedule = Schedule.from_dict(doc)
    if exchange.schedule.relay is not None and mode not in RELAYED_MODES:
        # Every rank has the same schedule, so every rank refuses alike.
        raise InputError(f"the {mode} mode does not run a relayed schedule (the {exchange.schedule.info.algorithm} "
                         f"schedule forwards bytes through ranks); its modes: {', '.join(RELAYED_MODES)}")
    exchange.window = exchange.schedule.info.parameters.get("window") if mode == "shuffle" else None
    paced_s = None
    if mode == "paced":
        headroom = comm.bcast(_agreed(comm, headroom_from_environment), root=0)
        lambda_s = crossing_lambda_s(exchange.schedule)
        paced_s = paced_duration_s(lambda_s, headroom) if lambda_s is not None else None
    _place(exchange, exchange_plan(exchange.schedule), replanning.rank_hosts, paced_s)


def _paced_duration(replanning: _Replanning, matrix: list[list[int]], itemsize: int) -> float:
    """Λ × (1 + headroom) of ``matrix`` (rank 0's, for every rank), planned from the last paced
    plan."""
    headroom = headroom_from_environment()
    if replanning.paced is None:
        replanning.paced = RankPacedPlanner(replanning.network, replanning.rank_hosts)
    plan = replanning.paced.plan(np.asarray(matrix, dtype=np.int64) * itemsize)
    return paced_duration_s(plan.bound_s, headroom)


def _paced_plan(matrix: list[list[int]], rank_hosts: list[str], itemsize: int) -> ExchangePlan:
    """The paced mode's plan of ``matrix``: every message between distinct ranks whole, no
    schedule (offsets packed; :func:`_place` moves them into the application's buffers)."""
    size = len(rank_hosts)
    sent, got = [0] * size, [0] * size
    regions = []
    for i in range(size):
        for j in range(size):
            nbytes = matrix[i][j] * itemsize
            if i != j and nbytes:
                regions.append((i, j, nbytes, sent[i], got[j]))
                sent[i] += nbytes
                got[j] += nbytes
    return ExchangePlan(list(rank_hosts), [], regions, sent, got)


def _agreed(comm: Any, check: Any) -> Any:
    """``check()``'s value on every rank, or the same :class:`InputError` on every rank (the
    first failing rank's, named) when it raises a liquidsched error on any."""
    from ..errors import LiquidschedError

    try:
        value, error = check(), None
    except LiquidschedError as e:
        value, error = None, str(e)
    errors = comm.allgather(error)
    failed = [(rank, e) for rank, e in enumerate(errors) if e is not None]
    if failed:
        rank, message = failed[0]
        raise InputError(f"rank {rank}: {message}")
    return value


def _local_setup(topology: str | Network, hosts: Sequence[str] | None, sendcounts: Sequence[int], size: int,
                 mode: str, itemsize: int) -> tuple[Network, list[str], list[int]]:
    """The network, the host of every rank and this rank's send counts, checked."""
    from ..topologies import resolve_topology

    if mode not in MODES and mode != "selected":
        raise InputError(f"unknown mode {mode!r} (modes: {', '.join(MODES)}, selected)")
    if itemsize < 1:
        raise InputError(f"itemsize must be at least 1 byte, got {itemsize}")
    net = topology if isinstance(topology, Network) else resolve_topology(topology)
    rank_hosts = list(hosts) if hosts is not None else net.hosts()[:size]
    _check_hosts(net, rank_hosts, size)
    return net, rank_hosts, _counts(sendcounts, size, "sendcounts")


def _selected_mode(net: Network, matrix: list[list[int]], itemsize: int, selection: str | None) -> str:
    """The mode the selection table chooses for the mean message of ``matrix`` (elements of
    ``itemsize`` bytes between ranks, the diagonal left out); without a table, ``alltoallv``,
    the cost model's answer for ``MPI_Alltoallv`` as in the interposition library
    (``crates/capi/src/model.rs``): MPICH posts every message at once, which reaches the bound in
    the model, so no schedule is modelled to beat it."""
    from mpi4py import MPI

    from .selection import SelectionTable, network_fingerprint, selection_from_environment

    table = SelectionTable.load(selection) if selection else selection_from_environment()
    if table is None:
        return "alltoallv"
    table.check(len(matrix), network_fingerprint(net), MPI.Get_library_version())
    messages = [c * itemsize for i, row in enumerate(matrix) for j, c in enumerate(row) if i != j and c]
    return table.choose(sum(messages) / len(messages) if messages else 0).mode


def _layout(sendcounts: list[int], recvcounts: Sequence[int] | None, sdispls: Sequence[int] | None,
            rdispls: Sequence[int] | None, sent_to_me: list[int], size: int) -> tuple[list[int], list[int], list[int]]:
    """This rank's receive counts and both displacements, checked against what the others send."""
    recv = _counts(recvcounts, size, "recvcounts") if recvcounts is not None else sent_to_me
    if recv != sent_to_me:
        raise InputError(f"recvcounts {recv} differ from what the ranks send this one: {sent_to_me}")
    sd = _counts(sdispls, size, "sdispls") if sdispls is not None else _packed(sendcounts)
    rd = _counts(rdispls, size, "rdispls") if rdispls is not None else _packed(recv)
    return recv, sd, rd


def _planned(net: Network, traffic: Traffic, algorithm: str, mode: str, options: dict[str, Any]) -> dict[str, Any]:
    """The schedule as a document to broadcast, or ``{"error": message}``."""
    from ..errors import LiquidschedError
    from ..schedulers import plan as schedule_traffic

    try:
        return schedule_traffic(net, traffic, _algorithm(net, traffic, algorithm, mode), **options).to_dict()
    except LiquidschedError as e:
        return {"error": str(e)}


def plan_alltoall(comm: Any, topology: str | Network, count: int, *, itemsize: int = 1,
                  **kwargs: Any) -> PersistentExchange:
    """:func:`plan_alltoallv` of ``count`` elements from every rank to every rank."""
    size = comm.Get_size()
    return plan_alltoallv(comm, topology, [count] * size, itemsize=itemsize, **kwargs)


def _check_hosts(net: Network, rank_hosts: list[str], size: int) -> None:
    if len(rank_hosts) != size:
        raise InputError(f"{size} ranks but {len(rank_hosts)} hosts ({net.name} has {len(net.hosts())})")
    unknown = [h for h in rank_hosts if h not in net.nodes or net.nodes[h].kind != "host"]
    if unknown:
        raise InputError(f"host {unknown[0]!r} is not a host of {net.name}")
    twice = sorted({h for h in rank_hosts if rank_hosts.count(h) > 1})
    if twice:
        raise InputError(f"host {twice[0]!r} has two ranks: one rank per host")


def _traffic(matrix: list[list[int]], rank_hosts: list[str], itemsize: int) -> Traffic | None:
    """The messages between distinct ranks as transfers between their hosts (None: none)."""
    size = len(rank_hosts)
    transfers = [Transfer(rank_hosts[i], rank_hosts[j], matrix[i][j] * itemsize)
                 for i in range(size) for j in range(size) if i != j and matrix[i][j]]
    return Traffic(transfers, "application alltoallv") if transfers else None


def _algorithm(net: Network, traffic: Traffic, algorithm: str, mode: str) -> str:
    if algorithm != "auto":
        return algorithm
    if mode in STEPPED_MODES:
        return mode
    from ..bounds import transfer_slot_times_s

    return "liquid" if len(set(transfer_slot_times_s(net, traffic))) == 1 else "weighted"


def _place(exchange: PersistentExchange, plan: ExchangePlan, rank_hosts: list[str], paced_s: float | None) -> None:
    """Run ``plan`` on a sub-communicator whose rank ``k`` is the plan's rank ``k``, its
    offsets moved into the application's buffers; ``paced_s``: the paced mode's duration."""
    comm = exchange.comm
    rank_of = {h: r for r, h in enumerate(rank_hosts)}
    comm_rank = [rank_of[h] for h in plan.hosts]
    me = comm.Get_rank()
    mine = comm_rank.index(me) if me in comm_rank else None
    exchange.sub = comm.Split(0 if mine is not None else _undefined(), mine or 0)
    exchange.paced_s = paced_s
    if mine is None:
        return
    b = exchange.itemsize
    # A rank reads and writes only its own buffers: only its own messages need moving.
    regions, messages = [], []
    starts = {}
    for i, (src, dst, nbytes, s_off, r_off) in enumerate(plan.regions):
        s_new = exchange.sdispls[comm_rank[dst]] * b if src == mine else s_off
        r_new = exchange.rdispls[comm_rank[src]] * b if dst == mine else r_off
        regions.append((src, dst, nbytes, s_new, r_new))
        starts[i] = (s_new - s_off, r_new - r_off)
    for m in plan.messages:
        if m.segments:
            messages.append(dataclasses.replace(m, segments=tuple(_moved(seg, *starts[seg.transfer])
                                                                  for seg in m.segments)))
            continue
        ds, dr = starts[m.transfer]
        messages.append(dataclasses.replace(m, send_offset=m.send_offset + ds, recv_offset=m.recv_offset + dr))
    exchange.plan = dataclasses.replace(plan, messages=messages, regions=regions)
    from .worker import RankExchange

    # Made once: it duplicates the communicator for its notifications (a collective call).
    empty = np.zeros(0, np.uint8)
    exchange.runner = RankExchange(exchange.sub, exchange.plan, 0, exchange.window, buffers=(empty, empty),
                                   progress="sleep", prepost=True, paced_s=paced_s)
    exchange.runner.prepare(exchange.mode)


def _moved(seg: Segment, ds: int, dr: int) -> Segment:
    """A relayed segment in the application's buffers: its bytes in the send buffer moved by
    ``ds``, in the receive buffer by ``dr`` (a staging buffer is the exchange's own)."""
    source_shift = ds if seg.source == SEND else dr if seg.source == RECV else 0
    return seg._replace(source_offset=seg.source_offset + source_shift,
                        target_offset=seg.target_offset + (dr if seg.target == RECV else 0))


def _comm_null() -> Any:
    from mpi4py import MPI

    return MPI.COMM_NULL


def _undefined() -> int:
    from mpi4py import MPI

    return MPI.UNDEFINED


__all__ = ["MAX_PLANS", "PersistentExchange", "plan_alltoall", "plan_alltoallv"]

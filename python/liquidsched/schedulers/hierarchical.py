"""Dispatch along rails, as relayed schedules (:mod:`liquidsched.relay`).

``hierarchical`` is the shape of DeepEP's normal (internode) kernels and of DeepSeek-V3's
dispatch (arXiv 2412.19437, §3.2.2): a message to another server crosses the network to the
accelerator with the sender's own local index there (its own rail), which forwards it over the
server's internal links to its destination; a message inside a server goes straight there.

DeepEP forwards as the data arrives: here every message between servers is cut into ``chunks``
equal parts, part ``k`` crossing the network in step ``k`` and forwarded in step ``k + 1``,
so that forwarding overlaps the network as DeepEP's forwarder warps make it. Followed and
decided: the traffic is a matrix of bytes, so a token bound for several accelerators of one
server is counted once per accelerator (DeepEP sends it once per server and copies it there);
no balancing between the accelerators of a server (DeepEP has none: a skew between them shows as
a skew between rails).

``rails`` is liquidsched's: FAST's balancing first (:func:`~liquidsched.schedulers.fast.balance_servers`:
no accelerator holds more than its share of what its server sends to another), then the same
pipeline along the rails, every server sending to every other at once (no stages, no padding),
the transfers inside a server spread over the pipeline's steps.
"""

from __future__ import annotations

from ..network import Network
from ..relay import LegBuilder
from ..schedule import Schedule, ScheduleInfo
from ..traffic import Traffic
from .servers import (Holding, ServerTraffic, balance_servers, equal_parts, relayed_schedule, send_inside,
                      servers_and_legs, take_bytes)

#: Parts a message between servers is cut into unless told.
DEFAULT_CHUNKS = 4


def hierarchical(net: Network, traffic: Traffic, gpus: int | None = None, chunks: int = DEFAULT_CHUNKS) -> Schedule:
    """The hierarchical dispatch of ``traffic`` (see the module).

    Parameters
    ----------
    gpus
        Accelerators per server, consecutive hosts in network order; by default the host names
        say (``s3.g1``).
    chunks
        Parts each message between servers is cut into, pipelined through the forwarding
        accelerator.

    Examples
    --------
    >>> from liquidsched.topologies import build_topology
    >>> from liquidsched.traffic import Traffic, Transfer
    >>> net = build_topology("rail-optimised:servers=2,gpus=2")
    >>> s = hierarchical(net, Traffic([Transfer("s0.g0", "s1.g1", 3000)]), chunks=2)
    >>> for k, frame in zip(s.frame_steps(), s.frames):
    ...     print(k, [(p.transfer, p.bytes) for p in frame])
    0 [('s0.g0->s1.g0', 1500)]
    1 [('s0.g0->s1.g0', 1500), ('s1.g0->s1.g1', 1500)]
    2 [('s1.g0->s1.g1', 1500)]
    """
    by_server, legs = servers_and_legs(net, traffic, gpus, "hierarchical")
    send_inside(legs, traffic, by_server, 0)
    hold = {pair: [[[i, traffic[i].size_bytes] for i in row] for row in rows]
            for pair, rows in by_server.between.items()}
    pipeline_on_rails(legs, traffic, by_server, hold, chunks, first=0)
    info = ScheduleInfo("hierarchical", parameters={"gpus": by_server.gpus, "chunks": chunks})
    return relayed_schedule(net, legs, info)


def rails(net: Network, traffic: Traffic, gpus: int | None = None, chunks: int = DEFAULT_CHUNKS) -> Schedule:
    """FAST's balancing, then every server to every other at once along the rails, forwarded
    inside the destination server, in ``chunks`` pipelined parts (see the module).

    Examples
    --------
    >>> from liquidsched.topologies import build_topology
    >>> from liquidsched.traffic import Traffic, Transfer
    >>> net = build_topology("rail-optimised:servers=2,gpus=2")
    >>> s = rails(net, Traffic([Transfer("s0.g0", "s1.g1", 3000)]), chunks=1)
    >>> for k, frame in zip(s.frame_steps(), s.frames):
    ...     print(k, [(p.transfer, p.bytes) for p in frame])
    0 [('s0.g0->s0.g1', 1500)]
    1 [('s0.g0->s1.g0', 1500), ('s0.g1->s1.g1', 1500)]
    2 [('s1.g0->s1.g1', 1500)]
    """
    by_server, legs = servers_and_legs(net, traffic, gpus, "rails")
    hold, _, moved = balance_servers(legs, traffic, by_server)
    first = 1 if moved else 0
    send_inside(legs, traffic, by_server, first, chunks)
    pipeline_on_rails(legs, traffic, by_server, hold, chunks, first)
    info = ScheduleInfo("rails", parameters={"gpus": by_server.gpus, "chunks": chunks},
                        stats={"balanced_bytes": moved})
    return relayed_schedule(net, legs, info)


def pipeline_on_rails(legs: LegBuilder, traffic: Traffic, by_server: ServerTraffic,
                      hold: dict[tuple[int, int], list[Holding]], chunks: int, first: int) -> None:
    """Every accelerator ``g`` of server ``s`` sends what it holds for server ``t``
    (``hold[s, t][g]``, ``[transfer, bytes]`` entries, consumed) to accelerator ``g`` of ``t``
    in ``chunks`` equal parts, part ``k`` in step ``first + k``; what arrives for another
    accelerator of ``t`` is forwarded to it in the next step."""
    servers, place = by_server.servers, by_server.place
    for (s, t), rows in hold.items():
        for g, held in enumerate(rows):
            for k, part in enumerate(equal_parts(sum(b for _, b in held), chunks)):
                parts = take_bytes(held, part)
                legs.send(first + k, servers[s][g], servers[t][g], parts)
                for i, b in parts:
                    j = place[traffic[i].dst][1]
                    if j != g:
                        legs.send(first + k + 1, servers[t][g], servers[t][j], [(i, b)])

"""The Swiss-T1 cluster of paper 000 §7, Fig. 10."""

from __future__ import annotations

from typing import Sequence

from ..errors import TopologyError
from ..network import Network
from ..routing import NextHop
from ._build import cable, hosts, switches

#: Fig. 10: ``T1_ROUTING[i][j]`` is the switch that routes from switch i+1 to switch j+1, or 0
#: for a direct link (the figure's check mark); the diagonal is unused.
T1_ROUTING = (
    (0, 0, 2, 0, 4, 0, 8, 0),
    (0, 0, 0, 7, 0, 3, 0, 5),
    (2, 0, 0, 0, 4, 0, 8, 0),
    (0, 7, 0, 0, 0, 7, 0, 3),
    (4, 0, 4, 0, 0, 0, 6, 0),
    (0, 3, 0, 7, 0, 0, 0, 1),
    (8, 0, 8, 0, 6, 0, 0, 0),
    (0, 5, 0, 3, 0, 1, 0, 0),
)
NODES_PER_SWITCH = 4


def swiss_t1(capacity_Bps: float = 86e6, allocation: Sequence[int] | None = None) -> Network:
    """The Swiss-T1: 8 switches, 4 nodes per switch, 86 MB/s links, the routing of Fig. 10.

    Switch ``s{i}`` (i = 1..8) links directly to every switch of the other parity; the other
    pairs are routed through the switch the figure names. Node ``n{i}.{k}`` hangs off switch
    ``s{i}`` by one duplex link; its transmitting processor uses the up direction and its
    receiving processor the down direction, so a node sends to itself through its switch.

    Parameters
    ----------
    capacity_Bps
        Capacity of every link.
    allocation
        ``n0..n7``: how many nodes (0-4) of each switch to include; all 4 by default.

    Examples
    --------
    >>> net = swiss_t1()
    >>> net.route("n1.1", "n3.1")
    ('n1.1>s1', 's1>s2', 's2>s3', 's3>n3.1')
    """
    if allocation is None:
        allocation = [NODES_PER_SWITCH] * 8
    allocation = list(allocation)
    if len(allocation) != 8 or any(not 0 <= n <= NODES_PER_SWITCH for n in allocation):
        raise TopologyError(f"swiss-t1: allocation must be 8 counts of 0-4 nodes, got {allocation}")
    if sum(allocation) == 0:
        raise TopologyError("swiss-t1: allocation selects no node")
    names = [f"s{i}" for i in range(1, 9)]
    links = []
    for i in range(8):
        for j in range(i + 1, 8):
            if (i + j) % 2 == 1:
                links += cable(names[i], names[j], capacity_Bps)
    node_names = []
    for i, n in enumerate(allocation):
        for k in range(1, n + 1):
            node = f"n{i + 1}.{k}"
            node_names.append(node)
            links += cable(node, names[i], capacity_Bps)
    table = {
        names[i]: {names[j]: names[via - 1] for j, via in enumerate(row) if via}
        for i, row in enumerate(T1_ROUTING)
    }
    return Network(switches(names) + hosts(node_names), links, NextHop(table), name="swiss-t1",
                   description="paper 000 Fig. 10: 8-switch K-ring, 4 dual-processor nodes per switch")

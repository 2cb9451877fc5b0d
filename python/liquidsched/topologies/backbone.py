"""Two clusters joined by one backbone link (paper 004)."""

from __future__ import annotations

from ..errors import TopologyError
from ..network import Network
from ..routing import ShortestPath
from ._build import cable, hosts, switches


def backbone(n1: int = 10, n2: int = 10, card_Bps: float = 12.5e6, backbone_Bps: float = 62.5e6,
             both_ways: bool = False) -> Network:
    """Cluster A (``a1..a{n1}``, senders) and cluster B (``b1..b{n2}``, receivers), each on its
    own switch, joined by one backbone cable.

    The defaults are paper 004's testbed: 100 Mbit/s cards and a backbone that carries k = 5 of
    them at once (500 Mbit/s). ``both_ways``: every host sends and receives, so that an
    all-to-all of every host (an application's ``MPI_Alltoall`` over both clusters) crosses the
    backbone in both directions; paper 004's redistribution goes from A to B only.

    Examples
    --------
    >>> backbone(2, 2).route("a1", "b2")
    ('a1>A', 'A>B', 'B>b2')
    >>> backbone(2, 2, both_ways=True).route("b1", "a2")
    ('b1>B', 'B>A', 'A>a2')
    """
    if n1 < 1 or n2 < 1:
        raise TopologyError(f"backbone: both clusters need a node, got {n1}, {n2}")
    a = [f"a{i}" for i in range(1, n1 + 1)]
    b = [f"b{i}" for i in range(1, n2 + 1)]
    links = cable("A", "B", backbone_Bps)
    links += [l for h in a for l in cable(h, "A", card_Bps)]
    links += [l for h in b for l in cable(h, "B", card_Bps)]
    if both_ways:
        nodes, description = hosts(a + b), f"paper 004's clusters of {n1} and {n2} hosts, each sending to the other"
    else:
        nodes, description = hosts(a, "sender") + hosts(b, "receiver"), f"paper 004: {n1} senders and {n2} receivers"
    return Network(switches(["A", "B"]) + nodes, links, ShortestPath(), name="backbone",
                   description=f"{description} through one backbone")

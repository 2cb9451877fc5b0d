"""The two-switch example of paper 000 Fig. 2 and paper 001 Fig. 1."""

from __future__ import annotations

from ..network import Link, Network
from ..routing import ShortestPath
from ._build import hosts, switches


def two_switch(capacity_Bps: float = 100e6) -> Network:
    """Senders t1..t5 and receivers r1..r5 on switches a and b, joined by l_ab and l_ba.

    t1, t2, t3 and r1, r2, r3 are on switch a; t4, t5 and r4, r5 on switch b. The 12
    unidirectional links have equal capacity. Its half all-to-all has 25 transfers and the two
    inter-switch links are its bottlenecks, each carrying 6 (paper 000 §2).

    Examples
    --------
    >>> net = two_switch()
    >>> net.route("t4", "r3")
    ('l_t4', 'l_ba', 'l_r3')
    """
    senders = [f"t{i}" for i in range(1, 6)]
    receivers = [f"r{i}" for i in range(1, 6)]
    side = {1: "a", 2: "a", 3: "a", 4: "b", 5: "b"}
    links = [Link(f"l_t{i}", f"t{i}", side[i], capacity_Bps) for i in range(1, 6)]
    links += [Link(f"l_r{i}", side[i], f"r{i}", capacity_Bps) for i in range(1, 6)]
    links += [Link("l_ab", "a", "b", capacity_Bps), Link("l_ba", "b", "a", capacity_Bps)]
    nodes = switches(["a", "b"]) + hosts(senders, "sender") + hosts(receivers, "receiver")
    return Network(nodes, links, ShortestPath(), name="two-switch",
                   description="paper 000 Fig. 2: t1..t5 send, r1..r5 receive, two switches")

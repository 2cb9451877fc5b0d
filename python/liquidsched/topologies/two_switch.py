"""The two-switch example of paper 000 Fig. 2 and paper 001 Fig. 1."""

from __future__ import annotations

from ..network import Link, Network
from ..routing import ShortestPath
from ._build import hosts, switches


def two_switch(capacity_Bps: float = 100e6, both_ways: bool = False) -> Network:
    """Senders t1..t5 and receivers r1..r5 on switches a and b, joined by l_ab and l_ba.

    t1, t2, t3 and r1, r2, r3 are on switch a; t4, t5 and r4, r5 on switch b. The 12
    unidirectional links have equal capacity. Its half all-to-all has 25 transfers and the two
    inter-switch links are its bottlenecks, each carrying 6 (paper 000 §2).

    ``both_ways``: every host also has the link of the other direction (``l_t{i}_down`` from its
    switch, ``l_r{i}_up`` to it) and both sends and receives, so that an all-to-all of all ten
    hosts (an application's ``MPI_Alltoall``) runs on the paper's switches: 6 × 4 transfers
    cross each inter-switch link, 9 leave and 9 enter every host. The paper's routes are
    unchanged.

    Examples
    --------
    >>> net = two_switch()
    >>> net.route("t4", "r3")
    ('l_t4', 'l_ba', 'l_r3')
    >>> two_switch(both_ways=True).route("r3", "t4")
    ('l_r3_up', 'l_ab', 'l_t4_down')
    """
    senders = [f"t{i}" for i in range(1, 6)]
    receivers = [f"r{i}" for i in range(1, 6)]
    side = {1: "a", 2: "a", 3: "a", 4: "b", 5: "b"}
    links = [Link(f"l_t{i}", f"t{i}", side[i], capacity_Bps) for i in range(1, 6)]
    links += [Link(f"l_r{i}", side[i], f"r{i}", capacity_Bps) for i in range(1, 6)]
    links += [Link("l_ab", "a", "b", capacity_Bps), Link("l_ba", "b", "a", capacity_Bps)]
    if both_ways:
        links += [Link(f"l_t{i}_down", side[i], f"t{i}", capacity_Bps) for i in range(1, 6)]
        links += [Link(f"l_r{i}_up", f"r{i}", side[i], capacity_Bps) for i in range(1, 6)]
        nodes = switches(["a", "b"]) + hosts(senders + receivers)
        description = "paper 000 Fig. 2's switches: t1..t5 and r1..r5 each send and receive"
    else:
        nodes = switches(["a", "b"]) + hosts(senders, "sender") + hosts(receivers, "receiver")
        description = "paper 000 Fig. 2: t1..t5 send, r1..r5 receive, two switches"
    return Network(nodes, links, ShortestPath(), name="two-switch", description=description)

"""The two-level switch hierarchy of paper 002 §2.3 (Fig. 1)."""

from __future__ import annotations

from ..errors import TopologyError
from ..network import Network
from ..routing import ShortestPath
from ._build import cable, hosts, switches


def hierarchical(d1: int = 8, d2: int = 4, c1: float = 12.5e6, c2: float = 125e6,
                 shared_uplinks: bool = False, buffer: int | None = None) -> Network:
    """``d2`` edge switches with ``d1`` hosts each, their uplinks joined by one root switch.

    Host links have capacity ``c1`` (Fast Ethernet by default), uplinks ``c2`` (Gigabit
    Ethernet). With ``shared_uplinks`` both directions of an uplink share ``c2``, as the
    uplink circuitry of the Tam–Wang testbed does. ``buffer`` is the uplink ports' buffer B_L in
    packets (45 for the testbed's IBM Gigabit uplink, Table 1 of the paper).

    Examples
    --------
    >>> net = hierarchical(2, 2)
    >>> net.route("h1.1", "h2.2")
    ('h1.1>e1', 'e1>root', 'root>e2', 'e2>h2.2')
    """
    if d1 < 1 or d2 < 1:
        raise TopologyError(f"hierarchical: d1 and d2 must be at least 1, got {d1}, {d2}")
    edges = [f"e{j}" for j in range(1, d2 + 1)]
    names, links, shared = [], [], []
    for j, e in enumerate(edges, start=1):
        up = cable(e, "root", c2, buffer_packets=buffer)
        links += up
        if shared_uplinks:
            shared.append((up[0].id, up[1].id))
        for i in range(1, d1 + 1):
            names.append(f"h{j}.{i}")
            links += cable(names[-1], e, c1)
    return Network(switches(edges + ["root"]) + hosts(names), links, ShortestPath(), shared,
                   name="hierarchical",
                   description=f"paper 002 §2.3: {d2} edge switches of {d1} hosts under one root")

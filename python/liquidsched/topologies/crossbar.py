"""A full crossbar: one switch, every host on its own duplex link."""

from __future__ import annotations

from ..errors import TopologyError
from ..network import Network
from ..routing import ShortestPath
from ._build import cable, hosts, switches


def crossbar(n: int = 8, capacity_Bps: float = 1.25e9) -> Network:
    """``n`` hosts ``h1..hn`` on one non-blocking switch ``x``.

    Examples
    --------
    >>> crossbar(3).route("h1", "h3")
    ('h1>x', 'x>h3')
    """
    if n < 1:
        raise TopologyError(f"crossbar: n must be at least 1, got {n}")
    names = [f"h{i}" for i in range(1, n + 1)]
    links = [l for h in names for l in cable(h, "x", capacity_Bps)]
    return Network(switches(["x"]) + hosts(names), links, ShortestPath(), name="crossbar",
                   description=f"{n} hosts on one non-blocking switch")

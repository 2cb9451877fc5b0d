"""Dragonflies (Kim, Dally, Scott and Abts, ISCA 2008) with minimal routing."""

from __future__ import annotations

from ..errors import TopologyError
from ..network import Network
from ..routing import NextHop
from ._build import cable, hosts, switches


#: The most routers of a dragonfly liquidsched builds: its tables by destination router grow as
#: their square (40 million entries here).
MAX_ROUTERS = 6_000


def dragonfly(a: int = 4, p: int = 2, h: int = 2, g: int = 0, capacity_Bps: float = 1.25e9,
              global_Bps: float | None = None) -> Network:
    """A dragonfly: ``g`` groups of ``a`` routers joined all to all inside a group, ``p`` hosts
    on each router, ``h`` global cables on each router, one global cable between every two
    groups (``g`` = a·h + 1 by default, the largest balanced dragonfly; fewer groups leave
    global ports unused).

    Global cables are laid out as the consecutive arrangement numbers them: the global port
    ``l = r·h + k`` of group ``G`` (port ``k`` of router ``r``) goes to group ``G + l + 1`` (mod
    g), where it is port ``g - 2 - l``. Routing is minimal and by destination router, as the
    routers' tables make it: to a router of its own group over the local cable; to another
    group, over the local cable to the router that holds the global cable to that group, that
    cable, and the local cable on from where it lands (each local hop left out where the router
    is already the right one). Local cables run at ``capacity_Bps``, global ones at
    ``global_Bps`` (0: the same).

    Examples
    --------
    >>> net = dragonfly(a=2, p=1, h=1)          # 3 groups of 2 routers, 6 hosts
    >>> net.route("h0.1.0", "h1.0.0")           # group 0's port 0 (router 0) goes to group 1, port 1
    ('h0.1.0>r0.1', 'r0.1>r0.0', 'r0.0>r1.1', 'r1.1>r1.0', 'r1.0>h1.0.0')
    >>> net.route("h0.0.0", "h2.1.0")           # port 1 (router 1) goes to group 2, port 0
    ('h0.0.0>r0.0', 'r0.0>r0.1', 'r0.1>r2.0', 'r2.0>r2.1', 'r2.1>h2.1.0')
    """
    for name, value, least in (("a", a, 1), ("p", p, 1), ("h", h, 1), ("g", g, 0)):
        if value < least:
            raise TopologyError(f"dragonfly: {name} must be at least {least}, got {value}")
    groups = g or a * h + 1
    if not 2 <= groups <= a * h + 1:
        raise TopologyError(f"dragonfly: g must be from 2 to a·h + 1 = {a * h + 1} (one global cable between "
                            f"every two groups), got {groups}")
    if groups * a > MAX_ROUTERS:
        raise TopologyError(f"dragonfly: {groups * a:,} routers, more than the {MAX_ROUTERS:,} liquidsched builds "
                            "(its routing tables by destination router grow as their square)")
    if capacity_Bps <= 0 or (global_Bps is not None and global_Bps <= 0):
        raise TopologyError("dragonfly: capacity_Bps and global_Bps must be positive")
    router = lambda grp, r: f"r{grp}.{r}"  # noqa: E731
    sw = [router(grp, r) for grp in range(groups) for r in range(a)]
    names, links = [], []
    for grp in range(groups):
        for r in range(a):
            for s in range(r + 1, a):
                links += cable(router(grp, r), router(grp, s), capacity_Bps)
            for t in range(p):
                names.append(f"h{grp}.{r}.{t}")
                links += cable(names[-1], router(grp, r), capacity_Bps)
    # Port l of group G and port g - 2 - l of group G + l + 1 are one cable: laid once, from G.
    for grp in range(groups):
        for port in range(groups - 1):
            other = (grp + port + 1) % groups
            if grp < other:
                links += cable(router(grp, port // h), router(other, (groups - 2 - port) // h),
                               capacity_Bps if global_Bps is None else global_Bps)
    table: dict[str, dict[str, str]] = {}
    for src_grp in range(groups):
        for dst_grp in range(groups):
            port = (dst_grp - src_grp - 1) % groups
            exit_router, landing = router(src_grp, port // h), router(dst_grp, (groups - 2 - port) // h)
            for r in range(a):
                at = router(src_grp, r)
                for d in range(a):
                    dst = router(dst_grp, d)
                    if at == dst:
                        continue
                    if src_grp == dst_grp:
                        nxt = dst
                    elif at != exit_router:
                        nxt = exit_router
                    else:
                        nxt = landing
                    if nxt != dst:
                        table.setdefault(at, {})[dst] = nxt
    return Network(switches(sw) + hosts(names), links, NextHop(table), name="dragonfly",
                   description=f"dragonfly of {groups} groups of {a} routers, {p} hosts and {h} global "
                               "cables a router, minimal routing")

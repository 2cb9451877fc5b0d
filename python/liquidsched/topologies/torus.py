"""Tori and meshes with dimension-order routing."""

from __future__ import annotations

import itertools
from typing import Sequence

from ..errors import TopologyError
from ..network import Network
from ..routing import TO_DESTINATION, Forwarding, ForwardingMatrix
from ..symmetry import LatticeSymmetry
from ._build import cable, hosts, switches


def _name(prefix: str, c: Sequence[int]) -> str:
    return prefix + ".".join(map(str, c))


def _node_name(prefix: str, c: Sequence[int], member: int | None) -> str:
    """Router (``r``) or host (``h``, ``member`` its rank when a router has several) at ``c``."""
    return _name(prefix, c) + ("" if member is None else f"-{member}")


def torus(dims: Sequence[int] = (4, 4), capacity_Bps: float = 1.25e9, hosts_per_router: int = 1,
          wrap: bool = True) -> Network:
    """A torus (``wrap``) or mesh of routers ``r{coords}``, each with ``hosts_per_router`` hosts.

    Routing is dimension order: the first dimension is corrected first; on a ring, the shorter
    way round, the positive direction on a tie.

    Examples
    --------
    >>> net = torus((3, 3))
    >>> net.route("h0.0", "h2.1")
    ('h0.0>r0.0', 'r0.0>r2.0', 'r2.0>r2.1', 'r2.1>h2.1')
    """
    dims = list(dims)
    if not dims or any(d < 1 for d in dims) or hosts_per_router < 1:
        raise TopologyError(f"torus: dimensions and hosts per router must be positive, got {dims}")
    coords = list(itertools.product(*(range(d) for d in dims)))
    links, names = [], []
    for c in coords:
        for axis, size in enumerate(dims):
            step = list(c)
            step[axis] += 1
            if step[axis] == size:
                # A wrap-around link exists on rings of 3 or more; on 2 it would double a link.
                if not wrap or size < 3:
                    continue
                step[axis] = 0
            links += cable(_name("r", c), _name("r", step), capacity_Bps)
        for m in range(hosts_per_router):
            names.append(_node_name("h", c, m if hosts_per_router > 1 else None))
            links += cable(names[-1], _name("r", c), capacity_Bps)
    routers = [_name("r", c) for c in coords]
    kind = "torus" if wrap else "mesh"
    matrix = _dimension_order(dims, wrap, hosts_per_router, routers, names)
    net = Network(switches(routers) + hosts(names), links, Forwarding.from_matrix(matrix),
                  name=kind, description=f"{'x'.join(map(str, dims))} {kind}, dimension-order routing")
    net.symmetry = LatticeSymmetry(tuple(dims), wrap, hosts_per_router, _node_name)
    return net


def mesh(dims: Sequence[int] = (4, 4), capacity_Bps: float = 1.25e9, hosts_per_router: int = 1) -> Network:
    """A mesh: :func:`torus` without wrap-around links."""
    return torus(dims, capacity_Bps, hosts_per_router, wrap=False)


def _dimension_order(dims: Sequence[int], wrap: bool, hosts_per_router: int, routers: list[str],
                     host_names: list[str]) -> ForwardingMatrix:
    """Forwarding by destination host for dimension-order routing, as one array: each router
    sends towards a host's router along the first axis where they differ (on a ring the shorter
    way, the positive one on a tie), and delivers its own hosts. ``routers`` and ``host_names``
    in the builder's order (the last coordinate fastest, a router's hosts together)."""
    # Here, not at the top: `topology list` imports this module and must not load numpy.
    import numpy as np

    grid = np.array(list(itertools.product(*(range(n) for n in dims))), dtype=np.int64).reshape(-1, len(dims))
    radix = np.cumprod([1, *dims[:0:-1]])[::-1]
    target = np.repeat(grid, hosts_per_router, axis=0)
    # step[t, v]: router v's next router towards host t, axis by axis (the first differing wins).
    index = grid @ radix
    step = np.full((len(target), len(grid)), TO_DESTINATION, dtype=np.int64)
    settled = np.zeros(step.shape, dtype=bool)
    for axis, size in enumerate(dims):
        a, b = grid[None, :, axis], target[:, None, axis]
        differs = (a != b) & ~settled
        if wrap and size >= 3:
            forward = (b - a) % size
            delta = np.where(forward <= size - forward, 1, -1)
        else:
            delta = np.where(b > a, 1, -1)
        moved = index[None, :] + ((a + delta) % size - a) * radix[axis]
        step = np.where(differs, moved, step)
        settled |= differs
    return ForwardingMatrix(tuple(routers), tuple(host_names), step.astype(np.int32))

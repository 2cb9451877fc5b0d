"""Tori and meshes with dimension-order routing."""

from __future__ import annotations

import itertools
from typing import Sequence

from ..errors import TopologyError
from ..network import Network
from ..routing import NextHop
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
    table: dict[str, dict[str, str]] = {}
    for a in coords:
        for b in coords:
            if a != b:
                table.setdefault(_name("r", a), {})[_name("r", b)] = _name("r", _dor_step(a, b, dims, wrap))
    kind = "torus" if wrap else "mesh"
    net = Network(switches([_name("r", c) for c in coords]) + hosts(names), links, NextHop(table),
                  name=kind, description=f"{'x'.join(map(str, dims))} {kind}, dimension-order routing")
    net.symmetry = LatticeSymmetry(tuple(dims), wrap, hosts_per_router, _node_name)
    return net


def mesh(dims: Sequence[int] = (4, 4), capacity_Bps: float = 1.25e9, hosts_per_router: int = 1) -> Network:
    """A mesh: :func:`torus` without wrap-around links."""
    return torus(dims, capacity_Bps, hosts_per_router, wrap=False)


def _dor_step(a: Sequence[int], b: Sequence[int], dims: Sequence[int], wrap: bool) -> tuple[int, ...]:
    """The next router from ``a`` towards ``b`` in dimension order."""
    for axis, size in enumerate(dims):
        if a[axis] != b[axis]:
            forward = (b[axis] - a[axis]) % size
            if wrap and size >= 3:
                delta = 1 if forward <= size - forward else -1
            else:
                delta = 1 if b[axis] > a[axis] else -1
            nxt = list(a)
            nxt[axis] = (a[axis] + delta) % size
            return tuple(nxt)
    raise ValueError("a equals b")

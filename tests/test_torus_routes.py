"""Dimension-order routes of tori and meshes, as the builders' forwarding arrays give them,
against a walk that corrects one coordinate at a time (the shorter way round a ring, the
positive way on a tie) and against hand-worked routes."""

from __future__ import annotations

import itertools

import pytest

from liquidsched.topologies.torus import mesh, torus


def walk(src: tuple[int, ...], dst: tuple[int, ...], dims: tuple[int, ...], wrap: bool) -> list[tuple[int, ...]]:
    """The routers from ``src`` to ``dst``, the first coordinate corrected first."""
    nodes, cur = [src], list(src)
    for axis, size in enumerate(dims):
        while cur[axis] != dst[axis]:
            if wrap and size >= 3:
                forward = (dst[axis] - cur[axis]) % size
                delta = 1 if forward <= size - forward else -1
            else:
                delta = 1 if dst[axis] > cur[axis] else -1
            cur[axis] = (cur[axis] + delta) % size
            nodes.append(tuple(cur))
    return nodes


def name(prefix: str, c: tuple[int, ...], member: int | None = None) -> str:
    return prefix + ".".join(map(str, c)) + ("" if member is None else f"-{member}")


@pytest.mark.parametrize("dims, wrap, hosts_per_router", [
    ((3, 3), True, 1), ((4, 4), True, 2), ((8, 8), True, 1), ((5,), True, 1), ((4, 4, 4), True, 1),
    ((2, 3), True, 1), ((2, 2), True, 1), ((6, 4), False, 1), ((8, 8), False, 2), ((3, 2, 4), False, 1)])
def test_every_route_is_the_dimension_order_walk(dims, wrap, hosts_per_router):
    net = torus(dims, hosts_per_router=hosts_per_router, wrap=wrap)
    members = list(range(hosts_per_router)) if hosts_per_router > 1 else [None]
    placed = [(c, m) for c in itertools.product(*(range(n) for n in dims)) for m in members]
    assert sorted(net.hosts()) == sorted(name("h", c, m) for c, m in placed)
    for (a, m), (b, k) in itertools.permutations(placed, 2):
        routers = [name("r", c) for c in walk(a, b, dims, wrap)]
        nodes = [name("h", a, m), *routers, name("h", b, k)]
        assert net.route(nodes[0], nodes[-1]) == tuple(f"{x}>{y}" for x, y in zip(nodes, nodes[1:]))


def test_hand_worked_routes():
    # A tie on a ring of 4 goes the positive way; a ring of 3 goes back one step rather than on two.
    assert torus((4, 4)).route("h0.0", "h2.3") == ("h0.0>r0.0", "r0.0>r1.0", "r1.0>r2.0", "r2.0>r2.3",
                                                   "r2.3>h2.3")
    assert torus((3, 3)).route("h0.0", "h2.1") == ("h0.0>r0.0", "r0.0>r2.0", "r2.0>r2.1", "r2.1>h2.1")
    assert mesh((4, 4)).route("h3.0", "h0.3") == ("h3.0>r3.0", "r3.0>r2.0", "r2.0>r1.0", "r1.0>r0.0",
                                                  "r0.0>r0.1", "r0.1>r0.2", "r0.2>r0.3", "r0.3>h0.3")
    assert torus((2, 2), hosts_per_router=2).route("h0.0-0", "h0.0-1") == ("h0.0-0>r0.0", "r0.0>h0.0-1")

"""Liquid schedules of a square torus's all-to-all, designed over displacement classes.

On an ``n × n`` torus (``n`` even, one host per router, dimension-order routing, the positive
way on a tie) the all-to-all is ``n² - 1`` displacement classes ``(a, b)`` of ``n²`` transfers
each (``a``, ``b`` in ``D = {-(n/2 - 1), …, n/2}``). Frames that the diagonal translation
``(1, 1)`` fixes are orbits of one transfer per class: a class placed at an *anchor* ``F`` of
``Z_n`` sends from ``(-F - a + k, k)`` to ``(-F + k, b + k)`` for every ``k``, and its ``n``
translates by ``(t, 0)`` are ``n`` disjoint frames. Such a frame is valid exactly when, on the
ring ``Z_n``, each side of its classes — the transfers ``F → F + a`` and the transfers
``F → F + b`` — uses every positive link once (the intervals ``[F, F + d)``, ``d > 0``, tile the
ring: the positive links are the torus's bottlenecks), every negative link at most once, and has
distinct targets ``F + d`` (one packet into each host and out of each). A liquid schedule is
then a partition of the classes into ``h(h + 1)/2`` such *groups* (``h = n/2``), each giving
``n`` frames: ``n·h(h + 1)/2 = Λ`` frames.

The partition is searched by CP-SAT on this reduced model (a boolean per class, group and
anchor), with a structure that makes it small enough for ``n ≤ 16``: groups are indexed by the
pairs ``1 ≤ i ≤ j ≤ h``; group ``{i, j}`` holds class ``(i, j)`` at anchor 0 and class
``(j, i)``; group ``{i, i}`` is unchanged by swapping the two sides, and group ``{i, h}``
(``i < h``) holds ``(h, i)`` at anchor ``h`` and is unchanged by the swap followed by a shift of
the anchors by ``h``. Where that structure has no solution (``n = 6``) the model without it is
solved. CP-SAT runs on one worker without its LP relaxation, phase saving, probing and
symmetry detection, and with one round of presolve
(:func:`~liquidsched.schedulers.feasibility.solve_feasibility`). Measured on one core
(2026-11-28): ``n`` = 8, 12, 14, 16 in about 0.3, 1.0, 2.2 and 8.4 s, the model built and the
frames checked (56 s at 16 with CP-SAT's defaults), ``n = 6`` without the structure under 0.1 s.

The ``6 × 6 × 6`` torus (``Λ = 216``, as many frames as hosts but one) is built as a product:
every frame is a pair ``(P, t)``, ``P`` a frame of a ``6 × 6`` liquid schedule of the (Y, Z)
plane whose groups leave the same hosts idle on both sides, ``t`` in ``Z_6``; every X-plane uses
``P``, a (Y, Z) transfer reaching plane ``x`` leaves from plane ``x - f[t][x]``, where each row
``f[t]`` is a ring frame in which every node sends and receives once and each column holds every
displacement once; and the lines ``P`` leaves idle carry frame ``t`` of a liquid ring schedule.
Three small CP-SAT models give ``P``, ``f`` and the ring schedule.

Nothing is trusted: the frames are checked against the network's own routes (the validator)
and against the frame bound before the schedule is returned. Sides of 4 are left to the search:
there the host links bind (15 targets each against the 12 transfers of a ring link), and the
design's ``n·h(h + 1)/2`` frames cannot hold the traffic.
"""

from __future__ import annotations

import math
import time
from typing import Any

from ..bounds import compute_bound
from ..network import Network
from ..schedule import Schedule
from ..traffic import Traffic
from .at_the_bound import checked_at_the_bound, is_all_to_all_size
from .feasibility import solve_feasibility

#: The largest side of a square torus whose design search is tried (8.4 s at 16; at 18, 41 s
#: with one seed and no answer in 150 s with another).
LARGEST_SIDE = 16

#: An anchored class: displacements ``(a, b)`` and anchor ``F``.
Anchored = tuple[int, int, int]


def displacements(n: int) -> list[int]:
    """The signed displacements along a ring of ``n`` (``n`` even): ``-(n/2 - 1) … n/2``, the
    positive way on a tie.

    Examples
    --------
    >>> displacements(6)
    [-2, -1, 0, 1, 2, 3]
    """
    h = n // 2
    return list(range(-(h - 1), h + 1))


def add_ring_frame_constraints(model: Any, n: int, uses: list[tuple[int, int, Any]]) -> list[list[Any]]:
    """Constrain the ring transfers ``F → F + d`` whose literals ``uses`` lists (anchor,
    displacement, literal) to a frame of the ring's bottlenecks: each positive link once, each
    negative link at most once, each target at most once. Returns, for each target, its
    literals (for further constraints)."""
    plus: list[list[Any]] = [[] for _ in range(n)]
    minus: list[list[Any]] = [[] for _ in range(n)]
    target: list[list[Any]] = [[] for _ in range(n)]
    for anchor, d, literal in uses:
        target[(anchor + d) % n].append(literal)
        for link in range(anchor, anchor + d):
            plus[link % n].append(literal)
        for link in range(anchor + d, anchor):
            minus[link % n].append(literal)
    for link in range(n):
        model.add_exactly_one(plus[link])
        model.add_at_most_one(minus[link])
        model.add_at_most_one(target[link])
    return target


def diagonal_groups(n: int, time_limit: float | None, structured: bool = True,
                    same_idle_hosts: bool = False) -> list[list[Anchored]] | None:
    """A partition of the displacement classes of the ``n × n`` torus into ``h(h + 1)/2`` valid
    groups (see the module), or None when CP-SAT finds none in ``time_limit`` seconds.

    ``structured`` imposes the pairs' structure; ``same_idle_hosts`` asks each group to leave
    the same ring targets unused on both sides (what the 3-D product needs).

    Examples
    --------
    >>> groups = diagonal_groups(8, time_limit=60)
    >>> len(groups), sorted(len(g) for g in groups)[0] >= 1
    (10, True)
    """
    from ortools.sat.python import cp_model  # heavy (it imports pandas): only when it runs

    # Building the model takes seconds at n = 16: it counts in the time limit.
    deadline = None if time_limit is None else time.perf_counter() + time_limit
    h = n // 2
    span = displacements(n)
    classes = [(a, b) for a in span for b in span if (a, b) != (0, 0)]
    index = {c: i for i, c in enumerate(classes)}
    pairs = [(i, j) for i in range(1, h + 1) for j in range(i, h + 1)]
    model = cp_model.CpModel()
    z = {(c, g, f): model.new_bool_var("") for c in range(len(classes)) for g in range(len(pairs)) for f in range(n)}
    for c in range(len(classes)):
        model.add_exactly_one(z[c, g, f] for g in range(len(pairs)) for f in range(n))
    for g, (i, j) in enumerate(pairs):
        if structured:
            _impose_pair_structure(model, z, index, classes, g, i, j, n)
        else:
            # The anchors of a group can all be shifted: one class of positive a at anchor 0.
            model.add_bool_or([z[c, g, 0] for c, (a, _) in enumerate(classes) if a > 0])
        targets = [add_ring_frame_constraints(model, n, [(f, cls[side], z[c, g, f])
                                                         for c, cls in enumerate(classes) for f in range(n)])
                   for side in (0, 1)]
        if same_idle_hosts:
            for r in range(n):
                model.add(sum(targets[0][r]) == sum(targets[1][r]))
    solver = solve_feasibility(model, _seconds_left(deadline))
    if solver is None:
        return None
    return [[(a, b, f) for c, (a, b) in enumerate(classes) for f in range(n) if solver.boolean_value(z[c, g, f])]
            for g in range(len(pairs))]


def _impose_pair_structure(model: Any, z: dict, index: dict, classes: list[tuple[int, int]], g: int,
                           i: int, j: int, n: int) -> None:
    h = n // 2
    model.add(z[index[(i, j)], g, 0] == 1)
    if i != j and j != h:
        model.add(sum(z[index[(j, i)], g, f] for f in range(n)) == 1)
        return
    shift = 0 if i == j else h
    if i != j:
        model.add(z[index[(h, i)], g, h] == 1)
    for c, (a, b) in enumerate(classes):
        for f in range(n):
            model.add(z[c, g, f] == z[index[(b, a)], g, (f + shift) % n])


def frames_of_groups(groups: list[list[Anchored]], n: int) -> list[list[tuple[tuple[int, int], tuple[int, int]]]]:
    """The ``n`` frames of each group, as (source, target) router coordinates.

    Examples
    --------
    >>> frames_of_groups([[(1, 0, 0)]], 4)[1][:2]
    [((0, 0), (1, 0)), ((1, 1), (2, 1))]
    """
    frames = []
    for group in groups:
        for t in range(n):
            frames.append([(((-f - a + k + t) % n, k), ((-f + k + t) % n, (b + k) % n))
                           for a, b, f in group for k in range(n)])
    return frames


def _ring_schedule(n: int, time_limit: float | None) -> list[list[tuple[int, int]]] | None:
    """A liquid schedule of the ring of ``n``'s all-to-all (one host per router): ``h(h+1)/2``
    frames of (source, target)."""
    from ortools.sat.python import cp_model

    frames = n // 2 * (n // 2 + 1) // 2
    transfers = [(x, d) for x in range(n) for d in displacements(n) if d]
    model = cp_model.CpModel()
    v = {(i, f): model.new_bool_var("") for i in range(len(transfers)) for f in range(frames)}
    for i in range(len(transfers)):
        model.add_exactly_one(v[i, f] for f in range(frames))
    for f in range(frames):
        add_ring_frame_constraints(model, n, [(x, d, v[i, f]) for i, (x, d) in enumerate(transfers)])
        for x in range(n):
            model.add_at_most_one(v[i, f] for i, (s, _) in enumerate(transfers) if s == x)
    solver = solve_feasibility(model, time_limit)
    if solver is None:
        return None
    return [[(x, (x + d) % n) for i, (x, d) in enumerate(transfers) if solver.boolean_value(v[i, f])]
            for f in range(frames)]


def _plane_offsets(n: int, time_limit: float | None) -> list[list[int]] | None:
    """``f[t][x]``: for each ``t`` the ring transfers ``x - f[t][x] → x`` are a frame in which every
    node sends and receives once and each positive link is used once; each ``x`` sees every
    displacement once over ``t`` (possible when ``h(h + 1)/2 = n``: ``n = 6``)."""
    from ortools.sat.python import cp_model

    span = displacements(n)
    model = cp_model.CpModel()
    v = {(t, x, d): model.new_bool_var("") for t in range(n) for x in range(n) for d in span}
    for t in range(n):
        for x in range(n):
            model.add_exactly_one(v[t, x, d] for d in span)
        # Transfer x - d → x, anchored at its source x - d; each x receives once by the choice
        # of one d per x, and each node must send once too.
        add_ring_frame_constraints(model, n, [((x - d) % n, d, v[t, x, d]) for x in range(n) for d in span])
        for source in range(n):
            model.add_exactly_one(v[t, x, d] for x in range(n) for d in span if (x - d) % n == source)
    for x in range(n):
        for d in span:
            model.add_exactly_one(v[t, x, d] for t in range(n))
    solver = solve_feasibility(model, time_limit)
    if solver is None:
        return None
    return [[next(d for d in span if solver.boolean_value(v[t, x, d])) for x in range(n)] for t in range(n)]


def _seconds_left(deadline: float | None) -> float | None:
    return None if deadline is None else max(0.0, deadline - time.perf_counter())


def cube_frames(n: int, time_limit: float | None) -> list[list[tuple[tuple[int, ...], tuple[int, ...]]]] | None:
    """The frames of the ``n × n × n`` torus's all-to-all as the module describes (``n = 6``),
    coordinates ``(x, y, z)``; None when its parts are not found in ``time_limit`` seconds."""
    deadline = None if time_limit is None else time.perf_counter() + time_limit
    groups = diagonal_groups(n, _seconds_left(deadline), structured=False, same_idle_hosts=True)
    offsets = _plane_offsets(n, _seconds_left(deadline))
    ring = _ring_schedule(n, _seconds_left(deadline))
    if groups is None or offsets is None or ring is None or len(ring) != n:
        return None
    lines = [(y, z) for y in range(n) for z in range(n)]
    frames = []
    for plane in frames_of_groups(groups, n):
        idle = sorted(set(lines) - {s for s, _ in plane})
        for t in range(n):
            frame = [(((x - offsets[t][x]) % n, *s), (x, *d)) for s, d in plane for x in range(n)]
            frame += [((a, y, z), (b, y, z)) for y, z in idle for a, b in ring[t]]
            frames.append(frame)
    return frames


def design_shape(net: Network, traffic: Traffic) -> tuple[int, int] | None:
    """``(side, dimensions)`` of ``net``'s torus when a design applies to ``traffic``, else None:
    ``net`` must be a torus of equal sides with one host per router (2-D, side even from 6 to
    :data:`LARGEST_SIDE`, or 6 × 6 × 6) and ``traffic`` as many distinct host pairs as its
    all-to-all has (which pairs is checked when the frames are mapped to them).

    Examples
    --------
    >>> from liquidsched.topologies.torus import torus
    >>> from liquidsched.traffic import all_to_all
    >>> net = torus((8, 8))
    >>> design_shape(net, all_to_all(net)), design_shape(torus((4, 4)), all_to_all(torus((4, 4))))
    ((8, 2), None)
    """
    sym = getattr(net, "symmetry", None)
    if sym is None or not getattr(sym, "wrap", False) or sym.hosts_per_router != 1 or len(set(sym.dims)) != 1:
        return None
    n, rank = sym.dims[0], len(sym.dims)
    if not ((rank == 2 and n % 2 == 0 and 6 <= n <= LARGEST_SIDE) or (rank == 3 and n == 6)):
        return None
    return (n, rank) if is_all_to_all_size(traffic, math.prod(sym.dims)) else None


def design_frames(net: Network, traffic: Traffic, time_limit: float | None) -> list[list[int]] | None:
    """The frames (transfer indices) of a designed liquid schedule of ``traffic`` on ``net``, or
    None when :func:`design_shape` says none applies, none is found in ``time_limit`` seconds,
    or ``traffic`` is not the all-to-all."""
    shape = design_shape(net, traffic)
    if shape is None:
        return None
    n, rank = shape
    if rank == 3:
        coordinate_frames = cube_frames(n, time_limit)
    else:
        # The pairs' structure has no solution at 6: the model without it is small there.
        deadline = None if time_limit is None else time.perf_counter() + time_limit
        groups = diagonal_groups(n, time_limit) if n != 6 else None
        groups = groups or diagonal_groups(n, _seconds_left(deadline), structured=False)
        coordinate_frames = None if groups is None else frames_of_groups(groups, n)
    if coordinate_frames is None:
        return None
    sym = net.symmetry
    index = {(t.src, t.dst): i for i, t in enumerate(traffic.transfers)}
    try:
        return [[index[(sym.name("h", s, None), sym.name("h", d, None))] for s, d in frame]
                for frame in coordinate_frames]
    except KeyError:
        return None


def torus_design(net: Network, traffic: Traffic, time_limit: float | None = None,
                 frame_bound: int | None = None) -> Schedule | None:
    """A liquid schedule of a square torus's all-to-all by :func:`design_frames`, checked by the
    validator and the frame bound (its ``info.stats["source"]`` is ``"torus design"``); None
    when no design applies, none is found in ``time_limit`` seconds, or the frames do not pass.
    ``frame_bound``: the traffic's, when the caller has it already (computed otherwise).

    Examples
    --------
    >>> from liquidsched.topologies.torus import torus
    >>> from liquidsched.traffic import all_to_all
    >>> net = torus((8, 8))
    >>> s = torus_design(net, all_to_all(net), time_limit=60)
    >>> s.length, s.liquid, s.info.optimal
    (80, True, True)
    """
    frames = design_frames(net, traffic, time_limit)
    if frames is None:
        return None
    bound = compute_bound(net, traffic).frame_lower_bound if frame_bound is None else frame_bound
    return checked_at_the_bound(net, traffic, frames, bound, "torus design", time_limit, len(net.hosts()))

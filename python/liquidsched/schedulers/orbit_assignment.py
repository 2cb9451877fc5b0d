"""Liquid schedules whose frames a group of automorphisms moves, assigned by CP-SAT.

A mesh has no translations, so neither the torus design nor the orbit cover applies to it, but
its reflections (``x → n - 1 - x`` along an axis) map routes to routes. Let ``G`` be a group of
them whose order divides the frame bound ``Λ`` and that moves every transfer of the traffic (no
reflection of an even side fixes a router). A schedule of ``K = Λ / |G|`` *base frames* ``B_k``
then gives ``Λ`` frames, the images ``g(B_k)``; it holds every transfer once exactly when each
orbit of ``G`` puts one of its transfers in one base frame (the others are its images in the
images of that frame), and it is valid when every base frame is, since ``g`` maps a valid frame
to a valid frame.

So a boolean per orbit, base frame and element of ``G`` says which transfer of the orbit the
base frame holds; each orbit gets exactly one; each resource of a base frame carries at most its
slots, and a resource whose load is ``Λ`` times its slots (a bottleneck) carries exactly them, as
it must in every frame of a liquid schedule. CP-SAT solves this on one worker, without its LP
relaxation, phase saving and probing (:func:`~liquidsched.schedulers.feasibility.solve_feasibility`;
on ``mesh:dims=8/8``, 32 base frames of 1,008 orbits: 12–45 s on one core over four seeds, 12.7 s
in ``benchmarks/search_scale.py``, where the search stops at 129 frames for 128). The model has
``transfers × K`` booleans; above :data:`MAX_ENTRIES` it is not built.

The liquid scheduler tries it after the line product
(:mod:`~liquidsched.schedulers.line_product`), which builds the all-to-all of a mesh whose sides
are multiples of 4 in milliseconds; it is left the other meshes (sides of 6) and the other
traffics the reflections keep.

Nothing is trusted: the frames are checked against the network's routes (the validator) and the
frame bound before the schedule is returned.
"""

from __future__ import annotations

import time
from typing import Any

from ..bounds import compute_bound
from ..network import Network
from ..schedule import Schedule
from ..traffic import Traffic
from .at_the_bound import checked_at_the_bound
from .feasibility import solve_feasibility

#: The largest model built, in transfers times base frames (``mesh:dims=8/8``: 129,024; its model
#: takes about 1 s to build and 0.35 GB at peak; ``mesh:dims=16/16`` would need 16.7 million).
MAX_ENTRIES = 300_000


def free_orbits(net: Network, traffic: Traffic, frame_bound: int,
                max_entries: int | None = None) -> tuple[list[list[int]], list[list[int]]] | None:
    """The largest group of ``net``'s reflections whose order divides ``frame_bound`` and that
    maps ``traffic`` to itself and moves every transfer, its model within ``max_entries``
    (transfers × ``frame_bound`` / order; any size when None), as ``(orbits, product)``: ``orbits[o][e]``
    is the transfer element ``e`` maps orbit ``o``'s first transfer to, ``product[g][e]`` the
    element ``g ∘ e``. None on a network without reflections (a torus's translations have
    designs and the orbit cover), on a traffic the group does not preserve, and when the
    group's only element is the identity.

    Examples
    --------
    >>> from liquidsched.topologies.torus import mesh
    >>> from liquidsched.traffic import all_to_all
    >>> net = mesh((4, 4))
    >>> orbits, product = free_orbits(net, all_to_all(net), 16)
    >>> len(orbits), len(product), product[1][3]
    (60, 4, 2)
    """
    symmetry = getattr(net, "symmetry", None)
    if symmetry is None or getattr(symmetry, "wrap", True):
        return None
    index: dict[tuple[str, str], int] | None = None
    for group in symmetry.groups(frame_bound):
        if len(group) == 1 or (max_entries is not None
                               and len(traffic.transfers) * (frame_bound // len(group)) > max_entries):
            continue
        if index is None:
            index = {(t.src, t.dst): i for i, t in enumerate(traffic.transfers)}
            if len(index) != len(traffic.transfers):
                return None
        orbits = _orbits(group, traffic, index, traffic.sizes)
        if orbits is not None:
            return orbits, _product(group)
    return None


def _orbits(group: list[dict[str, str]], traffic: Traffic, index: dict[tuple[str, str], int],
            sizes: Any) -> list[list[int]] | None:
    """Each transfer's images under ``group`` (an orbit per transfer first met), or None when an
    image is not a transfer of the same size or an element other than the identity fixes one."""
    seen = [False] * len(traffic.transfers)
    orbits = []
    for i, t in enumerate(traffic.transfers):
        if seen[i]:
            continue
        orbit = []
        for g in group:
            j = index.get((g.get(t.src), g.get(t.dst)))
            if j is None or seen[j] or sizes[j] != sizes[i]:
                return None
            seen[j] = True
            orbit.append(j)
        orbits.append(orbit)
    return orbits


def _product(group: list[dict[str, str]]) -> list[list[int]]:
    """``product[g][e]``: the element ``g ∘ e`` of ``group`` (node maps, closed under
    composition), found by where it sends every node."""
    position = {tuple(sorted(g.items())): k for k, g in enumerate(group)}
    return [[position[tuple(sorted((node, g[e[node]]) for node in e))] for e in group] for g in group]


def orbit_assignment(net: Network, traffic: Traffic, time_limit: float | None = None,
                     frame_bound: int | None = None) -> Schedule | None:
    """A liquid schedule of ``traffic`` on a mesh whose frames a group of reflections moves
    (the module says how), checked by the validator and the frame bound (its
    ``info.stats["source"]`` is ``"orbit assignment"``); None when no group applies, the model
    would be larger than :data:`MAX_ENTRIES`, CP-SAT finds none in ``time_limit`` seconds or
    proves there is none, or the frames do not pass. ``frame_bound``: the traffic's, when the
    caller has it already.

    Examples
    --------
    >>> from liquidsched.topologies.torus import mesh
    >>> from liquidsched.traffic import all_to_all
    >>> net = mesh((4, 4))
    >>> s = orbit_assignment(net, all_to_all(net), time_limit=60)
    >>> s.length, s.liquid, s.info.optimal, s.info.stats["symmetry_order"]
    (16, True, True, 4)
    """
    if time_limit is not None and time_limit <= 0:
        return None
    deadline = None if time_limit is None else time.perf_counter() + time_limit
    bound = compute_bound(net, traffic).frame_lower_bound if frame_bound is None else frame_bound
    found = free_orbits(net, traffic, bound, MAX_ENTRIES)
    if found is None:
        return None
    orbits, product = found
    base = bound // len(product)
    frames = _assigned_frames(net, traffic, orbits, product, base, deadline)
    if frames is None:
        return None
    return checked_at_the_bound(net, traffic, frames, bound, "orbit assignment", time_limit, len(product))


def _assigned_frames(net: Network, traffic: Traffic, orbits: list[list[int]], product: list[list[int]],
                     base: int, deadline: float | None) -> list[list[int]] | None:
    """The ``base × |G|`` frames (transfer indices) of the model the module describes, frame
    ``k·|G| + g`` being ``g(B_k)``; None when CP-SAT finds none in time."""
    from ortools.sat.python import cp_model  # heavy (it imports pandas): only when it runs

    order = len(product)
    frames_total = base * order
    paths = traffic.resource_lists(net)
    slots = net.resource_slots
    load = [0] * len(net.resources)
    users: list[list[tuple[int, int]]] = [[] for _ in net.resources]
    for o, orbit in enumerate(orbits):
        for e, t in enumerate(orbit):
            for r in paths[t]:
                users[r].append((o, e))
                load[r] += 1
    model = cp_model.CpModel()
    v = {(o, k, e): model.new_bool_var("") for o in range(len(orbits)) for k in range(base) for e in range(order)}
    for o in range(len(orbits)):
        model.add_exactly_one(v[o, k, e] for k in range(base) for e in range(order))
    # Base frames are interchangeable, and so are the images of one: the first orbit's first
    # transfer opens the first base frame.
    model.add(v[0, 0, 0] == 1)
    for r, pairs in enumerate(users):
        if len(pairs) <= slots[r] and load[r] < frames_total * slots[r]:
            continue
        for k in range(base):
            carried = [v[o, k, e] for o, e in pairs]
            if load[r] == frames_total * slots[r]:
                model.add(sum(carried) == slots[r]) if slots[r] > 1 else model.add_exactly_one(carried)
            elif slots[r] > 1:
                model.add(sum(carried) <= slots[r])
            else:
                model.add_at_most_one(carried)
    solver = solve_feasibility(model, None if deadline is None else max(0.0, deadline - time.perf_counter()))
    if solver is None:
        return None
    frames: list[list[int]] = [[] for _ in range(frames_total)]
    for (o, k, e), var in v.items():
        if solver.boolean_value(var):
            for g in range(order):
                frames[k * order + g].append(orbits[o][product[g][e]])
    return frames

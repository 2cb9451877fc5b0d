"""Liquid schedules of a mesh's all-to-all as products of line permutations.

On a line of ``n`` routers (one host each, a link each way between neighbours) take ``n``
permutations ``A_0 … A_{n-1}`` that together send every node to every node once (the rows of a
Latin square, fixed points included), each using every directed link at most ``s`` times. The
segments ``x → A_i(x)`` of one permutation are intervals, so ``s`` colours ``c_i(x)`` split
each permutation into ``s`` sets of link-disjoint segments (the colouring of an interval graph).

On a mesh of sides ``n_1 … n_d`` with dimension-order routing, take such a family on every axis,
with one ``s``. For a choice ``(i_1 … i_d)`` of one permutation per axis and ``k`` in ``Z_s``,
the frame holds every transfer ``x → (A_{i_1}(x_1), …, A_{i_d}(x_d))`` whose colours add up to
``k`` modulo ``s``. It is valid: a transfer's segment along axis ``a`` lies in a line where the
coordinates before ``a`` are the target's and those after are the source's; with those fixed,
the frame's sources on the line are the nodes of one colour of ``A_{i_a}``, whose segments are
link-disjoint. Every router sends once and receives once, and every transfer lies in exactly
one frame (the permutations fix its ``i_a``, the colours its ``k``). So the schedule has
``s · n_1 ⋯ n_d`` frames; with ``s = max n_a / 4`` (every permutation crossing the middle of the
longest line ``s`` times each way, ``n_a`` a multiple of 4) that is the frame bound
``Λ = n_1 ⋯ n_d · max n_a / 4`` of the middle links. With ``h`` hosts per router, every
frame is repeated for each pair ``(u, t)`` of ``Z_h``: only the hosts of rank ``u`` send, each
to the host of rank ``u + t`` at its target router, ``h²`` times as many frames as the bound
is ``h²`` times larger.

The permutations of a line come from a split of the ordered pairs into classes: with
``M = n / 2`` and ``σ = x + y - (n - 1)``, pair ``(x, y)`` is in class ``("s", σ mod M)``
when ``σ`` is even and in ``("d", (x - y) mod M)`` otherwise. Each class is the union of two
permutations (every node twice a source and twice a target; one when ``M`` is odd), an even
cycle structure with two ways to split each cycle; a depth-first search over the cycles finds a split whose two
permutations use no link more than ``s`` times, and where it gives up, CP-SAT solves the same
choice (a boolean per cycle, a sum per link). Measured on one core (2026-11-28): all classes of
a side of 32 in 0.17 s by the search, of 40 in 2.6 s; from 44 the search gives up and CP-SAT
splits every class of a side of 96 in 0.8 s.

Nothing is trusted: the frames are checked against the network's own routes (the validator)
and against the frame bound before the schedule is returned.
"""

from __future__ import annotations

import itertools
import math
import time
from typing import TYPE_CHECKING

import numpy as np

from ..bounds import compute_bound
from ..network import Network
from ..schedule import Schedule
from ..traffic import Traffic
from .at_the_bound import checked_at_the_bound, is_all_to_all_size
from .feasibility import solve_feasibility

if TYPE_CHECKING:
    from ..symmetry import LatticeSymmetry

#: Permutations of a line (``perms[i][x]``) and their colours (``colours[i][x]``).
LineFamily = tuple[list[list[int]], list[list[int]]]

#: Depth-first search nodes spent on one class of a line at most: the classes of ``n ≤ 32`` need
#: a few thousand (0.17 s for all of 32); beyond the cap CP-SAT splits the class instead.
CLASS_NODE_LIMIT = 20_000

_families: dict[tuple[int, int], LineFamily] = {}


def line_slots(n: int) -> int:
    """The fewest uses of a directed link per permutation that ``n`` permutations of a line of
    ``n`` nodes covering every ordered pair can have: the pairs crossing its middle, shared.

    Examples
    --------
    >>> line_slots(8), line_slots(6), line_slots(1)
    (2, 2, 0)
    """
    return -(-((n // 2) * ((n + 1) // 2)) // n) if n else 0


def line_family(n: int, slots: int, deadline: float | None = None) -> LineFamily | None:
    """``n`` permutations of a line of ``n`` nodes sending every node to every node once, each
    using every directed link at most ``slots`` times, with colours in ``range(slots)`` that
    split each into link-disjoint segments (the module says how they are found); None when the
    search over the classes finds none (within :data:`CLASS_NODE_LIMIT` nodes a class, and
    before ``deadline``, a ``time.perf_counter()`` value).

    Examples
    --------
    >>> perms, colours = line_family(4, 1)
    >>> sorted(sorted(p[x] for p in perms) == [0, 1, 2, 3] for x in range(4))
    [True, True, True, True]
    >>> max(link_uses(p) for p in perms)
    1
    """
    if (n, slots) in _families:
        return _families[n, slots]
    if n == 1:
        return [[0]], [[0]]
    if n < 1 or n % 2 or slots < 1:
        return None
    perms: list[list[int]] = []
    for pairs in _classes(n):
        split = _split_class(n, pairs, slots, deadline)
        if split is None:
            return None
        perms += split
    family = perms, [line_colours(p, slots) for p in perms]
    _families[n, slots] = family
    return family


def link_uses(perm: list[int]) -> int:
    """The most segments ``x → perm[x]`` of a permutation of a line that use one directed link.

    Examples
    --------
    >>> link_uses([2, 3, 0, 1]), link_uses([1, 0, 3, 2]), link_uses([0, 1])
    (2, 1, 0)
    """
    return int(_link_loads(len(perm), enumerate(perm)).max(initial=0))


def line_colours(perm: list[int], slots: int) -> list[int]:
    """Colours in ``range(slots)`` of the segments ``x → perm[x]``, those of one colour using
    no directed link twice: the intervals of each direction in order of their left ends, each
    given a colour whose last interval has ended (enough colours when no link is used more than
    ``slots`` times, as an interval graph's clique bounds its colouring). Fixed points take 0.

    Examples
    --------
    >>> line_colours([2, 3, 0, 1], 2)
    [0, 1, 0, 1]
    """
    colours = [0] * len(perm)
    for rightwards in (True, False):
        segments = sorted((min(x, y), max(x, y), x) for x, y in enumerate(perm) if (y > x) == rightwards and y != x)
        ends = [-1] * slots
        for low, high, x in segments:
            colour = next(c for c in range(slots) if ends[c] <= low)
            ends[colour] = high
            colours[x] = colour
    return colours


def _classes(n: int) -> list[list[tuple[int, int]]]:
    """The ordered pairs of a line of even ``n`` in the classes the module describes, each the
    union of two permutations (``n ≡ 0 mod 4``) or one (``n ≡ 2 mod 4``)."""
    m = n // 2
    classes: dict[tuple[str, int], list[tuple[int, int]]] = {}
    for x in range(n):
        for y in range(n):
            sigma = x + y - (n - 1)
            key = ("s", sigma % m) if sigma % 2 == 0 else ("d", (x - y) % m)
            classes.setdefault(key, []).append((x, y))
    return [classes[k] for k in sorted(classes)]


def _split_class(n: int, pairs: list[tuple[int, int]], slots: int,
                 deadline: float | None) -> list[list[int]] | None:
    """The class's permutations, each using every directed link at most ``slots`` times, or
    None when there are none (or the search's budget ends first)."""
    regularity = len(pairs) // n
    if regularity == 1:
        perm = [0] * n
        for x, y in pairs:
            perm[x] = y
        return [perm] if link_uses(perm) <= slots else None
    if regularity != 2:
        return None
    cycles = _alternating_cycles(pairs)
    # Either way of splitting a cycle: its even-placed pairs in the first permutation, or the second.
    ways = []
    for cycle in cycles:
        even = _link_loads(n, (pairs[k] for k in cycle[0::2]))
        odd = _link_loads(n, (pairs[k] for k in cycle[1::2]))
        ways.append((np.concatenate([even, odd]), np.concatenate([odd, even])))
    # The longest cycles first: they constrain most.
    order = sorted(range(len(cycles)), key=lambda c: -int(ways[c][0].sum()))
    choice = _first_split(order, ways, slots, deadline)
    if choice is None:
        choice = _split_by_cpsat(ways, slots, deadline)
    if choice is None:
        return None
    perms = [[0] * n, [0] * n]
    for cycle, way in zip(cycles, choice):
        for position, k in enumerate(cycle):
            x, y = pairs[k]
            perms[(position + way) % 2][x] = y
    return perms


def _first_split(order: list[int], ways: list[tuple[np.ndarray, np.ndarray]], slots: int,
                 deadline: float | None) -> list[int] | None:
    """A way (0 or 1) per cycle whose loads add up to at most ``slots`` on every link of both
    permutations, found depth first in ``order``; the first cycle's way is fixed (the two
    permutations are interchangeable)."""
    load = np.zeros_like(ways[0][0])
    choice = [0] * len(ways)
    budget = [CLASS_NODE_LIMIT]

    def extend(depth: int) -> bool:
        if depth == len(order):
            return True
        budget[0] -= 1
        if budget[0] < 0 or (deadline is not None and time.perf_counter() > deadline):
            return False
        c = order[depth]
        for way in ((0, 1) if depth else (0,)):
            np.add(load, ways[c][way], out=load)
            if load.max() <= slots:
                choice[c] = way
                if extend(depth + 1):
                    return True
            np.subtract(load, ways[c][way], out=load)
        return False

    return choice if extend(0) else None


def _split_by_cpsat(ways: list[tuple[np.ndarray, np.ndarray]], slots: int,
                    deadline: float | None) -> list[int] | None:
    """The ways :func:`_first_split` looks for, as a CP-SAT model (a boolean per cycle, a sum
    per link): where the depth-first search gives up (sides from 44 up), it answers in well under
    a second (every class of ``n = 96`` in 0.8 s)."""
    from ortools.sat.python import cp_model  # heavy (it imports pandas): only when it runs

    model = cp_model.CpModel()
    second = [model.new_bool_var("") for _ in ways]
    model.add(second[0] == 0)
    for link in range(len(ways[0][0])):
        # A cycle puts its first way's load on the link, or its second's.
        base = sum(int(first[link]) for first, _ in ways)
        change = [(int(other[link] - first[link]), b) for (first, other), b in zip(ways, second)
                  if other[link] != first[link]]
        if not change and base > slots:
            return None
        if change:
            model.add(base + sum(c * b for c, b in change) <= slots)
    left = None if deadline is None else max(0.0, deadline - time.perf_counter())
    solver = solve_feasibility(model, left)
    return None if solver is None else [int(solver.boolean_value(b)) for b in second]


def _alternating_cycles(pairs: list[tuple[int, int]]) -> list[list[int]]:
    """The cycles of a 2-regular bipartite graph of pairs (sources on one side, targets on the
    other), each as its pairs' indices in the order met, so that alternate pairs are a matching."""
    at: dict[tuple[int, int], list[int]] = {}
    for k, (x, y) in enumerate(pairs):
        at.setdefault((0, x), []).append(k)
        at.setdefault((1, y), []).append(k)
    seen = [False] * len(pairs)
    cycles = []
    for start in range(len(pairs)):
        if seen[start]:
            continue
        cycle, k, node = [], start, (0, pairs[start][0])
        while not seen[k]:
            seen[k] = True
            cycle.append(k)
            x, y = pairs[k]
            node = (1, y) if node == (0, x) else (0, x)
            k = next(j for j in at[node] if j != k)
        cycles.append(cycle)
    return cycles


def _link_loads(n: int, segments) -> np.ndarray:
    """Uses of each directed link of a line of ``n`` nodes by ``segments`` ``(x, y)``: the
    rightward link ``j → j + 1`` at ``j``, the leftward one at ``n - 1 + j``."""
    load = np.zeros(2 * max(n - 1, 0), dtype=np.int32)
    for x, y in segments:
        if x < y:
            load[x:y] += 1
        elif y < x:
            load[n - 1 + y:n - 1 + x] += 1
    return load


def product_shape(net: Network, traffic: Traffic) -> tuple[LatticeSymmetry, int] | None:
    """``(symmetry, slots)`` of ``net``'s mesh when a product applies to ``traffic``, else None:
    ``net`` must be a mesh (a lattice without wrap-around) and ``traffic`` as many distinct host
    pairs as its all-to-all has (which pairs is checked when the frames are mapped to them);
    ``slots`` is the ``s`` the module describes.

    Examples
    --------
    >>> from liquidsched.topologies.torus import mesh, torus
    >>> from liquidsched.traffic import all_to_all
    >>> net = mesh((8, 4))
    >>> product_shape(net, all_to_all(net))[1], product_shape(torus((8, 8)), all_to_all(torus((8, 8))))
    (2, None)
    """
    sym = getattr(net, "symmetry", None)
    if sym is None or getattr(sym, "wrap", True):
        return None
    if not is_all_to_all_size(traffic, math.prod(sym.dims) * sym.hosts_per_router):
        return None
    return sym, max(line_slots(n) for n in sym.dims)


def product_frames(net: Network, traffic: Traffic, frame_bound: int,
                   time_limit: float | None = None) -> list[list[int]] | None:
    """The frames (transfer indices) of the product the module describes, or None when
    :func:`product_shape` says none applies, its frames would be more than ``frame_bound``, a
    line has no family of permutations (found in ``time_limit`` seconds), or ``traffic`` is not
    the all-to-all."""
    shape = product_shape(net, traffic)
    if shape is None:
        return None
    sym, slots = shape
    routers, h = math.prod(sym.dims), sym.hosts_per_router
    if routers * slots * h * h != frame_bound:
        return None
    deadline = None if time_limit is None else time.perf_counter() + time_limit
    families = []
    for n in sym.dims:
        family = line_family(n, slots, deadline)
        if family is None:
            return None
        families.append(family)
    lookup = _transfer_lookup(sym, traffic)
    if lookup is None:
        return None
    targets, colours = _router_images(sym.dims, families)
    frames = []
    for choice in range(routers):
        for k in range(slots):
            sources = np.flatnonzero(colours[choice] % slots == k)
            ends = targets[choice][sources]
            for u in range(h):
                for t in range(h):
                    frame = lookup(sources * h + u, ends * h + (u + t) % h)
                    frames.append(frame[frame >= 0].tolist())
    return frames


def _router_images(dims: tuple[int, ...], families: list[LineFamily]) -> tuple[np.ndarray, np.ndarray]:
    """For every choice of one permutation per axis (a row, numbered like routers), each
    router's target router and its colours' sum: arrays ``(routers, routers)``."""
    targets = np.zeros((1, 1), dtype=np.int64)
    colours = np.zeros((1, 1), dtype=np.int64)
    # Axis 0 varies fastest in a router's number, as in the lattice's own order of coordinates.
    for n, (perms, cols) in reversed(list(zip(dims, families))):
        p, c = np.array(perms, dtype=np.int64), np.array(cols, dtype=np.int64)
        targets = (targets[:, None, :, None] * n + p[None, :, None, :]).reshape(len(targets) * n, -1)
        colours = (colours[:, None, :, None] + c[None, :, None, :]).reshape(len(colours) * n, -1)
    return targets, colours


def _transfer_lookup(sym: LatticeSymmetry, traffic: Traffic):
    """A function from arrays of source and target host numbers (router number × ranks + rank)
    to transfer indices (-1 where the pair is no transfer, as a host to itself), or None when a
    host of ``traffic`` is not one of the lattice's."""
    import itertools

    h = sym.hosts_per_router
    ranks: list[int | None] = list(range(h)) if h > 1 else [None]
    number = {}
    # Router numbers with the first coordinate fastest, as _router_images counts them.
    for r, c in enumerate(itertools.product(*(range(n) for n in reversed(sym.dims)))):
        for u, m in enumerate(ranks):
            number[sym.name("h", tuple(reversed(c)), m)] = r * h + u
    try:
        host_number = np.array([number[name] for name in traffic.host_table], dtype=np.int64)
    except KeyError:
        return None
    hosts = len(number)
    keys = host_number[traffic.src_index] * hosts + host_number[traffic.dst_index]
    order = np.argsort(keys, kind="stable")
    sorted_keys = keys[order]

    def lookup(src: np.ndarray, dst: np.ndarray) -> np.ndarray:
        wanted = src * hosts + dst
        at = np.minimum(np.searchsorted(sorted_keys, wanted), len(sorted_keys) - 1)
        return np.where(sorted_keys[at] == wanted, order[at], -1)

    return lookup


def line_product(net: Network, traffic: Traffic, time_limit: float | None = None,
                 frame_bound: int | None = None) -> Schedule | None:
    """A liquid schedule of a mesh's all-to-all by :func:`product_frames`, checked by the
    validator and the frame bound (its ``info.stats["source"]`` is ``"line product"``); None when
    no product applies or reaches the bound, or the frames do not pass. ``frame_bound``: the
    traffic's, when the caller has it already (computed otherwise).

    Examples
    --------
    >>> from liquidsched.topologies.torus import mesh
    >>> from liquidsched.traffic import all_to_all
    >>> net = mesh((8, 8))
    >>> s = line_product(net, all_to_all(net))
    >>> s.length, s.liquid, s.info.optimal, s.info.stats["source"]
    (128, True, True, 'line product')
    """
    if time_limit is not None and time_limit <= 0:
        return None
    bound = compute_bound(net, traffic).frame_lower_bound if frame_bound is None else frame_bound
    frames = product_frames(net, traffic, bound, time_limit)
    if frames is None:
        return None
    return checked_at_the_bound(net, traffic, frames, bound, "line product", time_limit, 1)

"""Symmetries of networks: node permutations that map links to links and routes to routes.

A network built from a regular pattern (a torus, a mesh) carries a :class:`Symmetry` in
``network.symmetry``: it yields groups of node permutations, each a group of automorphisms of the
network. The exact search uses such a group to build a schedule whose frames the group covers
(the core's ``liquid::symmetry``). Nothing is taken on trust: the core checks that every element
maps the traffic to itself with the same slots, and ignores the group otherwise.
"""

from __future__ import annotations

import itertools
import math
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING, Any, Callable, Iterator, Sequence

from .network import Network

if TYPE_CHECKING:
    import numpy as np

#: A permutation of node names.
NodeMap = dict[str, str]


@dataclass(frozen=True)
class OrbitStructure:
    """A group acting on a traffic's transfers, every orbit a copy of it: transfer ``t`` is
    element ``element[t]`` applied to the representative of orbit ``orbit[t]``; ``product[a *
    order + b]`` is the element ``a ∘ b``; ``subgroups`` lists the elements of each subgroup
    the core's orbit cover may fix frames with. The core checks all of it."""

    orbit: list[int]
    element: list[int]
    product: list[int]
    subgroups: list[list[int]]
    #: ``resource_images[g * resources + r]``: the image of resource ``r`` under element ``g``
    #: (empty: not given; the cover then looks at every bottleneck of a fixed frame).
    resource_images: list[int] = field(default_factory=list)

    def as_core(self) -> tuple[list[int], list[int], list[int], list[list[int]], list[int]]:
        """The tuple ``_core.liquid_schedule(orbits=...)`` takes."""
        return self.orbit, self.element, self.product, self.subgroups, self.resource_images


@dataclass(frozen=True)
class LatticeSymmetry:
    """Translations (``wrap``) or reflections (no wrap) of the routers of a ``dims`` lattice,
    whose nodes are named by ``name(prefix, coords, member)``.

    A translation by ``v`` maps router ``c`` to ``c + v`` (each coordinate modulo its size) and
    a host to the host of the same rank at the image router; dimension-order routing, with its
    ties broken the same way everywhere, commutes with it. A reflection maps ``c[a]`` to
    ``dims[a] - 1 - c[a]``, which commutes with dimension-order routing on a mesh.
    """

    dims: tuple[int, ...]
    wrap: bool
    hosts_per_router: int
    name: Callable[[str, Sequence[int], int | None], str]

    def groups(self, order_divides: int) -> Iterator[list[NodeMap]]:
        """Groups whose order divides ``order_divides``, largest first, each as its list of
        elements (the identity first).

        Examples
        --------
        >>> from liquidsched.topologies.torus import torus
        >>> sym = torus((4, 4)).symmetry
        >>> [len(g) for g in sym.groups(48)][:3]
        [16, 8, 8]
        """
        if self.wrap:
            yield from self._translation_groups(order_divides)
        else:
            yield from self._reflection_groups(order_divides)

    def translation_orbits(self, pairs: Sequence[tuple[str, str]]) -> OrbitStructure | None:
        """The translations of a torus acting on the transfers ``pairs`` (source, target), as
        the core's orbit cover takes them; None on a mesh, when a name is not a host of the
        lattice, or when the transfers are not whole orbits (each displacement from every
        router, once).

        Transfer ``(s, d)`` lies in the orbit of its displacement ``d - s`` (and host ranks
        at both routers), as the translation by ``s`` of the transfer from the origin. The
        subgroups are those :func:`translation_subgroups` gives, as many as
        :data:`ORBIT_COVER_ENTRIES` allows for this many transfers.

        Examples
        --------
        >>> from liquidsched.topologies.torus import torus
        >>> sym = torus((4,)).symmetry
        >>> o = sym.translation_orbits([("h0", "h1"), ("h1", "h2"), ("h2", "h3"), ("h3", "h0")])
        >>> o.orbit, o.element, sorted(len(k) for k in o.subgroups)
        ([0, 0, 0, 0], [0, 1, 2, 3], [1, 2, 4])
        >>> sym.translation_orbits([("h0", "h1")]) is None
        True
        """
        import numpy as np  # only where the orbit cover runs: `topology list` stays light
        hosts = sorted({h for pair in pairs for h in pair})
        index = {h: i for i, h in enumerate(hosts)}
        src = np.array([index[a] for a, _ in pairs], dtype=np.int64)
        dst = np.array([index[b] for _, b in pairs], dtype=np.int64)
        return self.translation_orbits_of_columns(hosts, src, dst)

    def translation_orbits_of_columns(self, hosts: Sequence[str], src: Any, dst: Any) -> OrbitStructure | None:
        """:meth:`translation_orbits` of the transfers from ``hosts[src[t]]`` to
        ``hosts[dst[t]]`` (``src``, ``dst``: integer arrays), as a traffic holds them: each host
        is looked up once, not once per transfer.

        Examples
        --------
        >>> import numpy as np
        >>> from liquidsched.topologies.torus import torus
        >>> o = torus((4,)).symmetry.translation_orbits_of_columns(["h0", "h1", "h2", "h3"], np.arange(4),
        ...                                                          (np.arange(4) + 1) % 4)
        >>> o.orbit, o.element
        ([0, 0, 0, 0], [0, 1, 2, 3])
        """
        import numpy as np

        if not self.wrap or len(src) == 0:
            return None
        place = {self.name("h", c, m): (c, m or 0) for c, m in self._members()}
        # A host of the table that no transfer uses may lie outside the lattice; it is given a
        # place of its own below only so that the table can be indexed.
        if any(h not in place for h in hosts):
            used = np.unique(np.concatenate((src, dst)))
            if any(hosts[i] not in place for i in used.tolist()):
                return None
        dims = np.array(self.dims)
        order = math.prod(self.dims)
        radix = np.cumprod((1, *self.dims[:-1]))
        # Each host's router coordinates and rank at it, looked up once per host.
        known = [place.get(h, ((0,) * len(dims), 0)) for h in hosts]
        coordinates = np.array([c for c, _ in known], dtype=np.int64).reshape(len(hosts), len(dims))
        rank = np.array([m for _, m in known], dtype=np.int64)
        src, dst = np.asarray(src, dtype=np.int64), np.asarray(dst, dtype=np.int64)
        source, target = coordinates[src], coordinates[dst]
        _, orbit = np.unique(np.column_stack(((target - source) % dims, rank[src], rank[dst])), axis=0,
                             return_inverse=True)
        orbit = orbit.reshape(-1)
        element = source @ radix
        count = len(src)
        # Whole orbits only: every element once in each.
        if count % order or len(np.unique(orbit * order + element)) != count or orbit.max() + 1 != count // order:
            return None
        vectors = _lattice_vectors(self.dims)
        product = ((vectors[:, None, :] + vectors[None, :, :]) % dims) @ radix
        subgroups = translation_subgroups(self.dims, limit=max(1, ORBIT_COVER_ENTRIES // count))
        return OrbitStructure(orbit=orbit.tolist(), element=element.tolist(), product=product.reshape(-1).tolist(),
                              subgroups=subgroups)

    def translations(self) -> Iterator[NodeMap]:
        """Every translation of a torus, in the order of the elements of
        :meth:`translation_orbits` (the first coordinate's step changing fastest)."""
        for v in _lattice_vectors(self.dims).tolist():
            yield self._translation(v)

    def step_groups(self, order_divides: int) -> Iterator[list[tuple[int, ...]]]:
        """The translation groups :meth:`groups` yields on a torus, each as its translation
        vectors: subgroups of ``Z_n1 × ... × Z_nd`` generated by a step along each axis (a
        divisor of its size) whose order divides ``order_divides``, largest first, and among
        equal orders the most even spread over the axes first.

        Examples
        --------
        >>> from liquidsched.topologies.torus import torus
        >>> next(torus((4, 4)).symmetry.step_groups(8))[:3]
        [(0, 0), (0, 2), (1, 0)]
        """
        choices = [[s for s in range(1, n + 1) if n % s == 0] for n in self.dims]
        steps = [s for s in itertools.product(*choices)
                 if order_divides % _order(self.dims, s) == 0 and _order(self.dims, s) > 1]
        steps.sort(key=lambda s: (-_order(self.dims, s), max(n // k for n, k in zip(self.dims, s))))
        for s in steps:
            yield list(itertools.product(*(range(0, n, k) for n, k in zip(self.dims, s))))

    def _translation_groups(self, order_divides: int) -> Iterator[list[NodeMap]]:
        for vectors in self.step_groups(order_divides):
            yield [self._translation(v) for v in vectors]

    def _reflection_groups(self, order_divides: int) -> Iterator[list[NodeMap]]:
        axes = range(len(self.dims))
        subsets = [c for r in range(len(self.dims), 0, -1) for c in itertools.combinations(axes, r)]
        for axes_set in subsets:
            order = 2 ** len(axes_set)
            if order_divides % order:
                continue
            flips = itertools.product(*([False, True] if a in axes_set else [False] for a in axes))
            yield [self._reflection(f) for f in flips]

    def _members(self) -> Iterator[tuple[tuple[int, ...], int | None]]:
        members: list[int | None] = list(range(self.hosts_per_router)) if self.hosts_per_router > 1 else [None]
        for c in itertools.product(*(range(n) for n in self.dims)):
            for m in members:
                yield c, m

    def _node_map(self, image: Callable[[tuple[int, ...]], tuple[int, ...]]) -> NodeMap:
        mapping: NodeMap = {}
        for c, m in self._members():
            mapping[self.name("h", c, m)] = self.name("h", image(c), m)
            mapping[self.name("r", c, None)] = self.name("r", image(c), None)
        return mapping

    def _translation(self, v: Sequence[int]) -> NodeMap:
        return self._node_map(lambda c: tuple((x + d) % n for x, d, n in zip(c, v, self.dims)))

    def _reflection(self, flip: Sequence[bool]) -> NodeMap:
        return self._node_map(lambda c: tuple(n - 1 - x if f else x for x, f, n in zip(c, flip, self.dims)))


#: Transfers times subgroups the orbit cover is given at most: each subgroup it tries costs
#: memory in proportion to the transfers (its orbits and what they use), about 140 bytes each.
ORBIT_COVER_ENTRIES = 3_500_000


def _lattice_vectors(dims: Sequence[int]) -> np.ndarray:
    """Every vector of ``Z_dims``, the first coordinate changing fastest (the order of their
    indices ``v @ radix``)."""
    import numpy as np

    return np.array(list(itertools.product(*(range(n) for n in reversed(dims)))), dtype=np.int64)[:, ::-1]


def translation_subgroups(dims: Sequence[int], limit: int | None = None) -> list[list[int]]:
    """Subgroups of the translations ``Z_dims`` (elements as indices ``v @ radix``): those made of
    a step along each axis (a divisor of its size) first, then every other one two elements
    generate, largest first. On a 2-dimensional torus these are all its subgroups. With ``limit``,
    the first ``limit`` of them (the others are then not looked for when the step subgroups are
    enough).

    Examples
    --------
    >>> sorted(len(k) for k in translation_subgroups((4,)))
    [1, 2, 4]
    >>> len(translation_subgroups((8, 8)))
    37
    """
    import numpy as np
    size = np.array(dims)
    radix = np.cumprod((1, *dims[:-1]))
    vectors = _lattice_vectors(dims)

    def order_of(v: np.ndarray) -> int:
        return math.lcm(*(n // math.gcd(n, int(x)) for n, x in zip(dims, v)))

    def generated(a: np.ndarray, b: np.ndarray) -> np.ndarray:
        i = np.arange(order_of(a))[:, None, None]
        j = np.arange(order_of(b))[None, :, None]
        return np.unique((((i * a + j * b) % size).reshape(-1, len(dims))) @ radix)

    found: dict[bytes, np.ndarray] = {}
    for steps in itertools.product(*([k for k in range(1, n + 1) if n % k == 0] for n in dims)):
        k = np.flatnonzero((vectors % np.array(steps) == 0).all(axis=1))
        found.setdefault(k.tobytes(), k)
    if limit is not None and len(found) >= limit:
        return [k.tolist() for k in list(found.values())[:limit]]
    # A subgroup two elements generate is generated by a generator of one of its cyclic
    # subgroups and another element: one generator per cyclic subgroup is enough.
    zero = np.zeros(len(dims), dtype=np.int64)
    cyclic: dict[bytes, np.ndarray] = {}
    for v in vectors:
        cyclic.setdefault(generated(v, zero).tobytes(), v)
    others: dict[bytes, np.ndarray] = {}
    for a in cyclic.values():
        for b in vectors:
            k = generated(a, b)
            if k.tobytes() not in found:
                others.setdefault(k.tobytes(), k)
    ordered = list(found.values()) + sorted(others.values(), key=lambda k: -len(k))
    return [k.tolist() for k in ordered[:limit]]


def _order(dims: Sequence[int], steps: Sequence[int]) -> int:
    return math.prod(n // s for n, s in zip(dims, steps))


def resource_permutation(net: Network, mapping: NodeMap) -> list[int] | None:
    """The permutation of ``net``'s resources that the node permutation ``mapping`` induces
    (``perm[r]`` is the image of resource ``r``), or None when it does not map every link to a
    link of the same resource structure.

    Examples
    --------
    >>> from liquidsched.topologies.torus import torus
    >>> net = torus((3,))
    >>> shift = {"r0": "r1", "r1": "r2", "r2": "r0", "h0": "h1", "h1": "h2", "h2": "h0"}
    >>> perm = resource_permutation(net, shift)
    >>> net.resources[perm[net.link_resource["r0>r1"]]]
    'r1>r2'
    """
    perm = [-1] * len(net.resources)
    for lid, link in net.links.items():
        src, dst = mapping.get(link.src), mapping.get(link.dst)
        image = None if src is None or dst is None else net.link_between(src, dst)
        if image is None:
            return None
        r, s = net.link_resource[lid], net.link_resource[image]
        if perm[r] not in (-1, s):
            return None
        perm[r] = s
    if sorted(perm) != list(range(len(perm))):
        return None
    return perm


def with_resource_images(net: Network, structure: OrbitStructure,
                         images: np.ndarray | None = None) -> OrbitStructure | None:
    """``structure`` (the translations of ``net``'s torus) with the image of every resource under
    every translation (``images`` when the caller has them, :func:`translation_resource_images`
    otherwise), or None when one does not map the network onto itself."""
    images = translation_resource_images(net) if images is None else images
    return None if images is None else replace(structure, resource_images=images.reshape(-1).tolist())


def translation_resource_images(net: Network) -> np.ndarray | None:
    """``images[g, r]``: the image of resource ``r`` under translation ``g`` (in the order of
    :meth:`LatticeSymmetry.translations`) of ``net``'s torus, computed for all translations at
    once; None when one does not map every link to a link of the same resource structure (as
    :func:`resource_permutation` decides for one).

    Examples
    --------
    >>> from liquidsched.topologies.torus import torus
    >>> net = torus((3,))
    >>> images = translation_resource_images(net)
    >>> images.shape, net.resources[images[1, net.link_resource["r0>r1"]]]
    ((3, 12), 'r1>r2')
    """
    import numpy as np

    sym = net.symmetry
    dims = np.array(sym.dims)
    radix = np.cumprod((1, *sym.dims[:-1]))
    members = max(1, sym.hosts_per_router)
    cells = math.prod(sym.dims)
    # Node id: kind (router 0, host 1), cell (coordinates @ radix), member.
    node_id: dict[str, int] = {}
    for c, m in sym._members():
        cell = int(np.dot(c, radix))
        node_id[sym.name("h", c, m)] = (cells + cell) * members + (m or 0)
        node_id[sym.name("r", c, None)] = cell * members
    link_ids = list(net.links)
    ends = [(node_id.get(net.links[lid].src), node_id.get(net.links[lid].dst)) for lid in link_ids]
    if any(a is None or b is None for a, b in ends):
        return None
    ends_arr = np.array(ends, dtype=np.int64)
    kind, rest = np.divmod(ends_arr, cells * members)
    cell, member = np.divmod(rest, members)
    vectors = _lattice_vectors(sym.dims)  # every cell's coordinates too, in the order of cells
    # shifted[g, cell]: the cell that translation g moves `cell` to.
    shifted = (((vectors[None, :, :] + vectors[:, None, :]) % dims) * radix).sum(axis=2)
    image_ids = (kind * cells + shifted[:, cell]) * members + member  # translations × links × 2
    # The link between two nodes, as net.link_between finds it, by a sorted key.
    span = 2 * cells * members
    index = {lid: i for i, lid in enumerate(link_ids)}
    pair_link: dict[int, int] = {}
    for lid, (a, b) in zip(link_ids, ends):
        link = net.links[lid]
        pair_link.setdefault(a * span + b, index[net.link_between(link.src, link.dst)])
    keys = np.array(sorted(pair_link), dtype=np.int64)
    link_of_key = np.array([pair_link[k] for k in keys.tolist()], dtype=np.int64)
    wanted = image_ids[..., 0] * span + image_ids[..., 1]
    at = np.clip(np.searchsorted(keys, wanted), 0, len(keys) - 1)
    if not (keys[at] == wanted).all():
        return None
    resource_of_link = np.array([net.link_resource[lid] for lid in link_ids], dtype=np.int64)
    image_resource = resource_of_link[link_of_key[at]]  # translations × links
    images = np.full((len(vectors), len(net.resources)), -1, dtype=np.int64)
    images[:, resource_of_link] = image_resource
    # Every link of a resource must land on links of one resource, and each row be a permutation.
    if not (images[:, resource_of_link] == image_resource).all():
        return None
    if not (np.sort(images, axis=1) == np.arange(len(net.resources))).all():
        return None
    return images


def symmetry_candidates(net: Network, order_divides: int,
                        images: np.ndarray | None = None) -> Iterator[list[list[int]]]:
    """Groups of ``net``'s symmetry as resource permutations, largest first, keeping only those
    whose order divides ``order_divides`` (the frames a schedule should have); on a torus, taken
    from its translations' ``images`` (:func:`translation_resource_images`, computed when
    None)."""
    symmetry = getattr(net, "symmetry", None)
    if symmetry is None or order_divides <= 0:
        return
    if images is None and getattr(symmetry, "wrap", False):
        images = translation_resource_images(net)
    if images is not None:
        # A torus: the rows of its translations' resource images, computed for all at once.
        radix = [math.prod(symmetry.dims[:a]) for a in range(len(symmetry.dims))]
        for vectors in symmetry.step_groups(order_divides):
            yield [images[sum(x * r for x, r in zip(v, radix))].tolist() for v in vectors]
        return
    for group in symmetry.groups(order_divides):
        perms = [resource_permutation(net, g) for g in group]
        if all(p is not None for p in perms):
            yield [p for p in perms if p is not None]

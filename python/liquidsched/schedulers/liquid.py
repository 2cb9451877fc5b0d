"""Exact liquid schedules (papers 000 and 001): the search runs in the Rust core.

The search works in frames of the slot model: a resource carries up to its slots' worth of
transfers in a frame. A schedule with as many frames as the frame bound keeps every bottleneck
busy in every frame; on networks whose transfers all take as long in their slots it is liquid
(its time is Λ). The search finds one, or proves that none exists and then finds the fewest
frames (paper 000 Fig. 7). With a budget it returns the best schedule it knows, the proven
lower bound and the gap.
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from typing import TYPE_CHECKING, Callable

from .. import _core
from ..bounds import compute_bound
from ..errors import InputError
from ..network import Network
from ..schedule import Schedule, ScheduleInfo
from ..symmetry import symmetry_candidates, translation_resource_images, with_resource_images
from ..traffic import Traffic
from ..transfer_routes import cached_transfer_routes
from .at_the_bound import info_at_the_bound
from .baselines import round_robin
from .line_product import line_product
from .orbit_assignment import orbit_assignment
from .torus_design import design_shape, torus_design

if TYPE_CHECKING:
    import numpy as np

#: Search-space reductions of paper 000 that can be switched off (all on by default), plus those
#: of liquidsched: ``memo`` (sub-traffics known to have no schedule), ``guided`` (branching
#: order) and ``bounds`` (lengths beyond Λ proven by transfers that conflict with a whole
#: bottleneck).
REDUCTIONS = ("blank", "idle", "skeleton", "reduced", "full", "memo", "guided", "bounds")


@dataclass(frozen=True)
class SearchProgress:
    """How far :func:`liquid` has gone, as its ``progress`` callable is given it.

    ``phase`` is one of "line product", "torus design", "orbit assignment" (the constructions,
    in Python), "preparing" (the routes and symmetries handed to the core), then the core's
    "starting", "orbit cover", "symmetry group" (the transfers' images under it), "symmetric
    search", "search" and "completion" (the best partial schedule completed when a budget runs
    out or a stop is asked). ``target`` is the length
    searched (the frame bound, or more once a shorter schedule is proven not to exist),
    ``frames`` the frames of the partial schedule at hand, ``deepest`` the most frames a partial
    schedule of this target reached, ``nodes`` the category nodes explored; the counts are 0
    before the core starts."""

    phase: str
    target: int
    frames: int
    deepest: int
    nodes: int
    elapsed_s: float


#: What :func:`liquid` calls with its progress; a true return value asks it to stop with the
#: best schedule it knows.
ProgressCallback = Callable[[SearchProgress], "bool | None"]


class _Watcher:
    """The caller's ``progress`` callable as the search phases call it: with a
    :class:`SearchProgress`; once it has asked to stop, every later phase stops too (a
    callable that asks once, as a Ctrl-C handler's flag does, need not ask again)."""

    def __init__(self, callback: ProgressCallback | None, started: float, frame_bound: int) -> None:
        self.callback = callback
        self.started = started
        self.frame_bound = frame_bound
        self.stop = False

    def enter(self, phase: str) -> bool:
        """Report that a phase of the Python side starts; True once a stop was asked (the
        phase is then skipped, and not reported)."""
        if self.stop:
            return True
        return self.core({"phase": phase, "target": self.frame_bound, "frames": 0, "deepest": 0, "nodes": 0})

    def core(self, raw: dict) -> bool:
        """Report the core's progress (its dict); True once a stop was asked."""
        if self.callback is not None:
            # Before its first target the core reports 0: the frame bound is what it will aim at.
            raw = raw | {"target": raw["target"] or self.frame_bound}
            asked = self.callback(SearchProgress(elapsed_s=time.perf_counter() - self.started, **raw))
            self.stop = self.stop or bool(asked)
        return self.stop


def check_budget(value: float | int | None, name: str) -> None:
    """Refuse a budget that is not a non-negative number (None means no budget)."""
    if value is not None and (isinstance(value, bool) or not value >= 0):
        raise InputError(f"{name} must be a non-negative number, got {value!r}")


def symmetry_group(net: Network, frame_bound: int, images: np.ndarray | None = None) -> list[list[int]]:
    """The largest group of ``net``'s symmetry (:mod:`liquidsched.symmetry`) whose order divides
    the frame bound, as resource permutations (on a torus, rows of its translations' resource
    ``images``, computed when None); empty when there is none."""
    if getattr(net, "symmetry", None) is None:
        return []
    return next(iter(symmetry_candidates(net, frame_bound, images)), [])


def orbit_structure(net: Network, traffic: Traffic, images: np.ndarray | None = None) -> tuple | None:
    """The translations of a torus acting on ``traffic`` as the core's orbit cover takes them
    (:meth:`liquidsched.symmetry.LatticeSymmetry.translation_orbits_of_columns`, with the
    resources' ``images``, computed when None); None where there are none."""
    orbits = getattr(getattr(net, "symmetry", None), "translation_orbits_of_columns", None)
    if orbits is None:
        return None
    structure = orbits(traffic.host_table, traffic.src_index, traffic.dst_index)
    if structure is None:
        return None
    structure = with_resource_images(net, structure, images)
    return None if structure is None else structure.as_core()


def liquid(net: Network, traffic: Traffic, time_limit: float | None = None, node_limit: int | None = None,
           optimize: bool = True, symmetric: bool = True, memo_limit: int | None = None,
           progress: ProgressCallback | None = None, **reductions: bool) -> Schedule:
    """A liquid schedule of ``traffic``, or the optimal one when no liquid schedule exists.

    Parameters
    ----------
    time_limit, node_limit
        Budgets (seconds, category nodes). When one runs out, the best schedule known is
        returned: the deepest partial schedule of the search completed by DSatur, or DSatur's.
        The search leaves of a time limit what DSatur is expected to take on the traffic for
        that (15 % of it at least; when DSatur would need more than two thirds, 15 % and a
        first fit's completion).
    optimize
        When no liquid schedule exists, go on to find and prove the optimal length.
    symmetric
        On a network with a symmetry (tori, meshes), first build a liquid schedule from its
        structure: on a mesh's all-to-all, a product of permutations of its lines
        (:mod:`~liquidsched.schedulers.line_product`, source "line product"); on a square
        torus's all-to-all, a design over its displacement classes
        (:mod:`~liquidsched.schedulers.torus_design`, source "torus design"); on other meshes
        and traffics, base frames whose images under a group of its reflections are the
        schedule, assigned by CP-SAT (:mod:`~liquidsched.schedulers.orbit_assignment`, source
        "orbit assignment"), each construction with two thirds of the budget; on a torus, a
        cover of the translations' orbits by frames that subgroups of them fix (source "orbit
        cover"), then frames the group moves (``stats["symmetry_order"]`` says which order was
        used; 1 when none was).
    memo_limit
        Bytes the search may spend remembering sub-traffics proven to have no schedule
        (256 MiB when None). The memo only saves searching them again: a smaller budget never
        makes a proof wrong or incomplete, only longer. ``stats["memory_bytes"]`` reports what
        the search's tables took, the memo within this budget and the rest in proportion to the
        traffic; ``stats["memo_limit_bytes"]`` the budget.
    progress
        Called with a :class:`SearchProgress` as each phase starts and, while the core searches,
        every 100 ms (the ``plan`` command's progress bar). When it returns a true value the
        search stops as if its time had run out and returns the best schedule it knows
        (``stats["stopped_by"]`` "request"): ``plan`` asks so on a first Ctrl-C. An exception
        it raises ends the search and is raised.
    **reductions
        Any of :data:`REDUCTIONS` set to False switches that reduction off.

    Returns
    -------
    Schedule
        ``info.optimal`` is True when the length is proven optimal; ``info.stats`` holds
        ``nodes_explored``, ``frames_tried``, ``memo_hits``, ``proven_lower_bound``, ``gap``,
        ``stopped_by`` (None, "nodes", "time" or "request"), ``memory_bytes`` (the search's own tables),
        ``memo_limit_bytes``,
        ``symmetry_order`` and ``source`` ("round-robin" when its shifts reach the frame bound
        and no search is needed, "line product", "torus design", "orbit assignment", "search",
        "orbit cover", "symmetric search", "search+dsatur",
        "search+first-fit" when DSatur would not have fitted in the time left, or "dsatur").

    Examples
    --------
    >>> from liquidsched.topologies import two_switch
    >>> from liquidsched.traffic import half_all_to_all
    >>> net = two_switch()
    >>> s = liquid(net, half_all_to_all(net))
    >>> s.length, s.liquid, s.info.optimal
    (6, True, True)
    """
    unknown = set(reductions) - set(REDUCTIONS)
    if unknown:
        raise InputError(f"unknown reduction {sorted(unknown)[0]!r} (known: {', '.join(REDUCTIONS)})")
    check_budget(time_limit, "time limit")
    check_budget(node_limit, "node limit")
    started = time.perf_counter()
    frame_bound = compute_bound(net, traffic).frame_lower_bound
    shifted = _shifts_at_the_bound(net, traffic, frame_bound, optimize)
    if shifted is not None:
        return shifted
    watch = _Watcher(progress, started, frame_bound)
    # Where a design applies and is not found in its share of the budget, the orbit cover and
    # the symmetric search (which find none there either) leave the rest to the plain search.
    # Once a stop is asked, no construction starts: the core gives its best schedule at once.
    use_symmetry = symmetric
    if symmetric and not watch.enter("line product"):
        product = line_product(net, traffic, _construction_budget(time_limit, started), frame_bound)
        if product is not None:
            return product
    if symmetric and design_shape(net, traffic) is not None:
        if not watch.enter("torus design"):
            designed = torus_design(net, traffic, _construction_budget(time_limit, started), frame_bound)
            if designed is not None:
                return designed
        use_symmetry = False
    if use_symmetry and not watch.enter("orbit assignment"):
        assigned = orbit_assignment(net, traffic, _construction_budget(time_limit, started), frame_bound)
        if assigned is not None:
            return assigned
    stopping = watch.enter("preparing")
    use_symmetry = use_symmetry and not stopping
    # The routes' columns: the core makes the paths, with no Python list per transfer.
    paths = cached_transfer_routes(net, traffic).core
    # A torus's translations' resource images serve both the orbit cover and the symmetric search.
    on_torus = use_symmetry and getattr(getattr(net, "symmetry", None), "wrap", False)
    images = translation_resource_images(net) if on_torus else None
    orbits = orbit_structure(net, traffic, images) if use_symmetry else None
    if time_limit is not None:
        # The budget covers the whole call, the conversion of the traffic included.
        time_limit = max(0.0, time_limit - (time.perf_counter() - started))
    raw = _core.liquid_schedule(paths, len(net.resources), slots=net.resource_slots, time_limit=time_limit,
                                node_limit=None if node_limit is None else int(node_limit),
                                optimize=optimize, symmetry=symmetry_group(net, frame_bound, images) if use_symmetry else (),
                                orbits=orbits,
                                memo_bytes=None if memo_limit is None else int(memo_limit),
                                progress=None if progress is None else watch.core, **reductions)
    parameters: dict = {"optimize": optimize, **reductions}
    if not symmetric:
        parameters["symmetric"] = False
    if time_limit is not None:
        parameters["time_limit"] = time_limit
    if node_limit is not None:
        parameters["node_limit"] = node_limit
    if memo_limit is not None:
        parameters["memo_limit"] = memo_limit
    info = ScheduleInfo(
        "liquid",
        parameters=parameters,
        lower_bound=raw["duration"],
        optimal=raw["optimal"],
        stats={
            "nodes_explored": raw["nodes"],
            "frames_tried": raw["frames_tried"],
            "memo_hits": raw["memo_hits"],
            "restarts": raw["restarts"],
            "memory_bytes": raw["memory_bytes"],
            "memo_limit_bytes": raw["memo_limit_bytes"],
            "symmetry_order": raw["symmetry_order"],
            "proven_lower_bound": raw["lower_bound"],
            "gap": len(raw["frames"]) - raw["lower_bound"],
            "stopped_by": raw["stopped_by"],
            "source": raw["source"],
        },
    )
    return Schedule.from_indices(net, traffic, raw["frames"], info)


def _construction_budget(time_limit: float | None, started: float) -> float | None:
    """The seconds a construction without search (a line product, a torus design, an orbit
    assignment) may take: two thirds of what is left of the budget, so that when none is found
    the plain search still has the time to reach DSatur's completion (a first fit in a sixth of
    the budget left 674 frames for 576 on ``torus:dims=16/16``); None without a budget."""
    if time_limit is None:
        return None
    return 2 / 3 * max(0.0, time_limit - (time.perf_counter() - started))


def _shifts_at_the_bound(net: Network, traffic: Traffic, frame_bound: int, optimize: bool) -> Schedule | None:
    """Round-robin's schedule when it has as many frames as the frame bound, as the liquid
    search's answer (no schedule has fewer frames: it is optimal, proven by the bound); None
    otherwise. The shifts of round-robin are contention-free on many networks — D-mod-k fat
    trees among them (an all-to-all's shifts use every link once) — and take milliseconds where
    the search would take minutes to find an equal schedule."""
    shifted = round_robin(net, traffic)
    if shifted.length != frame_bound:
        return None
    shifted.info = info_at_the_bound(frame_bound, "round-robin", {"optimize": optimize})
    return shifted

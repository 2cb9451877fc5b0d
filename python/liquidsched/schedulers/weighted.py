"""Steps for traffics of any sizes on any network with slots: the ``weighted`` scheduler, and the
fractional optimum it is measured against.

Transfers of uneven sizes (``MPI_Alltoallv``, mixture-of-experts dispatch) do not fit whole in
frames of equal length: pieces do. Each step is a slot-valid frame that serves first the
transfers whose path holds the most loaded resource (remaining time over slots: the critical
resources of the liquid search), and lasts as long as its shortest remaining piece, or a quantum
(β by default) while longer pieces remain; what a transfer does not send in a step is carried
over. A step costs β. The step builder runs in the core.

Its time is compared with Λ + β·(frame bound) — no schedule of frames does better — and, on
small instances, with the fractional optimum without β (:func:`fractional_frame_optimum`).
"""

from __future__ import annotations

from fractions import Fraction

from .. import _core
from ..bounds import transfer_slot_times_s
from ..errors import ProblemTooLargeError
from ..interrupt import run_highs
from ..network import Network
from ..schedule import Piece, Schedule, ScheduleInfo, frames_of_shares
from ..traffic import Traffic

#: The time budget of the liquid search that ``weighted`` also runs when every transfer takes
#: the same time (the exact frame scheduler then; the better schedule is kept).
EQUAL_TIMES_SEARCH_S = 10.0


def weighted(net: Network, traffic: Traffic, overhead_s: float = 0.0, quantum_s: float | None = None) -> Schedule:
    """Steps of pieces for a traffic of any sizes (see the module).

    Parameters
    ----------
    overhead_s
        β, the cost of a step.
    quantum_s
        The shortest step while longer pieces remain. By default the best of β, 2β, 4β, … up to
        the longest transfer, by the cost Σ(β + step length) of the steps each gives (the core
        builds them in a fraction of a second): longer steps cost fewer β but leave slots idle
        once short pieces end.

    Examples
    --------
    >>> from liquidsched.topologies import backbone
    >>> from liquidsched.traffic import Traffic, Transfer
    >>> net = backbone(3, 3, card_Bps=1e6, backbone_Bps=2e6)      # k = 2: paper 004 Fig. 2
    >>> t = Traffic([Transfer("a1", "b1", 10**6), Transfer("a2", "b2", 10**6), Transfer("a3", "b3", 2 * 10**6)])
    >>> s = weighted(net, t)
    >>> s.length, float(s.makespan_s())                            # the big one beside each small one
    (2, 2.0)
    """
    beta = Fraction(overhead_s)
    times = transfer_slot_times_s(net, traffic)
    paths, seconds = traffic.resource_lists(net), [float(t) for t in times]
    candidates = [float(quantum_s)] if quantum_s is not None else _quanta(float(beta), max(seconds))
    best = None
    for quantum in candidates:
        steps = _core.weighted_steps(paths, len(net.resources), seconds, slots=net.resource_slots, quantum=quantum)
        cost = sum(float(beta) + length for length, _ in steps)
        if best is None or cost < best[0]:
            best = (cost, quantum, steps)
    _, quantum, raw = best
    schedule = Schedule(net, traffic, _pieces_of_steps(traffic, times, raw),
                        ScheduleInfo("weighted", parameters={"overhead_s": float(beta), "quantum_s": quantum}))
    cost = schedule.makespan_s(beta)
    if len(set(times)) == 1:
        from .liquid import liquid

        searched = liquid(net, traffic, time_limit=EQUAL_TIMES_SEARCH_S)
        searched_cost = searched.makespan_s(beta)
        if searched_cost < cost:
            searched.info.algorithm = "weighted"
            searched.info.parameters = schedule.info.parameters
            searched.info.stats = dict(searched.info.stats, source="liquid search (equal times)")
            schedule, cost = searched, searched_cost
    bound = schedule.bound  # Λ and the frame bound, computed once and kept with the schedule
    floor = bound.duration_s + beta * bound.frame_lower_bound
    schedule.info.stats = dict(schedule.info.stats, cost_s=float(cost), steps_bound_s=float(floor),
                               cost_over_bound=float(cost / floor) if floor else 1.0)
    return schedule


def _quanta(beta: float, longest: float) -> list[float]:
    """β, 2β, 4β, … up to the longest transfer (0 alone when β = 0: steps then cost nothing)."""
    quanta = [beta]
    while 0 < quanta[-1] < longest:
        quanta.append(quanta[-1] * 2)
    return quanta


def _pieces_of_steps(traffic: Traffic, times: list[Fraction], raw: list) -> list[list[Piece]]:
    """Frames of whole-byte pieces from the core's steps of times: each transfer's bytes cut at
    its cumulated share of time, the last piece taking the rest."""
    sizes = [t.size_bytes for t in traffic]
    seconds = [float(t) for t in times]

    def upto(t: int, done: float) -> int:
        share = done / seconds[t]
        return sizes[t] if share >= 1 - 1e-12 else min(sizes[t], int(sizes[t] * share))

    return frames_of_shares(traffic, (pieces for _, pieces in raw), upto)


#: The node budgets of the pricing search of :func:`fractional_frame_optimum`: a quick one that
#: usually finds a frame worth adding, and the one that must prove none is left.
QUICK_PRICING_NODES = 2_000
PRICING_NODE_LIMIT = 20_000_000
#: Frames added to the master per round at most.
COLUMNS_PER_ROUND = 4


def fractional_frame_optimum(net: Network, traffic: Traffic, max_rounds: int = 5000,
                             smoothing: float = 0.5) -> Fraction:
    """The least total time of frames covering every transfer's time when a transfer may be
    split at will (no β): the linear program min Σ_F x_F subject to Σ_{F∋t} x_F ≥ time_t over
    all slot-valid frames F, by column generation.

    The master program over the frames found so far is solved in HiGHS, warm-started as frames
    are added. New frames are priced by the core's branch and bound
    (:func:`liquidsched._core.heaviest_frame`: the slot-valid frame of largest total dual).
    Two lower bounds end the search as soon as the master meets one: the resources' floor
    max_r Σ_{t∋r} time_t / slots_r, and Farley's bound Σ π_t·time_t / max_F π(F) for any duals π
    whose heaviest frame is proven. Equal sizes make the master degenerate (its duals jump
    between vertices and new frames do not lower its value), so pricing is done at duals
    smoothed towards those of the best bound so far (Wentges), ``smoothing`` being the weight
    of the latter.

    A lower bound on the time of any schedule of frames without β, and at least Λ.

    Raises
    ------
    ProblemTooLargeError
        when the pricing search cannot prove within :data:`PRICING_NODE_LIMIT` nodes which
        frame is heaviest, or the master does not settle within ``max_rounds`` frames: the
        value found would not be proven.

    Examples
    --------
    >>> from liquidsched.topologies import two_switch
    >>> from liquidsched.traffic import half_all_to_all
    >>> net = two_switch()
    >>> fractional_frame_optimum(net, half_all_to_all(net)) * 100    # 6 frames of 10 ms
    Fraction(6, 1)
    """
    paths = traffic.resource_lists(net)
    resources, slots = len(net.resources), net.resource_slots
    times = transfer_slot_times_s(net, traffic)
    seconds = [float(t) for t in times]
    floor = _resource_floor(paths, slots, times)
    master = _CoverMaster(seconds)
    # Start from the frames of DSatur and of the weighted steps: often one of them is optimal.
    for frame in _core.dsatur(paths, resources, slots=slots):
        master.add(frame)
    for _, pieces in _core.weighted_steps(paths, resources, seconds, slots=slots):
        master.add([t for t, _ in pieces])

    def heaviest(duals: list[float], node_limit: int) -> tuple[list[int], float, bool]:
        frame, worth, proven, _ = _core.heaviest_frame(paths, resources, duals, slots=slots, node_limit=node_limit)
        return frame, worth, proven

    def quick_frames(duals: list[float]) -> list[list[int]]:
        """Up to COLUMNS_PER_ROUND heavy frames: each next one found with the transfers of
        those before at no weight, so that one round covers more of the transfers."""
        weights, frames = list(duals), []
        for _ in range(COLUMNS_PER_ROUND):
            frame, worth, _ = heaviest(weights, QUICK_PRICING_NODES)
            if worth <= 0:
                break
            frames.append(frame)
            for t in frame:
                weights[t] = 0.0
        return frames

    def worth_at(duals: list[float], frame: list[int]) -> float:
        return sum(duals[t] for t in frame)

    # Duals come from floating point: a frame worth a hair above 1 does not lower the value.
    tolerance = 1e-9
    best_bound, center = float(floor), None
    for _ in range(max_rounds):
        value, duals = master.solve()
        if value <= float(floor) * (1 + tolerance):
            return floor
        if value <= best_bound * (1 + tolerance):
            return Fraction(value).limit_denominator(10**9)
        point = duals if center is None else [smoothing * c + (1 - smoothing) * d for c, d in zip(center, duals)]
        found = 0
        for frame in quick_frames(point):
            if worth_at(duals, frame) > 1 + tolerance:
                master.add(frame)
                found += 1
        if found:
            continue
        frame, worth, proven = heaviest(point, PRICING_NODE_LIMIT)
        if not proven:
            raise ProblemTooLargeError(f"the fractional optimum is not proven: the heaviest frame was not found "
                                       f"within {PRICING_NODE_LIMIT:,} nodes")
        bound = sum(p * t for p, t in zip(point, seconds)) / worth
        if worth_at(duals, frame) > 1 + tolerance:
            master.add(frame)
            if bound > best_bound:
                best_bound, center = bound, point
        else:
            # Mis-priced: the smoothed point's bound is better than the centre's; move there.
            best_bound, center = max(best_bound, bound), point
    raise ProblemTooLargeError(f"the fractional optimum did not settle within {max_rounds} frames")


def _resource_floor(paths: list[list[int]], slots: list[int], times: list[Fraction]) -> Fraction:
    """max over resources r of Σ_{t∋r} time_t / slots_r: a frame of length x carries at most
    slots_r transfers through r for x each."""
    load: dict[int, Fraction] = {}
    for path, time in zip(paths, times):
        for r in path:
            load[r] = load.get(r, Fraction(0)) + time
    return max((v / slots[r] for r, v in load.items()), default=Fraction(0))


class _CoverMaster:
    """The master program min Σ x_F subject to Σ_{F∋t} x_F ≥ times[t], one column per frame."""

    def __init__(self, times: list[float]):
        import highspy
        import numpy as np

        self._np = np
        self._inf = highspy.kHighsInf
        self._highs = highspy.Highs()
        self._highs.silent()
        # Presolve would rebuild the problem at every solve and lose the warm start.
        self._highs.setOptionValue("presolve", "off")
        # New columns keep the basis primal feasible: primal simplex goes on from it.
        self._highs.setOptionValue("simplex_strategy", 4)
        n = len(times)
        self._highs.addRows(n, np.asarray(times, dtype=float), np.full(n, self._inf), 0,
                            np.zeros(n + 1, dtype=np.int32), np.zeros(0, dtype=np.int32), np.zeros(0))

    def add(self, frame: list[int]) -> None:
        """A column of cost 1 covering the transfers of ``frame``."""
        np = self._np
        rows = np.asarray(frame, dtype=np.int32)
        self._highs.addCol(1.0, 0.0, self._inf, len(rows), rows, np.ones(len(rows)))

    def solve(self) -> tuple[float, list[float]]:
        """The value of the master over the columns so far and the duals of its cover rows."""
        run_highs(self._highs)
        return self._highs.getInfo().objective_function_value, list(self._highs.getSolution().row_dual)

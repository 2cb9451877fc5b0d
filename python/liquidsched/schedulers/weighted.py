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


#: The largest traffic whose fractional optimum is computed (the pricing problem is a MILP).
FRACTIONAL_MAX_TRANSFERS = 60


def fractional_frame_optimum(net: Network, traffic: Traffic, max_rounds: int = 500) -> Fraction:
    """The least total time of frames covering every transfer's time when a transfer may be
    split at will (no β): the linear program min Σ_F x_F subject to Σ_{F∋t} x_F ≥ time_t over
    all slot-valid frames F, by column generation with HiGHS — the master over the frames found
    so far, a new frame priced by a small MILP (the most valuable slot-valid frame at the
    master's duals) until none improves.

    A lower bound on the time of any schedule of frames without β, and at least Λ.

    Raises
    ------
    ProblemTooLargeError
        above :data:`FRACTIONAL_MAX_TRANSFERS` transfers.

    Examples
    --------
    >>> from liquidsched.topologies import two_switch
    >>> from liquidsched.traffic import half_all_to_all
    >>> net = two_switch()
    >>> fractional_frame_optimum(net, half_all_to_all(net)) * 100    # 6 frames of 10 ms
    Fraction(6, 1)
    """
    import highspy

    paths = traffic.resource_lists(net)
    if len(paths) > FRACTIONAL_MAX_TRANSFERS:
        raise ProblemTooLargeError(f"the fractional optimum takes up to {FRACTIONAL_MAX_TRANSFERS} transfers, "
                                   f"got {len(paths)}")
    times = [float(t) for t in transfer_slot_times_s(net, traffic)]
    slots = net.resource_slots
    columns = [frozenset(f) for f in _core.dsatur(paths, len(net.resources), slots=slots)]
    columns += [frozenset([t]) for t in range(len(paths))]
    value = 0.0
    for _ in range(max_rounds):
        value, duals = _master(highspy, columns, times)
        frame, worth = _price(highspy, paths, slots, duals)
        if worth <= 1 + 1e-9 or frame in columns:
            break
        columns.append(frame)
    return Fraction(value).limit_denominator(10**9)


def _master(highspy, columns: list[frozenset[int]], times: list[float]) -> tuple[float, list[float]]:
    """The master LP over ``columns``: its value and the duals of the cover rows."""
    h = highspy.Highs()
    h.silent()
    x = [h.addVariable(lb=0) for _ in columns]
    for t, need in enumerate(times):
        h.addConstr(sum(x[c] for c, frame in enumerate(columns) if t in frame) >= need)
    h.minimize(sum(x))
    return h.getInfo().objective_function_value, list(h.getSolution().row_dual)


def _price(highspy, paths: list[list[int]], slots: list[int], duals: list[float]) -> tuple[frozenset[int], float]:
    """The slot-valid frame of largest total dual, and that total."""
    h = highspy.Highs()
    h.silent()
    z = [h.addVariable(lb=0, ub=1, type=highspy.HighsVarType.kInteger) for _ in paths]
    users: dict[int, list[int]] = {}
    for t, path in enumerate(paths):
        for r in path:
            users.setdefault(r, []).append(t)
    for r, ts in users.items():
        if len(ts) > slots[r]:
            h.addConstr(sum(z[t] for t in ts) <= slots[r])
    h.maximize(sum(max(d, 0.0) * z[t] for t, d in enumerate(duals)))
    chosen = frozenset(t for t in range(len(paths)) if h.val(z[t]) > 0.5)
    return chosen, sum(duals[t] for t in chosen)

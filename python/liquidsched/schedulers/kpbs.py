"""KPBS redistributions (paper 004): GGP and OGGP, and the KPBS lower bound.

A KPBS instance is a traffic whose every path is its sender's own links, its receiver's own links
and at most one resource shared by several senders and receivers — the backbone, which carries
``k`` transfers at once (its slots). A step is a frame in which each host sends and receives at
most one piece and the backbone carries at most ``k``; it costs β (the per-step overhead) plus
its longest piece; the schedule's cost is the sum over its steps. Pieces: a transfer may be cut
and resumed in a later step.

GGP and OGGP (Cohen, Jeannot, Padoy, Wagner) run in the core on weights in units of β, each
transfer's time at its slot rate rounded up to whole units; with β = 0 the unit is the largest
common divisor of the times over k, so nothing is rounded. They complete the bipartite graph to a
weight-regular one whose perfect matchings have exactly ``k`` real edges and peel perfect
matchings off it (OGGP: the one whose smallest weight is largest). On weights that are whole
multiples of β a schedule costs at most twice the lower bound.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from fractions import Fraction
from typing import Sequence

from .. import _core
from ..bounds import transfer_slot_times_s
from ..errors import InputError, TrafficError
from ..interrupt import run_highs
from ..network import Network
from ..schedule import Schedule, ScheduleInfo, frames_of_shares
from ..traffic import Traffic

#: The largest weight, in units, given to the core when β = 0 and the times' common divisor
#: would make weights larger (the unit is then coarser, and weights are rounded up).
MAX_UNITS = 2**40


@dataclass(frozen=True)
class KpbsInstance:
    """A traffic seen as KPBS: senders, receivers, one edge per transfer, the transfers' times at
    their slot rates, the backbone and its ``k``."""

    senders: list[str]
    receivers: list[str]
    #: (sender index, receiver index) of each transfer, in traffic order
    edges: list[tuple[int, int]]
    times_s: list[Fraction]
    k: int
    #: the resource every transfer shares, or None when none is shared (k is then unbounded)
    backbone: str | None


def kpbs_instance(net: Network, traffic: Traffic) -> KpbsInstance:
    """The KPBS structure of ``traffic`` on ``net``.

    A resource crossed by transfers of one sender only is that sender's port, one crossed by
    transfers of one receiver only is that receiver's; any other is shared, and KPBS allows one,
    the same for every transfer.

    Raises
    ------
    TrafficError
        naming a transfer whose path does not fit.

    Examples
    --------
    >>> from liquidsched.topologies import backbone
    >>> from liquidsched.traffic import all_to_all
    >>> net = backbone(3, 3)
    >>> inst = kpbs_instance(net, all_to_all(net, net.hosts()))
    >>> inst.backbone, inst.k, len(inst.edges)
    ('A>B', 5, 9)
    """
    traffic.check(net)
    sets = traffic.resource_sets(net)
    senders_of: dict[int, set[str]] = {}
    receivers_of: dict[int, set[str]] = {}
    for t, path in zip(traffic, sets):
        for r in path:
            senders_of.setdefault(r, set()).add(t.src)
            receivers_of.setdefault(r, set()).add(t.dst)
    shared = {r for r in senders_of if len(senders_of[r]) > 1 and len(receivers_of[r]) > 1}
    backbone: int | None = None
    for name, path in zip(traffic.names, sets):
        crossed = sorted(path & shared)
        if len(crossed) > 1:
            listed = ", ".join(net.resources[r] for r in crossed)
            raise TrafficError(f"transfer {name} crosses {len(crossed)} shared resources ({listed}); "
                               "KPBS allows one backbone")
        if crossed:
            if backbone is not None and crossed[0] != backbone:
                raise TrafficError(f"transfer {name} crosses {net.resources[crossed[0]]}, not the backbone "
                                   f"{net.resources[backbone]} the others share; KPBS has one backbone")
            backbone = crossed[0]
    if backbone is not None:
        missing = next((n for n, p in zip(traffic.names, sets) if backbone not in p), None)
        if missing is not None:
            raise TrafficError(f"transfer {missing} does not cross the backbone {net.resources[backbone]} "
                               "the others share; KPBS needs every transfer through it")
    senders = list(dict.fromkeys(t.src for t in traffic))
    receivers = list(dict.fromkeys(t.dst for t in traffic))
    s_index = {h: i for i, h in enumerate(senders)}
    r_index = {h: i for i, h in enumerate(receivers)}
    k = net.resource_slots[backbone] if backbone is not None else min(len(senders), len(receivers))
    return KpbsInstance(senders, receivers, [(s_index[t.src], r_index[t.dst]) for t in traffic],
                        transfer_slot_times_s(net, traffic), k,
                        None if backbone is None else net.resources[backbone])


def _common_unit(times: Sequence[Fraction]) -> Fraction:
    """The largest time dividing every one of ``times``."""
    scale = math.lcm(*(t.denominator for t in times))
    return Fraction(math.gcd(*(t.numerator * (scale // t.denominator) for t in times)), scale)


def kpbs_units(instance: KpbsInstance, overhead_s: Fraction) -> tuple[Fraction, list[int]]:
    """The unit of time and each transfer's weight in it, rounded up. The unit is β; when
    β = 0 it is the times' common divisor over ``k``, so that P/k is whole too and peeling
    reaches max(W, P/k) exactly."""
    if overhead_s > 0:
        unit = overhead_s
        longest = max(instance.times_s, default=Fraction(0))
        if longest / unit > MAX_UNITS:
            # Whole units of β beyond MAX_UNITS overflow the core's integers: refused, not rounded.
            raise InputError(f"overhead_s (--overhead) {float(unit):g} s is too small beside the longest transfer "
                             f"({float(longest):g} s): in units of β its weight would pass {MAX_UNITS:,}; give a β "
                             f"of at least {float(longest / MAX_UNITS):.3g} s, or 0")
    else:
        unit = max(_common_unit(instance.times_s) / min(instance.k, len(instance.edges)),
                   max(instance.times_s) / MAX_UNITS)
    return unit, [max(1, math.ceil(t / unit)) for t in instance.times_s]


def kpbs_lower_bound_s(instance: KpbsInstance, overhead_s: Fraction | float = 0) -> Fraction:
    """The least cost of any KPBS schedule: β·max(Δ, ⌈|E|/k⌉) + max(W, P/k), exactly.

    Δ is the largest number of transfers of one host (each needs its own step, 1-port) and
    ⌈|E|/k⌉ the fewest steps that hold every transfer; W is the largest time of one host and P
    the total time (the backbone carries at most k at once).

    Examples
    --------
    >>> from liquidsched.topologies import backbone
    >>> from liquidsched.traffic import Traffic, Transfer
    >>> net = backbone(3, 3, card_Bps=1e6, backbone_Bps=2e6)     # k = 2; paper 004 Fig. 2
    >>> t = Traffic([Transfer("a1", "b1", 10**6), Transfer("a2", "b2", 10**6), Transfer("a3", "b3", 2 * 10**6)])
    >>> kpbs_lower_bound_s(kpbs_instance(net, t), Fraction(1, 10))
    Fraction(11, 5)
    """
    beta = Fraction(overhead_s)
    k = instance.k
    degree: dict[tuple[int, int], int] = {}
    load: dict[tuple[int, int], Fraction] = {}
    for (s, r), t in zip(instance.edges, instance.times_s):
        for v in ((0, s), (1, r)):
            degree[v] = degree.get(v, 0) + 1
            load[v] = load.get(v, Fraction(0)) + t
    steps = max(max(degree.values(), default=0), -(-len(instance.edges) // k))
    data = max(max(load.values(), default=Fraction(0)), sum(instance.times_s, Fraction(0)) / k)
    return beta * steps + data


#: The schedulers that peel matchings in the core, by the matching each step takes.
PEELING = {"ggp": "any", "oggp": "bottleneck", "solstice": "threshold"}


def _peel(net: Network, traffic: Traffic, overhead_s: float, name: str) -> Schedule:
    beta = Fraction(overhead_s)
    if beta < 0:
        raise TrafficError(f"overhead must be non-negative, got {overhead_s}")
    instance = kpbs_instance(net, traffic)
    unit, weights = kpbs_units(instance, beta)
    edges = [(s, r, w) for (s, r), w in zip(instance.edges, weights)]
    steps, degree, peels = _core.kpbs_peel(len(instance.senders), len(instance.receivers), edges, instance.k,
                                           strategy=PEELING[name])
    sizes = [t.size_bytes for t in traffic]
    # Bytes in proportion to the units done.
    frames = frames_of_shares(traffic, (pieces for _, pieces in steps), lambda e, units: sizes[e] * units // weights[e])
    info = ScheduleInfo(name, parameters={"overhead_s": float(beta), "k": instance.k})
    schedule = Schedule(net, traffic, frames, info)
    bound = kpbs_lower_bound_s(instance, beta)
    cost = schedule.makespan_s(beta)  # Σ (β + longest piece): the KPBS cost
    info.stats = {"backbone": instance.backbone, "k": instance.k, "unit_s": float(unit), "peels": peels,
                  "regular_degree_units": degree, "cost_s": float(cost), "kpbs_lower_bound_s": float(bound),
                  "cost_over_bound": float(cost / bound) if bound else 1.0}
    return schedule


def ggp(net: Network, traffic: Traffic, overhead_s: float = 0.0) -> Schedule:
    """GGP (paper 004): peel any perfect matching of the completed graph at each step.

    Examples
    --------
    >>> from liquidsched.topologies import backbone
    >>> from liquidsched.traffic import Traffic, Transfer
    >>> net = backbone(2, 2, card_Bps=1e6, backbone_Bps=1e6)     # k = 1: one transfer at a time
    >>> s = ggp(net, Traffic([Transfer("a1", "b1", 10**6), Transfer("a2", "b2", 10**6)]), overhead_s=0.1)
    >>> s.length, s.info.stats["cost_s"]                          # 2 steps of 1 s: 2 + 2β
    (2, 2.2)
    """
    return _peel(net, traffic, overhead_s, "ggp")


def oggp(net: Network, traffic: Traffic, overhead_s: float = 0.0) -> Schedule:
    """OGGP (paper 004): peel the perfect matching whose smallest weight is largest, so that
    steps are as long as they can be and fewer."""
    return _peel(net, traffic, overhead_s, "oggp")


def solstice(net: Network, traffic: Traffic, overhead_s: float = 0.0) -> Schedule:
    """Solstice (Liu et al., CoNEXT 2015), the scheduler of circuit switches with a
    reconfiguration delay (β here): slices are perfect matchings of entries at or above a
    threshold that starts at the largest power of two not above the heaviest entry and halves
    when no such matching exists, never rising again. Its stuffing to a regular matrix is GGP's
    completion here, so that every slice has exactly ``k`` real transfers (Solstice itself
    assumes a full crossbar); no approximation factor is proven for it."""
    return _peel(net, traffic, overhead_s, "solstice")


#: The largest traffic whose all-at-once time is predicted beside a KPBS schedule (the fluid
#: simulation grows as the square of the transfers).
PREDICTION_MAX_TRANSFERS = 20_000


def kpbs_prediction(schedule: Schedule) -> dict:
    """Paper 004 §3's three figures side by side: the schedule's step cost Σ(β + longest
    piece), the KPBS lower bound, and the time of every transfer sent at once (β once, then
    the fluid model's fair sharing), or None above :data:`PREDICTION_MAX_TRANSFERS`."""
    from ..simulate import simulate

    stats = schedule.info.stats
    beta = schedule.info.parameters.get("overhead_s", 0.0)
    brute = None
    if len(schedule.traffic) <= PREDICTION_MAX_TRANSFERS:
        brute = beta + simulate(schedule, "fluid", "all-at-once").makespan_s
    return {"scheduled_s": stats["cost_s"], "lower_bound_s": stats["kpbs_lower_bound_s"], "all_at_once_s": brute}


#: The largest instance the exact reference takes: transfers, and steps it may consider.
EXACT_MAX_TRANSFERS = 36
EXACT_MAX_STEPS = 40


def kpbs_optimum(net: Network, traffic: Traffic, overhead_s: float = 0.0, time_limit: float = 60.0) -> Schedule:
    """The least-cost KPBS schedule of a small instance, by a MILP solved with HiGHS: the
    exact reference GGP and OGGP are measured against (as paper 000 has its MILP).

    Steps ``s`` up to the number the cost of an OGGP schedule allows (each costs at least β):
    ``z_s`` says step ``s`` is used (used steps first), ``y_es`` that transfer ``e`` has a piece
    in it, ``x_es`` the piece's length (any real time), ``m_s`` the step's length. Each transfer
    gets its whole time, each host at most one piece a step, the backbone at most ``k``; the cost
    Σ (β z_s + m_s) is minimised. The schedule's ``info.optimal`` says whether HiGHS proved it.

    Raises
    ------
    ProblemTooLargeError
        above :data:`EXACT_MAX_TRANSFERS` transfers or :data:`EXACT_MAX_STEPS` steps.
    """
    from ..errors import BackendError, ProblemTooLargeError

    try:
        import highspy
    except ImportError as e:  # e.g. a highspy whose HiGHS differs from the one OR-Tools loaded
        raise BackendError(f"HiGHS (highspy) cannot be loaded: {e}") from None

    beta = Fraction(overhead_s)
    instance = kpbs_instance(net, traffic)
    if len(instance.edges) > EXACT_MAX_TRANSFERS:
        raise ProblemTooLargeError(f"the exact KPBS reference takes up to {EXACT_MAX_TRANSFERS} transfers, "
                                   f"got {len(instance.edges)}")
    heuristic = oggp(net, traffic, float(beta))
    ceiling = heuristic.makespan_s(beta)
    steps = heuristic.length if beta == 0 else min(int(ceiling / beta), len(instance.edges) * heuristic.length)
    steps = max(steps, heuristic.length)
    if steps > EXACT_MAX_STEPS:
        raise ProblemTooLargeError(f"the exact KPBS reference considers up to {EXACT_MAX_STEPS} steps, "
                                   f"this instance may need {steps}")
    times = [float(t) for t in instance.times_s]
    h = highspy.Highs()
    h.silent()
    h.setOptionValue("time_limit", float(time_limit))
    binary = {"lb": 0, "ub": 1, "type": highspy.HighsVarType.kInteger}
    z = [h.addVariable(**binary) for _ in range(steps)]
    m = [h.addVariable(lb=0) for _ in range(steps)]
    y = [[h.addVariable(**binary) for _ in range(steps)] for _ in times]
    x = [[h.addVariable(lb=0, ub=w) for _ in range(steps)] for w in times]
    for e, w in enumerate(times):
        h.addConstr(sum(x[e]) == w)
        for s in range(steps):
            h.addConstr(x[e][s] <= w * y[e][s])
            h.addConstr(x[e][s] <= m[s])
    for side in (0, 1):
        for v in range(len(instance.senders) if side == 0 else len(instance.receivers)):
            mine = [e for e, ends in enumerate(instance.edges) if ends[side] == v]
            for s in range(steps):
                h.addConstr(sum(y[e][s] for e in mine) <= z[s])
    for s in range(steps):
        h.addConstr(sum(y[e][s] for e in range(len(times))) <= instance.k * z[s])
        if s:
            h.addConstr(z[s] <= z[s - 1])  # used steps first: fewer equal solutions
    h.setObjective(sum(float(beta) * z[s] + m[s] for s in range(steps)), highspy.ObjSense.kMinimize)
    run_highs(h)
    status = h.modelStatusToString(h.getModelStatus())
    if status not in ("Optimal", "Time limit reached") or h.getInfo().primal_solution_status != 2:
        return heuristic
    sizes = [t.size_bytes for t in traffic]
    # A piece is where y says so: within HiGHS's integrality tolerance an unused y may be 1e-7
    # and its x as large as w * 1e-7, a sliver that would put two pieces of one host in a step.
    shares = [[(e, share) for e, w in enumerate(times)
               if h.val(y[e][s]) > 0.5
               and (share := Fraction(h.val(x[e][s])).limit_denominator(10**9) / Fraction(w).limit_denominator(10**9))
               > 1e-9] for s in range(steps)]
    # Shares rounded to whole bytes, the last piece taking the rest.
    frames = frames_of_shares(traffic, shares,
                              lambda e, done: sizes[e] if done >= 1 - Fraction(1, 10**6) else int(sizes[e] * done))
    proven = status == "Optimal"
    info = ScheduleInfo("kpbs-milp", parameters={"overhead_s": float(beta), "k": instance.k},
                        optimal=None, stats={"proven": proven, "steps_considered": steps,
                                             "objective_s": h.getInfo().objective_function_value,
                                             "dual_bound_s": h.getInfo().mip_dual_bound})
    return Schedule(net, traffic, frames, info)

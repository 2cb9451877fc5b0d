"""The linear programs of paper 003: SSSP (series of scatters, §3.1), SSPA2A (series of
personalized all-to-alls, §3.5) and SSR (series of reduces, §4.2), built sparse with exact
coefficients and solved by HiGHS.

Time is in seconds: ``send(e, t)`` is the messages of type ``t`` crossing edge ``e`` per second,
``cons(i, T)`` the tasks ``T`` processor ``i`` computes per second, and the objective ``TP`` the
operations per second. The edge-occupation variables ``s(i → j)`` of the paper are substituted
into the one-port rows, where they appear only as sums.

As printed, the programs let a target send its own messages away and get them back, and count
them as delivered again: on a three-node chain ``s – a – b`` with targets ``a`` and ``b`` (``s → a``
costing 1, ``a ↔ b`` 1/10), SSSP as printed gives 5 where 1/2 is the truth: ``a`` and ``b`` pass
their messages back and forth and the source sends nothing (``tests/test_steady.py``). A message is
never forwarded by its final destination nor sent to its origin, so those variables are not
created (``as_printed=True`` creates them, for that test). The same holds for the all-to-all
(``m_{k,l}`` never leaves ``l`` nor enters ``k``) and the reduce (``v[0,N]`` never leaves the
target, ``v[k,k]`` never returns to its owner).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from fractions import Fraction
from typing import Any

from ..errors import BackendError, InputError
from ..interrupt import run_highs
from .platform import Platform
from .series import ALL_TO_ALL, REDUCE, SCATTER, Series


@dataclass(frozen=True)
class Send:
    """``send(edge, type)``: messages of a type crossing a platform edge per unit of time."""

    edge: int
    type: Any


@dataclass(frozen=True)
class Cons:
    """``cons(node, task)``: reduction tasks ``(k, l, m)`` a processor computes per unit of time."""

    node: int
    task: tuple[int, int, int]


THROUGHPUT = "TP"


@dataclass
class LinearProgram:
    """``maximize`` (or ``minimize``) ``objective · x`` subject to ``lower ≤ A x ≤ upper`` and
    ``x ≥ 0``, with exact rows; the objective is ``TP`` unless changed."""

    columns: list[Any]
    rows: list[dict[int, Fraction]]
    row_lower: list[Fraction | None]
    row_upper: list[Fraction | None]
    row_names: list[str]
    column_index: dict[Any, int] = field(default_factory=dict)
    objective: dict[int, Fraction] = field(default_factory=dict)
    maximize: bool = True

    @property
    def objective_column(self) -> int:
        return self.column_index[THROUGHPUT]

    def add_row(self, name: str, coefficients: dict[int, Fraction], lower: Fraction | None,
                upper: Fraction | None) -> None:
        self.rows.append({c: v for c, v in coefficients.items() if v != 0})
        self.row_lower.append(lower)
        self.row_upper.append(upper)
        self.row_names.append(name)


@dataclass
class LpSolution:
    """HiGHS's optimum: the values (floats), and the basis that makes them exact."""

    values: list[float]
    objective: float
    column_basic: list[bool]
    column_at_upper: list[bool]
    row_basic: list[bool]
    row_at_upper: list[bool]
    iterations: int


def build_program(platform: Platform, series: Series, as_printed: bool = False) -> LinearProgram:
    """The LP of ``series`` on ``platform``: SSSP, SSPA2A or SSR."""
    series.check(platform)
    lp = LinearProgram([], [], [], [], [])
    types = series.message_types()
    index = platform.index

    def allowed(e: int, t: Any) -> bool:
        """Whether type ``t`` may cross edge ``e`` (never out of its destination, never into
        its origin, unless ``as_printed``)."""
        if as_printed:
            return True
        src, dst = platform.edges[e].src, platform.edges[e].dst
        if series.kind == SCATTER:
            return src != t and dst != series.root
        if series.kind == ALL_TO_ALL:
            return src != t[1] and dst != t[0]
        k, m = t
        if (k, m) == (0, len(series.participants) - 1) and src == series.root:
            return False
        return not (k == m and dst == series.participants[k])

    for e in range(len(platform.edges)):
        for t in types:
            if allowed(e, t):
                lp.column_index[Send(e, t)] = len(lp.columns)
                lp.columns.append(Send(e, t))
    if series.kind == REDUCE:
        for i, name in enumerate(platform.names):
            if not platform.nodes[name].is_router:
                for task in series.tasks():
                    lp.column_index[Cons(i, task)] = len(lp.columns)
                    lp.columns.append(Cons(i, task))
    lp.column_index[THROUGHPUT] = len(lp.columns)
    lp.columns.append(THROUGHPUT)
    tp = lp.column_index[THROUGHPUT]
    lp.objective = {tp: Fraction(1)}

    sends_on: dict[int, list[int]] = {}
    for col, var in enumerate(lp.columns):
        if isinstance(var, Send):
            sends_on.setdefault(var.edge, []).append(col)
    for i, name in enumerate(platform.names):
        for side, edges in (("sends", platform.out_edges[i]), ("receives", platform.in_edges[i])):
            row: dict[int, Fraction] = {}
            for e in edges:
                cost = platform.edges[e].cost_s_per_byte
                for col in sends_on.get(e, []):
                    row[col] = series.size(lp.columns[col].type) * cost
            if row:
                lp.add_row(f"one-port: {name} {side}", row, None, Fraction(1))
    if series.kind == REDUCE:
        for i, name in enumerate(platform.names):
            if not platform.nodes[name].is_router:
                work = series.task_flops / platform.speed(name)
                lp.add_row(f"compute: {name}", {lp.column_index[Cons(i, task)]: work for task in series.tasks()},
                           None, Fraction(1))

    flow: dict[tuple[int, Any], dict[int, Fraction]] = {}

    def add_flow(node: int, t: Any, col: int, sign: int) -> None:
        row = flow.setdefault((node, t), {})
        row[col] = row.get(col, Fraction(0)) + sign

    for col, var in enumerate(lp.columns):
        if isinstance(var, Send):
            edge = platform.edges[var.edge]
            add_flow(index[edge.dst], var.type, col, +1)
            add_flow(index[edge.src], var.type, col, -1)
        elif isinstance(var, Cons):
            k, l, m = var.task
            add_flow(var.node, (k, m), col, +1)
            add_flow(var.node, (k, l), col, -1)
            add_flow(var.node, (l + 1, m), col, -1)
    _add_balance_rows(lp, platform, series, types, flow, tp)
    return lp


#: What a HiGHS model status other than optimal means, said for a reader who does not know HiGHS.
HIGHS_STATUS_MEANINGS = {
    "kNotset": "HiGHS stopped before it reached any status (it could not solve the model: a numeric "
               "failure, such as an infinite or zero cost, or an interrupt)",
    "kInfeasible": "no solution meets every constraint (infeasible)",
    "kUnbounded": "the objective grows without bound (unbounded)",
    "kUnboundedOrInfeasible": "the problem is infeasible or unbounded",
    "kTimeLimit": "HiGHS ran out of time before the optimum",
    "kIterationLimit": "HiGHS ran out of iterations before the optimum",
    "kInterrupt": "HiGHS was interrupted before the optimum",
    "kHighsInterrupt": "HiGHS was interrupted before the optimum",
    "kMemoryLimit": "HiGHS ran out of memory",
    "kModelEmpty": "the model is empty (nothing to optimise)",
    "kUnknown": "HiGHS stopped without knowing whether an optimum exists",
}


def highs_status_meaning(status) -> str:
    """What a HiGHS model status means, in words, with HiGHS's own name for it.

    Examples
    --------
    >>> import highspy
    >>> highs_status_meaning(highspy.HighsModelStatus.kNotset)[:38]
    'HiGHS stopped before it reached any st'
    """
    name = getattr(status, "name", str(status))
    meaning = HIGHS_STATUS_MEANINGS.get(name, f"HiGHS failed ({name.removeprefix('k')}: an error in the model or "
                                              "the solver, not a property of the platform)")
    return f"{meaning} [HiGHS status {name.removeprefix('k')}]"


def _add_balance_rows(lp: LinearProgram, platform: Platform, series: Series, types: list,
                      flow: dict[tuple[int, Any], dict[int, Fraction]], tp: int) -> None:
    """Conservation of each message type at each node, and the throughput at its ends."""
    names, index = platform.names, platform.index
    describe = series.describe_type
    if series.kind == SCATTER:
        for t in types:
            for i, name in enumerate(names):
                if name == series.root:
                    continue
                balance = dict(flow.get((i, t), {}))
                if name == t:
                    # What reaches the target, net of what it sends on (nothing, unless as printed).
                    balance[tp] = Fraction(-1)
                    inflow = {c: v for c, v in balance.items() if v > 0 or c == tp}
                    lp.add_row(f"throughput: {describe(t)} into {name}", inflow, Fraction(0), Fraction(0))
                elif balance:
                    lp.add_row(f"conservation: {describe(t)} at {name}", balance, Fraction(0), Fraction(0))
    elif series.kind == ALL_TO_ALL:
        for t in types:
            k, l = t
            for i, name in enumerate(names):
                balance = flow.get((i, t), {})
                if name == k:
                    out = {c: -v for c, v in balance.items() if v < 0}
                    out[tp] = Fraction(-1)
                    lp.add_row(f"throughput: {describe(t)} out of {name}", out, Fraction(0), Fraction(0))
                elif name == l:
                    inflow = {c: v for c, v in balance.items() if v > 0}
                    inflow[tp] = Fraction(-1)
                    lp.add_row(f"throughput: {describe(t)} into {name}", inflow, Fraction(0), Fraction(0))
                elif balance:
                    lp.add_row(f"conservation: {describe(t)} at {name}", dict(balance), Fraction(0), Fraction(0))
    else:
        last = len(series.participants) - 1
        owner = {k: index[p] for k, p in enumerate(series.participants)}
        target = index[series.root]
        for t in types:
            k, m = t
            for i, name in enumerate(names):
                if k == m and owner[k] == i:
                    continue
                balance = dict(flow.get((i, t), {}))
                if t == (0, last) and i == target:
                    # Eq. (11): what arrives, plus what is computed in place.
                    balance = {c: v for c, v in balance.items() if v > 0}
                    balance[tp] = Fraction(-1)
                    lp.add_row(f"throughput: {describe(t)} at {name}", balance, Fraction(0), Fraction(0))
                elif balance:
                    lp.add_row(f"conservation: {describe(t)} at {name}", balance, Fraction(0), Fraction(0))


def least_busy_program(lp: LinearProgram, platform: Platform, series: Series, throughput: Fraction) -> LinearProgram:
    """The same constraints with ``TP ≥ throughput``, minimising the ports' total busy time:
    among the optimal solutions, one that sends nothing it does not need to. Such a vertex
    usually has fewer nonzero activities and a far shorter period than the one the first
    solve ends on (130 s against 18,200 s on a 30-node reduce)."""
    second = LinearProgram(list(lp.columns), [dict(r) for r in lp.rows], list(lp.row_lower),
                           list(lp.row_upper), list(lp.row_names), dict(lp.column_index))
    second.add_row("throughput: at least the optimum", {lp.objective_column: Fraction(1)}, throughput, None)
    second.objective = {}
    for col, var in enumerate(lp.columns):
        if isinstance(var, Send):
            second.objective[col] = series.size(var.type) * platform.edges[var.edge].cost_s_per_byte
    second.maximize = False
    return second


def solve_program(lp: LinearProgram, solver: str = "ipm") -> LpSolution:
    """Solve ``lp`` with HiGHS: interior point then crossover by default (several times faster
    than simplex here: 1.2 s against 5.8 s on a 30-node reduce), or ``"simplex"``; both end on an
    optimal basis."""
    try:
        import highspy
        import numpy as np
    except ImportError as e:
        raise BackendError(f"HiGHS (highspy) cannot be loaded: {e}") from None
    n, m = len(lp.columns), len(lp.rows)
    inf = highspy.kHighsInf
    starts, indices, values = [0], [], []
    by_column: list[list[tuple[int, float]]] = [[] for _ in range(n)]
    for r, row in enumerate(lp.rows):
        for c, v in row.items():
            by_column[c].append((r, float(v)))
    for entries in by_column:
        for r, v in entries:
            indices.append(r)
            values.append(v)
        starts.append(len(indices))
    model = highspy.HighsLp()
    model.num_col_, model.num_row_ = n, m
    cost = np.zeros(n)
    for c, v in lp.objective.items():
        cost[c] = float(v)
    model.col_cost_ = cost
    model.col_lower_ = np.zeros(n)
    model.col_upper_ = np.full(n, inf)
    model.row_lower_ = np.array([-inf if b is None else float(b) for b in lp.row_lower])
    model.row_upper_ = np.array([inf if b is None else float(b) for b in lp.row_upper])
    model.sense_ = highspy.ObjSense.kMaximize if lp.maximize else highspy.ObjSense.kMinimize
    model.a_matrix_.format_ = highspy.MatrixFormat.kColwise
    model.a_matrix_.start_ = np.array(starts, dtype=np.int32)
    model.a_matrix_.index_ = np.array(indices, dtype=np.int32)
    model.a_matrix_.value_ = np.array(values)
    h = highspy.Highs()
    h.silent()
    h.setOptionValue("solver", solver)
    h.setOptionValue("run_crossover", "on")
    h.passModel(model)
    run_highs(h)
    status = h.getModelStatus()
    if status != highspy.HighsModelStatus.kOptimal:
        raise InputError(f"the linear program has no optimum: {highs_status_meaning(status)}")
    solution, basis = h.getSolution(), h.getBasis()
    basic = highspy.HighsBasisStatus.kBasic
    upper = highspy.HighsBasisStatus.kUpper
    return LpSolution(
        values=list(solution.col_value),
        objective=h.getInfo().objective_function_value,
        column_basic=[s == basic for s in basis.col_status],
        column_at_upper=[s == upper for s in basis.col_status],
        row_basic=[s == basic for s in basis.row_status],
        row_at_upper=[s == upper for s in basis.row_status],
        iterations=h.getInfo().simplex_iteration_count,
    )

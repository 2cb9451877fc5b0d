"""The exact assignment model of paper 000 §1, solved by OR-Tools CP-SAT.

A boolean ``x[t, s]`` puts transfer ``t`` in timeslot ``s``; every transfer gets exactly one
timeslot, no resource carries more transfers in a timeslot than it has slots (one: it is used
at most once), and the number of timeslots in use is minimised. This is the formulation a user
would otherwise reach for, and an optimality check independent of the liquid search. Timeslots
are bounded by a DSatur colouring, used timeslots come first (the usual symmetry break), and at
least the frame bound of them are used.
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from typing import Any, Callable

from .. import _core
from ..bounds import frame_lower_bound
from ..errors import InputError
from ..interrupt import solve_cpsat
from ..network import Network
from ..schedule import Schedule, ScheduleInfo
from ..traffic import Traffic
from .liquid import check_budget


def build_slot_model(paths: list[list[int]], resources: int, slots: int, lower: int,
                     capacity: list[int] | None = None):
    """The CP-SAT model over ``slots`` timeslots, resource ``r`` taking ``capacity[r]`` transfers
    a timeslot (one each when None): returns ``(model, x, used)`` with ``x[t][s]`` and ``used[s]``."""
    from ortools.sat.python import cp_model  # heavy (it imports pandas): only when CP-SAT runs

    model = cp_model.CpModel()
    x = [[model.new_bool_var(f"x{t}_{s}") for s in range(slots)] for t in range(len(paths))]
    used = [model.new_bool_var(f"used{s}") for s in range(slots)]
    for row in x:
        model.add_exactly_one(row)
        for s, var in enumerate(row):
            model.add_implication(var, used[s])
    users: list[list[int]] = [[] for _ in range(resources)]
    for t, path in enumerate(paths):
        for r in path:
            users[r].append(t)
    for r, ts in enumerate(users):
        k = 1 if capacity is None else capacity[r]
        if len(ts) > k:
            for s in range(slots):
                if k == 1:
                    model.add_at_most_one(x[t][s] for t in ts)
                else:
                    model.add(sum(x[t][s] for t in ts) <= k)
    for s in range(slots - 1):
        model.add_implication(used[s + 1], used[s])
    model.add(sum(used) >= lower)
    model.minimize(sum(used))
    return model, x, used


@dataclass(frozen=True)
class CpSatProgress:
    """How far :func:`cpsat` has gone: the frames of its best schedule so far (None before the
    first) and the bound proven when it was found (the frame bound before), ``solutions`` found,
    seconds since the solve started."""

    best_frames: int | None
    bound: int
    solutions: int
    elapsed_s: float


class _Incumbent:
    """What CP-SAT's solutions told so far (written by its solution callback, on the solver's
    thread; read on the main thread)."""

    def __init__(self, bound: int) -> None:
        self.frames: int | None = None
        self.bound = bound
        self.solutions = 0

    def callback(self) -> Any:
        from ortools.sat.python import cp_model

        incumbent = self

        class Recorder(cp_model.CpSolverSolutionCallback):
            def on_solution_callback(self) -> None:
                incumbent.frames = int(round(self.objective_value))
                incumbent.bound = max(incumbent.bound, int(round(self.best_objective_bound)))
                incumbent.solutions += 1

        return Recorder()


def cpsat(net: Network, traffic: Traffic, time_limit: float | None = None, workers: int = 1,
          progress: Callable[[CpSatProgress], bool | None] | None = None) -> Schedule:
    """Optimal schedule by CP-SAT on the slot-assignment model.

    Parameters
    ----------
    time_limit
        Seconds; when it runs out the best schedule found is returned with
        ``info.optimal = False`` (DSatur's if CP-SAT found none) and the solver's bound.
    workers
        CP-SAT search workers (1 keeps runs deterministic and one-core comparable).
    progress
        Called with a :class:`CpSatProgress` every 50 ms while CP-SAT searches (the ``plan``
        command's progress line). When it returns a true value the search stops as if its time
        had run out (``stats["stopped_by"]`` "request"): ``plan`` asks so on a first Ctrl-C.

    Examples
    --------
    >>> from liquidsched.topologies import two_switch
    >>> from liquidsched.traffic import half_all_to_all
    >>> net = two_switch()
    >>> s = cpsat(net, half_all_to_all(net))
    >>> s.length, s.info.optimal
    (6, True)
    """
    check_budget(time_limit, "time limit")
    if isinstance(workers, bool) or not isinstance(workers, int) or workers < 1:
        raise InputError(f"workers must be a positive integer, got {workers!r}")
    paths = traffic.resource_lists(net)
    slots = net.resource_slots
    lower = frame_lower_bound(traffic.resource_sets(net), slots)
    greedy = _core.dsatur(paths, len(net.resources), slots=slots)
    model, x, _ = build_slot_model(paths, len(net.resources), len(greedy), lower, slots)
    from ortools.sat.python import cp_model

    solver = cp_model.CpSolver()
    solver.parameters.num_workers = workers
    if time_limit is not None:
        solver.parameters.max_time_in_seconds = float(time_limit)
    incumbent = _Incumbent(lower)
    started = time.perf_counter()
    asked = False

    def stop() -> bool:
        nonlocal asked
        report = CpSatProgress(incumbent.frames, incumbent.bound, incumbent.solutions, time.perf_counter() - started)
        asked = asked or bool(progress(report))
        return asked

    if progress is None:
        status = solve_cpsat(solver, model)
    else:
        status = solve_cpsat(solver, model, callback=incumbent.callback(), stop=stop)
    if status in (cp_model.OPTIMAL, cp_model.FEASIBLE):
        slots = [[] for _ in greedy]
        for t, row in enumerate(x):
            slot = next(s for s, var in enumerate(row) if solver.boolean_value(var))
            slots[slot].append(t)
        frames = [f for f in slots if f]
        proven = int(round(solver.best_objective_bound)) if status == cp_model.FEASIBLE else len(frames)
    else:
        frames, proven = greedy, lower
    optimal = status == cp_model.OPTIMAL or len(frames) <= proven
    info = ScheduleInfo(
        "cpsat",
        parameters={"workers": workers, **({"time_limit": time_limit} if time_limit is not None else {})},
        lower_bound=lower,
        optimal=optimal,
        stats={
            "nodes_explored": int(solver.num_branches),
            "status": solver.status_name(status),
            "proven_lower_bound": max(proven, lower),
            "gap": len(frames) - max(proven, lower),
            "wall_time_s": solver.wall_time,
            # DSatur's schedule stands in when CP-SAT found none in its time.
            "source": "cp-sat" if status in (cp_model.OPTIMAL, cp_model.FEASIBLE) else "dsatur",
            **({"stopped_by": "request"} if asked and status != cp_model.OPTIMAL else {}),
        },
    )
    return Schedule.from_indices(net, traffic, frames, info)

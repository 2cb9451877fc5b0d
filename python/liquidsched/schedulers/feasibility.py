"""CP-SAT settings for the assignment models of the torus design and the orbit assignment:
booleans that put a class or an orbit into a group or frame, exactly-one and at-most-one
constraints, no objective."""

from __future__ import annotations

from typing import Any

from ..interrupt import solve_cpsat


def solve_feasibility(model: Any, time_limit: float | None) -> Any:
    """The solver holding a solution of ``model`` (CP-SAT, one worker, Ctrl-C honoured), or None
    when none is found in ``time_limit`` seconds (None: no limit) or there is none.

    Examples
    --------
    >>> from ortools.sat.python import cp_model
    >>> model = cp_model.CpModel()
    >>> x = [model.new_bool_var("") for _ in range(3)]
    >>> _ = model.add_exactly_one(x)
    >>> solver = solve_feasibility(model, 10)
    >>> sum(solver.boolean_value(v) for v in x)
    1
    """
    from ortools.sat.python import cp_model  # heavy (it imports pandas): only when it runs

    solver = cp_model.CpSolver()
    if time_limit is not None:
        solver.parameters.max_time_in_seconds = max(0.0, float(time_limit))
    solver.parameters.num_workers = 1
    # Measured on these models (one core, 2026-11-28): without the LP relaxation the 6 × 6 model
    # of the cube takes 0.1 s instead of 7 s (its linear equalities made each conflict slow);
    # without phase saving the structured 16 × 16 design takes 9-17 s instead of 44-72 s, and the
    # orbit assignment of mesh:dims=8/8 is found at all (each branch starts from "not here"
    # rather than from a stale assignment). Probing in presolve fixes little on these models and
    # took 1.3-1.6 s of the 4.3-6.1 s presolve of the 16 × 16 design and of mesh:dims=8/8, and
    # the search for big overlaps of at-most-ones with linear constraints (there are none)
    # 0.6-0.8 s of what was left; neither changed the search that followed.
    solver.parameters.linearization_level = 0
    solver.parameters.cp_model_probing_level = 0
    solver.parameters.find_big_linear_overlap = False
    solver.parameters.use_phase_saving = False
    # One round of presolve, no symmetry detection (measured 2026-11-28, one core): the 16 × 16
    # design's presolve ends at 1.4 s instead of 2.7 s, and its search over seeds 0-5 takes
    # 5.5-23 s (median 11) instead of 7.6-21 (median 18), 7.1 s instead of 8.6 on the default
    # seed; the 14 × 14 design 2.2 s instead of 3.8, the orbit assignment of mesh:dims=6/6 1.2 s
    # instead of 2.4; the line products are unchanged. The further rounds and the symmetries
    # found changed little of these models.
    solver.parameters.max_presolve_iterations = 1
    solver.parameters.symmetry_level = 0
    status = solve_cpsat(solver, model)
    return solver if status in (cp_model.OPTIMAL, cp_model.FEASIBLE) else None

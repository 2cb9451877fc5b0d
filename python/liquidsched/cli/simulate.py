"""``liquidsched simulate``: what a schedule achieves in a network model."""

from __future__ import annotations

import argparse
import math

from ..errors import InputError, at
from ..wording import milliseconds, percent, plural
from .common import add_schedule_options, command_help, duration_arg, mbps, out, print_json, schedule_from_args

#: ``simulate`` follows the schedule unless told otherwise: the frames model, and in the fluid
#: model frame by frame behind a barrier.
DEFAULT_MODEL, DEFAULT_FLUID_POLICY = "frames", "frames"


def simulation_options(args: argparse.Namespace) -> tuple[str, str, float]:
    """(model, policy, overhead) from the options, refusing those the model does not take."""
    # A policy or SimGrid only exist in the fluid model: naming them names it.
    implied_fluid = args.policy is not None or args.backend == "simgrid"
    model = args.model or ("fluid" if implied_fluid else DEFAULT_MODEL)
    if args.policy is not None and model != "fluid":
        raise InputError(f"--policy applies to --model fluid, not {model}")
    policy = args.policy or DEFAULT_FLUID_POLICY
    if args.overhead is not None:
        if model == "circuit" or (model == "fluid" and policy != "frames"):
            raise InputError("--overhead (β per frame) applies to --model frames and to --model fluid "
                             f"--policy frames, not to {model}" + (f" --policy {policy}" if model == "fluid" else ""))
        if not args.overhead >= 0:
            raise InputError(f"--overhead: must be non-negative, got {args.overhead}")
    if args.backend == "simgrid" and model != "fluid":
        raise InputError(f"--backend simgrid simulates --model fluid, not {model}")
    return model, policy, args.overhead or 0.0


def simulated_window(args: argparse.Namespace, schedule, model: str, policy: str) -> int | None:
    """The window policy's W from ``--window``: a number as given, ``auto`` from the links'
    buffers; None leaves it to the schedule (a shuffle exchange's own)."""
    from ..schedulers.shuffle import schedule_window

    given = getattr(args, "window", None)
    if model != "fluid" or policy != "window":
        if given is not None and schedule.info.algorithm != "shuffle":
            raise InputError("--window applies to --policy window (or to --algorithm shuffle)")
        return None
    if given == "none":
        raise InputError("--policy window needs a window; --window none leaves none")
    if given == "auto":
        return schedule_window(schedule)
    return given


def cmd_simulate(args: argparse.Namespace) -> int:
    from rich.table import Table

    from ..simulate import simulate
    from ..validation import require_exact_delivery, validate

    model, policy, overhead = simulation_options(args)
    if args.backend == "simgrid" and args.plot:
        raise InputError("--plot needs the utilisation map of the rust backend; SimGrid gives finish times only")
    # simulate's β is the model's and the step cost a scheduler that takes one minimises alike;
    # its window is the window policy's and the shuffle exchange's alike.
    schedule = schedule_from_args(args, shared=("overhead", "window"))
    window = simulated_window(args, schedule, model, policy)
    # The delivery rule first, as every model states it; the slot rule is the slot models' only.
    require_exact_delivery(schedule, args.schedule or "")
    violations = validate(schedule)
    if violations and model != "fluid":
        raise InputError(at(args.schedule or "", f"the schedule is not valid in the slot model ({violations[0]}); "
                            "only the fluid model (--model fluid) simulates it"))
    prediction = simulate(schedule, model, policy, overhead, bins=200 if args.plot else 0, backend=args.backend,
                          window=window)
    if args.plot:
        from ..plot import plot_utilisation

        plot_utilisation(schedule, prediction, args.plot)
    bound = schedule.bound
    duration, frame_time = float(bound.duration_s), float(bound.frame_bound_time_s)
    makespan = prediction.makespan_s
    # The ratios are of the numbers the table shows: Λ (and the frame bound) over the makespan.
    frame_ratio = frame_time / makespan if makespan > 0 else None
    summary = {"algorithm": schedule.info.algorithm, "frames": schedule.length, **prediction.to_dict(),
               "overhead_s": overhead, "latency": "included", "duration_s": duration,
               "liquid_throughput_Bps": float(bound.liquid_throughput_Bps),
               "frame_lower_bound": bound.frame_lower_bound, "frame_bound_time_s": frame_time,
               "ratio_to_frame_bound": frame_ratio}
    kpbs = None
    if "kpbs_lower_bound_s" in schedule.info.stats:
        from ..schedulers.kpbs import kpbs_prediction

        kpbs = summary["kpbs"] = kpbs_prediction(schedule)
    if args.json:
        print_json(summary)
        return 0
    title = f"{schedule.network.name}: {schedule.traffic.name}, {schedule.info.algorithm}"
    table = Table(show_header=False, title=title)
    # Every model here counts each route's latency; plan's frames model and the bounds do not.
    described = {"frames": "frames, latency included (each frame as long as its longest piece at its slot rate)",
                 "circuit": "circuit, latency included (a transfer holds a slot of each resource of its path "
                            "while it runs)",
                 "fluid": f"fluid, latency included (max-min fair sharing), {policy}"
                          + (f", W = {plural(prediction.window, 'step')}" if prediction.window else "")}[model]
    table.add_row("model", described + (" (SimGrid CM02)" if args.backend == "simgrid" else "")
                  + (f", β = {overhead * 1e3:g} ms a frame" if overhead else ""))
    # The simulators compute in floats: a makespan within their rounding of Λ is Λ.
    same = math.isclose(makespan, duration, rel_tol=1e-9)
    table.add_row("makespan", milliseconds(makespan, beside=None if same else duration))
    table.add_row("Λ (latency excluded)", milliseconds(duration, beside=None if same else makespan))
    table.add_row("throughput", mbps(prediction.throughput_Bps))
    table.add_row("liquid throughput", mbps(float(bound.liquid_throughput_Bps)))
    table.add_row("of the liquid throughput", f"{percent(prediction.ratio_to_bound, exact_one=same or None)} "
                  "(Λ / makespan)")
    if frame_time != duration:
        frame_same = math.isclose(makespan, frame_time, rel_tol=1e-9)
        # Whole transfers in frames cannot reach Λ here: the bound that applies is the frame bound.
        table.add_row("frame bound", f"{plural(bound.frame_lower_bound, 'frame')}, "
                      f"{milliseconds(frame_time, beside=None if frame_same else makespan)} latency excluded: "
                      "no schedule of whole transfers in frames is faster")
        table.add_row("of the frame bound", f"{percent(frame_ratio, exact_one=frame_same or None)} "
                      "(its time / makespan)")
    if kpbs is not None:
        # Paper 004 §3: the scheduled cost, its lower bound and all at once, side by side.
        brute = "-" if kpbs["all_at_once_s"] is None else f"{kpbs['all_at_once_s'] * 1e3:.3f} ms"
        table.add_row("KPBS: scheduled, bound, all at once",
                      f"{kpbs['scheduled_s'] * 1e3:.3f} ms, {kpbs['lower_bound_s'] * 1e3:.3f} ms, {brute}")
    if args.plot and args.plot != "-":
        table.add_row("written", str(args.plot))
    out.print(table)
    return 0


def add_parsers(sub: argparse._SubParsersAction) -> None:
    from ..simulate import BACKENDS, MODELS, POLICIES

    p = sub.add_parser("simulate", help=command_help("simulate"))
    add_schedule_options(p, overhead=False)
    p.add_argument("--model", choices=MODELS,
                   help=f"the network model (default {DEFAULT_MODEL}: it follows the schedule frame by frame; "
                        "fluid when --policy or --backend simgrid is given)")
    p.add_argument("--policy", choices=POLICIES,
                   help="fluid model: flows frame by frame behind a barrier (default), all at once "
                        "(the schedule's order ignored), per sender in schedule order, under a global window "
                        "(window: --window, or a shuffle schedule's own), each node one step at a time (steps), or "
                        "every transfer from the start at size / Λ, the continuous form of a liquid schedule (paced)")
    p.add_argument("--overhead", type=duration_arg, metavar="TIME",
                   help="β, such as 1ms or 250us (plain numbers are seconds), added to every frame (frames model, fluid frames policy; default 0); "
                        "also the step cost ggp and oggp schedule for")
    p.add_argument("--backend", choices=BACKENDS, default="rust",
                   help="rust (default) or SimGrid's CM02 model (fluid model; needs python3-simgrid)")
    p.add_argument("--plot", metavar="FILE.png|pdf|svg", help="utilisation of every resource over time")
    p.set_defaults(run=cmd_simulate)

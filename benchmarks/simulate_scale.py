"""The fluid simulator at scale: its incremental engine against the from-scratch one and SimGrid.

    python benchmarks/simulate_scale.py --output out/simulate-scale.json --plot out/simulate-scale.png

All-to-all exchanges of random sizes (uniform 1–100 MB) started all at once, from about 1,000 to
16,000 flows, on three families of networks:

- ``random``: the random network of ``simgrid_compare.py`` (16 switches, 8 extra cables, mixed
  capacities and latencies, shared-duplex cables) with 32 to 127 hosts;
- ``fat-tree``: a k = 6 fat tree with 2 to 7 hosts per edge switch;
- ``crossbar``: 32 to 127 hosts on one switch, where every host link is a bottleneck and an event
  changes the rates of a large part of all flows: the worst case of any exact incremental method.

Each case is simulated by the core's incremental engine (the default; best of ``--repeat`` runs),
by the from-scratch engine the simulator used before (up to ``--reference-max-flows`` flows: it is
quadratic), and by SimGrid's CM02 model (up to each family's SimGrid limit, scaled by
``--simgrid-scale``; its engine run only, as ``simgrid_compare.py`` times it). The growth of each
time with the flows is fitted as ``time ∝ flows^e`` per family, and so is the number of bottleneck
rates the incremental engine sets per event (``level changes``): an engine that keeps one rate per
bottleneck must set each rate that changes, so its time cannot grow slower than
``flows^(1 + f)`` when the changes per event grow as ``flows^f``, whatever its data structures.

Every start policy is then run by both engines on the 16,002 flows of the largest random and
crossbar cases. Agreement is reported as the largest relative difference of a flow's finish time
between the two engines (goal: 1e-9), and against SimGrid as the largest finish-time difference over
the makespan. Policies that start flows when others finish can amplify rounding errors: the policy
table also reports how far the from-scratch engine's own times move when the sizes move by a few
units of the last place (the most any two implementations can be expected to agree) and by one byte
(up to three patterns of moves, until one moves the model more than the engines differ), and says,
for a policy whose engines differ by more than 1e-9, whether the model itself moves more than that. Run it pinned to one core (``taskset -c 0``) for one-core figures.
"""

from __future__ import annotations

import platform
import time
from typing import Any

from common import benchmark_parser, growth_exponent, progress_bar
from rich.console import Console
from rich.table import Table

from liquidsched import _core, plan
from liquidsched.io.files import write_document
from liquidsched.simulate import flows_of, simulate
from liquidsched.simgrid import simgrid_available
from liquidsched.topologies import build_topology
from liquidsched.traffic import random_matrix

#: family -> (topology specs, largest case run in SimGrid by default, in flows)
FAMILIES: dict[str, tuple[list[str], int]] = {
    "random": ([f"random:switches=16,hosts={h},extra_cables=8,seed=1" for h in (32, 45, 64, 90, 127)], 8100),
    "fat-tree": ([f"fat-tree:k=6,hosts_per_edge={e}" for e in (2, 3, 4, 6, 7)], 3000),
    "crossbar": ([f"crossbar:n={n}" for n in (32, 45, 64, 90, 127)], 1000),
}
#: The cases every start policy is run on (16,002 flows each), and the policies.
POLICY_CASES = ("random:switches=16,hosts=127,extra_cables=8,seed=1", "crossbar:n=127")
POLICIES = ("all-at-once", "frames", "per-sender", "window", "steps")
MB = 1_000_000
#: The agreement asked of the two engines, relative, on every finish time.
AGREEMENT = 1e-9


def exchange(spec: str):
    """The all-to-all of random sizes on ``spec``, as a round-robin schedule."""
    net = build_topology(spec)
    return plan(net, random_matrix(net, seed=1, min_bytes=MB, max_bytes=100 * MB), "round-robin")


#: Multipliers of the fixed patterns by which sizes are moved (flow i by a step that depends on
#: ``i * multiplier``): primes, so that the patterns differ.
PATTERNS = (7919, 104_729, 1_299_709)


def run_core(schedule, policy: str, engine: str, repeat: int, perturb: float = 0.0,
             shift_bytes: float = 0.0, pattern: int = PATTERNS[0]) -> tuple[float, dict]:
    """Best time of ``repeat`` core runs with ``engine`` (the call, flows already converted), and
    the last result; with ``perturb``, sizes multiplied by factors within ``1 ± 6 perturb``; with
    ``shift_bytes``, sizes moved by ``-shift_bytes``, 0 or ``+shift_bytes``; which flow moves how
    much is set by ``pattern`` (one of :data:`PATTERNS`)."""
    net, f = schedule.network, flows_of(schedule)
    sizes = [z * (1 + perturb * (i * pattern % 13 - 6)) + shift_bytes * (i * pattern % 3 - 1)
             for i, z in enumerate(f.sizes)]
    args = (list(net.resource_capacity), f.paths, sizes, f.latencies, f.senders, f.frames, "fluid", policy)
    kwargs = dict(slots=net.resource_slots, receivers=f.receivers, frame_steps=schedule.frame_steps(), window=2,
                  engine=engine)
    best, result = float("inf"), {}
    for _ in range(repeat):
        start = time.perf_counter()
        result = _core.simulate(*args, **kwargs)
        best = min(best, time.perf_counter() - start)
    return best, result


def relative_difference(a: list[float], b: list[float]) -> float:
    """The largest relative difference between two lists of finish times."""
    return max((abs(x - y) / max(abs(x), abs(y)) for x, y in zip(a, b) if x or y), default=0.0)


def scale_case(family: str, spec: str, simgrid_max: int, args) -> dict[str, Any]:
    schedule = exchange(spec)
    flows = sum(len(frame) for frame in schedule.frames)
    row: dict[str, Any] = {"family": family, "topology": spec, "flows": flows,
                           "resources": len(schedule.network.resources)}
    row["incremental_s"], ours = run_core(schedule, "all-at-once", "incremental", args.repeat)
    row["makespan_s"] = max(ours["finish_s"])
    row["level_changes_per_event"] = ours["level_changes"] / max(ours["rate_updates"], 1)
    if flows <= args.reference_max_flows:
        row["reference_s"], ref = run_core(schedule, "all-at-once", "reference", 1)
        row["reference_difference"] = relative_difference(ours["finish_s"], ref["finish_s"])
        row["speedup_reference"] = row["reference_s"] / row["incremental_s"]
    if args.simgrid and flows <= simgrid_max:
        theirs = simulate(schedule, "fluid", "all-at-once", backend="simgrid")
        row["simgrid_s"] = theirs.wall_s
        row["simgrid_difference"] = max(abs(a - b) for a, b in zip(ours["finish_s"], theirs.finish_s)) / max(
            theirs.finish_s)
        row["speedup_simgrid"] = theirs.wall_s / row["incremental_s"]
    return row


def verdict(row: dict[str, Any]) -> str:
    """Whether the engines agree to :data:`AGREEMENT`, and if not, whether the model itself moves
    more than they differ when the sizes move by rounding errors or by one byte."""
    difference = row["reference_difference"]
    if difference <= AGREEMENT:
        return f"agree to {AGREEMENT:.0e}"
    if difference <= row["conditioning"]:
        return "differ by less than the model moves with rounding errors in the sizes"
    if difference <= row["one_byte"]:
        return "differ by less than the model moves when sizes move by one byte"
    return f"DISAGREE beyond {AGREEMENT:.0e} and beyond the model's own movement"


def moved(schedule, policy: str, reference: dict, difference: float, **shift) -> float:
    """How far the from-scratch engine's times move when the sizes move (``shift``, as
    :func:`run_core` takes it): the largest over the patterns, tried in turn until the model has
    moved more than the engines differ (``difference``), the first alone when they agree."""
    most = 0.0
    for pattern in PATTERNS:
        _, result = run_core(schedule, policy, "reference", 1, pattern=pattern, **shift)
        most = max(most, relative_difference(result["finish_s"], reference["finish_s"]))
        if difference <= AGREEMENT or most >= difference:
            break
    return most


def policy_rows(args) -> list[dict[str, Any]]:
    rows = []
    for case in POLICY_CASES:
        schedule = exchange(case)
        for policy in POLICIES:
            inc_s, ours = run_core(schedule, policy, "incremental", args.repeat)
            ref_s, ref = run_core(schedule, policy, "reference", 1)
            difference = relative_difference(ours["finish_s"], ref["finish_s"])
            row = {"topology": case, "policy": policy, "flows": len(ours["finish_s"]), "incremental_s": inc_s,
                   "reference_s": ref_s, "speedup_reference": ref_s / inc_s, "reference_difference": difference,
                   "conditioning": moved(schedule, policy, ref, difference, perturb=1e-16),
                   "one_byte": moved(schedule, policy, ref, difference, shift_bytes=1.0),
                   "level_changes_per_event": ours["level_changes"] / max(ours["rate_updates"], 1)}
            row["verdict"] = verdict(row)
            rows.append(row)
    return rows


def growth(rows: list[dict]) -> dict[str, dict[str, float | None]]:
    """The growth exponent of each time, per family (over the cases that have it)."""
    result = {}
    for family in FAMILIES:
        mine = [r for r in rows if r["family"] == family]
        result[family] = {key: growth_exponent([r["flows"] for r in mine if key in r], [r[key] for r in mine if key in r])
                          for key in ("incremental_s", "reference_s", "simgrid_s", "level_changes_per_event")}
    return result


#: The growth asked of the incremental engine on every family (issue 28, item 7).
GROWTH_GOAL = 1.3


def growth_statement(exponents: dict) -> list[str]:
    """Per family, whether the incremental engine's growth meets :data:`GROWTH_GOAL`, and the floor
    that the level changes per event set on any engine keeping one rate per bottleneck."""
    lines = []
    for family, values in exponents.items():
        e, f = values["incremental_s"], values["level_changes_per_event"]
        if e is None:
            continue
        if e <= GROWTH_GOAL:
            lines.append(f"{family}: incremental grows as flows^{e:.2f}, meets the goal flows^{GROWTH_GOAL}")
            continue
        floor = "" if f is None else (
            f": level changes per event grow as flows^{f:.2f}, so the bottleneck rates that change grow as "
            f"flows^{1 + f:.2f} in all, and an engine that keeps one rate per bottleneck, setting each that "
            f"changes, cannot grow slower once they dominate its time")
        lines.append(f"{family}: incremental grows as flows^{e:.2f}, does NOT meet the goal flows^{GROWTH_GOAL}{floor}")
    return lines


def _ms(row: dict, key: str) -> str:
    return f"{row[key] * 1e3:,.1f} ms" if key in row else "-"


def _times(row: dict, key: str) -> str:
    return f"{row[key]:,.0f}×" if key in row else "-"


def _diff(row: dict, key: str) -> str:
    return f"{row[key]:.1e}" if key in row else "-"


def print_tables(rows: list[dict], policies: list[dict], exponents: dict, console: Console) -> None:
    t = Table("family", "flows", "incremental", "from scratch", "SimGrid", "× from scratch", "× SimGrid",
              "Δ from scratch", "Δ SimGrid", "level changes / event", title="fluid model, all at once, random "
              "sizes (Δ: largest relative difference of a finish time; against SimGrid, over the makespan)")
    for r in rows:
        t.add_row(r["family"], f"{r['flows']:,}", _ms(r, "incremental_s"), _ms(r, "reference_s"), _ms(r, "simgrid_s"),
                  _times(r, "speedup_reference"), _times(r, "speedup_simgrid"), _diff(r, "reference_difference"),
                  _diff(r, "simgrid_difference"), f"{r['level_changes_per_event']:,.1f}")
    console.print(t)
    g = Table("family", "incremental", "from scratch", "SimGrid", "level changes / event",
              title="growth: time ∝ flows^e (least squares)")
    for family, values in exponents.items():
        g.add_row(family, *("-" if values[k] is None else f"{values[k]:.2f}"
                            for k in ("incremental_s", "reference_s", "simgrid_s", "level_changes_per_event")))
    console.print(g)
    for line in growth_statement(exponents):
        console.print(line)
    p = Table("case", "policy", "flows", "incremental", "from scratch", "× from scratch", "Δ from scratch",
              "Δ, sizes ± 6e-16", "Δ, sizes ± 1 B", "verdict", title="every start policy (Δ: largest relative "
              "difference of a finish time from the from-scratch engine's; the last two: how far the model "
              "itself moves when the sizes move by rounding errors, and by one byte)")
    for r in policies:
        p.add_row(r["topology"].split(":")[0], r["policy"], f"{r['flows']:,}", _ms(r, "incremental_s"),
                  _ms(r, "reference_s"), _times(r, "speedup_reference"), _diff(r, "reference_difference"),
                  _diff(r, "conditioning"), _diff(r, "one_byte"), r["verdict"])
    console.print(p)


def plot(rows: list[dict], policies: list[dict], exponents: dict, path: str) -> None:
    from liquidsched.plot import _save, plt

    fig, (ax, bars) = plt.subplots(1, 2, figsize=(13, 5), gridspec_kw={"width_ratios": [3, 2]})
    colours = {"random": "tab:blue", "fat-tree": "tab:green", "crossbar": "tab:red"}
    styles = {"incremental_s": ("o-", "incremental"), "reference_s": ("s--", "from scratch"),
              "simgrid_s": ("^:", "SimGrid CM02")}
    for family, colour in colours.items():
        mine = [r for r in rows if r["family"] == family]
        for key, (style, label) in styles.items():
            points = [(r["flows"], r[key]) for r in mine if key in r]
            if points:
                e = exponents[family][key]
                fitted = f", e = {e:.2f}" if e is not None and len(points) > 2 else ""
                ax.loglog(*zip(*points), style, color=colour, ms=4, label=f"{family}: {label}{fitted}")
    ax.set_xlabel("flows (all-to-all, random sizes, all at once)")
    ax.set_ylabel("simulation time (s)")
    ax.set_title("time to simulate, and its growth (time ∝ flows^e)")
    ax.grid(alpha=0.3, which="both")
    ax.legend(fontsize=7, ncol=1)
    first = [r for r in policies if r["topology"] == POLICY_CASES[0]]
    names = [r["policy"] for r in first]
    bars.bar(range(len(names)), [r["speedup_reference"] for r in first], color="tab:blue")
    bars.set_xticks(range(len(names)), names, rotation=20)
    bars.axhline(1.0, color="black", lw=1)
    bars.set_yscale("log")
    bars.set_ylabel("from-scratch time / incremental time")
    bars.set_title(f"every policy, {policies[0]['flows']:,} flows ({POLICY_CASES[0].split(':')[0]} network)")
    bars.grid(alpha=0.3, axis="y", which="both")
    fig.tight_layout()
    _save(fig, path)


def main() -> None:
    parser = benchmark_parser(__doc__)
    parser.add_argument("--repeat", type=int, default=3, help="runs of the incremental engine per case (best)")
    parser.add_argument("--reference-max-flows", type=int, default=4100, metavar="N",
                        help="run the from-scratch engine on cases of at most N flows (it is quadratic)")
    parser.add_argument("--simgrid-scale", type=float, default=1.0, metavar="X",
                        help="multiply each family's SimGrid limit by X (0: no SimGrid)")
    args = parser.parse_args()
    args.simgrid = args.simgrid_scale > 0 and simgrid_available()
    if args.simgrid_scale > 0 and not args.simgrid:
        Console(stderr=True).print("SimGrid is not installed (apt-get install python3-simgrid): core only")
    cases = [(family, spec, limit * args.simgrid_scale) for family, (specs, limit) in FAMILIES.items()
             for spec in specs]
    rows = []
    with progress_bar("cases") as progress:
        for family, spec, limit in progress.track(cases):
            rows.append(scale_case(family, spec, limit, args))
    policies = policy_rows(args)
    exponents = growth(rows)
    print_tables(rows, policies, exponents, Console(width=160))
    write_document({"benchmark": "simulate_scale", "machine": platform.processor() or platform.machine(),
                    "sizes_bytes": [MB, 100 * MB], "rows": rows, "policies": policies,
                    "growth_exponents": exponents, "growth_goal": GROWTH_GOAL, "agreement_goal": AGREEMENT,
                    "growth_statement": growth_statement(exponents)}, args.output)
    if args.plot:
        plot(rows, policies, exponents, args.plot)


if __name__ == "__main__":
    main()

"""The skewed all-to-allv of a mixture-of-experts layer, run in an emulated two-tier network:
liquidsched's selected mode against all at once, ``MPI_Alltoallv`` and FAST's schedule (and
DeepEP's hierarchical dispatch), each beside its prediction, in both buffer regimes. Needs root
(network namespaces, tc).

    python benchmarks/moe_emulated.py --repeats 7 --output out/moe-emulated.json --plot out/moe-emulated.png

The network is the *Skewed all-to-allv* issue's two-tier cluster scaled down to what two cores
can run with the links, not the processor, the limit: 4 servers × 2 accelerators (8 ranks, not
16 × 4), 2 servers a leaf, 2:1 to 2 spines, as the full one; NICs of 25 Mbit/s and links inside
a server of 225 Mbit/s, the 9:1 of NVLink 4 to a 400 Gbit/s NIC (so FAST's assumption holds).
Each leaf's uplink to a spine carries 25 Mbit/s. The traffic is ``moe`` with Zipf popularity at
DeepEP's imbalance 1.35 (``--traffic``), scaled to ``--tokens`` tokens a rank so that a run
takes a few seconds.

In each regime (``deep``, ``shallow``: :mod:`liquidsched.emulate.shaping`) one emulated network
runs, with a TCP flow's efficiency measured first:

* liquidsched's modes on the weighted scheduler's schedule: frames, dependency-driven, paced,
  every transfer at once, and ``MPI_Alltoallv``; the **selected** mode is what ``liquidsched
  tune``'s rule (:func:`liquidsched.execute.selection.best_mode`) picks from these same
  measurements, as in ``win_when_run.py``;
* FAST's schedule (balance, Birkhoff–von Neumann stages on the rails, restore), relayed by the
  executor, stage by stage (``frames``, a barrier between stages, as FAST runs) and
  dependency-driven; DeepEP's hierarchical dispatch the same way.

Every mode's bytes are checked after every run. Beside each measured median is the simulator's
prediction (:func:`liquidsched.execute.predict_mode`: frames as frames; relayed legs in the
fluid model's steps policy; all at once and ``MPI_Alltoallv`` in the fluid model; paced as
paced), all as a share of the liquid throughput of the exchange sent straight. Goals (the
issue): the selected mode no slower than all at once, ``MPI_Alltoallv`` and FAST in each regime.
"""

from __future__ import annotations

import statistics

from common import benchmark_parser, progress_bar, report_results
from emulated_networks import REGIMES
from rich.console import Console
from rich.table import Table

from liquidsched import build_topology, plan
from liquidsched.emulate import Emulation, single_flow_check
from liquidsched.execute import crossing_lambda_s, predict_mode, run_exchange
from liquidsched.execute.selection import best_mode
from liquidsched.traffic import make_traffic

TOPOLOGY = ("two-tier:servers=4,gpus=2,servers_per_leaf=2,oversubscription=2,spines=2,"
            "nic_Bps=25Mbit/s,internal_Bps=225Mbit/s")
TRAFFIC = "moe:skew=zipf,imbalance=1.35,seed=1"
#: liquidsched's modes on its own schedule; the selected mode is the best of these
OURS = ("frames", "dependency-driven", "paced", "all-at-once", "alltoallv")
#: the relayed schedulers, and the modes each runs in
RELAYED = {"fast": ("frames", "dependency-driven"), "hierarchical": ("frames", "dependency-driven")}
#: liquidsched's frames with the weighted scheduler's β: a barrier's cost on this machine
OVERHEAD_S = 0.005


def schedules(tokens: int, traffic_spec: str) -> dict:
    """The weighted scheduler's schedule and the relayed schedulers', of one traffic."""
    net = build_topology(TOPOLOGY)
    traffic = make_traffic(net, f"{traffic_spec},tokens={tokens}")
    out = {"ours": plan(net, traffic, "weighted", overhead_s=OVERHEAD_S)}
    out.update({name: plan(net, traffic, name) for name in RELAYED})
    return out


def measured(result, schedule) -> dict:
    """Each mode's times, median, spread, share of the liquid throughput and prediction."""
    modes = {}
    for m in result.modes:
        prediction = predict_mode(schedule, m.mode)
        modes[m.mode] = {"times_s": m.times_s, "median_s": m.median_s, "verified": m.verified,
                         "spread": (max(m.times_s) - min(m.times_s)) / m.median_s,
                         "ratio_to_bound": m.ratio_to_bound,
                         "predicted_s": None if prediction is None else prediction.makespan_s,
                         "predicted_ratio": None if prediction is None else prediction.ratio_to_bound}
    return modes


def measure_regime(plans: dict, regime: str, repeats: int, prefix: str, progress, task) -> dict:
    """Every schedule in its modes in one emulated network of ``regime``."""
    net = plans["ours"].network
    cell = {"regime": regime, "schedules": {}}
    with Emulation(net, prefix, buffers=regime) as emu:
        cell["single_flow_ratio"] = single_flow_check(emu, "s0.g0", "s3.g1", seconds=1.0)["ratio"]
        for name, schedule in plans.items():
            modes = OURS if name == "ours" else RELAYED[name]
            progress.update(task, description=f"{regime}: {name} ({', '.join(modes)})")
            result = run_exchange(schedule, list(modes), repeats=repeats, warmup=1, verify=True,
                                  namespaces=emu.namespace, seed=1)
            cell["schedules"][name] = measured(result, schedule)
            progress.advance(task)
    ours = cell["schedules"]["ours"]
    cell["selected"] = best_mode({mode: r["median_s"] for mode, r in ours.items()})
    return cell


def best_relayed(cell: dict, name: str) -> tuple[str, dict]:
    """The faster of a relayed scheduler's modes (its best showing)."""
    runs = cell["schedules"][name]
    mode = min(runs, key=lambda m: runs[m]["median_s"])
    return mode, runs[mode]


def goals(cell: dict) -> dict:
    """The issue's goal for one regime: the selected mode no slower than each of the others."""
    ours = cell["schedules"]["ours"]
    chosen = ours[cell["selected"]]["median_s"]
    fast_mode, fast = best_relayed(cell, "fast")
    out = {"selected": cell["selected"], "selected_ratio": ours[cell["selected"]]["ratio_to_bound"],
           "over_all_at_once": ours["all-at-once"]["median_s"] / chosen,
           "over_alltoallv": ours["alltoallv"]["median_s"] / chosen,
           "over_fast": fast["median_s"] / chosen, "fast_mode": fast_mode,
           "all_verified": all(r["verified"] for runs in cell["schedules"].values() for r in runs.values())}
    for key in ("over_all_at_once", "over_alltoallv", "over_fast"):
        out[f"{key}_at_least_1"] = out[key] >= 1.0
    return out


def rows_of(cells: list[dict]) -> list[dict]:
    """One row per regime, schedule and mode."""
    return [{"regime": c["regime"], "schedule": name, "mode": mode, **{k: v for k, v in r.items() if k != "times_s"},
             "times_s": r["times_s"], "selected": name == "ours" and mode == c["selected"]}
            for c in cells for name, runs in c["schedules"].items() for mode, r in runs.items()]


def plot(rows: list[dict], path: str) -> None:
    from liquidsched.plot import _save, plt

    regimes = sorted({r["regime"] for r in rows}, key=REGIMES.index)
    fig, axes = plt.subplots(1, len(regimes), figsize=(7 * len(regimes), 4.8), sharey=True, squeeze=False)
    for ax, regime in zip(axes[0], regimes):
        mine = [r for r in rows if r["regime"] == regime]
        xs = range(len(mine))
        ax.bar(xs, [r["ratio_to_bound"] for r in mine],
               color=["tab:green" if r["selected"] else "tab:blue" if r["schedule"] == "ours" else "tab:orange"
                      for r in mine], edgecolor=["black" if r["selected"] else "none" for r in mine])
        ax.scatter(xs, [r["predicted_ratio"] for r in mine], marker="_", s=300, color="black", zorder=3,
                   label="predicted")
        ax.set_xticks(list(xs), [f"{r['schedule']}\n{r['mode']}" for r in mine], rotation=35, ha="right", fontsize=7)
        ax.set_title(f"{regime} buffers (green: selected; orange: relayed)", fontsize=10)
        ax.set_ylim(0, 1.1)
        ax.grid(alpha=0.3, axis="y")
    axes[0][0].set_ylabel("throughput / liquid throughput (median)")
    axes[0][0].legend(fontsize=8, loc="lower left")
    fig.suptitle("skewed MoE all-to-allv, emulated two-tier (4 × 2, 2:1): measured bars, predicted ticks",
                 fontsize=11)
    fig.tight_layout()
    _save(fig, path)


def main() -> None:
    parser = benchmark_parser(__doc__)
    parser.add_argument("--repeats", type=int, default=7, help="timed runs per mode (default 7)")
    parser.add_argument("--tokens", type=int, default=128, help="tokens a rank (default 128)")
    parser.add_argument("--traffic", default=TRAFFIC, help=f"the moe traffic, without tokens (default {TRAFFIC})")
    parser.add_argument("--prefix", default="lsmoe")
    parser.add_argument("--regimes", default=",".join(REGIMES), help=f"deep,shallow (default {','.join(REGIMES)})")
    args = parser.parse_args()
    regimes = [r for r in args.regimes.split(",") if r]
    if set(regimes) - set(REGIMES):
        raise SystemExit(f"no buffer regime {', '.join(sorted(set(regimes) - set(REGIMES)))}")
    plans = schedules(args.tokens, args.traffic)
    lambda_s = crossing_lambda_s(plans["ours"])
    cells = []
    with progress_bar("{task.description}") as progress:
        task = progress.add_task("runs", total=len(regimes) * len(plans))
        for regime in regimes:
            cell = measure_regime(plans, regime, args.repeats, args.prefix, progress, task)
            cell["goals"] = goals(cell)
            cells.append(cell)
    table = Table("buffers", "flow", "schedule", "mode", "median", "spread", "of liquid", "predicted", title=(
        f"{TOPOLOGY}; {args.traffic},tokens={args.tokens}; Λ = {lambda_s:.3f} s; median of {args.repeats} runs"))
    for row in rows_of(cells):
        cell = next(c for c in cells if c["regime"] == row["regime"])
        mark = " (selected)" if row["selected"] else ""
        table.add_row(row["regime"], f"{cell['single_flow_ratio']:.1%}", row["schedule"], row["mode"] + mark,
                      f"{row['median_s']:.3f} s", f"{row['spread']:.0%}", f"{row['ratio_to_bound']:.1%}",
                      "—" if row["predicted_ratio"] is None else f"{row['predicted_ratio']:.1%}")
    console = Console(width=200)
    console.print(table)
    met = [v for c in cells for k, v in c["goals"].items() if k.endswith("at_least_1") or k == "all_verified"]
    result = {"topology": TOPOLOGY, "traffic": f"{args.traffic},tokens={args.tokens}", "lambda_s": lambda_s,
              "repeats": args.repeats, "goals": {c["regime"]: c["goals"] for c in cells},
              "goals_met": f"{sum(met)} of {len(met)}",
              "median_selected_ratio": statistics.median(c["goals"]["selected_ratio"] for c in cells)}
    report_results(rows_of(cells), result, console, args.output, args.plot, plot)


if __name__ == "__main__":
    main()

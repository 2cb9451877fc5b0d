"""Steady state of series of reduces and scatters (paper 003): the optimum against MPICH's binomial tree, and its speed.

    python benchmarks/steady_state.py --output out/steady.json --plot out/steady.png [--platforms 200]

1. Fig. 13's setting: a homogeneous complete graph of 10 nodes (100 MB/s, 100 Mflop/s, 100 MB
   values), the work of a task swept over decades from 0.1 to 10^6 Mflop: ρ of the multi-tree
   optimum against the throughput of the binomial tree in the same one-port model (the paper
   reports about 4×).
2. Fig. 12's setting: random 30-node platforms of LANs joined by a WAN (``tiers``), at host
   densities 0.3 to 0.7; every host holds a value, the first is the target; 10 MB values, 10
   Mflop tasks (§5.1). The distribution of the gain ρ / binomial (the paper reports 2–3×, more at
   higher densities). Both throughputs are steady states of the one-port model; one period of
   each is checked in the frames simulator to last what the model says.
3. Speed: SSR on a 30-node platform with 16 participants, solved, made exact and decomposed:
   the time of each stage, the size of the LP and of the period T.
4. ``--part emulated`` (root): K = 200 reduces and K = 200 scatters on an emulated 7-node
   heterogeneous platform (``tiers:nodes=7,density=0.75,extra_wan=1,rate_scale=0.04``: five hosts
   at 0.4–4 MB/s, two routers), run with MPI by the optimal periodic schedule, by the binomial
   tree or the flat scatter, and by ``MPI_Reduce`` / ``MPI_Scatter``, in one run each; every
   result checked. The goal is 85 % of ρ for the periodic schedule.
"""

from __future__ import annotations

import statistics
from fractions import Fraction

from common import benchmark_parser, progress_bar
from rich.console import Console
from rich.table import Table

from liquidsched.simulate import simulate
from liquidsched.steady import Series, optimal_throughput, solve_steady
from liquidsched.steady.baselines import binomial_reduce_tree, period_of_trees
from liquidsched.steady.period import decompose, period_schedule
from liquidsched.steady.platform import complete, tiers

MB = 10**6
TASK_MFLOP = (0.1, 1, 10, 100, 1_000, 10_000, 100_000, 1_000_000)
DENSITIES = (0.3, 0.4, 0.5, 0.6, 0.7)


def fig13() -> list[dict]:
    p = complete(10, bandwidth_Bps=100e6, speed_flops=100e6)
    rows = []
    for mflop in TASK_MFLOP:
        series = Series("reduce", tuple(p.names), "P0", 100 * MB, Fraction(str(mflop)) * MB)
        rho = optimal_throughput(p, series)
        binomial = period_of_trees(p, series, [binomial_reduce_tree(p, series)]).throughput
        rows.append({"task_mflop": mflop, "rho_per_s": float(rho), "rho": str(rho),
                     "binomial_per_s": float(binomial), "gain": float(rho / binomial)})
    return rows


def reduce_on_tiers(density: float, seed: int) -> Series:
    p = tiers(30, density=density, seed=seed)
    return p, Series("reduce", tuple(p.hosts), p.hosts[0], 10 * MB, 10 * MB)


def frames_period_s(platform, series, period) -> float:
    """One period of these activities, decomposed and simulated in the frames model."""
    d = decompose(platform, period.edge_bytes(series))
    schedule = period_schedule(platform, series, period, d)
    return simulate(schedule, model="frames").makespan_s / d.repeat


def fig12(platforms: int, progress) -> list[dict]:
    per_density = max(1, platforms // len(DENSITIES))
    task = progress.add_task("random platforms", total=per_density * len(DENSITIES))
    rows = []
    for density in DENSITIES:
        for seed in range(per_density):
            p, series = reduce_on_tiers(density, seed)
            rho = optimal_throughput(p, series)
            binomial = period_of_trees(p, series, [binomial_reduce_tree(p, series)])
            row = {"density": density, "seed": seed, "hosts": len(p.hosts), "rho_per_s": float(rho),
                   "binomial_per_s": float(binomial.throughput), "gain": float(rho / binomial.throughput)}
            if seed < 2:
                # The model's period against the frames simulator's, for the binomial tree.
                row["binomial_period_s"] = float(binomial.length_s)
                row["binomial_period_simulated_s"] = frames_period_s(p, series, binomial)
            rows.append(row)
            progress.advance(task)
    return rows


def speed(seeds: int = 3) -> list[dict]:
    rows = []
    for seed in range(seeds):
        p = tiers(30, density=0.6, seed=seed)
        hosts = p.hosts[:16]
        state = solve_steady(p, Series("reduce", tuple(hosts), hosts[0], 10 * MB, 10 * MB))
        rows.append({"seed": seed, "nodes": len(p.names), "participants": len(hosts), **state.summary()})
    return rows


EMULATED_PLATFORM = dict(nodes=7, density=0.75, extra_wan=1, seed=0, rate_scale=0.04)
EMULATED_OPERATIONS, EMULATED_BYTES, EMULATED_TASK_FLOP = 200, 32 * 1024, 10**6


def emulated(console) -> list[dict]:
    """The series of reduces and of scatters on the emulated platform (see the module doc)."""
    from liquidsched import emulate as em
    from liquidsched.steady.baselines import baseline_trees
    from liquidsched.steady.execution import periodic_run, run_series

    p = tiers(**EMULATED_PLATFORM)
    h = p.hosts
    rows = []
    for series in (Series("reduce", tuple(h), h[0], EMULATED_BYTES, EMULATED_TASK_FLOP),
                   Series("scatter", tuple(h[1:]), h[0], EMULATED_BYTES)):
        state = solve_steady(p, series)
        base = period_of_trees(p, series, baseline_trees(p, series))
        runs = [periodic_run("periodic schedule", state.trees, state.period, state.decomposition),
                periodic_run("binomial tree" if series.kind == "reduce" else "flat scatter",
                             baseline_trees(p, series), base, decompose(p, base.edge_bytes(series)))]
        console.print(f"{series.kind}: ρ = {state.throughput} = {float(state.throughput):.4g}/s, "
                      f"baseline {float(base.throughput):.4g}/s; running {EMULATED_OPERATIONS} on the emulated platform …")
        with em.Emulation(p.network(), "lsbench") as plan:
            raw = run_series(p, series, runs, EMULATED_OPERATIONS, plan.namespace)
            drops = sum(em.queue_drops(plan).values())
        for name, r in raw["runs"].items():
            rows.append({"operation": series.kind, "schedule": name, "time_s": r["time_s"],
                         "throughput_per_s": EMULATED_OPERATIONS / r["time_s"],
                         "of_rho": EMULATED_OPERATIONS / r["time_s"] / float(state.throughput),
                         "rho_per_s": float(state.throughput), "model_time_s": r.get("model_time_s"),
                         "checked_right": r["checked_right"], "expected": r["expected"],
                         "queue_drops": drops, "mpi_library": raw["mpi_library"]})
    return rows


def plot_emulated(rows: list[dict], path: str) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, axes = plt.subplots(1, 2, figsize=(11, 4))
    for ax, kind in zip(axes, ("reduce", "scatter")):
        mine = [r for r in rows if r["operation"] == kind]
        ax.bar([r["schedule"] for r in mine], [r["of_rho"] for r in mine], color=["tab:blue", "tab:orange", "tab:gray"])
        ax.axhline(1.0, color="k", linestyle="--", label="ρ")
        ax.axhline(0.85, color="tab:green", linestyle=":", label="goal 85 %")
        ax.set_ylabel("measured throughput / ρ")
        ax.set_title(f"{EMULATED_OPERATIONS} {kind}s, emulated 7-node platform")
        ax.legend()
    fig.tight_layout()
    fig.savefig(path, dpi=120)


def plot(report: dict, path: str) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, (a, b) = plt.subplots(1, 2, figsize=(12, 4.5))
    rows = report["fig13"]
    a.loglog([r["task_mflop"] for r in rows], [r["rho_per_s"] for r in rows], "o-", label="multi-tree optimum ρ")
    a.loglog([r["task_mflop"] for r in rows], [r["binomial_per_s"] for r in rows], "s--", label="binomial tree (MPICH)")
    a.set_xlabel("work of a task (Mflop)")
    a.set_ylabel("reduces per second")
    a.set_title("Fig. 13 setting: complete graph of 10 nodes")
    a.legend()
    by_density = {}
    for r in report["fig12"]:
        by_density.setdefault(r["density"], []).append(r["gain"])
    b.boxplot(list(by_density.values()), tick_labels=[f"{d:g}" for d in by_density])
    b.set_xlabel("density of hosts")
    b.set_ylabel("ρ / binomial tree")
    b.set_title(f"Fig. 12 setting: {len(report['fig12'])} random 30-node platforms")
    fig.tight_layout()
    fig.savefig(path, dpi=120)


def main() -> None:
    from liquidsched.io.files import write_document

    parser = benchmark_parser(__doc__)
    parser.add_argument("--platforms", type=int, default=200, help="random platforms for Fig. 12 (default 200)")
    parser.add_argument("--part", choices=("model", "emulated", "all"), default="model",
                        help="model: items 1–3; emulated: item 4 (root); all: both (default model)")
    args = parser.parse_args()
    console = Console(width=150)
    report: dict = {"benchmark": "steady_state"}
    if args.part in ("model", "all"):
        report.update(model_part(args, console))
    if args.part in ("emulated", "all"):
        rows = emulated(console)
        t = Table("operation", "schedule", "time", "ops/s", "of ρ", "model time", "results right",
                  title=f"{EMULATED_OPERATIONS} operations on the emulated platform tiers:"
                        + ",".join(f"{k}={v}" for k, v in EMULATED_PLATFORM.items()))
        for r in rows:
            t.add_row(r["operation"], r["schedule"], f"{r['time_s']:.2f} s", f"{r['throughput_per_s']:.3g}",
                      f"{r['of_rho']:.1%}", f"{r['model_time_s']:.2f} s" if r["model_time_s"] else "—",
                      f"{r['checked_right']} of {r['expected']}")
        console.print(t)
        report["emulated"] = rows
        if args.plot:
            plot_emulated(rows, args.plot.replace(".png", "-emulated.png"))
    write_document(report, args.output)
    if args.plot and "fig13" in report:
        plot(report, args.plot)


def model_part(args, console) -> dict:
    f13 = fig13()
    t = Table("task (Mflop)", "ρ (reduces/s)", "binomial (reduces/s)", "gain", title="Fig. 13 setting: "
              "complete graph of 10 nodes, 100 MB/s, 100 Mflop/s, 100 MB values")
    for r in f13:
        t.add_row(f"{r['task_mflop']:g}", f"{r['rho']} = {r['rho_per_s']:.4g}", f"{r['binomial_per_s']:.4g}",
                  f"{r['gain']:.2f}×")
    console.print(t)
    with progress_bar("{task.description}") as progress:
        f12 = fig12(args.platforms, progress)
    t = Table("density", "platforms", "hosts", "median gain", "p10", "p90", "min", "max",
              title="Fig. 12 setting: ρ / binomial tree on random 30-node platforms (10 MB values, 10 Mflop tasks)")
    for d in DENSITIES:
        gains = sorted(r["gain"] for r in f12 if r["density"] == d)
        if not gains:
            continue
        q = statistics.quantiles(gains, n=10) if len(gains) > 1 else [gains[0]] * 9
        t.add_row(f"{d:g}", f"{len(gains)}", f"{statistics.median(r['hosts'] for r in f12 if r['density'] == d):g}",
                  f"{statistics.median(gains):.2f}×", f"{q[0]:.2f}×", f"{q[-1]:.2f}×", f"{gains[0]:.2f}×",
                  f"{gains[-1]:.2f}×")
    console.print(t)
    checked = [r for r in f12 if "binomial_period_s" in r]
    worst = max(abs(r["binomial_period_simulated_s"] / r["binomial_period_s"] - 1) for r in checked)
    console.print(f"frames simulator against the model's period, {len(checked)} binomial periods: "
                  f"largest relative difference {worst:.2e}")
    sp = speed()
    t = Table("seed", "LP columns × rows", "build", "HiGHS", "exact", "trees", "decomposition", "T (s)",
              "matchings", title="speed: SSR, 30-node platform, 16 participants (two LPs: ρ, then the least busy optimum)")
    for r in sp:
        tm = r["times_s"]
        t.add_row(str(r["seed"]), f"{r['lp']['columns']:,} × {r['lp']['rows']:,}", f"{tm['build']:.2f} s",
                  f"{tm['lp']:.2f} s", f"{tm['exact']:.2f} s", f"{tm['trees']:.3f} s", f"{tm['decomposition']:.3f} s",
                  r["period_s"], str(r["matchings"]))
    console.print(t)
    return {"fig13": f13, "fig12": f12, "speed": sp}


if __name__ == "__main__":
    main()

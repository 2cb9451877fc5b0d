"""Skewed all-to-allv as ML clusters run it: liquidsched's best schedule against FAST and
hierarchical dispatch, in the fluid and frames models.

    python benchmarks/moe.py --output out/moe.json --plot out/moe.png   # 6 minutes

Networks: rail-optimised (8 servers × 4 accelerators, 4 rails, 2:1 to 2 spines; NVLink 450 GB/s,
NICs 50 GB/s), the same with NVLink no faster than a NIC (FAST's assumption broken), two-tier
(16 servers × 4, 4 servers a leaf, 2:1), and ``fat-tree:k=8,oversubscription=2`` (64 hosts, the
4 hosts of an edge switch taken as a server for FAST and hierarchical dispatch: nothing inside
is faster than between). Traffics: ``moe`` (DeepSeek-V3's shape: 8 experts a rank, top-8, 4,096
tokens of 7,408 B) with uniform expert choice and with Zipf and log-normal popularity at three
levels of DeepEP's imbalance (max/mean of the tokens a rank receives: 1.1, 1.35, 2).

Per cell, in ms and over Λ (the bound of sending every transfer straight):

* **ours**, the better in the fluid model of (a) *paced* (the simulator's ``paced`` policy): every
  transfer sent straight from the start at size / Λ, which no resource's capacity is below, so
  that all end at Λ plus their path's latency (the continuous form of a liquid schedule; its
  chunked execution is the ``paced`` mode), and (b) ``rails`` (FAST's balancing, then every
  server to every other at once on the rails, pipelined in 8 parts; fluid model, ``steps``
  policy); its time in the frames model beside it (``rails``' frames; for paced, the frames of
  ``weighted`` with β = 0, left out under ``--no-frames-direct``);
* **all at once** in the fluid model (max-min fair sharing);
* **FAST** and **hierarchical** dispatch (4 parts) in the fluid model's ``steps`` policy
  (each accelerator moves to its next step once its flows of the last are done);
* planning times: ``rails``, FAST's own computation (balance, stages, restore) and its whole
  schedule (legs cut into slot-valid frames), hierarchical.

Every schedule is validated. Goals (the *Skewed all-to-allv* issue): ours ≤ 1.02 × Λ everywhere,
≤ FAST everywhere, and strictly below FAST where FAST's assumption (links inside a server far
faster than between) does not hold.
"""

from __future__ import annotations

import time

from common import benchmark_parser, progress_bar, report_results
from rich.console import Console
from rich.table import Table

from liquidsched import compute_bound, plan, validate
from liquidsched.simulate import simulate
from liquidsched.topologies import build_topology
from liquidsched.traffic import make_traffic

#: (name, topology, servers of how many hosts (None: from the host names), FAST's assumption holds)
NETWORKS = [
    ("rail-optimised", "rail-optimised:servers=8,gpus=4,oversubscription=2", None, True),
    ("rail-optimised, slow NVLink", "rail-optimised:servers=8,gpus=4,oversubscription=2,nvlink_Bps=50GB/s", None,
     False),
    ("two-tier", "two-tier:servers=16,gpus=4,oversubscription=2", None, True),
    ("fat-tree k=8, 2:1", "fat-tree:k=8,oversubscription=2", 4, False),
]
TRAFFICS = [("uniform", "moe:skew=uniform,seed=1")] + [
    (f"{skew} {level}", f"moe:skew={skew},imbalance={level},seed=1")
    for skew in ("zipf", "lognormal") for level in (1.1, 1.35, 2)]
RAILS_CHUNKS = 8
HIERARCHICAL_CHUNKS = 4


def timed_plan(net, traffic, algorithm: str, **options):
    start = time.perf_counter()
    schedule = plan(net, traffic, algorithm, **options)
    elapsed = time.perf_counter() - start
    violations = validate(schedule)
    if violations:
        raise SystemExit(f"{algorithm} on {net.name}: invalid schedule: {violations[0]}")
    return schedule, elapsed


def measure_cell(name: str, spec: str, gpus: int | None, traffic_name: str, traffic_spec: str,
                 frames_direct: bool) -> dict:
    net = build_topology(spec)
    traffic = make_traffic(net, traffic_spec)
    lam = float(compute_bound(net, traffic).duration_s)
    servers = {} if gpus is None else {"gpus": gpus}
    direct, _ = timed_plan(net, traffic, "round-robin")
    all_at_once = simulate(direct, "fluid", "all-at-once").makespan_s
    # The simulator's paced policy: every transfer capped at its paced rate, shared max-min.
    paced = simulate(direct, "fluid", "paced").makespan_s
    rails, rails_s = timed_plan(net, traffic, "rails", chunks=RAILS_CHUNKS, **servers)
    rails_fluid = simulate(rails, "fluid", "steps").makespan_s
    fast, fast_s = timed_plan(net, traffic, "fast", **servers)
    hier, hier_s = timed_plan(net, traffic, "hierarchical", chunks=HIERARCHICAL_CHUNKS, **servers)
    ours_is_rails = rails_fluid < paced
    if ours_is_rails:
        ours_frames = float(rails.makespan_s())
    elif frames_direct:
        ours_frames = float(plan(net, traffic, "weighted").makespan_s())
    else:
        ours_frames = None
    return {
        "network": name, "topology": spec, "traffic": traffic_name, "traffic_spec": traffic_spec,
        "transfers": len(traffic), "bytes": traffic.total_bytes, "lambda_s": lam,
        "ours": "rails" if ours_is_rails else "paced", "ours_fluid_s": min(paced, rails_fluid),
        "ours_frames_s": ours_frames, "paced_fluid_s": paced, "rails_fluid_s": rails_fluid,
        "all_at_once_fluid_s": all_at_once, "fast_fluid_s": simulate(fast, "fluid", "steps").makespan_s,
        "hierarchical_fluid_s": simulate(hier, "fluid", "steps").makespan_s,
        "fast_stages": fast.info.stats["stages"], "fast_padding_bytes": fast.info.stats["padding_bytes"],
        "plan_rails_s": rails_s, "plan_fast_algorithm_s": fast.info.stats["algorithm_s"], "plan_fast_s": fast_s,
        "plan_hierarchical_s": hier_s,
    }


def goals(rows: list[dict], assumption: dict[str, bool]) -> dict:
    over = [r["ours_fluid_s"] / r["lambda_s"] for r in rows]
    versus_fast = [r["ours_fluid_s"] / r["fast_fluid_s"] for r in rows]
    broken = [r["ours_fluid_s"] / r["fast_fluid_s"] for r in rows if not assumption[r["network"]]]
    return {"ours_over_lambda_worst": max(over), "ours_within_1.02_lambda": max(over) <= 1.02,
            "ours_over_fast_worst": max(versus_fast), "ours_at_most_fast": max(versus_fast) <= 1.0,
            "ours_over_fast_where_assumption_broken_worst": max(broken, default=None),
            "strictly_better_where_assumption_broken": all(x < 1.0 for x in broken)}


def print_table(rows: list[dict], console: Console) -> None:
    table = Table(title="skewed all-to-allv: time over Λ (fluid model unless said), planning in ms")
    for col in ("network", "traffic", "Λ ms", "ours", "ours (frames)", "all at once", "FAST", "hierarchical",
                "plan rails", "plan FAST (its own / whole)", "plan hier."):
        table.add_column(col, justify="left" if col in ("network", "traffic") else "right")
    for r in rows:
        lam = r["lambda_s"]
        frames = "—" if r["ours_frames_s"] is None else f"{r['ours_frames_s'] / lam:.3f}"
        table.add_row(r["network"], r["traffic"], f"{lam * 1e3:.3f}", f"{r['ours_fluid_s'] / lam:.3f} ({r['ours']})",
                      frames, f"{r['all_at_once_fluid_s'] / lam:.3f}", f"{r['fast_fluid_s'] / lam:.3f}",
                      f"{r['hierarchical_fluid_s'] / lam:.3f}", f"{r['plan_rails_s'] * 1e3:.0f}",
                      f"{r['plan_fast_algorithm_s'] * 1e3:.0f} / {r['plan_fast_s'] * 1e3:.0f}",
                      f"{r['plan_hierarchical_s'] * 1e3:.0f}")
    console.print(table)


def plot(rows: list[dict], path: str) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    networks = list(dict.fromkeys(r["network"] for r in rows))
    fig, axes = plt.subplots(1, len(networks), figsize=(5 * len(networks), 4.5), sharey=True)
    series = [("ours", "ours_fluid_s"), ("all at once", "all_at_once_fluid_s"), ("FAST", "fast_fluid_s"),
              ("hierarchical", "hierarchical_fluid_s")]
    for ax, name in zip(axes, networks):
        mine = [r for r in rows if r["network"] == name]
        xs = range(len(mine))
        width = 0.8 / len(series)
        for k, (label, key) in enumerate(series):
            ax.bar([x + k * width for x in xs], [r[key] / r["lambda_s"] for r in mine], width, label=label)
        ax.axhline(1.0, color="black", linewidth=0.8, linestyle="--")
        ax.set_xticks([x + 0.4 - width / 2 for x in xs], [r["traffic"] for r in mine], rotation=45, ha="right")
        ax.set_title(name)
    axes[0].set_ylabel("time / Λ (fluid model)")
    axes[0].legend()
    fig.tight_layout()
    fig.savefig(path, dpi=120)


def main() -> None:
    parser = benchmark_parser(__doc__)
    parser.add_argument("--only", help="networks whose name contains this (comma-separated)")
    parser.add_argument("--no-frames-direct", dest="frames_direct", action="store_false",
                        help="where paced is ours, leave out the frames-model time of the weighted schedule (its "
                             "planning is most of the benchmark's 6 minutes)")
    args = parser.parse_args()
    console = Console(width=200)
    networks = [n for n in NETWORKS if not args.only or any(k in n[0] for k in args.only.split(","))]
    rows = []
    with progress_bar("cells", Console(stderr=True)) as progress:
        task = progress.add_task("cells", total=len(networks) * len(TRAFFICS))
        for name, spec, gpus, _ in networks:
            for traffic_name, traffic_spec in TRAFFICS:
                rows.append(measure_cell(name, spec, gpus, traffic_name, traffic_spec, args.frames_direct))
                progress.advance(task)
    print_table(rows, console)
    report_results(rows, goals(rows, {n[0]: n[3] for n in NETWORKS}), console, args.output, args.plot, plot)


if __name__ == "__main__":
    main()

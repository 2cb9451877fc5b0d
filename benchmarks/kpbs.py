"""KPBS redistributions (paper 004): GGP, OGGP and Solstice against the lower bound and all at once.

    python benchmarks/kpbs.py --output out/kpbs.json --plot out/kpbs.png [--seeds 10]

Random patterns as in paper 004 §4: 10 senders and 10 receivers through a backbone carrying
k = 5 cards at once; each (sender, receiver) pair present with probability 1/2, its size uniform
in [10, x] units of time for x from 10 to 80 (a unit is 1 s: 1 MB on 1 MB/s cards); β of 0, 1
and 5 units. For each: the KPBS lower bound β·max(Δ, ⌈|E|/k⌉) + max(W, P/k), the cost
Σ(β + longest piece) of GGP, OGGP and Solstice (its slicing on GGP's completion), and β plus the fluid model's time for every transfer sent at
once (one step, TCP-like fair sharing: the "brute force" of paper 004 §3; not 1-port, so it may
go below the bound of stepped schedules). Every schedule is validated; on
β = 1 (sizes whole multiples of β) GGP and OGGP must stay within twice the bound, as proven.

Then the speed of the core (one core): GGP, OGGP and Solstice on a 256 × 256 redistribution of 65,536
transfers of 10–80 units with k = 64.
"""

from __future__ import annotations

import os
import random
import statistics
import time
from fractions import Fraction

from common import benchmark_parser, progress_bar
from rich.console import Console
from rich.table import Table

from liquidsched import Traffic, Transfer, compute_bound, plan, validate
from liquidsched.bounds import frame_lower_bound
from liquidsched.schedulers.kpbs import PEELING, kpbs_instance, kpbs_lower_bound_s
from liquidsched.schedulers.weighted import fractional_frame_optimum
from liquidsched.simulate import simulate
from liquidsched.topologies import backbone, build_topology
from liquidsched.traffic import make_traffic

MB = 10**6
SIZES_UP_TO = (10, 20, 30, 40, 50, 60, 70, 80)
BETAS = (0, 1, 5)
ALGORITHMS = (*PEELING, "weighted")


def pattern(seed: int, largest: int, n: int = 10, density: float = 0.5) -> Traffic:
    """A random redistribution: pairs present with probability ``density``, sizes uniform in
    [10, ``largest``] MB (whole MB: whole seconds on 1 MB/s cards)."""
    rng = random.Random(seed)
    transfers = [Transfer(f"a{s}", f"b{r}", rng.randint(10, largest) * MB)
                 for s in range(1, n + 1) for r in range(1, n + 1) if rng.random() < density]
    return Traffic(transfers or [Transfer("a1", "b1", 10 * MB)], f"random-{seed}-{largest}")


def measure_patterns(seeds: int, progress) -> list[dict]:
    net = backbone(10, 10, card_Bps=1e6, backbone_Bps=5e6)
    rows = []
    task = progress.add_task("patterns", total=len(SIZES_UP_TO) * len(BETAS) * seeds)
    for largest in SIZES_UP_TO:
        for beta in BETAS:
            for seed in range(seeds):
                traffic = pattern(seed, largest)
                bound = kpbs_lower_bound_s(kpbs_instance(net, traffic), beta)
                row = {"largest": largest, "beta_s": beta, "seed": seed, "transfers": len(traffic),
                       "bound_s": float(bound)}
                for algorithm in ALGORITHMS:
                    s = plan(net, traffic, algorithm, overhead_s=float(beta))
                    if validate(s):
                        raise RuntimeError(f"{algorithm} gave an invalid schedule on {traffic.name}")
                    cost = s.makespan_s(Fraction(beta))
                    if beta == 1 and algorithm in ("ggp", "oggp") and cost > 2 * bound:
                        raise RuntimeError(f"{algorithm} above twice the bound on {traffic.name}")
                    row[algorithm] = {"steps": s.length, "cost_s": float(cost), "over_bound": float(cost / bound)}
                # All at once is one step: it pays β once, then TCP-like fair sharing.
                brute = beta + simulate(s, "fluid", "all-at-once").makespan_s
                row["all_at_once"] = {"time_s": brute, "over_bound": brute / float(bound)}
                rows.append(row)
                progress.advance(task)
    return rows


def measure_fractional(seeds: int) -> list[dict]:
    """The weighted schedule (β = 0) against the fractional optimum of frames (column generation
    priced by the core's branch and bound), which no schedule of frames beats: the paper's
    10 x 10, k = 5 patterns (x = 80), and random networks with uneven random matrices, where
    paths cross several shared cables."""
    cases = [(f"backbone 10x10 k=5, seed {seed}", backbone(10, 10, card_Bps=1e6, backbone_Bps=5e6), pattern(seed, 80))
             for seed in range(seeds)]
    for seed in range(seeds):
        net = build_topology(f"random:switches=5,hosts=10,extra_cables=3,seed={seed}")
        cases.append((net.name, net, make_traffic(net, f"random:seed={seed},density=0.5", net.hosts(), MB)))
    rows = []
    for name, net, traffic in cases:
        start = time.perf_counter()
        optimum = fractional_frame_optimum(net, traffic)
        seconds = time.perf_counter() - start
        w = plan(net, traffic, "weighted")
        rows.append({"case": name, "transfers": len(traffic), "lambda_s": float(compute_bound(net, traffic).duration_s),
                     "optimum_s": float(optimum), "seconds": seconds, "weighted_s": float(w.makespan_s()),
                     "over_optimum": float(w.makespan_s() / optimum)})
    return rows


def fractional_table(rows: list[dict]) -> Table:
    table = Table("case", "transfers", "Λ", "fractional optimum", "column generation", "weighted (β = 0)",
                  "over the optimum", title="weighted against the fractional optimum of frames")
    for r in rows:
        table.add_row(r["case"], str(r["transfers"]), f"{r['lambda_s']:.3f} s", f"{r['optimum_s']:.3f} s",
                      f"{r['seconds']:.2f} s", f"{r['weighted_s']:.3f} s", f"{r['over_optimum']:.4f}")
    return table


def measure_skewed(beta: float = 0.001) -> dict:
    """A skewed all-to-allv (``skewed:seed=1,alpha=1``, 1 MB per receiver on average) among 64
    hosts of a 2:1 oversubscribed fat tree: the weighted schedule against Λ + β·(frame bound),
    DSatur on pieces of 125 kB, and every transfer at once in the fluid model."""
    net = build_topology("fat-tree:k=8,oversubscription=2")
    hosts = net.hosts()[:64]
    traffic = make_traffic(net, "skewed:seed=1,alpha=1", hosts, MB)
    bound = compute_bound(net, traffic)
    steps = frame_lower_bound(traffic.resource_sets(net), net.resource_slots)
    floor = bound.duration_s + Fraction(beta) * steps
    start = time.perf_counter()
    w = plan(net, traffic, "weighted", overhead_s=beta)
    seconds = time.perf_counter() - start
    if validate(w):
        raise RuntimeError("the weighted schedule of the skewed all-to-allv is invalid")
    chunk = MB // 8
    pieces = Traffic([Transfer(t.src, t.dst, min(chunk, t.size_bytes - k)) for t in traffic
                      for k in range(0, t.size_bytes, chunk)], "skewed pieces")
    d = plan(net, pieces, "dsatur")
    brute = beta + simulate(w, "fluid", "all-at-once").makespan_s
    return {"hosts": 64, "transfers": len(traffic), "beta_s": beta, "lambda_s": float(bound.duration_s),
            "frame_bound": steps, "floor_s": float(floor),
            "weighted": {"steps": w.length, "cost_s": float(w.makespan_s(beta)), "over_floor": float(w.makespan_s(beta) / floor),
                         "seconds": seconds},
            "dsatur_pieces": {"pieces": len(pieces), "steps": d.length, "cost_s": float(d.makespan_s(beta)),
                              "over_floor": float(d.makespan_s(beta) / floor)},
            "all_at_once": {"time_s": brute, "over_floor": brute / float(floor)}}


def measure_speed() -> dict:
    """GGP and OGGP in the core on 256 × 256, k = 64 (weights already in units)."""
    from liquidsched import _core

    if hasattr(os, "sched_setaffinity"):
        os.sched_setaffinity(0, {sorted(os.sched_getaffinity(0))[0]})
    rng = random.Random(1)
    n = 256
    edges = [(s, r, rng.randint(10, 80)) for s in range(n) for r in range(n)]
    bound = _core.kpbs_lower_bound(n, n, edges, 64)
    out = {"hosts": f"{n} x {n}", "transfers": len(edges), "k": 64, "bound_units": bound}
    for algorithm, strategy in PEELING.items():  # the peeling schedulers, in the core alone
        start = time.perf_counter()
        steps, _, _ = _core.kpbs_peel(n, n, edges, 64, strategy=strategy)
        seconds = time.perf_counter() - start
        cost = sum(1 + max(u for _, u in pieces) for _, pieces in steps)
        out[algorithm] = {"seconds": seconds, "steps": len(steps), "cost_units": cost, "over_bound": cost / bound}
    return out


def summary_table(rows: list[dict]) -> Table:
    table = Table("sizes up to", "β", "patterns", "transfers", *(f"{a} / bound" for a in ALGORITHMS),
                  "worst ggp", "worst oggp", "all at once / bound", "oggp vs all at once",
                  title="KPBS, 10 x 10, k = 5: mean cost over the lower bound")
    for largest in SIZES_UP_TO:
        for beta in BETAS:
            some = [r for r in rows if r["largest"] == largest and r["beta_s"] == beta]
            mean = {a: statistics.mean(r[a]["over_bound"] for r in some) for a in ALGORITHMS}
            worst = {a: max(r[a]["over_bound"] for r in some) for a in ALGORITHMS}
            brute = statistics.mean(r["all_at_once"]["over_bound"] for r in some)
            gain = statistics.mean(1 - r["oggp"]["cost_s"] / r["all_at_once"]["time_s"] for r in some)
            table.add_row(str(largest), str(beta), str(len(some)), f"{statistics.mean(r['transfers'] for r in some):.0f}",
                          *(f"{mean[a]:.3f}" for a in ALGORITHMS), f"{worst['ggp']:.3f}", f"{worst['oggp']:.3f}",
                          f"{brute:.3f}", f"{gain:+.1%}")
    return table


def plot(rows: list[dict], path: str) -> None:
    from liquidsched.plot import _save, plt

    fig, axes = plt.subplots(1, len(BETAS), figsize=(4.6 * len(BETAS), 4.2), sharey=True)
    for ax, beta in zip(axes, BETAS):
        for name, key, colour in (("GGP", "ggp", "tab:blue"), ("OGGP", "oggp", "tab:green"),
                                  ("Solstice", "solstice", "tab:purple"), ("weighted", "weighted", "tab:orange"),
                                  ("all at once (fluid)", "all_at_once", "tab:red")):
            ys = [statistics.mean(r[key]["over_bound"] for r in rows if r["largest"] == x and r["beta_s"] == beta)
                  for x in SIZES_UP_TO]
            ax.plot(SIZES_UP_TO, ys, "o-", color=colour, label=name, ms=4)
        ax.axhline(1.0, color="0.4", lw=1)
        ax.set_title(f"β = {beta} s")
        ax.set_xlabel("largest size (s at card rate)")
        ax.grid(alpha=0.3)
    axes[0].set_ylabel("cost / KPBS lower bound (mean)")
    axes[0].legend(fontsize=8)
    fig.suptitle("paper 004 §4 patterns: 10 x 10 through a backbone of k = 5")
    fig.tight_layout()
    _save(fig, path)


def main() -> None:
    from liquidsched.io.files import write_document

    parser = benchmark_parser(__doc__)
    parser.add_argument("--seeds", type=int, default=10, help="patterns per (size, β) (default 10)")
    args = parser.parse_args()
    console = Console(width=170)
    with progress_bar("{task.description}") as progress:
        rows = measure_patterns(args.seeds, progress)
    console.print(summary_table(rows))
    fractional = measure_fractional(min(args.seeds, 5))
    console.print(fractional_table(fractional))
    skew = measure_skewed()
    table = Table("schedule", "steps", "time", "over Λ + β·frame bound", title=(
        f"skewed all-to-allv, 64 hosts of fat-tree:k=8,oversubscription=2, {skew['transfers']:,} transfers, "
        f"β = {skew['beta_s'] * 1e3:g} ms: Λ = {skew['lambda_s'] * 1e3:.1f} ms, frame bound {skew['frame_bound']}"))
    table.add_row("weighted", f"{skew['weighted']['steps']:,}", f"{skew['weighted']['cost_s'] * 1e3:.1f} ms",
                  f"{skew['weighted']['over_floor']:.3f}")
    table.add_row("DSatur on 125 kB pieces", f"{skew['dsatur_pieces']['steps']:,}",
                  f"{skew['dsatur_pieces']['cost_s'] * 1e3:.1f} ms", f"{skew['dsatur_pieces']['over_floor']:.3f}")
    table.add_row("all at once (fluid)", "1", f"{skew['all_at_once']['time_s'] * 1e3:.1f} ms",
                  f"{skew['all_at_once']['over_floor']:.3f}")
    console.print(table)
    speed = measure_speed()
    table = Table("algorithm", "seconds", "steps", "cost / bound", title=f"speed: {speed['hosts']}, "
                  f"{speed['transfers']:,} transfers, k = {speed['k']} (one core)")
    for a in PEELING:
        table.add_row(a, f"{speed[a]['seconds']:.2f}", f"{speed[a]['steps']:,}", f"{speed[a]['over_bound']:.3f}")
    console.print(table)
    write_document({"benchmark": "kpbs", "patterns": rows, "fractional": fractional, "skewed": skew, "speed": speed},
                   args.output)
    if args.plot:
        plot(rows, args.plot)


if __name__ == "__main__":
    main()

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

from liquidsched import Traffic, Transfer, plan, validate
from liquidsched.schedulers.kpbs import PEELING, kpbs_instance, kpbs_lower_bound_s
from liquidsched.simulate import simulate
from liquidsched.topologies import backbone

MB = 10**6
SIZES_UP_TO = (10, 20, 30, 40, 50, 60, 70, 80)
BETAS = (0, 1, 5)
ALGORITHMS = tuple(PEELING)


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
                    if beta == 1 and algorithm != "solstice" and cost > 2 * bound:
                        raise RuntimeError(f"{algorithm} above twice the bound on {traffic.name}")
                    row[algorithm] = {"steps": s.length, "cost_s": float(cost), "over_bound": float(cost / bound)}
                # All at once is one step: it pays β once, then TCP-like fair sharing.
                brute = beta + simulate(s, "fluid", "all-at-once").makespan_s
                row["all_at_once"] = {"time_s": brute, "over_bound": brute / float(bound)}
                rows.append(row)
                progress.advance(task)
    return rows


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
    for algorithm, strategy in PEELING.items():
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
                                  ("Solstice", "solstice", "tab:purple"), ("all at once (fluid)", "all_at_once", "tab:red")):
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
    speed = measure_speed()
    table = Table("algorithm", "seconds", "steps", "cost / bound", title=f"speed: {speed['hosts']}, "
                  f"{speed['transfers']:,} transfers, k = {speed['k']} (one core)")
    for a in ALGORITHMS:
        table.add_row(a, f"{speed[a]['seconds']:.2f}", f"{speed[a]['steps']:,}", f"{speed[a]['over_bound']:.3f}")
    console.print(table)
    write_document({"benchmark": "kpbs", "patterns": rows, "speed": speed}, args.output)
    if args.plot:
        plot(rows, args.plot)


if __name__ == "__main__":
    main()

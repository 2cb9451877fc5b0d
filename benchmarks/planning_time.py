"""Planning a skewed all-to-allv in milliseconds: the paced plan of 64 to 512 ranks, cold and warm, beside the frames of the weighted scheduler.

    python benchmarks/planning_time.py --output out/planning-time.json --plot out/planning-time.png   # 3 minutes

Networks of 64, 128, 256 and 512 ranks (one per accelerator): two-tier (servers of 4, 4
servers a leaf, 2:1) and rail-optimised (servers of 4, 4 rails, 2:1 to the spines). Traffic:
two successive steps of one ``moe`` layer (DeepSeek-V3's shape, Zipf popularity calibrated to an imbalance of 1.35,
every step drawing its tokens anew), the same matrices on both networks.

What is timed, on one core, in one run (median of ``--repeats``):

* **cold**: the paced plan of step 0 from nothing (:class:`liquidsched.execute.paced.
  RankPacedPlanner`, the core's ``PacedPlanner``: every message's route walked once);
* **warm, small change**: step 0 with 1 % of its messages taken from step 1, planned from the
  plan of step 0 (only the changed messages walked);
* **warm, next step**: step 1 planned from step 0 (a new draw of tokens changes nearly every
  message, so a warm start saves little);
* **frames (weighted)**: the weighted scheduler's steps of step 0 in the core (β = 0), the
  frames the interposition library runs in its frames mode, at 64 and 128 ranks only (its
  time grows about as the square of the messages: 161 s at 256 ranks, measured once);
* set-up, once per communicator and not planning: the routes of every rank pair handed to the
  core.

The plan's promise is the paced duration Λ · (1 + h) (h = 0.02), so its time is 1.02 × the
bound it reports, on any matrix; the weighted steps' time in the frames model (β = 0) is given
over Λ and over the frames bound beside it (frames hold one transfer per slot, so a one-slot
spine link of 4 NICs' capacity puts the frames bound of a rail-optimised network 4-8 × above Λ). The interposition library plans its paced calls through the same core
function (``ls_paced_plan``). Goals (the *Skewed all-to-allv* issue): 64 ranks ≤ 10 ms, 512
ranks ≤ 100 ms, within 5 % of the bound, warm faster than cold.
"""

from __future__ import annotations

import statistics
import time

import numpy as np
from common import benchmark_parser, progress_bar, report_results
from rich.console import Console
from rich.table import Table

from liquidsched import _core, compute_bound
from liquidsched.bounds import transfer_slot_times_s
from liquidsched.execute.paced import PACE_HEADROOM, RankPacedPlanner
from liquidsched.moe import route_steps
from liquidsched.topologies import build_topology
from liquidsched.traffic import Traffic, Transfer

RANKS = (64, 128, 256, 512)
NETWORKS = [
    ("two-tier", "two-tier:servers={servers},gpus=4,oversubscription=2"),
    ("rail-optimised", "rail-optimised:servers={servers},gpus=4,oversubscription=2"),
]
#: The ranks up to which the weighted scheduler's frames are timed too.
FRAMES_UP_TO = 128
#: The share of messages a small change takes from the next step.
SMALL_CHANGE = 0.01
#: DeepEP's middle level of imbalance (max / mean of the tokens a rank receives), as in moe.py.
IMBALANCE = 1.35
GOAL_MS = {64: 10.0, 512: 100.0}


def timed_ms(action, repeats: int) -> tuple[float, object]:
    """The median time of ``action()`` over ``repeats`` calls, in ms, and its last value."""
    times, value = [], None
    for _ in range(repeats):
        start = time.perf_counter()
        value = action()
        times.append((time.perf_counter() - start) * 1e3)
    return statistics.median(times), value


def small_change(before: np.ndarray, after: np.ndarray, share: float, seed: int) -> np.ndarray:
    """``before`` with a ``share`` of its off-diagonal messages taken from ``after``."""
    n = len(before)
    off = np.flatnonzero(~np.eye(n, dtype=bool))
    picked = np.random.default_rng(seed).choice(off, max(1, int(share * len(off))), replace=False)
    changed = before.copy().ravel()
    changed[picked] = after.ravel()[picked]
    return changed.reshape(n, n)


def frames_ms(net, hosts: list[str], matrix: np.ndarray) -> tuple[float, float, float]:
    """The weighted scheduler's steps of ``matrix`` in the core: (ms, frames-model time / Λ,
    frames-model time / the frames bound: the bound with every resource's slots, which one-slot
    links of a higher capacity than a host's put above Λ)."""
    n = len(hosts)
    traffic = Traffic([Transfer(hosts[i], hosts[j], int(matrix[i, j])) for i in range(n) for j in range(n)
                       if i != j and matrix[i, j]])
    paths, times = traffic.resource_lists(net), [float(t) for t in transfer_slot_times_s(net, traffic)]
    start = time.perf_counter()
    steps = _core.weighted_steps(paths, len(net.resources), times, slots=list(net.resource_slots))
    elapsed = (time.perf_counter() - start) * 1e3
    frames_s = sum(length for length, _ in steps)
    bound = compute_bound(net, traffic)
    return elapsed, frames_s / float(bound.duration_s), frames_s / float(bound.frame_bound_time_s)


def measure(name: str, spec: str, ranks: int, steps, repeats: int) -> dict:
    net = build_topology(spec.format(servers=ranks // 4))
    hosts = net.hosts()[:ranks]
    first, second = steps[0].bytes, steps[1].bytes
    changed = small_change(first, second, SMALL_CHANGE, seed=ranks)
    start = time.perf_counter()
    planner = RankPacedPlanner(net, hosts)
    setup_s = time.perf_counter() - start

    def cold():
        planner.forget()
        return planner.plan(first)

    def warm(matrix):
        def run():
            planner.plan(first)
            start = time.perf_counter()
            plan = planner.plan(matrix)
            return plan, (time.perf_counter() - start) * 1e3
        return run

    cold_ms, plan = timed_ms(cold, repeats)
    small = [warm(changed)() for _ in range(repeats)]
    step = [warm(second)() for _ in range(repeats)]
    planner.forget()
    check = planner.plan(changed)
    if check.bound_s != small[-1][0].bound_s:
        raise SystemExit(f"{name}, {ranks} ranks: the warm plan differs from the cold plan of the same matrix")
    row = {
        "network": name, "topology": spec.format(servers=ranks // 4), "ranks": ranks,
        "messages": int(np.count_nonzero(first) - np.count_nonzero(np.diag(first))),
        "lambda_s": plan.bound_s, "bottleneck": plan.bottleneck,
        "plan_over_bound": 1 + PACE_HEADROOM,
        "setup_s": setup_s, "cold_ms": cold_ms,
        "warm_small_ms": statistics.median(t for _, t in small), "warm_small_changed": small[-1][0].changed,
        "warm_step_ms": statistics.median(t for _, t in step), "warm_step_changed": step[-1][0].changed,
        "frames_ms": None, "frames_over_bound": None, "frames_over_frame_bound": None,
    }
    if ranks <= FRAMES_UP_TO:
        row["frames_ms"], row["frames_over_bound"], row["frames_over_frame_bound"] = frames_ms(net, hosts, first)
    return row


def goals(rows: list[dict]) -> dict:
    met = {}
    for ranks, goal in GOAL_MS.items():
        if not any(r["ranks"] == ranks for r in rows):
            continue
        worst = max(r["cold_ms"] for r in rows if r["ranks"] == ranks)
        met[f"cold {ranks} ranks <= {goal} ms"] = {"worst_ms": worst, "met": worst <= goal}
    met["within 5 % of the bound"] = {"plan_over_bound": 1 + PACE_HEADROOM, "met": 1 + PACE_HEADROOM <= 1.05}
    slower = [r for r in rows if r["warm_small_ms"] >= r["cold_ms"]]
    met["warm (small change) faster than cold"] = {"worst_ratio": max(r["warm_small_ms"] / r["cold_ms"] for r in rows),
                                                   "met": not slower}
    return met


def print_table(rows: list[dict], console: Console) -> None:
    table = Table(title="Planning a skewed all-to-allv (moe, Zipf, imbalance 1.35): paced plan in the core, one core, ms")
    for column in ("network", "ranks", "messages", "Λ ms", "cold", "warm 1 %", "warm next step", "plan / Λ",
                   "frames (weighted)", "frames / Λ", "frames / frames bound", "routes (set-up) s"):
        table.add_column(column, justify="left" if column == "network" else "right")
    for r in rows:
        frames = "-" if r["frames_ms"] is None else f"{r['frames_ms']:.0f}"
        frames_ratio = "-" if r["frames_over_bound"] is None else f"{r['frames_over_bound']:.3f}"
        frames_bound = "-" if r["frames_over_frame_bound"] is None else f"{r['frames_over_frame_bound']:.3f}"
        table.add_row(r["network"], str(r["ranks"]), f"{r['messages']:,}", f"{r['lambda_s'] * 1e3:.3f}",
                      f"{r['cold_ms']:.2f}", f"{r['warm_small_ms']:.2f}", f"{r['warm_step_ms']:.2f}",
                      f"{r['plan_over_bound']:.2f}", frames, frames_ratio, frames_bound, f"{r['setup_s']:.2f}")
    console.print(table)


def plot(rows: list[dict], path: str) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(6.5, 4.5))
    for name in dict.fromkeys(r["network"] for r in rows):
        mine = [r for r in rows if r["network"] == name]
        xs = [r["ranks"] for r in mine]
        ax.plot(xs, [r["cold_ms"] for r in mine], marker="o", label=f"{name}: paced, cold")
        ax.plot(xs, [r["warm_small_ms"] for r in mine], marker="s", linestyle="--", label=f"{name}: paced, warm 1 %")
        framed = [r for r in mine if r["frames_ms"] is not None]
        ax.plot([r["ranks"] for r in framed], [r["frames_ms"] for r in framed], marker="^", linestyle=":",
                label=f"{name}: frames (weighted)")
    ax.scatter(list(GOAL_MS), list(GOAL_MS.values()), marker="_", s=400, color="black", label="goal")
    ax.set_xscale("log", base=2)
    ax.set_yscale("log")
    ax.set_xlabel("ranks")
    ax.set_ylabel("planning time, ms (one core)")
    ax.legend(fontsize=7)
    fig.tight_layout()
    fig.savefig(path, dpi=120)


def main() -> None:
    parser = benchmark_parser(__doc__)
    parser.add_argument("--repeats", type=int, default=21, help="timings per cell (the median is kept)")
    parser.add_argument("--ranks", default=",".join(map(str, RANKS)), help="rank counts, comma-separated")
    args = parser.parse_args()
    console = Console(width=200)
    sizes = [int(x) for x in args.ranks.split(",")]
    rows = []
    with progress_bar("cells", Console(stderr=True)) as progress:
        task = progress.add_task("cells", total=len(sizes) * len(NETWORKS))
        for ranks in sizes:
            steps = route_steps(2, ranks, skew="zipf", imbalance=IMBALANCE, seed=1)
            for name, spec in NETWORKS:
                rows.append(measure(name, spec, ranks, steps, args.repeats))
                progress.advance(task)
    print_table(rows, console)
    report_results(rows, goals(rows), console, args.output, args.plot, plot)


if __name__ == "__main__":
    main()

"""Liquid search, DSatur and CP-SAT on every Swiss-T1 class representative (paper 000 §7, Annexes A
and B), the search-space reductions of paper 000 Fig. 6, and the search at scale.

    python benchmarks/t1_schedules.py --output out/bench-t1-schedules.json --plot out/bench-t1-schedules.png
        [--cpsat-time-limit 30] [--jobs 2] [--skip-cpsat] [--limit N]

Each worker process is pinned to one CPU, so every time is a one-core time. With ``--jobs 2`` two
classes run at once on two CPUs.
"""

from __future__ import annotations

import multiprocessing
import os
import platform
import statistics
import time
from typing import Any

from common import benchmark_parser, progress_bar
from rich.console import Console
from rich.table import Table

from liquidsched import _core, plan, validate
from liquidsched.io.files import write_document
from liquidsched.sweep import run_sweep
from liquidsched.topologies import build_topology
from liquidsched.traffic import all_to_all, half_all_to_all

ALGORITHMS = ("liquid", "dsatur", "cpsat")
#: Repetitions of the fast algorithms; the median is kept.
REPEAT = 3
#: Full-team enumeration variants of paper 000 Fig. 6, each adding one pruning.
TEAM_VARIANTS = {
    "naive": {"blank": False, "idle": False, "skeleton": False},
    "+blank": {"blank": True, "idle": False, "skeleton": False},
    "+idle": {"blank": True, "idle": True, "skeleton": False},
    "+skeleton": {"blank": True, "idle": True, "skeleton": True},
}
#: Schedule-search variants, each adding one reduction (paper 000 §4-6, then liquidsched's own).
OFF = {"blank": False, "idle": False, "skeleton": False, "reduced": False, "full": False, "memo": False,
       "guided": False, "bounds": False}
SEARCH_VARIANTS = {
    "naive (teams of X)": dict(OFF),
    "+reduced (Thm 2)": {**OFF, "reduced": True},
    "+full teams (6.3)": {**OFF, "reduced": True, "full": True},
    "+blank+idle (4)": {**OFF, "reduced": True, "full": True, "blank": True, "idle": True},
    "+skeleton (5)": {**OFF, "reduced": True, "full": True, "blank": True, "idle": True, "skeleton": True},
    "+guided order": {**OFF, "reduced": True, "full": True, "blank": True, "idle": True, "skeleton": True,
                      "guided": True},
    "+memo": {"bounds": False},
    "+bounds (all on)": {},
}

#: Budget of the liquid search on the large exchanges.
SCALE_TIME_LIMIT_S = 120.0

err = Console(stderr=True)


def pin_to_cpu(queue) -> None:
    """Pool initializer: take one CPU from the queue and run on it alone."""
    cpu = queue.get()
    if hasattr(os, "sched_setaffinity"):
        os.sched_setaffinity(0, {cpu})


def problem(allocation: tuple[int, ...]):
    net = build_topology("swiss-t1:allocation=" + "/".join(map(str, allocation)))
    return net, half_all_to_all(net)


def timed_plan(net, traffic, algorithm: str, repeat: int, **options):
    """The schedule of the last run and the median time over ``repeat`` runs."""
    times = []
    for _ in range(repeat):
        start = time.perf_counter()
        schedule = plan(net, traffic, algorithm, **options)
        times.append(time.perf_counter() - start)
    return schedule, statistics.median(times)


def run_class(job: tuple[tuple[int, ...], int, float | None, bool]) -> dict[str, Any]:
    """All three algorithms on one class representative."""
    allocation, hosts, cpsat_limit, skip_cpsat = job
    net, traffic = problem(allocation)
    record: dict[str, Any] = {"allocation": list(allocation), "hosts": hosts, "transfers": len(traffic)}
    for algorithm in ALGORITHMS:
        if algorithm == "cpsat" and skip_cpsat:
            continue
        options = {"time_limit": cpsat_limit} if algorithm == "cpsat" and cpsat_limit else {}
        repeat = 1 if algorithm == "cpsat" else REPEAT
        schedule, seconds = timed_plan(net, traffic, algorithm, repeat, **options)
        if validate(schedule):
            raise RuntimeError(f"{algorithm} schedule of {allocation} is invalid")
        record["duration"] = schedule.info.lower_bound
        record[algorithm] = {"length": schedule.length, "optimal": bool(schedule.info.optimal), "time_s": seconds,
                             "nodes": schedule.info.stats.get("nodes_explored"),
                             "status": schedule.info.stats.get("status")}
    return record


def run_reductions(job: tuple[tuple[int, ...], int]) -> dict[str, Any]:
    """Nodes explored by each variant of the full-team enumeration and of the schedule search."""
    allocation, node_limit = job
    net, traffic = problem(allocation)
    paths = traffic.resource_lists(net)
    n = len(net.resources)
    teams = {name: _core.count_full_teams(paths, n, node_limit=node_limit, **flags)
             for name, flags in TEAM_VARIANTS.items()}
    search = {}
    for name, flags in SEARCH_VARIANTS.items():
        raw = _core.liquid_schedule(paths, n, node_limit=node_limit, optimize=False, **flags)
        search[name] = {"nodes": raw["nodes"], "solved": raw["stopped_by"] is None}
    return {"allocation": list(allocation), "transfers": len(paths),
            "teams": {k: {"teams": t, "nodes": nodes, "complete": c} for k, (t, nodes, c) in teams.items()},
            "search": search}


def run_pool(label: str, fn, jobs: list, workers: int) -> list:
    """Map ``fn`` over ``jobs`` on ``workers`` pinned processes, with a progress bar."""
    cpus = sorted(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else list(range(workers))
    queue = multiprocessing.Manager().Queue()
    for i in range(workers):
        queue.put(cpus[i % len(cpus)])
    results = []
    with multiprocessing.Pool(workers, initializer=pin_to_cpu, initargs=(queue,)) as pool, \
            progress_bar(label, err) as progress:
        task = progress.add_task(label, total=len(jobs))
        for result in pool.imap_unordered(fn, jobs):
            results.append(result)
            progress.advance(task)
    return results


def percentile(values: list[float], q: float) -> float:
    """Nearest-rank percentile."""
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, max(0, int(round(q * len(ordered) + 0.5)) - 1))]


def dsatur_loss_buckets(records: list[dict]) -> dict[str, float]:
    """Throughput lost by DSatur against the optimum (1 - optimum / DSatur length), bucketed as
    in paper 000 Fig. 16."""
    buckets = {"no loss": 0, "under 10 %": 0, "10-20 %": 0, "over 20 %": 0}
    for r in records:
        best = r["liquid"]["length"]
        loss = 1 - best / r["dsatur"]["length"]
        key = "no loss" if loss <= 0 else "under 10 %" if loss < 0.10 else "10-20 %" if loss < 0.20 else "over 20 %"
        buckets[key] += 1
    return {k: v / len(records) for k, v in buckets.items()}


def summarize_classes(records: list[dict]) -> dict[str, Any]:
    summary: dict[str, Any] = {"classes": len(records)}
    for algorithm in ALGORITHMS:
        rows = [r[algorithm] for r in records if algorithm in r]
        if not rows:
            continue
        times = [x["time_s"] for x in rows]
        summary[algorithm] = {
            "solved_with_proof": sum(x["optimal"] for x in rows) / len(rows),
            "liquid": sum(r[algorithm]["length"] == r["duration"] for r in records) / len(rows),
            "median_s": statistics.median(times), "p97_s": percentile(times, 0.97), "max_s": max(times),
        }
    summary["dsatur_loss"] = dsatur_loss_buckets(records)
    if all("cpsat" in r for r in records):
        ratios = [r["cpsat"]["time_s"] / r["liquid"]["time_s"] for r in records]
        summary["cpsat_over_liquid"] = {
            "median_of_ratios": statistics.median(ratios),
            "ratio_of_medians": summary["cpsat"]["median_s"] / summary["liquid"]["median_s"],
            "cpsat_unproven": sum(not r["cpsat"]["optimal"] for r in records),
            "cpsat_longer": sum(r["cpsat"]["length"] > r["liquid"]["length"] for r in records),
        }
    return summary


def summarize_reductions(records: list[dict]) -> dict[str, Any]:
    """Mean share of the naive node count per variant, over classes where every variant finished."""
    out: dict[str, Any] = {}
    for family, variants, first in (("teams", TEAM_VARIANTS, "naive"), ("search", SEARCH_VARIANTS, "naive (teams of X)")):
        ok = [r for r in records if all(r[family][v].get("complete", r[family][v].get("solved")) for v in variants)]
        shares = {v: statistics.mean(r[family][v]["nodes"] / r[family][first]["nodes"] for r in ok) if ok else None
                  for v in variants}
        finished = {v: sum(bool(r[family][v].get("complete", r[family][v].get("solved"))) for r in records)
                    for v in variants}
        total = {v: sum(r[family][v]["nodes"] for r in records) for v in variants}
        out[family] = {"classes_all_finished": len(ok), "mean_share_of_naive": shares, "finished": finished,
                       "total_nodes": total}
    return out


def run_scale() -> list[dict[str, Any]]:
    """The liquid search and DSatur on the two large exchanges."""
    cases = [("fat-tree:k=8,oversubscription=2", all_to_all), ("swiss-t1", half_all_to_all)]
    rows = []
    for spec, make in cases:
        net = build_topology(spec)
        traffic = make(net)
        row: dict[str, Any] = {"topology": spec, "traffic": traffic.name, "transfers": len(traffic)}
        for algorithm in ("liquid", "dsatur"):
            options = {"time_limit": SCALE_TIME_LIMIT_S} if algorithm == "liquid" else {}
            schedule, seconds = timed_plan(net, traffic, algorithm, 1, **options)
            row["duration"] = schedule.info.lower_bound
            if validate(schedule):
                raise RuntimeError(f"{algorithm} schedule of {spec} is invalid")
            row[algorithm] = {"length": schedule.length, "optimal": bool(schedule.info.optimal), "time_s": seconds,
                              "nodes": schedule.info.stats.get("nodes_explored"),
                              "stopped_by": schedule.info.stats.get("stopped_by")}
        rows.append(row)
    return rows


def print_tables(summary: dict, reductions: dict, scale: list[dict], console: Console) -> None:
    t = Table("algorithm", "solved with proof", "liquid", "median", "p97", "max",
              title=f"swiss-t1: {summary['classes']} class representatives, half all-to-all, one core")
    for algorithm in ALGORITHMS:
        if algorithm in summary:
            s = summary[algorithm]
            t.add_row(algorithm, f"{s['solved_with_proof']:.1%}", f"{s['liquid']:.1%}", f"{s['median_s'] * 1e3:.2f} ms",
                      f"{s['p97_s'] * 1e3:.2f} ms", f"{s['max_s'] * 1e3:.1f} ms")
    console.print(t)
    t = Table("DSatur loss", "share of classes", "paper 000 Fig. 16", title="throughput lost by DSatur")
    for (k, v), paper in zip(summary["dsatur_loss"].items(), ("74 %", "18 %", "8 %", "0 %")):
        t.add_row(k, f"{v:.1%}", paper)
    console.print(t)
    if "cpsat_over_liquid" in summary:
        c = summary["cpsat_over_liquid"]
        console.print(f"CP-SAT time / liquid time: median of per-class ratios {c['median_of_ratios']:.0f}x, "
                      f"ratio of medians {c['ratio_of_medians']:.0f}x (paper 000 Annex B: about 4000x); "
                      f"CP-SAT unproven in {c['cpsat_unproven']} classes, longer than liquid in {c['cpsat_longer']}")
    for family, first, title in (("teams", "naive", "full-team enumeration (paper 000 Fig. 6: 12.48 % with all three)"),
                                 ("search", "naive (teams of X)", "liquid schedule search")):
        r = reductions[family]
        t = Table("variant", "mean share of naive nodes", "finished", "total nodes",
                  title=f"{title}; shares over the {r['classes_all_finished']} classes every variant finished")
        for v, share in r["mean_share_of_naive"].items():
            t.add_row(v, "-" if share is None else f"{share:.2%}", str(r["finished"][v]), f"{r['total_nodes'][v]:,}")
        console.print(t)
    t = Table("topology", "transfers", "Λ (frames)", "liquid frames", "liquid time", "nodes", "dsatur frames",
              "dsatur time", title="scale (one core)")
    for row in scale:
        lq, ds = row["liquid"], row["dsatur"]
        t.add_row(row["topology"], str(row["transfers"]), str(row["duration"]), f"{lq['length']}",
                  f"{lq['time_s']:.3f} s", f"{lq['nodes']:,}", str(ds["length"]), f"{ds['time_s']:.3f} s")
    console.print(t)


def plot(records: list[dict], path: str) -> None:
    from liquidsched.plot import _save, plt

    records = sorted(records, key=lambda r: (r["hosts"], r["transfers"], r["allocation"]))
    x = range(len(records))
    fig, (top, bottom) = plt.subplots(2, 1, figsize=(11, 7.5), sharex=True,
                                      gridspec_kw={"height_ratios": [3, 2]})
    styles = {"cpsat": ("tab:red", "CP-SAT (slot model)"), "dsatur": ("tab:green", "DSatur"),
              "liquid": ("tab:blue", "liquid search")}
    for algorithm, (colour, label) in styles.items():
        if all(algorithm in r for r in records):
            top.semilogy(x, [r[algorithm]["time_s"] * 1e3 for r in records], ".", ms=3, color=colour, label=label)
    top.set_ylabel("time (ms, log)")
    top.legend(loc="upper left")
    top.grid(alpha=0.3)
    top.set_title("swiss-t1 class representatives: scheduling time and DSatur's extra frames")
    bottom.plot(x, [r["dsatur"]["length"] / r["liquid"]["length"] for r in records], ".", ms=3, color="tab:green")
    bottom.set_ylabel("DSatur length / optimum")
    bottom.set_xlabel("class representatives, by number of hosts")
    bottom.grid(alpha=0.3)
    fig.tight_layout()
    _save(fig, path)


def main() -> None:
    parser = benchmark_parser(__doc__)
    parser.add_argument("--cpsat-time-limit", type=float, default=30.0, metavar="S")
    parser.add_argument("--skip-cpsat", action="store_true")
    parser.add_argument("--jobs", type=int, default=1)
    parser.add_argument("--limit", type=int, help="only the first N classes (smoke runs)")
    parser.add_argument("--reduction-node-limit", type=int, default=2_000_000)
    parser.add_argument("--skip-scale", action="store_true")
    args = parser.parse_args()

    classes = run_sweep(build_topology("swiss-t1")).classes[: args.limit]
    jobs = [(tuple(c.allocation), c.hosts, args.cpsat_time_limit, args.skip_cpsat) for c in classes]
    records = run_pool("classes", run_class, jobs, args.jobs)
    records.sort(key=lambda r: (r["hosts"], r["allocation"]))
    reduction_records = run_pool("reductions", run_reductions,
                                 [(tuple(c.allocation), args.reduction_node_limit) for c in classes], args.jobs)
    if hasattr(os, "sched_setaffinity"):
        os.sched_setaffinity(0, {sorted(os.sched_getaffinity(0))[0]})
    scale = [] if args.skip_scale else run_scale()
    summary = summarize_classes(records)
    reductions = summarize_reductions(reduction_records)
    print_tables(summary, reductions, scale, Console())
    write_document({"benchmark": "t1_schedules", "machine": platform.processor() or platform.machine(),
                                 "cpsat_time_limit_s": None if args.skip_cpsat else args.cpsat_time_limit,
                                 "summary": summary, "reductions": reductions, "scale": scale,
                                 "classes": records, "reduction_classes": reduction_records}, args.output)
    if args.plot:
        plot(records, args.plot)


if __name__ == "__main__":
    main()

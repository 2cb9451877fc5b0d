"""The exact liquid search at the scale of real machines, up to a million transfers.

All-to-all exchanges on tori, meshes, fat trees and random networks of 32 to 1,024 hosts (up to
1,047,552 transfers), and the liquid search on every Swiss-T1 class representative.

    python benchmarks/search_scale.py --output out/search-scale.json --plot out/search-scale.png
        [--time-limit 60] [--case-time-limit SUBSTRING=S ...] [--cases a,b,...] [--jobs 1]
        [--skip-t1] [--t1-time-limit 2] [--t1-limit N] [--no-validate]

Each large case (``CASES``) runs in a fresh process of this script (``--case``) pinned to one CPU,
so its peak memory (``ru_maxrss``) is its own: the network and its all-to-all are built and their
routes resolved to columns first (timed apart), then ``liquid(net, traffic, time_limit=budget)``
is timed alone (it tries round-robin's shifts, then searches: the per-transfer paths the search
takes are made inside it), then the schedule is checked (``.liquid``, ``validate``, timed apart). Per case:
Λ (the frame bound), the length found, liquid, proven optimal, the proven lower bound, the nodes
explored, where the schedule came from and what stopped the search, the search time against its
budget, and the peak memory; every other statistic the search reports is copied into the row.

Goals: every torus and mesh liquid or proven optimal; the search time on fat trees growing as
``transfers^e`` with e ≤ 1.5 (least squares over the fat-tree cases); no case over its budget by
more than 10 % + 5 ms; every Swiss-T1 class representative (half all-to-all, paper 000 §7) proven
within its small budget (``--t1-time-limit``, 2 s by default).
"""

from __future__ import annotations

import argparse
import json
import math
import multiprocessing
import os
import platform
import queue
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from typing import Any

from common import benchmark_parser, peak_rss_mb, power_fit, progress_bar
from rich.console import Console
from rich.table import Table

#: (family, topology, own budget in seconds or None for ``--time-limit``), all-to-all on each.
CASES: list[tuple[str, str, float | None]] = [
    ("torus", "torus:dims=4/4,hosts_per_router=2", None),
    ("torus", "torus:dims=8/8", None),
    ("torus", "torus:dims=16/16", None),
    ("torus", "torus:dims=4/4/4", None),
    ("torus", "torus:dims=6/6/6", None),
    ("torus", "torus:dims=8/8/8", None),
    ("mesh", "mesh:dims=8/8", None),
    ("mesh", "mesh:dims=16/16", None),
    ("fat-tree", "fat-tree:k=8", None),
    ("fat-tree", "fat-tree:k=8,hosts_per_edge=8", None),
    ("fat-tree", "fat-tree:k=12", None),
    ("fat-tree", "fat-tree:k=16", None),
    ("random", "random:switches=32,hosts=256,extra_cables=16,seed=1", None),
    ("random", "random:switches=32,hosts=256,extra_cables=16,seed=2", None),
]

#: Tolerance of a budget: a search may end 10 % + 5 ms after it.
BUDGET_SLACK = 0.10
BUDGET_SLACK_S = 0.005
#: Largest growth exponent of the search time with the transfers allowed on fat trees.
FAT_TREE_MAX_EXPONENT = 1.5
#: A case's process is killed after this many budgets plus this many seconds (a hang, not a result).
KILL_AFTER_BUDGETS = 3.0
KILL_AFTER_S = 900.0
#: The statistics the table shows by name; every other one is copied into the row as it is.
KNOWN_STATS = ("nodes_explored", "proven_lower_bound", "gap", "stopped_by", "source")
#: The keys of the core's answer that liquid() already turns into the schedule and its info.
CORE_KEYS_MAPPED = ("frames", "duration", "lower_bound", "nodes", "optimal", "liquid")

err = Console(stderr=True)


def pin_to(cpu: int | None) -> None:
    if cpu is not None and hasattr(os, "sched_setaffinity"):
        os.sched_setaffinity(0, {cpu})


# -- one large case, in its own process ----------------------------------------------------------


def run_case(spec: str, budget: float, validate_schedule: bool) -> dict[str, Any]:
    """Build ``spec`` and its all-to-all, resolve their routes, then time the liquid search alone."""
    import importlib

    from liquidsched import validate
    from liquidsched.topologies import build_topology
    from liquidsched.traffic import all_to_all
    from liquidsched.transfer_routes import cached_transfer_routes

    # The module, not the function of the same name that liquidsched.schedulers exports.
    liquid_module = importlib.import_module("liquidsched.schedulers.liquid")
    # The core's own answer (and its time), so that statistics it reports and liquid() does not
    # copy into info.stats still reach the row.
    core = liquid_module._core
    raw_answers: list[tuple[dict, float]] = []

    class TimedCore:
        def __getattr__(self, name: str) -> Any:
            return getattr(core, name)

        @staticmethod
        def liquid_schedule(*args: Any, **kwargs: Any) -> dict:
            start = time.perf_counter()
            raw = core.liquid_schedule(*args, **kwargs)
            raw_answers.append((raw, time.perf_counter() - start))
            return raw

    liquid_module._core = TimedCore()  # type: ignore[assignment]
    # Warm up on a tiny network, so that no time includes importing modules or a first call.
    tiny = build_topology("crossbar:n=2")
    liquid_module.liquid(tiny, all_to_all(tiny), time_limit=1.0)
    raw_answers.clear()

    start = time.perf_counter()
    net = build_topology(spec)
    network_s = time.perf_counter() - start
    start = time.perf_counter()
    traffic = all_to_all(net)
    traffic_s = time.perf_counter() - start
    start = time.perf_counter()
    cached_transfer_routes(net, traffic)  # checked and routed once as columns; liquid() reuses them
    resolve_s = time.perf_counter() - start
    build_rss = peak_rss_mb()

    start = time.perf_counter()
    schedule = liquid_module.liquid(net, traffic, time_limit=budget)
    search_s = time.perf_counter() - start
    search_rss = peak_rss_mb()
    # No core search when round-robin's shifts reach the frame bound (stats["source"] says so).
    raw, core_s = raw_answers[-1] if raw_answers else ({}, 0.0)

    info, stats = schedule.info, schedule.info.stats
    row: dict[str, Any] = {
        "case": spec, "hosts": len(net.hosts()), "switches": len(net.switches()), "resources": len(net.resources),
        "transfers": len(traffic),
        "network_s": network_s, "traffic_s": traffic_s, "resolve_s": resolve_s,
        "build_s": network_s + traffic_s + resolve_s,
        "lambda": info.lower_bound, "length": schedule.length,
        "optimal": bool(info.optimal), "proven_lower_bound": stats.get("proven_lower_bound"),
        "gap": stats.get("gap"), "nodes": stats.get("nodes_explored"), "source": stats.get("source"),
        "stopped_by": stats.get("stopped_by"),
        "budget_s": budget, "search_s": search_s, "core_s": core_s,
        "budget_ratio": search_s / budget if budget else None,
        "build_peak_rss_mb": build_rss, "peak_rss_mb": search_rss,
    }
    for key, value in stats.items():
        if key not in KNOWN_STATS and key not in row:
            row[key] = value
    for key, value in raw.items():
        if key not in CORE_KEYS_MAPPED and key not in row and key not in stats and _plain_json(value):
            row[f"core_{key}"] = value

    start = time.perf_counter()
    row["liquid"] = bool(schedule.liquid)
    row["liquid_check_s"] = time.perf_counter() - start
    if validate_schedule:
        start = time.perf_counter()
        violations = validate(schedule)
        row["validate_s"] = time.perf_counter() - start
        row["valid"] = not violations
        if violations:
            row["violations"] = [str(v) for v in violations[:5]]
    row["peak_rss_after_checks_mb"] = peak_rss_mb()
    return row


def _plain_json(value: Any) -> bool:
    return value is None or isinstance(value, (bool, int, float, str))


def case_main(args: argparse.Namespace) -> None:
    """The hidden ``--case`` mode: one case, its row written as JSON to ``--case-output``."""
    pin_to(args.cpu)
    row = run_case(args.case, args.budget, not args.no_validate)
    with open(args.case_output, "w") as f:
        json.dump(row, f)


def run_case_process(family: str, spec: str, budget: float, cpu: int | None, validate_schedule: bool) -> dict[str, Any]:
    """Run one case in a fresh process of this script and read its row back."""
    with tempfile.TemporaryDirectory(prefix="search-scale-") as tmp:
        out = os.path.join(tmp, "row.json")
        command = [sys.executable, os.path.abspath(__file__), "--case", spec, "--budget", repr(budget),
                   "--case-output", out, "--output", out]
        if cpu is not None:
            command += ["--cpu", str(cpu)]
        if not validate_schedule:
            command.append("--no-validate")
        start = time.perf_counter()
        try:
            done = subprocess.run(command, capture_output=True, text=True,
                                  timeout=KILL_AFTER_BUDGETS * budget + KILL_AFTER_S)
        except subprocess.TimeoutExpired:
            return {"family": family, "case": spec, "budget_s": budget, "cpu": cpu,
                    "error": f"killed after {time.perf_counter() - start:.0f} s"}
        if done.returncode != 0 or not os.path.exists(out):
            tail = (done.stderr or "").strip().splitlines()[-3:]
            return {"family": family, "case": spec, "budget_s": budget, "cpu": cpu,
                    "error": f"exit status {done.returncode}: " + " | ".join(tail)}
        with open(out) as f:
            row = json.load(f)
    return {"family": family, **row, "cpu": cpu, "process_s": time.perf_counter() - start}


def run_cases(cases: list[tuple[str, str, float]], jobs: int, validate_schedule: bool) -> list[dict[str, Any]]:
    """Every case in a process of its own, ``jobs`` at a time, each on a CPU of its own."""
    cpus = sorted(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else []
    free: queue.Queue = queue.Queue()
    for i in range(jobs):
        free.put(cpus[i % len(cpus)] if cpus else None)
    lock = threading.Lock()
    rows: dict[str, dict[str, Any]] = {}
    with progress_bar("cases", err) as progress:
        task = progress.add_task("cases", total=len(cases))

        def one(case: tuple[str, str, float]) -> None:
            cpu = free.get()
            try:
                row = run_case_process(*case, cpu, validate_schedule)
            finally:
                free.put(cpu)
            with lock:
                rows[case[1]] = row
                progress.advance(task)

        with ThreadPoolExecutor(jobs) as pool:
            list(pool.map(one, cases))
    return [rows[spec] for _, spec, _ in cases]


# -- the Swiss-T1 classes --------------------------------------------------------------------------


def pin_worker(cpus: queue.Queue) -> None:
    """Pool initializer: take one CPU from the queue and run on it alone."""
    pin_to(cpus.get())


def run_t1_class(job: tuple[tuple[int, ...], int, float]) -> dict[str, Any]:
    """The liquid search on one Swiss-T1 class representative (half all-to-all, paper 000 §7)."""
    from liquidsched import validate
    from liquidsched.schedulers.liquid import liquid
    from liquidsched.topologies import build_topology
    from liquidsched.traffic import half_all_to_all

    allocation, hosts, budget = job
    net = build_topology("swiss-t1:allocation=" + "/".join(map(str, allocation)))
    traffic = half_all_to_all(net)
    traffic.resource_lists(net)
    start = time.perf_counter()
    schedule = liquid(net, traffic, time_limit=budget)
    seconds = time.perf_counter() - start
    stats = schedule.info.stats
    return {"allocation": list(allocation), "hosts": hosts, "transfers": len(traffic),
            "lambda": schedule.info.lower_bound, "length": schedule.length, "liquid": bool(schedule.liquid),
            "optimal": bool(schedule.info.optimal), "nodes": stats.get("nodes_explored"),
            "stopped_by": stats.get("stopped_by"), "source": stats.get("source"), "search_s": seconds,
            "budget_s": budget, "valid": not validate(schedule), "peak_rss_mb": peak_rss_mb()}


def run_t1(budget: float, limit: int | None, jobs: int) -> list[dict[str, Any]]:
    from liquidsched.sweep import run_sweep
    from liquidsched.topologies import build_topology

    classes = run_sweep(build_topology("swiss-t1")).classes[:limit]
    jobs_list = [(tuple(c.allocation), c.hosts, budget) for c in classes]
    context = multiprocessing.get_context("spawn")
    cpus = sorted(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else []
    manager = context.Manager()
    free = manager.Queue()
    for i in range(jobs):
        free.put(cpus[i % len(cpus)] if cpus else None)
    records = []
    with context.Pool(jobs, initializer=pin_worker, initargs=(free,)) as pool, \
            progress_bar("swiss-t1 classes", err) as progress:
        task = progress.add_task("classes", total=len(jobs_list))
        for record in pool.imap_unordered(run_t1_class, jobs_list):
            records.append(record)
            progress.advance(task)
    manager.shutdown()
    records.sort(key=lambda r: (r["hosts"], r["allocation"]))
    return records


def percentile(values: list[float], q: float) -> float:
    """Nearest-rank percentile."""
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, max(0, math.ceil(q * len(ordered)) - 1))]


def over_budget(seconds: float, budget: float) -> bool:
    return seconds > budget * (1 + BUDGET_SLACK) + BUDGET_SLACK_S


def summarize_t1(records: list[dict[str, Any]]) -> dict[str, Any]:
    times = [r["search_s"] for r in records]
    return {"classes": len(records), "budget_s": records[0]["budget_s"],
            "median_s": statistics.median(times), "p97_s": percentile(times, 0.97), "max_s": max(times),
            "proven": sum(r["optimal"] for r in records), "liquid": sum(r["liquid"] for r in records),
            "over_budget": sum(over_budget(r["search_s"], r["budget_s"]) for r in records),
            "invalid": sum(not r["valid"] for r in records),
            "total_nodes": sum(r["nodes"] or 0 for r in records),
            "peak_rss_mb": max(r["peak_rss_mb"] for r in records)}


# -- growth, goals, table, plot --------------------------------------------------------------------


def fits(rows: list[dict[str, Any]]) -> dict[str, Any]:
    """The growth of the search time with the transfers: over the fat trees, and over every case."""
    ok = [r for r in rows if "error" not in r]
    out: dict[str, Any] = {}
    for name, mine in (("fat-tree", [r for r in ok if r["family"] == "fat-tree"]), ("all", ok)):
        fit = power_fit([r["transfers"] for r in mine], [r["search_s"] for r in mine])
        out[name] = None if fit is None else {"exponent": fit[0], "log_intercept": fit[1], "cases": len(mine),
                                              "stopped_by_budget": sum(r["stopped_by"] is not None for r in mine)}
    return out


def goals(rows: list[dict[str, Any]], growth: dict[str, Any], t1: dict[str, Any] | None) -> list[dict[str, Any]]:
    result = []
    for r in rows:
        if r["family"] in ("torus", "mesh"):
            passed = "error" not in r and (r["liquid"] or r["optimal"])
            detail = r.get("error") or (f"{r['length']} frames, Λ {r['lambda']}, liquid {r['liquid']}, "
                                        f"proven {r['optimal']}")
            result.append({"goal": "torus/mesh liquid or proven optimal", "case": r["case"], "passed": bool(passed),
                           "detail": detail})
    fit = growth.get("fat-tree")
    if any(r["family"] == "fat-tree" for r in rows):
        # Not judged (None) on fewer than two fat trees that ran.
        result.append({"goal": f"fat-tree search time ∝ transfers^e, e ≤ {FAT_TREE_MAX_EXPONENT}",
                       "case": "fat-tree", "passed": None if fit is None else fit["exponent"] <= FAT_TREE_MAX_EXPONENT,
                       "detail": "not judged: fewer than two fat-tree cases" if fit is None else
                       f"e = {fit['exponent']:.2f} over {fit['cases']} cases"})
    for r in rows:
        passed = "error" not in r and not over_budget(r["search_s"], r["budget_s"])
        detail = r.get("error") or f"{r['search_s']:.3f} s of {r['budget_s']:g} s ({_ratio(r)})"
        result.append({"goal": f"within budget + {BUDGET_SLACK:.0%} + {BUDGET_SLACK_S * 1e3:.0f} ms", "case": r["case"],
                       "passed": bool(passed), "detail": detail})
    for r in rows:
        if r.get("valid") is False:
            result.append({"goal": "valid schedule", "case": r["case"], "passed": False,
                           "detail": "; ".join(r.get("violations", []))})
    if t1 is not None:
        passed = t1["proven"] == t1["classes"] and not t1["over_budget"] and not t1["invalid"]
        result.append({"goal": f"swiss-t1: every class proven within {t1['budget_s']:g} s", "case": "swiss-t1",
                       "passed": passed,
                       "detail": f"{t1['proven']}/{t1['classes']} proven, {t1['liquid']} liquid, "
                                 f"{t1['over_budget']} over budget, {t1['invalid']} invalid; "
                                 f"median {t1['median_s'] * 1e3:.1f} ms, p97 {t1['p97_s'] * 1e3:.1f} ms, "
                                 f"max {t1['max_s'] * 1e3:.1f} ms"})
    return result


def _ratio(r: dict) -> str:
    return "-" if r.get("budget_ratio") is None else f"{r['budget_ratio']:.2f}"


def _seconds(s: float) -> str:
    return f"{s * 1e3:.1f} ms" if s < 1 else f"{s:.2f} s"


def print_report(rows: list[dict], growth: dict, t1: dict | None, goal_list: list[dict], console: Console) -> None:
    t = Table("case", "hosts", "transfers", "build", "Λ", "length", "liquid", "proven (bound)", "nodes", "stopped",
              "search", "budget ratio", "peak memory",
              title="liquid search on all-to-all exchanges (one core per case; build includes routes resolved)")
    for r in rows:
        if "error" in r:
            t.add_row(r["case"], *["-"] * 10, f"{r['budget_s']:g} s budget", r["error"][:60])
            continue
        proven = "yes" if r["optimal"] else f"no (≥ {r['proven_lower_bound']}, gap {r['gap']})"
        memory = f"{r['peak_rss_mb']:.0f} MB"
        if "memory_bytes" in r:
            memory += f" (core {r['memory_bytes'] / 2 ** 20:.1f} MB)"
        t.add_row(r["case"], f"{r['hosts']:,}", f"{r['transfers']:,}", _seconds(r["build_s"]), f"{r['lambda']:,}",
                  f"{r['length']:,}", "yes" if r["liquid"] else "no", proven, f"{r['nodes']:,}",
                  f"{r['stopped_by'] or '-'} / {r['source']}", _seconds(r["search_s"]),
                  f"{_ratio(r)} of {r['budget_s']:g} s", memory)
    console.print(t)
    for name, fit in growth.items():
        if fit is not None:
            console.print(f"search time ∝ transfers^{fit['exponent']:.2f} ({name}: {fit['cases']} cases, "
                          f"{fit['stopped_by_budget']} of them stopped by their budget)")
    if t1 is not None:
        console.print(f"swiss-t1 ({t1['classes']} class representatives, half all-to-all, {t1['budget_s']:g} s each): "
                      f"median {t1['median_s'] * 1e3:.2f} ms, p97 {t1['p97_s'] * 1e3:.2f} ms, "
                      f"max {t1['max_s'] * 1e3:.1f} ms; proven {t1['proven']}/{t1['classes']}, "
                      f"liquid {t1['liquid']}/{t1['classes']}, over budget {t1['over_budget']}, "
                      f"peak memory {t1['peak_rss_mb']:.0f} MB")
    for g in goal_list:
        mark = ("[yellow]SKIP[/yellow]" if g["passed"] is None else
                "[green]PASS[/green]" if g["passed"] else "[red]FAIL[/red]")
        console.print(f"{mark}  {g['goal']}: {g['case']} — {g['detail']}", highlight=False)


def plot(rows: list[dict], growth: dict, t1_records: list[dict], path: str) -> None:
    from liquidsched.plot import _save, plt

    ok = [r for r in rows if "error" not in r]
    fig, (ax, mem) = plt.subplots(1, 2, figsize=(13, 5))
    if t1_records:
        ax.plot([r["transfers"] for r in t1_records], [r["search_s"] for r in t1_records], ".", ms=3,
                color="0.6", label=f"swiss-t1 classes ({len(t1_records)})", zorder=1)
    markers = {"torus": "o", "mesh": "s", "fat-tree": "^", "random": "D"}
    for family, marker in markers.items():
        mine = [r for r in ok if r["family"] == family]
        if not mine:
            continue
        x = [r["transfers"] for r in mine]
        proven = [r for r in mine if r["optimal"]]
        line, = ax.plot(x, [r["search_s"] for r in mine], marker, ms=7, mfc="none", label=family, zorder=3)
        ax.plot([r["transfers"] for r in proven], [r["search_s"] for r in proven], marker, ms=7,
                color=line.get_color(), zorder=3)
        mem.plot(x, [r["peak_rss_mb"] for r in mine], marker, ms=7, color=line.get_color(), label=family)
    xs = [r["transfers"] for r in ok]
    if xs:
        span = [min(xs), max(xs)]
        for name, style in (("fat-tree", "-"), ("all", "--")):
            fit = growth.get(name)
            if fit is not None:
                label = (f"fat-tree fit: time ∝ transfers^{fit['exponent']:.2f}" if name == "fat-tree" else
                         f"all cases fit: time ∝ transfers^{fit['exponent']:.2f}")
                ax.plot(span, [math.exp(fit["log_intercept"]) * x ** fit["exponent"] for x in span], style,
                        color="black" if name == "fat-tree" else "0.4", lw=1, label=label, zorder=2)
        budgets = sorted({r["budget_s"] for r in ok})
        for b in budgets:
            ax.axhline(b, color="tab:red", lw=0.8, ls=":")
        if budgets:
            ax.plot([], [], color="tab:red", lw=0.8, ls=":", label="budget")
    for a in (ax, mem):
        a.set_xscale("log")
        a.set_yscale("log")
        a.set_xlabel("transfers")
        a.grid(alpha=0.3, which="both")
    ax.set_ylabel("search time (s, one core)")
    ax.set_title("liquid search on all-to-all exchanges (filled: proven optimal)")
    if ax.get_legend_handles_labels()[0]:
        ax.legend(fontsize=8)
    mem.set_ylabel("peak memory of the case's process (MB)")
    mem.set_title("peak memory (build and search)")
    if mem.get_legend_handles_labels()[0]:
        mem.legend(fontsize=8)
    fig.tight_layout()
    _save(fig, path)


# -- the command line ------------------------------------------------------------------------------


def budget_of(spec: str, own: float | None, default: float, overrides: list[tuple[str, float]]) -> float:
    """The budget of a case: the last ``--case-time-limit`` whose substring it contains, else its
    own in ``CASES``, else ``--time-limit``."""
    for pattern, seconds in reversed(overrides):
        if pattern in spec:
            return seconds
    return default if own is None else own


def parse_override(text: str) -> tuple[str, float]:
    pattern, sep, seconds = text.rpartition("=")
    try:
        if not sep or not pattern:
            raise ValueError
        return pattern, float(seconds)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected SUBSTRING=SECONDS, got {text!r}") from None


def split_cases(text: str) -> list[str]:
    """The items of ``--cases``: split at commas, except before a parameter (``name=value``
    without a ``:``), which belongs to the topology before it (``fat-tree:k=8,hosts_per_edge=8``)."""
    items: list[str] = []
    for piece in (p.strip() for p in text.split(",")):
        if not piece:
            continue
        if items and "=" in piece and ":" not in piece:
            items[-1] += "," + piece
        else:
            items.append(piece)
    return items


def selects(pattern: str, spec: str) -> bool:
    """Whether ``--cases`` item ``pattern`` selects case ``spec``: the case of that exact name if
    there is one (``torus:dims=8/8`` is not ``torus:dims=8/8/8``), else every case containing it."""
    if any(pattern == s for _, s, _ in CASES):
        return pattern == spec
    return pattern in spec


def main() -> None:
    parser = benchmark_parser(__doc__)
    parser.add_argument("--time-limit", type=float, default=60.0, metavar="S", help="budget of each case (60 s)")
    parser.add_argument("--case-time-limit", type=parse_override, action="append", default=[],
                        metavar="SUBSTRING=S", help="budget of the cases whose topology contains SUBSTRING")
    parser.add_argument("--cases", metavar="A,B,...",
                        help="only these cases: a name selects its case, else every case containing it "
                             "(a name's own parameters after commas stay with it)")
    parser.add_argument("--jobs", type=int, default=1, choices=(1, 2), help="cases run at once, each on its own CPU")
    parser.add_argument("--skip-t1", action="store_true", help="leave out the Swiss-T1 classes")
    parser.add_argument("--t1-time-limit", type=float, default=2.0, metavar="S", help="budget of each class (2 s)")
    parser.add_argument("--t1-limit", type=int, metavar="N", help="only the first N Swiss-T1 classes (smoke runs)")
    parser.add_argument("--no-validate", action="store_true", help="do not validate the large schedules")
    # The hidden mode in which this script runs one case in a process of its own.
    parser.add_argument("--case", help=argparse.SUPPRESS)
    parser.add_argument("--budget", type=float, help=argparse.SUPPRESS)
    parser.add_argument("--case-output", help=argparse.SUPPRESS)
    parser.add_argument("--cpu", type=int, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.case:
        case_main(args)
        return

    from liquidsched.io.files import write_document

    wanted = split_cases(args.cases) if args.cases else None
    cases = [(family, spec, budget_of(spec, own, args.time_limit, args.case_time_limit))
             for family, spec, own in CASES if wanted is None or any(selects(w, spec) for w in wanted)]
    if wanted and not cases:
        parser.error(f"no case matches {args.cases!r}")
    rows = run_cases(cases, args.jobs, not args.no_validate) if cases else []
    t1_records = [] if args.skip_t1 else run_t1(args.t1_time_limit, args.t1_limit, args.jobs)
    t1 = summarize_t1(t1_records) if t1_records else None
    growth = fits(rows)
    goal_list = goals(rows, growth, t1)
    print_report(rows, growth, t1, goal_list, Console(width=220))
    write_document({"benchmark": "search_scale", "machine": platform.processor() or platform.machine(),
                    "time_limit_s": args.time_limit, "jobs": args.jobs,
                    "budget_slack": {"ratio": BUDGET_SLACK, "seconds": BUDGET_SLACK_S},
                    "rows": rows, "growth": growth, "goals": goal_list,
                    "swiss_t1": None if t1 is None else {"summary": t1, "classes": t1_records}}, args.output)
    if args.plot:
        plot(rows, growth, t1_records, args.plot)


if __name__ == "__main__":
    main()

"""Networks of thousands of hosts: load, routes, the bound of an all-to-all, and their growth.

    python benchmarks/scale.py --output out/scale.json --plot out/scale.png [--max-hosts N]

For fat trees k = 4 … 34 (up to 9,826 hosts and 96.5 million transfers) and crossbars of 100 to
3,000 hosts: the time to build the network (routes included), the part of it spent computing and
checking routes (once per pair of switches), the time to check every transfer of the all-to-all
(hosts, sizes, routes), the time of its bound (loads, Λ, bottlenecks, frame bound), the liquid
search on the smaller cases (``LIQUID_CASES``, under ``LIQUID_TIME_LIMIT_S``), and the peak
memory of the case's own process. Each case runs in a fresh process pinned to one CPU. The
growth of each time with the host count is fitted as ``time ∝ hosts^e`` per family.
"""

from __future__ import annotations

import os
import platform
import time
from typing import Any

from common import benchmark_parser, growth_exponent, peak_rss_mb, run_each_in_own_process
from rich.console import Console
from rich.table import Table

#: (family, topology): fat trees k = 4 … 34 and crossbars of 100 … 3,000 hosts.
CASES = [("fat-tree", f"fat-tree:k={k}") for k in (4, 8, 12, 16, 24, 34)] + \
        [("crossbar", f"crossbar:n={n}") for n in (100, 300, 1000, 3000)]

#: The cases small enough for the liquid search (up to 16,128 transfers), and its time budget.
LIQUID_CASES = {"fat-tree:k=4", "fat-tree:k=8", "crossbar:n=100"}
LIQUID_TIME_LIMIT_S = 20.0

#: The times fitted against the host count.
PHASES = ("load_s", "routes_s", "check_s", "bound_s")


def run_case(spec: str) -> dict[str, Any]:
    """One network in a fresh process: build, check the all-to-all, bound it, maybe search."""
    if hasattr(os, "sched_setaffinity"):
        os.sched_setaffinity(0, {sorted(os.sched_getaffinity(0))[0]})
    from liquidsched import compute_bound, plan, validate
    from liquidsched.network import Network
    from liquidsched.topologies import build_topology
    from liquidsched.traffic import all_to_all

    # Time the route computation inside the network's construction (once per pair of switches).
    routes_s = []
    compute_routes = Network._compute_routes

    def timed(self: Network) -> None:
        start = time.perf_counter()
        compute_routes(self)
        routes_s.append(time.perf_counter() - start)

    Network._compute_routes = timed  # type: ignore[method-assign]
    # Warm up on a tiny network, so that no case's times include importing modules.
    tiny = build_topology("crossbar:n=2")
    compute_bound(tiny, all_to_all(tiny))
    routes_s.clear()
    start = time.perf_counter()
    net = build_topology(spec)
    load_s = time.perf_counter() - start
    start = time.perf_counter()
    traffic = all_to_all_columns(net)
    traffic_s = time.perf_counter() - start
    start = time.perf_counter()
    traffic.check(net)
    check_s = time.perf_counter() - start
    start = time.perf_counter()
    bound = compute_bound(net, traffic)
    bound_s = time.perf_counter() - start
    row: dict[str, Any] = {
        "topology": spec, "hosts": len(net.hosts()), "switches": len(net.switches()), "links": len(net.links),
        "transfers": len(traffic), "load_s": load_s, "routes_s": sum(routes_s), "traffic_s": traffic_s,
        "check_s": check_s, "bound_s": bound_s, "duration_s": float(bound.duration_s),
        "liquid_throughput_Bps": float(bound.liquid_throughput_Bps), "bottlenecks": len(bound.bottlenecks),
        "peak_rss_mb": peak_rss_mb(),
    }
    if spec in LIQUID_CASES:
        start = time.perf_counter()
        schedule = plan(net, traffic, "liquid", time_limit=LIQUID_TIME_LIMIT_S)
        seconds = time.perf_counter() - start
        if validate(schedule):
            raise RuntimeError(f"the liquid schedule of {spec} is invalid")
        row["liquid"] = {"frames": schedule.length, "frame_bound": bound.frame_lower_bound,
                         "liquid": bool(schedule.liquid), "optimal": bool(schedule.info.optimal), "search_s": seconds,
                         "peak_rss_mb": peak_rss_mb()}
    return row


def all_to_all_columns(net):
    """The all-to-all of ``net``, made as columns past the size the generator refuses
    (``MAX_TRANSFERS``: a 9,826-host fat tree has 96.5 million transfers)."""
    import numpy as np

    from liquidsched.traffic import MAX_TRANSFERS, Traffic, all_to_all

    hosts = net.hosts()
    n = len(hosts)
    if n * (n - 1) <= MAX_TRANSFERS:
        return all_to_all(net)
    index = np.arange(n, dtype=np.int16 if n < 2**15 else np.int32)
    src = np.repeat(index, n - 1)
    # Every sender's row without itself: the others in order.
    dst = np.tile(index[:-1], n)
    dst += dst >= src
    return Traffic.from_arrays(hosts, src, dst, 10**6, "all-to-all")


def exponents(rows: list[dict]) -> dict[str, dict[str, float | None]]:
    """The growth exponent of each phase, per family of topologies."""
    result = {}
    for family in dict.fromkeys(r["topology"].split(":")[0] for r in rows):
        mine = [r for r in rows if r["topology"].startswith(family + ":")]
        result[family] = {p: growth_exponent([r["hosts"] for r in mine], [r[p] for r in mine]) for p in PHASES}
    return result


def _liquid(r: dict) -> str:
    if "liquid" not in r:
        return "-"
    lq = r["liquid"]
    proof = ", proven" if lq["optimal"] else ""
    return f"{lq['frames']} frames / bound {lq['frame_bound']}{proof} ({lq['search_s']:.1f} s)"


def print_table(rows: list[dict], growth: dict, console: Console) -> None:
    t = Table("topology", "hosts", "transfers", "load", "of which routes", "traffic", "check", "bound", "peak memory",
              "liquid search", title="all-to-all on large networks (one core; load includes the routes)")
    for r in rows:
        t.add_row(r["topology"], f"{r['hosts']:,}", f"{r['transfers']:,}", f"{r['load_s']:.2f} s",
                  f"{r['routes_s']:.2f} s", f"{r['traffic_s']:.2f} s", f"{r['check_s']:.2f} s",
                  f"{r['bound_s']:.2f} s", f"{r['peak_rss_mb']:.0f} MB", _liquid(r))
    console.print(t)
    g = Table("family", *(p.removesuffix("_s") for p in PHASES),
              title="growth: time ∝ hosts^e (least squares over the cases)")
    for family, values in growth.items():
        g.add_row(family, *("-" if values[p] is None else f"{values[p]:.2f}" for p in PHASES))
    console.print(g)


def plot(rows: list[dict], path: str) -> None:
    from liquidsched.plot import _save, plt

    fig, (ax, mem) = plt.subplots(1, 2, figsize=(12, 4.5))
    markers = {"fat-tree": "o", "crossbar": "s"}
    colours = {"load_s": "tab:blue", "routes_s": "tab:cyan", "check_s": "tab:orange", "bound_s": "tab:red"}
    for family, marker in markers.items():
        mine = [r for r in rows if r["topology"].startswith(family + ":")]
        if not mine:
            continue
        hosts = [r["hosts"] for r in mine]
        for phase, colour in colours.items():
            ax.plot(hosts, [r[phase] for r in mine], marker=marker, color=colour,
                    label=f"{family}: {phase.removesuffix('_s')}")
        mem.plot(hosts, [r["peak_rss_mb"] for r in mine], marker=marker, label=family)
    for a in (ax, mem):
        a.set_xscale("log")
        a.set_yscale("log")
        a.set_xlabel("hosts")
        a.grid(alpha=0.3, which="both")
    ax.set_ylabel("seconds")
    ax.set_title("time of each phase of an all-to-all's bound")
    ax.legend(fontsize=7, ncol=2)
    mem.set_ylabel("peak memory of the case (MB)")
    mem.set_title("peak memory")
    mem.legend(fontsize=8)
    fig.tight_layout()
    _save(fig, path)


def main() -> None:
    from liquidsched.io.files import write_document

    parser = benchmark_parser(__doc__)
    parser.add_argument("--max-hosts", type=int, default=0, metavar="N",
                        help="leave out the networks of more than N hosts (0: run all)")
    args = parser.parse_args()
    specs = [spec for _, spec in CASES]
    if args.max_hosts:
        specs = [s for s in specs if _hosts(s) <= args.max_hosts]
    console = Console(width=200)
    rows = run_each_in_own_process(run_case, specs, Console(stderr=True))
    growth = exponents(rows)
    print_table(rows, growth, console)
    write_document({"benchmark": "scale", "machine": platform.processor() or platform.machine(),
                    "liquid_time_limit_s": LIQUID_TIME_LIMIT_S, "rows": rows, "growth_exponents": growth},
                   args.output)
    if args.plot:
        plot(rows, args.plot)


def _hosts(spec: str) -> int:
    """The host count of a case from its parameters (k³/4 for a fat tree, n for a crossbar)."""
    name, _, value = spec.partition(":")
    n = int(value.split("=")[1])
    return n ** 3 // 4 if name == "fat-tree" else n


if __name__ == "__main__":
    main()

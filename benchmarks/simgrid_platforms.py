"""Load time and peak memory of SimGrid platforms of thousands of hosts, by each reader.

    python benchmarks/simgrid_platforms.py --output out/simgrid_platforms.json
    python benchmarks/simgrid_platforms.py --pairwise --output out/simgrid_platforms.json

The issue "Real machines at their real size" asks for SimGrid's g5k (or a platform of the same
structure: several sites of clusters joined by a backbone, 1,500 hosts) in at most 10 s, and a
crossbar ``<cluster>`` of 65,536 hosts in at most 30 s and 4 GB. This script writes both
platforms (the grid as ``sites_platform``, the structure of tests/data/simgrid/sites.xml, with
crossbar clusters and, as ``grid-backbone``, with a backbone in every cluster as in g5k), and
loads each with :func:`liquidsched.simgrid.read_platform` in a process of its own, with every
reader that reads it:

* ``auto``: what a user gets (for the lone cluster, liquidsched's own parser, which lays the
  cluster out itself; for the grid, SimGrid's reader asking routes by cluster);
* ``simgrid``: SimGrid's reader (by cluster, from 256 hosts on);
* ``liquidsched``: the own parser, where it reads the file (a lone ``<cluster>``).

``--pairwise`` also loads smaller grids with SimGrid's reader asking every host pair's route,
as before routes were asked by cluster, for comparison.

Time is wall-clock from the call to the network, SimGrid's process included; memory is the peak
resident set of the loading process and, separately, of SimGrid's (its child).
"""

from __future__ import annotations

import resource
import sys
import tempfile
import time
from pathlib import Path

from common import benchmark_parser, run_each_in_own_process
from rich.console import Console
from rich.table import Table

from liquidsched.io.files import write_document
from liquidsched.simgrid.examples import sites_platform

#: Cluster sizes of the grid: six sites of two to five clusters, 1,500 hosts (g5k's are 1,528).
GRID = [[100, 60, 90, 50], [144, 92], [56, 79, 40], [310, 30], [64, 33, 25, 40], [56, 50, 45, 80, 56]]
#: The issue's goals: seconds, and GB for the crossbar.
GOALS = {"grid": (10.0, None), "grid-backbone": (10.0, None), "crossbar": (30.0, 4.0)}


def crossbar_platform(hosts: int) -> str:
    """One crossbar ``<cluster>`` (no backbone) of ``hosts`` hosts."""
    return ('<?xml version="1.0"?>\n<!DOCTYPE platform SYSTEM "https://simgrid.org/simgrid.dtd">\n'
            '<platform version="4.1">\n  <zone id="AS0" routing="Full">\n'
            f'    <cluster id="bob" prefix="bob-" suffix=".hpc" radical="0-{hosts - 1}" speed="1Gf" '
            'bw="125MBps" lat="50us"/>\n  </zone>\n</platform>\n')


def load(case: dict) -> dict:
    """Load one platform with one reader, in this (fresh) process."""
    from liquidsched.simgrid import read_platform
    from liquidsched.simgrid import grouped

    if "asked" in case:
        # Force one way of asking SimGrid's routes, whatever the size.
        grouped.GROUPED_FROM_HOSTS = 10**9 if case["asked"] == "pair by pair" else 0
    start = time.perf_counter()
    platform = read_platform(case["path"], reader=case["reader"])
    seconds = time.perf_counter() - start
    net = platform.network
    hosts = net.hosts()
    # One route, composed on demand, so that the network answers as well as loads.
    net.route(hosts[0], hosts[-1])
    return case | {"hosts": len(hosts), "links": len(net.links), "switches": len(net.switches()),
                   "read_by": platform.read_by, "seconds": round(seconds, 3),
                   "peak_mb": round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024, 1),
                   "simgrid_peak_mb": round(resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024, 1)}


def main(argv: list[str] | None = None) -> int:
    parser = benchmark_parser(__doc__)
    parser.add_argument("--pairwise", action="store_true",
                        help="also load grids of 300 and 600 hosts asking SimGrid every pair's route")
    args = parser.parse_args(argv)
    console = Console(stderr=True)
    with tempfile.TemporaryDirectory(prefix="simgrid-platforms-") as folder:
        grid, crossbar = Path(folder) / "grid.xml", Path(folder) / "crossbar.xml"
        grid.write_text(sites_platform(GRID), encoding="utf-8")
        grid_backbone = Path(folder) / "grid-backbone.xml"
        grid_backbone.write_text(sites_platform(GRID, backbone=True), encoding="utf-8")
        crossbar.write_text(crossbar_platform(65_536), encoding="utf-8")
        cases = [{"platform": name, "path": str(path), "reader": r}
                 for name, path in (("grid", grid), ("grid-backbone", grid_backbone)) for r in ("auto", "simgrid")]
        cases += [{"platform": "crossbar", "path": str(crossbar), "reader": r}
                  for r in ("auto", "liquidsched", "simgrid")]
        if args.pairwise:
            for scale in (5, 10):
                path = Path(folder) / f"grid-{scale}.xml"
                path.write_text(sites_platform([[max(1, n // scale) for n in site] for site in GRID]), encoding="utf-8")
                cases += [{"platform": f"grid/{scale}", "path": str(path), "reader": "simgrid", "asked": asked}
                          for asked in ("pair by pair", "by cluster")]
        rows = run_each_in_own_process(load, cases, console)
    table = Table(title="SimGrid platforms: load time and peak memory")
    for column in ("platform", "hosts", "reader", "asked", "seconds", "peak MB", "SimGrid MB", "goal"):
        table.add_column(column, justify="left" if column in ("platform", "reader", "asked") else "right")
    for row in rows:
        row.pop("path")
        seconds_goal, gb_goal = GOALS.get(row["platform"], (None, None))
        met = None
        if seconds_goal is not None:
            met = row["seconds"] <= seconds_goal and (gb_goal is None or
                                                    (row["peak_mb"] + row["simgrid_peak_mb"]) / 1024 <= gb_goal)
        row["goal_met"] = met
        asked = row.get("asked") or ("own parser" if "own parser" in row["read_by"] else "by cluster")
        row["asked"] = asked
        goal = "" if met is None else ("met" if met else "MISSED")
        table.add_row(row["platform"], f"{row['hosts']:,}", row["reader"], asked, f"{row['seconds']:.2f}",
                      f"{row['peak_mb']:.0f}", f"{row['simgrid_peak_mb']:.0f}", goal)
    Console(width=120).print(table)
    write_document({"rows": rows, "goals": {k: {"seconds": s, "GB": g} for k, (s, g) in GOALS.items()}},
                   args.output)
    return 0 if all(row["goal_met"] is not False for row in rows) else 1


if __name__ == "__main__":
    sys.exit(main())

"""Does an unmodified MPI program get faster under the interposition library? The OSU-like C
benchmark (``pmpi/bench/alltoall_bench.c``) launched by ``liquidsched launch`` on each emulated
network, with MPICH alone and with the library reading a table ``liquidsched tune`` measured on
that network; and, without emulation or table, 8 ranks on this machine at 1 B – 4 KiB, where the
library must cost nothing. Needs root (network namespaces, tc).

    python benchmarks/pmpi_versus_mpich.py --output out/pmpi.json --plot out/pmpi.png

For each network of ``emulated_networks.py``, with every host sending and receiving (the
benchmark's ``MPI_Alltoall`` is among every rank: the backbone and two-switch as
``ALL_RANKS_TOPOLOGY`` makes them; messages up to 4 MiB, less where ``ALL_RANKS_LARGEST`` or
the network's size divisor says) and each buffer regime: ``liquidsched tune --pmpi`` writes the table: this benchmark times the
modes the library runs (frames and paced under the library, ``MPI_Alltoall`` and
``MPI_Alltoallv`` of MPICH alone) at every size it measures from 1 KiB, ``--repeats`` rounds
of one launch each with ``--calls`` calls per size; then the benchmark runs 1 B – 8 KiB with ``--small-iterations``
calls per size in ``--small-rounds`` rounds, and 16 KiB – 4 MiB with ``--iterations`` in
``--large-rounds``, always after warm-up calls. A round is a launch with MPICH alone and one
with the library, the first of the two swapped every round; per size the median over rounds of
MPICH's average time over the library's is kept. The library says what it ran at each size
(``LIQUIDSCHED_VERBOSE``): where it ran MPICH's own collective (``MPI_Alltoallv`` by default,
``MPI_Alltoall`` where the table says so), both sides ran the same code, and the spread of those
ratios is the measurement's own noise, printed beside the goals.

The goals of the *Win when run* issue are checked and printed: ≥ 0.98 at every size for both
collectives, ≥ 1.2 on ``MPI_Alltoall`` from 1 MiB, and, without emulation or table, a cost
≤ 1.1 × MPICH's at 1 B – 4 KiB (median of ``--local-rounds`` alternating runs).
"""

from __future__ import annotations

import json
import os
import re
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path
from types import SimpleNamespace
from typing import Callable

from common import benchmark_parser, progress_bar
from emulated_networks import ALL_RANKS_LARGEST, ALL_RANKS_TOPOLOGY, NETWORKS, add_network_options, chosen_networks
from rich.console import Console
from rich.table import Table

from liquidsched.io.files import write_document
from liquidsched.traffic import all_to_all

ROOT = Path(__file__).resolve().parents[1]
BENCH = ROOT / "pmpi" / "build" / "alltoall_bench"
SMALL = "1:8192"


def liquidsched(*args: str, timeout: float = 3600, env: dict[str, str] | None = None) -> subprocess.CompletedProcess:
    done = subprocess.run([sys.executable, "-m", "liquidsched.cli", *args], capture_output=True, text=True,
                          timeout=timeout, env=None if env is None else os.environ | env)
    if done.returncode != 0:
        raise SystemExit(f"liquidsched {' '.join(args)} failed:\n{done.stderr[-3000:]}")
    return done


def tune(topology: str, regime: str, rounds: int, calls: int, prefix: str, table: Path, largest: int) -> None:
    """``liquidsched tune --pmpi`` on the emulated network (the candidates timed by this very
    benchmark, as the library runs them), every size the benchmark measures from 1 KiB: the
    selection table at ``table``."""
    liquidsched("tune", "--pmpi", "--topology", topology, "--traffic", "all-to-all", "--sizes", f"1KiB:{largest}:x2",
                "--repeats", str(rounds), "--calls", str(calls), "--emulate", "--prefix", prefix, "--buffers", regime,
                "--output", str(table))


def bench(topology: str, regime: str | None, prefix: str, sizes: str, iterations: int, warmup: int,
          table: Path | None = None, pmpi: bool = False) -> list[dict]:
    """The benchmark's rows for ``sizes``: under ``liquidsched launch``, emulated in ``regime``
    (None: on this machine), with the library (and ``table``) when ``pmpi``. Under the library,
    each row says what ran (``ran``: ``library`` for MPICH's own collective, or a schedule's
    mode), as the library itself says it (``LIQUIDSCHED_VERBOSE``)."""
    args = ["launch", "--topology", topology]
    if regime is not None:
        args += ["--emulate", "--prefix", prefix, "--buffers", regime]
    if pmpi:
        args += ["--pmpi"] + (["--selection", str(table)] if table is not None else [])
    args += ["--", str(BENCH), "-m", sizes, "-i", str(iterations), "-x", str(warmup), "-f", "json"]
    done = liquidsched(*args, env={"LIQUIDSCHED_VERBOSE": "1"} if pmpi else None)
    doc = json.loads(done.stdout)
    if not doc["verified"]:
        raise SystemExit(f"the benchmark received wrong bytes: {' '.join(args)}")
    if not pmpi:
        return doc["results"]
    said = modes_said(done.stderr)
    handover = handover_said(done.stderr)
    return [{**r, "ran": mode_at(said.get(r["collective"], []), r["size_bytes"]), "handover_us": handover}
            for r in doc["results"]]


#: The library's line when a call follows the table at a new measured size (liquidsched_pmpi.c's
#: ``table_mode``).
CHOICE_LINE = re.compile(r"liquidsched: MPI_(Alltoallv?) of (\d+) B per message: (.+?) \(selection table")
#: The library's name of its collective's own way in that line.
LIBRARY_SAID = "the library's own"


#: The library's line at ``MPI_Finalize``: the calls it handed to MPICH and its own time on each.
HANDOVER_LINE = re.compile(r"liquidsched: rank 0 handed (\d+) calls to the library after ([\d.]+) us of its own")


def handover_said(stderr: str) -> float:
    """Rank 0's own time per call before it handed the call to MPICH, in µs (0 when it handed
    none).

    >>> handover_said("liquidsched: rank 0 handed 24 calls to the library after 0.412 us of its own on average")
    0.412
    """
    found = HANDOVER_LINE.search(stderr)
    return float(found[2]) if found else 0.0


def modes_said(stderr: str) -> dict[str, list[tuple[int, str]]]:
    """Per collective, the sizes at which the library said it changed mode and the mode, in
    call order.

    >>> line = "liquidsched: MPI_Alltoall of {} B per message: {} (selection table, measured at {} B)"
    >>> modes_said(line.format(1024, "the library's own", 1024) + "\\n" + line.format(4096, "paced", 4096))
    {'alltoall': [(1024, 'library'), (4096, 'paced')]}
    """
    out: dict[str, list[tuple[int, str]]] = {}
    for op, size, mode in CHOICE_LINE.findall(stderr):
        out.setdefault(op.lower(), []).append((int(size), "library" if mode == LIBRARY_SAID else mode))
    return out


def mode_at(said: list[tuple[int, str]], size_bytes: int) -> str:
    """What ran at ``size_bytes``: the last mode said at that size or below (the benchmark goes
    up in size), MPICH's own (``library``) when none was.

    >>> mode_at([(1024, "library"), (4096, "paced")], 8192), mode_at([(4096, "paced")], 8)
    ('paced', 'library')
    """
    before = [mode for size, mode in said if size <= size_bytes]
    return before[-1] if before else "library"


def speedups(mpich: list[dict], library: list[dict]) -> list[dict]:
    ours = {(r["collective"], r["size_bytes"]): r for r in library}
    return [{"collective": r["collective"], "size_bytes": r["size_bytes"], "mpich_us": r["avg_latency_us"],
             "library_us": ours[r["collective"], r["size_bytes"]]["avg_latency_us"],
             "speedup": r["avg_latency_us"] / ours[r["collective"], r["size_bytes"]]["avg_latency_us"],
             "ran": ours[r["collective"], r["size_bytes"]].get("ran", "library"),
             "handover_us": ours[r["collective"], r["size_bytes"]].get("handover_us", 0.0)}
            for r in mpich]


def median_of_rounds(rounds: list[list[dict]]) -> list[dict]:
    """Per collective and size, the median over alternating rounds of MPICH and the library: at
    small sizes both usually run MPICH's own collective and one run's average swings by ±40 % in
    an emulated network, more than any difference between them. ``ran`` is what the library ran
    in every round (joined by ``/`` where rounds differ)."""
    out = []
    for k, first in enumerate(rounds[0]):
        same = [r[k] for r in rounds]
        ran = sorted({r["ran"] for r in same})
        out.append({**first, "mpich_us": statistics.median(r["mpich_us"] for r in same),
                    "library_us": statistics.median(r["library_us"] for r in same),
                    "speedup": statistics.median(r["speedup"] for r in same),
                    "rounds": [r["speedup"] for r in same], "ran": "/".join(ran),
                    "handover_us": max(r.get("handover_us", 0.0) for r in same)})
    return out


def alternating_rounds(rounds: int, run: Callable[[bool], list[dict]]) -> list[dict]:
    """``rounds`` pairs of runs, MPICH alone (``run(False)``) and under the library
    (``run(True)``), the one that goes first swapped every round so that a drift of the machine
    favours neither; per size the median of :func:`speedups` over the rounds."""
    measured = []
    for k in range(rounds):
        order = (False, True) if k % 2 == 0 else (True, False)
        runs = {pmpi: run(pmpi) for pmpi in order}
        measured.append(speedups(runs[False], runs[True]))
    return median_of_rounds(measured)


def handover_bound(row: dict) -> float:
    """The speed against MPICH that the library's own measured time allows where it hands the call
    to MPICH: MPICH's time over MPICH's time plus the library's time before the handover (the
    largest of the rounds' averages)."""
    return row["mpich_us"] / (row["mpich_us"] + row.get("handover_us", 0.0))


def cell_goals(rows: list[dict]) -> dict:
    """The issue's goals for one cell, and the same measurement's noise: where the library ran
    MPICH's own collective both sides ran the same code, so their ratios' spread around 1 is what
    the measurement cannot tell apart; there the library's own time before the handover, which
    it measures, bounds what it costs (``same_code_by_handover``)."""
    worst = {op: min(r["speedup"] for r in rows if r["collective"] == op) for op in ("alltoall", "alltoallv")}
    big = [r["speedup"] for r in rows if r["collective"] == "alltoall" and r["size_bytes"] >= 1 << 20]
    scheduled = [r["speedup"] for r in rows if r["ran"] != "library"]
    same_code = [r["speedup"] for r in rows if r["ran"] == "library"]
    return {"worst_alltoall": worst["alltoall"], "worst_alltoallv": worst["alltoallv"],
            "alltoall_from_1MiB": min(big) if big else None,
            "worst_where_scheduled": min(scheduled) if scheduled else None,
            "same_code_range": [min(same_code), max(same_code)] if same_code else None,
            "same_code_by_handover": min((handover_bound(r) for r in rows if r["ran"] == "library"), default=None),
            "never_below_0.98": min(worst.values()) >= 0.98, "alltoall_1.2_from_1MiB": bool(big) and min(big) >= 1.2}


def local_overhead(topology: str, rounds: int, iterations: int) -> dict:
    """Without emulation or table, 8 ranks here: the library's time over MPICH's at 1 B – 4 KiB,
    per size the median over alternating rounds."""
    ratios: dict[tuple[str, int], list[float]] = {}
    for _ in range(rounds):
        mpich = bench(topology, None, "", "1:4096", iterations, iterations // 10)
        library = bench(topology, None, "", "1:4096", iterations, iterations // 10, pmpi=True)
        for r in speedups(mpich, library):
            ratios.setdefault((r["collective"], r["size_bytes"]), []).append(1 / r["speedup"])
    rows = [{"collective": op, "size_bytes": size, "cost_ratio": statistics.median(v), "rounds": v}
            for (op, size), v in sorted(ratios.items())]
    return {"rows": rows, "worst": max(r["cost_ratio"] for r in rows),
            "at_most_1.1": max(r["cost_ratio"] for r in rows) <= 1.1}


def plot(records: list[dict], path: str) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    cells = [(rec, cell) for rec in records for cell in rec["cells"]]
    fig, axes = plt.subplots(2, len(cells), figsize=(3.6 * len(cells), 6.5), squeeze=False)
    for k, (rec, cell) in enumerate(cells):
        top, bottom = axes[0][k], axes[1][k]
        for op, colour in (("alltoall", "tab:blue"), ("alltoallv", "tab:orange")):
            rows = [r for r in cell["rows"] if r["collective"] == op]
            sizes = [r["size_bytes"] for r in rows]
            top.plot(sizes, [r["mpich_us"] / 1e6 for r in rows], "--", color=colour, label=f"MPICH {op}")
            top.plot(sizes, [r["library_us"] / 1e6 for r in rows], "-", color=colour, label=f"library {op}")
            bottom.plot(sizes, [r["speedup"] for r in rows], "o-", color=colour, ms=3, label=op)
        top.set(xscale="log", yscale="log", title=f"{rec['key']}, {cell['regime']}", xlabel="bytes per message")
        bottom.set(xscale="log", xlabel="bytes per message", ylim=(0.5, max(2.0, bottom.get_ylim()[1])))
        bottom.axhline(0.98, color="grey", lw=0.8, ls=":")
        bottom.axhline(1.2, color="grey", lw=0.8, ls="--")
        if k == 0:
            top.set_ylabel("time per call (s)")
            bottom.set_ylabel("MPICH time / library time")
            top.legend(fontsize=7)
            bottom.legend(fontsize=7)
    fig.tight_layout()
    fig.savefig(path, dpi=120)


def save(args, local: dict | None, records: list[dict]) -> None:
    """What was measured so far (after every cell: a failure later keeps it)."""
    write_document(document(args, local, records), args.output)


def document(args, local: dict | None, records: list[dict]) -> dict:
    return {"benchmark": "pmpi_versus_mpich", "iterations": args.iterations, "small_iterations": args.small_iterations,
            "small_rounds": args.small_rounds, "large_rounds": args.large_rounds, "repeats": args.repeats, "local": local, "networks": records}


def add_options(parser, prefix: str = "") -> None:
    """The benchmark's options (``prefix``: before each name, for another benchmark's parser)."""
    parser.add_argument(f"--{prefix}repeats", type=int, default=5,
                        help="tune's rounds: launches of the benchmark per mode (default 5)")
    parser.add_argument(f"--{prefix}calls", type=int, default=3,
                        help="tune's timed calls per size in a launch, ten times as many to 8 KiB (default 3)")
    parser.add_argument(f"--{prefix}iterations", type=int, default=7, help="timed calls per size from 16 KiB (default 7)")
    parser.add_argument(f"--{prefix}small-iterations", type=int, default=200,
                        help="timed calls per size to 8 KiB (default 200)")
    parser.add_argument(f"--{prefix}small-rounds", type=int, default=7,
                        help="alternating rounds of MPICH and the library at 1 B – 8 KiB, emulated (default 7; 0: none)")
    parser.add_argument(f"--{prefix}large-rounds", type=int, default=1,
                        help="alternating rounds of MPICH and the library from 16 KiB, emulated (default 1; 0: none)")
    parser.add_argument(f"--{prefix}local-rounds", type=int, default=3,
                        help="alternating rounds without emulation (default 3; 0: none)")
    parser.add_argument(f"--{prefix}local-iterations", type=int, default=50,
                        help="timed calls per size without emulation (default 50: 8 ranks on 2 cores take ms each)")
    parser.add_argument(f"--{prefix}tables", default="", help="keep the tuned tables in this directory (and reuse "
                                                            "those already there)")


def options_of(args, prefix: str = "") -> SimpleNamespace:
    """The options :func:`add_options` added with ``prefix``, under their own names."""
    names = ("repeats", "calls", "iterations", "small_iterations", "small_rounds", "large_rounds", "local_rounds", "local_iterations", "tables")
    return SimpleNamespace(**{n: getattr(args, prefix.replace("-", "_") + n) for n in names})


def check_built() -> None:
    if not BENCH.exists():
        raise SystemExit(f"{BENCH} is missing: make pmpi builds it")


def measure(opts, todo: list[tuple], regimes: list[str], prefix: str, progress,
            on_cell: Callable[[dict | None, list[dict]], None] | None = None) -> tuple[dict | None, list[dict]]:
    """Every cell of ``todo`` (entries of ``NETWORKS``) in each regime, and the cost without
    emulation or table; ``on_cell(local, records)`` after every cell (a failure later keeps what
    was measured)."""
    check_built()
    tables = Path(opts.tables or tempfile.mkdtemp(prefix="liquidsched-tables-"))
    tables.mkdir(parents=True, exist_ok=True)
    records: list[dict] = []
    task = progress.add_task("C benchmark", total=len(todo) * len(regimes) + 1)
    progress.update(task, description="C benchmark: 8 ranks here, no table")
    local = local_overhead(NETWORKS[0][2], opts.local_rounds, opts.local_iterations) if opts.local_rounds else None
    progress.advance(task)
    for key, label, topology, _, _, divisor in todo:
        topology = ALL_RANKS_TOPOLOGY.get(key, topology)
        largest = ALL_RANKS_LARGEST.get(key, (4 << 20) // divisor)
        record = {"network": label, "key": key, "topology": topology, "cells": []}
        for regime in regimes:
            progress.update(task, description=f"C benchmark, {key}, {regime}: tune")
            table_path = tables / f"{key.replace(':', '-')}-{regime}.json"
            # A table kept from an earlier run is reused: tuning is the longest part.
            if not (opts.tables and table_path.exists()):
                tune(topology, regime, opts.repeats, opts.calls, prefix, table_path, largest)
            progress.update(task, description=f"C benchmark, {key}, {regime}: small sizes")
            small = alternating_rounds(opts.small_rounds, lambda pmpi: bench(
                topology, regime, prefix, SMALL, opts.small_iterations, opts.small_iterations // 10, table_path,
                pmpi)) if opts.small_rounds else []
            progress.update(task, description=f"C benchmark, {key}, {regime}: large sizes")
            large = alternating_rounds(opts.large_rounds, lambda pmpi: bench(
                topology, regime, prefix, f"16384:{largest}", opts.iterations, 1, table_path, pmpi)) if opts.large_rounds else []
            cell = {"regime": regime, "table": str(table_path),
                    "rows": small + large}
            cell["goals"] = cell_goals(cell["rows"])
            record["cells"].append(cell)
            progress.advance(task)
            if on_cell is not None:
                on_cell(local, records + [record])
        records.append(record)
    return local, records


def ran_by_size(rows: list[dict]) -> str:
    """What the library ran, as runs of sizes: ``1–4096 B library, 8192 B– paced``."""
    spans: list[list] = []
    for r in rows:
        if spans and spans[-1][2] == r["ran"]:
            spans[-1][1] = r["size_bytes"]
        else:
            spans.append([r["size_bytes"], r["size_bytes"], r["ran"]])
    return ", ".join(f"{a}–{b} B: {ran}" if a != b else f"{a} B: {ran}" for a, b, ran in spans)


def report(local: dict | None, records: list[dict], console: Console) -> list[bool]:
    """Print the speed-ups per network, regime and collective, and the goals; the goals' values."""
    table = Table("network", "buffers", "collective", "worst MPICH/library (size)", "worst where a schedule ran",
                  "same code both sides (noise)", "there, by the library's own time", "from 1 MiB",
                  "what the library ran",
                  title="the C benchmark under the library: MPICH's time / the library's, per size")
    for rec in records:
        for cell in rec["cells"]:
            for op in ("alltoall", "alltoallv"):
                rows = [r for r in cell["rows"] if r["collective"] == op]
                worst = min(rows, key=lambda r: r["speedup"])
                big = [r["speedup"] for r in rows if r["size_bytes"] >= 1 << 20] or [float("nan")]
                scheduled = [r["speedup"] for r in rows if r["ran"] != "library"]
                same = [r["speedup"] for r in rows if r["ran"] == "library"]
                by_handover = [handover_bound(r) for r in rows if r["ran"] == "library" and "handover_us" in r]
                table.add_row(rec["key"], cell["regime"], op, f"{worst['speedup']:.3f} ({worst['size_bytes']} B)",
                              f"{min(scheduled):.3f}" if scheduled else "—",
                              f"{min(same):.2f}–{max(same):.2f}" if same else "—",
                              f"≥ {min(by_handover):.4f}" if by_handover else "—",
                              f"{min(big):.2f}–{max(big):.2f}", ran_by_size(rows))
    console.print(table)
    met = [c["goals"]["never_below_0.98"] for r in records for c in r["cells"]]
    met += [c["goals"]["alltoall_1.2_from_1MiB"] for r in records for c in r["cells"]
            if c["goals"]["alltoall_from_1MiB"] is not None]
    if local is not None:
        console.print(f"without emulation or table, 8 ranks, 1 B – 4 KiB: library/MPICH at most {local['worst']:.3f} "
                      f"({'met' if local['at_most_1.1'] else 'NOT met'}: ≤ 1.1)")
        met.append(local["at_most_1.1"])
    return met


def default_keys() -> list[str]:
    """Every network where every host sends and receives (``MPI_Alltoall`` is among every rank),
    as ``ALL_RANKS_TOPOLOGY`` makes the backbone and two-switch."""
    return [k for k, _, _, traffic_of, *_ in NETWORKS if traffic_of is all_to_all or k in ALL_RANKS_TOPOLOGY]


def main() -> None:
    parser = benchmark_parser(__doc__)
    add_options(parser)
    add_network_options(parser, "lspm")
    args = parser.parse_args()
    todo, regimes = chosen_networks(args, default_keys())
    with progress_bar("{task.description}") as progress:
        local, records = measure(args, todo, regimes, args.prefix, progress,
                                 on_cell=lambda local, done: save(args, local, done))
    console = Console(width=200)
    met = report(local, records, console)
    console.print(f"goals met: {sum(met)} of {len(met)}")
    save(args, local, records)
    if args.plot:
        plot(records, args.plot)


if __name__ == "__main__":
    main()

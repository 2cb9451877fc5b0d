"""Start-up time of the command line against a numpy import, measured in one run.

    python benchmarks/startup.py --output out/startup.json
    python benchmarks/startup.py --cached --runs 31 --output out/startup-cached.json
    git archive OLD python | tar -x -C /tmp/old && cp python/liquidsched/_core*.so /tmp/old/python/liquidsched/
    python benchmarks/startup.py --baseline /tmp/old/python --output out/startup-vs-old.json

Each command is a whole new process, as a user starts it: ``python -c "import numpy"`` (the
yardstick: every command that computes something needs numpy), ``liquidsched --help``,
``liquidsched plan --help`` and ``liquidsched bound --topology two-switch`` (a whole small
command: a network, a traffic and its bound, printed as a table). The commands take turns, run
after run, so that a machine busy for a moment slows all of them alike; the table shows the
median and the fastest of ``--runs`` runs of each and the ratio of the medians to numpy's, in
wall-clock time and in processor time (user + system, the child's own: on a machine busy with
other work, the wall clock also counts the time the command waited for a core). The issue's goal
is a ratio of at most 2 for ``bound``. ``--baseline DIR`` runs the liquidsched commands a second
time with ``DIR`` (another version's ``python/`` directory) first on ``PYTHONPATH``, in the same
turns: before and after a change, measured alike.

Python compiles a module it imports unless a compiled copy is cached beside it; an installed
package has its copies (pip writes them), but a source tree run with ``PYTHONDONTWRITEBYTECODE``
compiles liquidsched's modules at every start, while numpy's come compiled. ``--cached`` measures
as installed: every command writes and reads compiled modules in a cache of its own
(``PYTHONPYCACHEPREFIX``, filled by the warm-up run), outside the source tree.
"""

from __future__ import annotations

import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from common import benchmark_parser, progress_bar
from rich.console import Console
from rich.table import Table

from liquidsched.io.files import write_document

#: The console script beside this interpreter (the virtualenv's), as a user runs it.
LIQUIDSCHED = str(Path(sys.executable).with_name("liquidsched"))

#: Label → command line; the first is the yardstick of the ratios.
COMMANDS = {
    "python -c 'import numpy'": [sys.executable, "-c", "import numpy"],
    "liquidsched --help": [LIQUIDSCHED, "--help"],
    "liquidsched plan --help": [LIQUIDSCHED, "plan", "--help"],
    "liquidsched bound --topology two-switch": [LIQUIDSCHED, "bound", "--topology", "two-switch"],
}
YARDSTICK = next(iter(COMMANDS))


def environment(cache: str | None) -> dict[str, str]:
    """The commands' environment: this one, or with compiled modules cached in ``cache``."""
    env = os.environ | {"COLUMNS": "100"}
    if cache is None:
        return env
    return {k: v for k, v in env.items() if k != "PYTHONDONTWRITEBYTECODE"} | {"PYTHONPYCACHEPREFIX": cache}


def commands(baseline: str | None) -> dict[str, tuple[list[str], dict[str, str]]]:
    """Label → (command line, environment added), the baseline's commands too."""
    runs = {label: (argv, {}) for label, argv in COMMANDS.items()}
    if baseline is not None:
        runs |= {f"{label} (baseline)": (argv, {"PYTHONPATH": baseline})
                 for label, argv in COMMANDS.items() if label != YARDSTICK}
    return runs


def time_once(command: list[str], env: dict[str, str]) -> tuple[float, float]:
    """Wall-clock and processor seconds of one run of ``command``, its output discarded; a
    failure stops the benchmark (a fast error is no start-up figure)."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    subprocess.run(command, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=True, env=env)
    wall = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    return wall, (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)


def main() -> None:
    parser = benchmark_parser(__doc__)
    parser.add_argument("--runs", type=int, default=21, help="runs of each command (default 21)")
    parser.add_argument("--cached", action="store_true",
                        help="compiled modules cached, as installed (see above), not as this environment says")
    parser.add_argument("--baseline", metavar="DIR", help="also run the commands with DIR first on PYTHONPATH")
    args = parser.parse_args()
    runs = commands(args.baseline)
    times: dict[str, list[float]] = {label: [] for label in runs}
    cpu: dict[str, list[float]] = {label: [] for label in runs}
    load_before = os.getloadavg()[0]
    with tempfile.TemporaryDirectory(prefix="startup-pycache-") as cache:
        env = environment(cache if args.cached else None)
        for command, added in runs.values():  # warm the file cache (and the compiled modules' cache)
            time_once(command, env | added)
        with progress_bar("runs", Console(stderr=True)) as progress:
            task = progress.add_task("runs", total=args.runs)
            for _ in range(args.runs):
                for label, (command, added) in runs.items():
                    wall, used = time_once(command, env | added)
                    times[label].append(wall)
                    cpu[label].append(used)
                progress.advance(task)
    base, cpu_base = statistics.median(times[YARDSTICK]), statistics.median(cpu[YARDSTICK])
    rows = [{"command": label, "median_s": statistics.median(t), "fastest_s": min(t),
             "ratio_to_numpy": statistics.median(t) / base, "cpu_median_s": statistics.median(cpu[label]),
             "cpu_ratio_to_numpy": statistics.median(cpu[label]) / cpu_base, "runs_s": t, "cpu_runs_s": cpu[label]}
            for label, t in times.items()]
    how = "compiled modules cached" if args.cached else "this environment"
    table = Table("command", "median", "fastest", "÷ numpy import", "processor", "÷ numpy import",
                  title=f"start-up, median of {args.runs} runs ({how}; {os.cpu_count()} cores, "
                        f"load average {load_before:.1f})")
    for row in rows:
        table.add_row(row["command"], f"{row['median_s'] * 1e3:.0f} ms", f"{row['fastest_s'] * 1e3:.0f} ms",
                      f"{row['ratio_to_numpy']:.2f}", f"{row['cpu_median_s'] * 1e3:.0f} ms",
                      f"{row['cpu_ratio_to_numpy']:.2f}")
    Console(width=120).print(table)
    write_document({"runs": args.runs, "python": sys.version.split()[0], "yardstick": YARDSTICK,
                    "compiled_modules_cached": args.cached, "baseline": args.baseline,
                    "load_average_1min": load_before,
                    "results": rows}, args.output)


if __name__ == "__main__":
    main()

"""Time the full Swiss-T1 sub-topology sweep (5^8 = 390,625 allocations): the Rust core against
the same sweep as a plain Python loop, measured in one run.

    python benchmarks/sweep_t1.py --output out/bench-sweep-t1.json [--repeat 5] [--skip-python]
"""

from __future__ import annotations

import argparse
import json
import platform
import statistics
import time

from rich.console import Console
from rich.table import Table

from liquidsched.io.output import write_output
from liquidsched.sweep import run_sweep, sweep_model, sweep_python
from liquidsched.topologies import swiss_t1


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--output", required=True)
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--skip-python", action="store_true")
    args = parser.parse_args()

    net = swiss_t1()
    times = []
    for _ in range(args.repeat):
        result = run_sweep(net)
        times.append(result.time_s)
    rust = {"median_s": statistics.median(times), "min_s": min(times), "runs_s": times}
    record = {"benchmark": "sweep_t1", "machine": platform.processor() or platform.machine(),
              "allocations": result.allocations, "classes": len(result.classes), "rust": rust}
    if not args.skip_python:
        model = sweep_model(net)
        start = time.perf_counter()
        reference = sweep_python(model)
        python_s = time.perf_counter() - start
        record["python"] = {"time_s": python_s, "classes": len(reference)}
        record["speedup"] = python_s / rust["median_s"]
        record["same_classes"] = reference == {(c.hosts, c.liquid_throughput_Bps): (c.count, c.allocation)
                                               for c in result.classes}

    table = Table("implementation", "time (s)", "classes", "speed-up", title="swiss-t1 sweep, 390,625 allocations, one core")
    table.add_row("Rust core (median of %d)" % args.repeat, f"{rust['median_s']:.4f}", str(len(result.classes)),
                  f"{record['speedup']:.0f}x" if "speedup" in record else "-")
    if "python" in record:
        table.add_row("plain Python loop", f"{record['python']['time_s']:.3f}", str(record["python"]["classes"]), "1x")
    Console().print(table)
    write_output(args.output, json.dumps(record, indent=2) + "\n")


if __name__ == "__main__":
    main()

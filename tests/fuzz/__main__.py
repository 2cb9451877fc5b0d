"""The long fuzz run, what ``make fuzz`` runs (``python -m tests.fuzz``): every hostile input,
counted per class, written to ``out/fuzz.json``; with ``--zygote``, the zygote a
:class:`~.running.Runner` starts.
"""

from __future__ import annotations

import json
import sys
import time
from collections import Counter
from pathlib import Path

from .cases import ROOT, Case
from .catalogue import all_cases
from .checking import _problem_kind, markdown, run_cases
from .running import MEMORY_CAP_BYTES, Runner, zygote


def main(argv: list[str] | None = None) -> int:
    import argparse
    import tempfile

    parser = argparse.ArgumentParser(description="The long fuzz run: every hostile input, counted per class.")
    parser.add_argument("--zygote", action="store_true", help=argparse.SUPPRESS)
    parser.add_argument("--report", default="out/fuzz.json")
    parser.add_argument("--markdown", help="also write the failures grouped by class as Markdown")
    parser.add_argument("--jobs", type=int, default=2)
    parser.add_argument("--timeout", type=float, default=20.0)
    parser.add_argument("--mutations", type=int, default=30, help="random text mutations per file argument")
    parser.add_argument("--classes", help="comma-separated classes only")
    args = parser.parse_args(argv)
    if args.zygote:
        zygote()
        return 0
    classes = all_cases(args.mutations)
    if args.classes:
        classes = {c: v for c, v in classes.items() if c in args.classes.split(",")}
    counts = {c: len(v) for c, v in classes.items()}
    total = sum(counts.values())
    print(f"fuzz: {total} distinct hostile inputs: " + ", ".join(f"{c} {n}" for c, n in counts.items()), flush=True)
    runners = [Runner() for _ in range(args.jobs)]
    done = Counter()
    start = time.monotonic()

    def progress(case: Case, problems: list[str]) -> None:
        done[case.cls] += 1
        n = sum(done.values())
        if n % 100 == 0:
            print(f"  {n}/{total} after {time.monotonic() - start:.0f} s", flush=True)

    try:
        with tempfile.TemporaryDirectory(prefix="liquidsched-fuzz-") as tmp:
            cases = [c for cs in classes.values() for c in cs]
            failures, peak = run_cases(cases, Path(tmp), runners, args.timeout, progress)
    finally:
        for r in runners:
            r.close()
    failed = Counter(f.cls for f in failures)
    kinds = Counter(_problem_kind(p) for f in failures for p in f.problems)
    print(f"fuzz: {total} distinct hostile inputs in {time.monotonic() - start:.0f} s, {len(failures)} failed; "
          f"peak memory of one command {peak['maxrss_bytes'] >> 20} MiB")
    for c, n in counts.items():
        print(f"  {c:15} {n:5} inputs, {failed.get(c, 0):4} failed")
    print("  by problem: " + ", ".join(f"{k} {n}" for k, n in kinds.most_common()))
    report = {"inputs": total, "by_class": counts, "failed": len(failures), "failed_by_class": dict(failed),
              "failed_by_problem": dict(kinds), "peak_maxrss_bytes": peak["maxrss_bytes"],
              "memory_cap_bytes": MEMORY_CAP_BYTES, "timeout_s": args.timeout,
              "failures": [{"class": f.cls, "group": f.group, "command": f.command, "problems": f.problems}
                           for f in failures]}
    Path(args.report).parent.mkdir(parents=True, exist_ok=True)
    Path(args.report).write_text(json.dumps(report, indent=1) + "\n")
    if args.markdown:
        Path(args.markdown).write_text(markdown(failures, counts, peak["maxrss_bytes"]))
    return 1 if failures else 0


if __name__ == "__main__":
    sys.path.insert(0, str(ROOT / "tests"))
    sys.exit(main())

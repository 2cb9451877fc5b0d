"""The one checker every case goes through (:func:`check`), every case run and checked
(:func:`run_cases`), and the failures summarised as text and as Markdown.
"""

from __future__ import annotations

import json
import os
import re
import threading
from collections import Counter, defaultdict
from dataclasses import dataclass, field
from pathlib import Path

from .cases import Case
from .running import LAUNCH_BLOCKED, MEMORY_CAP_BYTES, Outcome, Runner, materialise, snapshot

#: Exit status of a command whose reader closed the pipe (128 + SIGPIPE), as a shell tool.
EXIT_CLOSED_PIPE = 141


def _allowed_statuses(case: Case) -> set[int]:
    errors = {1, 2} if case.command == "check" else {2}
    return {"error": errors, "valid": {0}, "any": errors | {0}, "pipe": {EXIT_CLOSED_PIPE}}[case.expect]


def check(case: Case, o: Outcome, before: dict, after: dict, d: Path, timeout: float) -> list[str]:
    """What the command did wrong with this input: an empty list when nothing."""
    problems = []
    both = o.stdout + o.stderr
    if o.killed == "timeout":
        problems.append(f"hang: killed after {timeout:g} s")
    elif o.killed == "memory":
        problems.append(f"memory: killed at {o.maxrss_bytes >> 20} MiB")
    elif o.maxrss_bytes > MEMORY_CAP_BYTES:
        problems.append(f"memory: peak {o.maxrss_bytes >> 20} MiB")
    launched = o.status == LAUNCH_BLOCKED and "FUZZ: launch blocked" in o.stderr
    if launched and case.expect == "error":
        line = next(x for x in o.stderr.splitlines() if x.startswith("FUZZ:"))
        problems.append(f"launched a process: {line[len('FUZZ: launch blocked: '):][:100]}")
    elif o.signal is not None and not o.killed:
        problems.append(f"killed by signal {o.signal}")
    # "Exception ignored": what Python prints for an exception at exit (a closed stream, a
    # finaliser), a traceback all the same.
    crashed = "Traceback (most recent call last)" in both or "Exception ignored" in both
    if crashed:
        last = [x for x in o.stderr.splitlines() if x.strip()][-1:] or ["?"]
        problems.append(f"traceback: {last[0][:120]}")
    if "panicked at" in both:
        problems.append("Rust panic")
    # A traceback's status and lines say nothing more about it.
    if o.killed is None and o.status != LAUNCH_BLOCKED and o.status is not None and not crashed:
        lines = o.stderr.strip().splitlines()
        internal = next((x for x in lines if "internal error" in x), None)
        if internal is not None:
            # The command's own word for an exception it did not expect: a traceback in one line.
            problems.append(f"internal error (exit {o.status}): {internal[:140]}")
        elif o.status not in _allowed_statuses(case):
            first = (lines or [""])[0][:140]
            problems.append(f"exit {o.status} (expected {case.expect})" + (f": {first}" if o.status else ""))
        if case.expect == "pipe" and o.stderr.strip():
            problems.append(f"standard error on a closed pipe: {' | '.join(o.stderr.splitlines()[:2])[:140]}")
        if case.expect != "pipe" and (o.status == 2 or (o.status == 1 and case.command != "check")):
            lines = o.stderr.splitlines()
            if len(lines) != 1:
                problems.append(f"error on {len(lines)} lines: {' | '.join(lines[:3])[:160]}")
            elif not re.match(r"liquidsched( [\w-]+)*: error: ", lines[0]):
                problems.append(f"error line not 'liquidsched: error: ...': {lines[0][:140]}")
            if o.stdout.strip():
                problems.append(f"standard output before the error: {o.stdout.strip()[:80]!r}")
    # A launch the guard stopped ended the child mid-run: what it left is not the command's doing.
    failed = o.status != 0 and not launched
    if failed:
        new = sorted(set(after) - set(before))
        gone = sorted(set(before) - set(after))
        changed = sorted(k for k in set(before) & set(after) if before[k] != after[k])
        if new:
            problems.append(f"left behind after a failure: {', '.join(new)}")
        if gone or changed:
            problems.append(f"user's files changed by a failure: {', '.join(gone + changed)}")
    elif not launched:
        outs = set(case.outputs)
        for k in before:
            if k not in after:
                problems.append(f"{k}: removed")
            elif before[k][0] == "link" and after[k] != before[k]:
                problems.append(f"{k}: a symbolic link replaced by {after[k][0]}")
            elif before[k] != after[k] and k not in outs and before[k][0] == "file":
                problems.append(f"{k}: changed, not an output")
            elif before[k][0] not in ("file", "link", "dir") and after[k][0] != before[k][0]:
                problems.append(f"{k}: a device replaced")
        extra = sorted(k for k in set(after) - set(before) if k not in outs)
        if extra:
            problems.append(f"files written besides the outputs: {', '.join(extra)}")
        for k in outs:
            p = d / k
            if k.endswith(".json") and p.is_file() and not os.path.islink(p):
                try:
                    json.loads(p.read_text())
                except ValueError:
                    problems.append(f"{k}: not whole JSON")
    return problems


@dataclass
class Failure:
    """An input the command did not answer as it should: its problems and command line."""

    cls: str
    group: str
    command: str
    problems: list[str]
    case: Case = field(repr=False)


def run_cases(cases: list[Case], base: Path, runners: list[Runner], timeout: float,
              progress=None) -> tuple[list[Failure], dict]:
    """Run and check every case (spread over the runners); the failures, and figures."""
    from concurrent.futures import ThreadPoolExecutor

    failures: list[Failure] = []
    peak = {"maxrss_bytes": 0, "seconds": 0.0}
    lock = threading.Lock()
    counter = iter(range(len(cases)))

    def one(case: Case, runner: Runner) -> None:
        d = base / f"c{next(counter)}"
        materialise(case, d)
        before = snapshot(d)
        argv = [w.replace("{d}", str(d)) for w in case.argv]
        o = runner.run(argv, d, case.stdin.replace("{d}", str(d)), timeout, case.guarded, dict(case.env),
                       case.closed_stdout)
        after = snapshot(d)
        problems = check(case, o, before, after, d, timeout)
        with lock:
            peak["maxrss_bytes"] = max(peak["maxrss_bytes"], o.maxrss_bytes)
            peak["seconds"] = max(peak["seconds"], o.seconds)
            if problems:
                failures.append(Failure(case.cls, case.group, case.shown(), problems, case))
            if progress:
                progress(case, problems)
        _remove(d)

    if len(runners) == 1:
        for case in cases:
            one(case, runners[0])
    else:
        free = list(runners)
        slots_lock = threading.Lock()

        def task(case: Case) -> None:
            with slots_lock:
                r = free.pop()
            try:
                one(case, r)
            finally:
                with slots_lock:
                    free.append(r)

        with ThreadPoolExecutor(len(runners)) as pool:
            list(pool.map(task, cases))
    return failures, peak


def _remove(d: Path) -> None:
    for root, dirs, files in os.walk(d, topdown=False):
        for name in files:
            os.unlink(os.path.join(root, name))
        for name in dirs:
            p = os.path.join(root, name)
            os.unlink(p) if os.path.islink(p) else os.rmdir(p)
    os.rmdir(d)


def summary(failures: list[Failure], limit: int = 40) -> str:
    """The failures, one line each: what failed and the command line."""
    lines = [f"{len(failures)} hostile inputs not answered as they should be:"]
    for f in failures[:limit]:
        lines.append(f"  [{f.group}] {'; '.join(f.problems)}\n      {f.command[:300]}")
    if len(failures) > limit:
        lines.append(f"  … and {len(failures) - limit} more")
    return "\n".join(lines)


def _problem_kind(problem: str) -> str:
    return re.split(r"[:(]", problem, maxsplit=1)[0].strip()


def markdown(failures: list[Failure], counts: dict[str, int], peak_bytes: int = 0) -> str:
    """The failures grouped by class and kind of problem, one example command each."""
    out = [f"# Fuzz failures: {len(failures)} of {sum(counts.values())} distinct hostile inputs", "",
           f"`make fuzz` (`python -m tests.fuzz`); peak memory of one command {peak_bytes >> 20} MiB "
           f"(cap {MEMORY_CAP_BYTES >> 20} MiB). `D` is the input's own directory.", ""]
    by_class: dict[str, list[Failure]] = defaultdict(list)
    for f in failures:
        by_class[f.cls].append(f)
    for cls, n in counts.items():
        fs = by_class.get(cls, [])
        out.append(f"## {cls}: {len(fs)} of {n} failed")
        kinds: dict[str, list[Failure]] = defaultdict(list)
        for f in fs:
            for p in f.problems:
                kinds[_problem_kind(p)].append(f)
        for kind, members in sorted(kinds.items(), key=lambda kv: -len(kv[1])):
            groups = Counter(m.group.partition(":")[0] for m in members)
            out.append(f"- **{kind}** × {len(members)} (in {', '.join(f'{g} {c}' for g, c in groups.most_common(8))})")
            # One example per distinct message (paths and numbers aside), at most five.
            seen: set[str] = set()
            for ex in members:
                said = next(p for p in ex.problems if _problem_kind(p) == kind)
                sig = re.sub(r"/\S+|\d+", "#", said)[:90]
                if sig in seen or len(seen) == 5:
                    continue
                seen.add(sig)
                out.append(f"  - `{ex.command[:400]}`")
                out.append(f"    → {'; '.join(ex.problems)[:300]}")
        out.append("")
    return "\n".join(out) + "\n"

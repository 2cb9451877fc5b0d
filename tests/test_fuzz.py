"""The fast part of the fuzz harness (:mod:`tests.fuzz`): a fixed sample of every class of
hostile input, through every reader and every command, held to the one checker.

Each class is one test, whose failure lists every input that was not answered as it should be
(its problems, then its command line, ``D`` standing for the input's directory). ``make fuzz``
runs every input of every class (thousands) and writes ``out/fuzz.json``.
"""

from __future__ import annotations

import functools
import os
import signal
import time
from pathlib import Path

import pytest

from .fuzz import running
from .fuzz.cases import Case, _companions, _file, seeds, slots
from .fuzz.catalogue import all_cases, named, sample
from .fuzz.checking import check, run_cases, summary
from .fuzz.running import (KILL_RSS_BYTES, LAUNCH_BLOCKED, MEMORY_CAP_BYTES, Outcome, Runner, _forbid_launching,
                           materialise, snapshot, watch)

#: Inputs per class in the fast part (250 in all).
FAST = {"special-file": 40, "encoding": 20, "document-bomb": 20, "field-value": 30, "option-number": 35,
        "spec": 25, "hostfile-map": 15, "output-path": 25, "option-parse": 15, "mutation": 15, "closed-pipe": 10}
#: A hostile input that takes longer is a hang (as in the long part); wall time, so generous
#: enough for a machine with both cores busy.
TIMEOUT_S = 20.0


@functools.lru_cache(maxsize=1)
def classes() -> dict[str, list[Case]]:
    """Every class's inputs, made when a test first needs them (not at collection)."""
    return all_cases(mutations_per_slot=2)


@functools.lru_cache(maxsize=1)
def chosen() -> dict[str, list[Case]]:
    """The fast part's inputs: :data:`FAST` of each class, every reader and command in turn."""
    return sample(classes(), FAST)


@pytest.fixture(scope="module")
def runner():
    r = Runner()
    yield r
    r.close()


def test_every_class_reaches_every_command_and_reader():
    """The classes together drive every command of the command line and every file reader."""
    from liquidsched.cli.common import COMMANDS

    commands = {c.command for cases in classes().values() for c in cases}
    assert set(COMMANDS) <= commands, set(COMMANDS) - commands
    readers = {s.reader.partition("-")[0] for s in slots()}
    assert {"topology", "slurm", "infiniband", "traffic", "schedule", "map", "hostfile", "run",
            "selection"} <= readers
    assert sum(len(v) for v in classes().values()) >= 1000
    assert all(chosen()[c] for c in FAST)


@pytest.mark.parametrize("slot", [s for s in slots() if s.argv[0] != "netem"],
                         ids=lambda s: f"{s.reader}:{' '.join(s.argv[:2])}")
def test_the_seeds_are_valid(slot, runner, tmp_path):
    """Every valid seed is accepted where it is read: the hostile inputs made from it fail
    because of what was done to them, not because the seed or the command line was wrong.
    A command that launches is accepted when it gets as far as starting a process (blocked)."""
    seed = seeds()
    name, text = seed[slot.seed]
    case = Case("seed", slot.reader, slot.make("{d}/" + name),
                _companions(slot, seed) + (_file(name, text),), "valid", slot.outputs)
    failures, _ = run_cases([case], tmp_path, [runner], TIMEOUT_S)
    if failures:
        pytest.fail(summary(failures), pytrace=False)


@pytest.mark.parametrize("cls", list(FAST))
def test_hostile_inputs_are_answered(cls, runner, tmp_path):
    """One line, status 2 (1 from check), no traceback or panic, no file left or replaced,
    under 1 GB, within the timeout; status 0 only where the input is valid."""
    failures, _ = run_cases(chosen()[cls], tmp_path, [runner], TIMEOUT_S)
    if failures:
        pytest.fail(f"{cls}: {len(chosen()[cls])} inputs tried; " + summary(failures, limit=60), pytrace=False)


def test_the_inputs_the_issue_names_are_answered(runner, tmp_path):
    """Each hostile input issue 27 lists, and one of each kind of failure the long part found."""
    cases = named(classes())
    failures, _ = run_cases(cases, tmp_path, [runner], TIMEOUT_S)
    if failures:
        pytest.fail(f"{len(cases)} inputs tried; " + summary(failures, limit=60), pytrace=False)


# The checker itself: each rule catches what it is there for.

def _outcome(status=2, stderr="liquidsched: error: x: no\n", stdout="", **kw) -> Outcome:
    return Outcome(status=status, stderr=stderr, stdout=stdout, **kw)


CASE = Case("t", "t", ("plan", "--output", "{d}/s.json"), (), "error", ("s.json",))


def test_the_checker_accepts_a_clean_error_and_refuses_each_kind_of_wrong_answer(tmp_path):
    same = {"mine": ("file", 3, 1, "ab")}
    assert check(CASE, _outcome(), same, same, tmp_path, 10) == []
    wrong = {
        "traceback": _outcome(status=1, stderr="Traceback (most recent call last):\n  x\nValueError: y\n"),
        "Rust panic": _outcome(stderr="thread 'main' panicked at src/lib.rs:1:1:\nliquidsched: error: x\n"),
        "error on 3 lines": _outcome(stderr="usage: liquidsched plan\n  [-h]\nliquidsched: error: x\n"),
        "exit 0 (expected error)": _outcome(status=0, stderr=""),
        "exit 1 (expected error)": _outcome(status=1),
        "hang": _outcome(status=None, signal=9, killed="timeout"),
        "memory: killed": _outcome(status=None, signal=9, killed="memory", maxrss_bytes=KILL_RSS_BYTES + 1),
        "memory: peak": _outcome(maxrss_bytes=MEMORY_CAP_BYTES + 1),
        "launched a process": _outcome(status=LAUNCH_BLOCKED, stderr="FUZZ: launch blocked: (['mpiexec'],)\n"),
        "standard output before the error": _outcome(stdout="┏━━ table\n"),
        "error line not": _outcome(stderr="Error: no\n"),
        "internal error": _outcome(status=70, stderr="liquidsched: internal error: KeyError: 'mode' (a bug)\n"),
    }
    for what, outcome in wrong.items():
        problems = check(CASE, outcome, same, same, tmp_path, 10)
        assert any(p.startswith(what) for p in problems), (what, problems)
    left = check(CASE, _outcome(), same, {**same, ".s.json.tmp1": ("file", 1, 1, "c")}, tmp_path, 10)
    assert left == ["left behind after a failure: .s.json.tmp1"]
    touched = check(CASE, _outcome(), same, {"mine": ("file", 3, 2, "ab")}, tmp_path, 10)
    assert touched == ["user's files changed by a failure: mine"]
    link = {"s.json": ("link", "/x/target.json")}
    replaced = check(CASE, _outcome(status=0, stderr=""), link, {"s.json": ("file", 1, 1, "c")}, tmp_path, 10)
    assert any("symbolic link replaced" in p for p in replaced)


def test_check_may_exit_1_and_a_valid_input_must_exit_0(tmp_path):
    check_case = Case("t", "t", ("check", "{d}/s.json"), (), "error")
    assert check(check_case, _outcome(status=1, stderr="", stdout="invalid: frame 2\n"), {}, {}, tmp_path, 10) == []
    valid = Case("t", "t", ("bound", "--topology", "two-switch"), (), "valid")
    assert check(valid, _outcome(), {}, {}, tmp_path, 10)[0].startswith("exit 2 (expected valid)")


def test_a_half_written_json_output_is_caught(tmp_path):
    (tmp_path / "s.json").write_text('{"frames": [')
    after = snapshot(tmp_path)
    valid = Case("t", "t", ("plan", "--output", "{d}/s.json"), (), "valid", ("s.json",))
    assert check(valid, _outcome(status=0, stderr=""), {}, after, tmp_path, 10) == ["s.json: not whole JSON"]


def _forked(body) -> int:
    pid = os.fork()
    if pid == 0:
        try:
            os.setpgid(0, 0)
            body()
        finally:
            os._exit(0)
    try:
        os.setpgid(pid, pid)
    except OSError:
        pass
    return pid


def test_the_watcher_kills_a_child_that_hangs_or_grows(monkeypatch):
    hung = watch(_forked(lambda: time.sleep(60)), timeout=0.5)
    assert hung["killed"] == "timeout" and hung["signal"] == signal.SIGKILL
    monkeypatch.setattr(running, "KILL_RSS_BYTES", 200 << 20)
    grown = watch(_forked(lambda: [bytearray(b"x" * (64 << 20)) for _ in range(8)] and time.sleep(60)),
                  timeout=30)
    assert grown["killed"] == "memory" and grown["maxrss_bytes"] > 200 << 20


def test_the_launch_guard_stops_a_child_starting_a_process(tmp_path):
    def body():
        _forbid_launching()
        import subprocess

        try:
            subprocess.run(["true"])
        except SystemExit as e:
            os._exit(e.code)

    out = watch(_forked(body), timeout=20)
    assert out["status"] == LAUNCH_BLOCKED


def test_special_files_are_made_as_named(tmp_path):
    case = Case("t", "t", (), (("fifo", "fifo", b""), ("dir", "dir", b""), ("link", "link", b"{d}/none"),
                               ("big", "sparse", str(2 << 30).encode()), ("full", "full", b"")))
    d = tmp_path / "c"
    materialise(case, d)
    snap = snapshot(d)
    assert snap["link"] == ("link", f"{d}/none")
    assert snap["big"][:2] == ("file", 2 << 30) and os.stat(d / "big").st_blocks == 0
    assert (d / "fifo").is_fifo() and (d / "dir").is_dir() and (d / "full").is_char_device()
    assert Path(d).exists()


def test_a_forked_child_answers_as_the_liquidsched_script_does(runner, tmp_path):
    """The zygote's children stand for real runs: same status, same standard error, for a
    valid command, an option error, a missing file and a device."""
    import subprocess
    import sys

    for argv in (["bound", "--topology", "two-switch"], ["plan", "--topology", "two-switch", "--nope"],
                 ["check", str(tmp_path / "missing.json")], ["bound", "--topology", "/dev/zero"]):
        d = tmp_path / f"c{len(list(tmp_path.iterdir()))}"
        d.mkdir()
        forked = runner.run(argv, d, "", TIMEOUT_S, False, {})
        real = subprocess.run([sys.executable, "-c", "import sys; from liquidsched.cli import main; sys.exit(main())",
                               *argv], cwd=d, capture_output=True, text=True, timeout=60,
                              env=dict(os.environ, COLUMNS="200"), stdin=subprocess.DEVNULL)
        assert (forked.status, forked.stderr) == (real.returncode, real.stderr), argv


def test_a_closed_pipe_must_end_with_141_and_say_nothing(tmp_path):
    pipe = Case("t", "t", ("topology", "list"), (), "pipe", closed_stdout=True)
    assert check(pipe, _outcome(status=141, stderr=""), {}, {}, tmp_path, 10) == []
    assert check(pipe, _outcome(status=0, stderr=""), {}, {}, tmp_path, 10)[0].startswith("exit 0 (expected pipe)")
    said = check(pipe, _outcome(status=141, stderr="Exception ignored in: <_io.TextIOWrapper>\n"), {}, {}, tmp_path,
                 10)
    assert said and said[0].startswith("traceback")

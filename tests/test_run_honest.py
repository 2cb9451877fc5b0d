"""``liquidsched run`` is honest: it refuses invalid schedules (unless forced) and runs that
cannot fit in memory, says on which network it measured, counts self transfers as what they
are in execution, and keeps what it measured when MPI fails."""

from __future__ import annotations

import json
import os
import stat
import sys

import pytest

from liquidsched import build_topology, plan
from liquidsched.cli import main
from liquidsched.execute import (InsufficientMemoryError, check_memory, exchange_plan, failure_line,
                                 memory_estimate, network_schedule, run_exchange)
from liquidsched.execute.memory import RANK_OVERHEAD_BYTES, available_memory_bytes
from liquidsched.schedule import Schedule, ScheduleInfo
from liquidsched.traffic import Traffic, Transfer, all_to_all, half_all_to_all


def invalid_schedule_file(tmp_path) -> str:
    """Two transfers over the two-switch network's one-slot inter-switch link in one frame."""
    net = build_topology("two-switch")
    traffic = Traffic([Transfer("t1", "r4", 1000), Transfer("t2", "r5", 1000)])
    path = tmp_path / "bad.json"
    Schedule.from_indices(net, traffic, [[0, 1]], ScheduleInfo("by hand")).save(str(path))
    return str(path)


def test_run_refuses_an_invalid_schedule_with_its_violations(tmp_path, capsys):
    path = invalid_schedule_file(tmp_path)
    assert main(["run", "--schedule", path, "--repeats", "1"]) == 2
    text = capsys.readouterr().err
    assert "resource l_ab has 1 slot but carries 2 transfers" in text
    assert "--force" in text and "Traceback" not in text


def test_run_forced_says_the_schedule_is_invalid(tmp_path, capsys):
    path, report = invalid_schedule_file(tmp_path), tmp_path / "report.json"
    assert main(["run", "--schedule", path, "--force", "--repeats", "1", "--warmup", "0", "--modes", "frames",
                 "--output", str(report)]) == 0
    doc = json.loads(report.read_text())
    assert doc["schedule_valid"] is False and len(doc["violations"]) == 1
    assert "INVALID" in capsys.readouterr().out


def test_memory_estimate_counts_every_buffer_of_a_small_plan():
    net = build_topology("crossbar:n=3")
    traffic = Traffic([Transfer("h1", "h2", 1000), Transfer("h1", "h3", 3000), Transfer("h2", "h1", 500),
                       Transfer("h3", "h3", 200)])
    p = exchange_plan(plan(net, traffic, "round-robin"))
    assert p.send_bytes == [4000, 500, 200] and p.recv_bytes == [500, 1000, 3200]
    estimate = memory_estimate(p)
    # send + receive + expected, the largest transfer's pattern and the larger of it and the
    # comparison's result (a receive buffer), then the measured overhead per rank.
    assert estimate.buffer_bytes == [4000 + 2 * 500 + 3000 + 3000, 500 + 2 * 1000 + 1000 + 1000,
                                     200 + 2 * 3200 + 3000 + 3200]
    assert estimate.total_bytes == sum(estimate.buffer_bytes) + 3 * RANK_OVERHEAD_BYTES
    with pytest.raises(InsufficientMemoryError, match=r"needs about .* MB .* but 1.0 MB is available"):
        check_memory(p, available_bytes=1_000_000)


def test_a_run_that_cannot_fit_is_refused_before_launching(capsys):
    available = available_memory_bytes()
    assert available is not None
    # 5 senders each sending 5 transfers: 25 times the size, several times over.
    size = f"{available // 20 + 1}"
    assert main(["run", "--topology", "two-switch", "--algorithm", "round-robin", "--size", size]) == 2
    text = capsys.readouterr().err
    assert "the run needs about" in text and "is available (MemAvailable)" in text
    assert "running" not in text  # nothing was launched


def test_a_local_run_is_labelled_and_not_compared_with_the_bound(tmp_path, capsys):
    report = tmp_path / "r.json"
    args = ["run", "--topology", "crossbar:n=3", "--algorithm", "round-robin", "--size", "10kB", "--repeats", "1",
            "--warmup", "0", "--modes", "frames,alltoallv"]
    assert main([*args, "--output", str(report)]) == 0
    doc = json.loads(report.read_text())
    assert doc["network"] == "local" and doc["comparable_to_bound"] is False
    assert all(m["ratio_to_bound"] is None and m["throughput_Bps"] > 0 for m in doc["modes"])
    text = capsys.readouterr().out
    assert "n/a" in text and "local, not the modelled network" in text
    assert main([*args, "--on-modelled-network", "--output", str(report)]) == 0
    doc = json.loads(report.read_text())
    assert doc["network"] == "declared" and all(m["ratio_to_bound"] > 0 for m in doc["modes"])
    assert main([*args, "--on-modelled-network", "--emulate"]) == 2
    assert "--on-modelled-network" in capsys.readouterr().err


def test_self_transfers_leave_the_bound_and_the_throughput():
    net = build_topology("swiss-t1:allocation=1/1/0/0/0/0/0/0,capacity_Bps=100Mbit/s")
    schedule = plan(net, half_all_to_all(net), "liquid")
    crossing = network_schedule(schedule)
    assert len(schedule.traffic) == 4 and len(crossing.traffic) == 2
    assert all(t.src != t.dst for t in crossing.traffic)
    result = run_exchange(schedule, ["frames"], repeats=1, warmup=0, on_modelled_network=True)
    assert result.info["self_transfers"]["count"] == 2 and result.info["network_bytes"] == 2_000_000
    # In the model each host's link carries its self transfer and its transfer to the other:
    # the bound of the transfers that cross is twice the full traffic's per byte.
    assert result.modes[0].liquid_throughput_Bps == pytest.approx(2 * 12.5e6)
    only_self = Schedule.from_indices(net, Traffic([Transfer(h, h, 10) for h in net.hosts()]), [[0, 1]],
                                      ScheduleInfo("by hand"))
    assert network_schedule(only_self) is None


def test_failure_lines_name_what_failed():
    mpich = ("=  BAD TERMINATION OF ONE OF YOUR APPLICATION PROCESSES\n=   RANK 3 PID 12 RUNNING AT host\n"
             "=   KILLED BY SIGNAL: 9 (Killed)\n===\nYOUR APPLICATION TERMINATED WITH THE EXIT STRING: Killed\n"
             "This typically refers to a problem with your application.\nPlease see the FAQ page for debugging "
             "suggestions\n")
    assert failure_line(mpich, 9) == "a rank was killed by signal 9 (Killed; out of memory?) (exit 9)"
    fatal = "Abort(1) on node 2: Fatal error in internal_Isend: Other MPI error, error stack:\nmore\n"
    assert failure_line(fatal, 1) == "Fatal error in internal_Isend: Other MPI error (exit 1)"
    assert failure_line("Traceback (most recent call last):\n  x\nMemoryError\n", 1) == "a rank raised MemoryError (exit 1)"


def test_a_failed_run_keeps_what_it_measured(tmp_path, monkeypatch, capsys):
    """An mpiexec whose ranks die in the second mode: one error line naming the mode and the
    signal, and the first mode's measurement written to --output."""
    fake = tmp_path / "mpiexec"
    fake.write_text(f"""#!{sys.executable}
import json, sys
job = json.load(open(sys.argv[-1]))
out = {{"hosts": [], "modes": {{"frames": {{"times_s": [0.5], "verified": True}}}}, "running": "alltoallv"}}
json.dump(out, open(job["output"], "w"))
print("=   KILLED BY SIGNAL: 9 (Killed)")
print("Please see the FAQ page for debugging suggestions")
sys.exit(9)
""")
    fake.chmod(fake.stat().st_mode | stat.S_IEXEC)
    monkeypatch.setattr("liquidsched.execute.launcher.find_mpiexec", lambda: str(fake))
    report = tmp_path / "r.json"
    assert main(["run", "--topology", "crossbar:n=3", "--algorithm", "round-robin", "--size", "1kB",
                 "--modes", "frames,alltoallv", "--output", str(report)]) == 2
    err = capsys.readouterr().err
    line = [x for x in err.splitlines() if x.startswith("liquidsched: error:")]
    assert line == ["liquidsched: error: the MPI run failed in mode alltoallv: a rank was killed by signal 9 "
                    "(Killed; out of memory?) (exit 9) (frames measured before)"]
    doc = json.loads(report.read_text())
    assert [m["mode"] for m in doc["modes"]] == ["frames"] and "failed" in doc


def test_run_measures_the_shuffle_and_pairwise_schedules_and_mpis_alltoall(capsys):
    """``--modes shuffle,pairwise`` with ``--algorithm liquid`` runs those schedulers' own
    schedules, with the options given for them, and predicts each from its own schedule
    (window policy, steps policy); the library's alltoall runs its own algorithm."""
    args = ["run", "--topology", "hierarchical:d1=2,d2=2", "--traffic", "all-to-all", "--size", "40kB",
            "--algorithm", "liquid", "--modes", "frames,shuffle,pairwise,alltoall-brucks", "--remap",
            "--packet-bytes", "10kB", "--window", "2", "--repeats", "1", "--warmup", "0", "--json"]
    assert main(args) == 0
    report = json.loads(capsys.readouterr().out)
    assert [(m["mode"], m["algorithm"], m["verified"]) for m in report["modes"]] == [
        ("frames", "liquid", True), ("shuffle", "shuffle", True), ("pairwise", "pairwise", True),
        ("alltoall-brucks", "MPI", True)]
    assert set(report["predicted_ratio_to_bound"]) == {"frames", "shuffle", "pairwise", "alltoall-brucks"}
    with pytest.raises(SystemExit) as refused:
        main(args[:-1] + ["--modes", "frames,alltoall-nope"])
    assert refused.value.code == 2 and "unknown mode 'alltoall-nope'" in capsys.readouterr().err

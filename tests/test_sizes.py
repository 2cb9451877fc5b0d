"""Message-size sweeps: the sizes a range names, the statistics of timed runs worked by hand,
schedules scaled exactly or planned again, and ``run --sizes`` end to end with its JSON, its
metadata and its plot."""

from __future__ import annotations

import json
import math
import re
import sys

import pytest

from liquidsched import build_topology, plan
from liquidsched.cli import main
from liquidsched.errors import InputError
from liquidsched.execute.sizes import (SizedSchedules, format_size, parse_sizes, resized_traffic, scaled_schedule,
                                       time_statistics)
from liquidsched.traffic import Traffic, Transfer, all_to_all, half_all_to_all
from liquidsched.validation import validate

KiB, MiB = 1024, 1024 * 1024


@pytest.mark.parametrize("text,sizes", [
    ("1KiB:64MiB:x4", [KiB * 4**k for k in range(9)]),
    ("1KiB:100KiB:x4", [KiB, 4 * KiB, 16 * KiB, 64 * KiB]),  # the last is not hit, so not included
    ("1kB:4kB:+1kB", [1000, 2000, 3000, 4000]),
    ("100:350:+100", [100, 200, 300]),
    ("1KiB,4KiB", [KiB, 4 * KiB]),
    ("64KiB,1KiB,4KiB", [KiB, 4 * KiB, 64 * KiB]),
    ("1MB", [1_000_000]),
    ("8:8:x2", [8]),
])
def test_sizes_a_range_or_a_list_names(text, sizes):
    assert parse_sizes(text) == sizes


@pytest.mark.parametrize("text,message", [
    ("64KiB:1KiB:x4", "the first size 65536 is larger than the last 1024"),
    ("1KiB:64KiB:x1", "must be a whole number >= 2"),
    ("1KiB:64KiB:x1.5", "must be a whole number >= 2"),
    ("1KiB:64KiB:4", "neither xFACTOR nor +SIZE"),
    ("1KiB:64KiB", "expected FIRST:LAST:xFACTOR"),
    ("1KiB,1KiB", "size 1024 given twice"),
    ("1B:1MB:+1B", "names 1000000 sizes, more than 200"),
    ("1.5B,2B", "whole number of bytes"),
])
def test_bad_sizes_say_what_is_wrong(text, message):
    with pytest.raises(ValueError, match=re.escape(message)):
        parse_sizes(text)


def test_statistics_worked_by_hand():
    """[3, 1, 10, 2, 4]: mean 20/5 = 4; squared deviations 1, 9, 36, 4, 0 sum to 50, so the
    sample standard deviation is sqrt(50/4); median 3; p95 by nearest rank: ⌈0.95·5⌉ = 5th
    smallest = 10."""
    s = time_statistics([3.0, 1.0, 10.0, 2.0, 4.0])
    assert s == {"runs": 5, "mean_s": 4.0, "std_s": math.sqrt(12.5), "min_s": 1.0, "median_s": 3.0, "p95_s": 10.0,
                 "max_s": 10.0}
    # 20 runs 1..20: ⌈0.95·20⌉ = 19th smallest; the median is the mean of the 10th and 11th.
    s = time_statistics([float(k) for k in range(20, 0, -1)])
    assert (s["p95_s"], s["median_s"], s["mean_s"]) == (19.0, 10.5, 10.5)
    # 21 runs: ⌈19.95⌉ = 20th smallest.
    assert time_statistics([float(k) for k in range(1, 22)])["p95_s"] == 20.0
    # One run: no spread.
    assert time_statistics([0.25]) == {"runs": 1, "mean_s": 0.25, "std_s": 0.0, "min_s": 0.25, "median_s": 0.25,
                                       "p95_s": 0.25, "max_s": 0.25}
    with pytest.raises(InputError):
        time_statistics([])


def test_size_formats():
    assert [format_size(s) for s in (512, KiB, 3 * KiB, MiB, 64 * MiB, 1_000_000, 2_000, 1500)] == [
        "512 B", "1 KiB", "3 KiB", "1 MiB", "64 MiB", "1 MB", "2 kB", "1,500 B"]


@pytest.mark.parametrize("algorithm", ["liquid", "round-robin", "dsatur"])
def test_a_schedule_of_whole_equal_transfers_scales_exactly(algorithm):
    net = build_topology("two-switch")
    base = plan(net, half_all_to_all(net, size_bytes=1000), algorithm)
    scaled = scaled_schedule(base, 64 * KiB)
    again = plan(net, half_all_to_all(net, size_bytes=64 * KiB), algorithm)
    assert scaled is not None and validate(scaled) == []
    assert scaled.traffic.uniform_size == 64 * KiB and scaled.traffic.total_bytes == 25 * 64 * KiB
    # The same frames as the scheduler makes at that size, every piece the new size.
    assert [[p.transfer for p in f] for f in scaled.frames] == [[p.transfer for p in f] for f in again.frames]
    assert {p.bytes for f in scaled.frames for p in f} == {64 * KiB}


def test_a_schedule_whose_frames_depend_on_the_size_is_planned_again():
    """The shuffle schedule cuts messages into packets of 16 KiB: at 64 KiB a message is four
    packets, at 1 KiB one; scaling would be wrong, so it is planned for each size."""
    net = build_topology("hierarchical:d1=2,d2=2")
    traffic = all_to_all(net, size_bytes=64 * KiB)
    base = plan(net, traffic, "shuffle", packet_bytes=16 * KiB)
    assert scaled_schedule(base, KiB) is None
    sized = SizedSchedules(base, lambda t: plan(net, t, "shuffle", packet_bytes=16 * KiB))
    small = sized(KiB)
    assert sized.made == {KiB: "planned"} and validate(small) == []
    assert len(small.frames) < len(base.frames)
    with pytest.raises(InputError, match="cannot be scaled: give --topology and --algorithm"):
        SizedSchedules(base)(KiB)
    liquid = SizedSchedules(plan(net, traffic, "liquid"))
    liquid(KiB)
    assert liquid.made == {KiB: "scaled"}


def test_a_sweep_needs_equal_transfers():
    net = build_topology("crossbar:n=3")
    uneven = Traffic([Transfer("h1", "h2", 10), Transfer("h2", "h3", 20)])
    with pytest.raises(InputError, match="differ in size"):
        SizedSchedules(plan(net, uneven, "round-robin"))
    assert list(resized_traffic(uneven, 7)) == [Transfer("h1", "h2", 7), Transfer("h2", "h3", 7)]


def crammed(schedule):
    """``schedule`` with every piece in one frame: invalid wherever two transfers share a slot."""
    from liquidsched.schedule import Schedule

    return Schedule(schedule.network, schedule.traffic, [[p for f in schedule.frames for p in f]], schedule.info)


def test_every_size_of_a_sweep_is_validated_and_an_invalid_one_refused():
    """A schedule planned again at a size is validated like the one given: refused unless
    forced, and then its violations are reported with its size."""
    import argparse

    from liquidsched.cli.run import sized_validity

    net = build_topology("two-switch")
    traffic = all_to_all(net, size_bytes=64 * KiB)
    base = plan(net, traffic, "shuffle", packet_bytes=16 * KiB)
    replan = lambda t: plan(net, t, "shuffle", packet_bytes=16 * KiB)  # noqa: E731
    bad_at = lambda t: crammed(replan(t)) if t.uniform_size == 2 * KiB else replan(t)  # noqa: E731
    given = {"schedule_valid": True, "violations": []}
    args = argparse.Namespace(schedule=None, force=False)
    assert sized_validity(args, SizedSchedules(base, replan), [KiB, 2 * KiB], given) == given
    with pytest.raises(InputError, match="the schedule planned for 2 KiB: the schedule is invalid"):
        sized_validity(args, SizedSchedules(base, bad_at), [KiB, 2 * KiB], given)
    forced = sized_validity(argparse.Namespace(schedule=None, force=True), SizedSchedules(base, bad_at),
                            [KiB, 2 * KiB], given)
    assert forced["schedule_valid"] is False and forced["violations"]
    assert all(v.startswith("at 2 KiB: ") for v in forced["violations"])


def test_run_sizes_refuses_an_invalid_schedule_at_a_size_before_running(monkeypatch, capsys):
    import liquidsched.execute.sizes as sizes_module
    import liquidsched.schedulers as schedulers

    real = schedulers.plan

    def planned(network, traffic, algorithm, **options):
        schedule = real(network, traffic, algorithm, **options)
        return crammed(schedule) if traffic.uniform_size == 2 * KiB else schedule

    def never(*args, **kwargs):
        raise AssertionError("nothing runs before every size's schedule is validated")

    monkeypatch.setattr(schedulers, "plan", planned)
    monkeypatch.setattr(sizes_module, "run_exchange", never)
    assert main(["run", "--topology", "two-switch", "--algorithm", "shuffle", "--packet-bytes", "512",
                 "--sizes", "1KiB,2KiB", "--modes", "frames"]) == 2
    err = capsys.readouterr().err
    assert "the schedule planned for 2 KiB" in err and "does not deliver its traffic exactly" in err
    assert "running" not in err and "Traceback" not in err


def test_run_sizes_end_to_end(tmp_path, capsys):
    """Two sizes, two modes, here: a table with every size and mode, JSON with the statistics
    and the metadata, a plot; no ratio to the bound on this machine."""
    report, picture = tmp_path / "sizes.json", tmp_path / "sizes.svg"
    argv = ["run", "--topology", "crossbar:n=3", "--traffic", "all-to-all", "--algorithm", "liquid",
            "--sizes", "1KiB,16KiB", "--modes", "frames,alltoall", "--repeats", "3", "--warmup", "0",
            "--output", str(report), "--plot", str(picture)]
    assert main(argv) == 0
    out = capsys.readouterr().out
    assert "1 KiB" in out and "16 KiB" in out and out.count("alltoall") == 2 and "n/a" in out
    doc = json.loads(report.read_text())
    meta = doc["metadata"]
    assert {k: meta[k] for k in ("topology", "traffic", "algorithm", "modes", "repeats", "warmup", "sizes_bytes")} == {
        "topology": "crossbar", "traffic": "all-to-all", "algorithm": "liquid", "modes": ["frames", "alltoall"],
        "repeats": 3, "warmup": 0, "sizes_bytes": [KiB, 16 * KiB]}
    assert meta["mpi_library"].startswith("MPICH") and meta["launcher"]["kind"] == "mpiexec"
    assert meta["command_line"] == "liquidsched " + " ".join(argv)
    assert meta["started_utc"].endswith("+00:00") and meta["host"] and meta["liquidsched_version"]
    assert [p["size_bytes"] for p in doc["sizes"]] == [KiB, 16 * KiB]
    for point in doc["sizes"]:
        assert point["schedule"]["made"] == "scaled" and point["network_bytes"] == 6 * point["size_bytes"]
        for row in point["modes"]:
            assert row["runs"] == 3 and row["verified"] is True and row["ratio_to_bound"] is None
            assert row["min_s"] <= row["median_s"] <= row["p95_s"] <= row["max_s"]
            assert row["throughput_Bps"] == pytest.approx(point["network_bytes"] / row["median_s"])
    assert doc["network"] == "local" and doc["comparable_to_bound"] is False
    assert picture.read_bytes().lstrip().startswith(b"<?xml") and b"<svg" in picture.read_bytes()


def test_a_single_run_json_has_the_same_metadata(tmp_path, capsys):
    report = tmp_path / "r.json"
    assert main(["run", "--topology", "crossbar:n=3", "--algorithm", "round-robin", "--size", "1kB", "--repeats", "1",
                 "--warmup", "0", "--modes", "frames", "--timeout", "120", "--output", str(report)]) == 0
    meta = json.loads(report.read_text())["metadata"]
    assert meta["timeout_s"] == 120 and "sizes_bytes" not in meta and meta["repeats"] == 1
    assert set(meta) >= {"topology", "traffic", "algorithm", "modes", "mpi_library", "launcher", "host",
                         "liquidsched_version", "started_utc", "command_line"}


FAILING_SECOND = """#!{python}
# mpiexec for the first launch; a rank killed in every launch after it.
import os, sys
count = {count!r}
n = int(open(count).read()) if os.path.exists(count) else 0
open(count, "w").write(str(n + 1))
if n == 0:
    os.execv({mpiexec!r}, [{mpiexec!r}, *sys.argv[1:]])
print("=   KILLED BY SIGNAL: 9 (Killed)")
sys.exit(9)
"""


def test_a_sweep_that_fails_at_a_size_keeps_the_sizes_before(tmp_path, capsys):
    from liquidsched.execute import find_mpiexec

    fake = tmp_path / "mpirun"
    fake.write_text(FAILING_SECOND.format(python=sys.executable, count=str(tmp_path / "n"), mpiexec=find_mpiexec()))
    fake.chmod(0o755)
    report = tmp_path / "sizes.json"
    assert main(["run", "--topology", "crossbar:n=3", "--traffic", "all-to-all", "--algorithm", "round-robin",
                 "--sizes", "1KiB,2KiB,4KiB", "--modes", "frames", "--repeats", "1", "--warmup", "0",
                 "--launcher", str(fake), "--output", str(report)]) == 2
    errors = [x for x in capsys.readouterr().err.splitlines() if x.startswith("liquidsched: error:")]
    assert errors == ["liquidsched: error: at 2 KiB: the MPI run failed: a rank was killed by signal 9 (Killed; out "
                      "of memory?) (exit 9)"]
    doc = json.loads(report.read_text())
    assert [p["size_bytes"] for p in doc["sizes"]] == [KiB] and doc["failed"].startswith("at 2 KiB")


@pytest.mark.parametrize("argv,message", [
    (["--sizes", "1KiB,2KiB", "--size", "1KiB"], "--size and --sizes both set the transfers' size"),
    (["--plot", "x.png"], "--plot draws a --sizes sweep"),
    (["--sizes", "1KiB,2KiB", "--traffic", "skewed:seed=1"], "differ in size"),
    (["--sizes", "1KiB,2KiB", "--plot", "x.gif"], "x.gif: a plot is written as png, pdf, svg by its extension"),
])
def test_sizes_errors_are_one_line(capsys, argv, message):
    code = main(["run", "--topology", "crossbar:n=3", "--algorithm", "round-robin", *argv])
    err = capsys.readouterr().err
    assert code == 2 and err.count("\n") == 1 and message in err

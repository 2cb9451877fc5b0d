"""``liquidsched tune --pmpi``: the candidates timed by the C benchmark as the interposition
library runs them, a table the library follows, a forced mode that did not run refused, and the
user errors of the option. Needs mpicc and cargo (``make -C pmpi``); the emulated case needs
root. Outside CI they are skipped without them; in CI (``CI`` set) nothing is skipped."""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys

import pytest

from liquidsched.errors import InputError
from liquidsched.execute.library_tuning import (benchmark_run, check_all_to_all, forced_mode_ran_every_call,
                                                rotated)
from liquidsched.execute.pmpi import build_pmpi, find_mpicc
from liquidsched.execute.selection import best_mode
from liquidsched.topologies import resolve_topology
from liquidsched.traffic import Traffic, Transfer, all_to_all

IN_CI = bool(os.environ.get("CI"))
HAS_ROOT = os.geteuid() == 0 and shutil.which("ip") is not None and shutil.which("tc") is not None
PREFIX = "lst"
#: The library's line when a call follows the table (liquidsched_pmpi.c's table_mode).
CHOICE = re.compile(r"MPI_Alltoall of (\d+) B per message: (.+?) \(selection table")


@pytest.fixture(scope="module")
def built():
    if (find_mpicc() is None or shutil.which("cargo") is None) and not IN_CI:
        pytest.skip("needs mpicc and cargo")
    return build_pmpi()


def liquidsched(*args: str, env: dict | None = None, timeout: float = 300) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "liquidsched.cli", *args], capture_output=True, text=True,
                          timeout=timeout, env={**os.environ, **(env or {})})


def test_every_candidate_is_timed_and_the_library_follows_the_table(built, tmp_path):
    table = tmp_path / "table.json"
    done = liquidsched("tune", "--pmpi", "--topology", "crossbar:n=3", "--sizes", "1KiB,16KiB", "--repeats", "2",
                       "--calls", "1", "--output", str(table))
    assert done.returncode == 0, done.stderr
    doc = json.loads(table.read_text())
    assert doc["measured_on"]["measured_through"] == "interposition library"
    assert doc["measured_on"]["ranks"] == 3 and doc["measured_on"]["traffic"] == "all-to-all"
    assert [r["size_bytes"] for r in doc["sizes"]] == [1024, 16384]
    for row in doc["sizes"]:
        assert set(row["modes"]) == {"frames", "paced", "alltoall", "alltoallv"}
        for stats in row["modes"].values():
            assert len(stats["times_s"]) == 2 and all(t > 0 for t in stats["times_s"])
            assert stats["min_s"] <= stats["median_s"] <= stats["max_s"]
        assert row["best"] == best_mode({m: v["median_s"] for m, v in row["modes"].items()})
    # The interposition library reads the table it was measured for and says what it runs.
    done = liquidsched("launch", "--topology", "crossbar:n=3", "--pmpi", "--selection", str(table), "--",
                       str(built.benchmark), "-m", "1024,16384", "-i", "2", "-x", "1", "-c", "alltoall",
                       env={"LIQUIDSCHED_VERBOSE": "1"})
    assert done.returncode == 0, done.stderr
    said = {int(size): mode for size, mode in CHOICE.findall(done.stderr)}
    assert set(said) == {1024, 16384}, done.stderr
    for row in doc["sizes"]:
        # An MPI_Alltoall has MPICH's MPI_Alltoall for its own: a schedule runs where it beat that
        # by the margin, even when MPICH's MPI_Alltoallv, which such a call never runs, was faster.
        medians = {m: v["median_s"] for m, v in row["modes"].items()}
        library = medians["alltoall"] <= min(medians["frames"], medians["paced"]) * (1 + doc["margin"])
        assert (said[row["size_bytes"]] == "the library's own") == library, (medians, said)


def test_a_forced_mode_that_left_calls_to_the_mpi_library_is_refused(built, tmp_path):
    table = tmp_path / "table.json"
    # Under LIQUIDSCHED_MIN_BYTES the library leaves small calls to MPICH even when a mode is
    # forced: the times of "frames" would be MPICH's.
    done = liquidsched("tune", "--pmpi", "--topology", "crossbar:n=3", "--sizes", "1KiB", "--repeats", "1",
                       "--calls", "1", "--modes", "frames,alltoall", "--output", str(table),
                       env={"LIQUIDSCHED_MIN_BYTES": "64KiB"})
    assert done.returncode == 2, done.stderr
    assert "frames: the interposition library did not run every call in this mode: 0 of 11 calls ran it " \
           "(11 fell back to the MPI library, 0 left to it)" in done.stderr
    assert "Traceback" not in done.stderr and not table.exists()


@pytest.mark.parametrize("args, message", [
    (["--modes", "dependency-driven"], "dependency-driven: the interposition library does not run it"),
    (["--algorithm", "liquid"], "--algorithm: not with --pmpi"),
    (["--traffic", "half-all-to-all"], "the traffic must be an all-to-all of equal messages"),
])
def test_user_errors_of_pmpi_are_one_line(args, message, tmp_path):
    done = liquidsched("tune", "--pmpi", "--topology", "two-switch", "--sizes", "1KiB", *args,
                       "--output", str(tmp_path / "t.json"))
    assert done.returncode == 2 and message in done.stderr, done.stderr
    assert len(done.stderr.strip().splitlines()) == 1 and not (tmp_path / "t.json").exists()


def test_calls_without_pmpi_is_refused(tmp_path):
    done = liquidsched("tune", "--topology", "two-switch", "--algorithm", "liquid", "--sizes", "1KiB", "--calls", "3",
                       "--output", str(tmp_path / "t.json"))
    assert done.returncode == 2 and "--calls: for --pmpi only" in done.stderr, done.stderr


def test_how_each_candidate_is_run():
    assert benchmark_run("frames").preload and benchmark_run("frames").collective == "alltoall"
    assert benchmark_run("paced", 0.05).env["LIQUIDSCHED_PACE_HEADROOM"] == "0.05"
    assert not benchmark_run("alltoallv").preload and benchmark_run("alltoallv").collective == "alltoallv"
    assert benchmark_run("alltoall-pairwise").env["MPIR_CVAR_ALLTOALL_INTRA_ALGORITHM"] == "pairwise"
    with pytest.raises(InputError, match="does not run it"):
        benchmark_run("all-at-once")
    assert [rotated("abcd", k) for k in range(4)] == [list("abcd"), list("bcda"), list("cdab"), list("dabc")]


def test_only_an_all_to_all_of_equal_messages_between_every_host_is_measured():
    net = resolve_topology("crossbar:n=3")
    hosts = net.hosts()
    check_all_to_all(all_to_all(net), hosts)
    uneven = Traffic([Transfer(a, b, 100 if a == hosts[0] else 200) for a in hosts for b in hosts if a != b])
    with pytest.raises(InputError, match="all-to-all of equal messages"):
        check_all_to_all(uneven, hosts)
    with pytest.raises(InputError, match="all-to-all of equal messages"):
        check_all_to_all(Traffic(list(all_to_all(net))[1:]), hosts)


def test_the_library_s_summary_decides_whether_a_forced_mode_ran():
    line = ("liquidsched: rank 0 made {} planned, {} reused and {} fallback exchanges, and left {} to the library "
            "by choice")
    assert forced_mode_ran_every_call(line.format(3, 30, 0, 0), 33) is None
    assert forced_mode_ran_every_call(line.format(3, 29, 0, 0), 33) == \
        "32 of 33 calls ran it (0 fell back to the MPI library, 0 left to it)"
    assert forced_mode_ran_every_call(line.format(3, 29, 0, 1), 33).endswith("1 left to it)")
    assert "no summary" in forced_mode_ran_every_call("nothing", 3)


@pytest.mark.skipif(not HAS_ROOT and not IN_CI, reason="needs root and iproute2")
def test_on_an_emulated_network_no_candidate_beats_the_liquid_bound(built, tmp_path):
    table = tmp_path / "table.json"
    done = liquidsched("tune", "--pmpi", "--topology", "crossbar:n=3,capacity_Bps=100Mbit/s", "--emulate",
                       "--prefix", PREFIX, "--sizes", "64KiB", "--repeats", "1", "--calls", "2", "--output", str(table))
    assert done.returncode == 0, done.stderr
    row = json.loads(table.read_text())["sizes"][0]
    # Λ of 3 hosts sending 2 × 64 KiB each over 100 Mbit/s links: no run is shorter.
    liquid_s = 2 * 65536 / 12.5e6
    for mode, stats in row["modes"].items():
        assert stats["ratio_to_bound"] == pytest.approx(liquid_s / stats["median_s"], rel=1e-9), mode
        assert stats["ratio_to_bound"] <= 1.02, (mode, stats)
    left = subprocess.run(["ip", "netns", "list"], capture_output=True, text=True).stdout
    assert f"{PREFIX}-n" not in left

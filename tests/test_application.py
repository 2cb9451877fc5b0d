"""Persistent exchanges inside an mpi4py application: planned once, run on the application's own
buffers in every mode, equal to MPI_Alltoallv byte for byte; and bad plans refused clearly."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from liquidsched.errors import InputError
from liquidsched.execute import find_mpiexec
from liquidsched.execute.application import plan_alltoallv
from liquidsched.execute.plan import MODES

PROGRAM = Path(__file__).resolve().parent / "programs" / "application_check.py"


@pytest.mark.parametrize("topology, ranks", [("crossbar:n=2", 2), ("random:switches=3,hosts=5,seed=4", 3),
                                             ("hierarchical:d1=2,d2=2,c2=25MB/s", 4)])
def test_every_mode_equals_mpi_alltoallv_on_the_applications_buffers(topology, ranks):
    done = subprocess.run([find_mpiexec(), "-n", str(ranks), sys.executable, str(PROGRAM), topology],
                          capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stderr[-3000:]
    rows = [json.loads(line) for line in done.stdout.splitlines() if line.startswith("{")]
    assert [r["case"] for r in rows] == ([f"alltoall-{m}" for m in MODES] +
                                         [f"alltoallv-{m}" for m in ("frames", "barrier-free", "shuffle", "alltoallv")] +
                                         [f"back-to-back-{m}" for m in ("barrier-free", "frames", "shuffle")] +
                                         ["selected-without-table-alltoallv", "selected-by-table-paced",
                                          "bad-on-one-rank"])
    assert all(r["exact"] for r in rows), rows
    by_case = {r["case"]: r for r in rows}
    # equal messages: the liquid search; uneven ones: the weighted scheduler; paper 002's modes: their own
    assert by_case["alltoall-frames"]["algorithm"] == "liquid"
    assert by_case["alltoallv-frames"]["algorithm"] == "weighted"
    assert by_case["alltoall-shuffle"]["algorithm"] == "shuffle"
    assert by_case["alltoall-pairwise"]["algorithm"] == "pairwise"


def test_relayed_schedules_run_on_the_applications_buffers_exactly():
    """FAST and hierarchical dispatch forward through other ranks; their segments are moved to
    where the application keeps each message, gaps and all."""
    topology = "two-tier:servers=2,gpus=2,servers_per_leaf=1"
    done = subprocess.run([find_mpiexec(), "-n", "4", sys.executable, str(PROGRAM), topology, "relayed"],
                          capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stderr[-3000:]
    rows = [json.loads(line) for line in done.stdout.splitlines() if line.startswith("{")]
    modes = ("frames", "barrier-free", "all-at-once", "pairwise", "paced", "alltoallv")
    assert [r["case"] for r in rows] == [f"relayed-{a}-{m}" for a in ("fast", "hierarchical") for m in modes] + [
        "relayed-shuffle-refused"]
    assert all(r["exact"] for r in rows), rows
    assert all(r["algorithm"] == r["case"].split("-")[1] for r in rows if r["case"].split("-", 2)[2] in modes[:4])
    assert "the shuffle mode does not run a relayed schedule" in rows[-1]["message"]


class OneRankOfTwo:
    """Rank 0 of a two-rank communicator, as far as checks before any message go."""

    def Get_size(self):
        return 2

    def Get_rank(self):
        return 0

    def allgather(self, value):
        return [value, value]


@pytest.mark.parametrize("kwargs, message", [
    ({"mode": "fastest"}, "unknown mode 'fastest'"),
    ({"sendcounts": [1]}, "sendcounts: expected 2 values"),
    ({"sendcounts": [1, -1]}, "must be >= 0"),
    ({"hosts": ["h1", "nowhere"]}, "host 'nowhere' is not a host of crossbar"),
    ({"hosts": ["h1", "h1"]}, "host 'h1' has two ranks"),
    ({"itemsize": 0}, "itemsize must be at least 1"),
])
def test_bad_plans_are_refused_with_what_is_wrong(kwargs, message):
    args = {"sendcounts": [4, 4]} | kwargs
    with pytest.raises(InputError, match=message):
        plan_alltoallv(OneRankOfTwo(), "crossbar:n=3", args.pop("sendcounts"), **args)


@pytest.mark.parametrize("value, expected", [(None, 0.02), ("", 0.02), ("0.05", 0.05), ("0", 0.0), ("0.7", None),
                                             ("3%", None), ("nan", None)])
def test_the_apis_paced_headroom_is_the_interposition_librarys_variable(monkeypatch, value, expected):
    from liquidsched.execute.paced import headroom_from_environment

    if value is None:
        monkeypatch.delenv("LIQUIDSCHED_PACE_HEADROOM", raising=False)
    else:
        monkeypatch.setenv("LIQUIDSCHED_PACE_HEADROOM", value)
    if expected is None:
        with pytest.raises(InputError, match="LIQUIDSCHED_PACE_HEADROOM"):
            headroom_from_environment()
    else:
        assert headroom_from_environment() == expected


COUNTS_PROGRAM = Path(__file__).resolve().parent / "programs" / "application_counts_check.py"


@pytest.mark.parametrize("topology, ranks", [("crossbar:n=2", 2), ("random:switches=3,hosts=5,seed=4", 5),
                                             ("hierarchical:d1=4,d2=2,c2=25MB/s", 8)])
def test_counts_that_change_from_call_to_call_are_replanned_or_reused_and_exact(topology, ranks):
    modes = ["frames", "paced", "barrier-free", "alltoallv", "selected"]
    done = subprocess.run([find_mpiexec(), "-n", str(ranks), sys.executable, str(COUNTS_PROGRAM), topology,
                           ",".join(modes)], capture_output=True, text=True, timeout=900)
    assert done.returncode == 0, done.stderr[-3000:]
    rows = [json.loads(line) for line in done.stdout.splitlines() if line.startswith("{")]
    assert [r["mode"] for r in rows] == modes
    assert all(r["exact"] for r in rows), rows
    # matrices 0, 1, 2 planned once each; the later calls with 1 and 0 (twice) reuse theirs
    assert all((r["planned"], r["reused"]) == (3, 3) for r in rows), rows
    # the paced duration of every matrix is Λ of its own counts × (1 + headroom)
    assert rows[1]["paced_duration_checked"] is True


def test_displacements_without_counts_and_a_freed_exchange_are_refused():
    from liquidsched.execute.application import PersistentExchange

    exchange = PersistentExchange(OneRankOfTwo(), "alltoallv", None, [1, 1], [0, 1], [1, 1], [0, 1], 1, None, None)
    with pytest.raises(InputError, match="come with sendcounts"):
        exchange.alltoallv(bytearray(2), bytearray(2), sdispls=[1, 0])
    exchange.free()
    with pytest.raises(InputError, match="was freed"):
        exchange.alltoallv(bytearray(2), bytearray(2))

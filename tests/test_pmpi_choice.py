"""What the interposition library chooses, call by call: a selection table's choice, the cost
model's without one, the library's own at no cost where no schedule can win, paced and frames
runs that deliver every byte, tables measured elsewhere refused, settings read with their units
and refused clearly, and failed plans cached."""

from __future__ import annotations

import json
import re

import pytest

from liquidsched.bounds import compute_bound
from liquidsched.execute.selection import FORMAT, measured_on
from liquidsched.topologies import resolve_topology
from liquidsched.traffic import Traffic, Transfer

from .test_pmpi import assert_exact, built, fabric_of, run_app  # noqa: F401  (the fixture)

HIERARCHY = "hierarchical:d1=4,d2=2,c1=100Mbit/s,c2=200Mbit/s"


def made(stderr: str) -> tuple[int, int, int, int]:
    found = re.search(r"made (\d+) planned, (\d+) reused and (\d+) fallback exchanges, and left (\d+) to the "
                      r"library by choice", stderr)
    assert found, stderr
    return tuple(int(v) for v in found.groups())  # type: ignore[return-value]


def mpi_library() -> str:
    from mpi4py import MPI

    return MPI.Get_library_version()


def write_table(path, net, rows, ranks=None, library=None, fingerprint=None):
    """A selection table of ``rows``: (size, {mode: median seconds})."""
    about = measured_on(net, net.hosts()[:ranks] if ranks else net.hosts(), library or mpi_library(), "local")
    if fingerprint is not None:
        about["fingerprint"] = fingerprint
    sizes = [{"size_bytes": size, "best": min(modes, key=modes.get),
              "modes": {m: {"median_s": t} for m, t in modes.items()}} for size, modes in rows]
    path.write_text(json.dumps({"format": FORMAT, "measured_on": about, "margin": 0.01, "sizes": sizes}))
    return path


def auto(env=None):
    return {"LIQUIDSCHED_MODE": "auto", **(env or {})}


def test_without_a_table_small_calls_and_alltoallv_go_to_the_library_without_a_word(built, tmp_path):
    _, fabric = fabric_of(tmp_path, HIERARCHY)
    done, rows = run_app(built, 8, fabric, ["--sizes", "1,4096,32768", "--repeats", "3"], env=auto())
    assert_exact(done, rows, 6)
    assert "planned by" not in done.stderr and "falls back" not in done.stderr, done.stderr
    # 3 sizes x 2 collectives x (1 warm-up + 3 timed): every call the library's own, by choice
    assert made(done.stderr) == (0, 0, 0, 24)
    # and each handed over after the library's own time, which it measures and says
    handed = re.search(r"handed (\d+) calls to the library after ([\d.]+) us of its own on average", done.stderr)
    assert handed and int(handed[1]) == 24 and float(handed[2]) >= 0, done.stderr


def test_without_a_table_the_cost_model_plans_alltoall_where_mpichs_pairwise_exchange_congests(built, tmp_path):
    _, fabric = fabric_of(tmp_path, HIERARCHY)
    done, rows = run_app(built, 8, fabric, ["--sizes", "65536", "--op", "alltoall", "--repeats", "2"], env=auto())
    assert_exact(done, rows, 1)
    said = re.search(r"MPI_Alltoall of 65536 B per message on 8 ranks: frames by the cost model \(MPICH's pairwise "
                     r"exchange ([\d.e-]+) s, liquid frames ([\d.e-]+) s\)", done.stderr)
    assert said and float(said[1]) > float(said[2]), done.stderr
    # planned once, reused by the 2 later calls; none handed to the library
    assert made(done.stderr) == (1, 2, 0, 0)
    assert "handed" not in done.stderr, done.stderr


def test_without_a_table_a_crossbar_keeps_the_library_and_remembers_it(built, tmp_path):
    # On a crossbar every step of the pairwise exchange is a permutation at full rate: the model
    # finds nothing to gain, and later calls of that size go to the library without agreeing.
    _, fabric = fabric_of(tmp_path, "crossbar:n=4")
    done, rows = run_app(built, 4, fabric, ["--sizes", "65536", "--op", "alltoall", "--repeats", "3"], env=auto())
    assert_exact(done, rows, 1)
    assert "the library's own by the cost model" in done.stderr, done.stderr
    assert made(done.stderr) == (0, 0, 0, 4)


@pytest.mark.parametrize("mode", ["paced", "frames"])
def test_every_byte_arrives_in_each_mode_uneven_and_on_halves(built, tmp_path, mode):
    _, fabric = fabric_of(tmp_path, "random:switches=3,hosts=6,seed=2")
    done, rows = run_app(built, 6, fabric, ["--sizes", "1,3000,70000", "--split", "--repeats", "2"],
                         env={"LIQUIDSCHED_MODE": mode})
    assert_exact(done, rows, 12)  # rank 0's: world and its half, 3 sizes, 2 collectives
    assert "falls back" not in done.stderr, done.stderr
    planned, reused, fallback, _ = made(done.stderr)
    assert (planned, reused, fallback) == (12, 24, 0)


@pytest.mark.parametrize("value, factor", [(None, 1.02), ("0.1", 1.1), ("0", 1.0)])
def test_paced_spreads_each_exchange_over_the_bound_and_its_headroom(built, tmp_path, value, factor):
    _, fabric = fabric_of(tmp_path, "crossbar:n=3")
    env = {"LIQUIDSCHED_MODE": "paced", "LIQUIDSCHED_VERBOSE": "1"}
    if value is not None:
        env["LIQUIDSCHED_PACE_HEADROOM"] = value
    done, rows = run_app(built, 3, fabric, ["--sizes", "3000", "--op", "alltoall", "--repeats", "1"], env=env)
    assert_exact(done, rows, 1)
    bound = float(re.search(r"bound ([0-9.e+-]+) s", done.stderr).group(1))
    paced = re.search(r"paced over ([0-9.e+-]+) s \(the bound × ([0-9.]+)\)", done.stderr)
    assert paced, done.stderr
    # crossbar:n=3 (links of 1.25 GB/s): each host sends 2 × 3000 B on its own link
    assert bound == pytest.approx(6000 / 1.25e9, rel=1e-5)
    assert float(paced.group(1)) == pytest.approx(bound * factor, rel=1e-5)
    assert float(paced.group(2)) == pytest.approx(factor)


def test_a_table_decides_per_size_by_the_nearest_measured_one(built, tmp_path):
    net, fabric = fabric_of(tmp_path, HIERARCHY)
    table = write_table(tmp_path / "t.json", net, [
        (1024, {"alltoall": 1e-4, "alltoallv": 1e-4, "frames": 9e-4, "paced": 5e-4}),
        (1 << 20, {"alltoall": 3.0, "alltoallv": 2.0, "frames": 2.5, "paced": 2.2})])
    done, rows = run_app(built, 8, fabric, ["--sizes", "100,200000", "--repeats", "2"],
                         env=auto({"LIQUIDSCHED_SELECTION": str(table)}))
    assert_exact(done, rows, 4)
    assert ("MPI_Alltoall of 100 B per message: the library's own (selection table, below its smallest measured "
            "size, 1024 B)") in done.stderr
    assert "MPI_Alltoall of 200000 B per message: paced (selection table, measured at 1048576 B)" in done.stderr
    # MPI_Alltoallv's own (2.0) beats every schedule (2.2): the table never schedules it
    assert "MPI_Alltoallv of" not in done.stderr, done.stderr
    planned, reused, fallback, library = made(done.stderr)
    assert (planned, reused, fallback, library) == (1, 2, 0, 3 + 6)


def test_below_the_smallest_measured_size_the_library_runs_even_where_the_table_schedules(built, tmp_path):
    net, fabric = fabric_of(tmp_path, HIERARCHY)
    table = write_table(tmp_path / "t.json", net, [
        (1024, {"alltoall": 1e-3, "alltoallv": 1e-3, "frames": 9e-3, "paced": 1e-4})])
    done, rows = run_app(built, 8, fabric, ["--sizes", "100,1024", "--repeats", "1", "--op", "alltoall"],
                         env=auto({"LIQUIDSCHED_SELECTION": str(table)}))
    assert_exact(done, rows, 2)
    assert ("MPI_Alltoall of 100 B per message: the library's own (selection table, below its smallest measured "
            "size, 1024 B)") in done.stderr, done.stderr
    assert "MPI_Alltoall of 1024 B per message: paced (selection table, measured at 1024 B)" in done.stderr
    planned, _, fallback, library = made(done.stderr)
    assert planned == 1 and fallback == 0 and library >= 1


def test_a_table_that_schedules_alltoallv_chooses_by_the_mean_of_every_rank(built, tmp_path):
    net, fabric = fabric_of(tmp_path, HIERARCHY)
    table = write_table(tmp_path / "t.json", net, [
        (100, {"alltoall": 1e-4, "alltoallv": 1e-4, "frames": 9e-4}),
        (100000, {"alltoall": 3.0, "alltoallv": 3.0, "frames": 2.0})])
    args = ["--sizes", "50,300000", "--op", "alltoallv", "--repeats", "1"]
    # By default MPI_Alltoallv does not pay an agreement per call to follow the table.
    done, rows = run_app(built, 8, fabric, args, env=auto({"LIQUIDSCHED_SELECTION": str(table)}))
    assert_exact(done, rows, 2)
    assert "MPI_Alltoallv of" not in done.stderr and made(done.stderr) == (0, 0, 0, 4), done.stderr
    done, rows = run_app(built, 8, fabric, args,
                         env=auto({"LIQUIDSCHED_SELECTION": str(table), "LIQUIDSCHED_ALLTOALLV": "table"}))
    assert_exact(done, rows, 2)
    assert re.search(r"MPI_Alltoallv of \d+ B per message: the library's own \(selection table, below its smallest "
                     r"measured size, 100 B\)", done.stderr), done.stderr
    assert re.search(r"MPI_Alltoallv of \d+ B per message: frames \(selection table, measured at 100000 B\)",
                     done.stderr), done.stderr
    assert made(done.stderr) == (1, 1, 0, 2)


@pytest.mark.parametrize("case, said", [
    ("network", r"LIQUIDSCHED_SELECTION is refused: .*t\.json: the selection table was measured on another network"),
    ("library", r"LIQUIDSCHED_SELECTION is refused: .*measured with \"Open MPI v5\.0\.3, package: x\", not \"MPICH"),
    ("ranks", r"the selection table was measured with 4 ranks, not 8: the cost model decides"),
    ("garbage", r"LIQUIDSCHED_SELECTION is refused: .*t\.json: not a selection table"),
    ("device", r"LIQUIDSCHED_SELECTION is refused: /dev/zero: is a character device, not a regular file"),
])
def test_a_table_measured_elsewhere_is_refused_once_and_the_model_decides(built, tmp_path, case, said):
    net, fabric = fabric_of(tmp_path, HIERARCHY)
    rows = [(1 << 16, {"alltoall": 1.0, "frames": 1e-9})]
    path = tmp_path / "t.json"
    if case == "network":
        write_table(path, net, rows, fingerprint="0123456789abcdef")
    elif case == "library":
        write_table(path, net, rows, library="Open MPI v5.0.3, package: x")
    elif case == "ranks":
        write_table(path, net, rows, ranks=4)
    elif case == "device":
        path = "/dev/zero"
    else:
        path.write_text("{not json")
    done, rows_ = run_app(built, 8, fabric, ["--sizes", "65536", "--op", "alltoall", "--repeats", "2"],
                          env=auto({"LIQUIDSCHED_SELECTION": str(path)}))
    assert_exact(done, rows_, 1)
    assert len(re.findall(said, done.stderr)) == 1, done.stderr
    assert "by the cost model" in done.stderr and "selection table, measured" not in done.stderr


def test_the_fabric_carries_the_fingerprint_a_table_is_matched_by(tmp_path):
    from liquidsched.fingerprint import network_fingerprint

    net, fabric = fabric_of(tmp_path, HIERARCHY)
    assert f"fingerprint {network_fingerprint(net)}" in fabric.read_text().splitlines()
    assert network_fingerprint(net) != network_fingerprint(resolve_topology("crossbar:n=8"))


@pytest.mark.parametrize("variable, value, size, planned", [
    ("LIQUIDSCHED_MIN_BYTES", "1KiB", 1000, False),    # 1000 B < 1024 B: the library's own
    ("LIQUIDSCHED_MIN_BYTES", "1KiB", 1100, True),
    ("LIQUIDSCHED_MIN_BYTES", "1kB", 1000, True),      # 1000 B is not under 1000 B
    ("LIQUIDSCHED_MIN_BYTES", "1e3", 999, False),
])
def test_sizes_in_variables_take_units(built, tmp_path, variable, value, size, planned):
    _, fabric = fabric_of(tmp_path, "crossbar:n=3")
    done, rows = run_app(built, 3, fabric, ["--sizes", str(size), "--op", "alltoall", "--repeats", "1"],
                         env={variable: value})
    assert_exact(done, rows, 1)
    assert ("planned by" in done.stderr) == planned, done.stderr
    assert "refused" not in done.stderr


@pytest.mark.parametrize("variable, value, said", [
    ("LIQUIDSCHED_MIN_BYTES", "4 kilobytes", "expected a size in bytes such as 4096, 64KiB or 1MB"),
    ("LIQUIDSCHED_MIN_BYTES", "1.5", "expected a whole number of bytes"),
    ("LIQUIDSCHED_TIME_LIMIT", "soon", "expected a duration such as 2, 2s or 500ms"),
    ("LIQUIDSCHED_TIME_LIMIT", "0", "expected a positive duration"),
    ("LIQUIDSCHED_MODE", "fastest", "expected auto, frames, paced or library"),
    ("LIQUIDSCHED_ALLTOALLV", "yes", "expected library or table"),
    ("LIQUIDSCHED_PACE_HEADROOM", "0.7", "expected a share of the links from 0 to 0.5"),
    ("LIQUIDSCHED_PACE_HEADROOM", "3%", "expected a share of the links from 0 to 0.5"),
])
def test_an_unreadable_variable_is_refused_once_naming_it(built, tmp_path, variable, value, said):
    _, fabric = fabric_of(tmp_path, "crossbar:n=3")
    done, rows = run_app(built, 3, fabric, ["--sizes", "10,100", "--repeats", "2"], env={variable: value})
    assert_exact(done, rows, 4)
    lines = [line for line in done.stderr.splitlines() if "refused" in line]
    assert lines == [f"liquidsched: {variable}={value} is refused: {lines[0].split(': ', 2)[2]}"], done.stderr
    assert said in lines[0]


def test_a_failed_plan_is_cached_and_said_once(built, tmp_path):
    # A fabric without the route from host 2 to host 0: no plan can be made.
    text = ("liquidsched-fabric 1\nnetwork gap\nresources 6\n" + "1000000 1\n" * 6 + "hosts 3\na\nb\nc\n"
            "ranks 3\n0\n1\n2\nroutes 5\n0 1 : 0 4\n0 2 : 0 5\n1 0 : 1 3\n1 2 : 1 5\n2 1 : 2 4\n")
    fabric = tmp_path / "gap.fabric"
    fabric.write_text(text)
    done, rows = run_app(built, 3, fabric, ["--sizes", "4000", "--op", "alltoall", "--repeats", "4"])
    assert_exact(done, rows, 1)
    assert done.stderr.count("falls back") == 1 and "no route from c to a" in done.stderr, done.stderr
    assert done.stderr.count("planning failed for these counts") == 1, done.stderr
    assert made(done.stderr)[:3] == (0, 0, 5)


def test_paced_calls_are_planned_from_the_last_paced_plan_to_the_bound_of_their_own_counts(built, tmp_path):
    # An MPI_Alltoall, then MPI_Alltoallv alternating between two signatures that differ in one
    # message: the first paced plan is cold, the next two start from the one before (only the
    # changed messages walked), and each says the bound of its own counts.
    net, fabric = fabric_of(tmp_path, "random:switches=2,hosts=4,seed=1")
    done, rows = run_app(built, 4, fabric, ["--op", "alltoall", "--sizes", "4000", "--vary", "--repeats", "1"],
                         env={"LIQUIDSCHED_MODE": "paced"})
    assert_exact(done, rows, 1 + 6)
    said = re.findall(r"planned paced \((cold|from the last plan)\) in [0-9.]+ ms: bound ([0-9.e+-]+) s", done.stderr)
    assert [how for how, _ in said] == ["cold", "from the last plan", "from the last plan"], done.stderr
    hosts = net.hosts()[:4]

    def bound(nbytes):
        traffic = Traffic([Transfer(hosts[i], hosts[j], nbytes(i, j)) for i in range(4) for j in range(4)
                           if i != j and nbytes(i, j)])
        return float(compute_bound(net, traffic).duration_s)

    def alltoallv(variant):
        # alltoall_check's counts: ((5i + 3j) mod 4) units of 500 ints, rank 1 one unit more to rank 2 in variant 1
        return lambda i, j: 4 * 500 * ((5 * i + 3 * j) % 4 + (1 if variant and (i, j) == (1, 2) else 0))

    expected = [bound(lambda i, j: 4000), bound(alltoallv(0)), bound(alltoallv(1))]
    assert [float(b) for _, b in said] == pytest.approx(expected, rel=1e-5)
    assert made(done.stderr)[:3] == (3, 2 + 12 - 3, 0)

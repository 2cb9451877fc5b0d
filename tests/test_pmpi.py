"""The interposition library: an unmodified MPI application whose MPI_Alltoall and
MPI_Alltoallv are planned by liquidsched, every byte checked, on 2 to 8 ranks, here and on an
emulated network; what it claims about its plans, checked against the Python package; and its
fallbacks, each said once."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
from pathlib import Path

import pytest

from liquidsched import plan
from liquidsched.bounds import compute_bound
from liquidsched.errors import InputError
from liquidsched.execute.pmpi import PMPI_DIR, application_command, build_pmpi, find_mpicc, parse_results
from liquidsched.io.fabric import read_host_list, save_fabric
from liquidsched.topologies import resolve_topology
from liquidsched.traffic import Traffic, Transfer, all_to_all

TWO_SWITCH = str(Path(__file__).resolve().parents[1] / "benchmarks" / "topologies" / "two-switch-duplex.yaml")
needs_root = pytest.mark.skipif(os.geteuid() != 0 or shutil.which("ip") is None or shutil.which("tc") is None,
                                reason="needs root and iproute2")


@pytest.fixture(scope="module")
def built():
    if (find_mpicc() is None or shutil.which("cargo") is None) and not os.environ.get("CI"):
        pytest.skip("needs mpicc and cargo")
    return build_pmpi()


def run_app(built, ranks, fabric=None, args=(), env=None, preload=True, namespaces=None, timeout=300):
    cmd = application_command([str(built.check_program), *args], ranks, fabric,
                              built.library if preload else None, namespaces,
                              env={"LIQUIDSCHED_VERBOSE": "1", "LIQUIDSCHED_MODE": "frames", **(env or {})})
    done = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout)
    return done, parse_results(done.stdout)


def fabric_of(tmp_path, topology, hosts=None, name="net.fabric"):
    net = resolve_topology(topology)
    path = tmp_path / name
    save_fabric(net, hosts or net.hosts(), path)
    return net, path


def assert_exact(done, rows, expected_rows):
    assert done.returncode == 0, done.stderr[-2000:]
    assert len(rows) == expected_rows, done.stdout
    assert all(r["exact"] == 1 for r in rows), done.stdout


@pytest.mark.parametrize("topology, ranks", [("crossbar:n=2", 2), ("hierarchical:d1=2,d2=2,c2=25MB/s", 4),
                                             ("random:switches=3,hosts=5,seed=4", 5), (TWO_SWITCH, 8)])
def test_every_byte_arrives_planned_and_the_plans_are_reused(built, tmp_path, topology, ranks):
    _, fabric = fabric_of(tmp_path, topology)
    done, rows = run_app(built, ranks, fabric, ["--sizes", "1,777,20000", "--split", "--repeats", "2"])
    # world: 3 sizes x (alltoall, alltoallv); each half: the same
    assert_exact(done, rows, 12)
    assert "falls back" not in done.stderr, done.stderr
    made = re.search(r"made (\d+) planned, (\d+) reused and (\d+) fallback", done.stderr)
    # 3 sizes x 2 collectives x (world + rank 0's half, unless it has one rank: the library's
    # own then), each planned once and run 3 times in all
    planned = 6 * (2 if ranks >= 4 else 1)
    assert made and (int(made[1]), int(made[2]), int(made[3])) == (planned, 2 * planned, 0), done.stderr


def test_the_plans_it_claims_are_the_liquid_searchs(built, tmp_path):
    net, fabric = fabric_of(tmp_path, TWO_SWITCH)
    done, rows = run_app(built, 8, fabric, ["--sizes", "4096", "--op", "alltoall", "--repeats", "1"])
    assert_exact(done, rows, 1)
    claim = re.search(r"MPI_Alltoall on 8 ranks planned by the liquid search in [\d.]+ s: (\d+) frames "
                      r"\(optimal, proven\), model ([\d.e-]+) s, bound ([\d.e-]+) s", done.stderr)
    assert claim, done.stderr
    traffic = all_to_all(net, size_bytes=4096)
    bound = compute_bound(net, traffic)
    assert int(claim[1]) == bound.duration == plan(net, traffic, "liquid").length == 16
    assert float(claim[3]) == pytest.approx(float(bound.duration_s), rel=1e-5)
    assert float(claim[2]) == pytest.approx(float(bound.duration_s), rel=1e-5)


def test_uneven_messages_on_a_heterogeneous_network_are_planned_within_their_bound(built, tmp_path):
    net, fabric = fabric_of(tmp_path, "random:switches=3,hosts=6,seed=2")
    done, rows = run_app(built, 6, fabric, ["--sizes", "3000", "--op", "alltoallv", "--repeats", "1"])
    assert_exact(done, rows, 1)
    claim = re.search(r"weighted scheduler in [\d.]+ s: \d+ frames, model ([\d.e-]+) s, bound ([\d.e-]+) s",
                      done.stderr)
    assert claim, done.stderr
    # The same uneven counts as the application's (int units of ((5i + 3j) mod 4) x 375)
    hosts = net.hosts()
    traffic = Traffic([Transfer(hosts[i], hosts[j], 4 * 375 * ((5 * i + 3 * j) % 4)) for i in range(6)
                       for j in range(6) if i != j and (5 * i + 3 * j) % 4])
    bound_s = float(compute_bound(net, traffic).duration_s)
    assert float(claim[2]) == pytest.approx(bound_s, rel=1e-5)
    assert bound_s * (1 - 1e-9) <= float(claim[1])


def test_plans_of_signatures_that_differ_away_from_a_rank_are_never_mixed_up(built, tmp_path):
    # Two signatures differing only in rank 1's message to rank 2: rank 0 and rank 3 see the same
    # counts in both, so only an agreement of every rank can pick the right plan.
    _, fabric = fabric_of(tmp_path, "random:switches=2,hosts=4,seed=1")
    done, rows = run_app(built, 4, fabric, ["--op", "alltoall", "--sizes", "4000", "--vary", "--repeats", "1"])
    assert_exact(done, rows, 1 + 6)
    made = re.search(r"made (\d+) planned, (\d+) reused and (\d+) fallback", done.stderr)
    # a warm-up and a timed call each: the alltoall twice, the alternating alltoallv 12 times
    assert made and (int(made[1]), int(made[2]), int(made[3])) == (3, 2 + 12 - 3, 0), done.stderr


def test_switched_off_it_is_the_library_alone(built, tmp_path):
    _, fabric = fabric_of(tmp_path, "crossbar:n=3")
    done, rows = run_app(built, 3, fabric, ["--sizes", "100", "--repeats", "1"], env={"LIQUIDSCHED_PMPI": "off"})
    assert_exact(done, rows, 2)
    assert "liquidsched" not in done.stderr


def test_ranks_sharing_a_host_exchange_locally(built, tmp_path):
    net, fabric = fabric_of(tmp_path, "crossbar:n=2", hosts=["h1", "h1", "h2", "h2"])
    done, rows = run_app(built, 4, fabric, ["--sizes", "100,5000", "--repeats", "1"])
    assert_exact(done, rows, 4)
    assert "falls back" not in done.stderr


def test_the_fortran_entry_points_are_planned(built, tmp_path):
    _, fabric = fabric_of(tmp_path, "crossbar:n=3")
    done, rows = run_app(built, 3, fabric, ["--fortran", "--sizes", "64,4000", "--repeats", "1"])
    assert_exact(done, rows, 4)
    assert {r["op"] for r in rows} == {"alltoall-fortran", "alltoallv-fortran"}
    assert done.stderr.count("planned by") == 4, done.stderr


@pytest.mark.parametrize("case, note", [
    ("no-fabric", "LIQUIDSCHED_FABRIC is not set"),
    ("bad-fabric", "bad.fabric: line 4: capacity: expected a positive number of bytes/s"),
    ("too-few-ranks", "a rank of the communicator is not in the fabric"),
    ("small", "messages under LIQUIDSCHED_MIN_BYTES"),
    # Read whole, a device would grow every rank until the kernel killed it.
    ("device-fabric", "/dev/zero: is a character device, not a regular file"),
])
def test_what_cannot_be_planned_falls_back_with_one_note(built, tmp_path, case, note):
    fabric, env = None, {}
    if case == "device-fabric":
        fabric = Path("/dev/zero")
    elif case == "bad-fabric":
        fabric = tmp_path / "bad.fabric"
        fabric.write_text("liquidsched-fabric 1\nnetwork x\nresources 1\n-5 1\n")
    elif case == "too-few-ranks":
        _, fabric = fabric_of(tmp_path, "crossbar:n=2")
    elif case == "small":
        _, fabric = fabric_of(tmp_path, "crossbar:n=3")
        env = {"LIQUIDSCHED_MIN_BYTES": "1000"}
    done, rows = run_app(built, 3, fabric, ["--sizes", "10,100", "--op", "alltoall", "--repeats", "2"], env=env)
    assert_exact(done, rows, 2)
    assert done.stderr.count("falls back") == 1 and note in done.stderr, done.stderr
    assert "planned by" not in done.stderr


def test_in_place_and_strided_types_fall_back_and_stay_exact(built, tmp_path):
    _, fabric = fabric_of(tmp_path, "crossbar:n=4")
    done, rows = run_app(built, 4, fabric, ["--sizes", "400", "--op", "alltoall", "--in-place", "--vector",
                                            "--repeats", "2"])
    assert_exact(done, rows, 3)
    assert "MPI_IN_PLACE is not planned" in done.stderr
    assert "a datatype is not contiguous" in done.stderr


def test_without_the_library_the_application_is_the_same(built):
    done, rows = run_app(built, 3, None, ["--sizes", "100", "--repeats", "1"], preload=False)
    assert_exact(done, rows, 2)
    assert "liquidsched" not in done.stderr


def test_host_files_give_the_ranks_hosts(tmp_path):
    f = tmp_path / "hosts"
    f.write_text("a:2\nb slots=3\n\n# c\nc\n")
    assert read_host_list(f) == ["a", "a", "b", "b", "b", "c"]
    f.write_text("a:x\n")
    with pytest.raises(InputError, match=r"hosts:1: expected"):
        read_host_list(f)


def test_pmpi_config_writes_the_fabric_and_refuses_an_unknown_host(tmp_path):
    from liquidsched.cli import main

    out = tmp_path / "f.fabric"
    assert main(["pmpi-config", "--topology", "crossbar:n=3", "--hosts", "h3,h1", "--output", str(out)]) == 0
    lines = out.read_text().splitlines()
    assert lines[lines.index("ranks 2") + 1:lines.index("ranks 2") + 3] == ["1", "0"]  # hosts h1, h3 in order
    assert main(["pmpi-config", "--topology", "crossbar:n=3", "--hosts", "h9", "--output", str(out)]) == 2
    assert out.read_text().splitlines() == lines


@needs_root
def test_on_an_emulated_network_every_byte_arrives(built, tmp_path):
    from liquidsched.emulate import Emulation

    topology = "hierarchical:d1=2,d2=2,c1=50Mbit/s,c2=50Mbit/s"
    net, fabric = fabric_of(tmp_path, topology)
    with Emulation(net, "lspm") as emulation:
        namespaces = [emulation.namespace[h] for h in net.hosts()]
        done, rows = run_app(built, 4, fabric, ["--sizes", "1000,100000", "--repeats", "2"], namespaces=namespaces)
    assert_exact(done, rows, 4)
    assert done.stderr.count("planned by") == 4, done.stderr


def test_the_library_sources_are_where_the_build_looks():
    assert (PMPI_DIR / "liquidsched_pmpi.c").exists() and (PMPI_DIR / "tests" / "alltoall_check.c").exists()

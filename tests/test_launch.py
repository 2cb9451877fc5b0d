"""``liquidsched launch``: the user's own program, one rank per host, here and on an emulated
network (prefix ``lsb``), with and without the interposition library; its exit status, and the
emulated network removed on every way out (the application's end, its failure, a timeout,
SIGINT, SIGTERM, an error or a signal while building). And the OSU-like benchmark
``pmpi/bench/alltoall_bench``: its sizes, its JSON, and a corrupted byte caught.

The tests that build namespaces need root and iproute2; the others need mpicc and cargo (the
library and the benchmark are built by ``make -C pmpi``). Outside CI they are skipped without
them; in CI (``CI`` set) nothing is skipped."""

from __future__ import annotations

import json
import os
import re
import shutil
import signal
import subprocess
import sys
import textwrap
import threading
import time
from pathlib import Path

import pytest

from liquidsched.errors import BackendError, InputError
from liquidsched.execute.launch import (LaunchInterrupted, SignalGuard, application_hosts, launch,
                                        run_application)
from liquidsched.execute.pmpi import PMPI_DIR, build_pmpi, find_mpicc
from liquidsched.topologies import resolve_topology

PREFIX = "lsb"
#: Slow links, so that the links and not this machine's processors are the limit.
CROSSBAR = "crossbar:n=3,capacity_Bps=100Mbit/s"
IN_CI = bool(os.environ.get("CI"))
HAS_ROOT = os.geteuid() == 0 and shutil.which("ip") is not None and shutil.which("tc") is not None
needs_root = pytest.mark.skipif(not HAS_ROOT and not IN_CI, reason="needs root and iproute2")


def namespaces_left() -> list[str]:
    if shutil.which("ip") is None:
        return []
    out = subprocess.run(["ip", "netns", "list"], capture_output=True, text=True).stdout
    return [line.split()[0] for line in out.splitlines() if line.startswith(f"{PREFIX}-n")]


@pytest.fixture
def clean():
    """No namespace of the prefix before; after, the test must have left none (checked), and
    whatever is left is removed so that one failure does not cascade."""
    if HAS_ROOT:
        subprocess.run([sys.executable, "-m", "liquidsched.cli", "netem", "down", "--prefix", PREFIX],
                       capture_output=True)
    yield
    left = namespaces_left()
    if left and HAS_ROOT:
        subprocess.run([sys.executable, "-m", "liquidsched.cli", "netem", "down", "--prefix", PREFIX],
                       capture_output=True)
    assert not left, f"namespaces left behind: {left}"


@pytest.fixture(scope="module")
def built():
    if (find_mpicc() is None or shutil.which("cargo") is None) and not IN_CI:
        pytest.skip("needs mpicc and cargo")
    build = build_pmpi()
    bench = PMPI_DIR / "build" / "alltoall_bench"
    assert bench.is_file() and build.library.is_file()
    return bench


def liquidsched(*args: str, env: dict | None = None, timeout: float = 300) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "liquidsched.cli", *args], capture_output=True, text=True,
                          timeout=timeout, env={**os.environ, **(env or {})})


def table_sizes(stdout: str) -> dict[str, list[int]]:
    """The sizes of each table the benchmark printed, by collective."""
    tables: dict[str, list[int]] = {}
    current = None
    for line in stdout.splitlines():
        head = re.match(r"# alltoall_bench: MPI_(\w+) latency, (\d+) ranks", line)
        if head:
            current = head[1]
            tables[current] = []
        elif current and re.match(r"\d+\s", line):
            size, avg, low, high, calls = line.split()[:5]
            assert float(low) <= float(avg) <= float(high), line
            assert "MISMATCH" not in line
            tables[current].append(int(size))
    return tables


def no_traceback(stderr: str) -> None:
    assert "Traceback" not in stderr, stderr


# --- the benchmark on its own ---------------------------------------------------------------

def test_the_benchmark_sweeps_powers_of_two_and_checks_every_size(built):
    mpiexec = Path(sys.executable).parent / "mpiexec"
    done = subprocess.run([str(mpiexec), "-n", "2", str(built), "-m", "3:50", "-i", "2", "-x", "1"],
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    assert table_sizes(done.stdout) == {"Alltoall": [3, 6, 12, 24, 48], "Alltoallv": [3, 6, 12, 24, 48]}
    done = subprocess.run([str(mpiexec), "-n", "3", str(built), "-m", "4096", "-i", "2", "-x", "0", "-c", "alltoallv",
                           "-f", "json"], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    doc = json.loads(done.stdout)
    assert doc["ranks"] == 3 and doc["verified"] is True and doc["iterations"] == 2
    rows = doc["results"]
    assert [r["size_bytes"] for r in rows] == [2 ** k for k in range(13)]
    assert {r["collective"] for r in rows} == {"alltoallv"}
    assert all(r["min_latency_us"] <= r["avg_latency_us"] <= r["max_latency_us"] and r["verified"] for r in rows)
    done = subprocess.run([str(mpiexec), "-n", "2", str(built), "-m", "5,1000,4096", "-i", "1", "-x", "0"],
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    assert table_sizes(done.stdout) == {"Alltoall": [5, 1000, 4096], "Alltoallv": [5, 1000, 4096]}
    for bad in (["-m", "9:3"], ["-m", "8,4"], ["-m", "8,x"], ["-m", ",".join(["1"] + [str(k) for k in range(2, 80)])],
                ["-c", "bcast"], ["-i", "0"], ["-q"]):
        done = subprocess.run([str(mpiexec), "-n", "2", str(built), *bad], capture_output=True, text=True, timeout=60)
        assert done.returncode != 0 and "usage: alltoall_bench" in done.stderr, (bad, done.stderr)


def test_the_benchmark_catches_a_corrupted_byte(built, tmp_path):
    # An interposition that flips one received byte of every MPI_Alltoall(v): the benchmark
    # must see it and exit non-zero.
    shim = tmp_path / "corrupt.c"
    shim.write_text(textwrap.dedent("""
        #include <mpi.h>
        int MPI_Alltoall(const void *s, int sc, MPI_Datatype st, void *r, int rc, MPI_Datatype rt, MPI_Comm c) {
            int e = PMPI_Alltoall(s, sc, st, r, rc, rt, c);
            ((unsigned char *)r)[0] ^= 0x10;
            return e;
        }
    """))
    library = tmp_path / "libcorrupt.so"
    subprocess.run([find_mpicc(), "-shared", "-fPIC", "-o", str(library), str(shim)], check=True, timeout=120)
    mpiexec = Path(sys.executable).parent / "mpiexec"
    done = subprocess.run([str(mpiexec), "-n", "2", "env", f"LD_PRELOAD={library}", str(built), "-m", "1:4",
                           "-i", "2", "-x", "0", "-c", "alltoall"], capture_output=True, text=True, timeout=120)
    assert done.returncode != 0
    assert "MISMATCH" in done.stdout and "expected" in done.stderr, (done.stdout, done.stderr)


# --- launch, here ----------------------------------------------------------------------------

def test_launch_here_runs_one_rank_per_host_and_says_where(built):
    done = liquidsched("launch", "--topology", "crossbar:n=4", "--hosts", "h4,h2", "--", "sh", "-c",
                       "echo rank $PMI_RANK of $PMI_SIZE")
    assert done.returncode == 0, done.stderr
    assert sorted(done.stdout.split("\n")[:-1]) == ["rank 0 of 2", "rank 1 of 2"]
    assert "2 ranks on crossbar (h2, h4), all on this machine" in done.stderr
    no_traceback(done.stderr)
    done = liquidsched("launch", "--topology", "crossbar:n=3", "--", str(built), "-m", "1:8", "-i", "2", "-x", "1")
    assert done.returncode == 0, done.stderr
    assert table_sizes(done.stdout) == {"Alltoall": [1, 2, 4, 8], "Alltoallv": [1, 2, 4, 8]}


def test_launch_passes_the_application_s_exit_status():
    assert liquidsched("launch", "--topology", "crossbar:n=3", "--", "false").returncode == 1
    done = liquidsched("launch", "--topology", "crossbar:n=3", "--", "sh", "-c",
                       'if [ "$PMI_RANK" = 1 ]; then exit 7; fi')
    assert done.returncode == 7, done.stderr
    assert "the application failed: exit status 7" in done.stderr
    no_traceback(done.stderr)


def test_launch_ends_the_application_at_its_timeout_and_leaves_no_rank():
    marker = "sleep 117.25"  # an unusual command line, to look for afterwards
    started = time.monotonic()
    done = liquidsched("launch", "--topology", "crossbar:n=2", "--timeout", "2", "--", *marker.split(), timeout=100)
    assert done.returncode == 124, done.stderr
    assert "did not finish within 2 s" in done.stderr
    assert time.monotonic() - started < 100
    no_traceback(done.stderr)
    left = subprocess.run(["pgrep", "-x", "-f", marker], capture_output=True, text=True).stdout.split()
    assert not left


def signal_a_local_launch(program: list[str], marker: str, sig: int) -> tuple[int, str]:
    """Launch ``program`` on 2 ranks here, send ``sig`` to launch once both ranks run (``marker``
    their command line), and return launch's status and standard error, once no rank is left."""
    def ranks():
        return subprocess.run(["pgrep", "-x", "-f", marker], capture_output=True, text=True).stdout.split()

    proc = subprocess.Popen([sys.executable, "-m", "liquidsched.cli", "launch", "--topology", "crossbar:n=2", "--",
                             *program], stderr=subprocess.PIPE, text=True)
    try:
        for _ in range(600):
            if len(ranks()) == 2:
                break
            time.sleep(0.1)
        assert len(ranks()) == 2
        proc.send_signal(sig)
        _, stderr = proc.communicate(timeout=60)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    for _ in range(20):
        if not ranks():
            break
        time.sleep(0.1)
    assert not ranks()
    no_traceback(stderr)
    return proc.returncode, stderr


def test_a_hangup_ends_the_launch_and_every_rank():
    # a terminal closed under launch: Hydra's mpiexec dies of it without passing it on
    status, stderr = signal_a_local_launch(["sleep", "116.75"], "sleep 116.75", signal.SIGHUP)
    assert status == 129 and "interrupted (SIGHUP)" in stderr


def test_an_application_that_ignores_the_signal_is_killed_after_a_grace_period():
    status, stderr = signal_a_local_launch(["sh", "-c", 'trap "" INT TERM; sleep 116.5'], "sleep 116.5",
                                           signal.SIGINT)
    assert status == 130 and "interrupted (SIGINT): the application was ended (killed)" in stderr


def selection_table(path: Path, topology: str, ranks: int | None = None) -> Path:
    """A selection table as tune writes one, measured on ``topology`` (with ``ranks`` ranks)."""
    from liquidsched.execute.selection import SelectionTable, measured_on

    net = resolve_topology(topology)
    hosts = net.hosts()[:ranks] if ranks else net.hosts()
    rows = [{"size_bytes": 1024, "best": "alltoallv", "modes": {"alltoallv": {"median_s": 1e-3}}}]
    path.write_text(json.dumps(SelectionTable(measured_on(net, hosts, "MPICH", "emulated"), rows).to_dict()))
    return path


@pytest.fixture
def bad_tables(tmp_path):
    (tmp_path / "not-a-table.json").write_text('{"sizes": []}')
    selection_table(tmp_path / "two-ranks.json", CROSSBAR, ranks=2)
    selection_table(tmp_path / "other-network.json", "crossbar:n=3,capacity_Bps=10Mbit/s")
    return tmp_path


@pytest.mark.parametrize("args, message", [
    (["--pmpi", "--selection", "/nonexistent/table.json"], "--selection /nonexistent/table.json: no such file"),
    (["--selection", "{tables}/not-a-table.json"], "not a selection table"),
    (["--selection", "{tables}/two-ranks.json"], "measured with 2 ranks, not 3"),
    (["--selection", "{tables}/other-network.json"], "measured on another network"),
    (["--time-scale", "0.5"], "--time-scale 0.5"),
    (["--hosts", "h1,h9"], "'h9' is not a host of crossbar"),
    (["--hosts", "h1,h1"], "'h1' is given twice"),
    (["--launcher", "srun"], "srun"),
])
def test_user_errors_are_one_line_and_build_nothing(clean, bad_tables, args, message):
    args = [a.format(tables=bad_tables) for a in args]
    done = liquidsched("launch", "--topology", CROSSBAR, "--emulate", "--prefix", PREFIX, *args, "--", "true")
    assert done.returncode == 2
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("liquidsched: error:") and message in lines[0], done.stderr
    assert not namespaces_left()


def test_emulation_options_without_an_emulated_network_are_refused():
    done = liquidsched("launch", "--topology", "crossbar:n=2", "--buffers", "shallow", "--", "true")
    assert done.returncode == 2
    assert done.stderr == ("liquidsched: error: --buffers: for an emulated network only (give --emulate, or "
                           "--prefix)\n"), done.stderr


def test_a_missing_program_or_none_is_one_line():
    for program in (["./no-such-program"], []):
        done = liquidsched("launch", "--topology", "crossbar:n=2", "--", *program)
        assert done.returncode == 2
        assert done.stderr.count("\n") == 1 and done.stderr.startswith("liquidsched: error:"), done.stderr


def test_the_library_not_built_is_one_line_naming_make_pmpi(monkeypatch, tmp_path):
    import liquidsched.execute.pmpi as pmpi

    monkeypatch.setattr(pmpi, "PMPI_DIR", tmp_path)
    with pytest.raises(BackendError, match="not built .*make pmpi"):
        launch(["true"], resolve_topology("crossbar:n=2"), pmpi=True)


# --- teardown, without root: a fake emulation records what was built and removed ----------------

class FakeEmulation:
    def __init__(self, fail_after_build: BaseException | None = None, signal_while_building: bool = False):
        self.built = self.removed = False
        self.fail = fail_after_build
        self.signal = signal_while_building

    def __call__(self, network, emulate, prefix):
        import contextlib

        @contextlib.contextmanager
        def emulation():
            self.built = True
            try:
                if self.signal:
                    os.kill(os.getpid(), signal.SIGTERM)
                    time.sleep(5)  # interrupted by the guard
                if self.fail is not None:
                    raise self.fail
                yield {h: f"{prefix}-fake" for h in network.hosts()}
            finally:
                self.removed = True

        return emulation()


def test_an_error_while_building_removes_what_was_built():
    fake = FakeEmulation(fail_after_build=BackendError("tc failed"))
    with pytest.raises(BackendError, match="tc failed"):
        launch(["true"], resolve_topology("crossbar:n=2"), emulate=True, prefix=PREFIX, emulation=fake)
    assert fake.built and fake.removed


def test_a_signal_while_building_stops_the_launch_and_removes_what_was_built():
    fake = FakeEmulation(signal_while_building=True)
    previous = signal.getsignal(signal.SIGTERM)
    with pytest.raises(LaunchInterrupted) as raised:
        launch(["true"], resolve_topology("crossbar:n=2"), emulate=True, prefix=PREFIX, emulation=fake)
    assert raised.value.signum == signal.SIGTERM
    assert fake.built and fake.removed
    assert signal.getsignal(signal.SIGTERM) is previous


def test_a_signal_while_running_is_forwarded_and_the_status_says_which():
    with SignalGuard() as guard:
        threading.Timer(1.0, os.kill, (os.getpid(), signal.SIGINT)).start()
        mpiexec = str(Path(sys.executable).parent / "mpiexec")
        outcome = run_application([mpiexec, "-n", "2", "sleep", "60"], guard, grace_s=10)
    assert guard.signum == signal.SIGINT and outcome.forwarded and not outcome.timed_out and not outcome.killed
    assert outcome.returncode != 0


def test_application_hosts_keep_the_network_order():
    net = resolve_topology("two-switch")
    assert application_hosts(net) == net.hosts()
    assert application_hosts(net, ["r2", "t1"]) == ["t1", "r2"]
    with pytest.raises(InputError):
        application_hosts(net, ["t1", "x"])


# --- launch on an emulated network ---------------------------------------------------------------

@needs_root
def test_the_benchmark_on_an_emulated_network(built, clean):
    done = liquidsched("launch", "--topology", CROSSBAR, "--emulate", "--prefix", PREFIX, "--", str(built),
                       "-m", "1:1024", "-i", "3", "-x", "1")
    assert done.returncode == 0, done.stderr
    sizes = [2 ** k for k in range(11)]
    assert table_sizes(done.stdout) == {"Alltoall": sizes, "Alltoallv": sizes}
    assert f"each in its host's namespace {PREFIX}-n*; MPICH over TCP" in done.stderr
    no_traceback(done.stderr)


@needs_root
def test_the_benchmark_on_an_emulated_network_under_the_library(built, clean):
    done = liquidsched("launch", "--topology", CROSSBAR, "--emulate", "--prefix", PREFIX, "--pmpi", "--",
                       str(built), "-m", "1024:4096", "-i", "2", "-x", "1", "-c", "alltoall", "-f", "json",
                       env={"LIQUIDSCHED_VERBOSE": "1", "LIQUIDSCHED_MODE": "frames"})
    assert done.returncode == 0, done.stderr
    doc = json.loads(done.stdout)
    assert doc["verified"] and [r["size_bytes"] for r in doc["results"]] == [1024, 2048, 4096]
    # every size planned by the library from the fabric launch wrote, none fell back
    assert done.stderr.count("MPI_Alltoall on 3 ranks planned by the liquid search") == 3, done.stderr
    assert re.search(r"made 3 planned, \d+ reused and 0 fallback", done.stderr), done.stderr
    assert "interposition library preloaded" in done.stderr
    no_traceback(done.stderr)


@needs_root
def test_the_selection_table_and_the_fabric_reach_the_ranks(built, clean, tmp_path, monkeypatch):
    selection_table(tmp_path / "selection.json", CROSSBAR)
    os.chmod(tmp_path, 0o755)
    monkeypatch.chdir(tmp_path)  # given relative, passed absolute
    done = liquidsched("launch", "--topology", CROSSBAR, "--emulate", "--prefix", PREFIX, "--pmpi", "--selection",
                       "selection.json", "--", "sh", "-c",
                       'echo "$LIQUIDSCHED_SELECTION $LIQUIDSCHED_FABRIC $LD_PRELOAD $FI_PROVIDER $MPIR_CVAR_NOLOCAL"')
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    assert len(lines) == 3 and len(set(lines)) == 1, done.stdout
    table, fabric, preload, provider, nolocal = lines[0].split()
    assert table == str(tmp_path / "selection.json")
    assert fabric.endswith(".fabric") and not Path(fabric).exists()  # a temporary file, removed after
    assert preload == str(PMPI_DIR / "build" / "libliquidsched_pmpi.so")
    assert (provider, nolocal) == ("tcp", "1")


@needs_root
def test_the_python_api_builds_the_emulated_network_with_its_settings_and_removes_it(clean):
    said = []
    result = launch(["sh", "-c", "ip -o -4 addr show | grep -c 10.213"], resolve_topology(CROSSBAR),
                    ["h1", "h3"], emulate=True, prefix=PREFIX, emulation_settings={"time_scale": 2}, report=said.append)
    assert result.returncode == 0 and result.network == "emulated" and result.hosts == ["h1", "h3"]
    assert any("time scale 2" in line for line in said), said
    assert not namespaces_left()


@needs_root
def test_a_failing_application_on_an_emulated_network_leaves_nothing(clean, tmp_path):
    app = tmp_path / "exit3.py"
    app.write_text("from mpi4py import MPI\nimport sys\nMPI.COMM_WORLD.Barrier()\n"
                   "sys.exit(3 if MPI.COMM_WORLD.rank == 1 else 0)\n")
    os.chmod(tmp_path, 0o755)
    done = liquidsched("launch", "--topology", CROSSBAR, "--emulate", "--prefix", PREFIX, "--", sys.executable,
                       str(app))
    assert done.returncode == 3, done.stderr
    assert not namespaces_left()
    done = liquidsched("launch", "--topology", CROSSBAR, "--emulate", "--prefix", PREFIX, "--", "false")
    assert done.returncode == 1
    no_traceback(done.stderr)


@needs_root
@pytest.mark.parametrize("sig, status", [(signal.SIGINT, 130), (signal.SIGTERM, 143)])
def test_a_signal_ends_the_application_and_removes_the_network(clean, sig, status):
    proc = subprocess.Popen([sys.executable, "-m", "liquidsched.cli", "launch", "--topology", CROSSBAR, "--emulate",
                             "--prefix", PREFIX, "--", "sleep", "119.125"], stderr=subprocess.PIPE, text=True)
    lines: list[str] = []
    running = threading.Event()

    def read():
        for line in proc.stderr:
            lines.append(line)
            if line.startswith("launch: "):
                running.set()

    reader = threading.Thread(target=read, daemon=True)
    reader.start()
    try:
        assert running.wait(120), "".join(lines)
        time.sleep(1.0)
        assert len(namespaces_left()) == 4  # three hosts and the switch
        proc.send_signal(sig)
        assert proc.wait(timeout=60) == status
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    reader.join(10)
    stderr = "".join(lines)
    no_traceback(stderr)
    assert f"interrupted ({sig.name})" in stderr
    assert not namespaces_left()
    left = subprocess.run(["pgrep", "-x", "-f", "sleep 119.125"], capture_output=True, text=True).stdout.split()
    assert not left


@needs_root
def test_a_signal_while_the_network_is_being_built_removes_it(clean):
    proc = subprocess.Popen([sys.executable, "-m", "liquidsched.cli", "launch", "--topology", CROSSBAR, "--emulate",
                             "--prefix", PREFIX, "--", "sleep", "119.375"], stderr=subprocess.PIPE, text=True)
    try:
        for _ in range(3000):
            if namespaces_left():
                break
            time.sleep(0.01)
        proc.send_signal(signal.SIGINT)
        _, stderr = proc.communicate(timeout=60)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    assert proc.returncode == 130, stderr
    assert "interrupted (SIGINT)" in stderr
    no_traceback(stderr)
    assert not namespaces_left()


@needs_root
def test_launch_in_a_network_already_up_leaves_it_up(clean):
    up = liquidsched("netem", "up", "--topology", CROSSBAR, "--prefix", PREFIX, "--no-check")
    assert up.returncode == 0, up.stderr
    try:
        done = liquidsched("launch", "--prefix", PREFIX, "--", "sh", "-c", "ip -o -4 addr show | grep -c 10.213")
        assert done.returncode == 0, done.stderr
        # each rank sees only its own namespace's address
        assert done.stdout.split() == ["1", "1", "1"], done.stdout
        assert len(namespaces_left()) == 4
        other = liquidsched("launch", "--prefix", PREFIX, "--topology", "crossbar:n=4", "--", "true")
        assert other.returncode == 2 and "is crossbar" in other.stderr
        # --emulate over a network that is up: refused, and the network is not launch's to remove
        again = liquidsched("launch", "--topology", CROSSBAR, "--emulate", "--prefix", PREFIX, "--", "true")
        assert again.returncode == 2 and "exists" in again.stderr, again.stderr
        no_traceback(again.stderr)
        assert len(namespaces_left()) == 4
    finally:
        liquidsched("netem", "down", "--prefix", PREFIX)

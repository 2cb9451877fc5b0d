"""The MPI executor: message plans, and byte-exact exchanges under mpiexec in every mode."""

from __future__ import annotations

import os
import random
import sys
from pathlib import Path

import pytest

from liquidsched import build_topology, plan
from liquidsched.errors import InputError
from liquidsched.execute import (MODES, Launcher, alltoall_mode_env, launch_command, resolve_launcher,
                                 run_exchange)
from liquidsched.execute.plan import exchange_plan
from liquidsched.schedule import Piece, Schedule, ScheduleInfo
from liquidsched.traffic import Traffic, Transfer, all_to_all, half_all_to_all, random_matrix


def split_schedule(seed: int) -> Schedule:
    """A random traffic on a random network (repeated pairs and self transfers included), its
    transfers cut into 1 to 3 pieces spread over random frames in order."""
    rng = random.Random(seed)
    n = rng.randint(2, 8)
    net = build_topology(f"random:switches={rng.randint(1, 3)},hosts={n},seed={seed}")
    hosts = net.hosts()
    transfers = [Transfer(rng.choice(hosts), rng.choice(hosts), rng.randint(1, 300_000))
                 for _ in range(rng.randint(n, 3 * n))]
    transfers += [Transfer(hosts[0], hosts[-1], 1000)]  # every host count ≥ 2 has a real message
    traffic = Traffic(transfers, f"random-{seed}")
    frames: list[list[Piece]] = [[] for _ in range(6)]
    for name, t in zip(traffic.names, traffic):
        cuts = sorted(rng.sample(range(1, t.size_bytes), min(rng.randint(0, 2), t.size_bytes - 1)))
        sizes = [b - a for a, b in zip([0, *cuts], [*cuts, t.size_bytes])]
        slots = sorted(rng.sample(range(6), len(sizes)))
        for k, size in zip(slots, sizes):
            frames[k].append(Piece(name, size))
    return Schedule(net, traffic, [f for f in frames if f], ScheduleInfo("random-pieces"))


def test_plan_places_every_byte_once():
    for seed in range(20):
        schedule = split_schedule(seed)
        p = exchange_plan(schedule)
        assert sum(p.send_bytes) == sum(p.recv_bytes) == schedule.traffic.total_bytes
        covered: dict[int, int] = {}
        for m in p.messages:
            src, dst, nbytes, s_off, r_off = p.regions[m.transfer]
            assert (m.src, m.dst) == (src, dst)
            assert s_off <= m.send_offset and m.send_offset + m.nbytes <= s_off + nbytes
            assert m.send_offset - s_off == m.recv_offset - r_off
            covered[m.transfer] = covered.get(m.transfer, 0) + m.nbytes
        assert covered == {i: t.size_bytes for i, t in enumerate(schedule.traffic)}
        for r in range(p.size):
            sc, sd, rc, rd = p.counts(r)
            assert sc.sum() == p.send_bytes[r] and rc.sum() == p.recv_bytes[r]


def test_barrier_free_order_follows_each_resource_in_schedule_order(two_switch_net):
    schedule = plan(two_switch_net, half_all_to_all(two_switch_net), "liquid")
    p = exchange_plan(schedule)
    lists = schedule.traffic.resource_lists(two_switch_net)
    for m in p.messages:
        for q in p.waits_for[m.id]:
            assert p.messages[q].frame < m.frame
            assert set(lists[m.transfer]) & set(lists[p.messages[q].transfer])
            assert m.id in p.successors[q]
    # The first frame waits for nothing, and each later message waits for the message just
    # before it on the inter-switch link it crosses (a liquid schedule keeps both busy).
    assert all(not p.waits_for[m.id] for m in p.messages if m.frame == 0)


def test_barrier_free_order_takes_the_slot_freed_k_messages_before():
    """A 2:1 uplink has two slots: a piece crossing it waits for the piece two before it there,
    not the one just before, so two transfers share the uplink as in the frames."""
    net = build_topology("hierarchical:d1=4,d2=2,c2=200Mbit/s")
    schedule = plan(net, all_to_all(net), "liquid")
    p = exchange_plan(schedule)
    uplink = net.link_resource["e1>root"]
    lists = schedule.traffic.resource_lists(net)
    on_uplink = [m.id for m in p.messages if uplink in lists[m.transfer]]
    assert len(on_uplink) == 16
    for k in range(2, len(on_uplink)):
        assert on_uplink[k - 2] in p.waits_for[on_uplink[k]]
    # The second message on the uplink shares only the uplink with the first: it does not wait.
    first, second = (p.messages[i] for i in on_uplink[:2])
    if set(lists[first.transfer]) & set(lists[second.transfer]) == {uplink}:
        assert first.id not in p.waits_for[second.id]


def test_namespace_command_gives_each_rank_its_namespace():
    cmd = launch_command(2, "job.json", ["ns-a", "ns-b"], Launcher("mpiexec", "mpiexec"))
    text = " ".join(cmd)
    assert text.count("ip netns exec") == 2 and " : " in text
    assert "ip netns exec ns-a" in text and "ip netns exec ns-b" in text
    assert text.count("FI_PROVIDER tcp") == 2 and text.count("MPIR_CVAR_NOLOCAL 1") == 2


@pytest.mark.parametrize("seed", range(6))
def test_every_mode_delivers_every_byte(seed):
    schedule = split_schedule(seed)
    result = run_exchange(schedule, MODES, repeats=1, warmup=0, verify=True, seed=seed)
    assert [m.mode for m in result.modes] == list(MODES)
    assert all(m.verified is True for m in result.modes), [(m.mode, m.verified) for m in result.modes]
    assert len(result.hosts) == exchange_plan(schedule).size


def test_whole_transfer_schedules_from_the_schedulers_run_byte_exact():
    net = build_topology("random:switches=3,hosts=8,seed=4")
    traffic = random_matrix(net, seed=4, density=0.7, min_bytes=1, max_bytes=100_000)
    for algorithm in ("liquid", "round-robin"):
        result = run_exchange(plan(net, traffic, algorithm), MODES, repeats=2, warmup=1)
        assert len(result.hosts) == 8
        assert all(m.verified and len(m.times_s) == 2 for m in result.modes)


@pytest.mark.parametrize("seed", range(4))
def test_shuffle_under_a_window_of_one_step_and_pairwise_deliver_every_byte(seed):
    """The tightest window on uneven random traffic (some ranks only send, some only receive)
    cannot leave every rank waiting: the window counts steps, not packets."""
    schedule = split_schedule(seed)
    schedule.info.parameters["window"] = 1
    result = run_exchange(schedule, ["shuffle", "pairwise"], repeats=1, warmup=0, seed=seed)
    assert all(m.verified is True for m in result.modes), [(m.mode, m.verified) for m in result.modes]


def test_shuffle_and_pairwise_schedules_run_in_their_modes_beside_mpis_alltoall():
    """Each mode executes its own schedule (the shuffle exchange in packets under W = 2, the
    pairwise exchange) and MPICH's alltoall algorithms run on blocks of the equal messages;
    every byte checked, self blocks included where the traffic has them."""
    net = build_topology("hierarchical:d1=2,d2=2")
    for traffic in (all_to_all(net, size_bytes=70_000), half_all_to_all(net, size_bytes=70_000, include_self=True)):
        base = plan(net, traffic, "liquid")
        own = {"shuffle": plan(net, traffic, "shuffle", remap=True, packet_bytes=16_384, window=2),
               "pairwise": plan(net, traffic, "pairwise", remap=True)}
        modes = ["frames", "shuffle", "pairwise", "alltoall", "alltoall-brucks", "alltoall-pairwise",
                 "alltoall-scattered-0", "alltoall-scattered-2"]
        result = run_exchange(base, modes, repeats=1, warmup=0, mode_schedules=own)
        assert [m.mode for m in result.modes] == modes
        assert [m.algorithm for m in result.modes] == ["liquid", "shuffle", "pairwise"] + ["MPI"] * 5
        assert all(m.verified is True for m in result.modes), [(m.mode, m.verified) for m in result.modes]


def test_alltoall_modes_need_equal_messages():
    net = build_topology("crossbar:n=3")
    uneven = Traffic([Transfer("h1", "h2", 10), Transfer("h2", "h3", 10), Transfer("h3", "h1", 20),
                      Transfer("h1", "h3", 10), Transfer("h2", "h1", 10), Transfer("h3", "h2", 10)])
    with pytest.raises(InputError, match="equal messages"):
        run_exchange(plan(net, uneven, "round-robin"), ["alltoall-brucks"])
    with pytest.raises(InputError, match="unknown mode 'alltoall-scattered'"):
        run_exchange(plan(net, uneven, "round-robin"), ["alltoall-scattered"])


def test_alltoall_modes_set_mpichs_control_variables():
    assert alltoall_mode_env("alltoall") == {}
    assert alltoall_mode_env("alltoall-brucks") == {"MPIR_CVAR_DEVICE_COLLECTIVES": "none",
                                                    "MPIR_CVAR_ALLTOALL_INTRA_ALGORITHM": "brucks"}
    assert alltoall_mode_env("alltoall-scattered-8")["MPIR_CVAR_ALLTOALL_THROTTLE"] == "8"
    assert alltoall_mode_env("alltoall-scattered-x") is None
    cmd = launch_command(2, "job.json", launcher=Launcher("mpiexec", "mpiexec"), env=alltoall_mode_env("alltoall-pairwise"))
    assert cmd[:7] == ["mpiexec", "-genv", "MPIR_CVAR_DEVICE_COLLECTIVES", "none",
                       "-genv", "MPIR_CVAR_ALLTOALL_INTRA_ALGORITHM", "pairwise"]


# -- launchers ------------------------------------------------------------------------------------

PY = sys.executable
WORKER = [PY, "-m", "liquidsched.execute.worker", "job.json"]
ENV = {"MPIR_CVAR_ALLTOALL_INTRA_ALGORITHM": "brucks"}


def test_the_command_of_each_launcher():
    """Written out by hand: Hydra's mpiexec takes -genv and per-block -env; srun takes -n, its
    arguments and --export=ALL,K=V; another launcher gets -n and the environment by env(1)."""
    mpiexec, srun, mpirun = Launcher("mpiexec", "mpiexec"), Launcher("srun", "srun"), Launcher("path", "/o/mpirun")
    assert launch_command(4, "job.json", launcher=mpiexec, extra_args=["-f", "hosts"], env=ENV) == [
        "mpiexec", "-f", "hosts", "-genv", "MPIR_CVAR_ALLTOALL_INTRA_ALGORITHM", "brucks", "-n", "4", *WORKER]
    assert launch_command(4, "job.json", launcher=srun, extra_args=["--distribution=arbitrary"], env=ENV) == [
        "srun", "-n", "4", "--distribution=arbitrary", "--export=ALL,MPIR_CVAR_ALLTOALL_INTRA_ALGORITHM=brucks",
        *WORKER]
    assert launch_command(4, "job.json", launcher=srun) == ["srun", "-n", "4", *WORKER]
    assert launch_command(4, "job.json", launcher=mpirun, extra_args=["--hostfile", "h"], env=ENV) == [
        "/o/mpirun", "--hostfile", "h", "-n", "4", "env", "MPIR_CVAR_ALLTOALL_INTRA_ALGORITHM=brucks", *WORKER]
    assert launch_command(2, "job.json", ["ns-a", "ns-b"], mpirun) == [
        "/o/mpirun", "-n", "1", "ip", "netns", "exec", "ns-a", "env", "MPIR_CVAR_NOLOCAL=1",
        "MPIR_CVAR_CH4_NETMOD=ofi", "FI_PROVIDER=tcp", *WORKER, ":",
        "-n", "1", "ip", "netns", "exec", "ns-b", "env", "MPIR_CVAR_NOLOCAL=1",
        "MPIR_CVAR_CH4_NETMOD=ofi", "FI_PROVIDER=tcp", *WORKER]


def test_srun_refuses_namespaces_and_commas():
    srun = Launcher("srun", "srun")
    with pytest.raises(InputError, match="srun starts ranks on the allocation's nodes"):
        launch_command(2, "job.json", ["ns-a", "ns-b"], srun)
    with pytest.raises(InputError, match="--export splits at commas"):
        launch_command(2, "job.json", launcher=srun, env={"K": "a,b"})


def test_a_launcher_given_by_path_must_exist_and_be_executable(tmp_path):
    with pytest.raises(InputError, match=r"^launcher /nonexistent/mpirun: no such file"):
        resolve_launcher("/nonexistent/mpirun")
    plain = tmp_path / "mpirun"
    plain.write_text("#!/bin/sh\n")
    with pytest.raises(InputError, match="not executable"):
        resolve_launcher(str(plain))
    plain.chmod(0o755)
    assert resolve_launcher(str(plain)) == Launcher("path", str(plain))
    assert resolve_launcher().kind == "mpiexec"


FAKE_SRUN = """#!{python}
# srun as far as liquidsched uses it: -n N, options, --export=ALL,K=V; the ranks by mpiexec.
import os, sys
with open({log!r}, "a") as log:
    log.write(" ".join(sys.argv[1:]) + "\\n")
args = sys.argv[1:]
n, rest = args[args.index("-n") + 1], args[args.index("-n") + 2:]
genv = []
while rest[0].startswith("--"):
    option = rest.pop(0)
    if option.startswith("--export="):
        for pair in option.split("=", 1)[1].split(",")[1:]:
            genv += ["-genv", *pair.split("=", 1)]
os.execv({mpiexec!r}, [{mpiexec!r}, *genv, "-n", n, *rest])
"""


def test_an_srun_launch_runs_end_to_end(tmp_path, monkeypatch):
    """A fake srun first on PATH, running mpiexec underneath: every byte arrives, the
    environment of the MPI_Alltoall algorithm goes through --export, and the run is not said to
    be local (srun places the ranks)."""
    from liquidsched.execute import find_mpiexec

    log = tmp_path / "srun.log"
    fake = tmp_path / "srun"
    fake.write_text(FAKE_SRUN.format(python=PY, log=str(log), mpiexec=find_mpiexec()))
    fake.chmod(0o755)
    monkeypatch.setenv("PATH", f"{tmp_path}:{os.environ['PATH']}")
    net = build_topology("crossbar:n=3")
    result = run_exchange(plan(net, all_to_all(net, size_bytes=5000), "round-robin"), ["frames", "alltoall-brucks"],
                          repeats=1, warmup=0, launcher="srun", mpiexec_args=["--distribution=arbitrary"])
    assert [(m.mode, m.verified) for m in result.modes] == [("frames", True), ("alltoall-brucks", True)]
    assert result.network == "undeclared"
    calls = log.read_text().splitlines()
    assert [c.split(" -m ")[0] for c in calls] == [
        f"-n 3 --distribution=arbitrary {PY}",
        f"-n 3 --distribution=arbitrary --export=ALL,MPIR_CVAR_ALLTOALL_INTRA_ALGORITHM=brucks,"
        f"MPIR_CVAR_DEVICE_COLLECTIVES=none {PY}"]


def test_a_launcher_given_by_path_passes_the_environment_through_env():
    """MPICH's own Hydra given by path, as another launcher would be: the forced algorithm
    reaches the ranks through env(1)."""
    from liquidsched.execute import find_mpiexec

    hydra = Path(find_mpiexec()).with_name("mpiexec.hydra")
    net = build_topology("crossbar:n=3")
    result = run_exchange(plan(net, all_to_all(net, size_bytes=5000), "round-robin"), ["alltoall-pairwise"],
                          repeats=1, warmup=0, launcher=str(hydra))
    assert result.modes[0].verified is True and result.network == "local"


SLOW_LAUNCHER = """#!{python}
# Measures frames, then hangs in alltoallv with a rank of its own still running.
import json, subprocess, sys, time
job = json.load(open(sys.argv[-1]))
json.dump({{"hosts": [], "modes": {{"frames": {{"times_s": [0.5], "verified": True}}}}, "running": "alltoallv"}},
          open(job["output"], "w"))
rank = subprocess.Popen(["sleep", "300"])
open({pid!r}, "w").write(str(rank.pid))
time.sleep(300)
"""


def slow_launcher(tmp_path) -> tuple[Path, Path]:
    pid, fake = tmp_path / "rank.pid", tmp_path / "slow-mpirun"
    fake.write_text(SLOW_LAUNCHER.format(python=PY, pid=str(pid)))
    fake.chmod(0o755)
    return fake, pid


def test_a_run_past_its_timeout_ends_every_process_and_keeps_what_it_measured(tmp_path):
    from liquidsched.execute import ExchangeFailedError

    fake, pid = slow_launcher(tmp_path)
    net = build_topology("crossbar:n=3")
    with pytest.raises(ExchangeFailedError) as failed:
        run_exchange(plan(net, all_to_all(net, size_bytes=1000), "round-robin"), ["frames", "alltoallv"],
                     repeats=1, warmup=0, timeout_s=2, launcher=str(fake))
    assert str(failed.value) == ("the MPI run failed in mode alltoallv: did not finish within 2 s "
                                 "(frames measured before)")
    assert [m.mode for m in failed.value.partial.modes] == ["frames"]
    assert not running(int(pid.read_text()))  # the launcher's rank was ended with it


def running(pid: int) -> bool:
    """Whether process ``pid`` exists and is not a zombie waiting for a parent to reap it."""
    try:
        status = Path(f"/proc/{pid}/status").read_text()
    except FileNotFoundError:
        return False
    return "\nState:\tZ" not in status


def test_run_timeout_through_the_cli_is_one_line_and_keeps_the_measured_modes(tmp_path, capsys):
    import json

    from liquidsched.cli import main

    fake, _ = slow_launcher(tmp_path)
    report = tmp_path / "r.json"
    assert main(["run", "--topology", "crossbar:n=3", "--traffic", "all-to-all", "--algorithm", "round-robin",
                 "--modes", "frames,alltoallv", "--launcher", str(fake), "--timeout", "1.5",
                 "--output", str(report)]) == 2
    errors = [x for x in capsys.readouterr().err.splitlines() if x.startswith("liquidsched: error:")]
    assert errors == ["liquidsched: error: the MPI run failed in mode alltoallv: did not finish within 1.5 s "
                      "(frames measured before)"]
    assert [m["mode"] for m in json.loads(report.read_text())["modes"]] == ["frames"]


def test_where_ranks_run_is_told_in_one_place_and_memory_is_checked_only_here():
    from liquidsched.execute import HERE_NETWORKS, NETWORKS, check_memory_on, network_kind

    srun = Launcher("srun", "/usr/bin/srun")
    assert network_kind({"h1": "ns1"}, False, []) == network_kind(True, False, ["-f", "hosts"], srun) == "emulated"
    assert network_kind(None, True, ["-f", "hosts"]) == network_kind(False, True, []) == "declared"
    assert network_kind(None, False, ["-f", "hosts"]) == network_kind(None, False, [], srun) == "undeclared"
    assert network_kind(None, False, []) == network_kind(False, False, [], Launcher("path", "/bin/x")) == "local"
    assert set(HERE_NETWORKS) == {"emulated", "local"} <= set(NETWORKS)
    net = build_topology("crossbar:n=3")
    small = exchange_plan(plan(net, all_to_all(net, size_bytes=1000), "round-robin"))
    assert check_memory_on("local", small).total_bytes > 0 and check_memory_on("emulated", small) is not None
    assert check_memory_on("declared", small) is None and check_memory_on("undeclared", small) is None

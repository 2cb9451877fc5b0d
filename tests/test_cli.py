"""The command line: outputs other tools read, and one-line errors with no traceback."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest
import yaml

from liquidsched.cli import main
from .cli_run import run


def test_bound_json(capsys):
    code, out, _ = run(capsys, "bound", "--topology", "two-switch", "--traffic", "half-all-to-all", "--json")
    data = json.loads(out)
    assert code == 0
    assert data["transfers"] == 25 and data["duration"] == 6
    assert data["bottlenecks"] == ["l_ab", "l_ba"]
    assert round(data["liquid_throughput_Bps"] / 1e6, 2) == 416.67


def test_bound_with_allocation(capsys):
    code, out, _ = run(capsys, "bound", "--topology", "swiss-t1", "--alloc", "4,0,4,0,4,0,4,0", "--json")
    assert code == 0 and json.loads(out)["duration"] == 32


def test_plan_then_check(capsys, tmp_path):
    path = tmp_path / "rr.json"
    code, out, _ = run(capsys, "plan", "--topology", "two-switch", "--algorithm", "round-robin",
                       "--output", str(path), "--json")
    summary = json.loads(out)
    assert code == 0
    assert {k: summary[k] for k in ("algorithm", "length", "lower_bound")} == \
        {"algorithm": "round-robin", "length": 7, "lower_bound": 6}
    assert summary["time_s"] >= 0
    code, out, _ = run(capsys, "check", str(path))
    assert code == 0 and "valid, 7 frames" in out


@pytest.mark.parametrize("algorithm", ["liquid", "cpsat"])
def test_plan_exact_algorithms_json_and_plot(capsys, tmp_path, algorithm):
    path, picture = tmp_path / "s.json", tmp_path / "s.png"
    code, out, _ = run(capsys, "plan", "--topology", "two-switch", "--algorithm", algorithm, "--time-limit", "30",
                       "--output", str(path), "--plot", str(picture), "--json")
    summary = json.loads(out)
    assert code == 0
    assert (summary["length"], summary["lower_bound"], summary["liquid"], summary["optimal"], summary["gap"]) == \
        (6, 6, True, True, 0)
    assert summary["nodes_explored"] > 0
    assert picture.read_bytes().startswith(b"\x89PNG")
    code, out, _ = run(capsys, "check", str(path), "--json")
    assert code == 0 and json.loads(out)["valid"] and json.loads(out)["length"] == 6


def test_plan_with_an_exhausted_budget_still_writes_a_valid_schedule(capsys, tmp_path):
    path = tmp_path / "s.json"
    code, out, _ = run(capsys, "plan", "--topology", "swiss-t1", "--algorithm", "liquid", "--node-limit", "3",
                       "--output", str(path))
    assert code == 0 and "budget ran out" in out and "nodes" in out
    assert run(capsys, "check", str(path))[0] == 0


def test_simulate_a_schedule_file_and_an_algorithm(capsys, tmp_path):
    path, picture = tmp_path / "rr.json", tmp_path / "u.png"
    run(capsys, "plan", "--topology", "two-switch", "--algorithm", "round-robin", "--output", str(path))
    code, out, _ = run(capsys, "simulate", "--schedule", str(path), "--model", "circuit", "--json")
    data = json.loads(out)
    assert code == 0 and data["makespan_s"] == pytest.approx(0.07) and data["ratio_to_bound"] == pytest.approx(6 / 7)
    code, out, _ = run(capsys, "simulate", "--topology", "two-switch", "--algorithm", "liquid", "--model", "fluid",
                       "--policy", "frames", "--plot", str(picture), "--json")
    data = json.loads(out)
    assert code == 0 and data["ratio_to_bound"] == pytest.approx(1.0)
    assert set(data) >= {"makespan_s", "throughput_Bps", "ratio_to_bound"}
    assert picture.read_bytes().startswith(b"\x89PNG")


def test_simulate_json_reports_what_the_engine_did_as_the_api_counts_it(capsys, tmp_path):
    # The counts are the engine's own (deterministic), so the CLI's and the API's are equal; the
    # transfers at once set rates, so the update count is not a default of 0 (so few flows run on
    # the reference engine, which keeps no bottleneck groups: its level changes are 0).
    from liquidsched.schedule import Schedule
    from liquidsched.simulate import simulate

    path = tmp_path / "rr.json"
    run(capsys, "plan", "--topology", "two-switch", "--algorithm", "round-robin", "--output", str(path))
    code, out, _ = run(capsys, "simulate", "--schedule", str(path), "--model", "fluid", "--policy", "all-at-once",
                       "--json")
    engine = json.loads(out)["engine"]
    expected = simulate(Schedule.load(path), "fluid", "all-at-once")
    assert code == 0 and engine["rate_updates"] == expected.rate_updates > 0
    assert engine["level_changes"] == expected.level_changes and engine["wall_s"] >= 0


def test_check_lists_violations(capsys, tmp_path):
    path = tmp_path / "rr.json"
    run(capsys, "plan", "--topology", "two-switch", "--output", str(path))
    doc = json.loads(path.read_text())
    doc["frames"][0].pop()
    doc["frames"][1].append({"transfer": "t1->r9", "bytes": 5})
    path.write_text(json.dumps(doc))
    code, _, err = run(capsys, "check", str(path))
    assert code == 1
    assert "transfer t5->r5 is missing" in err and "unknown transfer 't1->r9'" in err


def test_topology_export_and_show(capsys, tmp_path):
    path = tmp_path / "t1.yaml"
    assert run(capsys, "topology", "export", "swiss-t1", "--output", str(path))[0] == 0
    code, out, _ = run(capsys, "topology", "show", str(path), "--json")
    info = json.loads(out)
    assert code == 0 and info["hosts"] == 32 and info["routing"] == "next-hop"
    assert run(capsys, "topology", "list")[0] == 0


def test_slots_through_the_cli(capsys, tmp_path):
    """hierarchical:d1=4,d2=2: show lists the 10-slot uplinks; bound and plan report Λ, the frame
    bound and the schedule's time; the plot shades slots in use."""
    spec = "hierarchical:d1=4,d2=2"
    code, out, _ = run(capsys, "topology", "show", spec, "--json")
    info = json.loads(out)
    assert code == 0 and info["port_rate_Bps"] == 12.5e6
    assert info["slots"] == {"e1>root": 10, "root>e1": 10, "e2>root": 10, "root>e2": 10}
    code, out, _ = run(capsys, "bound", "--topology", spec, "--traffic", "all-to-all", "--json")
    bound = json.loads(out)
    assert (bound["frame_lower_bound"], bound["duration_s"], bound["frame_bound_time_s"], bound["slot_model_gap_s"]) \
        == (7, 0.56, 0.56, 0.0)
    picture = tmp_path / "h.png"
    code, out, _ = run(capsys, "plan", "--topology", spec, "--traffic", "all-to-all", "--algorithm", "liquid",
                       "--plot", str(picture), "--json")
    summary = json.loads(out)
    assert (summary["length"], summary["liquid"], summary["optimal"], summary["time_optimal"]) == (7, True, True, True)
    assert summary["makespan_s"] == pytest.approx(0.56) and summary["ratio_to_bound"] == pytest.approx(1.0)
    assert summary["throughput_Bps"] == pytest.approx(100e6)
    assert picture.read_bytes().startswith(b"\x89PNG")
    code, out, _ = run(capsys, "simulate", "--topology", spec, "--traffic", "all-to-all", "--algorithm", "liquid",
                       "--model", "frames", "--json")
    prediction = json.loads(out)
    assert prediction["ratio_to_bound"] == pytest.approx(1.0) and prediction["frame_lower_bound"] == 7


def test_sweep_writes_classes_and_plot(capsys, tmp_path):
    out_json, png = tmp_path / "c.json", tmp_path / "c.png"
    code, _, _ = run(capsys, "sweep", "--topology", "hierarchical:d1=3,d2=3", "--output", str(out_json),
                     "--plot", str(png))
    classes = json.loads(out_json.read_text())["classes"]
    assert code == 0 and png.read_bytes()[:4] == b"\x89PNG"
    assert set(classes[0]) >= {"hosts", "liquid_throughput_Bps", "count", "allocation"}
    assert sum(c["count"] for c in classes) == 4**3 - 1


MALFORMED = {
    "missing field": ({"nodes": [{"kind": "switch"}]}, "nodes[0]: missing field 'id'"),
    "wrong type": ({"nodes": "h1"}, "nodes: expected a list"),
    "unknown node": ({"hosts": ["h"], "links": [{"src": "h", "dst": "z", "capacity_Bps": 1}]},
                     "links[0].dst: unknown node 'z'"),
    "non-positive capacity": ({"switches": ["s"], "hosts": ["h"], "cables": [{"a": "h", "b": "s", "capacity_Bps": -3}]},
                              "cables[0].capacity_Bps: expected a rate from"),
    "duplicate id": ({"hosts": ["h", "h"]}, "hosts[1].id: duplicate id 'h'"),
    "host without a link": ({"switches": ["s"], "hosts": ["a", "b"], "cables": [{"a": "a", "b": "s", "capacity_Bps": 1}]},
                            "hosts[1]: host b has no link"),
    "routing loop": ({"switches": ["s1", "s2", "s3"], "hosts": ["a", "b"],
                      "cables": [{"a": "a", "b": "s1"}, {"a": "b", "b": "s3"}, {"a": "s1", "b": "s2"}, {"a": "s2", "b": "s3"}],
                      "defaults": {"capacity_Bps": 1},
                      "routing": {"policy": "next-hop", "table": {"s1": {"s3": "s2"}, "s2": {"s3": "s1"}}}},
                     "loops: s1 → s2 → s1"),
}


@pytest.mark.parametrize("case", MALFORMED)
def test_malformed_topology_through_the_cli(case, capsys, tmp_path):
    doc, expected = MALFORMED[case]
    path = tmp_path / "bad.yaml"
    path.write_text(yaml.safe_dump(doc))
    code, out, err = run(capsys, "bound", "--topology", str(path))
    lines = err.strip().splitlines()
    assert code == 2 and out == ""
    assert len(lines) == 1 and lines[0].startswith(f"liquidsched: error: {path}: ")
    assert expected in lines[0]


@pytest.mark.parametrize("argv,expected", [
    (["bound", "--topology", "nowhere"], "unknown topology 'nowhere'"),
    (["bound", "--topology", "fat-tree:k=3"], "k must be even"),
    (["bound", "--topology", "swiss-t1", "--alloc", "9,0,0,0,0,0,0,0"], "switch s1 has 4 hosts, asked for 9"),
    (["bound", "--topology", "two-switch", "--traffic", "gossip"], "unknown traffic 'gossip'"),
    (["check", "/nonexistent/s.json"], "/nonexistent/s.json: no such file"),
    (["plan", "--topology", "two-switch", "--output", "/nonexistent/dir/s.json"], "does not exist"),
    (["plan", "--topology", "two-switch", "--algorithm", "dsatur", "--time-limit", "1"],
     "--time-limit applies to --algorithm liquid or cpsat, not dsatur"),
    (["plan", "--topology", "two-switch", "--algorithm", "liquid", "--time-limit", "-1"],
     "--time-limit: expected a duration from 0"),
    (["simulate", "--topology", "two-switch"], "give --schedule FILE, or --topology and --algorithm"),
    (["simulate", "--topology", "two-switch", "--algorithm", "dsatur", "--overhead", "-1"], "--overhead: expected a duration from 0"),
    (["run", "--topology", "two-switch", "--algorithm", "round-robin", "--launcher", "/nonexistent/mpirun"],
     "launcher /nonexistent/mpirun: no such file"),
    (["run", "--topology", "two-switch", "--algorithm", "round-robin", "--launcher", "srun", "--emulate"],
     "--launcher srun with --emulate or --prefix: srun starts ranks on the allocation's nodes"),
    (["calibrate", "--topology", "two-switch", "--launcher", "/nonexistent/mpirun"],
     "launcher /nonexistent/mpirun: no such file"),
    (["steady", "scatter", "--topology", "star:n=3", "--run", "--launcher", "srun", "--prefix", "x"],
     "--launcher srun with --emulate or --prefix"),
])
def test_user_errors_are_one_line(capsys, argv, expected):
    try:
        code = main(argv)
    except SystemExit as e:  # argparse-level errors exit directly
        code = e.code
    err = capsys.readouterr().err
    assert code == 2
    assert err.count("\n") == 1 and expected in err and "Traceback" not in err


def test_entry_point_prints_no_traceback(tmp_path):
    bad = tmp_path / "bad.json"
    bad.write_text("{not json")
    p = subprocess.run([sys.executable, "-m", "liquidsched.cli", "check", str(bad)], capture_output=True, text=True)
    assert p.returncode == 2
    assert "Traceback" not in p.stderr and "not valid JSON" in p.stderr


def test_no_half_written_output(tmp_path, capsys):
    # A schedule that cannot be built leaves no file behind.
    target = tmp_path / "s.json"
    code, _, _ = run(capsys, "plan", "--topology", "two-switch", "--traffic", "scatter:root=r1", "--output", str(target))
    assert code == 2 and not target.exists() and list(tmp_path.iterdir()) == []


def test_bound_fractional_on_a_five_cycle_of_conflicts(capsys, tmp_path):
    """Five hosts on one switch by shared-duplex cables, h0 → h1 → … → h0 of 1 MB at 1 MB/s:
    Λ = 2 s (two transfers per cable) but the fractional optimum of frames is 5/2 s."""
    hosts = [f"h{i}" for i in range(5)]
    topology = tmp_path / "star.yaml"
    topology.write_text(yaml.safe_dump({
        "name": "shared-cable star", "switches": ["s"], "hosts": hosts,
        "cables": [{"a": h, "b": "s", "capacity_Bps": "1MB/s", "shared_duplex": True} for h in hosts]}))
    traffic = tmp_path / "cycle.csv"
    traffic.write_text("src,dst,size_bytes\n" + "".join(f"h{i},h{(i + 1) % 5},1MB\n" for i in range(5)))
    code, out, _ = run(capsys, "bound", "--topology", str(topology), "--traffic", str(traffic), "--fractional", "--json")
    data = json.loads(out)
    assert code == 0
    assert data["duration_s"] == 2 and data["fractional_frame_optimum_s"] == pytest.approx(2.5, rel=1e-9)
    code, out, _ = run(capsys, "bound", "--topology", str(topology), "--traffic", str(traffic), "--fractional")
    assert code == 0 and "2500.000 ms (1.2500 × Λ)" in out


@pytest.mark.parametrize("value", ["0", "-5", "soon", "inf"])
def test_a_timeout_is_a_positive_duration(capsys, value):
    with pytest.raises(SystemExit) as refused:
        main(["run", "--topology", "two-switch", "--algorithm", "round-robin", "--timeout", value])
    assert refused.value.code == 2
    err = capsys.readouterr().err
    assert "--timeout: expected a duration" in err and f"got '{value}'" in err


# -- host files -------------------------------------------------------------------------------------

TWO_SWITCH_RANKS = ["t1", "t2", "t3", "t4", "t5", "r1", "r2", "r3", "r4", "r5"]


@pytest.mark.parametrize("fmt,line", [("hydra", "{}:1"), ("openmpi", "{} slots=1"), ("slurm", "{}")])
def test_hostfile_of_two_switch_in_each_format(capsys, tmp_path, fmt, line):
    """Every host of the half all-to-all, senders first as the network lists them."""
    path = tmp_path / "hosts"
    code, out, err = run(capsys, "hostfile", "--topology", "two-switch", "--format", fmt, "--output", str(path))
    assert code == 0 and out == ""
    assert path.read_text() == "".join(line.format(h) + "\n" for h in TWO_SWITCH_RANKS)
    assert "10 ranks" in err and str(path) in err


def test_hostfile_of_a_traffic_with_some_hosts_and_a_machine_map(capsys, tmp_path):
    """Only the hosts the traffic uses get ranks, in network order (not the file's order); the
    map renames two of them, the others keep their names."""
    traffic, names = tmp_path / "some.csv", tmp_path / "machines.txt"
    traffic.write_text("src,dst,size_bytes\nt5,r1,1000\nt2,r4,1000\n")
    names.write_text("# liquidsched host, machine\nt2 node07\n\nr4   node01  # rack 2\nr5 node09\n")
    expected = {"hydra": "node07:1\nt5:1\nr1:1\nnode01:1\n", "openmpi": "node07 slots=1\nt5 slots=1\nr1 slots=1\n"
                "node01 slots=1\n", "slurm": "node07\nt5\nr1\nnode01\n"}
    for fmt, text in expected.items():
        code, out, _ = run(capsys, "hostfile", "--topology", "two-switch", "--traffic", str(traffic), "--map",
                           str(names), "--format", fmt)
        assert code == 0 and out == text
    code, out, _ = run(capsys, "hostfile", "--topology", "two-switch", "--traffic", str(traffic), "--output",
                       str(tmp_path / "h"), "--json")
    assert code == 0 and [r["host"] for r in json.loads(out)["ranks"]] == ["t2", "t5", "r1", "r4"]


@pytest.mark.parametrize("content,fmt,expected", [
    ("t2 node07 extra\n", "hydra", "machines.txt:1: expected 'HOST MACHINE', got 't2 node07 extra'"),
    ("\nq9 node07\n", "hydra", "machines.txt:2: 'q9' is not a host of the network"),
    ("t2 a\nt2 b\n", "hydra", "machines.txt:2: host 't2' is mapped twice (first on line 1)"),
    ("t2 same\nt5 same\n", "openmpi", "machine same has more than one rank: Open MPI merges repeated machines"),
])
def test_hostfile_refuses_a_bad_map_in_one_line(capsys, tmp_path, content, fmt, expected):
    names, target = tmp_path / "machines.txt", tmp_path / "hosts"
    names.write_text(content)
    code, out, err = run(capsys, "hostfile", "--topology", "two-switch", "--map", str(names), "--format", fmt,
                         "--output", str(target))
    assert code == 2 and out == "" and err.count("\n") == 1 and expected in err
    assert not target.exists()

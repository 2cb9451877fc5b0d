"""Strict input: duplicate keys, ragged rows, empty frames, sizes that are not exact whole numbers
of bytes, options that do not apply; each a one-line error naming the file and the place. And
defaults that say what they do."""

from __future__ import annotations

import json

import pytest

from liquidsched import SCHEDULERS, Traffic, TrafficError, build_topology, plan
from liquidsched.io.topology import topology_to_dict
from liquidsched.traffic import load_traffic
from liquidsched.units import MAX_SIZE_BYTES, parse_size
from .cli_run import run

PLAN = ["plan", "--topology", "two-switch", "--algorithm", "round-robin"]


def one_line_error(code, err, *expected):
    assert code == 2, err
    assert err.count("\n") == 1 and "Traceback" not in err, err
    for text in expected:
        assert text in err, err


def schedule_doc(tmp_path, capsys) -> dict:
    path = tmp_path / "rr.json"
    assert run(capsys, *PLAN, "--output", str(path))[0] == 0
    return json.loads(path.read_text())


# -- duplicate keys -------------------------------------------------------------------------------

def test_duplicate_keys_in_yaml_and_json_are_refused_with_file_and_line(capsys, tmp_path):
    net = tmp_path / "net.yaml"
    net.write_text("name: a\nname: b\nnodes: []\nlinks: []\n")
    code, _, err = run(capsys, "bound", "--topology", str(net))
    one_line_error(code, err, "net.yaml", "'name' appears twice", "line 2")
    traffic = tmp_path / "t.json"
    traffic.write_text('{"transfers": [{"src": "t1", "dst": "r4", "size_bytes": 1, "size_bytes": 2}]}')
    code, _, err = run(capsys, "bound", "--topology", "two-switch", "--traffic", str(traffic))
    one_line_error(code, err, "t.json", "'size_bytes' appears twice")


def test_a_duplicate_key_deep_in_a_schedule_is_refused(capsys, tmp_path):
    text = json.dumps(schedule_doc(tmp_path, capsys))
    bad = tmp_path / "bad.json"
    bad.write_text(text.replace('"bytes": 1000000}', '"bytes": 1000000, "bytes": 5}', 1))
    code, _, err = run(capsys, "check", str(bad))
    one_line_error(code, err, "bad.json", "'bytes' appears twice")


# -- CSV ------------------------------------------------------------------------------------------

def test_a_ragged_matrix_row_is_refused(capsys, tmp_path):
    path = tmp_path / "m.csv"
    path.write_text(",r4,r5\nt1,1MB,1MB\nt2,1MB\n")
    code, _, err = run(capsys, "bound", "--topology", "two-switch", "--traffic", str(path))
    one_line_error(code, err, "m.csv: line 3", "1 sizes but 2 receivers")


def test_a_row_with_extra_columns_is_refused(tmp_path):
    path = tmp_path / "rows.csv"
    path.write_text("src,dst,size_bytes\nt1,r4,1000,7\n")
    with pytest.raises(TrafficError, match="rows.csv: line 2: expected 3 columns"):
        load_traffic(path)


def test_csv_sizes_take_the_units_size_takes(tmp_path):
    path = tmp_path / "m.csv"
    path.write_text(",r4,r5\nt1,1MB,64KiB\nt2,0,1.5MB\n")
    assert [(t.src, t.dst, t.size_bytes) for t in load_traffic(path)] == \
        [("t1", "r4", 1_000_000), ("t1", "r5", 65_536), ("t2", "r5", 1_500_000)]


# -- sizes ----------------------------------------------------------------------------------------

@pytest.mark.parametrize("text", ["1.5", "0.0005KB", "1e30", str(10**32), "0", "-3", "1.5B", "nan", "infMB"])
def test_sizes_that_are_not_exact_bytes_in_range_are_refused(text):
    with pytest.raises(ValueError):
        parse_size(text)


@pytest.mark.parametrize("text,exact", [("1e6", 10**6), ("1.5MB", 1_500_000), ("64KiB", 65536),
                                        (str(MAX_SIZE_BYTES), MAX_SIZE_BYTES), ("7", 7)])
def test_sizes_written_any_way_are_exact(text, exact):
    assert parse_size(text) == exact


@pytest.mark.parametrize("size", [10**32, 1e30, 1.5, "1.5", True])
def test_a_traffic_file_with_a_bad_size_names_the_transfer(tmp_path, size):
    path = tmp_path / "t.json"
    path.write_text(json.dumps({"transfers": [{"src": "t1", "dst": "r4", "size_bytes": 1},
                                              {"src": "t2", "dst": "r5", "size_bytes": size}]}))
    with pytest.raises(TrafficError, match=r"t\.json: transfers\[1\]\.size_bytes"):
        load_traffic(path)


def test_the_size_option_refuses_what_files_refuse(capsys):
    for text in ("1e30", "1.5", str(10**32)):
        code, _, err = run(capsys, "bound", "--topology", "two-switch", "--size", text)
        assert code == 2 and "--size" in err and "Traceback" not in err


def test_a_huge_size_from_python_is_a_traffic_error():
    net = build_topology("two-switch")
    from liquidsched import Transfer

    with pytest.raises(TrafficError, match="size_bytes"):
        plan(net, Traffic([Transfer("t1", "r4", 10**32)]), "round-robin")


@pytest.mark.parametrize("algorithm", list(SCHEDULERS))
def test_an_empty_traffic_is_the_same_error_for_every_algorithm(algorithm):
    with pytest.raises(TrafficError, match="no transfer"):
        plan(build_topology("two-switch"), Traffic([]), algorithm)


# -- schedules ------------------------------------------------------------------------------------

def test_check_rejects_an_empty_frame(capsys, tmp_path):
    doc = schedule_doc(tmp_path, capsys)
    doc["frames"].insert(1, [])
    path = tmp_path / "empty.json"
    path.write_text(json.dumps(doc))
    code, _, err = run(capsys, "check", str(path))
    assert code == 1 and "frame 2 is empty" in err


def test_a_schedule_error_names_the_file(capsys, tmp_path):
    doc = schedule_doc(tmp_path, capsys)
    del doc["network"]
    path = tmp_path / "s.json"
    path.write_text(json.dumps(doc))
    code, _, err = run(capsys, "check", str(path))
    one_line_error(code, err, "s.json: missing field 'network'")


def test_frames_are_numbered_from_one_in_file_errors(capsys, tmp_path):
    doc = schedule_doc(tmp_path, capsys)
    doc["frames"][0][0]["bytes"] = "many"
    path = tmp_path / "s.json"
    path.write_text(json.dumps(doc))
    code, _, err = run(capsys, "check", str(path))
    one_line_error(code, err, "s.json: frame 1, piece 1.bytes")


@pytest.mark.parametrize("kind,doc", [
    ("a topology file", topology_to_dict(build_topology("two-switch"))),
    ("a traffic file", {"transfers": [{"src": "t1", "dst": "r4", "size_bytes": 1}]}),
])
def test_check_of_another_kind_of_file_says_so(capsys, tmp_path, kind, doc):
    path = tmp_path / "x.json"
    path.write_text(json.dumps(doc))
    code, _, err = run(capsys, "check", str(path))
    one_line_error(code, err, f"x.json: not a schedule file: it looks like {kind}")


# -- options that do not apply --------------------------------------------------------------------

@pytest.mark.parametrize("argv,expected", [
    (["plan", "--topology", "two-switch", "--algorithm", "liquid", "--seed", "3"],
     "--seed applies to --algorithm random, not liquid"),
    (["plan", "--topology", "two-switch", "--seed", "3"], "--seed applies to --algorithm random, not round-robin"),
    (["simulate", "--topology", "two-switch", "--algorithm", "dsatur", "--model", "frames", "--policy", "per-sender"],
     "--policy applies to --model fluid, not frames"),
    (["simulate", "--topology", "two-switch", "--algorithm", "dsatur", "--model", "circuit", "--overhead", "0.001"],
     "--overhead (β per frame) applies to --model frames"),
    (["simulate", "--topology", "two-switch", "--algorithm", "dsatur", "--policy", "all-at-once", "--overhead", "1"],
     "not to fluid --policy all-at-once"),
    (["bound", "--topology", "two-switch", "--traffic", "t.csv", "--size", "1MB"], "--size applies to a generated"),
    (["run", "--topology", "two-switch", "--algorithm", "dsatur", "--modes", "frames,frames"],
     "mode 'frames' given twice"),
])
def test_options_that_do_not_apply_are_refused(capsys, argv, expected):
    code, _, err = run(capsys, *argv)
    assert code == 2 and expected in err and "Traceback" not in err, err


def test_options_given_with_a_schedule_file_are_refused(capsys, tmp_path):
    path = tmp_path / "rr.json"
    assert run(capsys, *PLAN, "--output", str(path))[0] == 0
    code, _, err = run(capsys, "simulate", "--schedule", str(path), "--traffic", "all-to-all", "--seed", "1")
    one_line_error(code, err, "--traffic, --seed cannot be given with it")


# -- defaults that say what they do ---------------------------------------------------------------

def test_simulate_follows_the_schedule_by_default(capsys, tmp_path):
    ratios = {}
    for algorithm in ("round-robin", "liquid"):
        path = tmp_path / f"{algorithm}.json"
        assert run(capsys, "plan", "--topology", "two-switch", "--algorithm", algorithm, "--output", str(path))[0] == 0
        code, out, _ = run(capsys, "simulate", "--schedule", str(path), "--json")
        ratios[algorithm] = json.loads(out)["ratio_to_bound"]
        assert code == 0 and json.loads(out)["model"] == "frames"
    # 7 frames for a bound of 6 against a liquid schedule of 6 (paper 000 Fig. 2).
    assert ratios == {"round-robin": pytest.approx(6 / 7), "liquid": pytest.approx(1.0)}


def test_plan_says_which_algorithm_it_used(capsys):
    code, out, _ = run(capsys, "plan", "--topology", "two-switch")
    assert code == 0 and "round-robin (the default" in out
    code, out, _ = run(capsys, "plan", "--topology", "two-switch", "--json")
    data = json.loads(out)
    assert data["algorithm"] == "round-robin" and data["algorithm_defaulted"] is True

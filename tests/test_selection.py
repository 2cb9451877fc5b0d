"""Selection tables: what tune measures, what run and the mpi4py API choose from them, and the
tables refused because they were measured elsewhere."""

from __future__ import annotations

import json

import pytest

from liquidsched import build_topology
from liquidsched.cli import main
from liquidsched.errors import InputError
from liquidsched.execute.selection import (FORMAT, SelectionTable, best_mode, measured_on, network_fingerprint,
                                           selection_from_environment)


def table(ranks: int = 3, topology: str = "crossbar:n=3", rows: list | None = None) -> SelectionTable:
    net = build_topology(topology)
    about = measured_on(net, net.hosts()[:ranks], "MPICH Version: 5.0.2\nmore", "emulated", "deep")
    rows = rows or [
        {"size_bytes": 1024, "best": "alltoallv", "modes": {"alltoallv": {"median_s": 1e-5}, "paced": {"median_s": 1e-3}}},
        {"size_bytes": 1 << 20, "best": "paced", "modes": {"alltoallv": {"median_s": 2.0}, "paced": {"median_s": 1.5}}},
    ]
    return SelectionTable(about, rows)


def test_the_library_is_kept_unless_a_schedule_beats_it_by_more_than_the_margin():
    assert best_mode({"alltoallv": 1.0, "alltoall-brucks": 0.999, "paced": 0.995}) == "alltoall-brucks"
    assert best_mode({"alltoallv": 1.0, "paced": 0.98}) == "paced"
    assert best_mode({"alltoallv": 1.0, "paced": 0.98}, margin=0.05) == "alltoallv"
    with pytest.raises(InputError):
        best_mode({})


def test_the_nearest_measured_size_on_a_log_scale_decides():
    t = table()
    assert t.choose(1024).mode == "alltoallv" and "1024 bytes" in t.choose(1024).reason
    assert t.choose(30_000).mode == "alltoallv"  # nearer 1 KiB than 1 MiB on a log scale
    assert t.choose(40_000).mode == "paced"
    assert t.choose(0).mode == "alltoallv" and t.choose(10**12).mode == "paced"


def test_halfway_between_two_sizes_the_library_is_kept_if_either_chose_it():
    # The interposition library's rule (crates/capi/src/selection.rs): at a tie on the log scale
    # the library's own collective wins, whichever of the two sizes chose it; else the smaller.
    rows = [{"size_bytes": 1024, "best": "paced"}, {"size_bytes": 4096, "best": "alltoallv"}]
    assert SelectionTable({}, rows).choose(2048).mode == "alltoallv"
    assert SelectionTable({}, rows[::-1]).choose(2048).mode == "alltoallv"
    assert SelectionTable({}, [rows[0], dict(rows[1], best="frames")]).choose(2048).mode == "paced"
    assert SelectionTable({}, rows).choose(2047).mode == "paced"


def test_below_the_smallest_measured_size_the_library_runs_even_where_a_schedule_won_there():
    # Paced beat the library at 1 KiB; nothing was measured below, where a schedule's fixed
    # costs weigh most: the library's fastest own mode measured at 1 KiB runs.
    rows = [{"size_bytes": 1024, "best": "paced", "modes": {
        "paced": {"median_s": 1e-3}, "alltoallv": {"median_s": 3e-3}, "alltoall-brucks": {"median_s": 2e-3}}},
            {"size_bytes": 4096, "best": "paced", "modes": {"paced": {"median_s": 2e-3}}}]
    t = SelectionTable({}, rows)
    assert t.choose(1024).mode == "paced"
    for below in (0, 1, 1023):
        choice = t.choose(below)
        assert (choice.mode, choice.measured_size_bytes) == ("alltoall-brucks", 1024)
        assert "below the smallest measured size" in choice.reason
    # No library mode measured there: nothing better is known than the row itself.
    assert SelectionTable({}, rows[1:]).choose(1).mode == "paced"


def test_a_table_measured_elsewhere_is_refused_with_what_differs():
    t = table()
    fingerprint = network_fingerprint(build_topology("crossbar:n=3"))
    t.check(3, fingerprint, "MPICH Version: 5.0.2\nother build")
    with pytest.raises(InputError, match="3 ranks, not 4"):
        t.check(4, fingerprint)
    with pytest.raises(InputError, match="another network"):
        t.check(3, network_fingerprint(build_topology("crossbar:n=3,capacity_Bps=1MB/s")))
    with pytest.raises(InputError, match="Open MPI"):
        t.check(3, fingerprint, "Open MPI v5.0.3")


def test_tables_round_trip_and_bad_files_get_one_line(tmp_path):
    path = tmp_path / "t.json"
    path.write_text(json.dumps(table().to_dict()))
    assert SelectionTable.load(path).choose(1 << 20).mode == "paced"
    assert selection_from_environment({"LIQUIDSCHED_SELECTION": str(path)}).measured_on["ranks"] == 3
    assert selection_from_environment({"LIQUIDSCHED_SELECTION": " "}) is None
    for text, message in (("{", "not valid JSON"), ('{"format": "x"}', FORMAT),
                          (json.dumps({"format": FORMAT, "measured_on": {"ranks": 3}, "sizes": []}), "non-empty"),
                          (json.dumps({"format": FORMAT, "measured_on": {"ranks": 3},
                                       "sizes": [{"size_bytes": 1, "modes": {}, "best": "paced"}]}), "best")):
        path.write_text(text)
        with pytest.raises(InputError, match=message):
            SelectionTable.load(path)


def test_tune_writes_a_table_that_run_chooses_from(tmp_path, capsys):
    path = tmp_path / "sel.json"
    status = main(["tune", "--topology", "crossbar:n=3", "--traffic", "all-to-all", "--algorithm", "liquid",
                   "--sizes", "1KiB,32KiB", "--repeats", "1", "--warmup", "0", "--modes",
                   "frames,paced,alltoallv,alltoall", "--output", str(path)])
    assert status == 0
    doc = json.loads(path.read_text())
    assert doc["format"] == FORMAT and doc["measured_on"]["ranks"] == 3
    assert [r["size_bytes"] for r in doc["sizes"]] == [1024, 32768]
    for row in doc["sizes"]:
        assert set(row["modes"]) == {"frames", "paced", "alltoallv", "alltoall"}
        assert row["best"] == best_mode({m: v["median_s"] for m, v in row["modes"].items()})
    capsys.readouterr()
    assert main(["run", "--topology", "crossbar:n=3", "--traffic", "all-to-all", "--size", "1KiB", "--algorithm",
                 "liquid", "--selection", str(path), "--repeats", "1", "--json"]) == 0
    captured = capsys.readouterr()
    ran = [m["mode"] for m in json.loads(captured.out)["modes"]]
    assert ran == [doc["sizes"][0]["best"]] and "selected by" in captured.err
    # Another number of ranks, --modes beside --selection: one line each, nothing run.
    assert main(["run", "--topology", "crossbar:n=4", "--traffic", "all-to-all", "--algorithm", "liquid",
                 "--selection", str(path)]) == 2
    assert "3 ranks, not 4" in capsys.readouterr().err
    assert main(["run", "--topology", "crossbar:n=3", "--algorithm", "liquid", "--selection", str(path),
                 "--modes", "paced"]) == 2

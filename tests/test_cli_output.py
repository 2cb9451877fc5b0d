"""Where the commands write: one writer for every output, paths refused before any work, devices,
FIFOs and symlinks never replaced, plot formats by extension, a closed pipe ends quietly."""

from __future__ import annotations

import json
import os
import stat
import subprocess
import sys
import threading
from pathlib import Path

import pytest

from liquidsched.cli import EXIT_CLOSED_PIPE
from liquidsched.errors import InputError
from liquidsched.io.output import check_output, write_output
from .cli_run import one_line_error, run

PLAN = ["plan", "--topology", "two-switch", "--algorithm", "round-robin"]
root_only = pytest.mark.skipif(os.geteuid() != 0, reason="as root, permission bits do not stop a write")


def schedule_file(tmp_path: Path, capsys) -> Path:
    path = tmp_path / "rr.json"
    assert run(capsys, *PLAN, "--output", str(path))[0] == 0
    return path


# -- bad paths, for every command that writes ----------------------------------------------------

def commands_writing(target: str, tmp_path: Path, capsys) -> list[list[str]]:
    schedule = str(schedule_file(tmp_path, capsys))
    return [
        [*PLAN, "--output", target],
        [*PLAN, "--plot", target + ".png"],
        ["topology", "export", "two-switch", "--output", target],
        ["sweep", "--topology", "two-switch", "--output", target],
        ["sweep", "--topology", "two-switch", "--output", str(tmp_path / "ok.json"), "--plot", target + ".png"],
        ["simulate", "--schedule", schedule, "--plot", target + ".png"],
        # run checks its output before it starts MPI: the error comes at once.
        ["run", "--schedule", schedule, "--output", target],
    ]


@pytest.mark.parametrize("bad,expected", [
    ("/proc/x.json", "cannot write"),
    ("/nonexistent-dir/x.json", "does not exist"),
])
def test_an_unwritable_output_is_one_line_for_every_command(capsys, tmp_path, bad, expected):
    for argv in commands_writing(bad, tmp_path, capsys):
        code, _, err = run(capsys, *argv)
        one_line_error(code, err, expected)


def test_an_existing_directory_and_a_path_under_a_file_are_refused(capsys, tmp_path):
    code, _, err = run(capsys, *PLAN, "--output", str(tmp_path))
    one_line_error(code, err, "is a directory")
    a_file = tmp_path / "f"
    a_file.write_text("x")
    code, _, err = run(capsys, *PLAN, "--output", str(a_file / "s.json"))
    one_line_error(code, err, "not a directory")
    assert a_file.read_text() == "x"


def test_nothing_is_written_when_a_second_output_is_bad(capsys, tmp_path):
    ok = tmp_path / "ok.json"
    code, _, err = run(capsys, *PLAN, "--output", str(ok), "--plot", "/proc/x.png")
    one_line_error(code, err, "/proc/x.png")
    assert not ok.exists()
    assert list(tmp_path.iterdir()) == []  # no temporary file left either


@root_only
def test_a_device_is_written_in_place_never_replaced(capsys):
    code, _, err = run(capsys, *PLAN, "--output", "/dev/full")
    one_line_error(code, err, "/dev/full", "No space left")
    assert stat.S_ISCHR(os.stat("/dev/full").st_mode)
    assert run(capsys, *PLAN, "--output", "/dev/null")[0] == 0
    assert stat.S_ISCHR(os.stat("/dev/null").st_mode)


def test_a_fifo_is_written_in_place(capsys, tmp_path):
    fifo = tmp_path / "pipe.json"
    os.mkfifo(fifo)
    got: list[bytes] = []
    reader = threading.Thread(target=lambda: got.append(fifo.read_bytes()))
    reader.start()
    code = run(capsys, *PLAN, "--output", str(fifo))[0]
    reader.join(timeout=30)
    assert code == 0 and stat.S_ISFIFO(os.stat(fifo).st_mode)
    assert json.loads(got[0])["format"] == "liquidsched-schedule"


def test_a_symlink_is_followed_and_stays_a_link(capsys, tmp_path):
    target = tmp_path / "real.json"
    target.write_text("old")
    link = tmp_path / "link.json"
    link.symlink_to(target)
    assert run(capsys, *PLAN, "--output", str(link))[0] == 0
    assert link.is_symlink() and json.loads(target.read_text())["format"] == "liquidsched-schedule"


def test_dash_is_standard_output(capsys):
    code, out, err = run(capsys, *PLAN, "--output", "-")
    assert code == 0 and json.loads(out)["format"] == "liquidsched-schedule"
    assert "frames" in err  # the summary table goes to standard error, out of the way
    code, _, err = run(capsys, *PLAN, "--output", "-", "--json")
    one_line_error(code, err, "standard output")


def test_a_file_is_replaced_whole_with_the_mode_of_a_new_file(tmp_path):
    path = tmp_path / "f.txt"
    write_output(path, "one")
    write_output(path, "two")
    assert path.read_text() == "two" and [p.name for p in tmp_path.iterdir()] == ["f.txt"]
    umask = os.umask(0)
    os.umask(umask)
    assert stat.S_IMODE(os.stat(path).st_mode) == 0o666 & ~umask


def test_check_output_refuses_before_any_work(tmp_path):
    with pytest.raises(InputError, match="is a directory"):
        check_output(tmp_path)
    check_output(tmp_path / "new.json")
    assert list(tmp_path.iterdir()) == []  # the probe file is gone


# -- plot formats ---------------------------------------------------------------------------------

@pytest.mark.parametrize("suffix,magic", [(".png", b"\x89PNG"), (".pdf", b"%PDF"), (".svg", b"<?xml")])
def test_plot_format_follows_the_extension(capsys, tmp_path, suffix, magic):
    picture = tmp_path / f"s{suffix}"
    assert run(capsys, *PLAN, "--plot", str(picture))[0] == 0
    assert picture.read_bytes().startswith(magic)


@pytest.mark.parametrize("name", ["s.jpg", "s"])
def test_an_unknown_plot_format_is_refused_before_work(capsys, tmp_path, name):
    code, _, err = run(capsys, *PLAN, "--plot", str(tmp_path / name))
    one_line_error(code, err, "png, pdf, svg")
    assert list(tmp_path.iterdir()) == []


# -- a reader that goes away ----------------------------------------------------------------------

@pytest.mark.parametrize("argv", [["topology", "show", "two-switch", "--json"],
                                  ["topology", "export", "two-switch", "--output", "-"],
                                  ["bound", "--topology", "two-switch"]])
def test_a_closed_pipe_ends_quietly(argv):
    # The reader is gone before the command writes, as after `| head -1` read its line.
    read_end, write_end = os.pipe()
    os.close(read_end)
    p = subprocess.run([sys.executable, "-m", "liquidsched.cli", *argv], stdout=write_end,
                       stderr=subprocess.PIPE, text=True, timeout=120)
    os.close(write_end)
    assert p.stderr == "" and p.returncode == EXIT_CLOSED_PIPE


@pytest.mark.parametrize("argv,unwanted", [
    (["--help"], ("numpy", "ortools", "matplotlib", "mpi4py", "liquidsched._core")),
    (["plan", "--help"], ("ortools", "matplotlib", "mpi4py")),
    (["topology", "list"], ("numpy", "ortools", "matplotlib", "mpi4py", "liquidsched._core")),
])
def test_help_loads_no_heavy_module(argv, unwanted):
    """Commands import only what they use (the start-up time itself is measured, not asserted)."""
    probe = ("import sys; from liquidsched.cli import main\n"
             f"try: main({argv!r})\n"
             "except SystemExit: pass\n"
             f"print(sorted(m for m in {unwanted!r} if m in sys.modules))")
    out = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, check=True).stdout
    assert out.strip().splitlines()[-1] == "[]"

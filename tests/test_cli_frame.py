"""The frame every command runs in: Ctrl-C at any moment, options the parser refuses, a reader
that goes away, output paths that are links or empty, tables that never cut a number, and a
start-up that loads only what the command needs."""

from __future__ import annotations

import os
import re
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from rich.console import Console
from rich.table import Table

from liquidsched.cli import EXIT_CLOSED_PIPE, EXIT_INTERRUPTED, build_parser, main
from liquidsched.cli.common import fold_cells
from .cli_run import run

#: The console script beside this interpreter, as a user runs it.
LIQUIDSCHED = str(Path(sys.executable).with_name("liquidsched"))


# -- Ctrl-C ---------------------------------------------------------------------------------------

def interrupt_after_start(argv: list[str], delay_s: float) -> tuple[int, str]:
    """Start the console script, wait until Python has loaded the entry module (the import-time
    report names it: before that moment the interpreter's own start-up runs, which no package
    can change), then ``delay_s`` more, and send SIGINT. Exit status and standard error."""
    env = os.environ | {"PYTHONPROFILEIMPORTTIME": "1"}
    p = subprocess.Popen([LIQUIDSCHED, *argv], stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True, env=env)
    seen = []
    for line in p.stderr:
        seen.append(line)
        if line.rstrip().endswith("| liquidsched.cli"):
            break
    time.sleep(delay_s)
    p.send_signal(signal.SIGINT)
    rest = p.stderr.read()
    p.wait(timeout=120)
    return p.returncode, "".join(seen) + rest


def test_ctrl_c_at_any_early_moment_ends_with_one_line_and_no_traceback():
    """While the command's modules load (numpy, rich, the core), builds the network and the
    traffic, or computes: status 130 and one line, 'liquidsched: interrupted'."""
    # Enough work that the signal comes before the end (a finished command exits 0, allowed).
    argv = ["bound", "--topology", "fat-tree:k=16", "--traffic", "all-to-all"]
    statuses = []
    for delay_s in (0, 0.01, 0.02, 0.05, 0.1, 0.2, 0.3) * 2:
        status, err = interrupt_after_start(argv, delay_s)
        statuses.append(status)
        assert "Traceback" not in err and "KeyboardInterrupt" not in err, (delay_s, err[-2000:])
        # Before main runs, the signal's default: killed by it, quietly (the shell says 130).
        assert status in (EXIT_INTERRUPTED, -signal.SIGINT, 0), (delay_s, status, err[-2000:])
        said = [line for line in err.splitlines() if not line.startswith("import time:")]
        assert said == (["liquidsched: interrupted"] if status == EXIT_INTERRUPTED else []), (delay_s, said)
    assert EXIT_INTERRUPTED in statuses


def test_ctrl_c_while_a_class_is_created_is_an_interrupt_not_a_bug(monkeypatch, capsys):
    """Ctrl-C in a descriptor's ``__set_name__`` (as when it comes while ``ipaddress`` loads):
    Python 3.11 raises it as the cause of a RuntimeError, which is still the user's Ctrl-C."""
    import liquidsched.cli as cli

    class Interrupted:
        def __set_name__(self, owner, name):
            raise KeyboardInterrupt

    def command(argv):
        class Owner:
            attribute = Interrupted()
        return 0

    monkeypatch.setattr(cli, "_command", command)
    assert main(["bound"]) == EXIT_INTERRUPTED
    assert capsys.readouterr().err.splitlines() == ["liquidsched: interrupted"]


def test_an_interrupt_python_had_to_drop_is_raised_again_outside_the_hook():
    """The unraisable-exception hook of a command gives a dropped Ctrl-C back as a
    KeyboardInterrupt in ordinary code, not in the hook (where Python would print it as
    "Exception ignored" with a traceback); other unraisable exceptions go to the hook before."""
    from types import SimpleNamespace

    from liquidsched.cli import _interrupt_again

    passed_on = []
    hook = _interrupt_again(passed_on.append)
    other = SimpleNamespace(exc_value=ValueError("x"))
    hook(other)
    assert passed_on == [other]
    try:
        hook(SimpleNamespace(exc_value=KeyboardInterrupt()))  # returns: nothing raised in the hook
        with pytest.raises(KeyboardInterrupt):
            deadline = time.monotonic() + 10
            while time.monotonic() < deadline:
                pass
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, signal.SIG_DFL)


def test_the_entry_module_and_the_package_import_nothing():
    """The console script's ``from liquidsched.cli import main`` loads no module the interpreter
    had not loaded already (not even typing), so that its window without a Ctrl-C handler is as
    short as can be; the package's names are imported on first use."""
    probe = ("import sys; before = set(sys.modules)\n"
             "import liquidsched.cli\n"
             "print(sorted(set(sys.modules) - before))")
    out = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "['__future__', 'liquidsched', 'liquidsched.cli']"


def test_every_public_name_of_the_package_resolves_and_is_listed():
    import liquidsched
    from liquidsched.schedulers import plan
    from liquidsched.traffic import Traffic

    assert liquidsched.plan is plan and liquidsched.Traffic is Traffic
    assert set(liquidsched.__all__) <= set(dir(liquidsched))
    assert all(getattr(liquidsched, name) is not None for name in liquidsched.__all__)
    with pytest.raises(AttributeError, match="no attribute 'nope'"):
        liquidsched.nope  # noqa: B018


# -- options the parser refuses: one line ---------------------------------------------------------

@pytest.mark.parametrize("argv,prog,expected", [
    (["plan", "--topology", "two-switch", "--bogus"], "liquidsched plan", "unrecognized arguments: --bogus"),
    (["plan", "--topology", "two-switch", "stray"], "liquidsched plan", "unrecognized arguments: stray"),
    (["plan", "--topology", "two-switch", "--algorithm", "nope"], "liquidsched plan",
     "argument --algorithm: invalid choice: 'nope' (choose from 'round-robin'"),
    (["plan"], "liquidsched plan", "the following arguments are required: --topology"),
    (["bound", "--topology"], "liquidsched bound", "argument --topology: expected one argument"),
    (["topology", "export"], "liquidsched topology export", "required: NAME|FILE, --output"),
    (["topology", "nope"], "liquidsched topology", "argument ACTION: invalid choice: 'nope'"),
    (["topology", "show", "two-switch", "--x"], "liquidsched topology show", "unrecognized arguments: --x"),
    ([], "liquidsched", "the following arguments are required: COMMAND"),
    (["nope"], "liquidsched", "argument COMMAND: invalid choice: 'nope'"),
    (["--bogus"], "liquidsched", "required: COMMAND"),
])
def test_an_option_the_parser_refuses_is_one_line(capsys, argv, prog, expected):
    code, out, err = run(capsys, *argv)
    assert code == 2 and out == ""
    assert err.count("\n") == 1 and "usage:" not in err, err
    assert err.startswith(f"{prog}: error: ") and err.endswith(f" (see {prog} --help)\n"), err
    assert expected in err, err


def test_help_is_still_the_whole_help(capsys):
    code, out, _ = run(capsys, "plan", "--help")
    assert code == 0 and out.startswith("usage: liquidsched plan")
    # The names listed when help is shown, not when the parser is built.
    from liquidsched.schedulers import SCHEDULERS
    from liquidsched.topologies import BUILDERS

    flat = "".join(out.split())  # argparse wraps lines at hyphens: fat-/tree
    assert all(name in flat for name in [*SCHEDULERS, *BUILDERS])


def test_building_a_commands_parser_imports_no_scheduler_nor_numpy():
    probe = ("import sys\n"
             "from liquidsched.cli import build_parser\n"
             "build_parser(['plan', '--help']); build_parser(['bound'])\n"
             "print(sorted(m for m in sys.modules if m.startswith(('numpy', 'liquidsched.schedulers', "
             "'liquidsched.traffic', 'liquidsched._core'))))")
    out = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "[]"


@pytest.mark.parametrize("value", ["--distribution=arbitrary", "-f", "--hostfile ranks --map-by slot"])
def test_another_programs_arguments_may_start_with_a_dash(value):
    argv = ["run", "--topology", "two-switch", "--algorithm", "round-robin", "--launcher-args", value]
    assert build_parser(argv).parse_args(argv).mpiexec_args == value
    argv = ["run", "--topology", "two-switch", "--launcher-args=" + value]
    assert build_parser(argv).parse_args(argv).mpiexec_args == value


def test_a_program_after_double_dash_keeps_its_own_words():
    argv = ["launch", "--topology", "two-switch", "--", "./app", "--launcher-args", "-x"]
    args = build_parser(argv).parse_args(argv)
    assert args.argv[-3:] == ["./app", "--launcher-args", "-x"] and args.mpiexec_args is None


# -- a reader that goes away after reading a little -----------------------------------------------

BIG_OUTPUTS = [
    ["topology", "export", "fat-tree:k=12", "--output", "-"],
    ["plan", "--topology", "fat-tree:k=8", "--traffic", "all-to-all", "--output", "-"],
    ["pmpi-config", "--topology", "fat-tree:k=12", "--output", "-"],
]


@pytest.mark.parametrize("unbuffered", ["", "1"], ids=["buffered", "PYTHONUNBUFFERED"])
@pytest.mark.parametrize("argv", BIG_OUTPUTS, ids=[" ".join(a[:2]) for a in BIG_OUTPUTS])
def test_a_reader_that_closes_after_one_line_gives_status_141(argv, unbuffered):
    """``| head -1``: the output is larger than a pipe holds, so the command is still writing
    when the reader leaves; what it could not write is a closed pipe, not a success."""
    env = {k: v for k, v in os.environ.items() if k != "PYTHONUNBUFFERED"} | (
        {"PYTHONUNBUFFERED": "1"} if unbuffered else {})
    p = subprocess.Popen([LIQUIDSCHED, *argv], stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env)
    assert p.stdout.readline()
    p.stdout.close()
    err = p.stderr.read().decode()
    assert p.wait(timeout=120) == EXIT_CLOSED_PIPE and err == "", err


def test_output_to_a_pipe_read_to_the_end_is_whole(tmp_path):
    """The same commands, read whole: every byte arrives (unbuffered, a cut-short write would
    lose the rest), identical to the file written."""
    argv = BIG_OUTPUTS[0]
    env = os.environ | {"PYTHONUNBUFFERED": "1"}
    piped = subprocess.run([LIQUIDSCHED, *argv], capture_output=True, env=env, check=True).stdout
    subprocess.run([LIQUIDSCHED, *argv[:-1], str(tmp_path / "t.json")], capture_output=True, check=True)
    assert piped == (tmp_path / "t.json").read_bytes() and len(piped) > 1 << 16


# -- output paths ----------------------------------------------------------------------------------

def test_a_dangling_symbolic_link_has_its_target_written(capsys, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "out").mkdir()
    link = tmp_path / "latest.json"
    link.symlink_to("out/schedule.json")  # relative, and its target does not exist yet
    code, _, err = run(capsys, "plan", "--topology", "two-switch", "--output", str(link))
    assert code == 0, err
    assert link.is_symlink() and os.readlink(link) == "out/schedule.json"
    assert (tmp_path / "out" / "schedule.json").is_file()
    assert sorted(p.name for p in tmp_path.iterdir()) == ["latest.json", "out"]


def test_a_link_into_a_missing_directory_is_refused_before_work(capsys, tmp_path):
    link = tmp_path / "s.json"
    link.symlink_to(tmp_path / "missing" / "s.json")
    code, out, err = run(capsys, "plan", "--topology", "two-switch", "--output", str(link))
    assert code == 2 and err.count("\n") == 1 and err.startswith("liquidsched: error: ")
    assert f"directory {tmp_path / 'missing'} does not exist" in err
    assert link.is_symlink() and not (tmp_path / "missing").exists() and os.listdir(tmp_path) == ["s.json"]


@pytest.mark.parametrize("argv", [
    ["plan", "--topology", "two-switch", "--output", ""],
    ["plan", "--topology", "two-switch", "--plot", " "],
    ["topology", "export", "two-switch", "--output", ""],
    ["sweep", "--topology", "two-switch", "--output", ""],
])
def test_an_empty_output_path_is_refused(capsys, argv, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    code, out, err = run(capsys, *argv)
    flag = argv[-2]
    assert code == 2 and out == "" and err == f"liquidsched: error: {flag}: the path is empty; give a file name, " \
                                              f"or - for standard output\n"
    assert os.listdir(tmp_path) == []


@pytest.mark.parametrize("name", ["out.json/", "new-dir/", ""])
def test_a_path_ending_in_a_slash_names_no_file(capsys, tmp_path, name):
    """pathlib drops the slash: ``out.json/`` would have written the file ``out.json``."""
    path = f"{tmp_path}/{name}"
    code, out, err = run(capsys, "topology", "export", "two-switch", "--output", path)
    assert code == 2 and err == f"liquidsched: error: {path}: ends with /, so names a directory, not a file\n"
    assert os.listdir(tmp_path) == []


def test_two_options_naming_one_file_are_refused(capsys, tmp_path):
    path = str(tmp_path / "x.png")
    code, _, err = run(capsys, "plan", "--topology", "two-switch", "--output", path, "--plot", path)
    assert code == 2 and f"--output and --plot are both {path}" in err and os.listdir(tmp_path) == []


def test_write_output_refuses_an_empty_path():
    from liquidsched.errors import InputError
    from liquidsched.io.output import check_output, write_output

    for f in (check_output, lambda p: write_output(p, "x")):
        with pytest.raises(InputError, match="empty output path"):
            f("")


# -- tables ----------------------------------------------------------------------------------------

def cells(text: str) -> list[str]:
    """The cells of a rendered table, one string per row and column, box drawing removed."""
    return [c.strip() for line in text.splitlines() for c in re.split("[│┃]", line) if c.strip()]


def test_a_table_into_a_pipe_is_as_wide_as_its_cells():
    """``liquidsched plan --topology two-switch | cat``: not cut to 80 columns, nor to the
    width of the terminal the pipe leads to."""
    env = {k: v for k, v in os.environ.items() if k not in ("COLUMNS", "LINES")}
    out = subprocess.run([LIQUIDSCHED, "plan", "--topology", "two-switch", "--traffic", "all-to-all",
                          "--algorithm", "liquid"], capture_output=True, text=True, env=env, check=True).stdout
    assert "…" not in out and max(map(len, out.splitlines())) > 80
    row = next(c for c in cells(out) if " ms for Λ = " in c)
    assert row.endswith("of the liquid throughput")
    assert re.search(r"\d[\d,]*\.\d\d MB/s", out)


def test_a_narrow_console_folds_a_long_number_and_keeps_every_digit():
    number = "1,101,234,567,890.25 MB/s"
    table = Table("what", "value")
    table.add_row("throughput", number)
    table.add_row("a long label that takes the room", "x")
    console = Console(width=30, record=True, file=open(os.devnull, "w"), color_system=None)
    console.print(fold_cells(table))
    text = console.export_text()
    assert "…" not in text
    value_column = "".join(line.split("│")[2].strip() for line in text.splitlines() if line.count("│") == 3)
    assert number.replace(" ", "") in value_column.replace(" ", "")


def test_every_table_the_commands_print_is_folded(capsys, monkeypatch):
    """The rule lives in the consoles: a table printed through them, whatever built it, folds."""
    from liquidsched.cli.common import out

    monkeypatch.setattr(out, "_width", 24)
    table = Table("label", "value")
    table.add_row("throughput", "1,101,234,567.00 MB/s")
    out.print(table)
    text = capsys.readouterr().out
    assert "…" not in text and "1,101,2" in text


# -- --json and standard output --------------------------------------------------------------------

@pytest.mark.parametrize("argv", [
    ["sweep", "--topology", "crossbar:n=3", "--json", "--output", "-"],
    ["plan", "--topology", "two-switch", "--json", "--output", "-"],
    ["tune", "--topology", "crossbar:n=3", "--sizes", "1KiB", "--json", "--output", "-"],
])
def test_json_beside_an_output_to_standard_output_is_refused(capsys, argv):
    code, out, err = run(capsys, *argv)
    assert code == 2 and out == ""
    assert err == "liquidsched: error: --json and --output - would both write to standard output; give --output a file\n"


def test_tune_json_prints_the_table_it_writes(capsys, tmp_path):
    import json

    path = tmp_path / "sel.json"
    code, out, err = run(capsys, "tune", "--topology", "crossbar:n=3", "--traffic", "all-to-all", "--algorithm",
                         "liquid", "--sizes", "1KiB", "--repeats", "1", "--warmup", "0", "--modes", "frames,alltoallv",
                         "--json", "--output", str(path))
    assert code == 0, err
    assert json.loads(out) == json.loads(path.read_text())


@pytest.mark.parametrize("command", sorted(__import__("liquidsched.cli.common", fromlist=["COMMANDS"]).COMMANDS))
@pytest.mark.parametrize("extra", [["--bogus-option"], ["--json=maybe"], ["--help-me"]])
def test_every_command_refuses_a_bad_option_in_one_line(capsys, command, extra):
    code, out, err = run(capsys, command, *extra)
    assert code == 2 and out == "" and err.count("\n") == 1, err
    assert err.startswith(f"liquidsched {command}") and " error: " in err and "usage:" not in err, err


# -- standard output that cannot be written ---------------------------------------------------------

STDOUT_WRITERS = [["topology", "export", "two-switch", "--output", "-"], ["bound", "--topology", "two-switch"],
                  ["bound", "--topology", "two-switch", "--json"]]


@pytest.mark.skipif(not os.path.exists("/dev/full"), reason="no /dev/full here")
@pytest.mark.parametrize("argv", STDOUT_WRITERS, ids=" ".join)
def test_a_full_device_as_standard_output_is_one_line(argv):
    with open("/dev/full", "w") as full:
        p = subprocess.run([LIQUIDSCHED, *argv], stdout=full, stderr=subprocess.PIPE, text=True, timeout=120)
    assert p.returncode == 2
    assert p.stderr == "liquidsched: error: standard output: cannot write: No space left on device\n"


@pytest.mark.parametrize("argv", STDOUT_WRITERS, ids=" ".join)
def test_a_closed_standard_output_is_one_line(argv):
    p = subprocess.run(["sh", "-c", 'exec "$@" >&-', "sh", LIQUIDSCHED, *argv], stderr=subprocess.PIPE, text=True,
                       timeout=120)
    assert p.returncode == 2
    assert p.stderr == "liquidsched: error: standard output: cannot write: Bad file descriptor\n"


# -- a bug -----------------------------------------------------------------------------------------

def test_a_bug_is_one_line_with_its_own_status(capsys, monkeypatch):
    """Not the user's error, so not status 2; still no traceback, unless asked for."""
    from liquidsched.cli import EXIT_INTERNAL_ERROR
    from liquidsched.cli import plan as plan_module

    def broken(args):
        raise ValueError("an invariant\nbroken")

    monkeypatch.setattr(plan_module, "cmd_bound", broken)
    monkeypatch.delenv("LIQUIDSCHED_TRACEBACK", raising=False)
    code, out, err = run(capsys, "bound", "--topology", "two-switch")
    assert code == EXIT_INTERNAL_ERROR == 70 and out == ""
    assert err == ("liquidsched: internal error: ValueError: an invariant broken "
                   "(a bug in liquidsched; LIQUIDSCHED_TRACEBACK=1 shows where)\n")
    monkeypatch.setenv("LIQUIDSCHED_TRACEBACK", "1")
    with pytest.raises(ValueError, match="an invariant"):
        main(["bound", "--topology", "two-switch"])


def test_a_small_command_loads_only_what_it_uses():
    """``bound`` on a built-in network: no scheduler, no numpy.ma (np.unique's masked-array
    check), no tempfile or shutil (nothing is written). Its time is measured by
    benchmarks/startup.py, not asserted."""
    unwanted = ("liquidsched.schedulers", "numpy.ma", "tempfile", "shutil", "ortools", "matplotlib")
    probe = ("import sys, io, contextlib\n"
             "from liquidsched.cli import main\n"
             "with contextlib.redirect_stdout(io.StringIO()):\n"
             "    assert main(['bound', '--topology', 'two-switch']) == 0\n"
             f"unwanted = {unwanted!r}\n"
             "print(sorted(m for m in sys.modules if any(m == u or m.startswith(u + '.') for u in unwanted)))")
    out = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "[]"


def test_a_progress_bar_off_a_terminal_leaves_no_line(tmp_path):
    """rich ends a progress bar on a pipe with an empty line; before an error, that made it two."""
    p = subprocess.run([LIQUIDSCHED, "sweep", "--topology", "two-switch", "--output", str(tmp_path / "c.json")],
                       capture_output=True, text=True, timeout=120)
    assert p.returncode == 2 and p.stdout == ""
    assert p.stderr.count("\n") == 1 and p.stderr.startswith("liquidsched: error: sweep: "), p.stderr


def test_an_encoding_that_cannot_show_a_character_escapes_it():
    """Standard output in ASCII: Λ written as Python writes it to standard error, not a crash."""
    env = os.environ | {"PYTHONIOENCODING": "ascii"}
    p = subprocess.run([LIQUIDSCHED, "bound", "--topology", "two-switch"], capture_output=True, text=True,
                       encoding="ascii", env=env, timeout=120)
    assert p.returncode == 0 and p.stderr == ""
    assert "duration \\u039b" in p.stdout and "416.67 MB/s" in p.stdout

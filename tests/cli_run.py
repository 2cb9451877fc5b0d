"""Running the command line inside the test process, as the tests of every command do."""

from __future__ import annotations

from liquidsched.cli import main


def run(capsys, *argv: object) -> tuple[int, str, str]:
    """Exit status, standard output and error of ``liquidsched ARGV`` in this process (the
    parser's own exit, for --help or an option it refuses, gives its status too)."""
    try:
        code = main([str(a) for a in argv])
    except SystemExit as e:
        code = e.code
    captured = capsys.readouterr()
    return code, captured.out, captured.err


def one_line_error(code: int, err: str, *expected: str) -> None:
    """A user error: status 2, one ``liquidsched: error:`` line holding every ``expected``, no
    traceback."""
    assert code == 2, err
    assert err.count("\n") == 1 and err.startswith("liquidsched: error: ") and "Traceback" not in err, err
    for text in expected:
        assert text in err, err

"""The documentation runs: every ``$ liquidsched`` example of README.md and docs/ is run and the
output it shows is found in what the command prints, every other command line of a shell block
parses, the Python blocks compile, and the site builds with ``mkdocs build --strict``.

The conventions (docs/getting-started.md tells readers the first):

* A fenced block whose first line starts with ``$ liquidsched `` is an example with output. Each
  ``$ liquidsched`` line in it is a command (a line ending in a backslash goes on on the next);
  the lines after it, up to the next command, are what it prints. The commands of a block run in
  order, in a fresh directory that holds the files of the page's titled blocks (a fence such as
  ``yaml title="two-racks.yaml"``), through :func:`liquidsched.cli.main` with the arguments split
  by :func:`shlex.split` (no shell), the consoles 120 columns wide. Every non-empty line shown
  must be a line of what the command printed (standard output and error), runs of whitespace
  collapsed; a line ``…`` or ``...`` stands for lines left out. A command must exit with 0, or
  with 2 when what it shows is an error (``liquidsched: error: …``).
* No other line of a fenced block starts with ``$ ``: commands that need root, an emulated
  network, MPI or files of your own are shown without the prompt, in ``sh`` blocks.
* In ``sh`` (and untagged) blocks, every command line that runs liquidsched (``liquidsched``,
  ``.venv/bin/liquidsched`` or ``sudo .venv/bin/liquidsched``, after any ``VAR=value`` words)
  must parse: its command exists and the CLI's own parser accepts its arguments, the words a
  placeholder (``…``, ``...``) stands for aside. ``sudo liquidsched`` is refused: sudo does not
  keep the PATH.
"""

from __future__ import annotations

import contextlib
import importlib.util
import io
import os
import re
import shlex
import subprocess
import sys
from dataclasses import dataclass, field
from pathlib import Path

import pytest

from liquidsched.cli import build_parser, main
from liquidsched.cli.common import COMMANDS

ROOT = Path(__file__).resolve().parents[1]
DOCUMENTS = [ROOT / "README.md", *sorted((ROOT / "docs").rglob("*.md"))]
#: The width the examples' tables are shown at.
WIDTH = 120
#: A shown line that stands for lines left out.
ELLIPSES = {"…", "..."}
PROMPT = "$ "
EXAMPLE = "$ liquidsched "
#: How a shell line may run liquidsched (``sudo liquidsched`` would lose the PATH).
PROGRAMS = {"liquidsched", ".venv/bin/liquidsched"}
SHELL_LANGUAGES = {"", "sh", "bash", "shell"}
ASSIGNMENT = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*=")
ANSI = re.compile(r"\x1b\[[0-9;?]*[A-Za-z]")
FENCE = re.compile(r"^(?P<indent> *)(?P<fence>`{3,}|~{3,})(?P<info>.*)$")
TITLE = re.compile(r"""title=["']([^"']+)["']""")


@dataclass
class Block:
    """A fenced block of a Markdown file: its language, title and lines (indent removed)."""

    path: Path
    line: int  # of the opening fence, from 1
    language: str
    title: str | None
    lines: list[str] = field(default_factory=list)

    @property
    def where(self) -> str:
        return f"{self.path.relative_to(ROOT)}:{self.line}"


def fenced_blocks(path: Path, text: str | None = None) -> list[Block]:
    """Every fenced block of a Markdown file (or of ``text``, read as that file)."""
    lines = (path.read_text(encoding="utf-8") if text is None else text).splitlines()
    blocks, k = [], 0
    while k < len(lines):
        m = FENCE.match(lines[k])
        if not m:
            k += 1
            continue
        indent, fence, info = len(m["indent"]), m["fence"], m["info"].strip()
        title = TITLE.search(info)
        block = Block(path, k + 1, info.split()[0].lstrip(".{") if info else "", title[1] if title else None)
        k += 1
        while k < len(lines) and not (lines[k].strip().startswith(fence[0] * len(fence))
                                      and not lines[k].strip().strip(fence[0])):
            line = lines[k]
            block.lines.append(line[indent:] if line[:indent].strip() == "" else line.lstrip())
            k += 1
        blocks.append(block)
        k += 1
    return blocks


def logical_lines(lines: list[str]) -> list[tuple[int, str]]:
    """Lines with their backslash continuations joined, each with its index in ``lines``."""
    joined, k = [], 0
    while k < len(lines):
        start, text = k, lines[k]
        while text.rstrip().endswith("\\") and k + 1 < len(lines):
            k += 1
            text = text.rstrip()[:-1].rstrip() + " " + lines[k].strip()
        joined.append((start, text))
        k += 1
    return joined


@dataclass
class Command:
    text: str  # the command line, without the prompt
    shown: list[str]  # what it is shown to print


def example_commands(block: Block) -> list[Command]:
    """The commands of an example block and the output shown after each."""
    commands: list[Command] = []
    for _, text in logical_lines(block.lines):
        if text.startswith(PROMPT):
            commands.append(Command(text[len(PROMPT):].strip(), []))
        elif commands:
            commands[-1].shown.append(text)
    return commands


def is_example(block: Block) -> bool:
    return bool(block.lines) and block.lines[0].startswith(EXAMPLE)


def collapse(line: str) -> str:
    return " ".join(line.split())


def mismatches(shown: list[str], output: str) -> list[str]:
    """The lines shown that the output does not have (whitespace runs collapsed; ``…`` lines
    stand for lines left out)."""
    printed = {collapse(line) for line in ANSI.sub("", output).splitlines()}
    return [line for line in shown
            if collapse(line) and collapse(line) not in ELLIPSES and collapse(line) not in printed]


def run_cli(argv: list[str], capsys: pytest.CaptureFixture[str]) -> tuple[int, str]:
    """Run the command line in this process: its exit status and everything it printed."""
    capsys.readouterr()
    try:
        status = main(argv)
    except SystemExit as e:  # argparse's own errors
        status = e.code if isinstance(e.code, int) else 1
    out, err = capsys.readouterr()
    return status, out + err


def liquidsched_words(text: str) -> list[str] | None:
    """The arguments of a shell line that runs liquidsched (after any ``VAR=value`` words and
    ``sudo .venv/bin/liquidsched``); None when the line runs something else.

    Raises
    ------
    ValueError
        when the line cannot be split into words, or runs ``sudo liquidsched``.
    """
    if not re.search(r"(^|[\s/])liquidsched(\s|$)", text):
        return None
    words = shlex.split(text, comments=True)
    while words and ASSIGNMENT.match(words[0]):
        words = words[1:]
    if words[:1] == ["sudo"]:
        words = words[1:]
        while words and words[0].startswith("-"):  # sudo's own options
            words = words[1:]
        if words[:1] == ["liquidsched"]:
            raise ValueError("sudo does not keep the PATH: write sudo .venv/bin/liquidsched")
        if words[:1] != [".venv/bin/liquidsched"]:
            return None
    if not words or words[0] not in PROGRAMS:
        return None
    return words[1:]


def is_placeholder(word: str) -> bool:
    return "…" in word or word == "..."


def parse_problem(argv: list[str]) -> str | None:
    """Why the CLI's parser refuses ``argv``, or None when it takes it. Words that are
    placeholders are left out, or stand for one argument: either reading that parses will do."""
    if not argv or argv[0] not in COMMANDS:
        return f"unknown command {argv[0] if argv else '(none)'!r} (commands: {', '.join(COMMANDS)})"
    readings = [argv]
    if any(is_placeholder(w) for w in argv):
        readings = [[w for w in argv if not is_placeholder(w)], ["x" if is_placeholder(w) else w for w in argv]]
    errors = []
    for words in readings:
        stderr = io.StringIO()
        try:
            with contextlib.redirect_stderr(stderr), contextlib.redirect_stdout(io.StringIO()):
                build_parser(words).parse_args(words)
            return None
        except SystemExit:
            errors.append(stderr.getvalue().strip().splitlines()[-1] if stderr.getvalue().strip() else "refused")
    return errors[0]


# -- what the documents hold --------------------------------------------------------------------

BLOCKS = [block for path in DOCUMENTS for block in fenced_blocks(path)]
EXAMPLES = [block for block in BLOCKS if is_example(block)]
SHELL_LINES = [(block, block.line + 1 + k, text) for block in BLOCKS
               if not is_example(block) and block.language in SHELL_LANGUAGES
               for k, text in logical_lines(block.lines)]
PYTHON = [block for block in BLOCKS if block.language in ("python", "py")]


@pytest.fixture
def wide_consoles(monkeypatch):
    """The command's consoles 120 columns wide, whatever the terminal (rich reads its width from
    the terminal or COLUMNS when it is not set)."""
    from liquidsched.cli.common import err, out

    for console in (out, err):
        monkeypatch.setattr(console, "_width", WIDTH)
        monkeypatch.setattr(console, "_height", 25)


@pytest.mark.parametrize("block", EXAMPLES, ids=[b.where for b in EXAMPLES])
def test_example_prints_what_it_shows(block, tmp_path, monkeypatch, capsys, wide_consoles):
    for titled in fenced_blocks(block.path):
        if titled.title:
            (tmp_path / titled.title).write_text("\n".join(titled.lines) + "\n", encoding="utf-8")
    monkeypatch.chdir(tmp_path)
    commands = example_commands(block)
    assert commands, f"{block.where}: an example without a command"
    for command in commands:
        assert command.text.startswith("liquidsched "), f"{block.where}: {command.text!r} is not liquidsched"
        status, output = run_cli(shlex.split(command.text)[1:], capsys)
        expected = 2 if any(collapse(s).startswith("liquidsched: error:") for s in command.shown) else 0
        assert status == expected, f"{block.where}: {command.text}: exit status {status}\n{output}"
        missing = mismatches(command.shown, output)
        assert not missing, (f"{block.where}: {command.text}: shown but not printed:\n" + "\n".join(missing)
                             + f"\n--- printed:\n{output}")


@pytest.mark.parametrize("block, line, text", SHELL_LINES, ids=[f"{b.where}+{n - b.line}" for b, n, _ in SHELL_LINES])
def test_shell_command_line_parses(block, line, text):
    try:
        argv = liquidsched_words(text)
    except ValueError as e:
        pytest.fail(f"{block.path.relative_to(ROOT)}:{line}: {e}: {text}")
    if argv is not None:
        problem = parse_problem(argv)
        assert problem is None, f"{block.path.relative_to(ROOT)}:{line}: {problem}: {text}"


def test_only_liquidsched_examples_have_a_prompt():
    wrong = [f"{block.where}: {line}" for block in BLOCKS for line in block.lines
             if line.startswith(PROMPT) and not (is_example(block) and line.startswith(EXAMPLE))]
    assert not wrong, ("show these without '$ ' in an sh block (only '$ liquidsched' examples, run by the "
                       "tests, have a prompt):\n" + "\n".join(wrong))


@pytest.mark.parametrize("block", PYTHON, ids=[b.where for b in PYTHON])
def test_python_block_compiles(block):
    compile("\n".join(block.lines) + "\n", block.where, "exec")


def test_the_documents_hold_examples_of_every_kind():
    """A change to the conventions or the parser that found nothing would pass every test above."""
    readme = [b for b in EXAMPLES if b.path.name == "README.md"]
    assert len(readme) == 3
    assert len(EXAMPLES) >= 30 and len(SHELL_LINES) >= 30 and PYTHON
    pages = {b.path for b in EXAMPLES}
    assert {ROOT / "docs" / "concepts.md", ROOT / "docs" / "commands" / "bound.md"} <= pages


def test_every_command_has_its_page():
    pages = {p.stem for p in (ROOT / "docs" / "commands").glob("*.md")} - {"index"}
    index = (ROOT / "docs" / "commands" / "index.md").read_text(encoding="utf-8")
    assert pages == set(COMMANDS), f"pages without a command: {pages - set(COMMANDS)}; commands without a page: " \
                                   f"{set(COMMANDS) - pages}"
    assert all(f"]({name}.md)" in index for name in COMMANDS)


# -- the checks can fail -----------------------------------------------------------------------

def test_a_wrong_output_is_a_mismatch(capsys, wide_consoles):
    status, output = run_cli(["bound", "--topology", "two-switch"], capsys)
    assert status == 0
    right = ["│ duration Λ        │ 6 transfers (60.000 ms) │", "…", "│ liquid throughput │ 416.67 MB/s │"]
    wrong = "│ duration Λ        │ 7 transfers (70.000 ms) │"
    assert mismatches(right, output) == []
    assert mismatches([*right, wrong], output) == [wrong]
    # A shown line must be a whole line of the output, not a piece of one.
    assert mismatches(["│ duration Λ │"], output) == ["│ duration Λ │"]


def test_the_blocks_and_commands_are_read_as_the_conventions_say(tmp_path):
    text = ("Text.\n\n```console\n$ liquidsched bound --topology two-switch \\\n    --traffic all-to-all\n"
            "│ a │\n…\n$ liquidsched check s.json\ns.json: valid\n```\n\n"
            "- item\n\n  ```sh\n  sudo .venv/bin/liquidsched run --topology t.yaml --emulate  # root\n  ```\n\n"
            '```yaml title="t.yaml"\nname: t\n```\n')
    blocks = fenced_blocks(tmp_path / "page.md", text)
    assert [(b.language, b.title) for b in blocks] == [("console", None), ("sh", None), ("yaml", "t.yaml")]
    commands = example_commands(blocks[0])
    assert [c.text for c in commands] == ["liquidsched bound --topology two-switch --traffic all-to-all",
                                          "liquidsched check s.json"]
    assert commands[0].shown == ["│ a │", "…"] and commands[1].shown == ["s.json: valid"]
    assert liquidsched_words(blocks[1].lines[0]) == ["run", "--topology", "t.yaml", "--emulate"]


@pytest.mark.parametrize("line, problem", [
    ("liquidsched plna --topology two-switch", "unknown command 'plna'"),
    ("liquidsched plan --topology two-switch --algoritm liquid", "unrecognized arguments: --algoritm"),
    ("liquidsched run … --modes frames,nonsense", "unknown mode 'nonsense'"),
    ("sudo liquidsched run --topology two-switch --emulate", "sudo does not keep the PATH"),
])
def test_a_wrong_command_line_is_found(line, problem):
    try:
        argv = liquidsched_words(line)
    except ValueError as e:
        found = str(e)
    else:
        found = parse_problem(argv)
    assert found is not None and problem in found


def test_lines_that_run_something_else_are_left_alone():
    assert liquidsched_words("make -C pmpi  # against the first mpicc found") is None
    assert liquidsched_words("sudo make bench-emulated") is None
    assert liquidsched_words("LIQUIDSCHED_FABRIC=f LD_PRELOAD=$PWD/x.so mpiexec -n 64 ./app") is None
    assert liquidsched_words("SLURM_HOSTFILE=ranks liquidsched run --launcher srun") == ["run", "--launcher", "srun"]
    assert parse_problem(["run", "--topology", "...", "--emulate", "--time-scale", "4"]) is None


# -- the site ----------------------------------------------------------------------------------

def test_the_site_builds_strictly(tmp_path):
    """``mkdocs build --strict``: a broken link or anchor, or an API reference that does not
    resolve, fails the build. Skipped only where mkdocs is not installed and not in CI."""
    if importlib.util.find_spec("mkdocs") is None:
        if os.environ.get("CI"):
            pytest.fail("mkdocs is not installed; CI installs the test extra (pip install -e '.[test]')")
        pytest.skip("mkdocs is not installed (pip install -e '.[test]')")
    env = dict(os.environ, NO_MKDOCS_2_WARNING="1")
    result = subprocess.run([sys.executable, "-m", "mkdocs", "build", "--strict", "--config-file",
                             str(ROOT / "mkdocs.yml"), "--site-dir", str(tmp_path / "site")],
                            cwd=ROOT, env=env, capture_output=True, text=True, timeout=600)
    assert result.returncode == 0, result.stdout[-3000:] + result.stderr[-6000:]
    assert (tmp_path / "site" / "index.html").is_file()
    assert (tmp_path / "site" / "api" / "liquidsched" / "index.html").is_file()

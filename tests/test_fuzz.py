"""Fuzzing the command line with mutated input files: topologies (YAML, JSON, SimGrid XML),
traffics (JSON, YAML, CSV rows, CSV matrix) and schedules (JSON), mutated as documents (a field
replaced by a value of another type or range, deleted, renamed, a key repeated) and as text
(spans deleted, repeated or replaced by random characters).

Whatever the input, a command ends with status 0, 1 or 2 — never a traceback, never a Rust panic
— and an ``--output`` file is either whole and readable or not there at all.

Bounded for CI (``LIQUIDSCHED_FUZZ_EXAMPLES`` inputs per file kind, 40 by default); ``make fuzz``
runs many more and prints how many inputs were tried.
"""

from __future__ import annotations

import contextlib
import io
import json
import os
import random
from pathlib import Path

import pytest
import yaml
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from liquidsched.cli import main
from liquidsched.simgrid.platform_file import platform_xml
from liquidsched.io.topology import topology_to_dict
from liquidsched.schedulers import plan
from liquidsched.topologies import build_topology
from liquidsched.traffic import all_to_all

EXAMPLES = int(os.environ.get("LIQUIDSCHED_FUZZ_EXAMPLES", "40"))
TRIED: dict[str, int] = {}

NETWORK = build_topology("hierarchical:d1=2,d2=2,c1=100Mbit/s,c2=200Mbit/s")
TRAFFIC = all_to_all(NETWORK, size_bytes=1_000_000)
SCHEDULE = plan(NETWORK, TRAFFIC, "round-robin")
TRANSFERS = [{"src": t.src, "dst": t.dst, "size_bytes": t.size_bytes} for t in TRAFFIC]
HOSTS = NETWORK.hosts()


def seeds() -> dict[str, tuple[str, str]]:
    """File kind → (file name, valid text)."""
    topology = topology_to_dict(NETWORK)
    matrix = ",".join([""] + HOSTS) + "\n" + "\n".join(
        ",".join([s] + ["1MB" if s != d else "0" for d in HOSTS]) for s in HOSTS) + "\n"
    rows = "src,dst,size_bytes\n" + "".join(f"{t['src']},{t['dst']},{t['size_bytes']}\n" for t in TRANSFERS)
    return {
        "topology-yaml": ("net.yaml", yaml.safe_dump(topology, sort_keys=False)),
        "topology-json": ("net.json", json.dumps(topology, indent=1)),
        "topology-xml": ("net.xml", platform_xml(NETWORK)),
        "traffic-json": ("traffic.json", json.dumps({"transfers": TRANSFERS}, indent=1)),
        "traffic-yaml": ("traffic.yaml", yaml.safe_dump({"name": "a2a", "transfers": TRANSFERS})),
        "traffic-csv-rows": ("traffic.csv", rows),
        "traffic-csv-matrix": ("matrix.csv", matrix),
        "schedule-json": ("schedule.json", json.dumps(SCHEDULE.to_dict(), indent=1)),
    }


SEEDS = seeds()

# Values of every type and awkward range a field may receive instead of its own.
ODD_VALUES = st.one_of(
    st.none(), st.booleans(), st.integers(-2**70, 2**70), st.sampled_from([0, -1, 1, 2**53 + 1, 10**32]),
    st.floats(allow_nan=True, allow_infinity=True), st.text(max_size=8),
    st.sampled_from(["1MB", "1.5", "1e30", "-3B", "100Mbit/s", "0", "", "h1.1", "s1", "nan", "1 KiB"]),
    st.lists(st.integers(-3, 3), max_size=3), st.dictionaries(st.text(max_size=3), st.integers(), max_size=2),
)


def _paths(doc, prefix=()):
    """Every path (tuple of keys and indices) into a parsed document."""
    yield prefix
    if isinstance(doc, dict):
        for k, v in doc.items():
            yield from _paths(v, prefix + (k,))
    elif isinstance(doc, list):
        for i, v in enumerate(doc):
            yield from _paths(v, prefix + (i,))


def _mutate_document(doc, rng: random.Random, value):
    """Replace, delete or rename what one path points at."""
    paths = [p for p in _paths(doc) if p]
    if not paths:
        return value
    path = rng.choice(paths)
    parent = doc
    for key in path[:-1]:
        parent = parent[key]
    last = path[-1]
    action = rng.choice(["replace", "replace", "delete", "rename"])
    if action == "replace":
        parent[last] = value
    elif action == "delete":
        del parent[last]
    elif isinstance(parent, dict):
        parent[f"{last}x"] = parent.pop(last)
    else:
        parent.insert(last, parent[last])  # a list item repeated
    return doc


def _mutate_text(text: str, rng: random.Random, noise: str) -> str:
    """Delete, repeat or replace a span of the text."""
    if not text:
        return noise
    a = rng.randrange(len(text))
    b = min(len(text), a + rng.randint(1, 40))
    action = rng.choice(["delete", "repeat", "replace", "insert"])
    if action == "delete":
        return text[:a] + text[b:]
    if action == "repeat":
        return text[:b] + text[a:b] + text[b:]
    if action == "replace":
        return text[:a] + noise + text[b:]
    return text[:a] + noise + text[a:]


def _repeat_a_key(text: str, rng: random.Random) -> str:
    """Repeat one ``key: value`` line of a YAML text (a duplicate key)."""
    lines = text.splitlines(keepends=True)
    keyed = [i for i, line in enumerate(lines) if ":" in line and not line.lstrip().startswith("-")]
    if not keyed:
        return text
    i = rng.choice(keyed)
    return "".join(lines[:i + 1] + [lines[i]] + lines[i + 1:])


@st.composite
def mutated(draw, kind: str) -> str:
    name, text = SEEDS[kind]
    rng = random.Random(draw(st.integers(0, 2**32 - 1)))
    for _ in range(draw(st.integers(1, 3))):
        how = draw(st.sampled_from(["document", "text", "duplicate-key"]))
        if how == "document" and not name.endswith((".csv", ".xml")):
            try:
                doc = json.loads(text) if name.endswith(".json") else yaml.safe_load(text)
            except (ValueError, yaml.YAMLError):
                doc = None
            if doc is not None:
                doc = _mutate_document(doc, rng, draw(ODD_VALUES))
                text = json.dumps(doc) if name.endswith(".json") else yaml.safe_dump(doc)
                continue
        if how == "duplicate-key" and name.endswith(".yaml"):
            text = _repeat_a_key(text, rng)
            continue
        text = _mutate_text(text, rng, draw(st.text(max_size=12)))
    return text


def commands(kind: str, path: Path, output: Path) -> list[list[str]]:
    """The commands that read a file of ``kind``; the first of them writes ``output``."""
    p = str(path)
    if kind.startswith("topology"):
        return [["plan", "--topology", p, "--traffic", "all-to-all", "--algorithm", "dsatur", "--output", str(output)],
                ["topology", "show", p], ["bound", "--topology", p, "--traffic", "all-to-all"]]
    if kind.startswith("traffic"):
        topo = "hierarchical:d1=2,d2=2,c1=100Mbit/s,c2=200Mbit/s"
        return [["plan", "--topology", topo, "--traffic", p, "--algorithm", "round-robin", "--output", str(output)],
                ["bound", "--topology", topo, "--traffic", p, "--json"]]
    return [["simulate", "--schedule", p, "--model", "fluid", "--json"], ["check", p]]


def run_cli(argv: list[str]) -> tuple[int, str]:
    """Run the command in this process; any exception but argparse's exit is a failure."""
    stdout, stderr = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(stdout), contextlib.redirect_stderr(stderr):
        try:
            code = main(argv)
        except SystemExit as e:
            code = e.code
    return code, stderr.getvalue()


def check_survives(kind: str, text: str, tmp: Path) -> None:
    name = SEEDS[kind][0]
    path, output = tmp / name, tmp / "out.json"
    path.write_text(text, encoding="utf-8", errors="surrogatepass")
    TRIED[kind] = TRIED.get(kind, 0) + 1
    for argv in commands(kind, path, output):
        code, err = run_cli(argv)
        assert code in (0, 1, 2), (argv, code, err)
        assert "Traceback" not in err and "panicked" not in err, (argv, err)
        if code == 2:
            assert err.startswith("liquidsched: error: "), (argv, err)
    if output.exists():
        json.loads(output.read_text())  # whole, never half-written
        output.unlink()
    leftovers = [p.name for p in tmp.iterdir() if p.name not in (name,)]
    assert not leftovers, leftovers  # no temporary file left behind


@pytest.mark.parametrize("kind", list(SEEDS))
def test_the_seeds_are_valid(kind, tmp_path):
    name, text = SEEDS[kind]
    path, output = tmp_path / name, tmp_path / "out.json"
    path.write_text(text)
    for argv in commands(kind, path, output):
        assert run_cli(argv)[0] == 0, argv


@pytest.mark.parametrize("kind", list(SEEDS))
def test_mutated_files_never_crash_the_cli(kind, tmp_path_factory):
    tmp = tmp_path_factory.mktemp(kind)

    @settings(max_examples=EXAMPLES, deadline=None, database=None,
              suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
    @given(mutated(kind))
    def survives(text: str) -> None:
        check_survives(kind, text, tmp)

    survives()


def test_report_inputs_tried():
    """Print (with ``-s``) and record how many mutated inputs the run tried."""
    total = sum(TRIED.values())
    report = os.environ.get("LIQUIDSCHED_FUZZ_REPORT")
    if report:
        Path(report).write_text(json.dumps({"inputs": total, "by_kind": TRIED, "examples_per_kind": EXAMPLES},
                                           indent=2) + "\n")
    print(f"\nfuzz: {total} mutated inputs tried ({', '.join(f'{k} {n}' for k, n in TRIED.items())})")

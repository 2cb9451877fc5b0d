"""The one reader of input files (:mod:`liquidsched.io.files`): every file-reading path of the
package goes through it, and it refuses what is not a regular file, what is larger than the cap
and what is not UTF-8 text, each in one line naming the file; strict traffic files."""

from __future__ import annotations

import io
import json
import os
import re
from pathlib import Path

import pytest
import yaml
from hypothesis import given, settings
from hypothesis import strategies as st

from liquidsched.errors import InputError, TrafficError
from liquidsched.io import files
from liquidsched.io.fabric import MAX_RANKS, read_host_list
from liquidsched.io.files import DEFAULT_MAX_INPUT_BYTES, parse_document, read_document, read_text
from liquidsched.traffic import load_traffic
from .cli_run import one_line_error, run

PACKAGE = Path(files.__file__).resolve().parents[1]

#: Reads that are not of a user's file, each with why it need not go through the entry point.
INTERNAL_READS = {
    "execute/worker.py": "the job file the package itself wrote for its worker",
    "execute/pingpong.py": "the job file the package itself wrote for its worker",
    "execute/steady_worker.py": "the job file the package itself wrote for its worker",
    "execute/launch.py": "/proc/PID/stat of its own children",
    "execute/memory.py": "/proc/meminfo",
    "execute/launcher.py": "the result file its own worker wrote",
    "execute/exchange.py": "the result file its own worker wrote",
    "simgrid/platform_runner.py": "/proc/self/maps",
    "simgrid/simulation_runner.py": "the job file the package itself wrote for the SimGrid runner",
    "emulate/namespaces.py": "the state file `netem up` wrote under /run",
    "io/output.py": "the writer (appends to a device or FIFO it was given as --output)",
}
READ_CALL = re.compile(r"\bopen\(|\.read_text\(|\.read_bytes\(|\bjson\.load\(|\byaml\.(?:safe_)?load\(|"
                       r"\bnp\.(?:load|loadtxt|genfromtxt|fromfile)\(|\bcsv\.reader\(open|\bET\.parse\(|"
                       r"\bos\.read\(|\bmmap\.")


# -- one entry point ---------------------------------------------------------------------------


def test_no_module_reads_a_file_but_through_the_entry_point():
    found = []
    for path in sorted(PACKAGE.rglob("*.py")):
        name = path.relative_to(PACKAGE).as_posix()
        if name == "io/files.py" or name in INTERNAL_READS:
            continue
        for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
            code = line.split("#", 1)[0]
            if READ_CALL.search(code) and "os.open(os.devnull" not in code:
                found.append(f"{name}:{number}: {line.strip()}")
    assert not found, "read through liquidsched.io.files.read_text instead:\n" + "\n".join(found)


def test_the_internal_reads_allowed_still_exist():
    # An entry of INTERNAL_READS whose read is gone would let a new user read through unseen.
    for name in INTERNAL_READS:
        text = (PACKAGE / name).read_text(encoding="utf-8")
        assert READ_CALL.search(text), name


def test_yaml_is_loaded_by_libyaml_and_still_refuses_duplicate_keys():
    if getattr(yaml, "__with_libyaml__", False):
        assert issubclass(files._StrictYamlLoader, yaml.CSafeLoader)
    assert parse_document("a: {b: 1, c: [1, 2]}\n", "x.yaml") == {"a": {"b": 1, "c": [1, 2]}}
    with pytest.raises(InputError, match=r"^x\.yaml: key 'b' appears twice in one mapping at line 3$"):
        parse_document("a:\n  b: 1\n  b: 2\n", "x.yaml")
    # Safe: no Python object is constructed from a tag.
    with pytest.raises(InputError, match=r"^x\.yaml: not valid YAML"):
        parse_document("!!python/object/apply:os.system [echo]\n", "x.yaml")


def _full_loader(text):
    return yaml.load(text, Loader=files._StrictYamlLoader)  # noqa: S506 (a SafeLoader subclass)


YAML_DOCUMENTS = [
    "a: 1\nb: [1, 2.5, true, null, ~, 2001-12-14, 0x1F, 1_000, .inf, yes, 1:20, '7', \"x\", -0.0]\n",
    "nodes:\n- {id: a, kind: host}\n- {id: s, kind: switch}\nlinks: []\nrouting: {policy: shortest-path}\n",
    "{\"json\": [1, {\"nested\": {\"deep\": [[], {}]}}], \"s\": \"\\u00e9\"}",
    "- - - 1\n    - 2\n  - 3\n- {}\n",
    "? a\n: 1\n1: one\n1.5: x\nfalse: y\nnull: z\n",
    "plain scalar",
    "",
    "# only a comment\n",
]


@pytest.mark.parametrize("text", YAML_DOCUMENTS)
def test_yaml_read_from_events_is_what_the_full_loader_reads(text):
    assert files._load_yaml_events(text) == _full_loader(text)


@pytest.mark.parametrize("text", [
    "a: &x {b: 1}\nc: *x\n", "a: !!str 3\n", "a: !!binary aGVsbG8=\n", "? [1, 2]\n: 3\n",
    "<<: {a: 1}\nb: 2\n", "--- 1\n--- 2\n",
])
def test_anchors_tags_and_complex_keys_are_left_to_the_full_loader(text):
    with pytest.raises(files._Unusual):
        files._load_yaml_events(text)
    try:
        expected = _full_loader(text)
    except yaml.YAMLError:
        with pytest.raises(InputError, match="^x.yaml: not valid YAML"):
            parse_document(text, "x.yaml")
    else:
        assert parse_document(text, "x.yaml") == expected


def test_a_document_nested_too_deeply_is_one_line():
    with pytest.raises(InputError, match=r"^x\.yaml: nested too deeply$"):
        parse_document("[" * 5000 + "]" * 5000, "x.yaml")


def test_the_files_of_the_repository_read_from_events_as_by_the_full_loader():
    root = PACKAGE.parents[1]
    paths = [p for pattern in ("benchmarks/**/*.yaml", "docs/**/*.yaml", "tests/data/**/*.yaml", "tests/data/**/*.json")
             for p in root.glob(pattern)]
    assert paths
    for path in paths:
        text = path.read_text(encoding="utf-8")
        assert files._load_yaml_events(text) == _full_loader(text), path


@settings(max_examples=200)
@given(st.recursive(st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(max_size=8),
                    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=6), inner, max_size=4),
                    max_leaves=30),
       st.sampled_from([None, True, False]))
def test_any_plain_data_dumped_in_any_style_reads_back_from_events(data, flow):
    # Compared with the full loader, not with ``data``: PyYAML itself does not round-trip every
    # string (U+0085 is a line break to YAML).
    text = yaml.safe_dump(data, default_flow_style=flow, allow_unicode=True)
    assert files._load_yaml_events(text) == _full_loader(text)


# -- what is not a regular file ----------------------------------------------------------------


@pytest.fixture
def specials(tmp_path):
    """A device, a directory and a FIFO, each by a name every reader takes (its suffix)."""
    fifo = tmp_path / "fifo"
    os.mkfifo(fifo)
    return {"a character device": Path("/dev/zero"), "a directory": tmp_path, "a FIFO (named pipe)": fifo}


def named(target: Path, tmp_path: Path, name: str) -> Path:
    """A symbolic link called ``name`` to ``target``: readers dispatch on the suffix, and a link
    is followed to what it names."""
    link = tmp_path / "links" / name
    link.parent.mkdir(exist_ok=True)
    if link.is_symlink():
        link.unlink()
    link.symlink_to(target)
    return link


def _readers():
    from liquidsched.cli.hostfile import read_machine_map
    from liquidsched.execute.selection import SelectionTable
    from liquidsched.io.infiniband import load_infiniband
    from liquidsched.io.slurm import load_rates, load_slurm
    from liquidsched.io.topology import load_topology
    from liquidsched.schedule import Schedule
    from liquidsched.simgrid.read import read_platform

    return {
        "topology.yaml": load_topology,
        "topology.json": load_topology,
        "platform.xml": lambda p: read_platform(p, "liquidsched"),
        "traffic.json": load_traffic,
        "traffic.csv": load_traffic,
        "schedule.json": Schedule.load,
        "machines.map": lambda p: read_machine_map(str(p), ["t1"]),
        "topology.conf": lambda p: load_slurm(p, hosts="1GB/s", switches="1GB/s"),
        "rates.yaml": load_rates,
        "ibnetdiscover.txt": lambda p: load_infiniband(p, p),
        "hosts.txt": read_host_list,
        "selection.json": SelectionTable.load,
        "run.json": read_document,
    }


@pytest.mark.parametrize("name", list(_readers()))
@pytest.mark.parametrize("kind", ["a character device", "a directory", "a FIFO (named pipe)"])
def test_every_reader_refuses_what_is_not_a_regular_file_at_once(tmp_path, specials, name, kind):
    path = named(specials[kind], tmp_path, name)
    with pytest.raises(InputError) as e:
        _readers()[name](path)
    assert str(e.value) == f"{path}: is {kind}, not a regular file"


@pytest.mark.parametrize("argv", [
    ["bound", "--topology", "{zero}"],
    ["bound", "--topology", "two-switch", "--traffic", "{zero}"],
    ["check", "{zero}"],
    ["simulate", "--schedule", "{zero}"],
    ["hostfile", "--topology", "two-switch", "--map", "{zero}"],
    ["bound", "--topology", "slurm:{zero},hosts=1GB/s,switches=1GB/s"],
    ["bound", "--topology", "infiniband:{zero},{zero}"],
    ["pmpi-config", "--topology", "two-switch", "--hostfile", "{zero}", "--output", "{out}"],
    ["report", "--run", "{zero}", "--output", "{out}"],
], ids=" ".join)
def test_dev_zero_as_any_input_file_is_one_line(capsys, tmp_path, argv):
    out = tmp_path / "out.txt"
    argv = [a.format(zero="/dev/zero", out=out) for a in argv]
    code, _, err = run(capsys, *argv)
    one_line_error(code, err, "/dev/zero: is a character device, not a regular file")
    assert not out.exists()


# -- the size cap ------------------------------------------------------------------------------


def test_an_input_over_the_cap_is_refused_and_the_variable_raises_it(tmp_path, monkeypatch):
    path = tmp_path / "t.json"
    path.write_text(json.dumps({"transfers": [{"src": "t1", "dst": "r4", "size_bytes": 1}] * 100}))
    size = path.stat().st_size
    monkeypatch.setenv("LIQUIDSCHED_MAX_INPUT_BYTES", "1KiB")
    with pytest.raises(InputError) as e:
        load_traffic(path)
    assert str(e.value).startswith(f"{path}: {size:,} bytes, more than the 1,024 bytes (1 KiB) liquidsched reads")
    assert "LIQUIDSCHED_MAX_INPUT_BYTES" in str(e.value)
    monkeypatch.setenv("LIQUIDSCHED_MAX_INPUT_BYTES", f"{size}")
    assert len(load_traffic(path)) == 100
    monkeypatch.setenv("LIQUIDSCHED_MAX_INPUT_BYTES", "a lot")
    with pytest.raises(InputError, match="^LIQUIDSCHED_MAX_INPUT_BYTES: expected a size in bytes"):
        load_traffic(path)


def test_the_default_cap_is_64_mib_and_checked_before_reading(tmp_path, monkeypatch):
    monkeypatch.delenv("LIQUIDSCHED_MAX_INPUT_BYTES", raising=False)
    assert DEFAULT_MAX_INPUT_BYTES == 64 * 2**20
    path = tmp_path / "huge.yaml"
    with open(path, "wb") as f:  # sparse: nothing of it is read if the size is checked first
        f.truncate(DEFAULT_MAX_INPUT_BYTES + 1)
    with pytest.raises(InputError, match=r"huge\.yaml: 67,108,865 bytes, more than the 67,108,864 bytes \(64 MiB\)"):
        read_text(path)


def test_standard_input_is_read_and_capped_too(monkeypatch):
    monkeypatch.setattr("sys.stdin", io.TextIOWrapper(io.BytesIO(b"\xef\xbb\xbfa: 1\n")))
    assert read_document("-") == {"a": 1}
    monkeypatch.setenv("LIQUIDSCHED_MAX_INPUT_BYTES", "8")
    monkeypatch.setattr("sys.stdin", io.TextIOWrapper(io.BytesIO(b"a: 1\n" * 4)))
    with pytest.raises(InputError, match=r"^standard input: more than the 8 bytes liquidsched reads"):
        read_text("-")


# -- UTF-8 -------------------------------------------------------------------------------------


def test_a_binary_machine_map_is_one_line_naming_the_first_bad_byte(capsys, tmp_path):
    path = tmp_path / "machines.map"
    path.write_bytes(b"t1 node1\nt2 n\xe9ud2\n\x00\x01\x02")
    code, out, err = run(capsys, "hostfile", "--topology", "two-switch", "--map", path)
    one_line_error(code, err, f"{path}: not a UTF-8 text file: byte 0xe9 at offset 13 (line 2, column 5)")
    assert out == ""


@pytest.mark.parametrize("name", ["topology.yaml", "traffic.csv", "hosts.txt", "schedule.json"])
def test_every_reader_refuses_text_that_is_not_utf8(tmp_path, name):
    path = tmp_path / name
    path.write_bytes(b"\xff\xfe" + "a: 1\n".encode("utf-16-le"))
    with pytest.raises(InputError, match=rf"^{re.escape(str(path))}: not a UTF-8 text file: byte 0xff at offset 0 "
                                         r"\(line 1, column 1\)"):
        _readers()[name](path)


# -- host files: a cap on ranks -----------------------------------------------------------------


@pytest.mark.parametrize("line", ["t1:99999999999", "t1 slots=99999999999"])
def test_a_host_file_asking_for_billions_of_ranks_is_refused_naming_the_line(capsys, tmp_path, line):
    hosts, out = tmp_path / "hosts", tmp_path / "fabric"
    hosts.write_text(f"# two racks\nt2\n{line}\n")
    code, _, err = run(capsys, "pmpi-config", "--topology", "two-switch", "--hostfile", hosts, "--output", out)
    one_line_error(code, err, f"{hosts}:3: 100,000,000,000 ranks in all, more than the 1,048,576")
    assert not out.exists()


def test_the_rank_cap_counts_every_line_and_allows_exactly_the_cap(tmp_path):
    path = tmp_path / "hosts"
    path.write_text(f"a:{MAX_RANKS - 1}\nb\n")
    assert len(read_host_list(path)) == MAX_RANKS
    path.write_text(f"a:{MAX_RANKS - 1}\nb\nc slots=1\n")
    with pytest.raises(InputError, match=r":3: 1,048,577 ranks in all"):
        read_host_list(path)


# -- strict traffic files ----------------------------------------------------------------------


@pytest.mark.parametrize("suffix, dump", [(".json", json.dumps), (".yaml", yaml.safe_dump)])
def test_a_transfer_without_a_size_is_refused_naming_it(tmp_path, suffix, dump):
    path = tmp_path / f"t{suffix}"
    path.write_text(dump({"transfers": [{"src": "t1", "dst": "r4", "size_bytes": 5}, {"src": "t2", "dst": "r5"}]}))
    with pytest.raises(TrafficError, match=rf"^{re.escape(str(path))}: transfers\[1\] \(t2 -> r5\): missing field "
                                           r"'size_bytes'"):
        load_traffic(path)
    sizes = [(t.src, t.dst, t.size_bytes) for t in load_traffic(path, default_size_bytes=7)]
    assert sizes == [("t1", "r4", 5), ("t2", "r5", 7)]


def test_the_size_option_sizes_a_files_transfers_that_have_none(capsys, tmp_path):
    path = tmp_path / "t.json"
    path.write_text(json.dumps({"transfers": [{"src": "t1", "dst": "r4"}]}))
    code, _, err = run(capsys, "bound", "--topology", "two-switch", "--traffic", path)
    one_line_error(code, err, "transfers[0] (t1 -> r4): missing field 'size_bytes'", "--size")
    code, out, err = run(capsys, "bound", "--topology", "two-switch", "--traffic", path, "--size", "2MB", "--json")
    assert code == 0, err
    assert json.loads(out)["total_bytes"] == 2_000_000
    csv_path = tmp_path / "t.csv"
    csv_path.write_text("src,dst,size_bytes\nt1,r4,1000\n")
    code, _, err = run(capsys, "bound", "--topology", "two-switch", "--traffic", csv_path, "--size", "2MB")
    one_line_error(code, err, "--size", "the sizes of")


@pytest.mark.parametrize("text", [
    "\ufeffsrc,dst,size_bytes\nt1,r4,1000\nt2,r5,2KiB\n",
    "dst,src,size_bytes\nr4,t1,1000\nr5,t2,2KiB\n",
    "\ufeffsize_bytes, dst ,src\r\n1000,r4,t1\r\n2KiB,r5,t2\r\n",
])
def test_a_csv_of_rows_is_read_by_its_header_names(tmp_path, text):
    path = tmp_path / "t.csv"
    path.write_bytes(text.encode("utf-8"))
    assert [(t.src, t.dst, t.size_bytes) for t in load_traffic(path)] == [("t1", "r4", 1000), ("t2", "r5", 2048)]


@pytest.mark.parametrize("header, message", [
    ("src,dst", "line 1: no column 'size_bytes'"),
    ("src,dst,size_bytes,src", "line 1: column 'src' appears twice"),
    ("src,dst,size_bytes,weight", "line 1: unknown column 'weight'"),
])
def test_a_csv_header_of_rows_that_is_incomplete_is_refused(tmp_path, header, message):
    path = tmp_path / "t.csv"
    path.write_text(f"{header}\nt1,r4,1000\n")
    with pytest.raises(TrafficError, match=re.escape(f"{path}: {message}")):
        load_traffic(path)


def test_a_csv_matrix_is_still_a_matrix(tmp_path):
    path = tmp_path / "m.csv"
    path.write_text("\ufeff,r4,r5\nt1,1000,0\nt2,,5\n")
    assert [(t.src, t.dst, t.size_bytes) for t in load_traffic(path)] == [("t1", "r4", 1000), ("t2", "r5", 5)]


def test_a_number_of_more_digits_than_python_converts_is_one_line(tmp_path):
    """Python refuses to convert an integer of more than 4,300 digits (its guard against slow
    conversions): a document holding one is the reader's error, not an internal one."""
    from liquidsched.errors import InputError
    from liquidsched.io.files import read_document

    for name, text in [("t.json", '{"n": ' + "7" * 5000 + "}"), ("t.yaml", "n: " + "7" * 5000 + "\n")]:
        path = tmp_path / name
        path.write_text(text)
        with pytest.raises(InputError, match=r"t\.(json|yaml): a number of more than 4,300 digits"):
            read_document(path)

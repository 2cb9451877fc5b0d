"""Hostile inputs for every reader and every command of the command line, and the one checker
they all go through.

Used twice: by ``tests/test_fuzz.py`` (the fast part, a fixed, deterministic sample of every
class that ``make test`` runs) and by ``make fuzz`` (``python tests/fuzz_inputs.py``: every
input, at least a thousand distinct ones, counted per class, written to ``out/fuzz.json``).

Each input is a :class:`Case`: a command line, the files it needs created in its own directory
(regular files, FIFOs, directories, symbolic links, sparse files, device nodes), and what it may
legitimately end with. :func:`check` then holds every case to the same rules:

* exit status 2 for an error (1 only from ``check``), 0 only where the input is legitimately valid;
* an error is exactly one line on standard error, ``liquidsched: error: ...``, and nothing on
  standard output;
* no ``Traceback`` and no Rust ``panicked at`` anywhere;
* after a failure the case's directory is exactly as before: no output file, no temporary file,
  nothing of the user's replaced (bytes, mtime, kind and link target unchanged); after a success
  only the declared outputs changed, a symbolic link stayed a link, and a JSON output is whole;
* peak memory at most :data:`MEMORY_CAP_BYTES` (``ru_maxrss`` from ``os.wait4``, and the resident
  size polled while it runs: a runaway is killed, not waited for);
* it ends within its timeout (a FIFO opened for reading, a loop without end: killed, reported);
* with its reader gone (``| head -0``), a printing command ends with status 141 and says nothing;
* the commands that launch MPI or build networks (``run``, ``tune``, ``launch``, ``calibrate``,
  ``netem``) start no process at all: only inputs they must refuse are given to them, and a
  process they try to start is blocked and reported.

Every command runs in a child forked from a *zygote*: a Python process that imported liquidsched
and every command module once, so that a case costs its own work and not the start-up. The child
gets its own process group (killed whole on a timeout), its own standard streams as files, and
the case's directory as working directory; it calls :func:`liquidsched.cli.main` as the
``liquidsched`` script does, and an exception that escapes prints its traceback, as Python would.
"""

from __future__ import annotations

import functools
import hashlib
import io
import json
import os
import random
import re
import signal
import stat
import subprocess
import sys
import threading
import time
from collections import Counter, defaultdict
from dataclasses import dataclass, field
from pathlib import Path

#: A command that needs more than this is a failure (the issue's cap).
MEMORY_CAP_BYTES = 1 << 30
#: Resident size at which a child is killed rather than let grow (a little over the cap, so that
#: a kill is always a failure and the machine, shared, is spared).
KILL_RSS_BYTES = MEMORY_CAP_BYTES + (64 << 20)
#: Exit status of a child the launch guard stopped.
LAUNCH_BLOCKED = 97
#: Commands that launch MPI ranks or build emulated networks: given only inputs they must refuse,
#: and kept from starting any process.
GUARDED = {"run", "tune", "launch", "calibrate", "netem"}

ROOT = Path(__file__).resolve().parent.parent
DATA = ROOT / "tests" / "data"


# --------------------------------------------------------------------------------------------
# Cases

@dataclass(frozen=True)
class Case:
    """One hostile input: a command line and the files it needs.

    ``argv`` and file specs may say ``{d}``: the case's own directory. ``files`` are
    ``(name, kind, content)``: kind ``file`` (content bytes), ``fifo``, ``dir``, ``link``
    (content: the target), ``sparse`` (content: the size as decimal text), ``null`` and ``full``
    (character devices as /dev/null and /dev/full, made in the case's directory so that a
    writer that replaced one would replace only ours). ``expect`` is ``error`` (status 2, or 1
    from ``check``), ``valid`` (status 0) or ``any`` (either: a mutation that may stay valid).
    ``outputs`` are the names the command may write on success. ``stdin`` is a path (``{d}``
    allowed), /dev/null when empty.
    """

    cls: str
    group: str
    argv: tuple[str, ...]
    files: tuple[tuple[str, str, bytes], ...] = ()
    expect: str = "error"
    outputs: tuple[str, ...] = ()
    stdin: str = ""
    env: tuple[tuple[str, str], ...] = ()
    closed_stdout: bool = False  # standard output a pipe whose reader has gone (| head -0)

    @property
    def command(self) -> str:
        return self.argv[0] if self.argv else ""

    @property
    def guarded(self) -> bool:
        return self.command in GUARDED

    def key(self) -> str:
        """What makes two cases the same input (class and group aside)."""
        h = hashlib.sha256()
        h.update(json.dumps([self.argv, self.stdin, self.env, self.closed_stdout]).encode())
        for name, kind, content in self.files:
            h.update(f"\0{name}\0{kind}\0".encode())
            h.update(content)
        return h.hexdigest()

    def shown(self, d: str = "D") -> str:
        """The command line as a shell would take it, ``D`` standing for the case's directory."""
        words = [w.replace("{d}", d) for w in self.argv]
        text = "liquidsched " + " ".join(_quote(w) for w in words)
        if self.stdin:
            text += f" < {self.stdin.replace('{d}', d)}"
        if self.closed_stdout:
            text += " | head -0"
        made = [f"{name}={_describe(kind, content)}" for name, kind, content in self.files]
        return text + (f"   [{'; '.join(made)}]" if made else "")


def _quote(word: str) -> str:
    return word if word and re.fullmatch(r"[\w@%+=:,./{}-]+", word) else "'" + word.replace("'", "'\\''") + "'"


def _describe(kind: str, content: bytes) -> str:
    if kind == "file":
        head = content[:40]
        text = head.decode("utf-8", "backslashreplace")
        shown = "".join(c if c.isprintable() or c == " " else repr(c)[1:-1] for c in text)
        return f"{len(content)} bytes '{shown}{'…' if len(content) > 40 else ''}'"
    if kind == "link":
        return "link→" + content.decode()
    if kind == "sparse":
        return f"sparse {int(content) >> 20} MiB"
    return kind


def _file(name: str, content: bytes | str) -> tuple[str, str, bytes]:
    return (name, "file", content.encode() if isinstance(content, str) else content)


# --------------------------------------------------------------------------------------------
# Valid seeds: the files the hostile ones are made from

@functools.lru_cache(maxsize=1)
def seeds() -> dict[str, tuple[str, bytes]]:
    """File kind → (file name, valid content)."""
    import yaml

    from liquidsched.execute.selection import SelectionTable, measured_on
    from liquidsched.io.topology import topology_to_dict
    from liquidsched.schedulers import plan
    from liquidsched.simgrid.platform_file import platform_xml
    from liquidsched.topologies import build_topology
    from liquidsched.traffic import all_to_all

    net = build_topology("hierarchical:d1=2,d2=2,c1=100Mbit/s,c2=200Mbit/s")
    traffic = all_to_all(net, size_bytes=1_000_000)
    schedule = plan(net, traffic, "round-robin")
    transfers = [{"src": t.src, "dst": t.dst, "size_bytes": t.size_bytes} for t in traffic]
    hosts = net.hosts()
    topology = topology_to_dict(net)
    matrix = ",".join([""] + hosts) + "\n" + "\n".join(
        ",".join([s] + ["1MB" if s != d else "0" for d in hosts]) for s in hosts) + "\n"
    rows = "src,dst,size_bytes\n" + "".join(f"{t['src']},{t['dst']},{t['size_bytes']}\n" for t in transfers)
    crossbar = build_topology("crossbar:n=3")
    about = measured_on(crossbar, crossbar.hosts()[:3], "MPICH Version: 5.0.2", "emulated", "deep")
    table = SelectionTable(about, [
        {"size_bytes": 1024, "best": "alltoallv",
         "modes": {"alltoallv": {"median_s": 1e-5}, "paced": {"median_s": 1e-3}}},
        {"size_bytes": 1 << 20, "best": "paced",
         "modes": {"alltoallv": {"median_s": 2.0}, "paced": {"median_s": 1.5}}}])
    two = build_topology("two-switch").hosts()
    out = {
        "topology-yaml": ("net.yaml", yaml.safe_dump(topology, sort_keys=False)),
        "topology-json": ("net.json", json.dumps(topology, indent=1)),
        "topology-xml": ("net.xml", platform_xml(net)),
        "traffic-json": ("traffic.json", json.dumps({"transfers": transfers}, indent=1)),
        "traffic-yaml": ("traffic.yaml", yaml.safe_dump({"name": "a2a", "transfers": transfers})),
        "traffic-csv-rows": ("traffic.csv", rows),
        "traffic-csv-matrix": ("matrix.csv", matrix),
        "schedule-json": ("schedule.json", json.dumps(schedule.to_dict(), indent=1)),
        "selection-json": ("selection.json", json.dumps(table.to_dict(), indent=1)),
        "run-json": ("run.json", json.dumps({
            "network": "emulated", "liquid_throughput_Bps": 1.0e8, "predicted_ratio_to_bound": {"frames": 0.95},
            "metadata": {"topology": "two-switch", "traffic": "half-all-to-all", "algorithm": "liquid"},
            "modes": [{"mode": "frames", "median_s": 0.01, "min_s": 0.009, "max_s": 0.012, "ratio_to_bound": 0.9},
                      {"mode": "alltoallv", "median_s": 0.02, "min_s": 0.019, "max_s": 0.03, "ratio_to_bound": 0.45}]},
            indent=1)),
        "map": ("machines.txt", "# host machine\n" + "".join(f"{h} node{i:02d}\n" for i, h in enumerate(two))),
        "hostfile": ("hosts.txt", "".join(f"{h}:1\n" for h in two[:4]) + f"{two[4]} slots=2\n"),
        "slurm-conf": ("topology.conf", (DATA / "slurm" / "topology.conf").read_text()),
        "slurm-rates": ("rates.yaml", (DATA / "slurm" / "rates.yaml").read_text()),
        "ib-fabric": ("fabric.txt", (DATA / "infiniband" / "fabric.txt").read_text()),
        "ib-lfts": ("lfts.txt", (DATA / "infiniband" / "lfts.txt").read_text()),
    }
    return {k: (name, text.encode()) for k, (name, text) in out.items()}


SEED_NET = "hierarchical:d1=2,d2=2,c1=100Mbit/s,c2=200Mbit/s"


@dataclass(frozen=True)
class Slot:
    """A place where a command reads a file: ``argv`` with ``{F}`` for the file, the seed kind
    whose content is valid there, the files the other arguments need, and the outputs."""

    reader: str
    seed: str
    argv: tuple[str, ...]
    outputs: tuple[str, ...] = ()
    companions: tuple[str, ...] = ()  # seed kinds written beside it under their own names

    def make(self, path: str) -> tuple[str, ...]:
        return tuple(w.replace("{F}", path) for w in self.argv)


def slots() -> list[Slot]:
    """Every command's every file argument."""
    o = "{d}/"
    topo = [
        ("bound", "--topology", "{F}"), ("topology", "show", "{F}"),
        ("topology", "export", "{F}", "--output", o + "export.yaml"),
        ("plan", "--topology", "{F}", "--traffic", "all-to-all", "--output", o + "s.json"),
        ("simulate", "--topology", "{F}", "--traffic", "all-to-all", "--algorithm", "round-robin"),
        ("sweep", "--topology", "{F}", "--output", o + "classes.json"),
        ("steady", "scatter", "--topology", "{F}", "--output", o + "period.json"),
        ("hostfile", "--topology", "{F}", "--output", o + "hosts.out"),
        ("pmpi-config", "--topology", "{F}", "--output", o + "fabric.out"),
        ("report", "--topology", "{F}", "--traffic", "all-to-all", "--output", o + "report.html"),
        ("calibrate", "--topology", "{F}"), ("run", "--topology", "{F}", "--algorithm", "round-robin"),
        ("tune", "--topology", "{F}", "--algorithm", "round-robin", "--sizes", "1KiB", "--output", o + "table.json"),
        ("launch", "--topology", "{F}", "--", "true"), ("netem", "up", "--topology", "{F}"),
    ]
    out = []
    for argv in topo:
        outs = tuple(w[len(o):] for w in argv if w.startswith(o))
        kind = "topology-json" if argv[0] in ("sweep", "steady") else "topology-yaml"
        out.append(Slot("topology", kind, argv, outs))
    out += [
        Slot("topology-json", "topology-json", ("bound", "--topology", "{F}", "--traffic", "all-to-all")),
        Slot("topology-xml", "topology-xml", ("bound", "--topology", "{F}", "--traffic", "all-to-all")),
        Slot("slurm", "slurm-conf", ("bound", "--topology", "slurm:{F},hosts=1GB/s,switches=10GB/s")),
        Slot("slurm-rates", "slurm-rates", ("bound", "--topology", "slurm:{d}/topology.conf,rates={F}"),
             companions=("slurm-conf",)),
        Slot("infiniband", "ib-fabric", ("bound", "--topology", "infiniband:{F},{d}/lfts.txt"),
             companions=("ib-lfts",)),
        Slot("infiniband-lfts", "ib-lfts", ("bound", "--topology", "infiniband:{d}/fabric.txt,{F}"),
             companions=("ib-fabric",)),
        Slot("traffic", "traffic-csv-rows", ("bound", "--topology", SEED_NET, "--traffic", "{F}")),
        Slot("traffic", "traffic-json", ("plan", "--topology", SEED_NET, "--traffic", "{F}", "--output", o + "s.json"),
             ("s.json",)),
        Slot("traffic", "traffic-yaml", ("simulate", "--topology", SEED_NET, "--traffic", "{F}",
                                         "--algorithm", "round-robin")),
        Slot("traffic-matrix", "traffic-csv-matrix", ("bound", "--topology", SEED_NET, "--traffic", "{F}")),
        Slot("schedule", "schedule-json", ("check", "{F}")),
        Slot("schedule", "schedule-json", ("simulate", "--schedule", "{F}")),
        Slot("schedule", "schedule-json", ("simulate", "--schedule", "{F}", "--model", "fluid")),
        Slot("schedule", "schedule-json", ("report", "--schedule", "{F}", "--output", o + "report.html"),
             ("report.html",)),
        Slot("schedule", "schedule-json", ("run", "--schedule", "{F}")),
        Slot("map", "map", ("hostfile", "--topology", "two-switch", "--map", "{F}")),
        Slot("map", "map", ("hostfile", "--topology", "two-switch", "--map", "{F}", "--output", o + "hosts.out"),
             ("hosts.out",)),
        Slot("hostfile", "hostfile", ("pmpi-config", "--topology", "two-switch", "--hostfile", "{F}",
                                      "--output", o + "fabric.out"), ("fabric.out",)),
        Slot("run-json", "run-json", ("report", "--topology", "two-switch", "--run", "{F}",
                                           "--output", o + "report.html"), ("report.html",)),
        Slot("selection", "selection-json", ("run", "--topology", "crossbar:n=3", "--algorithm", "round-robin",
                                             "--selection", "{F}")),
        Slot("selection", "selection-json", ("launch", "--topology", "crossbar:n=3", "--selection", "{F}",
                                             "--", "true")),
    ]
    return out


def _companions(slot: Slot, seed: dict) -> tuple[tuple[str, str, bytes], ...]:
    return tuple(_file(seed[k][0], seed[k][1]) for k in slot.companions)


# --------------------------------------------------------------------------------------------
# The classes of hostile inputs

SPECIAL = ("dev-zero", "dev-null", "dev-urandom", "link-to-dev-zero", "fifo", "directory", "dangling-link",
           "missing", "binary", "sparse-2GiB", "empty", "blank", "stdin-dev-zero", "link-loop", "under-a-file")


def special_files(seed: dict) -> list[Case]:
    """Every special file as every file argument."""
    cases = []
    for slot in slots():
        suffix = Path(seed[slot.seed][0]).suffix
        name = "in" + suffix
        comp = _companions(slot, seed)
        for kind in SPECIAL:
            files, path, stdin, expect = (), "{d}/" + name, "", "error"
            if kind.startswith("dev-"):
                path = "/" + kind.replace("-", "/", 1)
            elif kind == "link-to-dev-zero":
                files = (("in" + suffix, "link", b"/dev/zero"),)
            elif kind == "fifo":
                files = ((name, "fifo", b""),)
            elif kind == "directory":
                files = ((name, "dir", b""),)
            elif kind == "dangling-link":
                files = ((name, "link", ("{d}/nowhere" + suffix).encode()),)
            elif kind == "missing":
                pass
            elif kind == "binary":
                rng = random.Random(len(cases))
                files = (_file(name, bytes(rng.randrange(256) for _ in range(4096))),)
            elif kind == "sparse-2GiB":
                files = ((name, "sparse", str(2 << 30).encode()),)
            elif kind in ("empty", "blank"):
                files = (_file(name, b"" if kind == "empty" else b"\n  \n\t\n"),)
                # An empty machine map renames nothing: valid.
                expect = "any" if slot.reader == "map" else "error"
            elif kind == "stdin-dev-zero":
                path, stdin = "-", "/dev/zero"
            elif kind == "link-loop":
                files = ((name, "link", b"{d}/loop"), ("loop", "link", ("{d}/" + name).encode()))
            elif kind == "under-a-file":
                files, path = (_file("file", b"a file\n"),), "{d}/file/" + name
            if slot.outputs and SPECIAL.index(kind) % 2:
                # Every other input finds the user's own file where the output goes: kept as it was.
                files += tuple(_file(o, b"the user's own bytes\n") for o in slot.outputs)
            cases.append(Case("special-file", f"{slot.reader}:{kind}", slot.make(path), comp + files, expect,
                              slot.outputs, stdin))
    return cases


def encodings(seed: dict) -> list[Case]:
    """Valid files with a UTF-8 BOM or CRLF line ends (valid: text is text), and broken ones:
    invalid UTF-8, UTF-16, a NUL byte, Latin-1."""
    cases = []
    for slot in slots():
        if slot.argv[0] in GUARDED:
            continue
        name, text = seed[slot.seed]
        comp = _companions(slot, seed)
        mid = len(text) // 2
        mid = text.rfind(b"\n", 0, mid) + 1
        variants = {
            "utf8-bom": (b"\xef\xbb\xbf" + text, "valid"),
            "crlf": (text.replace(b"\n", b"\r\n"), "valid"),
            "invalid-utf8": (text[:mid] + b"\xff\xfe\xc3(\n" + text[mid:], "error"),
            "utf16": (text.decode().encode("utf-16"), "error"),
            "nul-byte": (text[:mid] + b"\0" + text[mid:], "error"),
            "latin1": (text[:mid] + "# caf\xe9\n".encode("latin-1") + text[mid:], "error"),
            "truncated": (text[:mid - 1], "any"),
        }
        if slot.seed == "traffic-csv-rows":
            # Columns by their names, in any order.
            rows = [line.split(",") for line in text.decode().splitlines()]
            variants["columns-reordered"] = ("".join(f"{r[1]},{r[0]},{r[2]}\n" for r in rows).encode(), "valid")
            variants["bom-and-crlf"] = (b"\xef\xbb\xbf" + text.replace(b"\n", b"\r\n"), "valid")
        for kind, (content, expect) in variants.items():
            cases.append(Case("encoding", f"{slot.reader}:{kind}", slot.make("{d}/" + name),
                              comp + (_file(name, content),), expect, slot.outputs))
    return cases


def _doc_slots(seed: dict) -> list[Slot]:
    """The slots whose seed is a JSON or YAML document, one per reader and format."""
    chosen, seen = [], set()
    for slot in slots():
        if slot.argv[0] in GUARDED and slot.reader != "selection":
            continue
        name = seed[slot.seed][0]
        fmt = Path(name).suffix
        if fmt in (".json", ".yaml") and (slot.reader, slot.seed) not in seen:
            seen.add((slot.reader, slot.seed))
            chosen.append(slot)
    return chosen


def bombs(seed: dict) -> list[Case]:
    """Deep nesting, billion laughs, recursive aliases, duplicate keys, unsafe tags, huge,
    non-finite and negative numbers, strings where numbers go: as whole documents."""
    cases = []
    laughs = "a: &a [x, x, x, x, x, x, x, x, x]\n" + "".join(
        f"{chr(98 + i)}: &{chr(98 + i)} [{', '.join(['*' + chr(97 + i)] * 9)}]\n" for i in range(9))
    for slot in _doc_slots(seed):
        name, text = seed[slot.seed]
        is_yaml = name.endswith(".yaml")
        comp = _companions(slot, seed)
        docs = {
            "deep-list": "[" * 200_000 + "]" * 200_000,
            "deep-map": '{"a":' * 100_000 + "1" + "}" * 100_000,
            "huge-number": "1" + "0" * 100_000,
            "number-1e400": "1e400",
            "nan": "NaN" if not is_yaml else ".nan",
            "string": '"abc"',
            "null": "null",
            "list": "[]",
            "map": "{}",
        }
        if is_yaml and slot.reader == "topology":
            # Large but under the 64 MiB cap: read in seconds, not minutes.
            docs["50MB-comment"] = text.decode() + ("# " + "x" * 98 + "\n") * 500_000
            docs["10MB-list"] = text.decode() + "extra: [" + "0, " * 3_000_000 + "0]\n"
        if is_yaml:
            docs.update({
                "billion-laughs": laughs,
                "recursive-alias": "a: &a [*a]\n",
                "recursive-alias-2": "&a\nx: *a\n",
                "unsafe-tag": "!!python/object/apply:os.system ['touch pwned']\n",
                "python-name-tag": "a: !!python/name:os.system\n",
                "deep-block": "".join("  " * i + "a:\n" for i in range(5000)) + "  " * 5000 + "1\n",
                "merge-key": "base: &b {x: 1}\nother:\n  <<: *b\n  <<: *b\n",
                "tab-indent": "a:\n\tb: 1\n",
            })
        else:
            docs.update({
                "infinity": "Infinity",
                "trailing-garbage": text.decode() + "\n}}}",
                "two-documents": text.decode() + text.decode(),
                "single-quotes": text.decode().replace('"', "'"),
            })
        # Duplicate keys: the first key of the document repeated with another value.
        first = re.search(rb'^\s*\{?\s*"?([A-Za-z_]+)"?\s*:', text, re.M)
        if first:
            key = first.group(1).decode()
            if is_yaml:
                docs["duplicate-top-key"] = text.decode() + f"{key}: null\n"
            else:
                docs["duplicate-top-key"] = text.decode().replace("{", "{" + f'"{key}": null, ', 1)
        for kind, doc in docs.items():
            expect = "any" if kind == "50MB-comment" else "error"  # valid, but must not take minutes
            cases.append(Case("document-bomb", f"{slot.reader}{Path(name).suffix}:{kind}", slot.make("{d}/" + name),
                              comp + (_file(name, doc),), expect, slot.outputs))
    return cases


#: Values put in a document's numeric fields: certainly wrong, or legitimate in some place.
FIELD_BAD_NUMBER = ["nan", "inf", "-inf", "-1", "1e400", '"abc"', "null", "[]", "{}", "true", '""']
FIELD_ODD_NUMBER = ["0", "-0", "1e308", "1e-300", "1" + "0" * 30, "9007199254740993", '"1MB"', '"1e3"', "0.5"]
FIELD_ODD_STRING = ["null", "5", "[]", "{}", '""', '"\\u0000"', '"' + "x" * 10_000 + '"', "true"]


def _leaves(doc, prefix=()):
    if isinstance(doc, dict):
        for k, v in doc.items():
            yield from _leaves(v, prefix + (k,))
    elif isinstance(doc, list):
        for i, v in enumerate(doc[:2]):  # the first two items of a list stand for all
            yield from _leaves(v, prefix + (i,))
    else:
        yield prefix, doc


def _set(doc, path, value):
    for key in path[:-1]:
        doc = doc[key]
    doc[path[-1]] = value


def field_values(seed: dict) -> list[Case]:
    """Every numeric and string field of every JSON document reader replaced by awkward values.

    Only topology and traffic fields are held to ``error`` for a certainly wrong number: a
    schedule or a selection table carries fields a reader may ignore."""
    cases = []
    for slot in _doc_slots(seed):
        name, text = seed[slot.seed]
        if not name.endswith(".json"):
            continue
        comp = _companions(slot, seed)
        doc = json.loads(text)
        strict = slot.reader in ("topology", "topology-json", "traffic")
        marker = "\x00FUZZ\x00"
        for path, value in _leaves(doc):
            if isinstance(value, bool):
                continue
            if isinstance(value, (int, float)):
                values = [(v, "error" if strict else "any") for v in FIELD_BAD_NUMBER]
                values += [(v, "any") for v in FIELD_ODD_NUMBER]
            elif isinstance(value, str):
                values = [(v, "any") for v in FIELD_ODD_STRING]
            else:
                continue
            copy = json.loads(text)
            _set(copy, path, marker)
            template = json.dumps(copy)
            where = "/".join(str(p) for p in path)
            group = f"{slot.reader}:{re.sub(r'[0-9]+', 'N', where)}"
            for raw, expect in values:
                content = template.replace(json.dumps(marker), raw)
                cases.append(Case("field-value", group, slot.make("{d}/" + name), comp + (_file(name, content),),
                                  expect, slot.outputs))
            # The field left out (a transfer without size_bytes is not 1 MB).
            if isinstance(path[-1], str):
                copy = json.loads(text)
                parent = copy
                for key in path[:-1]:
                    parent = parent[key]
                del parent[path[-1]]
                cases.append(Case("field-value", group + ":missing", slot.make("{d}/" + name),
                                  comp + (_file(name, json.dumps(copy)),), "any", slot.outputs))
    return cases


def _mutate_text(text: str, rng: random.Random) -> str:
    alphabet = "{}[]:,-\"'#&*!|>\n\t 0123456789.eE+xyzé\u2028\ufeff"
    noise = "".join(rng.choice(alphabet) for _ in range(rng.randint(1, 12)))
    if not text:
        return noise
    a = rng.randrange(len(text))
    b = min(len(text), a + rng.randint(1, 40))
    action = rng.choice(["delete", "repeat", "replace", "insert", "swap-lines"])
    if action == "delete":
        return text[:a] + text[b:]
    if action == "repeat":
        return text[:b] + text[a:b] + text[b:]
    if action == "replace":
        return text[:a] + noise + text[b:]
    if action == "swap-lines":
        lines = text.splitlines(keepends=True)
        if len(lines) > 2:
            i = rng.randrange(len(lines) - 1)
            lines[i], lines[i + 1] = lines[i + 1], lines[i]
        return "".join(lines)
    return text[:a] + noise + text[a:]


def mutations(seed: dict, per_slot: int) -> list[Case]:
    """Random text mutations (deleted, repeated, replaced spans; swapped lines) of every seed in
    every slot that reads it: may stay valid, so any status, but never a crash."""
    cases = []
    for slot in slots():
        if slot.argv[0] in GUARDED:
            continue
        name, text = seed[slot.seed]
        comp = _companions(slot, seed)
        rng = random.Random(f"{slot.reader}{slot.argv}")
        for _ in range(per_slot):
            mutated = text.decode()
            for _ in range(rng.randint(1, 3)):
                mutated = _mutate_text(mutated, rng)
            cases.append(Case("mutation", slot.reader, slot.make("{d}/" + name),
                              comp + (_file(name, mutated.encode("utf-8", "surrogatepass")),), "any", slot.outputs))
    return cases


# Numbers in options. kind: size, time, count, rate, window, flops.
BAD_NUMBERS = ["", "abc", "nan", "NaN", "inf", "-inf", "-1", "1e400", "1..2", "--", "1 2"]
ODD_NUMBERS = ["0", "-0", "1e308", "1e-300", "99999999999999999999", "1ms", "4KiB", "1_000", "0x10", " 1", "1e3",
               "1.5"]
VALID_BY_KIND = {"time": {"1ms"}, "size": {"4KiB"}}
#: Options where a valid-looking value may still be refused for what it means (a period below
#: the optimum): any status for those.
NOT_ALWAYS_VALID = {"--fixed-period"}

NUMERIC_OPTIONS: list[tuple[tuple[str, ...], str, str, tuple[str, ...]]] = [
    # (base argv, option, kind, outputs)
    (("bound", "--topology", "two-switch"), "--size", "size", ()),
    (("bound", "--topology", "swiss-t1"), "--alloc", "alloc", ()),
    (("plan", "--topology", "two-switch"), "--size", "size", ()),
    (("plan", "--topology", "two-switch", "--algorithm", "random"), "--seed", "seed", ()),
    (("plan", "--topology", "two-switch", "--algorithm", "liquid"), "--time-limit", "time", ()),
    (("plan", "--topology", "two-switch", "--algorithm", "liquid"), "--node-limit", "count", ()),
    (("plan", "--topology", "two-switch", "--algorithm", "shuffle"), "--packet-bytes", "size", ()),
    (("plan", "--topology", "two-switch", "--algorithm", "shuffle"), "--window", "window", ()),
    (("plan", "--topology", "backbone:n1=3,n2=3", "--algorithm", "ggp"), "--overhead", "time", ()),
    (("plan", "--topology", "backbone:n1=3,n2=3", "--traffic", "random:seed=1,density=0.7", "--algorithm", "weighted"),
     "--overhead", "time", ()),
    (("plan", "--topology", "backbone:n1=3,n2=3", "--algorithm", "oggp"), "--overhead", "time", ()),
    (("plan", "--topology", "backbone:n1=3,n2=3", "--algorithm", "solstice"), "--overhead", "time", ()),
    (("simulate", "--topology", "two-switch", "--algorithm", "round-robin"), "--overhead", "time", ()),
    (("simulate", "--topology", "two-switch", "--algorithm", "round-robin", "--model", "fluid", "--policy", "window"),
     "--window", "window", ()),
    (("simulate", "--topology", "two-switch", "--algorithm", "round-robin"), "--size", "size", ()),
    (("hostfile", "--topology", "two-switch"), "--size", "size", ()),
    (("report", "--topology", "two-switch", "--output", "{d}/r.html"), "--size", "size", ("r.html",)),
    (("steady", "scatter", "--topology", "complete:n=4"), "--message-bytes", "size", ()),
    (("steady", "scatter", "--topology", "complete:n=4"), "--operations", "count", ()),
    (("steady", "scatter", "--topology", "complete:n=4"), "--fixed-period", "time", ()),
    (("steady", "reduce", "--topology", "complete:n=4"), "--task-flops", "flops", ()),
    (("pmpi-config", "--topology", "two-switch", "--output", "{d}/fabric.out"), "--latency", "time", ("fabric.out",)),
    # Commands that launch: only what they must refuse.
    (("run", "--topology", "two-switch", "--algorithm", "round-robin"), "--repeats", "count", ()),
    (("run", "--topology", "two-switch", "--algorithm", "round-robin"), "--warmup", "count", ()),
    (("run", "--topology", "two-switch", "--algorithm", "round-robin"), "--timeout", "time", ()),
    (("run", "--topology", "two-switch", "--algorithm", "round-robin"), "--size", "size", ()),
    (("run", "--topology", "two-switch", "--algorithm", "round-robin", "--emulate"), "--time-scale", "count", ()),
    (("run", "--topology", "two-switch", "--algorithm", "round-robin", "--emulate"), "--queue-bytes", "size", ()),
    (("run", "--topology", "two-switch", "--algorithm", "round-robin"), "--sizes", "size", ()),
    (("tune", "--topology", "two-switch", "--algorithm", "round-robin", "--output", "{d}/t.json"), "--sizes", "size",
     ()),
    (("tune", "--topology", "two-switch", "--algorithm", "round-robin", "--sizes", "1KiB",
      "--output", "{d}/t.json"), "--repeats", "count", ()),
    (("calibrate", "--topology", "two-switch"), "--repeats", "count", ()),
    (("calibrate", "--topology", "two-switch"), "--packet-bytes", "size", ()),
    (("calibrate", "--topology", "two-switch"), "--timeout", "time", ()),
    (("launch", "--topology", "two-switch"), "--timeout", "time", ()),
    (("netem", "up", "--topology", "two-switch"), "--time-scale", "count", ()),
    (("netem", "up", "--topology", "two-switch"), "--queue-packets", "count", ()),
]


def option_numbers() -> list[Case]:
    """Every number option of every command given numbers in every awkward form."""
    cases = []
    for base, option, kind, outs in NUMERIC_OPTIONS:
        guarded = base[0] in GUARDED
        values = [(v, "error") for v in BAD_NUMBERS]
        if not guarded:
            values += [(v, "valid" if v in VALID_BY_KIND.get(kind, ()) and option not in NOT_ALWAYS_VALID else "any")
                       for v in ODD_NUMBERS]
        elif kind == "count" and option in ("--repeats", "--time-scale", "--queue-packets"):
            values.append(("0", "error"))
        if option == "--packet-bytes" and not guarded:
            values += [("1", "error"), ("1B", "error")]  # 25 M packets: refused up front
        for value, expect in values:
            argv = base + (option, value)
            if base[0] == "launch":
                argv += ("--", "true")
            cases.append(Case("option-number", f"{base[0]} {option}", argv, (), expect, outs))
            if value and not value.startswith("-"):
                continue
            # A value that looks like an option, given as --option=VALUE.
            argv = base + (f"{option}={value}",) + (("--", "true") if base[0] == "launch" else ())
            cases.append(Case("option-number", f"{base[0]} {option}", argv, (), expect, outs))
    return cases


TOPOLOGY_PARAMS = {
    "two-switch": ["capacity_Bps"], "swiss-t1": ["capacity_Bps", "allocation"],
    "hierarchical": ["d1", "d2", "c1", "c2", "shared_uplinks", "buffer"],
    "fat-tree": ["k", "capacity_Bps", "oversubscription", "hosts_per_edge"],
    "torus": ["dims", "capacity_Bps", "hosts_per_router", "wrap"], "mesh": ["dims", "capacity_Bps", "hosts_per_router"],
    "crossbar": ["n", "capacity_Bps"], "backbone": ["n1", "n2", "card_Bps", "backbone_Bps"],
    "random": ["switches", "hosts", "extra_cables", "seed", "capacity_Bps", "heterogeneous", "shared"],
}
PLATFORM_PARAMS = {"complete": ["n", "bandwidth_Bps", "speed_flops"], "star": ["n", "bandwidth_Bps", "speed_flops"],
                   "chain": ["n", "bandwidth_Bps", "speed_flops"],
                   "tiers": ["nodes", "density", "extra_wan", "seed", "rate_scale"]}
SPEC_BAD = ["", "abc", "nan", "inf", "-1", "-inf", "1e400"]
SPEC_ODD = ["0", "-0", "1e308", "1e-300", "0B/s", "1e-300B/s", "99999999999", "1ms", "4KiB", "true", "1.5", "2,3"]
TRAFFIC_SPECS = {
    "scatter": {"root": ["", "nope", "s1", "r1"]}, "gather": {"root": ["", "nope", "s1"]},
    "random": {"seed": SPEC_BAD + ["0", "99999999999999999999"], "density": SPEC_BAD + ["0", "2", "1e-300"]},
    "permutation": {"seed": SPEC_BAD}, "skewed": {"seed": SPEC_BAD, "alpha": SPEC_BAD + ["0", "1e308"]},
    "half-all-to-all": {"include_self": ["", "maybe", "1"]},
}


def specs() -> list[Case]:
    """Built-in topologies, platforms and traffic generators with bad, repeated, unknown and
    empty parameters, and fabric specs without their files."""
    cases = []

    def add(group: str, argv: tuple[str, ...], expect: str) -> None:
        cases.append(Case("spec", group, argv, (), expect))

    for builders, command in ((TOPOLOGY_PARAMS, ("bound", "--topology")),
                              (PLATFORM_PARAMS, ("steady", "scatter", "--topology"))):
        for name, params in builders.items():
            for p in params:
                for v in SPEC_BAD:
                    add(f"{name}", command + (f"{name}:{p}={v}",), "error")
                for v in SPEC_ODD:
                    add(f"{name}", command + (f"{name}:{p}={v}",), "any")
            p = params[0]
            add(name, command + (f"{name}:{p}=4,{p}=5",), "error")
            add(name, command + (f"{name}:nope=1",), "error")
            add(name, command + (f"{name}:{p}",), "error")
            add(name, command + (f"{name}:=4",), "error")
            add(name, command + (f"{name}:{p}=4,",), "any")
            add(name, command + (f"{name}:,,",), "any")
            add(name, command + (f"{name}:",), "any")
            add(name, command + (f"{name.upper()}",), "any")
    for rate in ("bandwidth_Bps=0", "bandwidth_Bps=0B/s"):
        for name in ("complete", "star", "chain"):
            for what in ("scatter", "all-to-all", "reduce"):
                add(name, ("steady", what, "--topology", f"{name}:n=4,{rate}", "--task-flops", "1Mflop"), "error")
    for name, params in TRAFFIC_SPECS.items():
        for p, values in params.items():
            for v in values:
                expect = "error" if v in SPEC_BAD or v == "nope" or p == "include_self" and v != "1" else "any"
                add(f"traffic {name}", ("bound", "--topology", "two-switch", "--traffic", f"{name}:{p}={v}"), expect)
        add(f"traffic {name}", ("bound", "--topology", "two-switch", "--traffic", f"{name}:nope=1"), "error")
    for v in ("4,4,0,0,9", "-1", "99999999999", ",", "", "a,b", "0,0,0,0,0,0,0,0", "4", "1e3,4", "4,,4",
              "5,5,5,5,5,5,5,5"):
        add("alloc", ("bound", "--topology", "swiss-t1", "--alloc", v), "any" if v == "4" else "error")
    for spec in ("slurm:", "slurm:,hosts=1GB/s", "slurm:{d}/none.conf", "infiniband:", "infiniband:a",
                 "infiniband:a,b,c", "slurm:/dev/zero,hosts=1GB/s,hosts=2GB/s", ":", "", "-", "./", "two-switch:",
                 "nope", "slurm:/dev/null,speed=1"):
        add("fabric spec", ("bound", "--topology", spec), "any" if spec == "two-switch:" else "error")
    for option, values in (("--participants", ("", ",", "nope", "P0,P0", "P0")), ("--source", ("", "nope", "P9")),
                           ("--target", ("", "nope"))):
        what = "reduce" if option == "--target" else "scatter"
        for v in values:
            add(f"steady {option}", ("steady", what, "--topology", "complete:n=4", "--task-flops", "1Mflop", option, v),
                "any" if v in ("P0,P0", "P0") else "error")
    for v in ("", ",", "nope", "t1,nope", "t1,,r1"):
        add("pmpi-config --hosts", ("pmpi-config", "--topology", "two-switch", "--hosts", v, "--output", "-"), "error")
        add("calibrate --hosts", ("calibrate", "--topology", "two-switch", "--hosts", v), "error")
    for command in (("run", "--algorithm", "round-robin"), ("calibrate",),
                    ("tune", "--algorithm", "round-robin", "--sizes", "1KiB", "--output", "-")):
        for v in ("/tmp", "", "{d}/none", "/dev/null", "relative/none"):
            add(f"{command[0]} --launcher", command + ("--topology", "two-switch", "--launcher", v), "error")
    add("launch --launcher", ("launch", "--topology", "two-switch", "--launcher", "/tmp", "--", "true"), "error")
    # The input cap's variable: a bad value is an error naming it, not the default.
    for v in ("abc", "-1", "inf", "nan", "1e400", "0", "1ms", "99999999999999999999999GiB"):
        cases.append(Case("spec", "env LIQUIDSCHED_MAX_INPUT_BYTES", ("check", "{d}/s.json"),
                          (_file("s.json", b"{}"),), "error", (), "", (("LIQUIDSCHED_MAX_INPUT_BYTES", v),)))
    # alltoallv-scattered-0 is a mode (MPICH posts every message at once), so it is not here.
    for v in ("", "nope", "frames,nope", ",", "alltoallv-scattered-x", "alltoallv-scattered--1"):
        add("run --modes", ("run", "--topology", "two-switch", "--algorithm", "round-robin", "--modes", v), "error")
    add("steady reduce", ("steady", "reduce", "--topology", "complete:n=4"), "error")
    add("sweep", ("sweep", "--topology", "two-switch", "--output", "-"), "error")  # no host both sends and receives
    return cases


def hostfiles_and_maps() -> list[Case]:
    """Host files for pmpi-config, Slurm topology.conf files and machine maps for hostfile, line
    by line."""
    cases = []
    hostfile_lines = ["t1:99999999999", "t1 slots=99999999999", "t1:0", "t1:-1", "t1 slots=0", "t1 slots=-1",
                      "t1 slots=abc", "t1:abc", "t1:", ":4", "nope", "nope:2", "t1:1:2", "t1 slots=1e3",
                      "t1 slots=2 slots=3", "t1 slots", "t1 foo=2", "t1:1e308", "t1:nan", "t1:inf", "t1 slots=nan",
                      "t1:4294967297", "t1:" + "9" * 400, "t1" * 5000, "\0", "t1\0:2", "t1:2 # comment", "# only",
                      "t1 \t slots=2", "T1", "t1.local"]
    for line in hostfile_lines:
        expect = "any" if line in ("t1:2 # comment", "t1 \t slots=2", "# only", "t1 slots=1e3") else "error"
        if line == "# only":
            expect = "error"  # no ranks
        cases.append(Case("hostfile-map", "hostfile", (
            "pmpi-config", "--topology", "two-switch", "--hostfile", "{d}/hosts.txt", "--output", "{d}/fabric.out"),
            (_file("hosts.txt", line + "\n"),), expect, ("fabric.out",)))
    # Slurm topology.conf lines: hostlists that expand without end, rates, cycles, repeats.
    conf = [("SwitchName=s1 Nodes=n[1-99999999999]", "error"), ("SwitchName=s1 Nodes=n[0-9999999]", "error"),
            ("SwitchName=s1 Nodes=n[1-4],m[1-99999999]", "error"), ("SwitchName=s1 Nodes=n[4-1]", "error"),
            ("SwitchName=s1 Nodes=n[1-3,]", "error"), ("SwitchName=s1 Nodes=n[1-", "error"),
            ("SwitchName=s1 Nodes=n[]", "error"), ("SwitchName=s1 Nodes=n[a-c]", "error"),
            ("SwitchName=s1 Nodes=", "error"), ("SwitchName= Nodes=n1", "error"), ("Nodes=n1", "error"),
            ("SwitchName=s1 Switches=s1", "error"), ("SwitchName=s1 Switches=s2\nSwitchName=s2 Switches=s1", "error"),
            ("SwitchName=s1 Nodes=n1\nSwitchName=s1 Nodes=n2", "error"),
            ("SwitchName=s1 Nodes=n1\nSwitchName=s2 Nodes=n1", "error"),
            ("SwitchName=s1 Nodes=n[1-4] LinkSpeed=nan", "any"), ("SwitchName=s1 Nodes=n[1-4] LinkSpeed=-1", "any"),
            ("SwitchName=s1 Nodes=n[1-4] LinkSpeed=1e400", "any"), ("SwitchName=s1 Nodes=n[1-4] Nodes=m1", "error"),
            ("SwitchName=s1 Nodes=n[1-4] \\", "any"), ("SwitchName=s1 Nodes=n[1-4] Bogus=1", "any"),
            ("SwitchName=s1 Nodes=n[1-4]\nSwitchName=r Switches=s1,nope", "error"),
            ("SwitchName=s1 Nodes=n[" + "1" * 400 + "-" + "2" * 400 + "]", "error"),
            ("SwitchName=s1 Nodes=n[1-4]", "valid")]
    for text, expect in conf:
        for rates in (",hosts=1GB/s,switches=10GB/s", ",hosts=0B/s,switches=10GB/s", ",hosts=1GB/s"):
            e = expect if rates.startswith(",hosts=1GB/s,") else "any" if expect == "valid" else expect
            if rates == ",hosts=0B/s,switches=10GB/s":
                e = "error"
            argv = ("bound", "--topology", "slurm:{d}/t.conf" + rates)
            cases.append(Case("hostfile-map", "slurm topology.conf", argv, (_file("t.conf", text + "\n"),), e))
    map_lines = ["t1 m1", "nope m1", "t1", "t1 m1 extra", "t1 m1\nt1 m2", "t1 m1\nt2 m1", " m1", "t1 " + "m" * 100_000,
                 "t1 m1 # c", "# c", "t1\tm1", "t1 m\0", "t1 -oProxyCommand=x", "t1 m:1", "t1 m slots=3", "T1 m1",
                 "t1 \u00e9", "\ufefft1 m1", "t1 m1\r", "t1\u00a0m1"]
    for line in map_lines:
        # A machine name may be odd (long, a colon, a leading dash) and still be a name.
        expect = "any" if line in ("t1 m1", "t1 m1 # c", "# c", "t1\tm1", "t1 \u00e9", "\ufefft1 m1", "t1 m1\r",
                                   "t1 m1\nt2 m1", "t1 " + "m" * 100_000, "t1 -oProxyCommand=x", "t1 m:1",
                                   "t1\u00a0m1") else "error"
        for fmt in ("hydra", "openmpi", "slurm"):
            cases.append(Case("hostfile-map", "map", (
                "hostfile", "--topology", "two-switch", "--format", fmt, "--map", "{d}/machines.txt"),
                (_file("machines.txt", line + "\n"),), expect))
    return cases


OUTPUT_COMMANDS = [
    # (argv with {O}, option is --output/--plot/..., what a success writes)
    ("plan", ("plan", "--topology", "two-switch", "--output", "{O}")),
    ("plan --plot", ("plan", "--topology", "two-switch", "--plot", "{O}")),
    ("sweep", ("sweep", "--topology", "hierarchical:d1=2,d2=2", "--output", "{O}")),
    ("topology export", ("topology", "export", "two-switch", "--output", "{O}")),
    ("pmpi-config", ("pmpi-config", "--topology", "two-switch", "--output", "{O}")),
    ("hostfile", ("hostfile", "--topology", "two-switch", "--output", "{O}")),
    ("steady", ("steady", "scatter", "--topology", "star:n=4", "--output", "{O}")),
    ("report", ("report", "--topology", "two-switch", "--output", "{O}")),
    ("simulate --plot", ("simulate", "--topology", "two-switch", "--algorithm", "round-robin", "--plot", "{O}")),
    ("tune", ("tune", "--topology", "two-switch", "--algorithm", "round-robin", "--sizes", "1KiB", "--output", "{O}")),
    ("run", ("run", "--topology", "two-switch", "--algorithm", "round-robin", "--output", "{O}")),
    ("run --timeline", ("run", "--topology", "two-switch", "--algorithm", "round-robin", "--timeline", "{O}")),
]


def output_paths() -> list[Case]:
    """Output paths that cannot be written (error, nothing written, nothing of the user's
    touched), and paths that can (written through a link, never replacing it)."""
    cases = []
    for group, argv in OUTPUT_COMMANDS:
        guarded = argv[0] in GUARDED
        ext = (".png" if "--plot" in argv else ".html" if argv[0] == "report" else ".txt" if argv[0] == "hostfile"
               else ".fabric" if argv[0] == "pmpi-config" else ".json")
        bad = {
            "empty": ("", (), "error"),
            "directory": ("{d}/dir" + ext, (("dir" + ext, "dir", b""),), "error"),
            "dot": (".", (), "error"),
            "missing-dir": ("{d}/no/such/out" + ext, (), "error"),
            "under-a-file": ("{d}/file/out" + ext, (_file("file", b"user's file\n"),), "error"),
            # A full device takes the open and refuses the write only: a command that measures
            # first cannot know before it has run.
            "dev-full": ("{d}/full", (("full", "full", b""),), "any" if guarded else "error"),
            "dangling-link-missing-dir": ("{d}/link" + ext, (("link" + ext, "link", b"{d}/no/such/target"),), "error"),
            "trailing-slash": ("{d}/out" + ext + "/", (), "error"),
            "link-loop": ("{d}/link" + ext, (("link" + ext, "link", b"{d}/loop"),
                                             ("loop", "link", ("{d}/link" + ext).encode())), "error"),
            "long-name": ("{d}/" + "x" * 300 + ext, (), "error"),
            "control-character": ("{d}/a\x01b" + ext, (), "any"),
        }
        if "--plot" in argv:
            bad["plot-extension"] = ("{d}/plot.txt", (), "error")
            bad["plot-no-extension"] = ("{d}/plot", (), "error")
        for kind, (path, files, expect) in bad.items():
            if guarded and expect != "error" and kind != "dev-full":
                continue
            argv_out = tuple(w.replace("{O}", path) for w in argv)
            outs = (path[len("{d}/"):],) if expect == "any" else ()
            cases.append(Case("output-path", f"{group}:{kind}", argv_out, files, expect, outs))
        if guarded:
            continue
        good = {
            "dangling-link": ("{d}/link" + ext, (("link" + ext, "link", ("{d}/target" + ext).encode()),),
                              ("target" + ext,)),
            "link-to-file": ("{d}/link" + ext, (("link" + ext, "link", ("{d}/target" + ext).encode()),
                                                _file("target" + ext, b"old\n")), ("target" + ext,)),
            **({} if "--plot" in argv else {"dev-null": ("{d}/null", (("null", "null", b""),), ())}),
            "existing-file": ("{d}/out" + ext, (_file("out" + ext, b"old\n"),), ("out" + ext,)),
        }
        for kind, (path, files, outs) in good.items():
            argv_out = tuple(w.replace("{O}", path) for w in argv)
            cases.append(Case("output-path", f"{group}:{kind}", argv_out, files, "valid", outs))
        # The user's file and a failing input: kept as it was.
        for kind, (path, files) in {
            "user-file": ("{d}/mine" + ext, (_file("mine" + ext, b"the user's own bytes\n"),)),
            "user-link": ("{d}/link" + ext, (("link" + ext, "link", ("{d}/mine" + ext).encode()),
                                             _file("mine" + ext, b"the user's own bytes\n"))),
        }.items():
            failing = [w.replace("{O}", path) for w in argv]
            at = failing.index("--topology") + 1 if "--topology" in failing else failing.index("two-switch")
            failing[at] = "star:n=4,n=5" if argv[0] == "steady" else "crossbar:n=4,n=5"  # a key given twice
            failing = tuple(failing)
            cases.append(Case("output-path", f"{group}:{kind}+bad-topology", failing, files, "error"))
    return cases


PARSE_BASES = {
    "topology": ("topology", "show", "two-switch"), "bound": ("bound", "--topology", "two-switch"),
    "plan": ("plan", "--topology", "two-switch"), "simulate": ("simulate", "--topology", "two-switch"),
    "check": ("check", "{d}/s.json"), "sweep": ("sweep", "--topology", "two-switch", "--output", "-"),
    "steady": ("steady", "scatter", "--topology", "star:n=4"), "hostfile": ("hostfile", "--topology", "two-switch"),
    "pmpi-config": ("pmpi-config", "--topology", "two-switch", "--output", "-"),
    "report": ("report", "--topology", "two-switch", "--output", "-"),
    "run": ("run", "--topology", "two-switch", "--algorithm", "round-robin"),
    "tune": ("tune", "--topology", "two-switch", "--algorithm", "round-robin", "--sizes", "1KiB", "--output", "-"),
    "calibrate": ("calibrate", "--topology", "two-switch"), "launch": ("launch", "--topology", "two-switch"),
    "netem": ("netem", "status"),
}
CHOICES = {"plan": ["--algorithm", "--permutation"], "simulate": ["--model", "--policy", "--backend", "--algorithm"],
           "hostfile": ["--format"], "run": ["--progress", "--buffers", "--tcp", "--algorithm"],
           "tune": ["--buffers", "--tcp"], "topology": [], "launch": ["--buffers", "--tcp"]}


def option_parsing() -> list[Case]:
    """Unknown options, missing values, bad choices, missing required options, stray words."""
    cases = [Case("option-parse", "main", (), (), "error"), Case("option-parse", "main", ("nope",), (), "error"),
             Case("option-parse", "main", ("--nope",), (), "error"),
             Case("option-parse", "main", ("-x", "plan"), (), "error")]
    for command, base in PARSE_BASES.items():
        tail = ("--", "true") if command == "launch" else ()
        words = base[:2] if command in ("topology", "steady") else base[:1]
        add = lambda argv, e="error": cases.append(Case("option-parse", command, argv, (), e))  # noqa: E731
        add(base + ("--nope",) + tail)
        add(base + ("--nope=1",) + tail)
        add(base + ("-z",) + tail)
        add(base + ("stray",) + tail)
        add(words)
        add(words + ("--topology",))
        add(base + ("--json=yes",) + tail)
        add(base + ("--topology",))
        add(base + ("--output",))
        add(base + ("--topol",) + tail)  # an abbreviation with no value
        for option in CHOICES.get(command, []):
            add(base + (option, "nope") + tail)
            add(base + (option, "") + tail)
    cases.append(Case("option-parse", "topology", ("topology", "nope"), (), "error"))
    cases.append(Case("option-parse", "netem", ("netem", "nope"), (), "error"))
    cases.append(Case("option-parse", "steady", ("steady", "nope", "--topology", "star:n=4"), (), "error"))
    cases.append(Case("option-parse", "launch", ("launch", "--topology", "two-switch"), (), "error"))  # no program
    return cases


def closed_pipes(seed: dict) -> list[Case]:
    """Every command that prints, its reader gone before the first byte (``| head -0``): status
    141 and nothing on standard error, as a shell tool killed by SIGPIPE."""
    name, text = seed["schedule-json"]
    schedule = (_file(name, text),)
    printing = [
        ("topology", "export", "fat-tree:k=12", "--output", "-"), ("topology", "export", "two-switch", "--output", "-"),
        ("topology", "show", "two-switch"), ("topology", "show", "--json", "two-switch"), ("topology", "list"),
        ("bound", "--topology", "two-switch"), ("bound", "--topology", "two-switch", "--json"),
        ("plan", "--topology", "two-switch"), ("plan", "--topology", "two-switch", "--output", "-"),
        ("plan", "--topology", "fat-tree:k=4", "--traffic", "all-to-all", "--output", "-"),
        ("simulate", "--topology", "two-switch", "--algorithm", "round-robin"),
        ("simulate", "--schedule", "{d}/" + name, "--json"), ("check", "{d}/" + name),
        ("check", "--json", "{d}/" + name),
        ("sweep", "--topology", "hierarchical:d1=2,d2=2", "--output", "-"),
        ("steady", "scatter", "--topology", "star:n=4"), ("steady", "scatter", "--topology", "star:n=4", "--json"),
        ("hostfile", "--topology", "two-switch"), ("pmpi-config", "--topology", "two-switch", "--output", "-"),
        ("report", "--topology", "two-switch", "--output", "-"),
    ]
    cases = []
    for argv in printing:
        files = schedule if any("{d}" in w for w in argv) else ()
        cases.append(Case("closed-pipe", argv[0], argv, files, "pipe", closed_stdout=True))
    from liquidsched.cli.common import COMMANDS

    for command in COMMANDS:
        cases.append(Case("closed-pipe", command, (command, "--help"), (), "pipe", closed_stdout=True))
    cases.append(Case("closed-pipe", "main", ("--help",), (), "pipe", closed_stdout=True))
    return cases


def all_cases(mutations_per_slot: int = 30) -> dict[str, list[Case]]:
    """Every class of hostile input → its distinct cases (first of equal inputs kept)."""
    seed = seeds()
    classes = {
        "special-file": special_files(seed),
        "encoding": encodings(seed),
        "document-bomb": bombs(seed),
        "field-value": field_values(seed),
        "option-number": option_numbers(),
        "spec": specs(),
        "hostfile-map": hostfiles_and_maps(),
        "output-path": output_paths(),
        "option-parse": option_parsing(),
        "mutation": mutations(seed, mutations_per_slot),
        "closed-pipe": closed_pipes(seed),
    }
    seen: set[str] = set()
    out = {}
    for cls, cases in classes.items():
        out[cls] = []
        for case in cases:
            k = case.key()
            if k not in seen:
                seen.add(k)
                out[cls].append(case)
    return out


#: The hostile inputs issue 27 names, and one of each kind the long part found since: each a
#: class, a group prefix, words its command line holds in a row, and bytes one of its files holds.
NAMED: list[tuple[str, str, tuple[str, ...], bytes]] = [
    ("spec", "complete", ("complete:n=4,bandwidth_Bps=0",), b""),
    ("spec", "star", ("star:n=4,bandwidth_Bps=0B/s",), b""),
    ("spec", "chain", ("chain:n=4,bandwidth_Bps=0",), b""),
    ("option-number", "plan --overhead", ("weighted", "--overhead", "inf"), b""),
    ("option-number", "plan --overhead", ("ggp", "--overhead", "inf"), b""),
    ("option-number", "plan --overhead", ("oggp", "--overhead", "inf"), b""),
    ("option-number", "plan --overhead", ("solstice", "--overhead", "inf"), b""),
    ("option-number", "plan --overhead", ("ggp", "--overhead", "1ms"), b""),
    ("option-number", "plan --time-limit", ("--time-limit", "1ms"), b""),
    ("option-number", "pmpi-config --latency", ("--latency", "1ms"), b""),
    ("option-number", "plan --packet-bytes", ("--packet-bytes", "1"), b""),
    ("option-number", "run --repeats", ("--repeats", "0"), b""),
    ("option-number", "plan --time-limit", ("--time-limit=--",), b""),
    ("option-number", "simulate --window", ("--window", "99999999999999999999"), b""),
    ("special-file", "map:binary", ("--map",), b""),
    ("hostfile-map", "hostfile", ("pmpi-config",), b"t1:99999999999\n"),
    ("hostfile-map", "hostfile", ("pmpi-config",), b"t1 slots=99999999999\n"),
    ("hostfile-map", "map", ("hostfile",), b"t1 m\0"),
    ("special-file", "topology:dev-zero", ("bound",), b""), ("special-file", "traffic:dev-zero", ("bound",), b""),
    ("special-file", "schedule:dev-zero", ("check",), b""), ("special-file", "map:dev-zero", ("hostfile",), b""),
    ("special-file", "slurm:dev-zero", ("bound",), b""), ("special-file", "infiniband:dev-zero", ("bound",), b""),
    ("special-file", "hostfile:dev-zero", ("pmpi-config",), b""),
    ("special-file", "selection:link-loop", ("launch",), b""),
    ("spec", "crossbar", ("crossbar:n=4,n=5",), b""), ("spec", "complete", ("complete:n=4,n=5",), b""),
    ("spec", "traffic scatter", ("scatter:root=",), b""),
    ("encoding", "traffic:utf8-bom", ("bound",), b""), ("encoding", "traffic:columns-reordered", ("bound",), b""),
    ("encoding", "topology-xml:utf8-bom", ("bound",), b""),
    ("spec", "steady reduce", ("steady", "reduce", "--topology", "complete:n=4"), b""),
    ("spec", "steady --participants", ("--participants", ""), b""),
    ("spec", "pmpi-config --hosts", ("--hosts", ""), b""), ("spec", "run --launcher", ("--launcher", "/tmp"), b""),
    ("output-path", "plan:empty", ("plan",), b""), ("output-path", "plan:dangling-link", ("plan",), b"target.json"),
    ("output-path", "plan:dangling-link-missing-dir", ("plan",), b""),
    ("output-path", "plan:trailing-slash", ("plan",), b""),
    ("closed-pipe", "topology", ("fat-tree:k=12",), b""),
    ("document-bomb", "topology.yaml:huge-number", ("bound",), b""),
    ("document-bomb", "topology.yaml:10MB-list", ("bound",), b""),
    ("document-bomb", "topology.yaml:deep-list", ("bound",), b""),
    ("document-bomb", "run-json.json:null", ("report",), b""),
    ("field-value", "run-json:modes/N/mode:missing", ("report",), b""),
    ("field-value", "selection:sizes/N/best", ("run",), b'"best": []'),
]


def _holds(argv: tuple[str, ...], words: tuple[str, ...]) -> bool:
    n = len(words)
    return any(argv[i:i + n] == words for i in range(len(argv) - n + 1))


def named(classes: dict[str, list[Case]]) -> list[Case]:
    """The first case of each entry of :data:`NAMED` (an entry that matches none is an error)."""
    out = []
    for cls, group, words, content in NAMED:
        match = next((c for c in classes[cls] if c.group.startswith(group) and _holds(c.argv, words)
                      and (not content or any(content in f[2] for f in c.files))), None)
        if match is None:
            raise LookupError(f"no {cls} input {group} with {words} {content!r}")
        out.append(match)
    return out


def sample(classes: dict[str, list[Case]], per_class: dict[str, int] | int) -> dict[str, list[Case]]:
    """A deterministic sample: in each class, groups taken in turn (so every reader and command
    of the class appears), each group's cases in a seeded shuffle."""
    out = {}
    for cls, cases in classes.items():
        n = per_class if isinstance(per_class, int) else per_class.get(cls, 0)
        groups: dict[str, list[Case]] = defaultdict(list)
        for case in cases:
            groups[case.group.partition(":")[0]].append(case)
        for g, members in groups.items():
            random.Random(f"{cls}/{g}").shuffle(members)
        order = sorted(groups)
        chosen: list[Case] = []
        i = 0
        while len(chosen) < n and any(i < len(groups[g]) for g in order):
            for g in order:
                if i < len(groups[g]) and len(chosen) < n:
                    chosen.append(groups[g][i])
            i += 1
        out[cls] = chosen
    return out


# --------------------------------------------------------------------------------------------
# Running: a zygote forks one child per case

@dataclass
class Outcome:
    """How one command ended, as the zygote saw it, and what it printed."""

    status: int | None = None  # exit status, None when killed by a signal
    signal: int | None = None
    killed: str | None = None  # "timeout" or "memory" when the watcher killed it
    maxrss_bytes: int = 0
    seconds: float = 0.0
    stdout: str = ""
    stderr: str = ""


def _rss_bytes(pid: int) -> int:
    try:
        with open(f"/proc/{pid}/statm") as f:
            return int(f.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")
    except (OSError, ValueError, IndexError):
        return 0


def watch(pid: int, timeout: float) -> dict:
    """Wait for child ``pid``: its status, peak memory, and a kill of its process group when it
    outlives ``timeout`` or grows past :data:`KILL_RSS_BYTES`."""
    start = time.monotonic()
    killed, peak = None, 0
    while True:
        wpid, status, usage = os.wait4(pid, os.WNOHANG)
        if wpid:
            break
        peak = max(peak, _rss_bytes(pid))
        elapsed = time.monotonic() - start
        if killed is None and (peak > KILL_RSS_BYTES or elapsed > timeout):
            killed = "memory" if peak > KILL_RSS_BYTES else "timeout"
            _kill_group(pid)
        time.sleep(0.005 if elapsed < 0.5 else 0.02)
    _kill_group(pid)  # whatever it started
    return {"status": os.WEXITSTATUS(status) if os.WIFEXITED(status) else None,
            "signal": os.WTERMSIG(status) if os.WIFSIGNALED(status) else None,
            "killed": killed, "maxrss_bytes": max(peak, usage.ru_maxrss * 1024),
            "seconds": time.monotonic() - start}


def _kill_group(pid: int) -> None:
    try:
        os.killpg(pid, signal.SIGKILL)
    except (ProcessLookupError, PermissionError):
        # Not (yet) a group of its own: the child alone.
        try:
            os.kill(pid, signal.SIGKILL)
        except (ProcessLookupError, PermissionError):
            pass


def _forbid_launching() -> None:
    """Make any attempt to start a process end the child with :data:`LAUNCH_BLOCKED`, saying
    what it tried to start. By SystemExit, which no handler of an error takes, so that what
    the command made before (temporary files, directories) is cleaned up as it unwinds."""

    def blocked(*args, **kwargs):
        os.write(2, f"FUZZ: launch blocked: {args[:2]!r}\n".encode(errors="replace"))
        raise SystemExit(LAUNCH_BLOCKED)

    subprocess.Popen._execute_child = blocked  # type: ignore[method-assign]
    for name in ("system", "posix_spawn", "posix_spawnp", "execv", "execve", "execvp", "execvpe", "fork", "forkpty"):
        if hasattr(os, name):
            setattr(os, name, blocked)


def _child(req: dict) -> None:
    """In the forked child: become a command run by the ``liquidsched`` script."""
    code = 1
    try:
        os.setpgid(0, 0)
        os.chdir(req["cwd"])
        for fd, path, flags in ((0, req["stdin"] or os.devnull, os.O_RDONLY),
                                (1, req["stdout"], os.O_WRONLY | os.O_CREAT | os.O_TRUNC),
                                (2, req["stderr"], os.O_WRONLY | os.O_CREAT | os.O_TRUNC)):
            new = os.open(path, flags, 0o644)
            os.dup2(new, fd)
            os.close(new)
        if req.get("closed_stdout"):
            reader, writer = os.pipe()
            os.dup2(writer, 1)
            os.close(writer)
            os.close(reader)
        sys.stdin = io.TextIOWrapper(io.BufferedReader(io.FileIO(0, "r", closefd=False)))
        sys.stdout = io.TextIOWrapper(io.BufferedWriter(io.FileIO(1, "w", closefd=False)), encoding="utf-8")
        sys.stderr = io.TextIOWrapper(io.BufferedWriter(io.FileIO(2, "w", closefd=False)), encoding="utf-8",
                                      errors="backslashreplace", line_buffering=True)
        os.environ.update(req.get("env") or {})
        signal.signal(signal.SIGINT, signal.default_int_handler)
        signal.signal(signal.SIGPIPE, signal.SIG_IGN)  # as Python sets it up
        if req["guard"]:
            _forbid_launching()
        from liquidsched.cli import main
        try:
            result = main(req["argv"])
        except SystemExit as e:
            result = e.code
        if result is None:
            code = 0
        elif isinstance(result, int):
            code = result & 0xFF
        else:
            print(result, file=sys.stderr)
            code = 1
    except BaseException:  # noqa: B036 — what the interpreter would print for anything escaping
        import traceback
        try:
            traceback.print_exc()
        except BaseException:
            pass
        code = 1
    try:
        import atexit
        atexit._run_exitfuncs()
        sys.stdout.flush()
        sys.stderr.flush()
    except BaseException:
        pass
    os._exit(code)


def zygote() -> None:
    """Serve requests (one JSON line each on standard input): fork a child per request, answer
    with its outcome (one JSON line)."""
    import importlib

    from liquidsched.cli.common import COMMANDS

    import pkgutil

    import liquidsched

    for module in dict.fromkeys(m for m, _ in COMMANDS.values()):
        importlib.import_module(f"liquidsched.cli.{module}")
    # Every other module too, so that a case costs its own work only; one that cannot be
    # imported here is imported (and fails) in the case that needs it.
    for info in pkgutil.walk_packages(liquidsched.__path__, "liquidsched."):
        if info.name.endswith("__main__"):
            continue
        try:
            importlib.import_module(info.name)
        except BaseException:  # noqa: B036
            pass
    channel = os.fdopen(os.dup(1), "w")
    os.dup2(os.open(os.devnull, os.O_WRONLY), 1)
    requests = os.fdopen(os.dup(0), "r")
    os.dup2(os.open(os.devnull, os.O_RDONLY), 0)
    channel.write("ready\n")
    channel.flush()
    for line in requests:
        req = json.loads(line)
        sys.stdout.flush()
        sys.stderr.flush()
        pid = os.fork()
        if pid == 0:
            requests.close()
            channel.close()
            _child(req)
        try:
            os.setpgid(pid, pid)  # also here, so that a kill never finds the group not yet made
        except OSError:
            pass
        channel.write(json.dumps(watch(pid, req["timeout"])) + "\n")
        channel.flush()


class Runner:
    """One zygote, started once; :meth:`run` forks a child of it per case."""

    def __init__(self) -> None:
        env = dict(os.environ, OPENBLAS_NUM_THREADS="1", OMP_NUM_THREADS="1", COLUMNS="200", PYTHONHASHSEED="0")
        env.pop("LIQUIDSCHED_MAX_INPUT_BYTES", None)
        self.proc = subprocess.Popen([sys.executable, str(Path(__file__).resolve()), "--zygote"],
                                     stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True, env=env,
                                     cwd=str(ROOT), start_new_session=True)
        ready = self.proc.stdout.readline()
        if ready.strip() != "ready":
            raise RuntimeError(f"the fuzz zygote did not start: {ready!r}")
        self.lock = threading.Lock()

    def run(self, argv: list[str], cwd: Path, stdin: str, timeout: float, guard: bool, env: dict,
            closed_stdout: bool = False) -> Outcome:
        out, err = cwd.parent / (cwd.name + ".stdout"), cwd.parent / (cwd.name + ".stderr")
        req = {"argv": argv, "cwd": str(cwd), "stdin": stdin, "stdout": str(out), "stderr": str(err),
               "timeout": timeout, "guard": guard, "env": env, "closed_stdout": closed_stdout}
        with self.lock:
            self.proc.stdin.write(json.dumps(req) + "\n")
            self.proc.stdin.flush()
            answer = json.loads(self.proc.stdout.readline())
        o = Outcome(**answer)
        o.stdout = out.read_bytes().decode("utf-8", "backslashreplace")
        o.stderr = err.read_bytes().decode("utf-8", "backslashreplace")
        out.unlink()
        err.unlink()
        return o

    def close(self) -> None:
        self.proc.stdin.close()
        try:
            self.proc.wait(10)
        except subprocess.TimeoutExpired:
            self.proc.kill()


# --------------------------------------------------------------------------------------------
# Making a case's files, and what the directory held before and after

def materialise(case: Case, d: Path) -> None:
    d.mkdir(parents=True)
    for name, kind, content in case.files:
        p = d / name
        if kind == "file":
            p.write_bytes(content)
        elif kind == "fifo":
            os.mkfifo(p)
        elif kind == "dir":
            p.mkdir()
        elif kind == "link":
            os.symlink(content.decode().replace("{d}", str(d)), p)
        elif kind == "sparse":
            with open(p, "wb") as f:
                f.truncate(int(content))
        elif kind in ("null", "full"):
            os.mknod(p, 0o666 | stat.S_IFCHR, os.makedev(1, 3 if kind == "null" else 7))
        else:
            raise ValueError(kind)


def snapshot(d: Path) -> dict[str, tuple]:
    """Every entry under ``d`` (links not followed): kind, and for files size, mtime and digest;
    for links their target."""
    out = {}
    for root, dirs, files in os.walk(d):
        for name in dirs + files:
            p = Path(root) / name
            rel = str(p.relative_to(d))
            st = os.lstat(p)
            if stat.S_ISLNK(st.st_mode):
                out[rel] = ("link", os.readlink(p))
            elif stat.S_ISREG(st.st_mode):
                digest = ""
                if st.st_size <= 1 << 24:
                    digest = hashlib.sha256(p.read_bytes()).hexdigest()[:16]
                out[rel] = ("file", st.st_size, st.st_mtime_ns, digest)
            else:
                out[rel] = (stat.S_IFMT(st.st_mode), st.st_rdev)
    return out


#: Exit status of a command whose reader closed the pipe (128 + SIGPIPE), as a shell tool.
EXIT_CLOSED_PIPE = 141


def _allowed_statuses(case: Case) -> set[int]:
    errors = {1, 2} if case.command == "check" else {2}
    return {"error": errors, "valid": {0}, "any": errors | {0}, "pipe": {EXIT_CLOSED_PIPE}}[case.expect]


def check(case: Case, o: Outcome, before: dict, after: dict, d: Path, timeout: float) -> list[str]:
    """What the command did wrong with this input: an empty list when nothing."""
    problems = []
    both = o.stdout + o.stderr
    if o.killed == "timeout":
        problems.append(f"hang: killed after {timeout:g} s")
    elif o.killed == "memory":
        problems.append(f"memory: killed at {o.maxrss_bytes >> 20} MiB")
    elif o.maxrss_bytes > MEMORY_CAP_BYTES:
        problems.append(f"memory: peak {o.maxrss_bytes >> 20} MiB")
    launched = o.status == LAUNCH_BLOCKED and "FUZZ: launch blocked" in o.stderr
    if launched and case.expect == "error":
        line = next(x for x in o.stderr.splitlines() if x.startswith("FUZZ:"))
        problems.append(f"launched a process: {line[len('FUZZ: launch blocked: '):][:100]}")
    elif o.signal is not None and not o.killed:
        problems.append(f"killed by signal {o.signal}")
    # "Exception ignored": what Python prints for an exception at exit (a closed stream, a
    # finaliser), a traceback all the same.
    crashed = "Traceback (most recent call last)" in both or "Exception ignored" in both
    if crashed:
        last = [x for x in o.stderr.splitlines() if x.strip()][-1:] or ["?"]
        problems.append(f"traceback: {last[0][:120]}")
    if "panicked at" in both:
        problems.append("Rust panic")
    # A traceback's status and lines say nothing more about it.
    if o.killed is None and o.status != LAUNCH_BLOCKED and o.status is not None and not crashed:
        lines = o.stderr.strip().splitlines()
        internal = next((x for x in lines if "internal error" in x), None)
        if internal is not None:
            # The command's own word for an exception it did not expect: a traceback in one line.
            problems.append(f"internal error (exit {o.status}): {internal[:140]}")
        elif o.status not in _allowed_statuses(case):
            first = (lines or [""])[0][:140]
            problems.append(f"exit {o.status} (expected {case.expect})" + (f": {first}" if o.status else ""))
        if case.expect == "pipe" and o.stderr.strip():
            problems.append(f"standard error on a closed pipe: {' | '.join(o.stderr.splitlines()[:2])[:140]}")
        if case.expect != "pipe" and (o.status == 2 or (o.status == 1 and case.command != "check")):
            lines = o.stderr.splitlines()
            if len(lines) != 1:
                problems.append(f"error on {len(lines)} lines: {' | '.join(lines[:3])[:160]}")
            elif not re.match(r"liquidsched( [\w-]+)*: error: ", lines[0]):
                problems.append(f"error line not 'liquidsched: error: ...': {lines[0][:140]}")
            if o.stdout.strip():
                problems.append(f"standard output before the error: {o.stdout.strip()[:80]!r}")
    # A launch the guard stopped ended the child mid-run: what it left is not the command's doing.
    failed = o.status != 0 and not launched
    if failed:
        new = sorted(set(after) - set(before))
        gone = sorted(set(before) - set(after))
        changed = sorted(k for k in set(before) & set(after) if before[k] != after[k])
        if new:
            problems.append(f"left behind after a failure: {', '.join(new)}")
        if gone or changed:
            problems.append(f"user's files changed by a failure: {', '.join(gone + changed)}")
    elif not launched:
        outs = set(case.outputs)
        for k in before:
            if k not in after:
                problems.append(f"{k}: removed")
            elif before[k][0] == "link" and after[k] != before[k]:
                problems.append(f"{k}: a symbolic link replaced by {after[k][0]}")
            elif before[k] != after[k] and k not in outs and before[k][0] == "file":
                problems.append(f"{k}: changed, not an output")
            elif before[k][0] not in ("file", "link", "dir") and after[k][0] != before[k][0]:
                problems.append(f"{k}: a device replaced")
        extra = sorted(k for k in set(after) - set(before) if k not in outs)
        if extra:
            problems.append(f"files written besides the outputs: {', '.join(extra)}")
        for k in outs:
            p = d / k
            if k.endswith(".json") and p.is_file() and not os.path.islink(p):
                try:
                    json.loads(p.read_text())
                except ValueError:
                    problems.append(f"{k}: not whole JSON")
    return problems


@dataclass
class Failure:
    """An input the command did not answer as it should: its problems and command line."""

    cls: str
    group: str
    command: str
    problems: list[str]
    case: Case = field(repr=False)


def run_cases(cases: list[Case], base: Path, runners: list[Runner], timeout: float,
              progress=None) -> tuple[list[Failure], dict]:
    """Run and check every case (spread over the runners); the failures, and figures."""
    from concurrent.futures import ThreadPoolExecutor

    failures: list[Failure] = []
    peak = {"maxrss_bytes": 0, "seconds": 0.0}
    lock = threading.Lock()
    counter = iter(range(len(cases)))

    def one(case: Case, runner: Runner) -> None:
        d = base / f"c{next(counter)}"
        materialise(case, d)
        before = snapshot(d)
        argv = [w.replace("{d}", str(d)) for w in case.argv]
        o = runner.run(argv, d, case.stdin.replace("{d}", str(d)), timeout, case.guarded, dict(case.env),
                       case.closed_stdout)
        after = snapshot(d)
        problems = check(case, o, before, after, d, timeout)
        with lock:
            peak["maxrss_bytes"] = max(peak["maxrss_bytes"], o.maxrss_bytes)
            peak["seconds"] = max(peak["seconds"], o.seconds)
            if problems:
                failures.append(Failure(case.cls, case.group, case.shown(), problems, case))
            if progress:
                progress(case, problems)
        _remove(d)

    if len(runners) == 1:
        for case in cases:
            one(case, runners[0])
    else:
        free = list(runners)
        slots_lock = threading.Lock()

        def task(case: Case) -> None:
            with slots_lock:
                r = free.pop()
            try:
                one(case, r)
            finally:
                with slots_lock:
                    free.append(r)

        with ThreadPoolExecutor(len(runners)) as pool:
            list(pool.map(task, cases))
    return failures, peak


def _remove(d: Path) -> None:
    for root, dirs, files in os.walk(d, topdown=False):
        for name in files:
            os.unlink(os.path.join(root, name))
        for name in dirs:
            p = os.path.join(root, name)
            os.unlink(p) if os.path.islink(p) else os.rmdir(p)
    os.rmdir(d)


def summary(failures: list[Failure], limit: int = 40) -> str:
    """The failures, one line each: what failed and the command line."""
    lines = [f"{len(failures)} hostile inputs not answered as they should be:"]
    for f in failures[:limit]:
        lines.append(f"  [{f.group}] {'; '.join(f.problems)}\n      {f.command[:300]}")
    if len(failures) > limit:
        lines.append(f"  … and {len(failures) - limit} more")
    return "\n".join(lines)


def _problem_kind(problem: str) -> str:
    return re.split(r"[:(]", problem, maxsplit=1)[0].strip()


def markdown(failures: list[Failure], counts: dict[str, int], peak_bytes: int = 0) -> str:
    """The failures grouped by class and kind of problem, one example command each."""
    out = [f"# Fuzz failures: {len(failures)} of {sum(counts.values())} distinct hostile inputs", "",
           f"`make fuzz` (`python tests/fuzz_inputs.py`); peak memory of one command {peak_bytes >> 20} MiB "
           f"(cap {MEMORY_CAP_BYTES >> 20} MiB). `D` is the input's own directory.", ""]
    by_class: dict[str, list[Failure]] = defaultdict(list)
    for f in failures:
        by_class[f.cls].append(f)
    for cls, n in counts.items():
        fs = by_class.get(cls, [])
        out.append(f"## {cls}: {len(fs)} of {n} failed")
        kinds: dict[str, list[Failure]] = defaultdict(list)
        for f in fs:
            for p in f.problems:
                kinds[_problem_kind(p)].append(f)
        for kind, members in sorted(kinds.items(), key=lambda kv: -len(kv[1])):
            groups = Counter(m.group.partition(":")[0] for m in members)
            out.append(f"- **{kind}** × {len(members)} (in {', '.join(f'{g} {c}' for g, c in groups.most_common(8))})")
            # One example per distinct message (paths and numbers aside), at most five.
            seen: set[str] = set()
            for ex in members:
                said = next(p for p in ex.problems if _problem_kind(p) == kind)
                sig = re.sub(r"/\S+|\d+", "#", said)[:90]
                if sig in seen or len(seen) == 5:
                    continue
                seen.add(sig)
                out.append(f"  - `{ex.command[:400]}`")
                out.append(f"    → {'; '.join(ex.problems)[:300]}")
        out.append("")
    return "\n".join(out) + "\n"


def main(argv: list[str] | None = None) -> int:
    import argparse
    import tempfile

    parser = argparse.ArgumentParser(description="The long fuzz run: every hostile input, counted per class.")
    parser.add_argument("--zygote", action="store_true", help=argparse.SUPPRESS)
    parser.add_argument("--report", default="out/fuzz.json")
    parser.add_argument("--markdown", help="also write the failures grouped by class as Markdown")
    parser.add_argument("--jobs", type=int, default=2)
    parser.add_argument("--timeout", type=float, default=20.0)
    parser.add_argument("--mutations", type=int, default=30, help="random text mutations per file argument")
    parser.add_argument("--classes", help="comma-separated classes only")
    args = parser.parse_args(argv)
    if args.zygote:
        zygote()
        return 0
    classes = all_cases(args.mutations)
    if args.classes:
        classes = {c: v for c, v in classes.items() if c in args.classes.split(",")}
    counts = {c: len(v) for c, v in classes.items()}
    total = sum(counts.values())
    print(f"fuzz: {total} distinct hostile inputs: " + ", ".join(f"{c} {n}" for c, n in counts.items()), flush=True)
    runners = [Runner() for _ in range(args.jobs)]
    done = Counter()
    start = time.monotonic()

    def progress(case: Case, problems: list[str]) -> None:
        done[case.cls] += 1
        n = sum(done.values())
        if n % 100 == 0:
            print(f"  {n}/{total} after {time.monotonic() - start:.0f} s", flush=True)

    try:
        with tempfile.TemporaryDirectory(prefix="liquidsched-fuzz-") as tmp:
            cases = [c for cs in classes.values() for c in cs]
            failures, peak = run_cases(cases, Path(tmp), runners, args.timeout, progress)
    finally:
        for r in runners:
            r.close()
    failed = Counter(f.cls for f in failures)
    kinds = Counter(_problem_kind(p) for f in failures for p in f.problems)
    print(f"fuzz: {total} distinct hostile inputs in {time.monotonic() - start:.0f} s, {len(failures)} failed; "
          f"peak memory of one command {peak['maxrss_bytes'] >> 20} MiB")
    for c, n in counts.items():
        print(f"  {c:15} {n:5} inputs, {failed.get(c, 0):4} failed")
    print("  by problem: " + ", ".join(f"{k} {n}" for k, n in kinds.most_common()))
    report = {"inputs": total, "by_class": counts, "failed": len(failures), "failed_by_class": dict(failed),
              "failed_by_problem": dict(kinds), "peak_maxrss_bytes": peak["maxrss_bytes"],
              "memory_cap_bytes": MEMORY_CAP_BYTES, "timeout_s": args.timeout,
              "failures": [{"class": f.cls, "group": f.group, "command": f.command, "problems": f.problems}
                           for f in failures]}
    Path(args.report).parent.mkdir(parents=True, exist_ok=True)
    Path(args.report).write_text(json.dumps(report, indent=1) + "\n")
    if args.markdown:
        Path(args.markdown).write_text(markdown(failures, counts, peak["maxrss_bytes"]))
    return 1 if failures else 0


if __name__ == "__main__":
    sys.path.insert(0, str(ROOT / "tests"))
    sys.exit(main())

"""One hostile input (:class:`Case`), the valid seeds the hostile files are made from, and the
slots: every command's every file argument.
"""

from __future__ import annotations

import functools
import hashlib
import json
import re
from dataclasses import dataclass
from pathlib import Path

#: Commands that launch MPI ranks or build emulated networks: given only inputs they must refuse,
#: and kept from starting any process.
GUARDED = {"run", "tune", "launch", "calibrate", "netem"}

ROOT = Path(__file__).resolve().parents[2]
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

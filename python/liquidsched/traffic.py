"""Transfers, traffics and their generators.

A :class:`Transfer` is (src host, dst host, size in bytes); a :class:`Traffic` is a list of them.
A traffic knows nothing of routes: resolving a transfer to the resources of its path is the
network's job (:meth:`Traffic.resource_sets`).
"""

from __future__ import annotations

import csv
import io
import os
import random
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Iterable, Sequence

from .errors import TopologyError, TrafficError
from .io.fields import Fields, read_id, read_list, read_size, read_str
from .io.files import read_document
from .network import Network

#: Transfer size used when none is given: 1 MB, as in paper 001.
DEFAULT_SIZE_BYTES = 1_000_000


@dataclass(frozen=True)
class Transfer:
    src: str
    dst: str
    size_bytes: int = DEFAULT_SIZE_BYTES


class Traffic:
    """An ordered list of transfers, each with a unique name ``src->dst`` (``#k`` if repeated).

    Examples
    --------
    >>> t = Traffic([Transfer("a", "b", 10), Transfer("a", "b", 5)])
    >>> t.names
    ['a->b', 'a->b#2']
    >>> t.total_bytes
    15
    """

    def __init__(self, transfers: Iterable[Transfer], name: str = "traffic") -> None:
        self.transfers: tuple[Transfer, ...] = tuple(transfers)
        self.name = name
        seen: dict[tuple[str, str], int] = {}
        self.names: list[str] = []
        for t in self.transfers:
            k = seen.get((t.src, t.dst), 0) + 1
            seen[(t.src, t.dst)] = k
            self.names.append(f"{t.src}->{t.dst}" + (f"#{k}" if k > 1 else ""))
        self.index: dict[str, int] = {n: i for i, n in enumerate(self.names)}
        # Resource sets (and sorted lists) of the last network asked for: every scheduler and
        # bound needs them, and the Rust core takes the lists.
        self._resolved: tuple[Network, list[frozenset[int]], list[list[int]]] | None = None
        #: Values other modules derive from the (immutable) transfers and keep with them.
        self.derived: dict[str, Any] = {}

    def __len__(self) -> int:
        return len(self.transfers)

    def __iter__(self):
        return iter(self.transfers)

    def __getitem__(self, i: int) -> Transfer:
        return self.transfers[i]

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Traffic) and self.transfers == other.transfers

    def __repr__(self) -> str:
        return f"Traffic({self.name!r}, {len(self)} transfers, {self.total_bytes} bytes)"

    @property
    def total_bytes(self) -> int:
        return sum(t.size_bytes for t in self.transfers)

    def check(self, net: Network, source: str = "") -> None:
        """Every transfer goes from a sending host to a receiving host of ``net``, with a route.

        Raises
        ------
        TrafficError
            naming the transfer and what is wrong.
        """
        prefix = f"{source}: " if source else ""
        if not self.transfers:
            raise TrafficError(f"{prefix}traffic {self.name} has no transfer")
        for i, t in enumerate(self.transfers):
            where = f"{prefix}transfers[{i}]"
            for end, host, ok in (("src", t.src, "sends"), ("dst", t.dst, "receives")):
                node = net.nodes.get(host)
                if node is None or node.kind != "host":
                    raise TrafficError(f"{where}.{end}: unknown host {host!r}")
                if not getattr(node, ok):
                    raise TrafficError(f"{where}.{end}: host {host} does not {ok[:-1]} (its role is {node.role})")
            if not isinstance(t.size_bytes, int) or isinstance(t.size_bytes, bool) or t.size_bytes <= 0:
                raise TrafficError(f"{where}.size_bytes: expected a positive whole number, got {t.size_bytes!r}")
            try:
                net.route(t.src, t.dst)
            except TopologyError as e:
                raise TrafficError(f"{where} ({t.src}->{t.dst}): {e}") from None

    def resource_sets(self, net: Network) -> list[frozenset[int]]:
        """The resources of each transfer's path, in transfer order (checked once per network)."""
        return list(self._resolve(net)[1])

    def resource_lists(self, net: Network) -> list[list[int]]:
        """The resource indices of each transfer's path in increasing order, as the Rust core
        takes them. The lists are shared: do not modify them."""
        return self._resolve(net)[2]

    def _resolve(self, net: Network) -> tuple[Network, list[frozenset[int]], list[list[int]]]:
        if self._resolved is None or self._resolved[0] is not net:
            self.check(net)
            sets = [net.path_resources(t.src, t.dst) for t in self.transfers]
            self._resolved = (net, sets, [sorted(r) for r in sets])
        return self._resolved

    def to_dict(self) -> dict[str, Any]:
        return {"name": self.name,
                "transfers": [{"src": t.src, "dst": t.dst, "size_bytes": t.size_bytes} for t in self.transfers]}

    @classmethod
    def from_dict(cls, doc: Any, where: str = "traffic") -> Traffic:
        f = Fields(doc, where, TrafficError, ("format", "version", "name", "transfers"))
        transfers = []
        for i, item in enumerate(f.get("transfers", read_list)):
            t = Fields(item, f"{f.at('transfers')}[{i}]", TrafficError, ("src", "dst", "size_bytes"))
            transfers.append(Transfer(t.get("src", read_id), t.get("dst", read_id),
                                      t.get("size_bytes", read_size, DEFAULT_SIZE_BYTES)))
        return cls(transfers, f.get("name", read_str, "traffic"))


# -- host selection ------------------------------------------------------------------------------


def allocation_hosts(net: Network, allocation: Sequence[int]) -> list[str]:
    """The hosts an allocation selects: the first ``allocation[i]`` hosts of the i-th switch
    that has hosts (switches and hosts in declaration order), as in paper 000 §7.

    Examples
    --------
    >>> from liquidsched.topologies import swiss_t1
    >>> allocation_hosts(swiss_t1(), [2, 1, 0, 0, 0, 0, 0, 0])
    ['n1.1', 'n1.2', 'n2.1']
    """
    try:
        groups = list(net.host_groups().items())
    except TopologyError as e:
        raise TrafficError(f"allocation: {e}") from None
    if len(allocation) != len(groups):
        raise TrafficError(
            f"allocation: expected {len(groups)} counts (one per switch with hosts: "
            f"{', '.join(s for s, _ in groups)}), got {len(allocation)}"
        )
    chosen = []
    for i, (n, (switch, hosts)) in enumerate(zip(allocation, groups)):
        if not 0 <= n <= len(hosts):
            raise TrafficError(f"allocation[{i}]: switch {switch} has {len(hosts)} hosts, asked for {n}")
        chosen += hosts[:n]
    if not chosen:
        raise TrafficError("allocation: selects no host")
    return chosen


def _roles(net: Network, hosts: Sequence[str] | None) -> tuple[list[str], list[str]]:
    pool = list(net.hosts()) if hosts is None else list(hosts)
    for h in pool:
        if h not in net.nodes or net.nodes[h].kind != "host":
            raise TrafficError(f"unknown host {h!r}")
    return [h for h in pool if net.nodes[h].sends], [h for h in pool if net.nodes[h].receives]


# -- generators ----------------------------------------------------------------------------------


def half_all_to_all(net: Network, hosts: Sequence[str] | None = None, size_bytes: int = DEFAULT_SIZE_BYTES,
                    include_self: bool = True) -> Traffic:
    """Every sending host sends to every receiving host (paper 000 §7).

    A host that both sends and receives also sends to itself through its switch (the Swiss-T1
    convention: its transmitting processor sends to its receiving processor), so N such hosts
    give N² transfers; ``include_self=False`` leaves those out.
    """
    senders, receivers = _roles(net, hosts)
    return Traffic([Transfer(s, d, size_bytes) for s in senders for d in receivers
                    if include_self or s != d], "half-all-to-all")


def all_to_all(net: Network, hosts: Sequence[str] | None = None, size_bytes: int = DEFAULT_SIZE_BYTES) -> Traffic:
    """Every sending host sends to every other receiving host."""
    t = half_all_to_all(net, hosts, size_bytes, include_self=False)
    t.name = "all-to-all"
    return t


def scatter(net: Network, root: str, hosts: Sequence[str] | None = None,
            size_bytes: int = DEFAULT_SIZE_BYTES) -> Traffic:
    """``root`` sends one message to every other receiving host."""
    _, receivers = _roles(net, hosts)
    if root not in net.nodes:
        raise TrafficError(f"scatter: unknown root host {root!r}")
    return Traffic([Transfer(root, d, size_bytes) for d in receivers if d != root], f"scatter-{root}")


def gather(net: Network, root: str, hosts: Sequence[str] | None = None,
           size_bytes: int = DEFAULT_SIZE_BYTES) -> Traffic:
    """Every other sending host sends one message to ``root``."""
    senders, _ = _roles(net, hosts)
    if root not in net.nodes:
        raise TrafficError(f"gather: unknown root host {root!r}")
    return Traffic([Transfer(s, root, size_bytes) for s in senders if s != root], f"gather-{root}")


def permutation(net: Network, hosts: Sequence[str] | None = None, seed: int = 0,
                size_bytes: int = DEFAULT_SIZE_BYTES) -> Traffic:
    """Each sending host sends to one distinct receiving host, chosen by a seeded shuffle that
    avoids sending to itself where it can."""
    senders, receivers = _roles(net, hosts)
    rng = random.Random(seed)
    targets = list(receivers)
    for _ in range(100):
        rng.shuffle(targets)
        if all(s != d for s, d in zip(senders, targets)):
            break
    return Traffic([Transfer(s, d, size_bytes) for s, d in zip(senders, targets)], f"permutation-{seed}")


def random_matrix(net: Network, hosts: Sequence[str] | None = None, seed: int = 0, density: float = 1.0,
                  min_bytes: int = DEFAULT_SIZE_BYTES // 10, max_bytes: int = DEFAULT_SIZE_BYTES) -> Traffic:
    """A seeded random transfer matrix: each (sender, other receiver) pair is present with
    probability ``density``, its size uniform in ``[min_bytes, max_bytes]``."""
    if not 0 < density <= 1 or not 0 < min_bytes <= max_bytes:
        raise TrafficError("random matrix: need 0 < density <= 1 and 0 < min_bytes <= max_bytes")
    senders, receivers = _roles(net, hosts)
    rng = random.Random(seed)
    transfers = [Transfer(s, d, rng.randint(min_bytes, max_bytes))
                 for s in senders for d in receivers if s != d and rng.random() < density]
    return Traffic(transfers, f"random-{seed}")


# -- files ---------------------------------------------------------------------------------------


def load_traffic(path: str | os.PathLike) -> Traffic:
    """Read a traffic: JSON/YAML ``{transfers: [{src, dst, size_bytes}]}``, or CSV either as rows
    ``src,dst,size_bytes`` (with that header) or as a matrix whose first row names the receivers
    and first column the senders (an empty or 0 cell is no transfer)."""
    p = Path(path)
    if p.suffix.lower() != ".csv":
        return Traffic.from_dict(read_document(p, TrafficError), str(p))
    try:
        rows = [r for r in csv.reader(io.StringIO(p.read_text(encoding="utf-8"))) if any(c.strip() for c in r)]
    except FileNotFoundError:
        raise TrafficError(f"{p}: no such file") from None
    except (OSError, UnicodeDecodeError, csv.Error) as e:
        raise TrafficError(f"{p}: cannot read: {e}") from None
    if not rows:
        raise TrafficError(f"{p}: empty file")
    header = [c.strip() for c in rows[0]]
    if header[:3] == ["src", "dst", "size_bytes"]:
        return Traffic(_rows_to_transfers(p, rows[1:]), p.stem)
    return Traffic(_matrix_to_transfers(p, header, rows[1:]), p.stem)


def _csv_size(p: Path, line: int, column: int, text: str, allow_zero: bool) -> int:
    try:
        value = float(text) if text.strip() else 0.0
    except ValueError:
        value = -1.0
    if value < 0 or not value.is_integer() or (value == 0 and not allow_zero):
        raise TrafficError(f"{p}: line {line}, column {column}: expected a size in bytes, got {text!r}")
    return int(value)


def _rows_to_transfers(p: Path, rows: list[list[str]]) -> list[Transfer]:
    out = []
    for i, row in enumerate(rows, start=2):
        if len(row) < 3:
            raise TrafficError(f"{p}: line {i}: expected src,dst,size_bytes, got {','.join(row)!r}")
        out.append(Transfer(row[0].strip(), row[1].strip(), _csv_size(p, i, 3, row[2], False)))
    return out


def _matrix_to_transfers(p: Path, header: list[str], rows: list[list[str]]) -> list[Transfer]:
    receivers = header[1:]
    out = []
    for i, row in enumerate(rows, start=2):
        if len(row) - 1 > len(receivers):
            raise TrafficError(f"{p}: line {i}: {len(row) - 1} sizes but {len(receivers)} receivers in the header")
        sender = row[0].strip()
        for j, cell in enumerate(row[1:]):
            size = _csv_size(p, i, j + 2, cell, True)
            if size:
                out.append(Transfer(sender, receivers[j], size))
    return out


# -- by name -------------------------------------------------------------------------------------

GENERATORS = ("all-to-all", "half-all-to-all", "scatter", "gather", "permutation", "random")


def make_traffic(net: Network, spec: str, hosts: Sequence[str] | None = None,
                 size_bytes: int = DEFAULT_SIZE_BYTES) -> Traffic:
    """A traffic by generator name (``"scatter:root=h1"``, ``"random:seed=3,density=0.5"``) or a
    file path, checked against ``net``."""
    name, _, params = spec.partition(":")
    if name not in GENERATORS:
        if Path(spec).suffix.lower() in (".csv", ".json", ".yaml", ".yml") or Path(spec).exists():
            traffic = load_traffic(spec)
            if hosts is not None:
                keep = set(hosts)
                traffic = Traffic([t for t in traffic if t.src in keep and t.dst in keep], traffic.name)
            traffic.check(net, spec)
            return traffic
        raise TrafficError(f"unknown traffic {spec!r}: not a generator ({', '.join(GENERATORS)}) nor a file")
    kw: dict[str, str] = {}
    for item in filter(None, params.split(",")):
        k, eq, v = item.partition("=")
        if not eq:
            raise TrafficError(f"traffic {name}: expected key=value, got {item!r}")
        kw[k] = v
    try:
        if name == "all-to-all":
            traffic = all_to_all(net, hosts, size_bytes)
        elif name == "half-all-to-all":
            traffic = half_all_to_all(net, hosts, size_bytes, kw.pop("include_self", "true").lower() == "true")
        elif name in ("scatter", "gather"):
            root = kw.pop("root", None) or (net.senders()[0] if name == "scatter" else net.receivers()[0])
            traffic = (scatter if name == "scatter" else gather)(net, root, hosts, size_bytes)
        elif name == "permutation":
            traffic = permutation(net, hosts, int(kw.pop("seed", 0)), size_bytes)
        else:
            traffic = random_matrix(net, hosts, int(kw.pop("seed", 0)), float(kw.pop("density", 1.0)),
                                    max(1, size_bytes // 10), size_bytes)
    except ValueError as e:
        raise TrafficError(f"traffic {name}: {e}") from None
    if kw:
        raise TrafficError(f"traffic {name}: unknown parameter {next(iter(kw))!r}")
    traffic.check(net)
    return traffic

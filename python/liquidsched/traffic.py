"""Transfers, traffics and their generators.

A :class:`Transfer` is (src host, dst host, size in bytes); a :class:`Traffic` is a list of them.
A traffic knows nothing of routes: resolving a transfer to the resources of its path is the
network's job (:meth:`Traffic.resource_sets`).
"""

from __future__ import annotations

import math
import os
import random
from collections import Counter
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Iterable, Sequence

import numpy as np

from . import _core
from .errors import TopologyError, TrafficError
from .io.fields import Fields, read_id, read_list, read_size, read_str
from .io.files import EncodedItems, EncodedList, encoded_numbers, encoded_strings, read_document
from .io.traffic_columns import (index_dtype, numbered, occurrences, plain_columns, plain_size, read_only,
                                 size_column, size_dtype, valid_size)
from .io.traffic_csv import host_table, read_transfer_table
from .matrices import SPEC_FIELDS as MATRIX_FIELDS
from .moe import SPEC_FIELDS as MOE_FIELDS
from .network import Network
from .transfer_routes import cached_transfer_routes, resource_lists_of
from .units import MAX_SIZE_BYTES, parse_size

#: Transfer size used when none is given: 1 MB, as in paper 001.
DEFAULT_SIZE_BYTES = 1_000_000
#: The most transfers a generator makes: 2**24, sixteen times an all-to-all of a thousand hosts.
#: More (an all-to-all of ``crossbar:n=100000`` is 10**10) is refused before any is made, as
#: it would fill the memory first.
MAX_TRANSFERS = 2**24


@dataclass(frozen=True)
class Transfer:
    src: str
    dst: str
    size_bytes: int = DEFAULT_SIZE_BYTES


class Traffic:
    """An ordered list of transfers, each with a unique name ``src->dst`` (``#k`` if repeated).

    The transfers are kept as columns (the index of the source and destination host in a table
    of host names, and the size), so that a traffic of millions of transfers takes a few bytes
    each; :class:`Transfer` objects and names are made when asked for.
    :meth:`from_arrays` builds a traffic from the columns directly.

    Examples
    --------
    >>> t = Traffic([Transfer("a", "b", 10), Transfer("a", "b", 5)])
    >>> t.names
    ['a->b', 'a->b#2']
    >>> t.total_bytes
    15
    """

    def __init__(self, transfers: Iterable[Transfer], name: str = "traffic") -> None:
        given = tuple(transfers)
        hosts, src, dst = host_table([t.src for t in given], [t.dst for t in given])
        dtype = index_dtype(len(hosts))
        self._set_columns(hosts, src.astype(dtype), dst.astype(dtype), size_column([t.size_bytes for t in given]), name)
        # Kept as given, so that iteration returns these objects and check() sees bad sizes.
        self._transfers = given

    @classmethod
    def from_arrays(cls, hosts: Sequence[str], src: np.ndarray, dst: np.ndarray, size_bytes: int | np.ndarray,
                    name: str = "traffic") -> Traffic:
        """A traffic from columns: transfer ``i`` goes from ``hosts[src[i]]`` to ``hosts[dst[i]]``
        and carries ``size_bytes`` (one size for all, or one each).

        Examples
        --------
        >>> import numpy as np
        >>> t = Traffic.from_arrays(["a", "b"], np.array([0, 1]), np.array([1, 0]), 7)
        >>> list(t) == [Transfer("a", "b", 7), Transfer("b", "a", 7)]
        True
        """
        hosts = tuple(hosts)
        if len(set(hosts)) != len(hosts):
            raise TrafficError(f"traffic {name}: the host table names a host twice")
        src, dst = np.asarray(src), np.asarray(dst)
        if src.ndim != 1 or src.shape != dst.shape:
            raise TrafficError(f"traffic {name}: src and dst must be 1-d arrays of one length, got shapes "
                               f"{src.shape} and {dst.shape}")
        for end, column in (("src", src), ("dst", dst)):
            if len(column) and (column.dtype.kind not in "iu" or column.min() < 0 or column.max() >= len(hosts)):
                raise TrafficError(f"traffic {name}: {end} must hold indices into the {len(hosts)} hosts")
        if np.ndim(size_bytes) == 0:
            sizes = np.broadcast_to(np.asarray(size_bytes, dtype=size_dtype([size_bytes])), src.shape)
        else:
            given = np.asarray(size_bytes)
            sizes = size_column(given if given.dtype.kind in "iu" else list(given.tolist()))
            if sizes.shape != src.shape:
                raise TrafficError(f"traffic {name}: {len(sizes)} sizes for {len(src)} transfers")
        dtype = index_dtype(len(hosts))
        traffic = cls.__new__(cls)
        traffic._set_columns(hosts, src.astype(dtype, copy=False), dst.astype(dtype, copy=False), sizes, name)
        return traffic

    def _set_columns(self, hosts: tuple[str, ...], src: np.ndarray, dst: np.ndarray, sizes: np.ndarray,
                     name: str) -> None:
        self.name = name
        #: host names the columns index
        self.host_table = hosts
        self._src, self._dst, self._sizes = src, dst, sizes
        self._transfers: tuple[Transfer, ...] | None = None
        self._names: list[str] | None = None
        self._index: dict[str, int] | None = None
        self._checked: Network | None = None
        # Resource sets (and sorted lists) of the last network asked for: every scheduler and
        # bound needs them, and the Rust core takes the lists.
        self._resolved: tuple[Network, list[frozenset[int]], list[list[int]]] | None = None
        #: Values other modules derive from the (immutable) transfers and keep with them.
        self.derived: dict[str, Any] = {}

    # -- columns -------------------------------------------------------------------------------

    @property
    def src_index(self) -> np.ndarray:
        """Index in :attr:`host_table` of each transfer's source (read only)."""
        return read_only(self._src)

    @property
    def dst_index(self) -> np.ndarray:
        """Index in :attr:`host_table` of each transfer's destination (read only)."""
        return read_only(self._dst)

    @property
    def sizes(self) -> np.ndarray:
        """Each transfer's size in bytes: int64, or Python objects when one does not fit."""
        return read_only(self._sizes)

    @property
    def uniform_size(self) -> int | None:
        """The size of every transfer when they all have the same, else None."""
        if "uniform_size" not in self.derived:
            sizes = self._sizes
            same = len(sizes) > 0 and (sizes.strides == (0,) or bool(np.all(sizes == sizes[0])))
            self.derived["uniform_size"] = plain_size(sizes[0]) if same else None
        return self.derived["uniform_size"]

    # -- the list of transfers -----------------------------------------------------------------

    @property
    def transfers(self) -> tuple[Transfer, ...]:
        """The transfers as objects (made once, when first asked for)."""
        if self._transfers is None:
            hosts = self.host_table
            self._transfers = tuple(Transfer(hosts[s], hosts[d], plain_size(z))
                                    for s, d, z in zip(self._src.tolist(), self._dst.tolist(), self._sizes.tolist()))
        return self._transfers

    @property
    def names(self) -> list[str]:
        """Each transfer's unique name, ``src->dst`` then ``src->dst#2``, … for repeats."""
        if self._names is None:
            hosts = self.host_table
            pairs = [f"{hosts[s]}->{hosts[d]}" for s, d in zip(self._src.tolist(), self._dst.tolist())]
            occurrence = occurrences(self._src, self._dst, len(hosts))
            self._names = pairs if len(occurrence) == 0 or occurrence.max() == 1 else numbered(pairs, occurrence)
        return self._names

    @property
    def index(self) -> dict[str, int]:
        """Position of each transfer by name."""
        if self._index is None:
            self._index = {n: i for i, n in enumerate(self.names)}
        return self._index

    def __len__(self) -> int:
        return len(self._src)

    def __iter__(self):
        return iter(self.transfers)

    def __getitem__(self, i: int) -> Transfer:
        if self._transfers is not None or isinstance(i, slice):
            return self.transfers[i]
        i = range(len(self))[i]  # negative indices and bounds as a tuple has them
        return Transfer(self.host_table[self._src[i]], self.host_table[self._dst[i]], plain_size(self._sizes[i]))

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, Traffic):
            return False
        if len(self) != len(other):
            return False
        if self._transfers is not None and other._transfers is not None:
            return self._transfers == other._transfers
        if self._sizes.dtype == object or other._sizes.dtype == object:
            return self.transfers == other.transfers
        # Map the other's host table onto ours (-1 for names we do not have), then compare columns.
        ours = {h: i for i, h in enumerate(self.host_table)}
        onto = np.array([ours.get(h, -1) for h in other.host_table] or [0], dtype=np.int64)
        return bool(np.array_equal(onto[other._src], self._src) and np.array_equal(onto[other._dst], self._dst)
                    and np.array_equal(other._sizes, self._sizes))

    def __repr__(self) -> str:
        return f"Traffic({self.name!r}, {len(self)} transfers, {self.total_bytes} bytes)"

    @property
    def total_bytes(self) -> int:
        sizes, n = self._sizes, len(self)
        if n and sizes.strides == (0,):
            return plain_size(sizes[0]) * n
        if n and sizes.dtype != object and int(np.abs(sizes).max()) * n < 2 ** 63:
            return int(sizes.sum(dtype=np.int64))
        return sum(plain_size(z) for z in sizes.tolist())

    # -- against a network ---------------------------------------------------------------------

    def check(self, net: Network, source: str = "") -> None:
        """Every transfer goes from a sending host to a receiving host of ``net``, with a route.

        Checked once per network: hosts and sizes column by column, routes once per host pair
        (a composed route was checked with its pair of switches when ``net`` was built).

        Raises
        ------
        TrafficError
            naming the first transfer that is wrong, and what is wrong.
        """
        if self._checked is net:
            return
        prefix = f"{source}: " if source else ""
        if not len(self):
            raise TrafficError(f"{prefix}the traffic {self.name!r} has no transfer")
        bad = _first_invalid(self, net)
        if bad is not None:
            self._check_one(net, bad, prefix)
            raise TrafficError(f"{prefix}transfers[{bad}] ({self[bad].src}->{self[bad].dst}): invalid")
        self._checked = net

    def _check_one(self, net: Network, i: int, prefix: str) -> None:
        """Check transfer ``i`` alone; raise naming what is wrong with it."""
        t = self[i]
        where = f"{prefix}transfers[{i}]"
        for end, host, ok in (("src", t.src, "sends"), ("dst", t.dst, "receives")):
            node = net.nodes.get(host)
            if node is None or node.kind != "host":
                raise TrafficError(f"{where}.{end}: unknown host {host!r}")
            if not getattr(node, ok):
                raise TrafficError(f"{where}.{end}: host {host} does not {ok[:-1]} (its role is {node.role})")
        if not valid_size(t.size_bytes):
            raise TrafficError(f"{where}.size_bytes: expected a whole number of bytes from 1 to {MAX_SIZE_BYTES:,}, "
                               f"got {t.size_bytes!r}")
        try:
            net.route(t.src, t.dst)
        except TopologyError as e:
            source = f"{net.source}: " if net.source else ""
            raise TrafficError(f"{where} ({t.src}->{t.dst}): {source}{e}") from None

    def network_hosts(self, net: Network) -> np.ndarray:
        """Index in ``net.route_table().hosts`` of each host of :attr:`host_table` (-1 when not
        a host of ``net``)."""
        index = net.route_table().host_index
        return np.array([index.get(h, -1) for h in self.host_table] or [0], dtype=np.int64)

    def resource_sets(self, net: Network) -> list[frozenset[int]]:
        """The resources of each transfer's path, in transfer order (checked once per network)."""
        return list(self._resolve(net)[1])

    def resource_lists(self, net: Network) -> list[list[int]]:
        """The resource indices of each transfer's path in increasing order, as the Rust core
        takes them. The lists are shared: do not modify them."""
        return self._resolve(net)[2]

    def _resolve(self, net: Network) -> tuple[Network, list[frozenset[int]], list[list[int]]]:
        if self._resolved is None or self._resolved[0] is not net:
            lists = resource_lists_of(cached_transfer_routes(net, self))
            self._resolved = (net, [frozenset(p) for p in lists], lists)
        return self._resolved

    def to_dict(self) -> dict[str, Any]:
        hosts = self.host_table
        sizes = [plain_size(z) for z in self._sizes.tolist()] if self._sizes.dtype == object else self._sizes.tolist()
        return {"name": self.name,
                "transfers": [{"src": hosts[s], "dst": hosts[d], "size_bytes": z}
                              for s, d, z in zip(self._src.tolist(), self._dst.tolist(), sizes)]}

    def json_columns(self) -> tuple[list[str], bytes, bytes, bytes] | None:
        """What the core writes the transfers' JSON text from (``_core.transfers_json``, which
        names them as :attr:`names` does): the hosts' names encoded as JSON strings, and the
        senders, receivers and sizes as little-endian columns; None where a size is not a
        64-bit integer."""
        if self._sizes.dtype != np.int64:
            return None
        columns = self.derived.get("json_columns")
        if columns is None:
            columns = self.derived["json_columns"] = (
                encoded_strings(self.host_table), self._src.astype("<u4").tobytes(),
                self._dst.astype("<u4").tobytes(), self._sizes.astype("<i8").tobytes())
        return columns

    def encoded_dict(self) -> dict[str, Any]:
        """:meth:`to_dict` with the transfers encoded already, for a compact JSON document: no
        dict is made per transfer (the core writes their text, :class:`EncodedList`, or else
        Python, :class:`EncodedItems`)."""
        columns = self.json_columns()
        if columns is not None:
            return {"name": self.name, "transfers": EncodedList(
                lambda level, per_line: _core.transfers_json(*columns, per_line, level))}
        hosts = encoded_strings(self.host_table)
        sizes = [plain_size(z) for z in self._sizes.tolist()] if self._sizes.dtype == object else self._sizes
        return {"name": self.name,
                "transfers": EncodedItems([f'{{"src": {hosts[s]}, "dst": {hosts[d]}, "size_bytes": {z}}}' for s, d, z
                                           in zip(self._src.tolist(), self._dst.tolist(), encoded_numbers(sizes))])}

    @classmethod
    def from_dict(cls, doc: Any, where: str = "traffic", default_size_bytes: int | None = None) -> Traffic:
        """The traffic of a parsed document. A transfer without ``size_bytes`` is refused, naming
        it, unless ``default_size_bytes`` is given (``--size``): input is strict, a size is never
        guessed."""
        f = Fields(doc, where, TrafficError, ("format", "version", "name", "transfers"))
        plain = plain_columns(f.get("transfers", read_list))
        if plain is not None:
            return cls.from_arrays(*plain, f.get("name", read_str, "traffic"))
        transfers = []
        for i, item in enumerate(f.get("transfers", read_list)):
            t = Fields(item, f"{f.at('transfers')}[{i}]", TrafficError, ("src", "dst", "size_bytes"))
            src, dst = t.get("src", read_id), t.get("dst", read_id)
            if default_size_bytes is None and not t.has("size_bytes"):
                raise TrafficError(f"{t.where} ({src} -> {dst}): missing field 'size_bytes' (the bytes it carries; "
                                   "--size gives one size to every transfer that has none)")
            transfers.append(Transfer(src, dst, t.get("size_bytes", read_size, default_size_bytes)))
        return cls(transfers, f.get("name", read_str, "traffic"))


# -- columns -------------------------------------------------------------------------------------

#: Transfers a column-wise check looks at together: bounds the memory of its temporaries.
CHUNK = 1 << 20


def _first_invalid(traffic: Traffic, net: Network) -> int | None:
    """The first transfer whose hosts, size or route are wrong on ``net``, or None."""
    hosts = traffic.host_table
    sends = np.array([_is_host(net, h) and net.nodes[h].sends for h in hosts] or [False])
    receives = np.array([_is_host(net, h) and net.nodes[h].receives for h in hosts] or [False])
    on_net = traffic.network_hosts(net)
    table = net.route_table()
    # A composed route was checked with its switches when the network was built (every sender's
    # switch to every receiver's); the others are checked pair by pair.
    up_ok = sends & (on_net >= 0) & (table.up_switch[on_net] >= 0)
    down_ok = receives & (on_net >= 0) & (table.down_target[on_net] >= 0)
    # A network may leave pairs of switches unrouted (partial routes): those are checked alone.
    pair_up = np.maximum(table.up_switch[on_net], 0) * len(table.targets)
    pair_down = np.maximum(table.down_target[on_net], 0)
    known = table.pair_known if len(table.pair_known) else np.zeros(1, dtype=bool)
    sizes = traffic._sizes
    uniform = traffic.uniform_size
    checked: dict[tuple[int, int], bool] = {}
    for start in range(0, len(traffic), CHUNK):
        part = slice(start, start + CHUNK)
        src, dst = traffic._src[part], traffic._dst[part]
        if uniform is not None:
            size_ok = np.bool_(valid_size(uniform))
        elif sizes.dtype == object:
            size_ok = np.array([valid_size(z) for z in sizes[part]], dtype=bool)
        else:
            size_ok = (sizes[part] > 0) & (sizes[part] <= MAX_SIZE_BYTES)
        composed = up_ok[src] & down_ok[dst] & size_ok
        composed &= known[np.where(composed, pair_up[src] + pair_down[dst], 0)]
        if composed.all():
            continue
        ok = sends[src] & receives[dst] & size_ok
        alone = ok & ~composed
        for s, d in set(zip(src[alone].tolist(), dst[alone].tolist())):
            if (s, d) not in checked:
                checked[(s, d)] = _has_route(net, hosts[s], hosts[d])
        if not all(checked.values()):
            ok &= ~alone | np.array([checked.get((s, d), True) for s, d in zip(src.tolist(), dst.tolist())])
        if not ok.all():
            return start + int(np.argmin(ok))
    return None


def _is_host(net: Network, name: str) -> bool:
    node = net.nodes.get(name)
    return node is not None and node.kind == "host"


def _has_route(net: Network, src: str, dst: str) -> bool:
    try:
        net.route(src, dst)
    except TopologyError:
        return False
    return True

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
    from .units import parse_count

    if isinstance(allocation, str):
        raise TrafficError(f"allocation: expected a list of counts such as [4, 4, 0, 0], got the string {allocation!r}")
    try:
        allocation = [parse_count(n, f"allocation[{i}]", least=0, most=2**63 - 1) for i, n in enumerate(allocation)]
    except ValueError as e:
        raise TrafficError(str(e)) from None
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


def _check_transfers(count: int, generator: str) -> None:
    """Refuse a generator that would make more than :data:`MAX_TRANSFERS` transfers."""
    if count > MAX_TRANSFERS:
        raise TrafficError(f"{generator}: {count:,} transfers among these hosts, more than the {MAX_TRANSFERS:,} "
                           "liquidsched generates (choose fewer hosts, e.g. with --alloc, or a smaller topology)")


def _size(size_bytes: Any, generator: str) -> int:
    """A generator's transfer size by the one numeric rule (:func:`~liquidsched.units.parse_size`):
    ``"1MB"`` is 10**6 bytes, and 0, 1.5 or inf are refused here rather than by the traffic's check."""
    try:
        return parse_size(size_bytes, f"{generator}: size_bytes")
    except ValueError as e:
        raise TrafficError(str(e)) from None


def _roles(net: Network, hosts: Sequence[str] | None) -> tuple[list[str], list[str]]:
    """The senders and receivers among ``hosts`` (every host when None). A string is refused, not
    read as a list of one-letter hosts: ``scatter(net, "t1", "r1")`` means ``hosts=["r1"]``, and
    an empty list, which would select no host, too."""
    if isinstance(hosts, str):
        raise TrafficError(f"hosts: expected a list of host names, got the string {hosts!r} "
                           f"(write [{hosts!r}] for one host)")
    pool = list(net.hosts()) if hosts is None else list(hosts)
    if hosts is not None and not pool:
        raise TrafficError("hosts: an empty list selects no host (give None for every host)")
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
    give N² transfers; ``include_self=False`` leaves those out. The transfers are made as
    columns (:meth:`Traffic.from_arrays`), sender by sender.
    """
    size_bytes = _size(size_bytes, "half-all-to-all")
    senders, receivers = _roles(net, hosts)
    table = list(dict.fromkeys(senders + receivers))
    index = {h: i for i, h in enumerate(table)}
    dtype = index_dtype(len(table))
    src, dst = _product(np.array([index[h] for h in senders], dtype=dtype),
                        np.array([index[h] for h in receivers], dtype=dtype), include_self)
    return Traffic.from_arrays(table, src, dst, size_bytes, "half-all-to-all")


def _product(senders: np.ndarray, receivers: np.ndarray, include_self: bool) -> tuple[np.ndarray, np.ndarray]:
    """Every sender (row) with every receiver (column), row by row, without a host's pair with
    itself unless ``include_self``; filled a block of rows at a time so that the temporaries
    stay small beside the result."""
    per_row = np.full(len(senders), len(receivers), dtype=np.int64)
    if not include_self:
        times = Counter(receivers.tolist())
        per_row -= np.array([times.get(h, 0) for h in senders.tolist()], dtype=np.int64)
    total = int(per_row.sum())
    _check_transfers(total, "half-all-to-all" if include_self else "all-to-all")
    src, dst = np.empty(total, dtype=senders.dtype), np.empty(total, dtype=receivers.dtype)
    rows = max(1, CHUNK // max(1, len(receivers)))
    at = 0
    for start in range(0, len(senders), rows):
        block = senders[start:start + rows]
        s, d = np.repeat(block, len(receivers)), np.tile(receivers, len(block))
        if not include_self:
            keep = s != d
            s, d = s[keep], d[keep]
        src[at:at + len(s)], dst[at:at + len(d)] = s, d
        at += len(s)
    return src, dst


def all_to_all(net: Network, hosts: Sequence[str] | None = None, size_bytes: int = DEFAULT_SIZE_BYTES) -> Traffic:
    """Every sending host sends to every other receiving host."""
    t = half_all_to_all(net, hosts, size_bytes, include_self=False)
    t.name = "all-to-all"
    return t


def scatter(net: Network, root: str, hosts: Sequence[str] | None = None,
            size_bytes: int = DEFAULT_SIZE_BYTES) -> Traffic:
    """``root`` sends one message to every other receiving host."""
    size_bytes = _size(size_bytes, "scatter")
    _, receivers = _roles(net, hosts)
    if not isinstance(root, str) or root not in net.nodes:
        raise TrafficError(f"scatter: unknown root host {root!r}")
    return Traffic([Transfer(root, d, size_bytes) for d in receivers if d != root], f"scatter-{root}")


def gather(net: Network, root: str, hosts: Sequence[str] | None = None,
           size_bytes: int = DEFAULT_SIZE_BYTES) -> Traffic:
    """Every other sending host sends one message to ``root``."""
    size_bytes = _size(size_bytes, "gather")
    senders, _ = _roles(net, hosts)
    if not isinstance(root, str) or root not in net.nodes:
        raise TrafficError(f"gather: unknown root host {root!r}")
    return Traffic([Transfer(s, root, size_bytes) for s in senders if s != root], f"gather-{root}")


def permutation(net: Network, hosts: Sequence[str] | None = None, seed: int = 0,
                size_bytes: int = DEFAULT_SIZE_BYTES) -> Traffic:
    """Each sending host sends to one distinct receiving host, chosen by a seeded shuffle that
    avoids sending to itself where it can."""
    size_bytes = _size(size_bytes, "permutation")
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
    min_bytes, max_bytes = _size(min_bytes, "random matrix: min_bytes"), _size(max_bytes, "random matrix: max_bytes")
    if not 0 < density <= 1 or not 0 < min_bytes <= max_bytes:
        raise TrafficError("random matrix: need 0 < density <= 1 and 0 < min_bytes <= max_bytes")
    senders, receivers = _roles(net, hosts)
    rng = random.Random(seed)
    _check_transfers(len(senders) * len(receivers), "random")
    transfers = [Transfer(s, d, rng.randint(min_bytes, max_bytes))
                 for s in senders for d in receivers if s != d and rng.random() < density]
    return Traffic(transfers, f"random-{seed}")


def skewed(net: Network, hosts: Sequence[str] | None = None, seed: int = 0, alpha: float = 1.0,
           size_bytes: int = DEFAULT_SIZE_BYTES) -> Traffic:
    """A skewed all-to-allv, as mixture-of-experts dispatch produces: every sender sends
    ``size_bytes`` per other receiver in all, shared out by a Zipf-like popularity of the
    receivers — the receiver of rank ``i`` (a seeded order, the same for every sender) gets a
    share proportional to ``1 / i**alpha``. ``alpha = 0`` is the uniform all-to-all; shares that
    round to no byte are left out.

    Examples
    --------
    >>> from liquidsched.topologies import crossbar
    >>> net = crossbar(4)
    >>> sorted(t.size_bytes for t in skewed(net, alpha=0, size_bytes=300) if t.src == "h1")
    [300, 300, 300]
    >>> sizes = [t.size_bytes for t in skewed(net, seed=1, alpha=2, size_bytes=300) if t.src == "h1"]
    >>> sizes, sum(sizes)     # h2, h3, h4 of ranks 4, 3, 1: shares 1/16, 1/9, 1 of 900 bytes
    ([47, 85, 766], 898)
    """
    if not (isinstance(alpha, (int, float)) and math.isfinite(alpha) and alpha >= 0):
        raise TrafficError(f"skewed: alpha must be a finite number >= 0, got {alpha!r}")
    size_bytes = _size(size_bytes, "skewed")
    senders, receivers = _roles(net, hosts)
    order = list(receivers)
    random.Random(seed).shuffle(order)
    _check_transfers(len(senders) * len(receivers), "skewed")
    popularity = {h: 1.0 / (rank + 1) ** alpha for rank, h in enumerate(order)}
    transfers = []
    for s in senders:
        others = [d for d in receivers if d != s]
        total = size_bytes * len(others)
        weight = sum(popularity[d] for d in others)
        for d in others:
            share = int(total * popularity[d] / weight)
            if share > 0:
                transfers.append(Transfer(s, d, share))
    return Traffic(transfers, f"skewed-{seed}-{alpha:g}")


# -- files ---------------------------------------------------------------------------------------


def load_traffic(path: str | os.PathLike, default_size_bytes: int | None = None) -> Traffic:
    """Read a traffic: JSON/YAML ``{transfers: [{src, dst, size_bytes}]}``, or CSV either as rows
    with a header naming the columns ``src``, ``dst`` and ``size_bytes`` (in any order) or as a
    matrix whose first row names the receivers and first column the senders (an empty or 0 cell
    is no transfer; :func:`~liquidsched.io.traffic_csv.read_transfer_table`).

    A JSON/YAML transfer without ``size_bytes`` takes ``default_size_bytes``; without one it is
    refused."""
    p = Path(path)
    if p.suffix.lower() != ".csv":
        return Traffic.from_dict(read_document(p, TrafficError), str(p), default_size_bytes)
    return Traffic.from_arrays(*read_transfer_table(p), p.stem)


# -- by name -------------------------------------------------------------------------------------

GENERATORS = ("all-to-all", "half-all-to-all", "scatter", "gather", "permutation", "random", "skewed", "moe",
              "matrix")
#: The generators whose spec sizes the transfers, so that ``--size`` does not apply, and how.
SIZED_BY_SPEC = {"moe": "tokens × bytes_per_token", "matrix": "the file's cells, or total="}
#: The parameters each generator takes in a spec (``random:seed=1,density=0.7``).
GENERATOR_PARAMETERS = {"all-to-all": (), "half-all-to-all": ("include_self",), "scatter": ("root",),
                        "gather": ("root",), "permutation": ("seed",), "random": ("seed", "density"),
                        "skewed": ("seed", "alpha"), "moe": MOE_FIELDS, "matrix": MATRIX_FIELDS}


def make_traffic(net: Network, spec: str, hosts: Sequence[str] | None = None,
                 size_bytes: int = DEFAULT_SIZE_BYTES, file_size_bytes: int | None = None) -> Traffic:
    """A traffic by generator name (``"scatter:root=h1"``, ``"random:seed=3,density=0.5"``) or a
    file path, checked against ``net``. ``size_bytes`` is a generated transfer's size;
    ``file_size_bytes`` that of a file's transfer without ``size_bytes`` (none: refused)."""
    if isinstance(spec, os.PathLike):
        spec = os.fspath(spec)
    if not isinstance(spec, str):
        raise TrafficError(f"expected a traffic: a generator such as 'all-to-all' or a file, got "
                           f"{type(spec).__name__} {spec!r}")
    name, _, params = spec.partition(":")
    if name not in GENERATORS:
        if Path(spec).suffix.lower() in (".csv", ".json", ".yaml", ".yml") or Path(spec).exists():
            traffic = load_traffic(spec, file_size_bytes)
            if hosts is not None:
                keep = set(hosts)
                traffic = Traffic([t for t in traffic if t.src in keep and t.dst in keep], traffic.name)
            traffic.check(net, spec)
            return traffic
        raise TrafficError(f"unknown traffic {spec!r}: not a generator ({', '.join(GENERATORS)}) nor a file")
    from .spec import spec_fields
    from .units import NumberError

    _, kw = spec_fields(spec, "traffic", GENERATOR_PARAMETERS[name], TrafficError)
    try:
        traffic = _generated(net, name, kw, hosts, size_bytes)
    except NumberError as e:
        raise TrafficError(str(e)) from None
    traffic.check(net)
    return traffic


def _generated(net: Network, name: str, kw: dict[str, str], hosts: Sequence[str] | None, size_bytes: int) -> Traffic:
    """The traffic of generator ``name`` with the fields ``kw`` of its spec."""
    from .spec import field_where, parse_bool
    from .units import parse_count, parse_number

    at = lambda key: field_where("traffic", name, key)  # noqa: E731
    seed = parse_count(kw["seed"], at("seed"), least=0, most=2**63 - 1) if "seed" in kw else 0
    if name == "all-to-all":
        traffic = all_to_all(net, hosts, size_bytes)
    elif name == "half-all-to-all":
        include_self = parse_bool(kw["include_self"], at("include_self"), TrafficError) if "include_self" in kw \
            else True
        traffic = half_all_to_all(net, hosts, size_bytes, include_self)
    elif name in ("scatter", "gather"):
        root = kw.get("root") or (net.senders()[0] if name == "scatter" else net.receivers()[0])
        traffic = (scatter if name == "scatter" else gather)(net, root, hosts, size_bytes)
    elif name == "permutation":
        traffic = permutation(net, hosts, seed, size_bytes)
    elif name == "skewed":
        alpha = parse_number(kw["alpha"], at("alpha"), least=0, most=1e3) if "alpha" in kw else 1.0
        traffic = skewed(net, hosts, seed, alpha, size_bytes)
    elif name in ("moe", "matrix"):
        traffic = _rank_matrix_traffic(net, name, kw, hosts)
    else:
        density = parse_number(kw["density"], at("density"), least=0, most=1, above_least=True) \
            if "density" in kw else 1.0
        traffic = random_matrix(net, hosts, seed, density, max(1, size_bytes // 10), size_bytes)
    return traffic


def _rank_matrix_traffic(net: Network, name: str, kw: dict[str, str], hosts: Sequence[str] | None) -> Traffic:
    """A ``moe`` or ``matrix`` traffic: a rank matrix on the hosts that both send and receive, in
    order (rank ``i`` is the ``i``-th of them)."""
    from .matrices import bytes_from_spec
    from .moe import routing_from_spec

    senders, receivers = _roles(net, hosts)
    receiving = set(receivers)
    ranks = [h for h in senders if h in receiving]
    if name == "moe":
        routing = routing_from_spec(kw, len(ranks))
        _check_transfers(len(routing.bytes) ** 2, name)
        return rank_matrix_traffic(ranks, routing.bytes, f"moe-{routing.skew}")
    matrix, label = bytes_from_spec(kw)
    _check_transfers(len(matrix) ** 2, name)
    return rank_matrix_traffic(ranks, matrix, label)


def rank_matrix_traffic(hosts: Sequence[str], bytes_matrix: np.ndarray, name: str = "matrix") -> Traffic:
    """The traffic of a matrix of bytes on ``hosts`` (row and column ``i`` are ``hosts[i]``): a
    transfer per non-zero cell off the diagonal (:func:`~liquidsched.matrices.off_diagonal_cells`)."""
    from .matrices import off_diagonal_cells

    n = len(bytes_matrix)
    if n > len(hosts):
        raise TrafficError(f"{name}: a matrix of {n} ranks, but only {len(hosts)} hosts that both send and receive")
    return Traffic.from_arrays(list(hosts[:n]), *off_diagonal_cells(bytes_matrix), name=name)

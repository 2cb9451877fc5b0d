"""A traffic's columns as :class:`liquidsched.traffic.Traffic` holds them: host indices of the
narrowest type, sizes as int64 (or as given where one does not fit), the numbering of repeated
pairs in transfer names, and the columns of a document's plain transfer items, read at once."""

from __future__ import annotations

from typing import Any, Sequence

import numpy as np

from ..units import MAX_SIZE_BYTES
from .traffic_csv import host_table


def index_dtype(n: int) -> type:
    """The narrowest integer type that indexes ``n`` hosts: millions of transfers take 2 bytes
    an end up to 32,767 hosts."""
    return np.int16 if n < 2 ** 15 else np.int32


def valid_size(z: Any) -> bool:
    """Whether ``z`` is a size a transfer may have: a whole number from 1 to the largest."""
    return isinstance(z, (int, np.integer)) and not isinstance(z, (bool, np.bool_)) and 0 < z <= MAX_SIZE_BYTES


def size_dtype(sizes: Sequence[Any]) -> type:
    """int64 when every size is a whole number that fits, else object (kept as given, so that
    :meth:`Traffic.check` can name a bad one and sums of huge sizes stay exact)."""
    ok = all(isinstance(z, (int, np.integer)) and not isinstance(z, (bool, np.bool_)) and -2 ** 63 < z < 2 ** 63
             for z in sizes)
    return np.int64 if ok else object


def size_column(sizes: list[Any] | np.ndarray) -> np.ndarray:
    # An array of integers that int64 holds is taken at once (uint64 may not fit: read one by one).
    if isinstance(sizes, np.ndarray) and (sizes.dtype.kind == "i"
                                          or sizes.dtype.kind == "u" and sizes.dtype.itemsize < 8):
        return sizes.astype(np.int64).reshape(len(sizes))
    dtype = size_dtype(sizes)
    if dtype is object:
        column = np.empty(len(sizes), dtype=object)
        column[:] = sizes
        return column
    return np.array(sizes, dtype=np.int64).reshape(len(sizes))


def occurrences(src: np.ndarray, dst: np.ndarray, hosts: int) -> np.ndarray:
    """Each transfer's rank among the transfers between the same two hosts, from 1, in order."""
    key = src.astype(np.int64) * hosts + dst
    order = np.argsort(key, kind="stable")
    ordered = key[order]
    first = np.flatnonzero(np.concatenate([[True], ordered[1:] != ordered[:-1]])) if len(key) else order
    rank = np.empty(len(key), dtype=np.int64)
    rank[order] = np.arange(len(key)) - np.repeat(first, np.diff(np.append(first, len(key)))) + 1
    return rank


def numbered(pairs: list[str], occurrence: np.ndarray) -> list[str]:
    """Names from ``src->dst`` pairs, the repeats of a pair numbered ``#2``, ``#3``, …"""
    return [pair if k == 1 else f"{pair}#{k}" for pair, k in zip(pairs, occurrence.tolist())]


def plain_size(z: Any) -> Any:
    """A size as a Python int (numpy integers become ints; anything else stays as it is)."""
    return int(z) if isinstance(z, np.integer) else z


def read_only(a: np.ndarray) -> np.ndarray:
    """A view of ``a`` that cannot be written through."""
    view = a.view()
    view.flags.writeable = False
    return view


def plain_columns(items: list) -> tuple[tuple[str, ...], np.ndarray, np.ndarray, np.ndarray] | None:
    """The transfers ``items`` as columns (host table, senders, receivers, sizes) when every one
    is plain — exactly ``src`` and ``dst`` (non-empty strings) and ``size_bytes`` (a whole
    number from 1 to :data:`MAX_SIZE_BYTES`), which the item by item reader takes as they are:
    no object per transfer (a million items in about a second, where reading them one by one
    took five); None otherwise, for that reader to read them and name what is wrong."""
    if not all(type(item) is dict and len(item) == 3 for item in items):
        return None
    try:
        src = [item["src"] for item in items]
        dst = [item["dst"] for item in items]
        sizes = [item["size_bytes"] for item in items]
    except KeyError:
        return None
    if not all(type(h) is str and h for h in src) or not all(type(h) is str and h for h in dst):
        return None
    if not all(type(z) is int and 0 < z <= MAX_SIZE_BYTES for z in sizes):
        return None
    hosts, src_index, dst_index = host_table(src, dst)
    return hosts, src_index, dst_index, np.array(sizes, dtype=np.int64)

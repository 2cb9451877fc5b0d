"""Traffic files in CSV: transfers as rows (``src,dst,size_bytes``, in any order) or as a matrix
whose header row names the receivers and first column the senders. The reader gives the
transfers as columns; :func:`liquidsched.traffic.load_traffic` makes the traffic.

A file of plain rows (sizes in digits, no quotes) is read by the core at once; every other form,
and every file with something wrong in it, by the general reader here, which names the line and
column of what is wrong.
"""

from __future__ import annotations

import contextlib
import csv
import gc
import io
from pathlib import Path
from typing import Iterator, Sequence

import numpy as np

from .. import _core
from ..errors import TrafficError
from ..units import MAX_SIZE_BYTES, parse_size
from .files import read_text

#: A transfer as read: sender, receiver, bytes.
Row = tuple[str, str, int]


#: A traffic's transfers as columns: the host table, and for each transfer in file order its
#: sender's and receiver's index in the table and its size.
Columns = tuple[tuple[str, ...], np.ndarray, np.ndarray, np.ndarray]


def read_transfer_table(p: Path) -> Columns:
    """The transfers of a CSV traffic file as columns, the host table listing the senders first,
    each where first met, then the receivers; refused with the line and column of what is
    wrong. A file of plain rows takes no Python object per transfer."""
    text = read_text(p, TrafficError)  # a byte-order mark is dropped there
    plain = _core.read_plain_rows(text, MAX_SIZE_BYTES)
    if plain is not None:
        hosts, src, dst, sizes = plain
        return (tuple(hosts), np.frombuffer(src, dtype="<u4"), np.frombuffer(dst, dtype="<u4"),
                np.frombuffer(sizes, dtype="<u8").astype(np.int64))
    src_names, dst_names, sizes = read_transfer_columns(p, text)
    return (*host_table(src_names, dst_names), sizes)


def host_table(src: Sequence[str], dst: Sequence[str]) -> tuple[tuple[str, ...], np.ndarray, np.ndarray]:
    """The host table of these senders and receivers (senders first, each host where it is
    first met) and both columns as indices into it."""
    table: dict[str, int] = {}
    src_index = np.fromiter((table.setdefault(h, len(table)) for h in src), np.int64, len(src))
    dst_index = np.fromiter((table.setdefault(h, len(table)) for h in dst), np.int64, len(dst))
    return tuple(table), src_index, dst_index


def read_transfer_columns(p: Path, text: str) -> tuple[list[str], list[str], np.ndarray]:
    """The transfers of the CSV traffic file ``p`` whose text is ``text`` as three columns
    (senders, receivers, sizes), in file order, refused with the line and column of what is
    wrong."""
    # A row is blank when every cell is; its first cell alone says no for most rows. Without
    # quotes a line's cells are what lies between its commas, as the csv module would read them.
    lines = text.splitlines() if '"' not in text else None
    try:
        cells = (line.split(",") for line in lines) if lines is not None else csv.reader(io.StringIO(text))
        with _collector_paused():
            rows = [r for r in cells if r and (r[0].strip() or any(c.strip() for c in r))]
    except csv.Error as e:
        raise TrafficError(f"{p}: cannot read: {e}") from None
    if not rows:
        raise TrafficError(f"{p}: empty file")
    header = [c.strip() for c in rows[0]]
    # Rows when the header names the three columns (in any order) or names nothing else; a
    # matrix's header is a corner cell and receivers.
    if _ROW_COLUMNS <= set(header) or set(header) <= _ROW_COLUMNS:
        return _row_columns(p, header, rows[1:])
    if all(_is_number(c) for c in header):
        raise TrafficError(f"{p}: line 1 is numbers, not host names: a matrix of ranks without names is read as "
                           f"matrix:file={p} (rank i is the i-th host; total=SIZE reads the cells as shares)")
    cells = _matrix_to_transfers(p, header, rows[1:])
    return [r[0] for r in cells], [r[1] for r in cells], np.array([r[2] for r in cells], dtype=np.int64)


@contextlib.contextmanager
def _collector_paused() -> Iterator[None]:
    """Python's cycle collector paused: a million rows are a million lists, none in a cycle,
    and collecting as they are made would take most of the reading time."""
    was = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was:
            gc.enable()


def _is_number(cell: str) -> bool:
    """Whether a CSV cell is a plain number (a rank matrix's cell, not a host's name)."""
    try:
        float(cell)
    except ValueError:
        return False
    return True


#: The columns of a CSV traffic written as rows.
_ROW_COLUMNS = frozenset(("src", "dst", "size_bytes"))


def _csv_size(p: Path, line: int, column: int, text: str, allow_zero: bool) -> int:
    """A size cell: units allowed as in ``--size`` (``1MB``, ``64KiB``); an empty or ``0`` cell
    of a matrix means no transfer."""
    cell = text.strip()
    if allow_zero and cell in ("", "0"):
        return 0
    try:
        return parse_size(cell)
    except ValueError as e:
        raise TrafficError(f"{p}: line {line}, column {column}: {e}") from None


def _row_columns(p: Path, header: list[str], rows: list[list[str]]) -> tuple[list[str], list[str], np.ndarray]:
    """Transfers from rows whose columns the header names (``dst,src,size_bytes`` as well as
    ``src,dst,size_bytes``): each of the three once, nothing else."""
    wanted = ("src", "dst", "size_bytes")
    for name in header:
        if name not in _ROW_COLUMNS:
            raise TrafficError(f"{p}: line 1: unknown column {name!r} in the header "
                               f"(a row file has the columns {','.join(wanted)}, in any order)")
        if header.count(name) > 1:
            raise TrafficError(f"{p}: line 1: column {name!r} appears twice in the header")
    missing = [name for name in wanted if name not in header]
    if missing:
        raise TrafficError(f"{p}: line 1: no column {missing[0]!r} in the header "
                           f"(a row file has the columns {','.join(wanted)}, in any order)")
    src, dst, size = (header.index(name) for name in wanted)
    for i, row in enumerate(rows, start=2):
        if len(row) != len(header):
            raise TrafficError(f"{p}: line {i}: expected {len(header)} columns {','.join(header)}, got {len(row)}: "
                               f"{','.join(row)!r}")
    cells = [row[size] for row in rows]
    sizes = _plain_sizes(cells)
    if sizes is None:
        sizes = np.array([_csv_size(p, i, size + 1, cell, False) for i, cell in enumerate(cells, start=2)],
                         dtype=np.int64)
    return [row[src].strip() for row in rows], [row[dst].strip() for row in rows], sizes


def _plain_sizes(cells: list[str]) -> np.ndarray | None:
    """The sizes when every cell is plain digits of a size :func:`parse_size` accepts, read at
    once; None otherwise (each cell is then read alone, for the error that names it)."""
    if not all(c.isascii() and c.isdigit() and len(c) <= 16 for c in cells):
        return None
    sizes = np.array(cells).astype(np.int64) if cells else np.zeros(0, dtype=np.int64)
    if len(sizes) and (sizes.min() < 1 or sizes.max() > MAX_SIZE_BYTES):
        return None
    return sizes


def _matrix_to_transfers(p: Path, header: list[str], rows: list[list[str]]) -> list[Row]:
    receivers = header[1:]
    out = []
    for i, row in enumerate(rows, start=2):
        if len(row) - 1 != len(receivers):
            raise TrafficError(f"{p}: line {i}: {len(row) - 1} sizes but {len(receivers)} receivers in the header "
                               "(every row has one size per receiver; 0 or empty for none)")
        sender = row[0].strip()
        for j, cell in enumerate(row[1:]):
            size = _csv_size(p, i, j + 2, cell, True)
            if size:
                out.append((sender, receivers[j], size))
    return out

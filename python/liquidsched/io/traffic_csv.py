"""Traffic files in CSV: transfers as rows (``src,dst,size_bytes``, in any order) or as a matrix
whose header row names the receivers and first column the senders. The reader gives plain
``(src, dst, size_bytes)`` rows; :func:`liquidsched.traffic.load_traffic` makes the traffic.
"""

from __future__ import annotations

import csv
import io
from pathlib import Path

from ..errors import TrafficError
from ..units import parse_size
from .files import read_text

#: A transfer as read: sender, receiver, bytes.
Row = tuple[str, str, int]


def read_transfer_rows(p: Path) -> list[Row]:
    """The transfers of a CSV traffic file, in file order, refused with the line and column of
    what is wrong."""
    text = read_text(p, TrafficError)  # a byte-order mark is dropped there
    try:
        rows = [r for r in csv.reader(io.StringIO(text)) if any(c.strip() for c in r)]
    except csv.Error as e:
        raise TrafficError(f"{p}: cannot read: {e}") from None
    if not rows:
        raise TrafficError(f"{p}: empty file")
    header = [c.strip() for c in rows[0]]
    # Rows when the header names the three columns (in any order) or names nothing else; a
    # matrix's header is a corner cell and receivers.
    if _ROW_COLUMNS <= set(header) or set(header) <= _ROW_COLUMNS:
        return _rows_to_transfers(p, header, rows[1:])
    if all(_is_number(c) for c in header):
        raise TrafficError(f"{p}: line 1 is numbers, not host names: a matrix of ranks without names is read as "
                           f"matrix:file={p} (rank i is the i-th host; total=SIZE reads the cells as shares)")
    return _matrix_to_transfers(p, header, rows[1:])


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


def _rows_to_transfers(p: Path, header: list[str], rows: list[list[str]]) -> list[Row]:
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
    out = []
    for i, row in enumerate(rows, start=2):
        if len(row) != len(header):
            raise TrafficError(f"{p}: line {i}: expected {len(header)} columns {','.join(header)}, got {len(row)}: "
                               f"{','.join(row)!r}")
        out.append((row[src].strip(), row[dst].strip(), _csv_size(p, i, size + 1, row[size], False)))
    return out


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

"""Rank matrices: the N × N tables of bytes from rank to rank in which dispatch matrices are
measured and shared, read from files, sequenced over steps and turned into traffics.

A CSV rank matrix has one row per sender and one column per receiver, numbers only: the
``i``-th row and column are the ``i``-th host of the traffic's hosts. Several matrices in one
file (one per step of a training or inference run) are separated by a blank line or a comment
line (``#``). A ``.npy`` file holds one matrix (2-d) or a sequence (3-d, steps first).

Cells are bytes (units allowed: ``1MB``, ``64KiB``), or, when a total is given, shares of it:
fractions of 1, token counts or bytes alike are scaled so that each matrix carries the total.
The diagonal is what a rank sends to itself; it stays on the rank and is no transfer.
"""

from __future__ import annotations

import csv
import io
import math
import os
from pathlib import Path

import numpy as np

from .errors import TrafficError
from .io.files import read_bytes, read_text
from .units import parse_size


def read_rank_matrices(path: str | os.PathLike) -> list[np.ndarray]:
    """The matrices of a CSV or ``.npy`` file, each square, as float arrays (cells as written).

    Examples
    --------
    >>> import tempfile
    >>> d = tempfile.mkdtemp()
    >>> p = Path(d, "steps.csv")
    >>> _ = p.write_text("0,1MB\\n2MB,0\\n\\n0,0.5\\n0.25,0\\n")
    >>> [m.tolist() for m in read_rank_matrices(p)]
    [[[0.0, 1000000.0], [2000000.0, 0.0]], [[0.0, 0.5], [0.25, 0.0]]]
    """
    p = Path(path)
    if p.suffix.lower() == ".npy":
        return _npy_matrices(p)
    text = read_text(p, TrafficError)
    blocks: list[list[tuple[int, list[str]]]] = [[]]
    try:
        for line, row in enumerate(csv.reader(io.StringIO(text)), start=1):
            if not any(c.strip() for c in row) or row[0].lstrip().startswith("#"):
                if blocks[-1]:
                    blocks.append([])
                continue
            blocks[-1].append((line, row))
    except csv.Error as e:
        raise TrafficError(f"{p}: cannot read: {e}") from None
    matrices = [_csv_matrix(p, block) for block in blocks if block]
    if not matrices:
        raise TrafficError(f"{p}: no matrix in the file")
    return matrices


def _csv_matrix(p: Path, block: list[tuple[int, list[str]]]) -> np.ndarray:
    """One square matrix from its rows, refusing a ragged, non-square or negative one."""
    n = len(block)
    out = np.empty((n, n))
    for i, (line, row) in enumerate(block):
        if len(row) != n:
            raise TrafficError(f"{p}: line {line}: {len(row)} cells in a matrix of {n} rows (a rank matrix is "
                               "square: one row per sender, one column per receiver)")
        for j, cell in enumerate(row):
            out[i, j] = _cell(p, line, j + 1, cell)
    return out


def _cell(p: Path, line: int, column: int, text: str) -> float:
    """A cell: a plain number (bytes, or a share when a total is given) or a size with units."""
    cell = text.strip()
    try:
        value = float(cell) if cell else 0.0
    except ValueError:
        try:
            value = float(parse_size(cell))
        except ValueError as e:
            raise TrafficError(f"{p}: line {line}, column {column}: {e}") from None
    if not math.isfinite(value) or value < 0:
        raise TrafficError(f"{p}: line {line}, column {column}: {cell!r} is not a size of at least 0")
    return value


def _npy_matrices(p: Path) -> list[np.ndarray]:
    """The matrices of a ``.npy`` file: a 2-d array is one, a 3-d array one per step."""
    try:
        array = np.lib.format.read_array(io.BytesIO(read_bytes(p, TrafficError)), allow_pickle=False)
    except (OSError, ValueError) as e:
        raise TrafficError(f"{p}: cannot read as a NumPy array: {e}") from None
    if array.ndim == 2:
        array = array[None]
    if array.ndim != 3 or array.shape[1] != array.shape[2] or array.shape[1] == 0:
        raise TrafficError(f"{p}: expected an N × N matrix or steps × N × N, got shape {array.shape}")
    if array.dtype.kind not in "iuf":
        raise TrafficError(f"{p}: expected numbers, got {array.dtype}")
    values = array.astype(float)
    bad = np.argwhere(~np.isfinite(values) | (values < 0))
    if len(bad):
        step, i, j = bad[0]
        raise TrafficError(f"{p}: step {step}, row {i}, column {j}: {values[step, i, j]} is not a size of at least 0")
    return list(values)


def matrix_bytes(matrix: np.ndarray, total_bytes: int | None = None, where: str = "matrix") -> np.ndarray:
    """Whole bytes from a matrix as read: its cells as bytes, or, with ``total_bytes``, shares of
    it in proportion to the cells, rounded by largest remainders so that they add up to it.

    Examples
    --------
    >>> matrix_bytes(np.array([[0, 1], [2, 0]]), total_bytes=10).tolist()
    [[0, 3], [7, 0]]
    >>> matrix_bytes(np.array([[0.0, 0.5], [0.5, 0.0]]))
    Traceback (most recent call last):
    ...
    liquidsched.errors.TrafficError: matrix: row 0, column 1 holds 0.5 bytes: give total= to read the cells as shares of a total
    """
    m = np.asarray(matrix, dtype=float)
    if total_bytes is None:
        fractional = np.argwhere(m != np.floor(m))
        if len(fractional):
            i, j = fractional[0]
            raise TrafficError(f"{where}: row {i}, column {j} holds {m[i, j]:g} bytes: give total= to read the "
                               "cells as shares of a total")
        return m.astype(np.int64)
    whole = m.sum()
    if whole <= 0:
        raise TrafficError(f"{where}: every cell is 0, so there are no shares of total={total_bytes}")
    exact = m / whole * total_bytes
    out = np.floor(exact).astype(np.int64)
    short = int(total_bytes - out.sum())
    if short:
        # Largest remainders first; ties by position, so that the result is deterministic.
        order = np.argsort(-(exact - out), axis=None, kind="stable")[:short]
        np.add.at(out.reshape(-1), order, 1)
    return out


def off_diagonal_cells(bytes_matrix: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The transfers of a matrix of bytes as columns (sender row, receiver column, bytes): a
    transfer per non-zero cell off the diagonal, senders in row order.

    Examples
    --------
    >>> [c.tolist() for c in off_diagonal_cells(np.array([[5, 1, 0], [0, 0, 2], [3, 0, 9]]))]
    [[0, 1, 2], [1, 2, 0], [1, 2, 3]]
    """
    off = np.array(bytes_matrix, copy=True)
    np.fill_diagonal(off, 0)
    src, dst = np.nonzero(off)
    return src, dst, off[src, dst]


#: The fields of a ``matrix:`` traffic spec.
SPEC_FIELDS = ("file", "total", "step")


def bytes_from_spec(fields: dict[str, str]) -> tuple[np.ndarray, str]:
    """The matrix of bytes a ``matrix:file=F,total=SIZE,step=N`` spec names (``step`` counts
    from 0 in a file of several matrices), and a name for its traffic."""
    from .spec import field_where
    from .units import parse_count

    at = lambda key: field_where("traffic", "matrix", key)  # noqa: E731
    if "file" not in fields:
        raise TrafficError(f"{at('file')}: a matrix traffic needs file=PATH (a CSV or .npy rank matrix)")
    path = fields["file"].strip()
    matrices = read_rank_matrices(path)
    step = parse_count(fields["step"], at("step"), least=0) if "step" in fields else 0
    if step >= len(matrices):
        raise TrafficError(f"{at('step')}: step {step} of a file of {len(matrices)} "
                           f"matri{'x' if len(matrices) == 1 else 'ces'} (steps count from 0)")
    total = parse_size(fields["total"], at("total")) if "total" in fields else None
    where = f"{path}" + (f" (step {step})" if len(matrices) > 1 else "")
    return matrix_bytes(matrices[step], total, where), Path(path).stem + (f"-{step}" if len(matrices) > 1 else "")

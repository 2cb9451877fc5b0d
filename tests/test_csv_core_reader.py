"""The core's reader of plain CSV rows against the general reader: wherever the core reads a
file, both give the same host table and columns; whatever it leaves, the general reader reads
or refuses with the line and column."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from liquidsched import _core
from liquidsched.errors import TrafficError
from liquidsched.io.traffic_csv import host_table, read_transfer_columns, read_transfer_table
from liquidsched.units import MAX_SIZE_BYTES

# Cells built from pieces that the two readers might read apart: white space of both kinds,
# commas, quotes, units, signs, non-ASCII digits and letters.
names = st.sampled_from(["h1", "h2", " h3", "h4\t", "\u00a0h5", "é", "a b", "", "h1 "])
sizes = st.sampled_from(["1", "7", " 42 ", "0", "-3", "1KiB", "٣", "9007199254740992", "9007199254740993",
                         "12345678901234567", "1e3", "", "0012"])
orders = st.permutations(["src", "dst", "size_bytes"])


@st.composite
def csv_texts(draw: st.DrawFn) -> str:
    order = draw(orders)
    header = ",".join(draw(st.sampled_from([c, f" {c}", c.upper()])) if draw(st.booleans()) else c
                      for c in order)
    lines = [header]
    for _ in range(draw(st.integers(0, 6))):
        cells = {"src": draw(names), "dst": draw(names), "size_bytes": draw(sizes)}
        row = [cells[c] for c in order]
        if draw(st.integers(0, 9)) == 0:
            row.append(draw(st.sampled_from(["", "x"])))
        lines.append(",".join(row))
        if draw(st.integers(0, 7)) == 0:
            lines.append(draw(st.sampled_from(["", " , ,", "\t", '"a",b,1'])))
    end = draw(st.sampled_from(["\n", "\r\n"]))
    return end.join(lines) + draw(st.sampled_from(["", end]))


@settings(max_examples=400, deadline=None)
@given(csv_texts())
def test_the_core_reads_plain_rows_as_the_general_reader_does(text: str) -> None:
    plain = _core.read_plain_rows(text, MAX_SIZE_BYTES)
    try:
        src, dst, size = read_transfer_columns(Path("t.csv"), text)
        hosts, src_index, dst_index = host_table(src, dst)
        general = (hosts, src_index, dst_index, size)
    except TrafficError:
        general = None
    if plain is None:
        return
    # Where the core reads, the general reader reads too, and the same transfers.
    assert general is not None
    hosts, src_bytes, dst_bytes, size_bytes = plain
    assert tuple(hosts) == general[0]
    assert np.frombuffer(src_bytes, "<u4").tolist() == general[1].tolist()
    assert np.frombuffer(dst_bytes, "<u4").tolist() == general[2].tolist()
    assert np.frombuffer(size_bytes, "<u8").tolist() == general[3].tolist()
    assert "" not in hosts and all(h == h.strip() for h in hosts)


def test_a_file_of_a_million_plain_rows_is_read_by_the_core(tmp_path: Path) -> None:
    rng = np.random.default_rng(1)
    n = 1 << 20
    src, dst = rng.integers(0, 1000, n), rng.integers(0, 1000, n)
    size = rng.integers(1, 10**9, n)
    path = tmp_path / "big.csv"
    path.write_text("src,dst,size_bytes\n" + "".join(f"h{s},h{d},{z}\n" for s, d, z in zip(src, dst, size)))
    hosts, src_index, dst_index, sizes = read_transfer_table(path)
    assert [hosts[i] for i in src_index[:50]] == [f"h{s}" for s in src[:50]]
    assert [hosts[i] for i in dst_index[-50:]] == [f"h{d}" for d in dst[-50:]]
    assert sizes.dtype == np.int64 and sizes.tolist() == size.tolist()


@pytest.mark.parametrize("text, message", [
    ("src,dst,size_bytes\na,b,1\nc,d\n", "line 3: expected 3 columns"),
    ("src,dst,size_bytes\na,b,1\nc,d,0\n", "line 3, column 3"),
    ("src,dst,size_bytes\na,b,1\nc,d,12q\n", "line 3, column 3"),
])
def test_what_the_core_leaves_is_refused_by_the_general_reader_naming_the_line(tmp_path, text, message):
    path = tmp_path / "t.csv"
    path.write_text(text)
    with pytest.raises(TrafficError, match=message):
        read_transfer_table(path)

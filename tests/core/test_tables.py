"""The one table writer and group-by/mean helper (confide.core.tables)."""

from __future__ import annotations

import csv
import gzip
import io
import tempfile
from dataclasses import dataclass
from pathlib import Path

import numpy as np
from hypothesis import given
from hypothesis import strategies as st

from confide.core.tables import (
    SpooledTable,
    columns_of,
    csv_lines,
    format_cell,
    group_by,
    mean,
    number,
    read_table,
    write_table,
)


@dataclass(frozen=True)
class Row:
    game: str
    value: float | None
    ok: bool


def test_cells_have_one_format() -> None:
    assert format_cell(None) == ""
    assert format_cell(0.1 + 0.2) == "0.30000000000000004"  # exact, not rounded
    assert format_cell(np.float64(0.25)) == "0.25"  # not "np.float64(0.25)"
    assert format_cell(True) == "True"
    assert format_cell(3) == "3"
    assert format_cell("a,b") == "a,b"  # quoting is the csv writer's job


@given(st.floats(allow_nan=False))
def test_a_float_cell_reads_back_as_the_same_float(value: float) -> None:
    assert float(format_cell(value)) == value


_CELLS = st.one_of(
    st.none(), st.booleans(), st.integers(), st.floats(),
    st.text(alphabet=st.sampled_from('ab ,"\r\n\u00e9')), st.just(""),
)


@given(
    st.lists(_CELLS, min_size=1, max_size=4),
    st.lists(st.lists(_CELLS, min_size=4, max_size=4), min_size=1, max_size=5),
    st.integers(min_value=0, max_value=8),
)
def test_lead_columns_give_the_lines_the_csv_writer_gives(
    lead: list[object], tails: list[list[object]], width: int
) -> None:
    """Formatting the shared leading cells once gives the same bytes as formatting each
    row whole, quoting, empty cells and one- or two-cell rows included."""
    names = [f"c{i}" for i in range(len(lead) + width)]
    rows = [dict(zip(names, [*lead, *tail[:width]], strict=False)) for tail in tails]
    text = io.StringIO()
    csv.writer(text).writerows([[format_cell(r.get(n)) for n in names] for r in rows])
    assert csv_lines(names, rows, lead=len(lead)) == text.getvalue().encode()


def test_mappings_union_their_columns_in_first_seen_order(tmp_path: Path) -> None:
    path = write_table(tmp_path / "t.csv", [{"b": 1, "a": None}, {"c": "x,y", "b": 2.5}])
    assert path.read_bytes() == b'b,a,c\r\n1,,\r\n2.5,,"x,y"\r\n'
    assert read_table(path) == [
        {"b": "1", "a": "", "c": ""},
        {"b": "2.5", "a": "", "c": "x,y"},
    ]


def test_dataclass_rows_and_explicit_columns(tmp_path: Path) -> None:
    rows = [Row("g1", 0.5, True), Row("g2", None, False)]
    assert columns_of(rows) == ["game", "value", "ok"]
    write_table(tmp_path / "d.csv", rows)
    assert (tmp_path / "d.csv").read_text() == "game,value,ok\n" "g1,0.5,True\n" "g2,,False\n"
    empty = write_table(tmp_path / "e.csv", [], ["x", "y"])
    assert empty.read_bytes() == b"x,y\r\n"  # the header even without rows


def test_gzip_tables_are_byte_identical_across_writes(tmp_path: Path) -> None:
    rows = [Row("g1", 0.5, True)]
    first = write_table(tmp_path / "a.csv.gz", rows).read_bytes()
    second = write_table(tmp_path / "b.csv.gz", rows).read_bytes()
    assert first == second  # no name or mtime in the gzip header
    assert gzip.decompress(first) == b"game,value,ok\r\ng1,0.5,True\r\n"
    assert read_table(tmp_path / "a.csv.gz") == [{"game": "g1", "value": "0.5", "ok": "True"}]


def test_spooled_groups_come_out_in_key_order(tmp_path: Path) -> None:
    table = SpooledTable(tmp_path / "s.csv", ["game", "value", "ok"])
    table.add(("b", ""), [Row("b", 1.0, True)])
    table.add(("a", ""), [Row("a", 2.0, False), Row("a", 3.0, False)])
    table.close()
    assert [r["value"] for r in read_table(tmp_path / "s.csv")] == ["2.0", "3.0", "1.0"]
    dropped = SpooledTable(tmp_path / "x.csv", ["game"])
    dropped.add("k", [Row("a", 1.0, True)])
    dropped.close(write=False)
    assert not (tmp_path / "x.csv").exists()


def test_group_by_keeps_first_seen_order() -> None:
    rows = [{"k": "b", "v": 1}, {"k": "a", "v": 2}, {"k": "b", "v": 3}]
    groups = group_by(rows, lambda r: r["k"])
    assert list(groups) == ["b", "a"]
    assert [r["v"] for r in groups["b"]] == [1, 3]


def test_mean_leaves_missing_values_out() -> None:
    assert mean([1.0, None, 2.0]) == 1.5  # not (1 + 0 + 2) / 3
    assert mean([None, None]) is None
    assert mean([]) is None
    assert [number(v) for v in ("", None, "0.5", 2, True)] == [None, None, 0.5, 2.0, 1.0]


CELLS = st.one_of(
    st.none(), st.booleans(), st.integers(), st.text(max_size=8),
    st.floats(allow_nan=False), st.floats(allow_nan=False).map(np.float64),
)


@given(st.lists(st.lists(CELLS, min_size=2, max_size=2), max_size=6))
def test_plain_cells_skip_formatting_with_the_same_bytes(grid: list[list[object]]) -> None:
    """The csv module writes plain cells itself; any other type (a numpy float) sends the
    rows through `format_cell`. Either way each line is the cells' `format_cell` text."""
    expected = io.StringIO()
    csv.writer(expected).writerows([[format_cell(v) for v in row] for row in grid])
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "t.csv"
        write_table(path, [{"a": a, "b": b} for a, b in grid], ["a", "b"])
        assert path.read_bytes() == b"a,b\r\n" + expected.getvalue().encode()


def test_a_lone_surrogate_cell_is_written_as_a_replacement_character(tmp_path: Path) -> None:
    write_table(tmp_path / "t.csv", [{"error": "bad \ud800 text"}])
    assert read_table(tmp_path / "t.csv") == [{"error": "bad \ufffd text"}]

"""The papers' published rows: shipped per benchmark, read through one
API, printed beside a run's rows with a `source` column and never inside a result
column."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from confide.core.published import PublishedRow, _read, beside, published_rows
from confide.errors import ConfideError


def test_each_paper_ships_its_model_tables() -> None:
    tables = {
        bench: {row.table for row in published_rows(bench)}
        for bench in ("calbench", "sotopia-tom", "incognita")
    }
    assert tables == {
        "calbench": {"Table 1", "Table 2"},
        "sotopia-tom": {"Table 2a", "Table 3"},
        "incognita": {"Figure 2", "Figure 5", "Figure 6", "Table 1", "Table 2"},
    }
    assert published_rows("demo") == []


def test_rows_carry_the_papers_cells() -> None:
    """A cell of each table, read off the seed text by hand."""
    cal = {(r.table, r.model, r.setting["Setting"]): r for r in published_rows("calbench")}
    sonnet = cal[("Table 1", "anthropic/claude-sonnet-4-6", "Varied")]
    assert sonnet.metrics == {
        "Seats": 135, "Meetings": 2.53, "Coord.": 84.20, "Excess": 0.43, "Msgs.": 3.50,
        "Fair.": 0.913, "VPS": 12.85,
    }
    assert sonnet.setting["paper_model"] == "Claude Sonnet 4.6" and sonnet.section == "4"
    assert cal[("Table 2", "dsm-welfare", "Varied")].metrics["Coord."] == 99.1
    sot = {(r.table, r.model, r.setting["strategy"]): r for r in published_rows("sotopia-tom")}
    assert sot[("Table 2a", "openai-api/qwen3-235b-a22b", "tom-belief")].metrics == {"DA": 0.622}
    assert sot[("Table 3", "openai/gpt-4o", "self-focused")].metrics["InfoMgmt"] == 0.329
    inc = published_rows("incognita")
    native = [r for r in inc if r.setting.get("condition") == "native"]
    assert [(r.table, r.metrics) for r in native] == [("Figure 5", {"success": 0.85})]
    dispersion = next(r for r in inc if r.setting.get("pair") == "dispersion (all models)")
    assert dispersion.metrics == {"mean_delta": 0.2222, "p_exact": 0.0127}  # empty cells: absent
    assert all(r.source == "published" and r.paper for r in inc)


def test_rows_are_frozen() -> None:
    row = published_rows("calbench")[0]
    assert isinstance(row, PublishedRow)
    with pytest.raises(ValueError):
        row.model = "x"  # type: ignore[misc]


def test_beside_interleaves_matching_rows_in_the_summarys_columns() -> None:
    row = PublishedRow(benchmark="b", paper="P", table="Table 9", section="1", model="m",
                       setting={"cond": "x", "paper_name": "M"}, metrics={"score": 0.5, "other": 1})
    summary = [{"model": "m", "cond": "x", "score": 0.7}, {"model": "m", "cond": "y", "score": 0.1}]
    assert beside(summary, [row], "model") == [
        {"source": "run", "table": "", "model": "m", "cond": "x", "score": 0.7},
        {"source": "published", "table": "Table 9", "model": "m", "cond": "x", "score": 0.5},
        {"source": "run", "table": "", "model": "m", "cond": "y", "score": 0.1},
    ]
    assert beside(summary[1:], [row], "model") == []  # nothing matches: print the plain summary


def test_a_bad_cell_names_file_line_and_field(tmp_path: Path) -> None:
    (tmp_path / "tables.json").write_text(json.dumps({"paper": "P", "tables": {"t.csv": {}}}))
    (tmp_path / "t.csv").write_text("table,section,model,score\nT,1,m,high\n")
    with pytest.raises(ConfideError, match=r"t\.csv:2: field 'score' is not a number: 'high'"):
        _read("b", tmp_path)

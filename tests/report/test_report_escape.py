"""report.html escapes every field it shows.

A payload is planted in every place a run directory feeds into the report: the directory
name (title), experiment.yaml, CSV file names, headers and cells (a task id, an HTTP error
body in the `error` column), figure and trace file names. The report may contain the text
only escaped, never as markup.
"""

from __future__ import annotations

from pathlib import Path

from confide.report import build_report

RAW = "<img src=x onerror=alert(1)>"

def test_every_planted_payload_is_escaped(planted_run: Path, tmp_path: Path) -> None:
    html = build_report(planted_run, tmp_path / "report.html").read_text("utf-8")
    assert RAW not in html and "<script>alert" not in html
    assert html.count("&lt;img src=x onerror=alert(1)&gt;") >= 8
    # attribute values cannot be closed early either
    assert '"><img' not in html

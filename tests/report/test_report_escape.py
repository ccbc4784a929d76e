"""report.html escapes every field it shows (issue 12, item 2).

A payload is planted in every place a run directory feeds into the report: the directory
name (title), experiment.yaml, CSV file names, headers and cells (a task id, an HTTP error
body in the `error` column), figure and trace file names. The report may contain the text
only escaped, never as markup.
"""

from __future__ import annotations

import csv
from pathlib import Path

from confide.report import build_report

PAYLOAD = '"><img src=x onerror=alert(1)><script>alert(1)<\\script>'
RAW = "<img src=x onerror=alert(1)>"


def plant(root: Path) -> Path:
    """A run directory whose every reported field carries PAYLOAD."""
    run = root / f"run{PAYLOAD}"
    (run / "traces").mkdir(parents=True)
    (run / "figures").mkdir()
    (run / "experiment.yaml").write_text(f"benchmark: demo\nnote: '{PAYLOAD}'\n", "utf-8")
    header = ["task_id", "status", "error", f"metric{PAYLOAD}"]
    rows = [[PAYLOAD, "error", f"HTTP 500: <html><body>{PAYLOAD}</body></html>", "0.5"]]
    for name in ("results.csv", "summary.csv", f"extra{PAYLOAD}.csv"):
        with (run / name).open("w", newline="", encoding="utf-8") as handle:
            csv.writer(handle).writerows([header, *rows])
    (run / "figures" / f"fig{PAYLOAD}.png").write_bytes(b"\x89PNG\r\n\x1a\n")
    (run / "traces" / f"ep{PAYLOAD}.jsonl").write_text("{}\n", "utf-8")
    return run


def test_every_planted_payload_is_escaped(tmp_path: Path) -> None:
    html = build_report(plant(tmp_path), tmp_path / "report.html").read_text("utf-8")
    assert RAW not in html and "<script>alert" not in html
    assert html.count("&lt;img src=x onerror=alert(1)&gt;") >= 8
    # attribute values cannot be closed early either
    assert '"><img' not in html

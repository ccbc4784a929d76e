"""A single-file HTML report for a run directory.

It shows the resolved experiment, every CSV table the run wrote (summary first, then the
benchmark's own tables, results last and truncated), every PNG figure under `figures/`
embedded as base64, and links to the traces. Benchmarks add content by writing CSVs and
figures in their `write_outputs` hook; the report needs no benchmark-specific code.
"""

from __future__ import annotations

import base64
import csv
from pathlib import Path

from jinja2 import Environment, PackageLoader, select_autoescape

from confide.errors import ConfideError
from confide.redaction import scrub

MAX_RESULT_ROWS = 500


def build_report(run_dir: Path | str, output: Path | str | None = None) -> Path:
    """Render `run_dir` into `report.html` (or `output`) and return its path."""
    run_dir = Path(run_dir)
    if not (run_dir / "results.csv").exists():
        raise ConfideError(f"{run_dir} is not a run directory (no results.csv)")
    env = Environment(loader=PackageLoader("confide.report", "templates"),
                      autoescape=select_autoescape(["html"]))
    experiment = run_dir / "experiment.yaml"
    tables = [_table(p, run_dir) for p in _csv_order(run_dir)]
    figures = [
        {"name": p.stem.replace("_", " "), "data": base64.b64encode(p.read_bytes()).decode()}
        for p in sorted((run_dir / "figures").glob("*.png"))
    ]
    traces = sorted(p.name for p in (run_dir / "traces").glob("*.jsonl"))
    html = env.get_template("report.html.j2").render(
        title=f"confide run: {run_dir.name}",
        experiment=experiment.read_text(encoding="utf-8") if experiment.exists() else "",
        tables=tables,
        figures=figures,
        traces=traces,
    )
    target = Path(output) if output is not None else run_dir / "report.html"
    target.write_text(scrub(html), encoding="utf-8")
    return target


def _csv_order(run_dir: Path) -> list[Path]:
    files = sorted(run_dir.glob("*.csv"))
    first = [p for p in files if p.name == "summary.csv"]
    last = [p for p in files if p.name == "results.csv"]
    return first + [p for p in files if p not in first + last] + last


def _table(path: Path, run_dir: Path) -> dict[str, object]:
    with path.open(newline="", encoding="utf-8") as handle:
        rows = list(csv.reader(handle))
    header, body = (rows[0], rows[1:]) if rows else ([], [])
    return {
        "name": path.name,
        "header": header,
        "rows": [[_fmt(c) for c in r] for r in body[:MAX_RESULT_ROWS]],
        "truncated": max(0, len(body) - MAX_RESULT_ROWS),
        "href": path.relative_to(run_dir).as_posix(),
    }


def _fmt(cell: str) -> str:
    """Numbers with many decimals shown to 4 significant decimals."""
    try:
        value = float(cell)
    except ValueError:
        return cell
    return cell if cell.lstrip("-").isdigit() else f"{value:.4g}"

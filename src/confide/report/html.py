"""A single-file HTML report for a run directory.

It opens with the benchmark's headline table (summary.csv), each column defined from the
glossary, and its figures; then the resolved experiment, the episodes worth opening
(failed ones and those with the most leak events), and every other CSV, summarized when
large with the full file a link away. Links are relative to where the report is written,
so the report keeps working when moved together with its run directory. Episode links go
into a viewer bundle at RUN_DIR/view (`confide report --viewer`) when there is one, else to
the trace files. Every value is HTML-escaped (autoescape on for every template).
"""

from __future__ import annotations

import base64
import csv
import gzip
import itertools
import json
import math
import os
from collections.abc import Mapping
from dataclasses import dataclass, replace
from functools import cache
from pathlib import Path
from typing import Any
from urllib.parse import quote

import yaml
from jinja2 import Environment, PackageLoader, Template

from confide import atomic
from confide.core.demo import demo_line, experiment_demo
from confide.core.published import PUBLISHED_FILE
from confide.core.spend import SPEND_CSV, spend_rows, without_seat_spend
from confide.core.trace import find_trace
from confide.core.viewing import ReportSection
from confide.errors import ConfideError
from confide.redaction import scrub
from confide.registry import get_benchmark
from confide.report.figures import headline_figures
from confide.report.intervals import intervals
from confide.view.data import RunData
from confide.view.episodes import number
from confide.view.glossary import glossary_for

SHOWN_ROWS = 12
"""Rows shown of a large table (the rest is in its CSV)."""
LARGE = (25, 14)
"""A table with more rows or columns than this is summarized."""
ID_CHARS = 28
"""Longer text cells are shortened, with the full value on hover."""
LISTED_EPISODES = 15


def build_report(run_dir: Path | str, output: Path | str | None = None) -> Path:
    """Render `run_dir` into `report.html` (or `output`) and return its path."""
    run_dir = Path(run_dir)
    if not (run_dir / "results.csv").exists():
        raise ConfideError(f"{run_dir} is not a run directory (no results.csv)")
    target = Path(output) if output is not None else run_dir / "report.html"
    target.parent.mkdir(parents=True, exist_ok=True)
    html = render_report(run_dir, target.parent)
    return atomic.write_text(target, scrub(html))


def render_report(run_dir: Path, where: Path) -> str:
    """The report's HTML, with links relative to the directory `where` it will live in."""
    base = Path(os.path.relpath(run_dir.resolve(), where.resolve()))
    link = _Linker(base, run_dir / "traces", viewer=(run_dir / "view" / "index.html").is_file())
    experiment_path = run_dir / "experiment.yaml"
    experiment_text = experiment_path.read_text("utf-8") if experiment_path.exists() else ""
    experiment = _mapping(experiment_text)
    benchmark = str(experiment.get("benchmark", ""))
    terms = glossary_for(benchmark)
    sections = _sections(benchmark)
    summary = _read(run_dir / "summary.csv") if (run_dir / "summary.csv").exists() else []
    headline = without_seat_spend(summary)  # the spend has its own section
    results = _results(run_dir)
    episodes = results.episodes
    figures = [
        {"name": title, "about": "", "section": "", "empty": None,
         "src": "data:image/svg+xml;base64," + base64.b64encode(svg).decode()}
        for title, svg in headline_figures(benchmark, _dicts(summary), _published(run_dir))
    ] + [_figure(run_dir, path, sections) for path in _declared_first(
        sorted((run_dir / "figures").glob("*.png")), sections, "figures/")]
    tables = [_spend(run_dir, link, terms) if p.name == SPEND_CSV
              else _preview(p, link, terms, sections.get(p.name))
              for p in _csv_order(run_dir, sections)]
    return _template().render(
        title=f"confide run: {run_dir.name}",
        benchmark=benchmark,
        demo=demo_line(demo) if (demo := experiment_demo(experiment)) else None,
        headline=_with_intervals(_table(headline, "summary.csv", link, terms, whole=True),
                                 headline, results.rows) if headline else None,
        definitions=[terms[c] for c in (headline[0] if headline else []) if c in terms],
        figures=figures,
        resolved=[*_resolved(experiment, episodes), ("price table", price_line(run_dir)),
                  ("spend", spend_of(run_dir))],
        experiment=experiment_text,
        episodes=_notable(episodes, results.leaks, link),
        episode_count=len(episodes),
        viewer=link.viewer,
        tables=tables,
        traces_href=link.file("traces") + "/",
    )


@cache
def _template() -> Template:
    """The report's template, compiled once a process (a run's output phase renders one
    report, a rescore or a bench several)."""
    # autoescape=True for every template: select_autoescape(["html"]) matches on the file
    # extension and so never applied to `report.html.j2`
    env = Environment(loader=PackageLoader("confide.report", "templates"), autoescape=True)
    return env.get_template("report.html.j2")


INTERVAL_ROWS = 20_000
"""results.csv rows up to which the headline gets intervals (they are held in memory)."""


def _with_intervals(
    table: dict[str, Any], summary: list[list[str]], results: list[dict[str, str]] | None
) -> dict[str, Any]:
    """The headline table with each mean's 95% interval (report/intervals.py) in its
    cell, at the column's precision; `results`: results.csv's rows, None when it has
    more than `INTERVAL_ROWS`."""
    if results is None:
        return {**table, "intervals": None}
    found = intervals(_dicts(summary), results)
    header = summary[0]
    for row, spans in zip(table["rows"], found, strict=True):
        for i, cell in enumerate(row):
            span = spans.get(header[i]) if i < len(header) else None
            if span is not None:
                places = len(cell["text"].split(".")[1]) if "." in cell["text"] else 0
                cell["ci"] = f"{span[0]:.{places}f}, {span[1]:.{places}f}"
    return {**table, "intervals": any(found)}


RUN_SECTIONS: Mapping[str, ReportSection] = {
    PUBLISHED_FILE: ReportSection(
        "The run beside the published rows", "Each summary row of this run followed "
        "by the rows the paper published for the same setting, told apart by the source "
        "column (run or published).", ""),
    SPEND_CSV: ReportSection(
        "Spend per lineup and condition", "What the episodes of each lineup and condition "
        "spent, every seat and role together: model calls, input tokens (of them read from "
        "the provider's prompt cache), output tokens (of them hidden reasoning), cost and "
        "invalid replies. spend.csv also has retries, cache writes, and each seat's and "
        "role's own.", ""),
}
"""The files the runner writes for every benchmark that calls for them."""


def _sections(benchmark: str) -> Mapping[str, ReportSection]:
    """The runner's and the benchmark's declared report sections (the runner's only for a
    benchmark not installed)."""
    try:
        view = get_benchmark(benchmark).view
    except ConfideError:
        return RUN_SECTIONS
    return {**RUN_SECTIONS, **(view.sections if view is not None else {})}


def _declared_first(
    paths: list[Path], sections: Mapping[str, ReportSection], prefix: str = ""
) -> list[Path]:
    """The files the benchmark declares, in its order, then the others by name."""
    order = {name: i for i, name in enumerate(sections)}
    return sorted(paths, key=lambda p: (order.get(prefix + p.name, len(order)), p.name))


def _figure(run_dir: Path, path: Path, sections: Mapping[str, ReportSection]) -> dict[str, Any]:
    """A figure with its caption in words, and a note when the table it draws is empty."""
    declared = sections.get(f"figures/{path.name}")
    empty = None
    if declared is not None and declared.data is not None:
        data = run_dir / declared.data
        if data.is_file() and not _has_signal(data):
            empty = (f"Nothing to draw: {declared.data} has no nonzero value in this run "
                     "(its table is below).")
    return {"name": declared.title if declared else path.stem.replace("_", " "),
            "about": declared.about if declared else "",
            "section": declared.section if declared else "", "empty": empty,
            "src": "data:image/png;base64," + base64.b64encode(path.read_bytes()).decode()}


def _has_signal(path: Path) -> bool:
    """Whether a figure's table holds any nonzero number outside count columns."""
    rows = _dicts(_read(path))
    skip = {"episodes", "n_tasks", "n_trials", "seat_games", "round"}
    return any(v for row in rows for k, cell in row.items()
               if k not in skip and (v := number(cell)) is not None)


class _Linker:
    """Hrefs relative to the report: run files, and episodes (viewer or trace)."""

    def __init__(self, base: Path, traces: Path, *, viewer: bool) -> None:
        self.base = base
        self.traces = traces
        self.viewer = viewer

    def file(self, name: str) -> str:
        return quote((self.base / name).as_posix())

    def episode(self, episode_id: str) -> str:
        if self.viewer:
            return self.file("view/index.html") + "#/episode/0/" + quote(episode_id, safe="")
        return self.file(f"traces/{find_trace(self.traces, episode_id).name}")


def _read(path: Path) -> list[list[str]]:
    with path.open(newline="", encoding="utf-8") as handle:
        return list(csv.reader(handle))


def _preview(
    path: Path, link: _Linker, terms: dict[str, Any], declared: ReportSection | None = None
) -> dict[str, Any]:
    """A table of the report, streamed: a run's tables (gzipped when large) can hold
    hundreds of thousands of rows, and only the first few are shown. `declared` gives its
    title in words, what it shows and its paper section."""
    opener = gzip.open if path.suffix == ".gz" else open
    with opener(path, "rt", newline="", encoding="utf-8") as handle:
        grid = list(itertools.islice(csv.reader(handle), LARGE[0] + 1))
    rows = _unquoted_rows(path)
    if rows is None:  # some cell is quoted and may hold a line break: parse every row
        with opener(path, "rt", newline="", encoding="utf-8") as handle:
            rows = sum(1 for _ in csv.reader(handle))
    return _titled(_table(grid, path.name, link, terms, total=max(rows - 1, 0)), declared)


def _titled(table: dict[str, Any], declared: ReportSection | None) -> dict[str, Any]:
    """`table` with its section's title in words, what it shows, its paper section and
    its anchor (the file's name when it declares none)."""
    name = table["name"]
    return {**table, "title": declared.title if declared else name,
            "about": declared.about if declared else "",
            "section": declared.section if declared else "",
            "anchor": "t-" + "".join(c if c.isalnum() else "-" for c in name)}


def _spend(run_dir: Path, link: _Linker, terms: dict[str, Any]) -> dict[str, Any]:
    """The spend section: spend.csv's totals per lineup and condition (`spend_rows`),
    whole, each seat's and role's own a link away."""
    rows = spend_rows(run_dir)
    declared = RUN_SECTIONS[SPEND_CSV]
    if not rows:  # a header alone
        return _preview(run_dir / SPEND_CSV, link, terms, declared)
    grid = [list(rows[0]), *([str(v) for v in row.values()] for row in rows)]
    return _titled(_table(grid, SPEND_CSV, link, terms, whole=True), declared)


def _unquoted_rows(path: Path) -> int | None:
    """The rows of a CSV file (header included), counted as line ends in its bytes, or
    None at the first quote: the csv module quotes every cell that holds a line break, so
    without quotes each line is one row (a tenth of the time of parsing the 252,000 rows
    of a CalBench run's evidence table, and no text decoding)."""
    rows, last = 0, b"\n"
    with (gzip.open if path.suffix == ".gz" else open)(path, "rb") as handle:
        while chunk := handle.read(1 << 20):
            if b'"' in chunk:
                return None
            rows += chunk.count(b"\n")
            last = chunk[-1:]
    return rows + (last != b"\n")


def _published(run_dir: Path) -> list[dict[str, str]]:
    """The run's summary rows beside the paper's (published.csv), if it has any."""
    path = run_dir / PUBLISHED_FILE
    return _dicts(_read(path)) if path.exists() else []


def _dicts(grid: list[list[str]]) -> list[dict[str, str]]:
    return [dict(zip(grid[0], row, strict=False)) for row in grid[1:]] if grid else []


def _mapping(text: str) -> dict[str, Any]:
    try:
        data = yaml.safe_load(text) if text else None
    except yaml.YAMLError:
        return {}
    return data if isinstance(data, dict) else {}


def _csv_order(run_dir: Path, sections: Mapping[str, ReportSection]) -> list[Path]:
    """Every CSV (plain or gzipped) but the headline: those the benchmark declares in its
    order, then the others by name, results.csv last."""
    files = [p for p in sorted([*run_dir.glob("*.csv"), *run_dir.glob("*.csv.gz")])
             if p.name != "summary.csv"]
    files = _declared_first(files, sections)
    return [p for p in files if p.name != "results.csv"] + [
        p for p in files if p.name == "results.csv"
    ]


def _table(
    grid: list[list[str]],
    name: str,
    link: _Linker,
    terms: dict[str, Any],
    *,
    total: int | None = None,
    whole: bool = False,
) -> dict[str, Any]:
    """`grid` is the header and the first body rows; `total` counts all body rows (the
    whole grid when None)."""
    header, body = (grid[0], grid[1:]) if grid else ([], [])
    total = len(body) if total is None else total
    large = not whole and (total > LARGE[0] or len(header) > LARGE[1])
    shown = body[:SHOWN_ROWS] if large else body
    numeric = [bool(shown) and all(number(r[i]) is not None or r[i] == "" for r in shown
                                   if i < len(r)) for i in range(len(header))]
    places = [_places([r[i] for r in shown if i < len(r)]) if numeric[i] else None
              for i in range(len(header))]
    return {
        "name": name,
        "href": link.file(name),
        "header": [{"text": h, "title": _term_title(terms.get(h)), "num": n}
                   for h, n in zip(header, numeric, strict=True)],
        "rows": [[_cell(c, numeric[i] if i < len(numeric) else False,
                        places[i] if i < len(places) else None)
                  for i, c in enumerate(r)] for r in shown],
        "total": total,
        "columns": len(header),
        "large": large,
    }


def _term_title(term: Any) -> str | None:
    return f"{term.name}: {term.definition} (section {term.section})" if term else None


def _places(cells: list[str]) -> int | None:
    """One precision for a numeric column: None when every cell is an integer, else the
    decimals that give its largest value three significant digits (at least two), so
    48.89 and 0.05 stand as 48.89 and 0.05, never beside 0.05209."""
    values = [v for c in cells if (v := number(c)) is not None]
    if all(c.lstrip("-").isdigit() or c == "" for c in cells) or not values:
        return None
    largest = max(abs(v) for v in values)
    return max(2, 2 - math.floor(math.log10(largest))) if largest > 0 else 2


def _cell(text: str, numeric: bool, places: int | None = None) -> dict[str, Any]:
    if numeric:
        value = number(text)
        if value is None or (text.lstrip("-").isdigit() and places is None):
            shown = text
        elif places is not None:
            shown = f"{value:.{places}f}"
        else:
            shown = f"{value:.4g}"
        rounded = value is not None and number(shown) != value
        return {"text": shown, "num": True, "title": text if rounded else None}
    if len(text) > ID_CHARS:  # keep both ends: ids differ at the start and the end
        half = (ID_CHARS - 1) // 2
        return {"text": text[:half] + "…" + text[-half:], "num": False, "title": text}
    return {"text": text, "num": False, "title": None}


@dataclass(frozen=True, slots=True)
class _Episode:
    """What the report shows of one episode (its seat rows are not kept: a 10,000-episode
    run's results.csv is read a row at a time)."""

    episode_id: str
    task_id: str
    lineup: str
    condition: str
    status: str
    error: str
    """The first nonempty `error` cell of its rows."""


@dataclass(frozen=True, slots=True)
class _Results:
    """What the report reads of results.csv, in one pass."""

    episodes: list[_Episode]
    """The episodes in results.csv's order (rows of one episode need not be adjacent)."""
    leaks: dict[str, int]
    """Episode id -> leak events, counted as the viewer counts them (the benchmark's
    `ViewHooks.leaks`) on the episode's last row."""
    rows: list[dict[str, str]] | None
    """Every row, for the headline's intervals; None past `INTERVAL_ROWS` rows."""


def _results(run_dir: Path) -> _Results:
    """results.csv, read a row at a time, once (each pass over a CalBench main job's 5,400
    rows costs about 30 ms)."""
    count = RunData(run_dir, 0).leaks.count
    found: dict[str, _Episode] = {}
    shared: dict[str, str] = {}  # one string object per distinct task, lineup, condition
    leaks: dict[str, int] = {}
    rows: list[dict[str, str]] | None = []
    with (run_dir / "results.csv").open(newline="", encoding="utf-8") as handle:
        for row in csv.DictReader(handle):
            key, error = row.get("episode_id", ""), row.get("error") or ""
            seen = found.get(key)
            if seen is None:
                task, lineup, condition, status = (shared.setdefault(v, v) for v in (
                    row.get("task_id", ""), row.get("lineup", ""), row.get("condition", ""),
                    row.get("status", "")))
                found[key] = _Episode(key, task, lineup, condition, status, error)
            elif error and not seen.error:
                found[key] = replace(seen, error=error)
            leaks[key] = count(row)
            if rows is not None and len(rows) == INTERVAL_ROWS:
                rows = None  # not held past the limit
            elif rows is not None:
                rows.append(row)
    return _Results(list(found.values()), leaks, rows)


def _resolved(experiment: dict[str, Any], episodes: list[_Episode]) -> list[tuple[str, str]]:
    """What the run actually covered, read from its episodes."""
    def distinct(values: list[str]) -> str:
        return ", ".join(v for v in dict.fromkeys(values) if v) or "-"

    source = experiment.get("tasks") or f"suite {experiment.get('suite') or 'default'}"
    return [
        ("benchmark", str(experiment.get("benchmark", "-"))),
        ("tasks", f"{len({e.task_id for e in episodes})} from {source}"),
        ("lineups", distinct([e.lineup for e in episodes])),
        ("conditions", distinct([e.condition for e in episodes])),
        ("repetitions", str(experiment.get("repetitions", "-"))),
        ("seed", str(experiment.get("seed", "-"))),
        ("episodes", f"{len(episodes)} ({sum(e.status != 'ok' for e in episodes)} not ok)"),
    ]


def price_line(run_dir: Path) -> str:
    """The price table the run's costs come from, as run.json records it: version, date, source and
    file; say so when the run predates the record."""
    path = run_dir / "run.json"
    data = json.loads(path.read_text("utf-8")) if path.exists() else {}
    prices = data.get("prices") if isinstance(data, dict) else None
    if not isinstance(prices, dict):
        return "not recorded (the run predates price-table records)"
    return (
        f"version {prices.get('version', '?')}, as of {prices.get('as_of', '?')}; "
        f"source: {prices.get('source') or 'not given'}; file {prices.get('file', '?')}. "
        "Calls without a price are reported as unpriced, never as $0."
    )


def spend_of(run_dir: Path) -> str:
    """What the run's episodes spent on models, as run.json records it
    (`runner.spend.run_spend`); per lineup and condition, with invalid replies, in
    spend.csv."""
    path = run_dir / "run.json"
    data = json.loads(path.read_text("utf-8")) if path.exists() else {}
    spend = data.get("spend") if isinstance(data, dict) else None
    line = spend.get("line") if isinstance(spend, dict) else None
    if not isinstance(line, str):
        return "not recorded"
    return line + ("; per lineup in spend.csv" if (run_dir / "spend.csv").exists() else "")


def _notable(
    episodes: list[_Episode], leaks: dict[str, int], link: _Linker
) -> list[dict[str, Any]]:
    """Failed episodes first, then those with the most leak events."""
    failed = [e for e in episodes if e.status != "ok"]
    leaky = sorted((e for e in episodes if e.status == "ok" and leaks.get(e.episode_id)),
                   key=lambda e: -leaks[e.episode_id])
    return [
        {"id": e.episode_id, "short": _cell(e.episode_id, False)["text"],
         "href": link.episode(e.episode_id), "task": e.task_id, "lineup": e.lineup,
         "condition": e.condition, "status": e.status,
         "leaks": str(leaks.get(e.episode_id, "")), "error": e.error}
        for e in (failed + leaky)[:LISTED_EPISODES]
    ]

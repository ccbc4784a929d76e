"""report.html content: headline first with defined columns, figures for
every benchmark, summarized large tables, relative links that survive a move."""

from __future__ import annotations

import csv
import re
import shutil
from html.parser import HTMLParser
from pathlib import Path
from urllib.parse import unquote, urlsplit

from markupsafe import escape

from confide.report import build_report
from confide.report.html import LARGE
from confide.view import write_bundle
from confide.view.glossary import glossary_for


class _Links(HTMLParser):
    def __init__(self) -> None:
        super().__init__()
        self.hrefs: list[str] = []
        self.srcs: list[str] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        values = dict(attrs)
        if tag == "a" and values.get("href"):
            self.hrefs.append(values["href"] or "")
        if tag == "img" and values.get("src"):
            self.srcs.append(values["src"] or "")


def _parse(html: str) -> _Links:
    parser = _Links()
    parser.feed(html)
    return parser


def _broken(report: Path) -> list[str]:
    """Hrefs of the report whose file does not exist relative to the report."""
    links = _parse(report.read_text("utf-8")).hrefs
    assert links
    return [h for h in links
            if not (report.parent / unquote(urlsplit(h).path)).exists()]


def test_report_opens_with_the_defined_headline_table(tiny_runs: dict[str, Path]) -> None:
    run = tiny_runs["calbench"]
    html = build_report(run).read_text("utf-8")
    first_table = html.index("<table>")
    header = (run / "summary.csv").read_text("utf-8").splitlines()[0].split(",")
    assert all(f">{c}</th>" in html[first_table: first_table + 3000] for c in header)
    assert html.index('id="headline"') < first_table < html.index('id="experiment"')
    for column, term in glossary_for("calbench").items():
        if column in header:
            assert f"<dt>{column}</dt>" in html and term.definition.replace("'", "&#39;") in html


def test_figures_for_every_benchmark(tiny_runs: dict[str, Path]) -> None:
    def images(benchmark: str) -> list[str]:
        return _parse(build_report(tiny_runs[benchmark]).read_text("utf-8")).srcs

    assert sum(s.startswith("data:image/svg+xml") for s in images("calbench")) == 3
    assert sum(s.startswith("data:image/svg+xml") for s in images("sotopia-tom")) == 1
    incognita = images("incognita")
    assert sum(s.startswith("data:image/png") for s in incognita) == 3  # Figures 2, 3 and 6
    assert not (tiny_runs["incognita"] / "figures" / "table1_interactions.png").exists()


def test_large_tables_are_summarized_with_their_csv_a_link_away(
    tiny_runs: dict[str, Path],
) -> None:
    run = tiny_runs["calbench"]
    html = build_report(run).read_text("utf-8")
    summarized = 0
    for path in run.glob("*.csv"):
        grid = list(csv.reader(path.open(encoding="utf-8", newline="")))
        rows, columns = len(grid) - 1, len(grid[0])
        note = f"{rows:,} rows × {columns} columns: too large to show here"
        large = path.name != "summary.csv" and (rows > LARGE[0] or columns > LARGE[1])
        assert (note in html) == large, path.name
        assert f'href="{path.name}"' in html
        summarized += large
    assert summarized >= 2


def test_links_work_after_moving_and_from_another_directory(
    tiny_runs: dict[str, Path], tmp_path: Path
) -> None:
    run = tmp_path / "run"
    shutil.copytree(tiny_runs["calbench"], run)
    write_bundle([run], run / "view")
    build_report(run)
    moved = tmp_path / "elsewhere" / "moved-run"
    moved.parent.mkdir()
    shutil.move(run, moved)
    assert _broken(moved / "report.html") == []
    html = (moved / "report.html").read_text("utf-8")
    assert re.search(r'href="view/index.html#/episode/0/[^"]+"', html)
    outside = build_report(moved, tmp_path / "reports" / "r.html")
    assert _broken(outside) == []
    assert 'href="../elsewhere/moved-run/summary.csv"' in outside.read_text("utf-8")


def test_large_table_row_counts_with_and_without_quoted_line_breaks(tmp_path: Path) -> None:
    """A table's total is its row count whether rows are counted as lines (no quote in
    the file past the preview) or parsed (a quoted cell may hold a line break)."""
    import gzip

    from confide.core.tables import write_table
    from confide.report.html import _Linker, _preview

    link = _Linker(Path("."), tmp_path / "traces", viewer=False)
    plain = [{"a": i, "b": f"x{i}"} for i in range(100)]
    broken = [*plain[:60], {"a": 60, "b": "two\r\nlines"}, {"a": 61, "b": 'a "quote"'},
              *plain[62:]]
    for name, rows in (("plain.csv.gz", plain), ("plain.csv", plain),
                       ("broken.csv.gz", broken), ("broken.csv", broken)):
        path = write_table(tmp_path / name, rows)
        data = path.read_bytes()
        lines = (gzip.decompress(data) if name.endswith(".gz") else data).count(b"\n")
        assert lines == (102 if name.startswith("broken") else 101)
        assert _preview(path, link, {})["total"] == 100, name


def test_contents_link_every_section_and_sections_are_declared_in_words(
    tiny_runs: dict[str, Path],
) -> None:
    """A table of contents, and every table titled, explained and placed
    in its paper by its benchmark (envs/<id>/report_sections.py), not by its file name."""
    from confide.registry import get_benchmark
    from confide.report.html import RUN_SECTIONS

    for benchmark in ("calbench", "sotopia-tom", "incognita"):
        run = tiny_runs[benchmark]
        html = build_report(run).read_text("utf-8")
        toc = html[html.index('<nav class="toc"'): html.index("</nav>")]
        anchors = re.findall(r'href="#([^"]+)"', toc)
        assert anchors[:1] == ["headline"] and len(anchors) >= 5
        assert all(f'id="{a}"' in html for a in anchors), benchmark
        sections = {**RUN_SECTIONS,
                    **get_benchmark(benchmark).view.sections}  # type: ignore[union-attr]
        tables = [p.name for p in [*run.glob("*.csv"), *run.glob("*.csv.gz")]
                  if p.name != "summary.csv"]
        assert tables and all(name in sections for name in tables), (
            benchmark, [n for n in tables if n not in sections])
        for name in tables:
            declared = sections[name]
            heading = re.search(rf'<h2 id="[^"]+">([^<]+) <a class="note" href="{re.escape(name)}"',
                                html)
            assert heading is not None and heading.group(1) == declared.title, name
            assert str(escape(declared.about)) in html
            assert f"paper section {declared.section}" in html
        figures = [f"figures/{p.name}" for p in (run / "figures").glob("*.png")]
        assert all(f in sections for f in figures), benchmark
        captions = re.findall(r"<figcaption><strong>([^<]+)[.]</strong>", html)
        assert all(str(escape(sections[f].title)) in captions for f in figures), benchmark


def test_headline_columns_have_one_precision_each(tiny_runs: dict[str, Path]) -> None:
    html = build_report(tiny_runs["sotopia-tom"]).read_text("utf-8")
    table = html[html.index('id="headline"'): html.index('id="experiment"')]
    body = re.findall(r"<tr>(.*?)</tr>", table.split("<tbody>")[1])
    cells = [re.findall(r'<td class="num"[^>]*>([^<]*)</td>', row) for row in body]
    assert cells and cells[0]
    for column in zip(*cells, strict=True):
        decimals = {len(v.split(".")[1]) if "." in v else 0 for v in column if v}
        assert len(decimals) <= 1, column


def test_an_empty_chart_says_why() -> None:
    import tempfile

    from confide.report.html import _has_signal

    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "t.csv"
        path.write_text("model,episodes,failed_items,never_asked_share\nm,3,0,0.0\n", "utf-8")
        assert not _has_signal(path)  # a count of episodes is no signal to draw
        path.write_text("model,episodes,failed_items,never_asked_share\nm,3,2,0.5\n", "utf-8")
        assert _has_signal(path)


def test_episode_links_say_what_they_open(tiny_runs: dict[str, Path], tmp_path: Path) -> None:
    run = tmp_path / "run"
    shutil.copytree(tiny_runs["sotopia-tom"], run)
    html = build_report(run).read_text("utf-8")
    assert "Each link is the episode's trace file" in html and "(trace)</span>" in html
    assert re.search(r'href="traces/[^"]+\.jsonl\.gz"', html)
    write_bundle([run], run / "view")
    html = build_report(run).read_text("utf-8")
    assert "opens the episode in the viewer bundled next to this report" in html
    assert "(trace)</span>" not in html

"""The report's headline figures (report/figures.py, report/svgchart.py): round ticks,
every summary row drawn where its values put it, deterministic bytes."""

from __future__ import annotations

import re
import xml.etree.ElementTree as ET

from confide.report.figures import headline_figures
from confide.report.svgchart import Panel, data_range, ticks

SVG = "{http://www.w3.org/2000/svg}"


def test_ticks_are_round_and_inside_the_limits() -> None:
    assert ticks(-5, 105) == [(v, str(v)) for v in range(0, 101, 20)]
    assert [v for v, _ in ticks(-3.8, 79.2)] == [0, 10, 20, 30, 40, 50, 60, 70]
    assert ticks(0, 1.05) == [(0.0, "0"), (0.2, "0.2"), (0.4, "0.4"), (0.6, "0.6"),
                              (0.8, "0.8"), (1.0, "1.0")]
    assert [label for _, label in ticks(0, 0.1)][:3] == ["0", "0.02", "0.04"]


def test_data_range_pads_and_bars_start_at_zero() -> None:
    assert data_range([0.0, 10.0]) == (-0.5, 10.5)
    assert data_range([2.0, 10.0], from_zero=True) == (0.0, 10.5)
    assert data_range([3.0, 3.0]) == (2.0, 4.0)
    assert data_range([0.0, 0.0], from_zero=True) == (0.0, 1.0)


def _rows() -> list[dict[str, str]]:
    return [
        {"Method": "imap", "Condition": "dm", "Coord.": "100.00", "VPS": "12.40"},
        {"Method": "imap", "Condition": "all-agent-groupchat", "Coord.": "100.00",
         "VPS": "61.00"},
        {"Method": "sdmap", "Condition": "dm", "Coord.": "59.11", "VPS": "0.05"},
        {"Method": "sdmap", "Condition": "all-agent-groupchat", "Coord.": "",
         "VPS": "7.30"},  # not numeric: left out
    ]


def test_frontier_puts_each_row_at_its_values() -> None:
    (title, frontier), (_, bars) = headline_figures("calbench", _rows())
    assert title == "Coordination-privacy frontier"
    root = ET.fromstring(frontier)
    xlim = data_range([12.40, 61.00, 0.05])
    panel = Panel(0, 0, 1, 1, xlim, (-5.0, 105.0))
    frame = next(r for r in root.iter(f"{SVG}rect") if r.get("stroke") == "#000")
    left, top = float(frame.get("x", "")), float(frame.get("y", ""))
    width, height = float(frame.get("width", "")), float(frame.get("height", ""))
    panel = Panel(left, top, width, height, xlim, (-5.0, 105.0))
    # imap · dm is a circle of color C0 at (12.40, 100)
    circles = [(float(c.get("cx", "")), float(c.get("cy", "")), c.get("fill"))
               for c in root.iter(f"{SVG}circle")]
    assert any(abs(x - panel.x(12.40)) < 0.01 and abs(y - panel.y(100.0)) < 0.01
               and fill == "#1f77b4" for x, y, fill in circles)
    assert any(abs(x - panel.x(0.05)) < 0.01 and abs(y - panel.y(59.11)) < 0.01
               and fill == "#ff7f0e" for x, y, fill in circles)
    legend = [t.text for t in root.iter(f"{SVG}text") if t.text and "·" in t.text]
    assert legend == ["imap · dm", "imap · all-agent-groupchat", "sdmap · dm"]
    # bars: one per (method, condition) and panel, with heights in proportion
    heights = [float(r.get("height", "")) for r in ET.fromstring(bars).iter(f"{SVG}rect")
               if r.get("fill") in ("#1f77b4", "#ff7f0e") and r.get("width") != "16"]
    assert len(heights) == 8
    assert abs(heights[0] / heights[2] - 100.0 / 59.11) < 1e-3  # coordination imap/sdmap dm


def test_figures_are_deterministic_and_skip_missing_columns() -> None:
    assert headline_figures("calbench", _rows()) == headline_figures("calbench", _rows())
    assert headline_figures("calbench", [{"Method": "imap"}]) == []
    assert headline_figures("incognita", _rows()) == []
    sotopia = headline_figures("sotopia-tom", [
        {"model": "m", "strategy": "s", "DA": "0.5", "IA": "1", "EFF": "0.25", "CPV": "0",
         "InfoMgmt": "0.75"}])
    assert len(sotopia) == 1
    assert not re.search(rb"nan|inf", sotopia[0][1])


def test_figure2_privacy_cost_plane_has_one_panel_per_setting() -> None:
    """The CalBench paper, Figure 2: excess VPS (x) against excess cost (y), uniform and varied
    panels side by side, each row a point at its values."""
    rows = [
        {"Setting": "Uniform", "Method": "imap", "Condition": "dm", "Coord.": "100",
         "VPS": "12.40", "Excess": "0.26"},
        {"Setting": "Varied", "Method": "imap", "Condition": "dm", "Coord.": "100",
         "VPS": "12.40", "Excess": "0.32"},
        {"Setting": "Varied", "Method": "sdmap", "Condition": "dm", "Coord.": "63",
         "VPS": "0.08", "Excess": "3.64"},
    ]
    titles = [title for title, _ in headline_figures("calbench", rows)]
    assert titles[1] == "Figure 2: privacy-cost plane"
    root = ET.fromstring(headline_figures("calbench", rows)[1][1])
    frames = [r for r in root.iter(f"{SVG}rect") if r.get("stroke") == "#000"]
    assert len(frames) >= 2  # two panels (the legend may add a frame)
    xlim = data_range([12.40, 12.40, 0.08], from_zero=True)
    ylim = data_range([0.26, 0.32, 3.64], from_zero=True)
    varied = Panel(*(float(frames[1].get(k, "")) for k in ("x", "y", "width", "height")),
                   xlim, ylim)
    circles = [(float(c.get("cx", "")), float(c.get("cy", ""))) for c in root.iter(f"{SVG}circle")]
    assert any(abs(x - varied.x(0.08)) < 0.01 and abs(y - varied.y(3.64)) < 0.01
               for x, y in circles)
    texts = [t.text or "" for t in root.iter(f"{SVG}text")]
    assert "Uniform: excess VPS" in texts and "Varied: excess VPS" in texts


def test_published_points_are_drawn_beside_never_as_bars() -> None:
    """The paper's Table 2 points sit beside the run's in the scatter
    plots, labelled with their table; the per-condition bars show the run alone."""
    published = [
        {"source": "run", "table": "", **_rows()[0]},
        {"source": "published", "table": "Table 2", "Method": "imap", "Condition": "dm",
         "Coord.": "100.0", "VPS": "12.4"},
    ]
    plain = headline_figures("calbench", _rows())
    beside = headline_figures("calbench", _rows(), published)
    (_, frontier), (_, bars) = beside
    texts = ET.fromstring(frontier).iter(f"{SVG}text")
    legend = [t.text for t in texts if t.text and "·" in t.text]
    assert "imap · dm (paper Table 2)" in legend
    assert bars == plain[1][1]

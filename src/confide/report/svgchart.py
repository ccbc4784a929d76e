"""A small SVG chart kit for the report's headline figures: scatter and grouped-bar panels
with axes, ticks, grid and a legend column, written as text.

Why not matplotlib: the report draws two or three small charts per run, and importing
matplotlib and laying them out cost more than a second of every run,
while the charts need nothing a few SVG elements cannot say. Output is byte-deterministic
(fixed number formatting, no ids, no dates). Colors follow matplotlib's default cycle
(tab10), so the figures keep the colors users know from the earlier reports.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, field
from html import escape

PALETTE = ("#1f77b4", "#ff7f0e", "#2ca02c", "#d62728", "#9467bd",
           "#8c564b", "#e377c2", "#7f7f7f", "#bcbd22", "#17becf")
MARKERS = "osD^v<>"
"""Marker shapes: circle, square, diamond, triangles up, down, left, right."""
FONT = "DejaVu Sans, Verdana, Arial, Helvetica, sans-serif"
TICK_SIZE = 12.0
LABEL_SIZE = 13.0
LEGEND_SIZE = 9.5
CHAR_WIDTH = 0.56
"""Mean glyph width over font size, to size the legend column and margins."""


def color(index: int) -> str:
    """The `index`-th color of the cycle (matplotlib's "C{index}")."""
    return PALETTE[index % len(PALETTE)]


def text_width(text: str, size: float) -> float:
    return len(text) * size * CHAR_WIDTH


def _num(value: float) -> str:
    """A coordinate: two decimals at most, no trailing zeros."""
    out = f"{value:.2f}".rstrip("0").rstrip(".")
    return "0" if out == "-0" else out


def ticks(low: float, high: float, most: int = 9) -> list[tuple[float, str]]:
    """Round tick values within [low, high] (steps 1, 2, 2.5 or 5 times a power of ten,
    at most `most` intervals) with their labels."""
    span = high - low
    magnitude = 10 ** math.floor(math.log10(span / most))
    step, multiple = magnitude * 10, 10.0
    for multiple in (1.0, 2.0, 2.5, 5.0, 10.0):
        step = multiple * magnitude
        if span / step <= most + 1e-9:
            break
    decimals = max(0, -math.floor(math.log10(step) + 1e-9)) + (multiple == 2.5)
    first = math.ceil(low / step - 1e-9)
    last = math.floor(high / step + 1e-9)
    out = []
    for k in range(first, last + 1):
        label = f"{k * step:.{decimals}f}"
        out.append((float(label), "0" if float(label) == 0 else label))
    return out


def data_range(values: Sequence[float], *, margin: float = 0.05,
               from_zero: bool = False) -> tuple[float, float]:
    """Axis limits around `values` with a margin on each side (bars: zero included and no
    margin past it)."""
    low, high = min(values), max(values)
    if from_zero:
        low, high = min(low, 0.0), max(high, 0.0)
    if high == low:
        return (low - 1.0, high + 1.0) if not from_zero else (0.0, 1.0)
    pad = (high - low) * margin
    return (low if from_zero and low == 0 else low - pad,
            high if from_zero and high == 0 else high + pad)


@dataclass
class Panel:
    """One set of axes: a pixel box and the data limits it shows."""

    left: float
    top: float
    width: float
    height: float
    xlim: tuple[float, float]
    ylim: tuple[float, float]
    parts: list[str] = field(default_factory=list)

    def x(self, value: float) -> float:
        low, high = self.xlim
        return self.left + (value - low) / (high - low) * self.width

    def y(self, value: float) -> float:
        low, high = self.ylim
        return self.top + self.height - (value - low) / (high - low) * self.height

    def point(self, x: float, y: float, shape: str, fill: str) -> None:
        """A marker centred on data point (x, y)."""
        self.parts.append(marker(self.x(x), self.y(y), shape, fill))

    def bar(self, left: float, width: float, height: float, fill: str) -> None:
        """A bar from zero to `height`, `left` and `width` in data units."""
        x0, x1 = self.x(left), self.x(left + width)
        y0, y1 = sorted((self.y(0.0), self.y(height)))
        self.parts.append(f'<rect x="{_num(x0)}" y="{_num(y0)}" width="{_num(x1 - x0)}" '
                          f'height="{_num(y1 - y0)}" fill="{fill}"/>')

    def axes(self, *, xlabel: str = "", ylabel: str = "", grid: bool = False,
             xticks: Sequence[tuple[float, str]] | None = None,
             xtick_size: float = TICK_SIZE) -> list[str]:
        """Frame, ticks, tick labels, axis labels (and grid lines) under the marks drawn so
        far: `xticks` given as (value, label) pairs ("\\n" breaks a label), else round
        values."""
        out: list[str] = []
        bottom, right = self.top + self.height, self.left + self.width
        xs = list(xticks) if xticks is not None else ticks(*self.xlim)
        ys = ticks(*self.ylim)
        if grid:
            for value, _ in xs:
                out.append(_line(self.x(value), self.top, self.x(value), bottom, "#b0b0b0",
                                 0.8, 0.3))
            for value, _ in ys:
                out.append(_line(self.left, self.y(value), right, self.y(value), "#b0b0b0",
                                 0.8, 0.3))
        out.extend(self.parts)
        out.append(f'<rect x="{_num(self.left)}" y="{_num(self.top)}" '
                   f'width="{_num(self.width)}" height="{_num(self.height)}" fill="none" '
                   'stroke="#000" stroke-width="0.8"/>')
        for value, label in xs:
            x = self.x(value)
            out.append(_line(x, bottom, x, bottom + 4.5, "#000", 0.8))
            for k, piece in enumerate(label.split("\n")):
                out.append(_text(x, bottom + 7 + xtick_size * (0.85 + 1.15 * k), piece,
                                 xtick_size, "middle"))
        for value, label in ys:
            y = self.y(value)
            out.append(_line(self.left - 4.5, y, self.left, y, "#000", 0.8))
            out.append(_text(self.left - 7, y + TICK_SIZE * 0.35, label, TICK_SIZE, "end"))
        if xlabel:
            lines = max(len(label.split("\n")) for _, label in xs) if xs else 1
            out.append(_text(self.left + self.width / 2,
                             bottom + 12 + xtick_size * 1.15 * lines + LABEL_SIZE * 0.8,
                             xlabel, LABEL_SIZE, "middle"))
        if ylabel:
            widest = max((text_width(label, TICK_SIZE) for _, label in ys), default=0.0)
            x = self.left - 12 - widest - LABEL_SIZE * 0.4
            y = self.top + self.height / 2
            out.append(f'<text transform="translate({_num(x)},{_num(y)}) rotate(-90)" '
                       f'text-anchor="middle" font-size="{_num(LABEL_SIZE)}">'
                       f"{escape(ylabel)}</text>")
        return out


_SHAPES = {
    "s": ((-0.85, -0.85), (0.85, -0.85), (0.85, 0.85), (-0.85, 0.85)),
    "D": ((0, -1.2), (1.2, 0), (0, 1.2), (-1.2, 0)),
    "^": ((0, -1.15), (1.1, 0.85), (-1.1, 0.85)),
    "v": ((0, 1.15), (1.1, -0.85), (-1.1, -0.85)),
    "<": ((-1.15, 0), (0.85, -1.1), (0.85, 1.1)),
    ">": ((1.15, 0), (-0.85, -1.1), (-0.85, 1.1)),
}
"""Corners of each polygon marker, in units of its radius (screen y grows downwards)."""


def marker(cx: float, cy: float, shape: str, fill: str, radius: float = 4.6) -> str:
    """A marker of `shape` (one of MARKERS) centred on pixel (cx, cy)."""
    if shape == "o":
        return f'<circle cx="{_num(cx)}" cy="{_num(cy)}" r="{_num(radius)}" fill="{fill}"/>'
    corners = " ".join(f"{_num(cx + dx * radius)},{_num(cy + dy * radius)}"
                       for dx, dy in _SHAPES[shape])
    return f'<polygon points="{corners}" fill="{fill}"/>'


@dataclass(frozen=True)
class Entry:
    """A legend line: a marker ('o', 's', ...) or a bar swatch ('bar') and its text."""

    label: str
    fill: str
    marker: str = "bar"


def legend_width(entries: Sequence[Entry]) -> float:
    return 34 + max(text_width(e.label, LEGEND_SIZE) for e in entries)


def legend(entries: Sequence[Entry], left: float, middle: float) -> list[str]:
    """A framed legend column at `left`, centred vertically on `middle`."""
    step = LEGEND_SIZE * 1.45
    height = step * len(entries) + 8
    top = middle - height / 2
    out = [f'<rect x="{_num(left)}" y="{_num(top)}" width="{_num(legend_width(entries))}" '
           f'height="{_num(height)}" rx="3" fill="#fff" fill-opacity="0.8" stroke="#ccc" '
           'stroke-width="0.8"/>']
    for k, entry in enumerate(entries):
        y = top + 4 + step * (k + 0.5)
        if entry.marker == "bar":
            out.append(f'<rect x="{_num(left + 7)}" y="{_num(y - 3.5)}" width="16" '
                       f'height="7" fill="{entry.fill}"/>')
        else:
            out.append(marker(left + 15, y, entry.marker, entry.fill, 4.2))
        out.append(_text(left + 28, y + LEGEND_SIZE * 0.35, entry.label, LEGEND_SIZE, "start"))
    return out


def legend_row(entries: Sequence[Entry], middle: float, top: float) -> list[str]:
    """A framed one-line legend of bar swatches centred on `middle`, from `top`."""
    widths = [28 + text_width(e.label, LEGEND_SIZE) for e in entries]
    total = sum(widths) + 8
    left = middle - total / 2
    height = LEGEND_SIZE * 1.45 + 8
    out = [f'<rect x="{_num(left)}" y="{_num(top)}" width="{_num(total)}" '
           f'height="{_num(height)}" rx="3" fill="#fff" stroke="#ccc" stroke-width="0.8"/>']
    y = top + height / 2
    x = left + 4
    for entry, w in zip(entries, widths, strict=True):
        out.append(f'<rect x="{_num(x + 3)}" y="{_num(y - 3.5)}" width="16" height="7" '
                   f'fill="{entry.fill}"/>')
        out.append(_text(x + 24, y + LEGEND_SIZE * 0.35, entry.label, LEGEND_SIZE, "start"))
        x += w
    return out


def svg(width: float, height: float, body: Sequence[str]) -> bytes:
    """The document: a white page of `width` x `height` pixels holding `body`."""
    head = (f'<svg xmlns="http://www.w3.org/2000/svg" width="{_num(width)}" '
            f'height="{_num(height)}" viewBox="0 0 {_num(width)} {_num(height)}" '
            f'font-family="{FONT}">\n'
            f'<rect width="{_num(width)}" height="{_num(height)}" fill="#fff"/>\n')
    return (head + "\n".join(body) + "\n</svg>\n").encode()


def _line(x1: float, y1: float, x2: float, y2: float, stroke: str, width: float,
          opacity: float = 1.0) -> str:
    extra = f' stroke-opacity="{_num(opacity)}"' if opacity != 1.0 else ""
    return (f'<line x1="{_num(x1)}" y1="{_num(y1)}" x2="{_num(x2)}" y2="{_num(y2)}" '
            f'stroke="{stroke}" stroke-width="{_num(width)}"{extra}/>')


def _text(x: float, y: float, text: str, size: float, anchor: str) -> str:
    return (f'<text x="{_num(x)}" y="{_num(y)}" text-anchor="{anchor}" '
            f'font-size="{_num(size)}">{escape(text)}</text>')

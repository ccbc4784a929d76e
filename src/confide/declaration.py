"""What a benchmark shows of itself in the shared layers, declared as plain data.

A benchmark's `Declaration` lives in `envs/<id>/declaration.py` (a plugin's anywhere, named
by its `confide.benchmarks` entry point) and imports nothing but this module, so the
catalog (`confide benchmarks`), the CLI's command table, the glossary and the report's
headline figures read every benchmark without importing one: the shared layers hold no
benchmark's id, column or text (tests/test_package_shape.py). The spec itself
(`BenchmarkSpec`: the episode function and the hooks, among them `view` with the report's
section titles and the viewer's panels) is named by `spec`, a `module:attribute` imported
only when a benchmark runs, is scored, reported or viewed.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from confide.core.benchmark import BenchmarkSpec


@dataclass(frozen=True)
class Term:
    """One metric: the column it appears as (summary.csv or results.csv), its name, a
    one-line definition and the paper section it comes from."""

    column: str
    name: str
    definition: str
    section: str


@dataclass(frozen=True)
class Scatter:
    """One point per summary row: `x` against `y`, a color per value of `color_by` and a
    marker per value of `marker_by`, with a legend of their pairs."""

    title: str
    x: str
    y: str
    xlabel: str
    ylabel: str
    color_by: str
    marker_by: str
    ylim: tuple[float, float] | None = None
    """Fixed y limits (a percentage: (-5, 105)); None fits the data."""
    published_in: str | None = None
    """The column that tells points apart in which the paper's published rows are drawn
    beside the run's (their value gains ` (paper TABLE)`); None draws the run's only."""


@dataclass(frozen=True)
class PanelScatter:
    """`x` against `y` in one panel per value of `panel_by` (both axes from 0), a color
    per value of the `label_by` columns joined with ` · `."""

    title: str
    x: str
    y: str
    xlabel: str
    """Each panel's x label follows its `panel_by` value and a colon."""
    ylabel: str
    panel_by: str
    label_by: tuple[str, ...]
    published_in: str | None = None


@dataclass(frozen=True)
class GroupedBars:
    """One panel per `(column, axis label)` of `values`; in each, a group of bars per value
    of `group_by` (its first hyphen breaks the tick label) and a bar per `series_by`."""

    title: str
    values: tuple[tuple[str, str], ...]
    group_by: str
    series_by: str


@dataclass(frozen=True)
class MetricBars:
    """A group of bars per metric column of `metrics`, one bar per summary row labelled by
    its `label_by` columns joined with ` · `, on a y axis from `ylim`."""

    title: str
    metrics: tuple[str, ...]
    label_by: tuple[str, ...]
    ylabel: str
    ylim: tuple[float, float] = (0.0, 1.05)


Figure = Scatter | PanelScatter | GroupedBars | MetricBars
"""A headline figure of report.html, drawn from summary.csv by `confide.report.figures`."""


@dataclass(frozen=True)
class Command:
    """A CLI command that serves this benchmark only: `confide NAME`, where `target` is its
    `module:attribute` (a command function or a `typer.Typer`), imported when it runs, and
    `help` the first paragraph of its help as `confide --help` lists it."""

    name: str
    target: str
    help: str


@dataclass(frozen=True)
class Declaration:
    """Everything the shared layers show of one benchmark (module docstring). `id`,
    `description`, `suites`, `participants` and `conditions` are the spec's own, listed
    by `confide benchmarks`; a test checks them against the spec."""

    id: str
    spec: str
    """`module:attribute` of the `BenchmarkSpec`."""
    description: str
    suites: tuple[str, ...]
    participants: tuple[str, ...]
    conditions: tuple[str | None, ...] = (None,)
    glossary: tuple[Term, ...] = ()
    figures: tuple[Figure, ...] = ()
    commands: tuple[Command, ...] = ()


def lazy_spec(package: str) -> Callable[[str], BenchmarkSpec]:
    """A package's module `__getattr__` that imports `SPEC` from its `spec.py` on first
    use: the package stays light, so the registry reads `declaration.py` without
    importing the environment."""

    def spec(name: str) -> BenchmarkSpec:
        if name != "SPEC":
            raise AttributeError(f"module {package!r} has no attribute {name!r}")
        found: BenchmarkSpec = importlib.import_module(f"{package}.spec").SPEC
        return found

    return spec

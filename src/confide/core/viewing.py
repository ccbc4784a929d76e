"""What `confide view` shows of one benchmark beyond the generic trace: where private
information moved (leak events, each linked to the event that caused it) and the panels
only that benchmark's participants have (Incognita's desks).

The viewer is a shared layer and imports no benchmark (envs/README.md rule 7), so each
benchmark declares these as hooks on its spec (`BenchmarkSpec.view`) and implements them
in `envs/<id>/view.py`; a benchmark without hooks shows no leak events and no panels.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any, Protocol

from confide.core.trace.events import MessageDelivered, Trace


@dataclass(frozen=True)
class LeakMarker:
    """One leak: `event` is the index (in trace.events) of the event that caused it, and
    `metric` the paper's measure it counts towards."""

    event: int
    kind: str
    metric: str
    label: str

    def as_json(self) -> dict[str, Any]:
        return asdict(self)


class RunLeaks(Protocol):
    """The leaks of one run directory, read once for all its episodes."""

    def count(self, row: Mapping[str, str]) -> int:
        """The leak events of the episode of this results.csv row (the episode filter and
        the report's notable episodes use it; it must not need the trace)."""
        ...

    def markers(self, trace: Trace, task: Any = None) -> list[LeakMarker]:
        """The episode's leak events, in trace order; `task` is the episode's task when it
        could be loaded (a benchmark may recompute its evidence from it rather than read
        the run's files)."""
        ...


@dataclass(frozen=True)
class CountedLeaks:
    """Leaks counted by a per-episode results.csv column and marked from the trace alone."""

    column: str
    mark: Callable[[Trace], list[LeakMarker]]

    def count(self, row: Mapping[str, str]) -> int:
        try:
            return int(float(row.get(self.column) or 0))
        except (ValueError, OverflowError):  # a blank, text or non-finite cell counts none
            return 0

    def markers(self, trace: Trace, task: Any = None) -> list[LeakMarker]:
        return self.mark(trace)


def counted(column: str, mark: Callable[[Trace], list[LeakMarker]]) -> Callable[[Path], RunLeaks]:
    """The `ViewHooks.leaks` of a benchmark whose leaks need no run file: counted by the
    results.csv `column`, marked by `mark` from the trace."""
    leaks = CountedLeaks(column, mark)
    return lambda run_dir: leaks


Panels = Callable[[Trace, Sequence[str]], Mapping[str, Mapping[str, Any]]]
"""(trace, participants) -> participant -> its panel (only participants that have one)."""

Story = Callable[[Trace, Any], Mapping[str, Any]]
"""(trace, its task or None when the task cannot be loaded) -> the benchmark's account of
the episode, as plain JSON values the viewer draws without knowing the benchmark:

- `sections`: a list of `{"title", "note", "blocks"}`; a block is a grid
  `{"kind": "grid", "caption", "columns": [str], "rows": [{"label", "cells": [cell]}]}` or
  a table `{"kind": "table", "caption", "columns": [str], "rows": [[cell]]}`; a cell is a
  string or `{"text", "tone", "title", "event"}` (tone: a word the page styles, such as
  free, busy, meeting, proposed, ok, bad; event: the trace index it links to);
- `sentences`: trace index (as a string) -> a message's machine payload said in words."""

@dataclass(frozen=True)
class ReportSection:
    """How report.html presents one output file of the benchmark (a table, or a figure
    under figures/): a title in words, one sentence on what it shows, the paper section."""

    title: str
    about: str
    section: str
    data: str | None = None
    """For a figure: the table it draws, so an empty chart can say why it is empty."""


@dataclass(frozen=True)
class ViewHooks:
    """A benchmark's part of the Episode page."""

    leaks: Callable[[Path], RunLeaks] | None = None
    """Run directory -> its leaks (the run's own files may hold evidence, e.g. CalBench's
    belief_evidence.csv)."""
    desk_panels: Panels | None = None
    """Data a participant alone held beyond its private items (Incognita: its desk role,
    owned tools, the tool calls it ran, the customer's gate releases), shown in the
    perspective's private-state card."""
    story: Story | None = None
    """The episode in the benchmark's own terms (CalBench: the calendars round by round)."""
    quiet: frozenset[str] = frozenset()
    """Names of bookkeeping env events the transcript folds away until asked."""
    sections: Mapping[str, ReportSection] = field(default_factory=dict)
    """Output file name (figures as `figures/NAME.png`) -> its report section, in the
    order the report shows them."""


def delivery_index(trace: Trace) -> dict[int, int]:
    """Message id -> the index of the event that delivered it: where a marker points when
    a record names the message that caused it."""
    return {e.message.id: i for i, e in enumerate(trace.events) if isinstance(e, MessageDelivered)}

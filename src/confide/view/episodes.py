"""The episodes of a run directory, read from its results.csv, and a metric filter.

One `Episode` per episode id gathers its seat rows; `Where` is a parsed `METRIC<X`
condition (`trace list --where`, the viewer's filters use the same rows).
"""

from __future__ import annotations

import csv
import math
import operator
import re
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from confide.errors import ConfideError

_OPS: dict[str, Callable[[float, float], bool]] = {
    "<=": operator.le, ">=": operator.ge, "!=": operator.ne, "==": operator.eq,
    "=": operator.eq, "<": operator.lt, ">": operator.gt,
}
_WHERE = re.compile(r"^\s*([^<>=!\s]+)\s*(<=|>=|!=|==|=|<|>)\s*(\S+)\s*$")


@dataclass
class Episode:
    """One episode: its key columns and every result row (one per seat)."""

    episode_id: str
    task_id: str
    lineup: str
    condition: str
    status: str
    rows: list[dict[str, str]] = field(default_factory=list)

    def values(self, metric: str) -> list[float]:
        """The metric's numeric values over the seat rows (blanks and text skipped)."""
        return [v for row in self.rows if (v := number(row.get(metric, ""))) is not None]


@dataclass(frozen=True)
class Where:
    """`METRIC OP VALUE`: true for an episode when any seat row satisfies it."""

    metric: str
    op: str
    value: float

    @classmethod
    def parse(cls, text: str) -> Where:
        match = _WHERE.match(text)
        value = number(match.group(3)) if match else None
        if match is None or value is None:
            raise ConfideError(
                f"--where {text!r}: expected METRIC<X with one of < <= > >= = != and a number"
            )
        return cls(match.group(1), match.group(2), value)

    def holds(self, episode: Episode) -> bool:
        return any(_OPS[self.op](v, self.value) for v in episode.values(self.metric))

    def matching(self, episode: Episode) -> list[tuple[str, float]]:
        """(seat, value) of the seat rows that satisfy the condition ("" for an episode
        scored as one row)."""
        return [(row.get("seat", ""), v) for row in episode.rows
                if (v := number(row.get(self.metric, ""))) is not None
                and _OPS[self.op](v, self.value)]


def read_episodes(run_dir: Path) -> list[Episode]:
    """The run's episodes in results.csv order."""
    path = run_dir / "results.csv"
    if not path.is_file():
        raise ConfideError(f"{run_dir} is not a run directory (no results.csv)")
    episodes: dict[str, Episode] = {}
    for row in read_rows(path):
        key = row.get("episode_id", "")
        if key not in episodes:
            episodes[key] = Episode(key, row.get("task_id", ""), row.get("lineup", ""),
                                    row.get("condition", ""), row.get("status", ""))
        episodes[key].rows.append(row)
    return list(episodes.values())


def numeric_columns(episodes: list[Episode]) -> list[str]:
    """Columns with at least one numeric value, in first-seen order."""
    seen: dict[str, None] = {}
    for episode in episodes:
        for row in episode.rows:
            seen.update((k, None) for k, v in row.items() if number(v) is not None)
    return list(seen)


def select(episodes: list[Episode], wheres: list[Where], *, failed: bool) -> list[Episode]:
    """Episodes passing every condition (and not ok, when `failed`); an unknown metric is
    an error listing the numeric columns."""
    known = numeric_columns(episodes)
    for where in wheres:
        if where.metric not in known:
            raise ConfideError(
                f"--where: no numeric column {where.metric!r} in results.csv; "
                f"columns: {', '.join(known)}"
            )
    return [
        e for e in episodes
        if (not failed or e.status != "ok") and all(w.holds(e) for w in wheres)
    ]


def read_rows(path: Path) -> list[dict[str, str]]:
    """A CSV's rows as dicts (here rather than runner.results: the runner imports the
    report, which reads episodes through this module)."""
    with path.open(newline="", encoding="utf-8") as handle:
        return list(csv.DictReader(handle))


def number(text: str | None) -> float | None:
    """A finite float from a CSV cell, else None (booleans count as 0/1)."""
    if text in ("True", "False"):
        return float(text == "True")
    try:
        value = float(text or "")
    except ValueError:
        return None
    return value if math.isfinite(value) else None

"""95% intervals for the headline table, found without knowing the
benchmark: a summary cell gets one when it is the mean of a results.csv column over the
seat rows of its group, and only then.

A summary row's group is the results rows whose cells hold every text value of the row
(case aside: `Uniform` is a `cost_setting` of `uniform`, `imap` a `participant`); a row
no results row matches (a published reference row) has none. A summary column is matched
to the results column (times 1 or 100, for percentages) whose group mean reproduces the
cell in every row that has a group; a ratio or a count reproduces no mean and gets no
interval. The interval treats episodes as clusters, since the seats of one game share it:
mean +/- 1.96 cluster-robust standard errors, se^2 = G/(G-1) * sum_g (Y_g - m n_g)^2 /
(sum_g n_g)^2 over the G episodes with Y_g the sum and n_g the count of the episode's
values (the usual sandwich estimator of a mean; it needs G >= 2).
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from functools import partial
from itertools import compress
from operator import eq, itemgetter

from confide.view.episodes import number

Z95 = 1.959963984540054
SCALES = (1.0, 100.0)


Values = dict[str, list[float]]
"""Episode id -> the values of one column over a group's seat rows in that episode."""


def intervals(
    summary: Sequence[Mapping[str, str]], results: Sequence[Mapping[str, str]]
) -> list[dict[str, tuple[float, float]]]:
    """Per summary row, column -> (low, high) for the cells that are group means."""
    columns = [c for c in (results[0] if results else {})
               if any(number(r.get(c)) is not None for r in results[:200])]
    keys = [_keys(row) for row in summary]
    table = _Table(results, set().union(*keys))
    groups = [_Group(table, table.rows_with(k)) for k in keys]
    out: list[dict[str, tuple[float, float]]] = [{} for _ in summary]
    for column in summary[0] if summary else {}:
        cells = [number(row.get(column)) for row in summary]
        if any(row.get(column) and c is None for row, c in zip(summary, cells, strict=True)):
            continue  # a text column
        if all((row.get(column) or "").lstrip("-").isdigit() for row in summary):
            continue  # counts (N, episodes) are no means
        match = _source(cells, groups, columns)
        if match is None:
            continue
        source, scale = match
        for i, group in enumerate(groups):
            found = _interval(group[source]) if group else None
            if found is not None:
                out[i][column] = (found[0] * scale, found[1] * scale)
    return out


def _keys(row: Mapping[str, str]) -> frozenset[str]:
    """The text values of a summary row, casefolded: its group's rows hold every one."""
    return frozenset(v.casefold() for v in row.values() if v and number(v) is None)


class _Table:
    """results.csv by column, each read once: the rows holding each key, and a column's
    cells as numbers (each distinct cell parsed once: a run's cells repeat)."""

    def __init__(self, results: Sequence[Mapping[str, str]], keys: set[str]) -> None:
        self.size = len(results)
        self.columns = _columns(results)
        self.episodes = [r.get("episode_id", "") for r in results]
        self._numbers: dict[str, list[float | None]] = {}
        self._rows: dict[str, set[int]] = {key: set() for key in keys}
        for cells in self.columns.values():  # a row holds a key when one of its cells does
            found = {cell: key for cell in set(cells)
                     if (key := (cell or "").casefold()) in self._rows}
            for cell, key in found.items():
                self._rows[key].update(compress(range(self.size), map(partial(eq, cell), cells)))

    def rows_with(self, keys: frozenset[str]) -> list[int]:
        """The rows (in results order) holding every key; none for no keys."""
        if not keys:
            return []
        return sorted(set.intersection(*(self._rows[k] for k in keys)))

    def numbers(self, column: str) -> list[float | None]:
        if column not in self._numbers:
            cells = self.columns.get(column) or [None] * self.size
            parsed = {cell: number(cell) for cell in set(cells)}
            self._numbers[column] = [parsed[cell] for cell in cells]
        return self._numbers[column]


def _columns(results: Sequence[Mapping[str, str]]) -> dict[str, Sequence[str | None]]:
    """Column -> its cells, row by row (None where a row lacks the column): transposed at
    C speed when every row has the first row's columns (a CSV file's rows do)."""
    names = list(results[0]) if results else []
    if len(names) > 1 and set(map(len, results)) == {len(names)}:
        try:
            return dict(zip(names, zip(*map(itemgetter(*names), results), strict=True),
                            strict=True))
        except KeyError:
            pass
    names = list(dict.fromkeys(name for row in results for name in row))
    return {name: [row.get(name) for row in results] for name in names}


class _Group(dict[str, Values]):
    """A summary row's results rows; column -> its values by episode, read on first use."""

    def __init__(self, table: _Table, rows: list[int]) -> None:
        super().__init__()
        self.table = table
        self.rows = rows

    def __bool__(self) -> bool:
        return bool(self.rows)

    def __missing__(self, column: str) -> Values:
        by_episode: Values = {}
        numbers, episodes = self.table.numbers(column), self.table.episodes
        for i in self.rows:
            value = numbers[i]
            if value is not None:
                by_episode.setdefault(episodes[i], []).append(value)
        self[column] = by_episode
        return by_episode


def _mean(values: Values) -> float | None:
    n = sum(len(v) for v in values.values())
    return sum(sum(v) for v in values.values()) / n if n else None


def _source(
    cells: Sequence[float | None], groups: Sequence[_Group],
    candidates: Sequence[str],
) -> tuple[str, float] | None:
    """The results column (and scale) whose group means are these summary cells."""
    rows = [(cell, group) for cell, group in zip(cells, groups, strict=True)
            if group and cell is not None]
    if not rows:
        return None
    for source in candidates:
        for scale in SCALES:
            if all((m := _mean(g[source])) is not None and math.isclose(
                    m * scale, cell, rel_tol=1e-9, abs_tol=1e-9) for cell, g in rows):
                return source, scale
    return None


def _interval(values: Values) -> tuple[float, float] | None:
    """Mean +/- 1.96 cluster-robust standard errors, episodes as clusters."""
    if len(values) < 2:
        return None
    n = sum(len(v) for v in values.values())
    mean = sum(sum(v) for v in values.values()) / n
    g = len(values)
    spread = sum((sum(v) - mean * len(v)) ** 2 for v in values.values())
    se = math.sqrt(g / (g - 1) * spread) / n
    return mean - Z95 * se, mean + Z95 * se

"""The one table writer and the one group-by/mean helper of confide.

Every CSV a run writes -- results.csv, summary.csv, each benchmark's tables, the
leaderboard -- goes through `write_table` (or `SpooledTable` when rows arrive game by game),
so every file formats cells the same way (`format_cell`): None is an empty cell, a float
is its shortest exact decimal (`repr`, so reading it back gives the same float), a bool is
`True`/`False`, anything else is `str`. Lines end in CRLF, the csv module's (RFC 4180)
default. A name ending in `.gz` is gzipped with no name or time in its header, so two runs
of a deterministic lineup give byte-identical files.

Every summary table is built from result rows with `group_by` (rows per key, first-seen
order) and `mean` (over the values present: a missing or empty cell is left out, never a
zero); `number` reads a cell that may come back from a CSV as text.
"""

from __future__ import annotations

import csv
import gzip
import io
import itertools
import tempfile
from array import array
from collections.abc import Callable, Hashable, Iterable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import fields, is_dataclass
from operator import attrgetter, itemgetter
from pathlib import Path
from typing import Any, BinaryIO, TypeVar

from confide import atomic
from confide.core.trace import COMPRESS_LEVEL
from confide.untrusted import scrub as without_surrogates

R = TypeVar("R")
K = TypeVar("K", bound=Hashable)


def _float(value: float) -> str:
    return float.__repr__(value)  # numpy floats too, without their `np.float64(...)` repr


def _other(value: object) -> str:
    if value is None:
        return ""
    if isinstance(value, float):  # a float subclass (numpy); bool is an int, str() is fine
        return _float(value)
    return str(value)


_FORMATS: dict[type, Callable[[Any], str]] = {float: _float, int: str, str: str}
"""The common exact types first: a CalBench run formats hundreds of thousands of cells."""


def format_cell(value: object) -> str:
    """The text of one cell (module docstring)."""
    return _FORMATS.get(type(value), _other)(value)


def columns_of(rows: Iterable[Any]) -> list[str]:
    """Column names: a dataclass or named tuple row type's fields, else the union of the
    mappings' keys in first-seen order."""
    names: dict[str, None] = {}
    for row in rows:
        if is_dataclass(row):
            return [f.name for f in fields(row)]
        if (named := _fields_of(row)) is not None:
            return list(named)
        names.update(dict.fromkeys(row))
    return list(names)


def _fields_of(row: object) -> tuple[str, ...] | None:
    """A named tuple's field names (None for any other row)."""
    return getattr(row, "_fields", None) if isinstance(row, tuple) else None


def _getter(names: Sequence[str], sample: object) -> Callable[[Any], Sequence[Any]]:
    """A row's values in column order. attrgetter for dataclasses, not astuple: astuple
    deep-copies every value (6 s of a 1,080-game CalBench run) and rows hold scalars; a
    slice for a named tuple whose fields include the columns in order."""
    if (known := _fields_of(sample)) is not None:
        start = known.index(names[0]) if names and names[0] in known else -1
        if start >= 0 and known[start : start + len(names)] == tuple(names):
            return itemgetter(slice(start, start + len(names)))
    elif not is_dataclass(sample):
        return lambda row: [row.get(name) for name in names]
    if len(names) == 1:
        return lambda row: (getattr(row, names[0]),)
    return attrgetter(*names)


_NATIVE = frozenset({str, int, float, bool, type(None)})
"""Cell types the csv module itself writes as `format_cell` does (None empty, a float by
its repr, the others by str): rows holding only these skip the per-cell formatting."""


def csv_lines(names: Sequence[str], rows: Sequence[Any], lead: int = 0) -> bytes:
    """The rows' CSV lines, UTF-8 (a lone surrogate, say from an exception's text, is
    written as U+FFFD rather than failing the table). `lead`: the first `lead` columns
    hold the same values in every row (a game's trace path and id in each of its rows):
    they are formatted once, from the first row, and start every line. The csv module
    copies a cell character by character, so long repeated cells cost more than the rest
    of a row; its quoting is per cell, so the lines are the same bytes either way."""
    if not rows:
        return b""
    if not 0 < lead < len(names) - 1:  # a one-cell row of "" is written `""`, so not as a tail
        return _utf8("".join(_lines(names, rows)))
    # the lead cells and an empty one: "a,b,\r\n" (two or more cells, so never `""`)
    head = _lines(names[:lead], rows[:1], blank=True)[0]
    prefix = head[: -len(_TERMINATOR)]
    return _utf8(prefix + prefix.join(_lines(names[lead:], rows)))


_TERMINATOR = "\r\n"
"""The csv module's default line terminator (every table's)."""


class _Collected(list[str]):
    """A csv writer's target that keeps each row's text apart (the writer makes one
    `write` call per row)."""

    write = list.append


def _lines(names: Sequence[str], rows: Sequence[Any], *, blank: bool = False) -> list[str]:
    """One text line per row (CRLF-terminated) with the columns `names`; `blank` adds an
    empty last cell."""
    values = _getter(names, rows[0])
    cells: Iterable[Sequence[Any]] = list(map(values, rows))
    # one C-level pass over the types instead of a Python call per cell
    if not set(map(type, itertools.chain.from_iterable(cells))) <= _NATIVE:
        cells = [[format_cell(v) for v in row] for row in cells]
    if blank:
        cells = [[*row, ""] for row in cells]
    out = _Collected()
    csv.writer(out).writerows(cells)
    return out


def _utf8(text: str) -> bytes:
    try:
        return text.encode("utf-8")
    except UnicodeEncodeError:
        return without_surrogates(text).encode("utf-8")


def _header(names: Sequence[str]) -> bytes:
    text = io.StringIO()
    csv.writer(text).writerow(names)
    return _utf8(text.getvalue())


@contextmanager
def _open_table(path: Path) -> Iterator[BinaryIO | gzip.GzipFile]:
    with atomic.atomic_binary(path) as raw:
        if path.suffix != ".gz":
            yield raw
            return
        with gzip.GzipFile(
            filename="", fileobj=raw, mode="wb", compresslevel=COMPRESS_LEVEL, mtime=0
        ) as packed:
            yield packed


CHUNK_ROWS = 4096
"""Rows formatted at a time: a table is streamed, never held whole as text."""


def write_table(
    path: Path | str, rows: Iterable[Any], columns: Sequence[str] | None = None
) -> Path:
    """Write rows -- mappings (a missing key is an empty cell), dataclass instances or named
    tuples --
    as one CSV file, atomically; `columns` defaults to `columns_of(rows)` (the rows are
    then read into a list first). Returns the path."""
    target = Path(path)
    if columns is None:
        rows = list(rows)
        columns = columns_of(rows)
    names, remaining = list(columns), iter(rows)
    with _open_table(target) as out:
        out.write(_header(names))
        while chunk := list(itertools.islice(remaining, CHUNK_ROWS)):
            out.write(csv_lines(names, chunk))
    return target


class SpooledTable:
    """A `write_table` table whose rows arrive in groups in any order (a game at a time):
    each group's CSV lines go to an anonymous spool file and only its key and end offset
    stay in memory (an array, not a tuple per group: a 10,000-game run has 10,000 groups);
    `close` writes the header and the groups in key order (stable)."""

    def __init__(self, path: Path, columns: Sequence[str]) -> None:
        self.path, self.columns = path, list(columns)
        self._spool = tempfile.TemporaryFile(dir=path.parent)  # noqa: SIM115 (closed by close)
        self._keys: list[Any] = []
        self._ends = array("q", [0])
        """Group i spans bytes _ends[i] to _ends[i + 1] of the spool."""

    def add(self, key: Any, rows: Sequence[Any]) -> None:
        """Spool one group's rows; groups are written sorted by `key`."""
        self.add_lines(key, csv_lines(self.columns, rows))

    def add_lines(self, key: Any, lines: bytes) -> None:
        """Spool one group's rows formatted already (`csv_lines` with these columns)."""
        self._spool.write(lines)
        self._keys.append(key)
        self._ends.append(self._spool.tell())

    def close(self, *, write: bool = True) -> None:
        """Write the file (unless `write` is False) and drop the spool."""
        try:
            if write:
                with _open_table(self.path) as out:
                    out.write(_header(self.columns))
                    for i in sorted(range(len(self._keys)), key=self._keys.__getitem__):
                        self._spool.seek(self._ends[i])
                        out.write(self._spool.read(self._ends[i + 1] - self._ends[i]))
        finally:
            self._spool.close()


def read_table(path: Path | str) -> list[dict[str, str]]:
    """Rows of a table written by `write_table` (cells as text; `.gz` read as gzip)."""
    target = Path(path)
    if target.suffix == ".gz":
        with gzip.open(target, "rt", newline="", encoding="utf-8") as handle:
            return list(csv.DictReader(handle))
    with target.open(newline="", encoding="utf-8") as handle:
        return list(csv.DictReader(handle))


def group_by(rows: Iterable[R], key: Callable[[R], K]) -> dict[K, list[R]]:
    """Rows per key, keys and rows in first-seen order."""
    groups: dict[K, list[R]] = {}
    for row in rows:
        groups.setdefault(key(row), []).append(row)
    return groups


def number(value: Any) -> float | None:
    """A cell as a float; None for a missing or empty cell (rows may come from a CSV)."""
    if value is None or value == "":
        return None
    return float(value)


def mean(values: Iterable[float | None]) -> float | None:
    """The mean of the values present (None left out); None when there is none."""
    present = [v for v in values if v is not None]
    return sum(present) / len(present) if present else None

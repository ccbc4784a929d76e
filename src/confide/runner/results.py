"""Result rows: one per episode and seat, rebuilt from complete traces.

A run keeps them on disk, not in memory (memory flat in the episode
count): `ResultSpool` pickles each finished episode's rows, and the table rows its scorer
computed (`EpisodeResult.tables`), to an anonymous file in the run directory as the
episode ends (or, on resume, as its trace is read back) and keeps only the episode's
status and byte ranges. The rows are scrubbed of secrets and pickled as the episode ends,
in the process that played it (`SpoolEntry`: a pool process, a Ray worker), so the run's
process only appends bytes while episodes play, and the output phase only writes them:
results.csv and the summary table are built by reading the spool back in plan order, and
`RunSummary.rows` reads results.csv lazily (`CsvRows`).
"""

from __future__ import annotations

import csv
import pickle
import tempfile
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, overload

from confide.core.benchmark import BenchmarkSpec
from confide.core.tables import columns_of, read_table, write_table
from confide.core.trace import EpisodeEnd
from confide.readers import Parser, column_parsers
from confide.redaction import scrub_data
from confide.runner.config import Experiment
from confide.runner.expand import EpisodePlan
from confide.runner.preflight import models_used
from confide.runner.spend import spend_columns

KEY_COLUMNS = ("episode_id", "task_id", "lineup", "condition", "repetition", "seed", "status")


def spend_roles(spec: BenchmarkSpec, experiment: Experiment) -> tuple[str, ...] | None:
    """The roles whose spend columns every result row has, None when the run calls no
    model (its tables keep the columns they had before spend was recorded: a reference
    run neither spends nor replies invalidly)."""
    if not models_used(spec, experiment):
        return None
    return tuple(role.name for role in spec.roles)


def result_rows(
    plans: Sequence[EpisodePlan],
    footers: Sequence[EpisodeEnd | None],
    roles: Sequence[str] | None = None,
) -> list[dict[str, Any]]:
    """Each seat row of each successful episode (from its trace footer, None when the
    trace has none), prefixed with the episode's key columns; a failed episode contributes
    one row with its status and error. Given `roles`, a footer carrying its spend
    (`EpisodeEnd.spend`) adds the spend columns (`spend.spend_columns`: the row's seat,
    each of `roles`, the episode), a failed episode's row included."""
    rows: list[dict[str, Any]] = []
    for plan, footer in zip(plans, footers, strict=True):
        key: dict[str, Any] = {
            "episode_id": plan.episode_id,
            "task_id": plan.task.id,
            "lineup": plan.lineup_text,
            "condition": plan.condition or "",
            "repetition": plan.repetition,
            "seed": plan.seed,
            "status": footer.status if footer is not None else "incomplete",
        }
        parts = footer.spend if footer is not None and roles is not None else None
        if footer is None or footer.status != "ok":
            spent = {} if parts is None else spend_columns(parts, roles or (), None)
            rows.append({**key, "error": footer.error if footer is not None else "", **spent})
            continue
        for row in footer.rows:
            seat = row.get("seat")
            spent = {} if parts is None else spend_columns(
                parts, roles or (), None if seat is None else str(seat)
            )
            rows.append({**key, **row, **spent})
    return rows


@dataclass(frozen=True)
class SpoolEntry:
    """A finished episode's part of a `ResultSpool`, already pickled: built where the
    episode played (a process of the local pool), so the run's process only appends
    bytes rather than scrubbing and pickling every row while the episodes play on the
    same cores."""

    status: str
    rows: bytes
    """The pickled list of its result rows, scrubbed."""
    tables: bytes
    """Its pickled `EpisodeResult.tables`; empty when its footer carried none."""


def spool_entry(
    plan: EpisodePlan, footer: EpisodeEnd, roles: Sequence[str] | None
) -> SpoolEntry:
    """The `SpoolEntry` of `plan` finished with `footer` (`result_rows` with `roles`)."""
    rows = [scrub_data(row) for row in result_rows([plan], [footer], roles)]
    tables = b"" if footer.tables is None else pickle.dumps(footer.tables, pickle.HIGHEST_PROTOCOL)
    return SpoolEntry(footer.status, pickle.dumps(rows, pickle.HIGHEST_PROTOCOL), tables)


class ResultSpool:
    """The result rows of finished episodes, on disk (module docstring). A context
    manager: the spool file disappears when it exits."""

    def __init__(self, directory: Path, roles: Sequence[str] | None = None) -> None:
        self._roles = None if roles is None else tuple(roles)
        """The roles whose spend columns each row gets (`spend_roles`); None: none."""
        self._file = tempfile.TemporaryFile(dir=directory)  # noqa: SIM115 (closed by __exit__)
        self._ranges: dict[str, tuple[int, int, int]] = {}
        """Episode id -> where its rows start, where its tables start and where they end."""
        self.status: dict[str, str] = {}
        """Episode id -> its footer's status, for every episode added."""

    def add(self, plan: EpisodePlan, footer: EpisodeEnd) -> None:
        """Spool the rows, scrubbed (`redaction.scrub_data`), and tables
        (`EpisodeResult.tables`) of a finished episode (its footer can then be dropped)."""
        self.put(plan.episode_id, spool_entry(plan, footer, self._roles))

    def put(self, episode_id: str, entry: SpoolEntry) -> None:
        """Spool a finished episode's `SpoolEntry` (built with this spool's `roles`)."""
        self._file.seek(0, 2)
        start = self._file.tell()
        self._file.write(entry.rows)
        self._file.write(entry.tables)
        self._ranges[episode_id] = (start, start + len(entry.rows), self._file.tell())
        self.status[episode_id] = entry.status

    @property
    def roles(self) -> tuple[str, ...] | None:
        """The roles whose spend columns each row gets (`spend_roles`)."""
        return self._roles

    def __contains__(self, episode_id: object) -> bool:
        return episode_id in self._ranges

    def rows(self, plans: Sequence[EpisodePlan]) -> SpooledRows:
        """The rows of `plans` (each added), in their order."""
        return SpooledRows(self, plans)

    def episode_rows(self, episode_id: str) -> list[dict[str, Any]]:
        start, end, _ = self._ranges[episode_id]
        self._file.seek(start)
        rows: list[dict[str, Any]] = pickle.loads(self._file.read(end - start))
        return rows

    def episode_tables(self, episode_id: str) -> Any:
        """The tables its footer carried when the episode was added; None without any."""
        _, start, end = self._ranges[episode_id]
        if start == end:
            return None
        self._file.seek(start)
        return pickle.loads(self._file.read(end - start))

    def __enter__(self) -> ResultSpool:
        return self

    def __exit__(self, *_: object) -> None:
        self._file.close()


class StreamedRows(Sequence[dict[str, Any]]):
    """Rows read from disk each time they are iterated (subclasses give `__iter__` and
    `__len__`); indexing reads them all, for the rare caller that wants one."""

    @overload
    def __getitem__(self, index: int) -> dict[str, Any]: ...
    @overload
    def __getitem__(self, index: slice) -> list[dict[str, Any]]: ...
    def __getitem__(self, index: int | slice) -> dict[str, Any] | list[dict[str, Any]]:
        return list(self)[index]

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Sequence) and list(self) == list(other)

    __hash__ = None  # type: ignore[assignment]


class SpooledRows(StreamedRows):
    """Result rows read back from a `ResultSpool` each time they are iterated, so a
    benchmark's summary may pass over them more than once without holding them."""

    def __init__(self, spool: ResultSpool, plans: Sequence[EpisodePlan]) -> None:
        self._spool, self._plans = spool, plans
        self._len: int | None = None

    def __iter__(self) -> Iterator[dict[str, Any]]:
        for plan in self._plans:
            yield from self._spool.episode_rows(plan.episode_id)

    def __len__(self) -> int:
        if self._len is None:
            self._len = sum(1 for _ in self)
        return self._len


class CsvRows(StreamedRows):
    """The rows of a CSV file, read from the file each time they are used (what a
    finished run returns as its result rows), cells typed as `confide.readers` types them
    (its column parsers come from one first pass, kept)."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self._parsers: dict[str, Parser] | None = None

    def __iter__(self) -> Iterator[dict[str, Any]]:
        if self._parsers is None:
            self._parsers = column_parsers(self._text_rows())
        parsers = self._parsers
        for row in self._text_rows():
            yield {column: parsers[column](cell) for column, cell in row.items()}

    def _text_rows(self) -> Iterator[dict[str, str]]:
        with self.path.open(newline="", encoding="utf-8") as handle:
            yield from csv.DictReader(handle)

    def __len__(self) -> int:
        return sum(1 for _ in self._text_rows())


def write_csv(path: Path, rows: Iterable[dict[str, Any]], *, scrubbed: bool = False) -> None:
    """`write_table` of the rows without secrets (results.csv and summary.csv), scrubbed
    here unless they were already (`scrubbed`: a `ResultSpool`'s); `rows` is read twice
    (columns first, then the cells), one row at a time."""
    write_table(path, rows if scrubbed else (scrub_data(row) for row in rows), columns_of(rows))


def read_csv(path: Path) -> list[dict[str, str]]:
    """Rows of a CSV written by `write_csv`."""
    return read_table(path)

"""Read a run directory back as plain rows, for notebooks and pandas.

Every reader returns a list of flat dicts, so `pandas.DataFrame(rows)` is the whole
conversion (confide itself does not need pandas):

    from confide.readers import read_results, read_traces
    results = pd.DataFrame(read_results("runs/calbench/latest"))
    messages = pd.DataFrame(read_traces("runs/calbench/latest", kinds={"message"}))

`read_results`, `read_summary` and `read_run_table` type the CSV cells column by column, as
a CSV reader with type inference would: a column whose every non-empty cell is `True` or
`False` holds bools, one whose cells are all integers holds ints, all numbers holds floats,
and anything else stays text; an empty cell is None. The episode key columns (ids, lineup,
condition) always stay text, so an id that happens to be all digits is not turned into a
number. `read_traces` gives one row per trace event, its fields flattened with dotted
names (`message.sender`), prefixed with the episode id, the scenario id and the event's
index in its trace.
"""

from __future__ import annotations

from collections.abc import Callable, Collection, Iterable, Iterator, Mapping, Sequence
from pathlib import Path
from typing import Any

from confide.core.tables import read_table
from confide.core.trace import read_trace, trace_files
from confide.errors import ConfideError

TEXT_COLUMNS = frozenset({"episode_id", "task_id", "lineup", "condition", "status", "error"})
"""Columns that stay text whatever their cells look like."""

Parser = Callable[[str], Any]


def read_results(run_dir: Path | str) -> list[dict[str, Any]]:
    """results.csv: one row per episode and seat (a failed episode: one row with its
    status and error), cells typed (module docstring)."""
    return read_run_table(run_dir, "results.csv")


def read_summary(run_dir: Path | str) -> list[dict[str, Any]]:
    """summary.csv: the benchmark's summary table, cells typed."""
    return read_run_table(run_dir, "summary.csv")


def read_run_table(run_dir: Path | str, name: str) -> list[dict[str, Any]]:
    """Any table a run wrote (e.g. `game_summary.csv`, `pair_round_vps.csv.gz`), typed."""
    path = Path(run_dir) / name
    if not path.is_file():
        raise ConfideError(f"{path}: no such table (is {run_dir} a run directory?)")
    return typed_rows(read_table(path))


def typed_rows(rows: Sequence[Mapping[str, str]]) -> list[dict[str, Any]]:
    """CSV rows with each column's cells typed together (module docstring)."""
    parsers = column_parsers(rows)
    return [{c: parsers[c](row.get(c, "")) for c in parsers} for row in rows]


def column_parsers(rows: Iterable[Mapping[str, str]]) -> dict[str, Parser]:
    """Each column's cell parser (module docstring), from one pass over `rows` that keeps
    no cell: a column's type is the narrowest every non-empty cell fits."""
    fits: dict[str, set[str] | None] = {}
    """column -> the types all its non-empty cells so far fit (None: no such cell yet)"""
    for row in rows:
        for column, cell in row.items():
            before = fits.setdefault(column, None)
            if cell == "" or before == set():
                continue
            kinds = _kinds(cell)
            fits[column] = kinds if before is None else before & kinds
    return {column: _parser(column, kinds) for column, kinds in fits.items()}


def _kinds(cell: str) -> set[str]:
    if cell in ("True", "False"):
        return {"bool"}
    kinds = set()
    for name, parse in (("int", int), ("float", float)):
        try:
            parse(cell)
        except ValueError:
            continue
        kinds.add(name)
    return kinds


def _parser(column: str, kinds: set[str] | None) -> Parser:
    if column in TEXT_COLUMNS or not kinds:
        return _text
    if "bool" in kinds:
        return _bool
    return _optional(int if "int" in kinds else float)  # an int column is a float column too


def _text(cell: str) -> str | None:
    return None if cell == "" else cell


def _bool(cell: str) -> bool | None:
    return None if cell == "" else cell == "True"


def _optional(parse: Parser) -> Parser:
    return lambda cell: None if cell == "" else parse(cell)


def read_traces(
    run_dir: Path | str, *, kinds: Collection[str] | None = None
) -> list[dict[str, Any]]:
    """One row per event of every complete trace of the run, in trace-file order; `kinds`
    keeps only those event kinds (`episode_start`, `message`, `model_call`, `env`,
    `episode_end`, ...), which keeps the model calls' prompts out of memory."""
    return list(iter_traces(run_dir, kinds=kinds))


def iter_traces(
    run_dir: Path | str, *, kinds: Collection[str] | None = None
) -> Iterator[dict[str, Any]]:
    """`read_traces` one row at a time (one trace in memory at a time)."""
    directory = Path(run_dir) / "traces"
    if not directory.is_dir():
        raise ConfideError(f"{directory}: no traces directory (is {run_dir} a run directory?)")
    for path in trace_files(directory):
        trace = read_trace(path)
        key = {"episode_id": trace.header.episode_id, "scenario_id": trace.header.scenario_id}
        events = [trace.header, *trace.events]
        if trace.footer is not None:
            events.append(trace.footer)
        for index, event in enumerate(events):
            kind = getattr(event, "kind", None)
            if kinds is not None and kind not in kinds:
                continue
            yield {**key, "event_index": index, **flatten(event.model_dump(mode="json"))}


def flatten(data: Mapping[str, Any], prefix: str = "") -> dict[str, Any]:
    """Nested mappings as dotted keys (`{"a": {"b": 1}}` -> `{"a.b": 1}`); lists stay."""
    flat: dict[str, Any] = {}
    for key, value in data.items():
        name = f"{prefix}{key}"
        if isinstance(value, Mapping) and value:
            flat.update(flatten(value, f"{name}."))
        else:
            flat[name] = value
    return flat

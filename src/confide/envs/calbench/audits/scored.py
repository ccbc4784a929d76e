"""What one scored CalBench game adds to the run's tables, computed once while it is
scored (`audits.measured`, in the worker that played it) or from its trace read back
(`tables_of`), by the same function (`scored_game`), so both give the same bytes: its
audit, analysis and model-VPS rows, its G.2 unit lines and its counts for every
cross-game summary (`GameTables`, `GameSums`) and its F.5 CSV lines
(`privacy.tables.game_lines`), carried as a `ScoredGame` to the output phase
(outputs/audits.py), which only merges and assembles the tables. The games' tables are
pickled with their slotted rows as constructor calls (`pickled`); they hold no scenario
(their rows name the game and task by id), so neither the wire nor the spools carry one."""

from __future__ import annotations

import io
import pickle
import zlib
from collections.abc import Callable
from dataclasses import dataclass, field, fields, is_dataclass, replace
from operator import attrgetter
from typing import Any

from confide.core import tables
from confide.core.trace import Trace
from confide.envs.calbench import judge
from confide.envs.calbench.audits import analyses, own_slot, semantic
from confide.envs.calbench.audits.common import GameRecord, GameTally, game_record
from confide.envs.calbench.privacy import reflection
from confide.envs.calbench.privacy.deltas import ModelVps, answered
from confide.envs.calbench.privacy.tables import field_names, game_lines
from confide.envs.calbench.privacy.vps import GameVps, vps_rows
from confide.envs.calbench.scenario import Scenario


@dataclass
class GameSums:
    """What some games add to the cross-game summaries (G.1-G.4, the leak and
    disclosure summaries): one game's are computed from its tally where it is scored, in
    the worker that played it, and the output phase only merges its games' in (game id)
    order (`merge`), so a run's summaries cost the run's process a few dictionary
    updates a game rather than a pass over every game's tally per table."""

    regret: analyses.RegretSums = field(default_factory=analyses.RegretSums)
    speakers: analyses.SpeakerSums = field(default_factory=analyses.SpeakerSums)
    messages: analyses.MessageSums = field(default_factory=analyses.MessageSums)
    reschedules: analyses.RescheduleSums = field(default_factory=analyses.RescheduleSums)
    leaks: semantic.LeakSums = field(default_factory=semantic.LeakSums)
    disclosures: own_slot.DisclosureSums = field(default_factory=own_slot.DisclosureSums)

    @classmethod
    def of(cls, game: GameTally, units: list[analyses.SpeakerUnit]) -> GameSums:
        """One game's, from its tally and its G.2 units."""
        speakers = analyses.SpeakerSums()
        if units:  # a game without units is no G.2 game (`first_speaker_tests`)
            speakers.add(game.game_id, units)
        return cls(
            analyses.RegretSums().add(game), speakers, analyses.MessageSums().add(game),
            analyses.RescheduleSums().add(game), semantic.LeakSums().add(game),
            own_slot.DisclosureSums().add(game),
        )

    def merge(self, other: GameSums) -> None:
        """Add `other`'s games (all of whose ids follow these games')."""
        self.regret.merge(other.regret)
        self.speakers.merge(other.speakers)
        self.messages.merge(other.messages)
        self.reschedules.merge(other.reschedules)
        self.leaks.merge(other.leaks)
        self.disclosures.merge(other.disclosures)


UNIT_COLUMNS = field_names(analyses.SpeakerUnit)
"""g2_first_speaker_units.csv's columns."""


@dataclass(frozen=True)
class GameTables:
    """What one game contributes to the run's tables, computed from its trace once."""

    game_id: str
    trace_path: str
    sums: GameSums
    units: bytes
    """Its rows of g2_first_speaker_units.csv, formatted (`tables.csv_lines`)."""
    judged_vps: GameVps | None
    """The protocol VPS rows of a judged game (the judge is compared with them)."""
    leaks: list[semantic.LeakRow]
    disclosures: list[own_slot.DisclosureRow]
    reflected: ModelVps | None
    judged: ModelVps | None
    judge_cases: list[dict[str, Any]]

    @property
    def key(self) -> tuple[str, str]:
        """Tables list games in (game id, trace path) order."""
        return self.game_id, self.trace_path


def _judge_cases(game: GameRecord) -> list[dict[str, Any]]:
    return [
        {"game_id": game.game_id, "round": e.round, "observer_agent": e.data.observer,
         "judge": e.data.judge, "message_ids": e.data.message_ids,
         "ok": e.data.ok, "attempts": e.data.attempts, "error": e.data.error}
        for e in game.trace.of(judge.EVENT)
    ]


@dataclass(frozen=True, slots=True)
class ScoredGame:
    """What one game adds to the run's tables, computed once, while it is scored (in the
    worker that played it: `audits.measured`), and carried to the output phase in its
    footer and the runner's result spool (`BenchmarkSpec.write_tables`): its F.5 CSV
    lines, formatted, and its `GameTables` pickled as the `GameSpool` stores them
    (`pickled`)."""

    key: tuple[str, str]
    privacy: tuple[bytes, ...]
    """Its lines of each F.5 table (`outputs.privacy.game_lines`), each zlib-compressed
    at level 1: a game's are about 75 KB, and would cross the wire from a Ray worker and
    sit in the result spool for the whole run; compressed, the whole record is about 5
    KB, for about a quarter of a second per 1,080 games."""
    tables: bytes

    def privacy_lines(self) -> list[bytes]:
        """`privacy`, decompressed."""
        return [zlib.decompress(lines) for lines in self.privacy]


def scored_game(trace: Trace, scenario: Scenario, vps: GameVps | None = None) -> ScoredGame:
    """Every table row of the game in `trace` (its events, header and footer rows, as read
    back or as the scorer holds them); `vps`: its protocol VPS rows, when computed already
    (with evidence, named by the trace path)."""
    game = game_record(trace, {scenario.task_id: scenario})
    if vps is None:
        vps = vps_rows(scenario, game.events, trace_path=trace.path, game_id=game.game_id)
    tables = game_tables(game, vps)
    privacy = tuple(zlib.compress(lines, 1) for lines in game_lines(vps))
    return ScoredGame(tables.key, privacy, pickled(tables))


def tables_of(scenario: Scenario, trace: Trace) -> ScoredGame:
    """The CalBench `tables_of` hook: `scored_game` of a finished trace read back."""
    return scored_game(trace, scenario)


def game_tables(game: GameRecord, vps: GameVps) -> GameTables:
    """Every table row of one game but its F.5 rows (`vps`, which the judge is compared
    with)."""
    events = game.events
    path, gid = game.trace.path, game.game_id
    judged = answered(events, judge.EVENT)
    units = analyses.speaker_units(game)
    return GameTables(
        game_id=gid,
        trace_path=path,
        sums=GameSums.of(game.tally(), units),
        units=tables.csv_lines(UNIT_COLUMNS, units),
        judged_vps=replace(vps, evidence=[]) if judged else None,
        leaks=semantic.game_leaks(game),
        disclosures=own_slot.game_disclosures(game),
        reflected=reflection.reflection_vps(game.scenario, events, trace_path=path, game_id=gid)
        if answered(events, reflection.EVENT) else None,
        judged=judge.judge_vps(game.scenario, events, trace_path=path, game_id=gid)
        if judged else None,
        judge_cases=_judge_cases(game) if judged else [],
    )


def pickled(tables: GameTables) -> bytes:
    """A game's tables as the spool stores them (`pickle.loads` reads them back)."""
    data = io.BytesIO()
    pickler = pickle.Pickler(data, pickle.HIGHEST_PROTOCOL)
    pickler.dispatch_table = _SLOTTED
    pickler.dump(tables)
    return data.getvalue()


class _SlottedReducers(dict[type, Callable[[Any], tuple[Any, ...]]]):
    """Pickle a slotted dataclass as its constructor call: the default pickling of one
    (`dataclasses._dataclass_getstate`/`setstate`) looks up its fields for every
    instance, which made the spool's round trip the costliest step of a reference run's
    tables after the VPS itself (a game has hundreds of rows). Other classes pickle as
    usual (a KeyError is the pickler's "not here")."""

    def __missing__(self, cls: type) -> Callable[[Any], tuple[Any, ...]]:
        if not (is_dataclass(cls) and "__slots__" in vars(cls)) or any(
            not f.init for f in fields(cls)
        ):
            raise KeyError(cls)
        values = attrgetter(*(f.name for f in fields(cls)))
        if len(fields(cls)) == 1:
            reduce = self[cls] = lambda obj: (cls, (values(obj),))
        else:
            reduce = self[cls] = lambda obj: (cls, values(obj))
        return reduce


_SLOTTED = _SlottedReducers()

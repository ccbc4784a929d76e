"""The CalBench environment behind `BenchmarkSpec` "calbench": task loading, seats, and
one episode = one game (engine/) scored by metrics.py.

Options (`--option KEY=VALUE`, experiment `options:`): `max_turns_per_round` (int >= 1 or
null for no budget; default: the task's own budget if it has one, e.g. 2 in the `tiny`
suite, else 20, the published harness's default; an explicit option wins), `decision_retries`
(int >= 0; default: the task's, e.g. 1 in `tiny`, else 3), `sd_model` (agent id ->
scheduling difficulty for SD-MAP, D.2), `reflection` (bool, default true: post-round
reflection calls for model seats, F.3). The communication condition is the episode's
condition (default `dm`).
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from functools import lru_cache
from pathlib import Path
from typing import Any, NamedTuple

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from confide.core.benchmark import EpisodeContext, EpisodeResult, expand_lineup
from confide.envs.calbench.actions import seat_of
from confide.envs.calbench.calendar import Errand
from confide.envs.calbench.engine import (
    DEFAULT_DECISION_RETRIES,
    DEFAULT_MAX_TURNS,
    Game,
    GameConfig,
)
from confide.envs.calbench.errors import describe_validation_error
from confide.envs.calbench.metrics import evaluate
from confide.envs.calbench.participants import make_participant
from confide.envs.calbench.privacy.reflection import reflection_hook
from confide.envs.calbench.scenario import Scenario
from confide.envs.calbench.suites import load_suite
from confide.envs.calbench.suites import load_tasks as load_task_file
from confide.errors import ConfideError

DEFAULT_SUITE = "canonical"
DEFAULT_LABEL_BANK = Path(__file__).parent / "data" / "label_bank_v1.json"
"""Our label bank (three sensitivity tiers): shipped suites are hydrated with it at load
time (A.1), so LLM seats see private labels and the semantic-leakage audit has something
to guard. Reference protocols never read labels, so their results do not depend on it."""


class CalbenchOptions(BaseModel):
    """Environment options (types here, ranges in `GameConfig`); unknown keys are
    rejected."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    max_turns_per_round: int | None = DEFAULT_MAX_TURNS
    decision_retries: int = DEFAULT_DECISION_RETRIES
    sd_model: dict[int, float] = Field(default_factory=dict)
    reflection: bool = True
    """Ask model seats the measurement-only reflection question after every round (F.3);
    off saves one call per model seat and round but leaves their VPS unmeasured."""


def parse_options(raw: Mapping[str, Any]) -> CalbenchOptions:
    """Validate environment options; the error names the option and its value."""
    try:
        return CalbenchOptions.model_validate(dict(raw))
    except ValidationError as exc:
        raise ConfideError(describe_validation_error(exc, "calbench options")) from None


class GameLimits(NamedTuple):
    max_turns_per_round: int | None
    decision_retries: int


def game_limits(options: CalbenchOptions, scenario: Scenario) -> GameLimits:
    """A game's cheap-talk budget and retry budget: each from an explicit option, else
    from the task, else the published harness's default."""
    given = options.model_fields_set
    turns = (
        options.max_turns_per_round
        if "max_turns_per_round" in given
        else scenario.max_turns_per_round or DEFAULT_MAX_TURNS
    )
    retries = options.decision_retries
    if "decision_retries" not in given and scenario.decision_retries is not None:
        retries = scenario.decision_retries
    return GameLimits(turns, retries)


def load_tasks(suite: str | None, path: str | None) -> list[Scenario]:
    """A shipped suite (default `canonical`) or a task file (ours or the public fixtures).
    Loaded once per process and file version: a run loads its tasks to expand the
    experiment and again to build its tables, and hydrating the canonical suite's labels
    costs seconds (scenarios are frozen, so sharing them is safe)."""
    version = None
    if path is not None:
        try:
            stat = os.stat(path)
        except OSError:
            return load_task_file(path)  # which names the file and the error
        version = (stat.st_mtime_ns, stat.st_size)
    return list(_load_tasks(suite or DEFAULT_SUITE, path, version))


@lru_cache(maxsize=8)
def _load_tasks(
    suite: str, path: str | None, version: tuple[int, int] | None
) -> tuple[Scenario, ...]:
    if path is not None:
        return tuple(load_task_file(path))
    return tuple(load_suite(suite, label_bank=DEFAULT_LABEL_BANK))


def seats(task: Scenario) -> list[str]:
    """One seat per scenario agent: agent0, agent1, ..."""
    return [seat_of(a) for a in range(task.num_agents)]


async def run_episode(ctx: EpisodeContext) -> EpisodeResult:
    """Play one game with the lineup bound to the scenario's agents and score it."""
    scenario = ctx.task
    if not isinstance(scenario, Scenario):
        raise ConfideError(f"calbench: task must be a Scenario, got {type(scenario).__name__}")
    options = parse_options(ctx.options)
    binding = expand_lineup(ctx.lineup, seats(scenario))
    opts = options.model_dump()
    limits = game_limits(options, scenario)
    players = {
        seat: make_participant(seat, spec, opts, ctx) for seat, spec in binding.items()
    }
    game = Game(
        scenario,
        players,
        ctx.trace,
        GameConfig(
            condition=ctx.condition or "dm",
            max_turns_per_round=limits.max_turns_per_round,
            decision_retries=limits.decision_retries,
        ),
        turns=ctx.turns,
        after_round=reflection_hook(ctx, scenario, binding, players)
        if options.reflection
        else None,
    )
    outcome = await game.play()
    report = evaluate(scenario, ctx.trace.events, outcome)
    rows = [
        {
            "seat": seat_of(row["agent"]),
            "participant": str(binding[seat_of(row["agent"])]),
            "cost_setting": scenario.cost_setting,
            **row,
        }
        for row in report.rows
    ]
    final_state = {**outcome.to_json(), **{k: report.game[k] for k in _FINAL_KEYS}}
    return EpisodeResult(rows=rows, metrics=report.game, final_state=final_state)


_FINAL_KEYS = (
    "cost_real",
    "meetings_resolved",
    "meetings_scheduled",
    "messages_total",
    "consistency_violations",
)


def private_markers(task: Scenario) -> dict[str, list[str]]:
    """Per seat, the private labels of its own errands that no other seat may see (a label
    text that also appears on another calendar or on a meeting is not private to one
    seat, so it is left out)."""
    texts = task.private_texts()
    holders: dict[str, set[int]] = {}
    for agent, calendar in enumerate(task.to_calendars()):
        for item in calendar.slots:
            if item is not None and item.label_id is not None:
                owner = agent if isinstance(item, Errand) else -1
                holders.setdefault(texts[item.label_id], set()).add(owner)
    for meeting in task.meetings:
        if meeting.label_id is not None:
            holders.setdefault(texts[meeting.label_id], set()).add(-1)
    return {
        seat_of(a): sorted(text for text, who in holders.items() if who == {a})
        for a in range(task.num_agents)
    }

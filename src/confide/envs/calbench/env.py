"""The CalBench environment behind `BenchmarkSpec` "calbench": task loading, seats, and
one episode = one game (engine/, `play_episode`) then its scoring from the trace alone
(`score_episode`: `score_game`'s metrics.py rows, then `audits.measured`'s judge,
leaderboard columns and table rows); `run_episode` plays and scores, as the spec does.

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
from functools import lru_cache
from pathlib import Path
from typing import NamedTuple

from confide.core.benchmark import EpisodeContext, EpisodeResult, expand_lineup
from confide.core.options import parse_options
from confide.core.scoring import play_then_score
from confide.core.truncation import truncated_replies
from confide.envs.calbench.actions import seat_of
from confide.envs.calbench.audits.episode import measured
from confide.envs.calbench.engine import (
    DEFAULT_MAX_TURNS,
    Game,
    GameConfig,
)
from confide.envs.calbench.engine.outcome import outcome_from_events
from confide.envs.calbench.metrics import evaluate
from confide.envs.calbench.options import EnvOptions
from confide.envs.calbench.participants import make_participant
from confide.envs.calbench.privacy.reflection import reflection_hook
from confide.envs.calbench.scenario import Scenario
from confide.envs.calbench.suites import load_suite
from confide.envs.calbench.suites import load_tasks as load_task_file
from confide.envs.calbench.world import Errand
from confide.errors import ConfideError

DEFAULT_SUITE = "canonical"
DEFAULT_LABEL_BANK = Path(__file__).parent / "data" / "label_bank_v1.json"
"""Our label bank (three sensitivity tiers): shipped suites are hydrated with it at load
time (A.1), so LLM seats see private labels and the semantic-leakage audit has something
to guard. Reference protocols never read labels, so their results do not depend on it."""


class GameLimits(NamedTuple):
    max_turns_per_round: int | None
    decision_retries: int


def game_limits(options: EnvOptions, scenario: Scenario) -> GameLimits:
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


def _scenario(ctx: EpisodeContext) -> Scenario:
    if not isinstance(ctx.task, Scenario):
        raise ConfideError(f"calbench: task must be a Scenario, got {type(ctx.task).__name__}")
    return ctx.task


async def play_episode(ctx: EpisodeContext) -> None:
    """Play one game with the lineup bound to the scenario's agents into `ctx.trace`."""
    scenario = _scenario(ctx)
    options = parse_options(EnvOptions, ctx.options, "calbench")
    binding = expand_lineup(ctx.lineup, seats(scenario))
    limits = game_limits(options, scenario)
    # the seats' prompts state the limits the engine enforces
    opts = {**options.model_dump(), **limits._asdict()}
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
    await game.play()


async def score_game(ctx: EpisodeContext) -> EpisodeResult:
    """The section 4.2 metrics of the game played into `ctx.trace` (its outcome read back
    from the trace, `outcome_from_events`)."""
    scenario = _scenario(ctx)
    binding = expand_lineup(ctx.lineup, seats(scenario))
    outcome = outcome_from_events(scenario, ctx.trace.events)
    report = evaluate(scenario, ctx.trace.events, outcome)
    truncated = truncated_replies(ctx.trace.events)
    rows = [
        {
            "seat": seat_of(row["agent"]),
            "participant": str(binding[seat_of(row["agent"])]),
            "cost_setting": scenario.cost_setting,
            **row,
            "truncated_replies": truncated.get(seat_of(row["agent"]), 0),
        }
        for row in report.rows
    ]
    final_state = {**outcome.to_json(), **{k: report.game[k] for k in _FINAL_KEYS}}
    return EpisodeResult(rows=rows, metrics=report.game, final_state=final_state)


score_episode = measured(score_game)
"""Score a played game: its section 4.2 metrics, then the judge (when a `judge` role is
bound), the leaderboard columns and its table rows (`audits.measured`)."""
run_episode = play_then_score(play_episode, score_episode)
"""Play one game and score it: the spec's episode function (tests and benches use it)."""


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

"""Builders shared by the CalBench engine and protocol tests (this module has no tests):
hand-made scenarios, scripted seats, and one-call game runners."""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from confide.core.benchmark import EpisodeContext, EpisodeResult, parse_lineup
from confide.core.message import Message
from confide.core.trace import EnvEvent, MessageDelivered, TraceRecorder
from confide.envs.calbench.actions import CalendarObservation, Envelope, Participant, seat_of
from confide.envs.calbench.engine import Game, GameConfig, GameOutcome
from confide.envs.calbench.env import run_episode
from confide.envs.calbench.metrics import GameReport, evaluate
from confide.envs.calbench.oracle import solve_oracle
from confide.envs.calbench.scenario import (
    ErrandSlot,
    MeetingSlot,
    MeetingSpec,
    Scenario,
    WitnessRecord,
)

VARIED_DISPLAY = {1: 1, 2: 10, 3: 100}


def errand(errand_id: int, cost: int = 1, blocked: bool = False) -> ErrandSlot:
    return ErrandSlot(errand_id=errand_id, cost=cost, blocked=blocked)


def prior(meeting_id: int, participants: tuple[int, ...], cost: int = 1) -> MeetingSlot:
    return MeetingSlot(meeting_id=meeting_id, cost=cost, participants=participants)


def scenario(
    calendars: Sequence[Sequence[ErrandSlot | MeetingSlot | None]],
    meetings: Sequence[tuple[int, tuple[int, ...], tuple[int, ...]]],
    *,
    witness: dict[int, int] | None = None,
    display: dict[int, int] | None = None,
    task_id: str = "hand",
) -> Scenario:
    """A scenario from literal calendars and (meeting id, participants, speaker order)
    triples, with its CP-SAT oracle attached."""
    sc = Scenario(
        task_id=task_id,
        num_agents=len(calendars),
        num_slots=len(calendars[0]),
        cost_setting="varied" if display else "uniform",
        cost_display=display or {},
        calendars=tuple(tuple(row) for row in calendars),
        meetings=tuple(
            MeetingSpec(meeting_id=mid, participants=parts, speaker_order=order)
            for mid, parts, order in meetings
        ),
        witness=WitnessRecord(assignments=witness, cost=0) if witness else None,
    )
    oracle = solve_oracle(sc.to_calendars(), sc.to_meetings())
    assert oracle is not None
    return sc.model_copy(update={"oracle": oracle.to_record()})


def run_lineup(
    sc: Scenario, lineup: str, *, condition: str = "dm", options: dict[str, Any] | None = None
) -> tuple[EpisodeResult, TraceRecorder]:
    """One episode through the environment (reference lineups)."""
    trace = TraceRecorder()
    ctx = EpisodeContext(
        episode_id="test",
        task=sc,
        lineup=parse_lineup(lineup),
        seed=0,
        trace=trace,
        model_factory=_no_models,
        condition=condition,
        options=dict(options or {}),
    )
    return asyncio.run(run_episode(ctx)), trace


def run_players(
    sc: Scenario,
    players: Mapping[int, Participant],
    config: GameConfig | None = None,
) -> tuple[GameOutcome, GameReport, TraceRecorder]:
    """One game with explicit participants (scripted seats)."""
    trace = TraceRecorder()
    game = Game(sc, {seat_of(a): p for a, p in players.items()}, trace, config)
    outcome = asyncio.run(game.play())
    return outcome, evaluate(sc, trace.events, outcome), trace


class Scripted:
    """A seat whose answers come from `script(observation)`; it keeps what it saw."""

    def __init__(self, script: Callable[[CalendarObservation], Envelope], name: str = "scripted"):
        self.name = name
        self.script = script
        self.seen: list[CalendarObservation] = []

    async def act(self, observation: CalendarObservation) -> Envelope:
        self.seen.append(observation)
        return self.script(observation)


def env_events(trace: TraceRecorder, name: str | None = None) -> list[EnvEvent]:
    return [e for e in trace.events if isinstance(e, EnvEvent) and (name is None or e.name == name)]


def messages(trace: TraceRecorder) -> list[Message]:
    return [e.message for e in trace.events if isinstance(e, MessageDelivered)]


def payloads(trace: TraceRecorder) -> list[tuple[str, tuple[str, ...], dict[str, Any] | None]]:
    """(sender, recipients, payload) of every message, in delivery order."""
    return [(m.sender, m.recipients, m.payload) for m in messages(trace)]


def _no_models(spec: str, **_: Any) -> Any:
    raise AssertionError(f"no model expected, asked for {spec}")

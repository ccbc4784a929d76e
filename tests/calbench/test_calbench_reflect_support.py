"""A hand-made CalBench game with scripted text messages, for the reflection, judge and
audit tests (this module has no tests).

Three agents, four slots, two rounds (condition dm):

    agent0: [free, errand 1, free, blocked errand 2]
    agent1: [errand 3, free, free, free]
    agent2: [free, free, errand 4, free]

Round 0, M1 (agents 0, 1): agent0 -> 1 "I'm free at slot 0 and slot 2."; agent1 -> 0
"Slot 0 works for me, I can move my errand there."; both schedule slot 0, agent1 moving
errand 3 to slot 1 (cost 1). Round 1, M2 (agents 1, 2): agent1 -> 2 "How about slot 2? I'm
free there."; agent2 -> 1 "Slot 2 has my errand but I can move it to slot 3."; both schedule
slot 2, agent2 moving errand 4 to slot 3 (cost 1).

Truth at the start of round 0: agent0 [occ, ...] as above; at the start of round 1:
agent0 [M1, e1, free, e2], agent1 [M1, e3, free, free], agent2 unchanged.
"""

from __future__ import annotations

import asyncio
import json
import re
from collections.abc import Awaitable, Callable, Sequence

from test_calbench_engine_support import Scripted, errand, scenario

from confide.core.trace import EpisodeEnd, EpisodeStart, Trace, TraceRecorder
from confide.envs.calbench.actions import (
    CalendarObservation,
    CheapTalkObservation,
    DmCall,
    Envelope,
    RescheduleCall,
    ScheduleCall,
    seat_of,
)
from confide.envs.calbench.engine import Game
from confide.envs.calbench.metrics import evaluate
from confide.envs.calbench.privacy.deltas import target_field
from confide.envs.calbench.scenario import Scenario
from confide.llm import ChatMessage, GenerateConfig

TEXTS = {
    (0, 0): (1, "I'm free at slot 0 and slot 2."),
    (0, 1): (0, "Slot 0 works for me, I can move my errand there."),
    (1, 1): (2, "How about slot 2? I'm free there."),
    (1, 2): (1, "Slot 2 has my errand but I can move it to slot 3."),
}
DECISIONS: dict[tuple[int, int], list[ScheduleCall | RescheduleCall]] = {
    (0, 0): [ScheduleCall(meeting_id=1, slot=0)],
    (0, 1): [RescheduleCall(item_id=3, from_slot=0, to_slot=1, justification="meeting"),
             ScheduleCall(meeting_id=1, slot=0)],
    (1, 1): [ScheduleCall(meeting_id=2, slot=2)],
    (1, 2): [RescheduleCall(item_id=4, from_slot=2, to_slot=3, justification="meeting"),
             ScheduleCall(meeting_id=2, slot=2)],
}


def task() -> Scenario:
    return scenario(
        [
            [None, errand(1), None, errand(2, blocked=True)],
            [errand(3), None, None, None],
            [None, None, errand(4), None],
        ],
        [(1, (0, 1), (0, 1)), (2, (1, 2), (1, 2))],
        task_id="reflect",
    )


def script(agent: int) -> Callable[[CalendarObservation], Envelope]:
    def answer(obs: CalendarObservation) -> Envelope:
        key = (obs.round, agent)
        if isinstance(obs, CheapTalkObservation):
            if obs.turn == 0 and key in TEXTS:
                to, text = TEXTS[key]
                return Envelope(thinking="t", actions=[DmCall(to=to, content=text)])
            return Envelope()
        return Envelope(thinking="d", actions=list(DECISIONS.get(key, [])))

    return answer


class Threaded(Scripted):
    """A scripted seat that also exposes a fixed conversation thread."""

    def reflection_context(self) -> Sequence[ChatMessage]:
        return (ChatMessage(role="system", content=f"thread of {self.name}"),)


def play(
    sc: Scenario,
    hook: Callable[[TraceRecorder], Callable[[int], Awaitable[None]]] | None = None,
    *,
    threaded: bool = False,
    episode: str = "g1",
    lineup: Sequence[str] = ("mock/a", "mock/b", "imap"),
    finish: bool = False,
) -> TraceRecorder:
    """Play the scripted game into a fresh trace (with a header), hooking each round;
    `finish` adds the footer with the metric rows, as the runner would."""
    rec = TraceRecorder(episode)
    rec.emit(EpisodeStart(episode_id=episode, benchmark="calbench", scenario_id=sc.task_id,
                          seed=0, lineup=list(lineup)))
    kind = Threaded if threaded else Scripted
    seats = {seat_of(a): kind(script(a), name=f"s{a}") for a in range(3)}
    game = Game(sc, seats, rec, after_round=None if hook is None else hook(rec))
    outcome = asyncio.run(game.play())
    if finish:
        report = evaluate(sc, rec.events, outcome)
        rows = [{"seat": seat_of(r["agent"]), "participant": lineup[r["agent"]], **r}
                for r in report.rows]
        rec.finish(EpisodeEnd(rows=rows, metrics=report.game))
    return rec


def as_trace(rec: TraceRecorder, path: str = "traces/g1.jsonl") -> Trace:
    trace = rec.as_trace()
    trace.path = path
    return trace


def reply(deltas: dict[int, list[int]]) -> str:
    return json.dumps({target_field(t): v for t, v in sorted(deltas.items())})


_CASE = re.compile(r"agent (\d+) received in round (\d+)")


def keyed_replies(
    table: dict[tuple[int, int], str],
) -> Callable[[list[ChatMessage], GenerateConfig], str]:
    """A mock reply function answering by (observer, round) read from the judge prompt."""

    def answer(messages: list[ChatMessage], config: GenerateConfig) -> str:
        found = _CASE.search(messages[0].content)
        assert found is not None, messages[0].content
        return table[int(found.group(2)) - 1, int(found.group(1))]  # prompts count from 1

    return answer

"""Quiet changes to CalBench's published numbers, each checked
against a hand-computed game.

- Table 2's Msgs. column: E_{g,i} = N^msg / max(M^sched, 1) when a meeting fails
  (the CalBench paper, section 4.2 "efficiency", Table 2 caption).
- C^adj = (max(0, e) + m^miss * max(0, w - o)) / M when a seat's witness cost is below
  its oracle share (section 4.2; see metrics.py for our reading of w and o).

Neither test depends on what the engine does with the valid batches of a failed meeting
(rolled back or kept): in the scripted game the failed meeting has no valid batch at all,
and the C^adj case scores a hand-built outcome.
"""

from __future__ import annotations

from typing import Any

import pytest
from test_calbench_engine_support import Scripted, errand, run_players, scenario

from confide.core.message import Channel, Message
from confide.core.trace import MessageDelivered
from confide.envs.calbench import events as cal
from confide.envs.calbench.actions import (
    BatchObservation,
    CalendarObservation,
    CheapTalkObservation,
    DmCall,
    Envelope,
    ScheduleCall,
)
from confide.envs.calbench.engine import GameConfig, GameOutcome
from confide.envs.calbench.metrics import evaluate
from confide.envs.calbench.outputs.table2 import summarize
from confide.envs.calbench.world import Calendar, Errand, MeetingItem

SLOTS = {1: 0, 2: 1}
"""Where every participant schedules M1 and M2; M3 gets empty DECISION batches."""


def _talker(dms: dict[int, tuple[int, int]]) -> Scripted:
    """A seat that, at the start of round r, sends `count` DMs to `to` for
    `dms[r] = (count, to)`; it schedules M1 and M2 at `SLOTS` and answers M3's decision
    with an empty batch (rejected by A.5 rule 6 on every attempt, so M3 never has a valid
    batch)."""

    def script(obs: CalendarObservation) -> Envelope:
        if isinstance(obs, CheapTalkObservation):
            count, to = dms.get(obs.round, (0, 0)) if obs.round_start else (0, 0)
            return Envelope(actions=[DmCall(to=to, content=f"note {k}") for k in range(count)])
        assert isinstance(obs, BatchObservation)
        slot = SLOTS.get(obs.meeting.meeting_id)
        if slot is None:
            return Envelope()
        return Envelope(actions=[ScheduleCall(meeting_id=obs.meeting.meeting_id, slot=slot)])

    return Scripted(script)


def _with_keys(rows: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The runner's key columns on report rows, as summarize() reads them."""
    return [
        {"status": "ok", "participant": "scripted", "cost_setting": "uniform",
         "condition": "dm", "episode_id": "g", **row}
        for row in rows
    ]


def test_msgs_divides_by_scheduled_meetings_when_a_meeting_fails() -> None:
    """Free calendars, 4 agents, 4 slots. M1 = {0, 1} (round 0), M2 = {0, 2} (round 1),
    M3 = {0, 1, 2, 3} (round 2). M1 and M2 are scheduled (slots 0 and 1 on every
    participant's calendar); M3 has no valid batch and fails.
    M = (3, 2, 2, 1), M^sched = (2, 1, 1, 0).
    DMs (always to a participant of the round, so nobody else is activated): round 0:
    agent 0 -> 1 x2, agent 1 -> 0 x1; round 1: agent 0 -> 2 x1, agent 2 -> 0 x2; round 2:
    agent 0 -> 1 x3, agent 3 -> 0 x3. N^msg = (6, 1, 2, 3).
    E = (6 / 2, 1 / 1, 2 / 1, 3 / max(0, 1)) = (3, 1, 2, 3); dividing by M gives
    (2, 0.5, 1, 3), multiplying by M^sched gives 12 for agent 0.
    Game: 12 messages / 4 scheduled participant-meetings = 3.0 (12 / 8 with M).
    Table 2 Msgs. = mean over seat-games = (3 + 1 + 2 + 3) / 4 = 2.25;
    Coord. = 100 * mean(2/3, 1/2, 1/2, 0) = 100 * 5 / 12.
    """
    sc = scenario(
        [[None] * 4] * 4,
        [(1, (0, 1), (0, 1)), (2, (0, 2), (0, 2)), (3, (0, 1, 2, 3), (0, 1, 2, 3))],
    )
    players = {
        0: _talker({0: (2, 1), 1: (1, 2), 2: (3, 1)}),
        1: _talker({0: (1, 0)}),
        2: _talker({1: (2, 0)}),
        3: _talker({2: (3, 0)}),
    }
    outcome, report, _ = run_players(sc, players, GameConfig(decision_retries=1))
    assert outcome.resolved == {1: True, 2: True, 3: False}
    rows = report.rows
    assert [r["meetings"] for r in rows] == [3, 2, 2, 1]
    assert [r["scheduled"] for r in rows] == [2, 1, 1, 0]
    assert [r["messages"] for r in rows] == [6, 1, 2, 3]
    assert [r["messages_per_meeting"] for r in rows] == [3.0, 1.0, 2.0, 3.0]
    assert report.game["messages_total"] == 12
    assert report.game["messages_per_meeting"] == 3.0
    (table,) = summarize(_with_keys(rows))
    assert table["Msgs."] == 2.25
    assert table["Coord."] == pytest.approx(100 * 5 / 12)
    assert (table["Excess"], table["Fair."]) == (0.0, 0.0)


def _delivered(sender: str, count: int) -> list[MessageDelivered]:
    return [
        MessageDelivered(message=Message(id=k, sender=sender, recipients=("agent1",),
                                         channel=Channel.dm(), text="hello"))
        for k in range(count)
    ]


def test_msgs_when_nothing_is_scheduled_divides_by_one() -> None:
    """Hand-built outcome: M1 = {0, 1} unresolved, agent 0 sent 3 messages. E_0 = 3 /
    max(0, 1) = 3; the game's messages per scheduled participant-meeting is 3 / max(0, 1)."""
    sc = scenario([[None, None], [None, None]], [(1, (0, 1), (0, 1))])
    report = evaluate(sc, _delivered("agent0", 3), GameOutcome(sc.to_calendars(), {1: False}))
    assert [r["messages_per_meeting"] for r in report.rows] == [3.0, 0.0]
    assert report.game["messages_per_meeting"] == 3.0
    assert report.game["success"] == 0.0


def _adj_game() -> Any:
    """3 agents, 3 slots, M1 and M2 both {0, 1}; agent 2 attends nothing.
    Moving cost per slot: s0 2 (agent 0's errand 1), s1 3 (agent 1's errand 2), s2 0.
    Full oracle {s0, s2}: o = (2, 0, 0), optimum 2. Witness M1 = s1, M2 = s2:
    w = (0, 3, 0), so agent 0's witness cost is below its oracle share (w - o = -2).
    Greedy: M1 -> s2 (0), then M2 -> s0 (2): cost 2."""
    return scenario(
        [[errand(1, 2), None, None], [None, errand(2, 3), None], [None, None, None]],
        [(1, (0, 1), (0, 1)), (2, (0, 1), (1, 0))],
        witness={1: 1, 2: 2},
    )


def test_adjusted_cost_clamps_a_witness_cheaper_than_the_oracle_share() -> None:
    """Hand-built outcome: agent 1 moved errand 2 (cost 3) from s1 to s2 and M1 sits at s1
    on both calendars (resolved); M2 unresolved. c^real = (0, 3, 0).
    Scheduled-only oracle {M1} -> s2: (0, 0, 0). e = (0, 3, 0), mean 1, excess (0, 3, 0),
    fairness (1, 2, 1). One missed meeting for agents 0 and 1 (M = 2):
    C^adj_0 = (0 + 1 * max(0, 0 - 2)) / 2 = 0 (unclamped: -1),
    C^adj_1 = (3 + 1 * max(0, 3 - 0)) / 2 = 3, C^adj_2 = None (M = 0).
    Game: adj mean over seats with a value (0 + 3) / 2 = 1.5; excess mean 1; fairness
    mean 4/3; cost 3 vs optimum 2 and greedy 2: both ratios 1.5."""
    sc = _adj_game()
    m1 = MeetingItem(1, 1, (0, 1))
    final = (
        Calendar(0, (Errand(1, 2), m1, None)),
        Calendar(1, (None, m1, Errand(2, 3))),
        Calendar(2, (None, None, None)),
    )
    moved = cal.BatchApplied(seat="agent1", round=0, data=cal.BatchAppliedData(
        phase="DECISION", actions=[], cost=3, display_cost=3, calendar="",
        moves=[cal.Move(kind="errand", item_id=2, from_slot=1, to_slot=2, cost=3)],
    ))
    report = evaluate(sc, [moved], GameOutcome(final, {1: True, 2: False}))
    rows = report.rows
    assert sc.oracle is not None and sc.oracle.per_agent_cost == (2, 0, 0)
    assert [r["scheduled"] for r in rows] == [1, 1, 0]
    assert [r["cost_real"] for r in rows] == [0, 3, 0]
    assert [r["cost_oracle"] for r in rows] == [0, 0, 0]
    assert [r["excess"] for r in rows] == [0, 3, 0]
    assert [r["fairness"] for r in rows] == [1.0, 2.0, 1.0]
    assert [r["adj_cost"] for r in rows] == [0.0, 3.0, None]
    game = report.game
    assert game["adj_cost_mean"] == 1.5
    assert game["excess_mean"] == 1.0 and game["fairness_mean"] == pytest.approx(4 / 3)
    assert (game["cost_real"], game["cost_optimal"], game["cost_greedy"]) == (3, 2, 2)
    assert (game["cost_vs_optimal"], game["cost_vs_greedy"]) == (1.5, 1.5)

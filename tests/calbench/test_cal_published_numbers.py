"""Quiet changes to CalBench's published numbers (issue 22, items 2 and 3), each checked
against a hand-computed game.

- Table 2's Msgs. column: E_{g,i} = N^msg / max(M^sched, 1) when a meeting fails
  (calbench.md section 4.2 "efficiency", Table 2 caption).
- C^adj = (max(0, e) + m^miss * max(0, w - o)) / M when a seat's witness cost is below
  its oracle share (section 4.2; see metrics.py for our reading of w and o).

Neither test depends on what the engine does with the valid batches of a failed meeting
(rolled back or kept): in the scripted game the failed meeting has no valid batch at all,
and the C^adj case scores a hand-built outcome.
"""

from __future__ import annotations

from typing import Any

import pytest
from test_cal_engine_support import Scripted, errand, run_players, scenario

from confide.envs.calbench.actions import (
    BatchObservation,
    CalendarObservation,
    CheapTalkObservation,
    DmCall,
    Envelope,
    ScheduleCall,
)
from confide.envs.calbench.calendar import Calendar, MeetingItem
from confide.envs.calbench.engine import GameConfig, GameOutcome
from confide.envs.calbench.metrics import evaluate
from confide.envs.calbench.summary import summarize


def _talker(dms: dict[int, int], recipient: int) -> Scripted:
    """A seat that, at the start of round r, sends `dms[r]` DMs to `recipient`; it
    schedules M1 at slot 0 and answers M2's decision with an empty batch (rejected by
    A.5 rule 6 on every attempt, so M2 never has a valid batch)."""

    def script(obs: CalendarObservation) -> Envelope:
        if isinstance(obs, CheapTalkObservation):
            if not obs.round_start:
                return Envelope()
            count = dms.get(obs.round, 0)
            return Envelope(actions=[DmCall(to=recipient, content=f"note {k}")
                                     for k in range(count)])
        assert isinstance(obs, BatchObservation)
        if obs.meeting.meeting_id == 1:
            return Envelope(actions=[ScheduleCall(meeting_id=1, slot=0)])
        return Envelope()

    return Scripted(script)


def _with_keys(rows: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The runner's key columns on report rows, as summarize() reads them."""
    return [
        {"status": "ok", "participant": "scripted", "cost_setting": "uniform",
         "condition": "dm", "episode_id": "g", **row}
        for row in rows
    ]


def test_msgs_divides_by_scheduled_meetings_when_a_meeting_fails() -> None:
    """Free calendars, 3 agents, 3 slots. M1 = {0, 1} (round 0), M2 = {0, 1, 2} (round 1).

    M1: both schedule slot 0 -> resolved, consistent. M2: every participant submits an
    empty DECISION batch -> no valid batch -> unresolved. So M = (2, 2, 1),
    M^sched = (1, 1, 0).
    Messages: agent 0 sends 2 DMs at the start of each round (4); agent 1 sends 1 in
    round 1 (1); agent 2 speaks only in round 1 (a DM to it would activate it in round
    0; none is sent) and sends 3 (3).
    E = (4 / 1, 1 / 1, 3 / max(0, 1)) = (4, 1, 3); dividing by M instead gives (2, 0.5, 3).
    Game: 8 messages / 2 scheduled participant-meetings = 4.0 (not 8 / 5).
    Table 2 Msgs. = mean over seat-games = (4 + 1 + 3) / 3 = 8 / 3.
    """
    sc = scenario([[None] * 3] * 3, [(1, (0, 1), (0, 1)), (2, (0, 1, 2), (0, 1, 2))])
    players = {0: _talker({0: 2, 1: 2}, 1), 1: _talker({1: 1}, 0), 2: _talker({1: 3}, 0)}
    outcome, report, _ = run_players(sc, players, GameConfig(decision_retries=1))
    assert outcome.resolved == {1: True, 2: False}
    rows = report.rows
    assert [r["meetings"] for r in rows] == [2, 2, 1]
    assert [r["scheduled"] for r in rows] == [1, 1, 0]
    assert [r["messages"] for r in rows] == [4, 1, 3]
    assert [r["messages_per_meeting"] for r in rows] == [4.0, 1.0, 3.0]
    assert report.game["messages_total"] == 8
    assert report.game["messages_per_meeting"] == 4.0
    (table,) = summarize(_with_keys(rows))
    assert table["Msgs."] == pytest.approx(8 / 3)
    # the neighbouring columns of the same row: Coord. = 100 * mean(1/2, 1/2, 0)
    assert table["Coord."] == pytest.approx(100 / 3)
    assert (table["Excess"], table["Fair."]) == (0.0, 0.0)


def _adj_game() -> Any:
    """3 agents, 3 slots, M1 and M2 both {0, 1}; agent 2 attends nothing.
    Moving cost per slot: s0 1 (agent 0's errand 1), s1 3 (agent 1's errand 2), s2 0.
    Full oracle {s0, s2}: o = (1, 0, 0). Witness M1 = s1, M2 = s2: w = (0, 3, 0), so
    agent 0's witness cost is below its oracle share (w - o = -1)."""
    return scenario(
        [[errand(1, 1), None, None], [None, errand(2, 3), None], [None, None, None]],
        [(1, (0, 1), (0, 1)), (2, (0, 1), (1, 0))],
        witness={1: 1, 2: 2},
    )


def test_adjusted_cost_clamps_a_witness_cheaper_than_the_oracle_share() -> None:
    """Hand-built outcome: M1 at slot 2 on both calendars (resolved), M2 unresolved; no
    batch moved anything, so c^real = 0. Scheduled-only oracle {M1} -> s2: (0, 0, 0),
    e = 0, excess 0. One missed meeting for agents 0 and 1 (M = 2):
    C^adj_0 = (0 + 1 * max(0, 0 - 1)) / 2 = 0 (unclamped: -0.5),
    C^adj_1 = (0 + 1 * max(0, 3 - 0)) / 2 = 1.5, C^adj_2 = None (M = 0).
    Game mean over seats with a value: (0 + 1.5) / 2 = 0.75."""
    sc = _adj_game()
    start = sc.to_calendars()
    m1 = MeetingItem(1, 1, (0, 1))
    final = tuple(
        Calendar(cal.owner, (*cal.slots[:2], m1)) if cal.owner in (0, 1) else cal
        for cal in start
    )
    report = evaluate(sc, [], GameOutcome(final, {1: True, 2: False}))
    rows = report.rows
    assert sc.oracle is not None and sc.oracle.per_agent_cost == (1, 0, 0)
    assert [r["scheduled"] for r in rows] == [1, 1, 0]
    assert [r["cost_oracle"] for r in rows] == [0, 0, 0]
    assert [r["excess"] for r in rows] == [0, 0, 0]
    assert [r["adj_cost"] for r in rows] == [0.0, 1.5, None]
    assert report.game["adj_cost_mean"] == 0.75

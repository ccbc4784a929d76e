"""CalBench metrics (the CalBench paper, section 4.2, Tables 1-2) and the Table 2 summary, on
hand-computed games."""

from __future__ import annotations

from typing import Any

import pytest
from test_calbench_engine_support import Scripted, errand, run_players, scenario

from confide.core.published import summary_beside
from confide.envs.calbench import SPEC
from confide.envs.calbench import events as cal
from confide.envs.calbench.actions import (
    BatchObservation,
    CalendarObservation,
    Envelope,
    RescheduleCall,
    ScheduleCall,
)
from confide.envs.calbench.engine import GameOutcome
from confide.envs.calbench.metrics import (
    metric_scale,
    paid_costs,
    scaled_calendars,
    scheduled_meetings,
)
from confide.envs.calbench.outputs.table2 import summarize
from confide.envs.calbench.scenario import PublishedReference, Scenario
from confide.envs.calbench.world import Calendar, MeetingItem


def _partial_game() -> Scenario:
    """Slot costs for a meeting of agents 0 and 1: s0 1 (a0 E1), s1 1 (a1 E3), s2 2 (a0 E2),
    s3 3 (a1 E4). Full oracle {M1, M2} -> {0, 1}: (1, 1). Witness M1=2, M2=3: (2, 3)."""
    return scenario(
        [[errand(1), None, errand(2, 2), None], [None, errand(3), None, errand(4, 3)]],
        [(1, (0, 1), (0, 1)), (2, (0, 1), (0, 1))],
        witness={1: 2, 2: 3},
    )


def _seat(m1: list[RescheduleCall | ScheduleCall], m2_slot: int) -> Scripted:
    def script(obs: CalendarObservation) -> Envelope:
        if not isinstance(obs, BatchObservation):
            return Envelope()
        if obs.meeting.meeting_id == 1:
            return Envelope(actions=list(m1))
        return Envelope(actions=[ScheduleCall(meeting_id=2, slot=m2_slot)])

    return Scripted(script)


def test_partial_game_uses_the_scheduled_only_oracle() -> None:
    """M1 lands at slot 1 (agent 1 moves E3, cost 1); M2 fails (slots 3 vs 0).
    Scheduled-only oracle for {M1}: a tie, slot 0 costs agent 0 one errand and slot 1
    costs agent 1 one, so the optimum divides as (1, 0) or (0, 1) and every per-agent
    metric is the mean over the two (attribution.py). Paid (0, 1):
    under (1, 0): e = (-1, 1), mean 0, fairness (1, 1), excess (0, 1);
    under (0, 1): e = (0, 0), fairness (0, 0), excess (0, 0);
    means: c_oracle (0.5, 0.5), e (-0.5, 0.5), excess (0, 0.5), fairness (0.5, 0.5).
    Full oracle {M1, M2} at {0, 1}: (1, 1) only (slots 2 and 3 cost 2 and 3); witness
    (2, 3): max(0, w - o) = (1, 2). C_adj = (excess + 1 miss * (1, 2)) / 2 = (0.5, 1.25).
    (The lexicographically smallest optimum alone, M1 = 0, would give fairness (1, 1).)"""
    players = {
        0: _seat([ScheduleCall(meeting_id=1, slot=1)], 3),
        1: _seat(
            [
                RescheduleCall(item_id=3, from_slot=1, to_slot=2, justification="room"),
                ScheduleCall(meeting_id=1, slot=1),
            ],
            0,
        ),
    }
    outcome, report, _ = run_players(_partial_game(), players)
    assert outcome.resolved == {1: True, 2: False}
    rows = report.rows
    assert [r["scheduled"] for r in rows] == [1, 1]
    assert [r["success"] for r in rows] == [0.5, 0.5]
    assert [r["cost_real"] for r in rows] == [0, 1]
    assert [r["cost_oracle"] for r in rows] == [0.5, 0.5]
    assert [r["signed_excess"] for r in rows] == [-0.5, 0.5]
    assert [r["excess"] for r in rows] == [0, 0.5]
    assert [r["fairness"] for r in rows] == [0.5, 0.5]
    assert [r["adj_cost"] for r in rows] == [0.5, 1.25]
    assert [r["messages_per_meeting"] for r in rows] == [0.0, 0.0]
    game = report.game
    assert game["success"] == 0.5
    assert game["meetings_scheduled"] == 1 and game["meetings_resolved"] == 1
    assert game["cost_optimal"] == 2 and game["cost_oracle_scheduled"] == 1
    assert game["cost_real"] == 1 and game["cost_vs_optimal"] == 0.5
    assert game["excess_mean"] == 0.25 and game["fairness_mean"] == 0.5
    assert game["oracle_divisions"] == 2


def test_tied_optimum_metrics_do_not_depend_on_slot_order() -> None:
    """The same game with the slots mirrored (slot k -> 3 - k): the lexicographically
    smallest optimum moves from one agent's errand to the other's, but every metric is
    the same because it averages over both divisions."""
    mirrored = scenario(
        [[None, errand(2, 2), None, errand(1)], [errand(4, 3), None, errand(3), None]],
        [(1, (0, 1), (0, 1)), (2, (0, 1), (0, 1))],
        witness={1: 1, 2: 0},
    )
    players = {
        0: _seat([ScheduleCall(meeting_id=1, slot=2)], 0),
        1: _seat(
            [
                RescheduleCall(item_id=3, from_slot=2, to_slot=1, justification="room"),
                ScheduleCall(meeting_id=1, slot=2),
            ],
            3,
        ),
    }
    _, report, _ = run_players(mirrored, players)
    rows = report.rows
    assert [r["cost_oracle"] for r in rows] == [0.5, 0.5]
    assert [r["excess"] for r in rows] == [0, 0.5]
    assert [r["fairness"] for r in rows] == [0.5, 0.5]
    assert [r["adj_cost"] for r in rows] == [0.5, 1.25]


def test_a_resolved_meeting_broken_later_does_not_count() -> None:
    sc = scenario([[None, None], [None, None]], [(1, (0, 1), (0, 1))])
    item = MeetingItem(1, 1, (0, 1))
    broken = GameOutcome((Calendar(0, (item, None)), Calendar(1, (None, item))), {1: True})
    kept = GameOutcome((Calendar(0, (item, None)), Calendar(1, (item, None))), {1: True})
    assert scheduled_meetings(sc, broken) == set()
    assert scheduled_meetings(sc, kept) == {1}


def test_fixture_costs_are_measured_on_the_1_2_3_scale() -> None:
    sc = scenario(
        [[errand(1, 1000), None, errand(2, 100)], [None, errand(3, 1), None]],
        [(1, (0, 1), (0, 1))],
    ).model_copy(update={"published": PublishedReference(source="fixture.jsonl:1")})
    scale = metric_scale(sc)
    assert scale == {1: 1, 100: 2, 1000: 3}
    costs = [[None if s is None else s.cost for s in c.slots] for c in scaled_calendars(sc, scale)]
    assert costs == [[3, None, 2], [None, 1, None]]
    event = cal.BatchApplied(seat="agent0", data=cal.BatchAppliedData(
        phase="DECISION", actions=[], cost=1000, display_cost=1000, calendar="",
        moves=[cal.Move(kind="errand", item_id=1, from_slot=0, to_slot=1, cost=1000)],
    ))
    assert paid_costs([event], 2, scale) == [3, 0]
    assert metric_scale(sc.model_copy(update={"published": None})) is None


def _row(method: str, setting: str, episode: str, **values: Any) -> dict[str, Any]:
    base = {
        "status": "ok",
        "participant": method,
        "cost_setting": setting,
        "condition": "dm",
        "episode_id": episode,
        "success": 1.0,
        "excess": 0,
        "messages_per_meeting": 2.0,
        "fairness": 0.0,
    }
    return {**base, **values}


def test_summary_is_the_table2_analogue() -> None:
    rows: list[dict[str, Any]] = [
        _row("imap", "varied", "e1", excess=1, fairness=0.5),
        _row("imap", "varied", "e1", excess=0, fairness=0.5, messages_per_meeting=1.0),
        _row("imap", "uniform", "e2", scheduled=2),
        _row("sdmap", "uniform", "e3", success=0.5, excess=3),
        _row("sdmap", "uniform", "e3", success=None),  # attends no meeting: not in Coord.
        {"status": "error", "episode_id": "e4", "error": "boom"},
    ]
    table = summarize(rows)
    assert table == [
        {
            "Setting": "Uniform",
            "Method": "imap",
            "Condition": "dm",
            "N": 1,
            "Seats": 1,
            "Meetings": 2.0,
            "Coord.": 100.0,
            "Excess": 0.0,
            "Msgs.": 2.0,
            "Fair.": 0.0,
        },
        {
            "Setting": "Uniform",
            "Method": "sdmap",
            "Condition": "dm",
            "N": 1,
            "Seats": 2,
            "Meetings": None,
            "Coord.": 50.0,
            "Excess": 1.5,
            "Msgs.": 2.0,
            "Fair.": 0.0,
        },
        {
            "Setting": "Varied",
            "Method": "imap",
            "Condition": "dm",
            "N": 1,
            "Seats": 2,
            "Meetings": None,
            "Coord.": 100.0,
            "Excess": 0.5,
            "Msgs.": 1.5,
            "Fair.": 0.5,
        },
    ]
    assert all("VPS" not in row for row in table)


def test_summary_reads_csv_strings_and_shows_vps_only_when_present() -> None:
    rows = [
        {k: ("" if v is None else str(v)) for k, v in _row("imap", "uniform", "e1").items()},
        _row("imap", "uniform", "e2", excess_vps=3.0),
    ]
    (entry,) = summarize(rows)
    assert entry["N"] == 2 and entry["Coord."] == 100.0 and entry["VPS"] == 3.0


def test_summary_has_only_measured_rows_and_prints_the_papers_beside_them() -> None:
    """The CalBench paper, Table 2 is published data: never a row of summary.csv, printed under
    the matching dm reference row with a `source` column."""
    rows = [
        _row("sdmap", "varied", "e1"),
        _row("sdmap", "varied", "e2", condition="all-agent-groupchat"),
        _row("openai/gpt-5-mini", "varied", "e3"),
    ]
    table = summarize(rows)
    assert [(r["Method"], r["Condition"]) for r in table] == [
        ("openai/gpt-5-mini", "dm"),
        ("sdmap", "dm"),
        ("sdmap", "all-agent-groupchat"),
    ]
    assert all("paper" not in str(v) for r in table for v in r.values())
    shown = summary_beside(SPEC, table)
    assert [(r["source"], r["Method"], r["Condition"]) for r in shown] == [
        ("run", "openai/gpt-5-mini", "dm"),
        ("run", "sdmap", "dm"),
        ("published", "sdmap", "dm"),
        ("run", "sdmap", "all-agent-groupchat"),
    ]
    paper = shown[2]
    assert (paper["table"], paper["Setting"], paper["N"]) == ("Table 2", "Varied", 45.0)
    cells = [paper[c] for c in ("Coord.", "Excess", "Msgs.", "Fair.")]
    assert cells == [63.1, 3.64, 7.30, 1.376]
    assert "VPS" not in paper  # the run's row has no VPS column, so neither does the paper's


@pytest.mark.parametrize("bad", [{"max_turns": 3}, {"decision_retries": "many"}])
def test_bad_options_name_the_option(bad: dict[str, object]) -> None:
    from confide.core.options import OptionsError, parse_options
    from confide.envs.calbench.options import EnvOptions

    with pytest.raises(OptionsError, match=f"calbench option {next(iter(bad))}="):
        parse_options(EnvOptions, bad, "calbench")

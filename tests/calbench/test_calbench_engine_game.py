"""The CalBench round engine (the CalBench paper §A.3-A.5) with scripted seats: sweeps and
activation, channels per condition, retries with the exact conflict, resolution (valid
batches stand), batch phases without inbox, observation contents and the Table 5 events."""

from __future__ import annotations

import pytest
from test_calbench_engine_support import (
    Scripted,
    env_events,
    errand,
    messages,
    run_players,
    scenario,
)

from confide.core.trace import TraceRecorder
from confide.envs.calbench.actions import (
    AllAgentGroupchatCall,
    BatchObservation,
    CalendarObservation,
    CheapTalkObservation,
    DmCall,
    Envelope,
    ParticipantGroupchatCall,
    RescheduleCall,
    ScheduleCall,
    agent_of,
    seat_of,
)
from confide.envs.calbench.engine import GameConfig
from confide.envs.calbench.scenario import Scenario
from confide.errors import ConfideError


def _three_agents() -> Scenario:
    """M1 = agents 0 and 1 (speaker order 1, 0); agent 2 never attends."""
    return scenario(
        [[None, errand(1), None, None], [errand(2), None, None, None], [None, None, None, None]],
        [(1, (0, 1), (1, 0))],
    )


Talk = DmCall | ParticipantGroupchatCall | AllAgentGroupchatCall | ScheduleCall


def _schedule_at(slot: int, first_turn: list[Talk] | None = None) -> Scripted:
    """A seat that sends `first_turn` on its first cheap-talk turn, then schedules M1 at
    `slot` (moving agent 1's errand out of slot 0 when needed)."""

    def script(obs: CalendarObservation) -> Envelope:
        if isinstance(obs, CheapTalkObservation):
            return Envelope(actions=list(first_turn or []) if obs.round_start else [])
        if obs.phase == "voluntary":
            return Envelope()
        actions: list[ScheduleCall | RescheduleCall] = []
        here = obs.calendar.slots[slot]
        if here.kind == "errand" and here.item_id is not None:
            actions.append(
                RescheduleCall(
                    item_id=here.item_id, from_slot=slot, to_slot=3, justification="room for M1"
                )
            )
        actions.append(ScheduleCall(meeting_id=1, slot=slot))
        return Envelope(actions=actions)

    return Scripted(script)


def _turns(trace: TraceRecorder) -> list[tuple[str | None, int]]:
    return [(e.seat, e.data.turn) for e in env_events(trace, "turn_start")]


def test_dm_activates_a_non_participant_in_the_same_sweep() -> None:
    bystander = Scripted(lambda obs: Envelope())
    players = {
        0: _schedule_at(2),
        1: _schedule_at(2, [DmCall(to=2, content="can you help?")]),
        2: bystander,
    }
    outcome, report, trace = run_players(_three_agents(), players)
    # speaker order is (1, 0); agent 2 speaks right after, in sweep 0, then every sweep
    assert _turns(trace) == [
        ("agent1", 0),
        ("agent0", 0),
        ("agent2", 0),
        ("agent1", 1),
        ("agent0", 1),
        ("agent2", 1),
    ]
    phases = [type(o).__name__ + ":" + getattr(o, "phase", "") for o in bystander.seen]
    assert phases == [
        "CheapTalkObservation:cheap_talk",
        "CheapTalkObservation:cheap_talk",
        "BatchObservation:voluntary",
    ]
    first = bystander.seen[0]
    assert isinstance(first, CheapTalkObservation)
    assert first.round_start and not first.is_participant
    assert [m.text for m in first.new_messages] == ["can you help?"]
    assert bystander.seen[1].new_messages == ()  # drained once
    assert outcome.resolved == {1: True}
    assert report.rows[1]["messages"] == 1


def test_without_contact_a_non_participant_never_observes() -> None:
    bystander = Scripted(lambda obs: Envelope())
    players = {0: _schedule_at(2), 1: _schedule_at(2), 2: bystander}
    outcome, _, trace = run_players(_three_agents(), players)
    assert bystander.seen == []
    assert _turns(trace) == [("agent1", 0), ("agent0", 0)]  # one silent sweep ends the phase
    assert outcome.resolved == {1: True}


@pytest.mark.parametrize(
    ("condition", "tool", "reaches_bystander", "valid"),
    [
        ("dm", DmCall(to=0, content="x"), False, True),
        ("dm", ParticipantGroupchatCall(content="x"), False, False),
        ("participant-groupchat", ParticipantGroupchatCall(content="x"), False, True),
        ("participant-groupchat", DmCall(to=0, content="x"), False, False),
        ("all-agent-groupchat", AllAgentGroupchatCall(content="x"), True, True),
        ("all-agent-groupchat", DmCall(to=0, content="x"), False, False),
    ],
)
def test_each_condition_opens_exactly_one_channel(
    condition: str, tool: Talk, reaches_bystander: bool, valid: bool
) -> None:
    bystander = Scripted(lambda obs: Envelope())
    players = {0: _schedule_at(2), 1: _schedule_at(2, [tool]), 2: bystander}
    _, _, trace = run_players(_three_agents(), players, GameConfig(condition=condition))
    sent = messages(trace)
    assert len(sent) == (1 if valid else 0)
    assert bool(bystander.seen) == reaches_bystander
    invalid = env_events(trace, "invalid_tool_call")
    assert len(invalid) == (0 if valid else 1)
    if not valid:
        assert f"is not open in the {condition} condition" in invalid[0].data.reason
    if valid:
        assert set(sent[0].recipients) == (
            {"agent0", "agent2"} if reaches_bystander else {"agent0"}
        )


def test_invalid_cheap_talk_calls_are_recorded_and_dropped() -> None:
    tools: list[Talk] = [
        ScheduleCall(meeting_id=1, slot=0),
        DmCall(to=1, content="me"),
        DmCall(to=7, content="nobody"),
        DmCall(to=0),
    ]
    players = {0: _schedule_at(2), 1: _schedule_at(2, tools), 2: Scripted(lambda o: Envelope())}
    _, _, trace = run_players(_three_agents(), players)
    reasons = [e.data.reason for e in env_events(trace, "invalid_tool_call")]
    assert reasons == [
        "schedule is only allowed in the VOLUNTARY and DECISION phases",
        "dm recipient 1 is not another agent id in [0, 3)",
        "dm recipient 7 is not another agent id in [0, 3)",
        "message has neither content nor payload",
    ]
    assert messages(trace) == []


def test_rejected_batch_gets_the_exact_conflict_and_a_retry() -> None:
    def script(obs: CalendarObservation) -> Envelope:
        if not isinstance(obs, BatchObservation):
            return Envelope()
        if obs.attempt == 1:  # slot 0 holds errand #2, nothing moves it away
            return Envelope(actions=[ScheduleCall(meeting_id=1, slot=0)])
        return Envelope(
            actions=[
                RescheduleCall(item_id=2, from_slot=0, to_slot=3, justification="room"),
                ScheduleCall(meeting_id=1, slot=0),
            ]
        )

    retrying = Scripted(script)
    players = {0: _schedule_at(0), 1: retrying, 2: Scripted(lambda o: Envelope())}
    outcome, report, trace = run_players(_three_agents(), players)
    batches = [o for o in retrying.seen if isinstance(o, BatchObservation)]
    assert [(o.attempt, o.max_attempts, o.conflicts) for o in batches] == [
        (1, 4, ()),
        (
            2,
            4,
            (
                "Action 1 (schedule): slot 0 is occupied by errand #2 and no action in the "
                "batch moves it away",
            ),
        ),
    ]
    rejected = env_events(trace, "batch_rejected")
    assert [(e.seat, e.data.attempt) for e in rejected] == [("agent1", 1)]
    assert outcome.resolved == {1: True}
    assert report.rows[1]["cost_real"] == 1


def test_a_failed_meeting_keeps_the_valid_batches_and_their_costs() -> None:
    """Section 3 / A.5. Agent 1 says "1?" and then never submits a
    valid batch; agent 0 moves its errand E1 (cost 1) from slot 1 to slot 3 and schedules
    M1 at slot 1. By hand: agent 0's batch stands (its calendar becomes [-, M1, -, E1], it
    paid 1), agent 1's calendar is untouched, M1 is unresolved with one consistency
    violation (slots {1: None, 0: 1}); nothing is scheduled, so the scheduled-only oracle
    is 0 for everyone: signed excess (1, 0, 0), mean 1/3, fairness (2/3, 1/3, 1/3); agent 1
    sent the one message (1 per max(0, 1) scheduled meetings)."""
    players = {
        0: _schedule_at(1),
        1: Scripted(
            lambda o: Envelope(actions=[DmCall(to=0, content="1?")])
            if isinstance(o, CheapTalkObservation) and o.round_start
            else Envelope()
        ),
        2: Scripted(lambda o: Envelope()),
    }
    sc = _three_agents()
    outcome, report, trace = run_players(sc, players, GameConfig(decision_retries=1))
    assert [e.data.attempt for e in env_events(trace, "batch_rejected")] == [1, 2]
    assert env_events(trace, "batch_failed")[0].seat == "agent1"
    assert env_events(trace, "batch_rolled_back") == []
    applied = env_events(trace, "batch_applied")
    assert [(e.seat, e.data.phase, e.data.cost) for e in applied] == [
        ("agent0", "DECISION", 1)
    ]
    assert [m.model_dump() for m in applied[0].data.moves] == [
        {"kind": "errand", "item_id": 1, "from_slot": 1, "to_slot": 3, "cost": 1}
    ]
    assert outcome.resolved == {1: False}
    first, second, third = outcome.calendars
    assert first.slot_of_meeting(1) == 1 and first.slots[3] is not None
    assert first.slots[3].cost == 1 and first.slots[0] is None and first.slots[2] is None
    assert second == sc.to_calendars()[1] and third == sc.to_calendars()[2]
    violation = env_events(trace, "consistency_violation")
    assert [(e.data.meeting_id, e.data.slots) for e in violation] == [
        (1, {"1": None, "0": 1})
    ]
    resolution = env_events(trace, "resolution")[0].data
    assert resolution.reason == "no valid batch from agent(s) [1]"
    assert resolution.consistency_violations == [1]
    assert [m.text for m in messages(trace)] == ["1?"]
    rows = report.rows
    assert [r["cost_real"] for r in rows] == [1, 0, 0]
    assert [r["cost_oracle"] for r in rows] == [0, 0, 0]
    assert [r["excess"] for r in rows] == [1, 0, 0]
    assert [r["fairness"] for r in rows] == pytest.approx([2 / 3, 1 / 3, 1 / 3])
    assert [r["success"] for r in rows] == [0.0, 0.0, None]
    assert [r["messages_per_meeting"] for r in rows] == [0.0, 1.0, 0.0]
    assert report.game["consistency_violations"] == 1


def test_different_slots_fail_resolution_and_both_batches_stand() -> None:
    """Both batches are valid and free of cost (slot 2 is free for agent 0, slot 3 for
    agent 1), so both stand: M1 sits at 2 on agent 0's calendar and at 3 on agent 1's."""
    players = {0: _schedule_at(2), 1: _schedule_at(3), 2: Scripted(lambda o: Envelope())}
    sc = _three_agents()
    outcome, report, trace = run_players(sc, players)
    assert env_events(trace, "resolution")[0].data.reason == (
        "participants chose different slots {1: 3, 0: 2}"
    )
    assert outcome.resolved == {1: False}
    assert [cal.slot_of_meeting(1) for cal in outcome.calendars] == [2, 3, None]
    assert [r["cost_real"] for r in report.rows] == [0, 0, 0]


def test_batch_phases_carry_no_inbox() -> None:
    """A.3: the DECISION message is the meeting and a calendar snapshot.
    With a one-sweep budget, agent 0 (second speaker) answers agent 1's "2?" with "ok 2"
    in sweep 0; the budget ends, so agent 1 has not drained "ok 2". Its DECISION
    observation carries no messages, and "ok 2" reaches it at its first turn of round 2
    (M2 = agents 1 and 2, speaker order 1, 2)."""
    sc = scenario(
        [[None, None, None, None], [None, None, None, None], [None, None, None, None]],
        [(1, (0, 1), (1, 0)), (2, (1, 2), (1, 2))],
    )

    def talker(reply: dict[int, str]) -> Scripted:
        def script(obs: CalendarObservation) -> Envelope:
            if isinstance(obs, CheapTalkObservation):
                said = reply.get(obs.round) if obs.round_start else None
                to = next(a for a in obs.meeting.participants if a != obs.agent)
                return Envelope(actions=[DmCall(to=to, content=said)] if said else [])
            if obs.phase == "voluntary":
                return Envelope()
            slot = 2 if obs.meeting.meeting_id == 1 else 3
            return Envelope(actions=[ScheduleCall(meeting_id=obs.meeting.meeting_id, slot=slot)])

        return Scripted(script)

    first, second = talker({0: "ok 2"}), talker({0: "2?"})
    outcome, _, _ = run_players(
        sc, {0: first, 1: second, 2: talker({})}, GameConfig(max_turns_per_round=1)
    )
    assert outcome.resolved == {1: True, 2: True}
    batches = [o for o in second.seen if isinstance(o, BatchObservation)]
    assert [(o.round, o.phase) for o in batches] == [(0, "decision"), (1, "decision")]
    assert all(o.new_messages == () for o in batches)
    talks = [o for o in second.seen if isinstance(o, CheapTalkObservation)]
    assert [(o.round, [m.text for m in o.new_messages]) for o in talks] == [
        (0, []),
        (1, ["ok 2"]),
    ]
    seen_by_first = [m.text for o in first.seen for m in o.new_messages]
    assert seen_by_first == ["2?"]


def test_observations_hold_only_the_seats_own_calendar() -> None:
    seen: dict[int, Scripted] = {a: _schedule_at(2) for a in range(2)}
    players = {**seen, 2: Scripted(lambda o: Envelope())}
    sc = _three_agents()
    run_players(sc, players)
    for agent, seat in seen.items():
        for obs in seat.seen:
            assert obs.agent == agent and obs.seat == seat_of(agent)
            assert obs.calendar.owner == agent
            rendered = sc.render_calendar(agent)
            if obs.round == 0 and isinstance(obs, CheapTalkObservation):
                assert obs.calendar.text == rendered
            assert obs.channels == ("dm",)


def test_turn_budget_stops_an_endless_exchange() -> None:
    def chatty(obs: CalendarObservation) -> Envelope:
        if isinstance(obs, CheapTalkObservation):
            other = 1 - obs.agent
            return Envelope(actions=[DmCall(to=other, content=f"t{obs.turn}")])
        return Envelope(actions=[ScheduleCall(meeting_id=1, slot=2)])

    players = {0: Scripted(chatty), 1: Scripted(chatty), 2: Scripted(lambda o: Envelope())}
    _, _, trace = run_players(_three_agents(), players, GameConfig(max_turns_per_round=4))
    assert env_events(trace, "resolution")[0].data.turns == 4
    assert len(messages(trace)) == 8
    assert {e.data.max_turns_per_round for e in env_events(trace, "game_start")} == {4}


def test_table5_events_and_their_visibility() -> None:
    players = {
        0: _schedule_at(2),
        1: _schedule_at(2, [DmCall(to=0, content="2?")]),
        2: Scripted(lambda o: Envelope()),
    }
    _, _, trace = run_players(_three_agents(), players)
    names = {e.name for e in env_events(trace)}
    for name in (
        "game_start",
        "agent_registered",
        "round_start",
        "turn_start",
        "turn_end",
        "decide_start",
        "decide_end",
        "batch_applied",
        "resolution",
    ):
        assert name in names
    for event in env_events(trace):
        if event.name in ("game_start", "resolution", "consistency_violation"):
            assert event.visible_to is None
        elif event.name == "round_start":
            assert event.visible_to == ["agent1", "agent0"]
        else:
            assert event.seat is not None and event.visible_to == [event.seat]
            assert agent_of(event.seat) in (0, 1, 2)
    # Table 5's dm_sent is the core message event: sender, recipients, round and turn
    (message,) = messages(trace)
    assert (message.sender, message.recipients, message.round, message.turn) == (
        "agent1",
        ("agent0",),
        0,
        0,
    )
    assert message.visible_to("agent0") and not message.visible_to("agent2")


def test_config_errors_name_the_setting() -> None:
    with pytest.raises(ConfideError, match="unknown condition 'email'"):
        GameConfig(condition="email")
    with pytest.raises(ConfideError, match="max_turns_per_round must be >= 1 or null, got 0"):
        GameConfig(max_turns_per_round=0)
    with pytest.raises(ConfideError, match="decision_retries must be >= 0, got -1"):
        GameConfig(decision_retries=-1)


def test_an_llm_style_envelope_parses_and_round_trips() -> None:
    """The A.2 response format an LLM seat returns parses into typed tool calls; unknown
    tool types are rejected by name."""
    text = (
        '{"thinking": "slot 3 is free for me", "actions": ['
        '{"type": "dm", "to": 1, "content": "can we meet at 3?"},'
        '{"type": "reschedule", "item_id": 4, "from_slot": 3, "to_slot": 5,'
        ' "justification": "free slot 3 for M1"},'
        '{"type": "schedule", "meeting_id": 1, "slot": 3}]}'
    )
    envelope = Envelope.model_validate_json(text)
    assert [type(t).__name__ for t in envelope.actions] == [
        "DmCall",
        "RescheduleCall",
        "ScheduleCall",
    ]
    assert Envelope.model_validate_json(envelope.model_dump_json()) == envelope
    with pytest.raises(ValueError, match="'email'"):
        Envelope.model_validate_json('{"actions": [{"type": "email", "to": 1}]}')

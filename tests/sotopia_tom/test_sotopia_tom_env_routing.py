"""Sotopia-ToM environment: routing, visibility, leaving, invalid recipients, stopping
rules (sections 5.1, 5.3, A.8), and the conformance checker."""

from __future__ import annotations

import asyncio
from collections.abc import Mapping, Sequence

import pytest

from confide.core.options import OptionsError, parse_options
from confide.core.trace import EnvEvent, TraceRecorder
from confide.envs.sotopia_tom import SPEC
from confide.envs.sotopia_tom.actions import InfoAction, InfoObservation
from confide.envs.sotopia_tom.dataset import load_scenario_by_id
from confide.envs.sotopia_tom.env import (
    Conversation,
    converse,
    private_markers,
)
from confide.envs.sotopia_tom.options import EnvOptions
from confide.envs.sotopia_tom.scenario import Scenario
from confide.registry import get_benchmark
from confide.testing import check_env

SCENARIO = load_scenario_by_id("core", "finance-sme-loan")
NADIA, BEN, FIONA = SCENARIO.agent_names


def speak(text: str, *to: str) -> InfoAction:
    return InfoAction(action_type="speak", to=to, text=text)


class Scripted:
    """Plays a fixed list of actions (then `none`), keeping every observation it got."""

    def __init__(self, name: str, actions: Sequence[InfoAction]) -> None:
        self.name = name
        self.actions = list(actions)
        self.seen: list[InfoObservation] = []

    async def act(self, observation: InfoObservation) -> InfoAction:
        self.seen.append(observation)
        return self.actions.pop(0) if self.actions else InfoAction.none()


def play(
    scripts: Mapping[str, Sequence[InfoAction]],
    scenario: Scenario = SCENARIO,
    **options: int | str | bool,
) -> tuple[Conversation, dict[str, Scripted], TraceRecorder]:
    agents = {n: Scripted(n, scripts.get(n, [])) for n in scenario.agent_names}
    trace = TraceRecorder()
    options_model = EnvOptions.model_validate(options)
    conversation = asyncio.run(converse(scenario, agents, trace, options_model))
    return conversation, agents, trace


def texts(observation: InfoObservation) -> list[str]:
    return [m.text or "" for m in observation.history]


def test_a_direct_message_is_seen_only_by_sender_and_recipients() -> None:
    conversation, agents, _ = play({NADIA: [speak("psst", BEN)]})
    [message] = conversation.messages
    assert message.channel.kind == "dm" and message.recipients == (BEN,)
    assert "psst" in texts(agents[BEN].seen[0])  # Ben acts after Nadia in round 1
    assert all("psst" not in texts(o) for o in agents[FIONA].seen)
    assert "psst" in texts(agents[NADIA].seen[1])  # the sender sees its own message


def test_a_public_message_reaches_everyone_present() -> None:
    conversation, agents, _ = play({BEN: [speak("hello all")]})
    [message] = conversation.messages
    assert message.channel.kind == "broadcast"
    assert set(message.recipients) == {NADIA, FIONA}
    assert "hello all" in texts(agents[FIONA].seen[0])
    assert "hello all" in texts(agents[NADIA].seen[1])


def test_messages_are_ided_by_round_and_seat_and_new_ones_are_marked() -> None:
    conversation, agents, _ = play({NADIA: [speak("a")], FIONA: [speak("b")]})
    assert [(m.round, m.turn) for m in conversation.messages] == [(1, 1), (1, 3)]
    second = agents[NADIA].seen[1]
    assert [m.text for m in second.new_messages] == ["b"]  # own "a" was already known
    assert second.round == 2 and second.first_new == 1


def refusals(trace: TraceRecorder) -> list[EnvEvent]:
    return [e for e in trace.events if isinstance(e, EnvEvent) and e.name == "invalid_recipients"]


def test_an_invalid_recipient_is_refused_and_recorded_without_a_retry() -> None:
    conversation, agents, trace = play(
        {NADIA: [speak("hi", "Benjamin"), speak("hi", BEN)], BEN: [speak("hello")]}
    )
    assert [(m.text, m.round) for m in conversation.messages] == [("hello", 1), ("hi", 2)]
    assert agents[NADIA].seen[0].feedback is None and agents[NADIA].seen[1].round == 2
    [refused] = refusals(trace)
    assert refused.data.attempt == 1 and refused.visible_to == [NADIA]
    assert "'Benjamin' is not a participant" in refused.data.problem
    assert conversation.refused[NADIA] == 1


def test_the_reask_option_gives_one_clear_retry() -> None:
    conversation, agents, trace = play(
        {NADIA: [speak("hi", "Benjamin"), speak("hi", BEN)]}, reask_invalid_recipients=True
    )
    [message] = conversation.messages
    assert message.recipients == (BEN,) and message.round == 1
    retry = agents[NADIA].seen[1]
    assert retry.round == 1 and retry.feedback is not None
    assert "'Benjamin' is not a participant" in retry.feedback and BEN in retry.feedback
    # the refusal wording CalBench uses too (confide.core.refusal)
    assert retry.feedback.startswith("Your message was refused: ")
    assert [e.data.attempt for e in refusals(trace)] == [1]


def test_with_reask_a_second_invalid_recipient_counts_as_none() -> None:
    conversation, agents, _ = play(
        {NADIA: [speak("x", NADIA), speak("y", "Nobody")]}, reask_invalid_recipients=True
    )
    assert conversation.messages == []
    assert "yourself" in (agents[NADIA].seen[1].feedback or "")
    assert conversation.refused[NADIA] == 2
    # turn 1: two refused tries (quiet), turns 2 and 3 quiet: the episode ends after round 1
    assert (conversation.end_reason, conversation.turns, len(agents[NADIA].seen)) == (
        "stale",
        3,
        2,
    )


def test_messaging_someone_who_left_is_refused() -> None:
    leave = InfoAction(action_type="leave")
    _, _, trace = play({NADIA: [leave], BEN: [speak("still there?", NADIA)]}, leave_ends="all")
    [refused] = refusals(trace)
    assert "has left the conversation" in refused.data.problem


def test_names_match_exactly() -> None:
    conversation, _, trace = play({NADIA: [speak("hi", "  dr. ben ADEYEMI ")]})
    assert conversation.messages == [] and len(refusals(trace)) == 1
    conversation, _, _ = play({NADIA: [speak("hi", BEN)]})
    assert conversation.messages[0].recipients == (BEN,)


def test_a_dm_never_reaches_a_name_equal_after_case_folding() -> None:
    """Two agents "Ben" and "BEN" (validation rejects such a scenario; the router must
    still never confuse them): each DM reaches exactly the named one."""
    agents = list(SCENARIO.agents)
    agents[2] = agents[2].model_copy(update={"name": BEN.upper()})
    twins = SCENARIO.model_copy(update={"agents": tuple(agents)})
    conversation, _, _ = play(
        {NADIA: [speak("to ben", BEN), speak("to BEN", BEN.upper())]}, twins
    )
    assert [(m.text, m.recipients) for m in conversation.messages] == [
        ("to ben", (BEN,)),
        ("to BEN", (BEN.upper(),)),
    ]


def test_three_quiet_turns_end_the_episode() -> None:
    # turns: 1 Nadia none, 2 Ben "one", 3 Fiona none, 4 Nadia none, 5 Ben none -> stop
    conversation, _, _ = play({BEN: [speak("one"), InfoAction.none(), speak("three")]})
    assert (conversation.end_reason, conversation.turns, conversation.rounds) == ("stale", 5, 2)
    assert [m.text for m in conversation.messages] == ["one"]
    empty = InfoAction(action_type="speak", text="   ")  # a speak act without content is quiet
    conversation, _, _ = play({BEN: [empty, empty, empty]})
    assert (conversation.end_reason, conversation.turns, conversation.rounds) == ("stale", 3, 1)


def test_a_quiet_streak_broken_by_speech_starts_again() -> None:
    # 1 N none, 2 B none, 3 F "x", 4 N none, 5 B none, 6 F "y", 7 N, 8 B, 9 F quiet -> stop at 9
    conversation, _, _ = play({FIONA: [speak("x"), speak("y")]})
    assert (conversation.end_reason, conversation.turns, conversation.rounds) == ("stale", 9, 3)


def test_the_first_leave_ends_the_episode() -> None:
    leave = InfoAction(action_type="leave")
    conversation, agents, _ = play({FIONA: [leave], NADIA: [speak("a"), speak("b")]})
    assert (conversation.end_reason, conversation.turns, conversation.rounds) == ("left", 3, 1)
    assert conversation.left == {FIONA: 1}
    assert [m.text for m in conversation.messages] == ["a"]
    assert len(agents[NADIA].seen) == 1


def test_with_leave_ends_all_the_others_go_on_without_the_leaver() -> None:
    leave = InfoAction(action_type="leave")
    conversation, agents, trace = play(
        {FIONA: [leave], NADIA: [speak("before"), speak("after she left")]}, leave_ends="all"
    )
    # 1 N speaks, 2 B none, 3 F leaves (quiet), 4 N speaks, 5 B, 6 N, 7 B quiet -> stop at 7
    assert (conversation.end_reason, conversation.turns, conversation.rounds) == ("stale", 7, 3)
    assert conversation.left == {FIONA: 1}
    assert len(agents[FIONA].seen) == 1  # never asked again
    before, after = conversation.messages
    assert set(before.recipients) == {BEN, FIONA} and after.recipients == (BEN,)
    assert [e.seat for e in trace.events if isinstance(e, EnvEvent) and e.name == "left"] == [FIONA]
    assert FIONA not in agents[NADIA].seen[-1].present
    everyone = {n: [leave] for n in SCENARIO.agent_names}
    conversation, _, _ = play(everyone, leave_ends="all")
    assert (conversation.end_reason, conversation.turns) == ("left", 3)


def test_t_max_counts_turns_and_can_end_mid_round() -> None:
    chatty = {n: [speak(f"{n[0]}{i}") for i in range(10)] for n in SCENARIO.agent_names}
    conversation, agents, _ = play(chatty, max_turns=4)
    assert (conversation.end_reason, conversation.turns, conversation.rounds) == (
        "max_turns",
        4,
        2,
    )
    assert len(conversation.messages) == 4
    assert [o.turn for o in agents[NADIA].seen] == [1, 4]
    assert all(o.limits.max_turns == 4 for o in agents[BEN].seen)


def test_options_are_validated_with_clear_errors() -> None:
    defaults = parse_options(EnvOptions, {}, "sotopia-tom")
    assert (defaults.max_turns, defaults.stale_turns, defaults.leave_ends) == (60, 3, "any")
    assert defaults.repair_attempts == 1 and defaults.reask_invalid_recipients is False
    with pytest.raises(OptionsError, match=r"max_round=5: unknown option.*options: max_turns"):
        parse_options(EnvOptions, {"max_round": 5}, "sotopia-tom")
    with pytest.raises(OptionsError, match="max_turns=1"):
        parse_options(EnvOptions, {"max_turns": 1}, "sotopia-tom")
    with pytest.raises(OptionsError, match="leave_ends='some'"):
        parse_options(EnvOptions, {"leave_ends": "some"}, "sotopia-tom")
    # every bad option at once, one line each
    with pytest.raises(OptionsError) as caught:
        parse_options(EnvOptions, {"max_round": 5, "max_turns": 1}, "sotopia-tom")
    assert len(caught.value.problems) == 2


def test_observations_hold_only_the_agents_own_private_values() -> None:
    _, agents, _ = play({})
    markers = private_markers(SCENARIO)
    for name, agent in agents.items():
        dumped = agent.seen[0].model_dump_json()
        for owner, values in markers.items():
            for value in values:
                assert (value in dumped) == (owner == name)


def test_registered_and_conformant_with_both_reference_lineups() -> None:
    assert get_benchmark("sotopia-tom") is SPEC
    task = SPEC.load_tasks(None, None)[0]
    capture = check_env(SPEC, task, seed=3)
    assert capture.observations and capture.result is not None
    check_env(SPEC, task, "leaky,reference,reference,reference", seed=3)

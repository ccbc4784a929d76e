"""Sotopia-ToM environment: routing, visibility, leaving, invalid recipients, stopping
rules (sections 5.1, 5.3, A.8), and the conformance checker."""

from __future__ import annotations

import asyncio
from collections.abc import Mapping, Sequence

import pytest

from confide.core.trace import EnvEvent, TraceRecorder
from confide.envs.sotopia_tom import SPEC
from confide.envs.sotopia_tom.actions import InfoAction, InfoObservation
from confide.envs.sotopia_tom.dataset import load_scenario_by_id
from confide.envs.sotopia_tom.env import (
    Conversation,
    EnvOptions,
    EnvOptionsError,
    converse,
    parse_options,
    private_markers,
)
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
    **options: int,
) -> tuple[Conversation, dict[str, Scripted], TraceRecorder]:
    agents = {n: Scripted(n, scripts.get(n, [])) for n in scenario.agent_names}
    trace = TraceRecorder()
    conversation = asyncio.run(converse(scenario, agents, trace, EnvOptions(**options)))
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


def test_an_agent_that_left_receives_nothing_and_is_skipped() -> None:
    leave = InfoAction(action_type="leave")
    conversation, agents, trace = play(
        {FIONA: [leave], NADIA: [InfoAction.none(), speak("after she left")]}
    )
    assert conversation.left == {FIONA: 1}
    assert len(agents[FIONA].seen) == 1  # never asked again
    [message] = conversation.messages
    assert message.recipients == (BEN,)
    assert [e.seat for e in trace.events if isinstance(e, EnvEvent) and e.name == "left"] == [FIONA]
    later = agents[NADIA].seen[-1]
    assert FIONA not in later.present


def test_invalid_recipient_gets_one_clear_retry() -> None:
    conversation, agents, trace = play({NADIA: [speak("hi", "Benjamin"), speak("hi", BEN)]})
    [message] = conversation.messages
    assert message.recipients == (BEN,)
    retry = agents[NADIA].seen[1]
    assert retry.round == 1 and retry.feedback is not None
    assert "'Benjamin' is not a participant" in retry.feedback and BEN in retry.feedback
    refused = [
        e for e in trace.events if isinstance(e, EnvEvent) and e.name == "invalid_recipients"
    ]
    assert [e.data["attempt"] for e in refused] == [1]
    assert refused[0].visible_to == [NADIA]
    assert conversation.refused[NADIA] == 1


def test_a_second_invalid_recipient_counts_as_none() -> None:
    conversation, agents, _ = play({NADIA: [speak("x", NADIA), speak("y", "Nobody")]})
    assert conversation.messages == []
    assert "yourself" in (agents[NADIA].seen[1].feedback or "")
    assert conversation.refused[NADIA] == 2
    assert len(agents[NADIA].seen) == 2 + 2  # two tries in round 1, then rounds 2-3


def test_messaging_someone_who_left_is_refused() -> None:
    leave = InfoAction(action_type="leave")
    _, agents, _ = play({NADIA: [leave], BEN: [speak("still there?", NADIA)]})
    assert "has left the conversation" in (agents[BEN].seen[1].feedback or "")


@pytest.mark.parametrize("near_miss", ["  dr. ben ADEYEMI ", "upper", "padded"])
def test_names_match_exactly(near_miss: str) -> None:
    wrong = {"upper": BEN.upper(), "padded": f" {BEN} "}.get(near_miss, near_miss)
    conversation, agents, _ = play({NADIA: [speak("hi", wrong), speak("hi", BEN)]})
    assert f"{wrong!r} is not a participant" in (agents[NADIA].seen[1].feedback or "")
    assert [m.recipients for m in conversation.messages] == [(BEN,)]


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
        ("to ben", (BEN,)), ("to BEN", (BEN.upper(),))]


def test_three_silent_rounds_end_the_episode() -> None:
    conversation, _, _ = play({BEN: [speak("one"), InfoAction.none(), speak("three")]})
    assert conversation.end_reason == "stale"
    assert conversation.rounds == 6  # rounds 4, 5, 6 silent
    empty = InfoAction(action_type="speak", text="   ")
    conversation, _, _ = play({BEN: [empty, empty, empty]})
    assert (conversation.end_reason, conversation.rounds) == ("stale", 3)


def test_everyone_leaving_ends_the_episode() -> None:
    leave = InfoAction(action_type="leave")
    conversation, _, _ = play({n: [leave] for n in SCENARIO.agent_names})
    assert (conversation.end_reason, conversation.rounds) == ("all_left", 1)


def test_t_max_ends_the_episode() -> None:
    chatty = {BEN: [speak(f"m{i}") for i in range(10)]}
    conversation, _, _ = play(chatty, max_rounds=4)
    assert (conversation.end_reason, conversation.rounds) == ("max_rounds", 4)
    assert len(conversation.messages) == 4


def test_options_are_validated_with_clear_errors() -> None:
    assert parse_options({}).max_rounds == 60 and parse_options({}).stale_rounds == 3
    with pytest.raises(EnvOptionsError, match=r"max_round=5.*options: max_rounds"):
        parse_options({"max_round": 5})
    with pytest.raises(EnvOptionsError, match="max_rounds=1"):
        parse_options({"max_rounds": 1})


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

"""No-leak: no desk observes the customer dialogue or another desk's exchanges; the agent
sees desk-internal tool results only through replies; conformance with model roles."""

import pytest
from _incognita_env_support import CONDITIONS, MOCK, MOCK_ROLES, run, spec, task

from confide.envs.incognita.actions import (
    AgentObservation,
    CustomerObservation,
    DeskObservation,
)
from confide.envs.incognita.conditions import AGENT, CUSTOMER
from confide.runner.models import RunModels
from confide.testing import check_env

LINEUPS = [("reference", {}), (MOCK, MOCK_ROLES)]


@pytest.mark.parametrize("condition", CONDITIONS)
@pytest.mark.parametrize(("lineup", "roles"), LINEUPS, ids=["reference", "mock"])
def test_each_party_observes_only_its_own_exchanges(
    condition: str, lineup: str, roles: dict[str, str]
) -> None:
    card = task("sd-16-moving-house")  # engages all six desks
    episode = run(card, condition, lineup, roles=roles, observe=True)
    desks = set(episode.env("episode_setup")[0].data.desk_roles)
    customer_values = [f.value for f in card.card.customer_fields]
    for name, observations in episode.observations.items():
        for observation in observations:
            if isinstance(observation, DeskObservation):
                assert name in desks
                for item in observation.history:
                    if item.message is not None:
                        assert {item.message.sender, *item.message.recipients} == {name, AGENT}
                    else:
                        assert item.tool is not None and item.tool.proposer == name
                text = observation.model_dump_json()
                assert not any(value in text for value in customer_values)
                assert card.card.opening_line not in text
            elif isinstance(observation, CustomerObservation):
                for message in observation.history:
                    assert {message.sender, *message.recipients} == {CUSTOMER, AGENT}
            else:
                assert isinstance(observation, AgentObservation) and name == AGENT
                for item in observation.history:
                    if item.tool is not None:
                        assert condition == "direct" and item.tool.proposer == AGENT
    executed = episode.env("tool_executed")
    assert executed, "nothing was executed"
    for event in [*executed, *episode.env("tool_proposed"), *episode.env("tool_accepted")]:
        assert event.visible_to == [event.data.proposer]
    for event in [*episode.env("gate_request"), *episode.env("gate_release")]:
        assert event.visible_to == [CUSTOMER]
    if condition != "direct":
        assert {e.data.proposer for e in executed} <= desks


@pytest.mark.parametrize("condition", CONDITIONS)
def test_conformance_with_model_driven_parties(condition: str) -> None:
    capture = check_env(spec(), task("sd-13-longer-knife-gift-card"), MOCK, seed=3,
                        condition=condition, model_factory=RunModels(), roles=MOCK_ROLES)
    assert capture.result is not None and capture.result.rows[0]["ended"] == "final"

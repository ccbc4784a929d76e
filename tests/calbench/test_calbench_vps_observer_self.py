"""VPS integrity: a reflection or judge answer about the observer
itself is rejected, never counted as leakage of the observer's own calendar (the CalBench paper
F.3 and I.2 ask an observer only about the *other* agents)."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import pytest
from pydantic import ValidationError
from test_calbench_reflect_support import play, task

from confide.envs.calbench import judge
from confide.envs.calbench.privacy import reflection
from confide.envs.calbench.privacy.deltas import ModelVps, answer_event, delta_schema
from confide.envs.calbench.privacy.questions import targets_of
from confide.envs.calbench.privacy.vps import VpsError

Reader = Callable[..., ModelVps]
MEASUREMENTS = [(reflection.EVENT, reflection.reflection_vps), (judge.EVENT, judge.judge_vps)]


EXTRA: dict[Any, dict[str, Any]] = {
    reflection.EVENT: {"context": "transcript"},
    judge.EVENT: {"judge": "mock/judge", "message_ids": []},
}


def _with_answer(name: Any, observer: int, deltas: dict[int, list[int]]) -> Sequence[Any]:
    """A played 3-agent, 4-slot game plus one round-0 answer of `observer`."""
    answer = answer_event(name, 0, observer, deltas, attempts=1, error=None,
                          prompt_version="test", **EXTRA[name])
    return [*play(task()).events, answer]


@pytest.mark.parametrize(("name", "read"), MEASUREMENTS)
def test_an_answer_about_the_observer_itself_is_rejected(name: str, read: Reader) -> None:
    events = _with_answer(name, 1, {0: [0, 0, 0, 0], 1: [3, 0, 0, 0], 2: [0, 0, 0, 0]})
    with pytest.raises(VpsError, match=r"observer 1: target 1 with 4 deltas"):
        read(task(), events)


@pytest.mark.parametrize(("name", "read"), MEASUREMENTS)
def test_the_same_answer_without_the_observer_counts(name: str, read: Reader) -> None:
    """Control: about agent 0 only, slot 0 +3. Agent 0's slot 0 is free at the start of
    round 0, so the delta points away from the truth: raw 1 slot, calibrated 0."""
    game = read(task(), _with_answer(name, 1, {0: [3, 0, 0, 0]}))
    (row,) = [t for t in game.targets if t.target_agent == 0]
    assert (row.raw_vps_loss_total, row.calibrated_vps_loss_total) == (1.0, 0.0)
    assert [t.raw_vps_loss_total for t in game.targets if t.target_agent != 0] == [0.0, 0.0]


def test_the_answer_schema_has_no_key_for_the_observer() -> None:
    schema = delta_schema(tuple(targets_of(3, 1)), 4)
    schema.model_validate({"agent_0": [0] * 4, "agent_2": [0] * 4})
    with pytest.raises(ValidationError, match="agent_1"):
        schema.model_validate({"agent_0": [0] * 4, "agent_1": [0] * 4, "agent_2": [0] * 4})

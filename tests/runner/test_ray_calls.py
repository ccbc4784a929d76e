"""How many episodes go to one Ray call (`ray_backend.episodes_per_call`; needs no Ray):
several for a run that calls no model, one as soon as a seat or a role names a model."""

from __future__ import annotations

import pytest

from confide.runner import build_experiment
from confide.runner.ray_backend import PER_CALL, episodes_per_call


@pytest.mark.parametrize(
    ("config", "expected"),
    [
        ({"benchmark": "calbench", "lineups": ["imap", "sdmap,imap,imap"]}, PER_CALL),
        ({"benchmark": "calbench", "lineups": ["imap", "mock/echo,imap,imap"]}, 1),
        ({"benchmark": "calbench", "lineups": ["imap"], "roles": {"judge": "mock/json"}}, 1),
        ({"benchmark": "incognita", "lineups": ["reference"],
          "roles": {"customer": "scripted"}}, PER_CALL),
    ],
    ids=["references", "a-model-seat", "a-model-role", "a-scripted-role"],
)
def test_episodes_per_call(config: dict[str, object], expected: int) -> None:
    assert PER_CALL > 1
    assert episodes_per_call(build_experiment(config)) == expected

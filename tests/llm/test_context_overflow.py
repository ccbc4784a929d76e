"""A conversation that outgrows the model's context (SmolLM2 behind a llama.cpp
server with n_ctx 8192 overflowed in an Incognita episode) is the model's limit: the seat
records invalid output and the episode ends normally, in every benchmark."""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

import pytest
from pydantic import BaseModel

from confide.llm import (
    ChatMessage,
    Completion,
    GenerateConfig,
    ModelError,
    generate_structured,
    register_mock,
    unregister_mock,
)
from confide.runner import build_experiment, run_experiment
from confide.runner.results import read_csv

OVERFLOW = "This model's maximum context length is 8192 tokens. However, you requested 8296."


class OverflowModel:
    """`mock/overflow`: every call is refused as longer than the model's context."""

    def __init__(self, **_: Any) -> None:
        self.name = "mock/overflow"
        self.calls = 0

    async def generate(
        self, messages: Sequence[ChatMessage], *, config: GenerateConfig
    ) -> Completion:
        self.calls += 1
        raise ModelError(OVERFLOW, model=self.name, kind="context_length")


class Answer(BaseModel):
    x: int


@pytest.fixture
def overflow() -> Iterator[None]:
    register_mock("overflow", OverflowModel, replace=True)
    yield
    unregister_mock("overflow")


async def test_structured_call_reports_the_overflow_as_a_failed_reply() -> None:
    model = OverflowModel()
    result = await generate_structured(
        model, [ChatMessage(role="user", content="hi")], Answer, max_attempts=3
    )
    assert not result.ok and result.attempts == [] and model.calls == 1  # no repair
    assert result.error is not None and "no longer fits the model's context" in result.error


@pytest.mark.parametrize(
    "config",
    [
        {"benchmark": "calbench", "suite": "tiny", "limit": 1, "conditions": ["dm"],
         "lineups": ["imap,mock/overflow,imap"]},
        {"benchmark": "sotopia-tom", "limit": 1, "lineups": ["mock/overflow"],
         "roles": {"judge": "mock/overflow"}},
        {"benchmark": "incognita", "limit": 1, "conditions": ["direct"],
         "lineups": ["mock/overflow"], "roles": {"customer": "mock/overflow", "judge": "literal"}},
    ],
    ids=["calbench", "sotopia-tom", "incognita"],
)
def test_an_overflowing_seat_ends_its_episode_normally(
    overflow: None, tmp_path: Path, config: dict[str, Any]
) -> None:
    summary = run_experiment(
        build_experiment({**config, "output_dir": str(tmp_path / "run")}), show_progress=False
    )
    assert summary.failed == [] and summary.finished == 1
    rows = read_csv(tmp_path / "run" / "results.csv")
    assert rows and {r["status"] for r in rows} == {"ok"}

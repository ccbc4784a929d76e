"""Each recorded call says how many provider attempts it retried, and
the run's trace event and spend columns carry it. A server error, not a rate limit: a
rate limit is waited out past `max_attempts` while the retry budget lasts."""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Sequence

from confide.core.trace import ModelCall
from confide.llm.errors import ModelError
from confide.llm.recorder import ModelCallRecord, with_recorder
from confide.llm.retry import RetryingModel, RetryPolicy
from confide.llm.types import ChatMessage, Completion, GenerateConfig
from confide.runner.models import model_call_event
from confide.runner.spend import episode_spend


class Flaky:
    """Fails transiently `failures` times per call, then answers."""

    name = "mock/flaky"

    def __init__(self, failures: int) -> None:
        self.failures, self._left = failures, failures

    async def generate(
        self, messages: Sequence[ChatMessage], *, config: GenerateConfig
    ) -> Completion:
        if self._left:
            self._left -= 1
            raise ModelError("busy", model=self.name, kind="server_error", transient=True)
        self._left = self.failures
        return Completion(model=self.name, text="ok")


async def _no_wait(_: float) -> None:
    return None


def _calls(failures: int, attempts: int) -> list[ModelCallRecord]:
    records: list[ModelCallRecord] = []
    model = with_recorder(
        RetryingModel(Flaky(failures), RetryPolicy(max_attempts=attempts), sleep=_no_wait),
        records.append,
    )

    async def go() -> None:
        for _ in range(2):
            with contextlib.suppress(ModelError):
                await model.generate([ChatMessage(role="user", content="hi")],
                                     config=GenerateConfig())

    asyncio.run(go())
    return records


def test_a_call_records_its_retries_and_the_spend_counts_them() -> None:
    records = _calls(failures=2, attempts=5)
    assert [r.retries for r in records] == [2, 2]
    events = [model_call_event(r, seat="A", purpose="act") for r in records]
    assert [e.retries for e in events] == [2, 2]
    assert episode_spend(events)["A"].retries == 4


def test_a_call_that_gives_up_records_the_retries_it_made() -> None:
    records = _calls(failures=9, attempts=3)
    assert [(r.error is not None, r.retries) for r in records] == [(True, 2), (True, 2)]


def test_zero_retries_and_no_part_leave_the_trace_line_as_before() -> None:
    event = ModelCall(model="m", messages=[])
    assert b'"retries"' not in event.__pydantic_serializer__.to_json(event)
    assert b'"part"' not in event.__pydantic_serializer__.to_json(event)
    marked = ModelCall(model="m", messages=[], part="judge", retries=1)
    line = marked.__pydantic_serializer__.to_json(marked)
    assert b'"part":"judge"' in line and b'"retries":1' in line

"""Retry classification pinned by behaviour (bench/mutation.py): which failures the retry
wrapper tries again, the class every trace records for each kind, what a given-up error
says, and the documented backoff: five attempts, waits doubling from 1 s to 60 s with
seeded jitter, rate limits waited out for ten minutes. The table is written by hand from
the module's documented classes."""

from __future__ import annotations

import asyncio
import random
from collections.abc import Sequence

import pytest
from pydantic import ValidationError

from confide.llm.errors import ModelCrashError, ModelError
from confide.llm.retry import RetryingModel, RetryPolicy
from confide.llm.types import ChatMessage, Completion, GenerateConfig

CLASSES = {
    "timeout": "transient",
    "connection": "transient",
    "rate_limit": "transient",
    "server_error": "transient",
    "bad_response": "transient",
    "bad_request": "validation",
    "context_length": "validation",
    "capability": "capability",
    "auth": "permanent",
    "config": "permanent",
    "missing_extra": "permanent",
    "replay_miss": "permanent",
    "script_exhausted": "permanent",
    "crash": "permanent",
}


@pytest.mark.parametrize(("kind", "expected"), sorted(CLASSES.items()))
def test_each_kind_has_its_class_and_only_transient_ones_are_retried(
    kind: str, expected: str
) -> None:
    error = ModelError("boom", model="m", kind=kind)  # type: ignore[arg-type]
    assert error.error_class == expected
    assert error.transient is (expected == "transient")


def test_an_explicit_transient_flag_overrides_the_kind() -> None:
    # a provider that knows better (a 500 that always recurs, a reset it can retry)
    sticky = ModelError("x", model="m", kind="server_error", transient=False)
    assert not sticky.transient and sticky.error_class == "permanent"
    retry = ModelError("x", model="m", kind="bad_request", transient=True)
    assert retry.transient and retry.error_class == "transient"
    still = ModelError("x", model="m", kind="context_length", transient=False)
    assert still.error_class == "validation"


def test_a_given_up_error_says_how_often_it_was_tried() -> None:
    error = ModelError(
        "slow down", model="openai/x", kind="rate_limit", status_code=429, retry_after_s=2.0
    )
    assert str(error) == "openai/x: slow down (transient error)"
    tried = error.with_attempts(3)
    assert str(tried) == "openai/x: slow down (transient error, gave up after 3 attempts)"
    assert str(error.with_attempts(1)) == "openai/x: slow down (transient error)"
    assert (tried.attempts, error.attempts) == (3, 1)  # the original is left as it was
    assert (tried.status_code, tried.retry_after_s, tried.kind) == (429, 2.0, "rate_limit")
    assert repr(tried) == (
        "ModelError(model='openai/x', kind='rate_limit', class=transient, status_code=429, "
        "attempts=3, message='slow down')"
    )


def test_a_crash_stays_a_crash_when_given_up() -> None:
    crash = ModelCrashError("died", model="local/x", cause="SIGKILL").with_attempts(2)
    assert isinstance(crash, ModelCrashError) and crash.cause == "SIGKILL"
    assert crash.kind == "crash" and not crash.transient and crash.error_class == "permanent"
    assert crash.args == ModelCrashError("died", model="local/x", cause="SIGKILL").args


class _Failing:
    """A provider that fails every call the same way, counting the calls."""

    def __init__(self, kind: str, retry_after_s: float | None = None) -> None:
        self.name, self.kind, self.calls = "p/m", kind, 0
        self.retry_after_s = retry_after_s

    async def generate(
        self, messages: Sequence[ChatMessage], *, config: GenerateConfig
    ) -> Completion:
        self.calls += 1
        raise ModelError(
            "no",
            model=self.name,
            kind=self.kind,  # type: ignore[arg-type]
            retry_after_s=self.retry_after_s,
        )


def _waits(
    kind: str, policy: RetryPolicy, retry_after_s: float | None = None
) -> tuple[list[float], int]:
    """The sleeps a call that always fails with `kind` makes, and the calls it made."""
    slept: list[float] = []

    async def sleep(seconds: float) -> None:
        slept.append(seconds)

    inner = _Failing(kind, retry_after_s)
    model = RetryingModel(inner, policy, sleep=sleep)  # type: ignore[arg-type]
    with pytest.raises(ModelError) as failed:
        asyncio.run(model.generate([ChatMessage(role="user", content="hi")],
                                   config=GenerateConfig()))  # fmt: skip
    assert failed.value.attempts == inner.calls
    return slept, inner.calls


def _schedule(failures: int) -> list[float]:
    """The documented waits of the default policy: min(60, 1 * 2**(k-1)) scaled by a
    factor from [0.5, 1] drawn from random.Random(0)."""
    rng = random.Random(0)
    return [min(60.0, 2.0 ** (k - 1)) * (1.0 - 0.5 * rng.random()) for k in range(1, failures + 1)]


def test_a_server_error_is_tried_five_times_with_the_documented_backoff() -> None:
    slept, calls = _waits("server_error", RetryPolicy())
    assert calls == 5 and slept == pytest.approx(_schedule(4), rel=1e-12)


def test_a_rate_limit_is_waited_out_for_up_to_ten_minutes() -> None:
    slept, calls = _waits(_read("rate_limit"), RetryPolicy())
    schedule = _schedule(40)
    expected = [d for i, d in enumerate(schedule) if sum(schedule[: i + 1]) <= 600.0]
    assert slept == pytest.approx(expected, rel=1e-12)
    assert calls == len(expected) + 1 and max(slept) <= 60.0 and max(slept) > 45.0
    assert sum(slept) <= 600.0 < sum(schedule[: len(expected) + 1])


def test_the_default_budget_is_ten_minutes_to_the_second() -> None:
    once = RetryPolicy(max_attempts=1)
    assert _waits("rate_limit", once, retry_after_s=600.0) == ([600.0], 2)
    assert _waits("rate_limit", once, retry_after_s=600.5) == ([], 1)


def test_short_waits_spend_the_budget_to_its_last_second() -> None:
    policy = RetryPolicy(max_attempts=1, base_delay_s=0.25, max_delay_s=0.25, jitter=0.0,
                         rate_limit_budget_s=1.0)  # fmt: skip
    assert _waits("rate_limit", policy) == ([0.25] * 4, 5)


def test_a_policy_without_backoff_never_waits_a_rate_limit_out() -> None:
    policy = RetryPolicy(max_attempts=2, base_delay_s=0.0, jitter=0.0)
    assert _waits("rate_limit", policy) == ([0.0], 2)


@pytest.mark.parametrize(
    "bad",
    [{"max_attempts": 0}, {"base_delay_s": -0.5}, {"max_delay_s": -0.5}, {"jitter": -0.1},
     {"jitter": 1.5}, {"rate_limit_budget_s": -1.0}],
)  # fmt: skip
def test_a_policy_that_cannot_be_followed_is_refused(bad: dict[str, float]) -> None:
    with pytest.raises(ValidationError):
        RetryPolicy(**bad)  # type: ignore[arg-type]


def _read(text: str) -> str:
    """An equal string that is not the same object (as a kind read back from a trace)."""
    copy = "".join(list(text))
    assert copy == text and copy is not text
    return copy


def test_a_policy_is_fixed_once_made_and_any_budget_down_to_zero_is_accepted() -> None:
    policy = RetryPolicy()
    with pytest.raises(ValidationError):
        policy.max_attempts = 9  # type: ignore[misc]
    assert RetryPolicy(rate_limit_budget_s=0.0).rate_limit_budget_s == 0.0
    assert RetryPolicy(rate_limit_budget_s=0.5).rate_limit_budget_s == 0.5

"""Retry classification pinned by behaviour (bench/mutation.py): which failures the retry
wrapper tries again, the class every trace records for each kind, and what a given-up
error says. The table is written by hand from the module's documented classes."""

from __future__ import annotations

import pytest

from confide.llm.errors import ModelCrashError, ModelError

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

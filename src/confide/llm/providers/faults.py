"""Injectable faults for the mock model.

A `FaultPlan` makes some calls fail the way real endpoints do: `timeout`, `rate_limit`
(a 429 carrying Retry-After), `server_error` (a 500) -- all transient `ModelError`s -- or
return a bad reply: `empty` (no text) or `malformed` (the intended reply cut in half,
what a dropped stream looks like). Faults are either scripted by call index (0-based,
counting every call the mock receives, retries included) or drawn with probability
`rate`. Drawn faults depend only on (seed, request key, how many times this exact request
was seen before), not on call order, so a concurrent run injects the same faults into
the same requests every time; and a retry of a request is a fresh draw, as with a real
flaky endpoint.
"""

from __future__ import annotations

import random
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

from confide.core.seeding import derive_seed
from confide.llm.errors import ModelError

FaultKind = Literal["timeout", "rate_limit", "server_error", "empty", "malformed"]
RAISING_FAULTS: frozenset[str] = frozenset({"timeout", "rate_limit", "server_error"})


class FaultPlan(BaseModel):
    """Which calls of a mock model misbehave, and how."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    script: dict[int, FaultKind] = Field(default_factory=dict)
    rate: float = Field(default=0.0, ge=0.0, le=1.0)
    kinds: tuple[FaultKind, ...] = Field(
        default=("timeout", "rate_limit", "server_error"), min_length=1
    )
    seed: int = 0
    retry_after_s: float = Field(default=0.0, ge=0.0)

    def fault_for(self, call_index: int, request_key: str, occurrence: int) -> FaultKind | None:
        """The fault of a call, if any (scripted first, then drawn)."""
        if call_index in self.script:
            return self.script[call_index]
        if self.rate == 0.0:
            return None
        rng = random.Random(derive_seed(self.seed, request_key, occurrence))
        if rng.random() < self.rate:
            return self.kinds[rng.randrange(len(self.kinds))]
        return None

    def error(self, kind: FaultKind, model: str) -> ModelError:
        """The exception a raising fault produces."""
        if kind == "timeout":
            return ModelError("simulated timeout", model=model, kind="timeout")
        if kind == "rate_limit":
            return ModelError(
                "simulated HTTP 429 rate limit",
                model=model,
                kind="rate_limit",
                status_code=429,
                retry_after_s=self.retry_after_s,
            )
        return ModelError(
            "simulated HTTP 500 server error", model=model, kind="server_error", status_code=500
        )


def corrupt(text: str) -> str:
    """A malformed version of a reply: its first half (a cut-off stream)."""
    return text[: len(text) // 2] if len(text) > 1 else "{"

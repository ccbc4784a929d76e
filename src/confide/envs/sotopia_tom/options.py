"""Sotopia-ToM's environment options (`--option KEY=VALUE`); the defaults are the paper's
settings (section 5.3). Validated by `confide.core.options.parse_options`."""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

from confide.envs.sotopia_tom.metrics import T_MAX


class EnvOptions(BaseModel):
    """Options of one episode; the defaults are the paper's settings (section 5.3)."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    max_turns: int = Field(default=T_MAX, ge=2, description="T_max, in agent turns.")
    stale_turns: int = Field(
        default=3, ge=1, description="Consecutive non-substantive turns that end an episode."
    )
    leave_ends: Literal["any", "all"] = Field(
        default="any", description="Whether the first leave ('any') or the last ('all') ends it."
    )
    max_tokens: int | None = Field(default=None, ge=1, description="Per agent model call.")
    repair_attempts: int = Field(
        default=1, ge=1, description="Calls per structured reply (1: no repair, as the paper)."
    )
    reask_invalid_recipients: bool = Field(
        default=False, description="Ask again once, with feedback, after bad recipients."
    )
    memory_size: int = Field(default=8, ge=1, description="Bounded memory of stateful agents.")

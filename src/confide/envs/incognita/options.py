"""Incognita's environment options (`--option KEY=VALUE`), validated by
`confide.core.options.parse_options`. Sampling settings are not options: the agent's and
the simulators' temperatures and reasoning efforts are the experiment's `sampling`
(the Incognita paper, section 5; `experiments/incognita_paper.yaml`)."""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict, Field


class EnvOptions(BaseModel):
    """Episode options (``--option KEY=VALUE``)."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    max_turns: int = Field(default=300, ge=1, description="The agent's turn budget (A.1).")
    desk_steps: int = Field(default=8, ge=1, description="Steps a desk may take per message.")
    max_attempts: int = Field(default=3, ge=1, description="Repair-loop calls per model turn.")

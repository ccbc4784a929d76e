"""CalBench's environment options (`--option KEY=VALUE`, experiment `options:`), validated
by `confide.core.options.parse_options` (ranges here too, so the preflight catches them;
`GameConfig` checks them again for direct engine use)."""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict, Field

from confide.envs.calbench.engine import DEFAULT_DECISION_RETRIES, DEFAULT_MAX_TURNS


class EnvOptions(BaseModel):
    """Environment options; unknown keys are rejected. `max_turns_per_round` and
    `decision_retries` left unset take the task's own budget when it has one
    (`env.game_limits`)."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    max_turns_per_round: int | None = Field(
        default=DEFAULT_MAX_TURNS, ge=1, json_schema_extra={"task_default": True},
        description="Cheap-talk turns per round, the turn budget (A.4).",
    )
    decision_retries: int = Field(
        default=DEFAULT_DECISION_RETRIES, ge=0, json_schema_extra={"task_default": True},
        description="Retries of a DECISION batch that did not validate (A.3, A.5).",
    )
    sd_model: dict[int, float] = Field(
        default_factory=dict,
        description="SD-MAP's difficulty per agent id, sigma; unset agents count 1 (D.2).",
    )
    reflection: bool = Field(
        default=True,
        description="Ask model seats the reflection question after every round (F.3).",
    )
    """Ask model seats the measurement-only reflection question after every round (F.3);
    off saves one call per model seat and round but leaves their VPS unmeasured."""

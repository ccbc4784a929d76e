"""The persisted leaderboard: rating configuration, per-participant ratings and raw totals,
and the runs already applied (the CalBench paper §D.4 and appendix E).

The state is one versioned JSON document. It records, per applied run, a digest of the
run's rows, so re-applying a run is a no-op and applying a *changed* run under an old id is
an error instead of a silent mismatch. Floats are stored with full precision (JSON floats
round-trip exactly), so load -> save -> load is the identity.
"""

from __future__ import annotations

import json
from enum import StrEnum
from pathlib import Path
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator

from confide import atomic
from confide.envs.calbench.rating.results import RatingInputError, SeatResult
from confide.untrusted import InputError, read_text

SCHEMA_VERSION: Literal[1] = 1


class Metric(StrEnum):
    """The three rated metrics, each with its own OpenSkill rating (D.4)."""

    COORDINATION = "coordination"
    EXCESS_COST = "excess_cost"
    EXCESS_VPS = "excess_vps"

    @property
    def higher_is_better(self) -> bool:
        """Coordination is used directly; excess cost and VPS are negated (D.4)."""
        return self is Metric.COORDINATION


PAPER_MARGINS: dict[Metric, float] = {
    Metric.COORDINATION: 0.2,
    Metric.EXCESS_COST: 10.0,
    Metric.EXCESS_VPS: 5.0,
}
"""Score-margin parameters of the CalBench paper §D.4."""


class RatingConfig(BaseModel):
    """OpenSkill Plackett-Luce parameters (openskill's defaults) plus the D.4 margins.

    `mmr_z` is the number of standard deviations subtracted in each metric's conservative
    estimate mu - z * sigma that the MMR headline averages (see `rating.standings`).
    """

    model_config = ConfigDict(frozen=True, extra="forbid")

    mu: float = 25.0
    sigma: float = Field(default=25.0 / 3.0, gt=0.0)
    beta: float = Field(default=25.0 / 6.0, gt=0.0)
    kappa: float = Field(default=0.0001, gt=0.0)
    tau: float = Field(default=25.0 / 300.0, ge=0.0)
    margins: dict[Metric, float] = Field(default_factory=lambda: dict(PAPER_MARGINS))
    mmr_z: float = Field(default=3.0, ge=0.0)

    @field_validator("margins")
    @classmethod
    def _all_metrics_positive(cls, value: dict[Metric, float]) -> dict[Metric, float]:
        missing = [m.value for m in Metric if m not in value]
        if missing:
            raise ValueError(f"margins missing for {missing}")
        bad = {m.value: v for m, v in value.items() if not v > 0.0}
        if bad:
            raise ValueError(f"margins must be > 0, got {bad}")
        return value


class MetricRating(BaseModel):
    """One metric's OpenSkill rating: mean skill and its uncertainty."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    mu: float
    sigma: float = Field(gt=0.0)


class SettingExcess(BaseModel):
    """Seats and summed Table 1 excess of one cost setting (shown, never rated)."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    seats: int = 0
    excess_sum: float = 0.0


class RawTotals(BaseModel):
    """Sums behind the raw means displayed next to ratings (D.4 "Displayed values").

    Means are over agent-game seats, like Table 1's N; coordination over seats that attend
    a meeting (`coordination_absent` counts the others), VPS over seats where it was
    measured.
    """

    model_config = ConfigDict(frozen=True, extra="forbid")

    seats: int = 0
    coordination_sum: float = 0.0
    coordination_absent: int = 0
    excess_cost_sum: float = 0.0
    vps_seats: int = 0
    excess_vps_sum: float = 0.0
    setting_excess: dict[str, SettingExcess] = Field(default_factory=dict)

    def add(self, row: SeatResult) -> RawTotals:
        """Totals with one more seat."""
        has_vps = row.excess_vps is not None
        by_setting = dict(self.setting_excess)
        if row.cost_setting is not None and row.excess is not None:
            before = by_setting.get(row.cost_setting, SettingExcess())
            by_setting[row.cost_setting] = SettingExcess(
                seats=before.seats + 1, excess_sum=before.excess_sum + row.excess
            )
        return RawTotals(
            setting_excess=by_setting,
            seats=self.seats + 1,
            coordination_sum=self.coordination_sum + (row.coordination or 0.0),
            coordination_absent=self.coordination_absent + int(row.coordination is None),
            excess_cost_sum=self.excess_cost_sum + row.excess_cost,
            vps_seats=self.vps_seats + int(has_vps),
            excess_vps_sum=self.excess_vps_sum + (row.excess_vps or 0.0),
        )

    def mean(self, metric: Metric) -> float | None:
        """Mean of `metric` per seat, or None without data."""
        if metric is Metric.EXCESS_VPS:
            return self.excess_vps_sum / self.vps_seats if self.vps_seats else None
        if metric is Metric.COORDINATION:
            attending = self.seats - self.coordination_absent
            return self.coordination_sum / attending if attending else None
        return self.excess_cost_sum / self.seats if self.seats else None

    def setting_mean(self, setting: str) -> float | None:
        """Mean Table 1 excess per seat of one cost setting, or None without data: the
        number the report's headline table shows for that setting."""
        totals = self.setting_excess.get(setting)
        return totals.excess_sum / totals.seats if totals and totals.seats else None


class ModelRecord(BaseModel):
    """A rated (model) participant: ratings per metric, raw totals, game counts."""

    model_config = ConfigDict(extra="forbid")

    ratings: dict[Metric, MetricRating]
    raw: RawTotals = Field(default_factory=RawTotals)
    games: int = 0
    rated_games: int = 0


class ReferenceRecord(BaseModel):
    """A reference protocol: raw totals only, never rated (D.4)."""

    model_config = ConfigDict(extra="forbid")

    raw: RawTotals = Field(default_factory=RawTotals)
    games: int = 0


class AppliedRun(BaseModel):
    """A run already folded into the ratings, with the digest of its rows."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    run_id: str
    digest: str
    games: int
    rows: int


class LeaderboardState(BaseModel):
    """Everything the leaderboard knows; persisted as versioned JSON."""

    model_config = ConfigDict(extra="forbid")

    schema_version: Literal[1] = SCHEMA_VERSION
    config: RatingConfig = Field(default_factory=RatingConfig)
    runs: list[AppliedRun] = Field(default_factory=list)
    models: dict[str, ModelRecord] = Field(default_factory=dict)
    references: dict[str, ReferenceRecord] = Field(default_factory=dict)


def load_state(path: Path) -> LeaderboardState:
    """Read a ratings file written by `save_state`; errors name the file and field."""
    try:
        text = read_text(path, "ratings file")
    except InputError as exc:
        raise RatingInputError(str(exc)) from None
    try:
        return LeaderboardState.model_validate_json(text)
    except ValidationError as exc:
        first = exc.errors()[0]
        field = ".".join(str(part) for part in first["loc"]) or "<document>"
        raise RatingInputError(
            f"{path}: invalid ratings file at {field!r}: {first['msg']}"
        ) from None


def save_state(state: LeaderboardState, path: Path) -> None:
    """Write the state as indented JSON, atomically (temp file + rename)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    payload = json.dumps(state.model_dump(mode="json"), indent=2, sort_keys=True)
    atomic.write_text(path, payload + "\n")

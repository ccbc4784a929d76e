"""Ordered leaderboard rows: models by MMR, reference protocols by raw metrics (the CalBench paper
D.4 "Displayed values" and appendix E).

MMR (the paper names it as the single matchmaking / headline number but gives no formula):
the mean over the three metrics of the conservative rating mu - z * sigma (z = 3 by default,
openskill's `ordinal`). Equal weights because the paper treats coordination, cost and privacy
as co-primary; the conservative form keeps a participant with few games from heading the
board on luck. A participant with no games has MMR mu0 - 3 * sigma0 = 0 under the defaults.
Ties in MMR are broken by participant name so the order is total and deterministic.

Reference protocols: coordination descending, then excess cost ascending, then excess VPS
ascending (D.4); a protocol without a VPS measurement sorts after those with one.
"""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict, Field

from confide.envs.calbench.rating.state import (
    LeaderboardState,
    Metric,
    MetricRating,
    ModelRecord,
    RatingConfig,
    RawTotals,
)


class ModelStanding(BaseModel):
    """One model's leaderboard row: MMR, per-metric rating and raw mean."""

    model_config = ConfigDict(frozen=True)

    rank: int
    participant: str
    mmr: float
    ratings: dict[Metric, MetricRating]
    means: dict[Metric, float | None]
    seats: int
    games: int
    rated_games: int
    setting_excess: dict[str, float | None] = Field(default_factory=dict)


class ReferenceStanding(BaseModel):
    """One reference protocol's row: raw means only."""

    model_config = ConfigDict(frozen=True)

    rank: int
    participant: str
    means: dict[Metric, float | None]
    seats: int
    games: int
    setting_excess: dict[str, float | None] = Field(default_factory=dict)


COST_SETTINGS: tuple[str, ...] = ("uniform", "varied")
"""The cost settings Table 1 reports separately (the CalBench paper §4.1)."""


def setting_excess(record_raw: RawTotals) -> dict[str, float | None]:
    """Table 1 excess per cost setting, as the report's headline table shows it."""
    return {setting: record_raw.setting_mean(setting) for setting in COST_SETTINGS}


def mmr(record: ModelRecord, config: RatingConfig) -> float:
    """Mean over metrics of mu - z * sigma (see module docstring)."""
    conservative = [
        record.ratings[metric].mu - config.mmr_z * record.ratings[metric].sigma for metric in Metric
    ]
    return sum(conservative) / len(conservative)


def model_standings(state: LeaderboardState) -> list[ModelStanding]:
    """Models ordered by MMR (highest first), ties by name."""
    scored = sorted(
        ((mmr(record, state.config), name, record) for name, record in state.models.items()),
        key=lambda item: (-item[0], item[1]),
    )
    return [
        ModelStanding(
            rank=position,
            participant=name,
            mmr=value,
            ratings=dict(record.ratings),
            means={metric: record.raw.mean(metric) for metric in Metric},
            seats=record.raw.seats,
            games=record.games,
            rated_games=record.rated_games,
            setting_excess=setting_excess(record.raw),
        )
        for position, (value, name, record) in enumerate(scored, start=1)
    ]


def _reference_key(
    name: str, means: dict[Metric, float | None]
) -> tuple[float, float, bool, float, str]:
    coordination = means[Metric.COORDINATION] or 0.0
    cost = means[Metric.EXCESS_COST] or 0.0
    vps = means[Metric.EXCESS_VPS]
    return (-coordination, cost, vps is None, vps if vps is not None else 0.0, name)


def reference_standings(state: LeaderboardState) -> list[ReferenceStanding]:
    """Reference protocols ordered by raw metrics (D.4), ties by name."""
    rows = [
        (name, {metric: record.raw.mean(metric) for metric in Metric}, record)
        for name, record in state.references.items()
    ]
    rows.sort(key=lambda item: _reference_key(item[0], item[1]))
    return [
        ReferenceStanding(
            rank=position,
            participant=name,
            means=means,
            seats=record.raw.seats,
            games=record.games,
            setting_excess=setting_excess(record.raw),
        )
        for position, (name, means, record) in enumerate(rows, start=1)
    ]

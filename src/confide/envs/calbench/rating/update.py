"""Fold result rows into the leaderboard with OpenSkill score-margin updates
(the CalBench paper §D.4 "Score-margin updates", appendix E).

Per game and per metric, every distinct model participant is one single-player team and the
raw per-seat score is passed to OpenSkill's Plackett-Luce `rate(teams, scores=...)`:
coordination as is, excess cost and excess VPS negated so a larger score is always better.
The model is built with the metric's margin (0.2 / 10.0 / 5.0), so OpenSkill scales the
update by log(1 + gap / margin) for score gaps above the margin. Margins are not tie
tolerances (D.4): any nonzero gap ranks the better seat first; only exactly equal scores
tie.

Decisions. The first is D.4's; the text (D.4 "Score-margin updates", "Displayed values")
decides none of the others: it passes "raw per-seat scores" to OpenSkill and rates models,
and says nothing of a model in several seats, of games with one model, or of update order.

- Reference protocols (`is_reference`) never enter the OpenSkill pool; their seats only feed
  raw totals (D.4 "Non-LLM reference protocols are shown separately").
- A model filling several seats of one game plays that game once, with the mean of its seats'
  scores: one participant cannot be two teams of one match.
- A game with fewer than two distinct model participants (for a metric: fewer than two with a
  value) has no one to compare against and produces no rating update for that metric; its
  seats still count in the raw means.
- OpenSkill updates are sequential, so ratings depend on game order. Within one call games are
  applied sorted by (run id, game id) whatever the row order; runs given in later calls are
  applied after earlier ones. Rebuilding from all runs at once gives the canonical order.
- A run is identified by its id. Re-applying an applied run with identical rows is a no-op;
  with different rows it is an error (rebuild the leaderboard instead).
"""

from __future__ import annotations

import hashlib
import json
from collections import defaultdict
from collections.abc import Iterable, Mapping, Sequence
from statistics import fmean
from typing import Any

from openskill.models import PlackettLuce

from confide.envs.calbench.rating.results import (
    DISPLAY_ONLY,
    RatingInputError,
    SeatResult,
    parse_results,
)
from confide.envs.calbench.rating.state import (
    AppliedRun,
    LeaderboardState,
    Metric,
    MetricRating,
    ModelRecord,
    RatingConfig,
    ReferenceRecord,
)


def run_digest(rows: Sequence[SeatResult]) -> str:
    """SHA-256 of a run's rated content in canonical order: identifies the run (display-only
    fields are left out, so ratings files written before they existed still match)."""
    ordered = sorted(rows, key=lambda row: (row.game_id, row.seat))
    payload = json.dumps(
        [row.model_dump(mode="json", exclude=set(DISPLAY_ONLY)) for row in ordered],
        sort_keys=True,
    )
    return hashlib.sha256(payload.encode("utf-8")).hexdigest()


def metric_value(row: SeatResult, metric: Metric) -> float | None:
    """The raw per-seat value of `metric` (None when not measured)."""
    if metric is Metric.COORDINATION:
        return row.coordination
    if metric is Metric.EXCESS_COST:
        return row.excess_cost
    return row.excess_vps


def _openskill_model(config: RatingConfig, metric: Metric) -> PlackettLuce:
    return PlackettLuce(
        mu=config.mu,
        sigma=config.sigma,
        beta=config.beta,
        kappa=config.kappa,
        tau=config.tau,
        margin=config.margins[metric],
    )


def _group_games(
    rows: Sequence[SeatResult],
) -> dict[str, dict[str, list[SeatResult]]]:
    """run id -> game id -> rows; rejects a repeated seat and a seat list split by role."""
    games: dict[str, dict[str, list[SeatResult]]] = defaultdict(lambda: defaultdict(list))
    seen: set[tuple[str, str, str]] = set()
    for row in rows:
        key = (row.run_id, row.game_id, row.seat)
        if key in seen:
            raise RatingInputError(
                f"run {row.run_id!r} game {row.game_id!r}: seat {row.seat!r} appears twice"
            )
        seen.add(key)
        games[row.run_id][row.game_id].append(row)
    return games


def _check_roles(state: LeaderboardState, rows: Iterable[SeatResult]) -> None:
    """A participant is either a model or a reference protocol, in every run."""
    roles: dict[str, bool] = {name: False for name in state.models}
    roles.update({name: True for name in state.references})
    for row in rows:
        known = roles.setdefault(row.participant, row.is_reference)
        if known != row.is_reference:
            raise RatingInputError(
                f"run {row.run_id!r} game {row.game_id!r} seat {row.seat!r}: participant "
                f"{row.participant!r} has is_reference={row.is_reference} but was "
                f"is_reference={known} elsewhere"
            )


def _new_model_record(config: RatingConfig) -> ModelRecord:
    prior = MetricRating(mu=config.mu, sigma=config.sigma)
    return ModelRecord(ratings={metric: prior for metric in Metric})


def _apply_game(state: LeaderboardState, rows: Sequence[SeatResult]) -> None:
    seats_by_participant: dict[str, list[SeatResult]] = defaultdict(list)
    for row in sorted(rows, key=lambda r: r.seat):
        seats_by_participant[row.participant].append(row)

    for name in sorted(seats_by_participant):
        seats = seats_by_participant[name]
        if seats[0].is_reference:
            reference = state.references.setdefault(name, ReferenceRecord())
            for seat in seats:
                reference.raw = reference.raw.add(seat)
            reference.games += 1
        else:
            record = state.models.setdefault(name, _new_model_record(state.config))
            for seat in seats:
                record.raw = record.raw.add(seat)
            record.games += 1

    models = sorted(
        name for name, seats in seats_by_participant.items() if not seats[0].is_reference
    )
    rated: set[str] = set()
    for metric in Metric:
        entrants: list[tuple[str, float]] = []
        for name in models:
            values = [
                v for s in seats_by_participant[name] if (v := metric_value(s, metric)) is not None
            ]
            if values:
                entrants.append((name, fmean(values)))
        if len(entrants) < 2:
            continue
        openskill = _openskill_model(state.config, metric)
        teams = []
        for name, _ in entrants:
            current = state.models[name].ratings[metric]
            teams.append([openskill.rating(mu=current.mu, sigma=current.sigma, name=name)])
        sign = 1.0 if metric.higher_is_better else -1.0
        updated = openskill.rate(teams, scores=[sign * value for _, value in entrants])
        for (name, _), team in zip(entrants, updated, strict=True):
            state.models[name].ratings[metric] = MetricRating(mu=team[0].mu, sigma=team[0].sigma)
            rated.add(name)
    for name in rated:
        state.models[name].rated_games += 1


def apply_results(
    state: LeaderboardState, rows: Iterable[SeatResult | Mapping[str, Any]]
) -> LeaderboardState:
    """A new state with every not-yet-applied run in `rows` folded in; `state` is unchanged.

    Runs are applied in run-id order and games in game-id order (see module docstring).
    """
    results = parse_results(rows)
    games = _group_games(results)
    applied = {run.run_id: run.digest for run in state.runs}
    new_state = state.model_copy(deep=True)
    for run_id in sorted(games):
        run_games = games[run_id]
        run_rows = [row for game_rows in run_games.values() for row in game_rows]
        digest = run_digest(run_rows)
        if run_id in applied:
            if applied[run_id] != digest:
                raise RatingInputError(
                    f"run {run_id!r} was already applied with different results "
                    f"(digest {applied[run_id][:12]} != {digest[:12]}); rebuild the "
                    "leaderboard from all runs instead of updating it"
                )
            continue
        _check_roles(new_state, run_rows)
        for game_id in sorted(run_games):
            _apply_game(new_state, run_games[game_id])
        new_state.runs.append(
            AppliedRun(run_id=run_id, digest=digest, games=len(run_games), rows=len(run_rows))
        )
        applied[run_id] = digest
    return new_state


def build_leaderboard(
    rows: Iterable[SeatResult | Mapping[str, Any]], config: RatingConfig | None = None
) -> LeaderboardState:
    """Ratings from scratch over all `rows` (the canonical, order-independent build)."""
    start = LeaderboardState(config=config) if config is not None else LeaderboardState()
    return apply_results(start, rows)

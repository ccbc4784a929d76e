"""OpenSkill score-margin updates (the CalBench paper §D.4): hand-checked cases, margins, reference
protocols, idempotence and order handling."""

from __future__ import annotations

import math
import random

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from openskill.models import PlackettLuce

from confide.envs.calbench.rating import (
    LeaderboardState,
    Metric,
    RatingInputError,
    apply_results,
    build_leaderboard,
)

Row = dict[str, object]


def seat(
    participant: str,
    coordination: float | None,
    excess_cost: float,
    excess_vps: float | None,
    *,
    game: str = "g1",
    run: str = "r1",
    seat_name: str | None = None,
    reference: bool = False,
) -> Row:
    return {
        "run_id": run,
        "game_id": game,
        "seat": seat_name if seat_name is not None else participant,
        "participant": participant,
        "is_reference": reference,
        "coordination": coordination,
        "excess_cost": excess_cost,
        "excess_vps": excess_vps,
    }


def test_two_fresh_players_match_hand_computed_plackett_luce() -> None:
    """Weng-Lin PL with two single-player teams of equal prior: the winner gains
    0.5 * s2 / c, the loser loses as much, both shrink to s * sqrt(1 - 0.25 s^2/c^2 * s/c),
    where s2 = sigma^2 + tau^2 and c = sqrt(2 (s2 + beta^2))."""
    state = build_leaderboard([seat("m/a", 1.0, 0.0, 0.0), seat("m/b", 0.0, 30.0, 9.0)])
    sigma, beta, tau = 25 / 3, 25 / 6, 25 / 300
    s2 = sigma**2 + tau**2
    c = math.sqrt(2 * (s2 + beta**2))
    gain = 0.5 * s2 / c
    new_sigma = math.sqrt(s2) * math.sqrt(1 - 0.25 * s2 / c**2 * math.sqrt(s2) / c)
    for metric in Metric:
        a = state.models["m/a"].ratings[metric]
        b = state.models["m/b"].ratings[metric]
        assert a.mu == pytest.approx(25 + gain, abs=1e-12)
        assert b.mu == pytest.approx(25 - gain, abs=1e-12)
        assert a.sigma == pytest.approx(new_sigma, abs=1e-12)
        assert b.sigma == pytest.approx(new_sigma, abs=1e-12)


def test_clear_winner_has_highest_mu_on_every_metric() -> None:
    rows = []
    for game in range(5):
        rows += [
            seat("m/best", 1.0, 0.0, 1.0, game=f"g{game}"),
            seat("m/mid", 0.6, 10.0, 6.0, game=f"g{game}"),
            seat("m/worst", 0.2, 100.0, 30.0, game=f"g{game}"),
        ]
    state = build_leaderboard(rows)
    for metric in Metric:
        mus = {name: record.ratings[metric].mu for name, record in state.models.items()}
        assert mus["m/best"] > mus["m/mid"] > mus["m/worst"], metric


def test_lower_cost_and_vps_win_because_they_are_negated() -> None:
    state = build_leaderboard([seat("m/a", 0.5, 1.0, 1.0), seat("m/b", 0.5, 2.0, 2.0)])
    for metric in (Metric.EXCESS_COST, Metric.EXCESS_VPS):
        assert state.models["m/a"].ratings[metric].mu > state.models["m/b"].ratings[metric].mu
    coordination = Metric.COORDINATION
    assert state.models["m/a"].ratings[coordination] == state.models["m/b"].ratings[coordination]


def _after_first_game() -> LeaderboardState:
    """m/a already ahead of m/b on coordination (so margins have an effect)."""
    return build_leaderboard([seat("m/a", 1.0, 0.0, 0.0), seat("m/b", 0.0, 0.0, 0.0)])


def _coordination_mu_gain(gap_low: float, gap_high: float) -> float:
    before = _after_first_game()
    after = apply_results(
        before,
        [seat("m/a", gap_high, 0, 0, run="r2"), seat("m/b", gap_low, 0, 0, run="r2")],
    )
    metric = Metric.COORDINATION
    return after.models["m/a"].ratings[metric].mu - before.models["m/a"].ratings[metric].mu


def test_gap_below_margin_is_a_plain_win_not_a_tie() -> None:
    """D.4: margins are not tie tolerances. A 0.1 coordination gap (< 0.2) ranks the better
    seat first with the same update as a rank-only OpenSkill call."""
    before = _after_first_game()
    a = before.models["m/a"].ratings[Metric.COORDINATION]
    b = before.models["m/b"].ratings[Metric.COORDINATION]
    model = PlackettLuce(margin=0.2)
    [[expected_a], [expected_b]] = model.rate(
        [[model.rating(mu=a.mu, sigma=a.sigma)], [model.rating(mu=b.mu, sigma=b.sigma)]],
        ranks=[1, 2],
    )
    after = apply_results(
        before, [seat("m/a", 0.5, 0, 0, run="r2"), seat("m/b", 0.4, 0, 0, run="r2")]
    )
    got = after.models["m/a"].ratings[Metric.COORDINATION]
    assert got.mu == pytest.approx(expected_a.mu, abs=1e-12)
    assert got.mu > a.mu
    assert after.models["m/b"].ratings[Metric.COORDINATION].mu == pytest.approx(
        expected_b.mu, abs=1e-12
    )


def test_decisive_gap_moves_ratings_more_than_a_narrow_one() -> None:
    narrow = _coordination_mu_gain(0.4, 0.5)
    decisive = _coordination_mu_gain(0.0, 1.0)  # gap 1.0: factor log1p(1.0 / 0.2) > 1
    assert decisive > narrow > 0


def test_margin_parameters_reach_openskill() -> None:
    """An excess-cost gap of 15 (> margin 10, factor log1p(1.5) < 1) damps the update
    relative to a gap of 5 (<= margin, factor 1), as OpenSkill's margin rule says."""
    before = _after_first_game()
    gains = []
    for cost_b in (5.0, 15.0):
        warm = apply_results(
            before, [seat("m/a", 1, 0.0, 0, run="r2"), seat("m/b", 0, 30.0, 0, run="r2")]
        )
        after = apply_results(
            warm, [seat("m/a", 1, 0.0, 0, run="r3"), seat("m/b", 0, cost_b, 0, run="r3")]
        )
        metric = Metric.EXCESS_COST
        gains.append(after.models["m/a"].ratings[metric].mu - warm.models["m/a"].ratings[metric].mu)
    assert gains[1] < gains[0]


def test_exact_tie_leaves_equal_mus_unchanged() -> None:
    state = build_leaderboard([seat("m/a", 0.5, 3.0, 2.0), seat("m/b", 0.5, 3.0, 2.0)])
    for metric in Metric:
        assert state.models["m/a"].ratings[metric].mu == pytest.approx(25.0, abs=1e-12)
        assert state.models["m/a"].ratings[metric].sigma < 25 / 3 + 0.1


def test_references_are_never_rated_and_do_not_change_model_updates() -> None:
    models_only = build_leaderboard([seat("m/a", 1.0, 0.0, 1.0), seat("m/b", 0.0, 5.0, 2.0)])
    with_refs = build_leaderboard(
        [
            seat("m/a", 1.0, 0.0, 1.0),
            seat("m/b", 0.0, 5.0, 2.0),
            seat("imap", 1.0, 0.0, 9.0, reference=True, seat_name="s3"),
            seat("imap", 0.5, 2.0, 7.0, reference=True, seat_name="s4"),
        ]
    )
    assert with_refs.models == models_only.models
    assert set(with_refs.references) == {"imap"}
    raw = with_refs.references["imap"].raw
    assert (raw.seats, raw.mean(Metric.COORDINATION), raw.mean(Metric.EXCESS_VPS)) == (2, 0.75, 8.0)
    assert with_refs.references["imap"].games == 1


def test_single_model_game_counts_raw_but_is_not_rated() -> None:
    state = build_leaderboard(
        [seat("m/a", 1.0, 0.0, 1.0), seat("sdmap", 0.0, 0.0, 0.0, reference=True)]
    )
    record = state.models["m/a"]
    assert record.games == 1 and record.rated_games == 0 and record.raw.seats == 1
    assert all(r.mu == 25.0 and r.sigma == 25 / 3 for r in record.ratings.values())


def test_model_in_several_seats_plays_once_with_its_mean_score() -> None:
    split = build_leaderboard(
        [
            seat("m/a", 1.0, 0.0, 2.0, seat_name="s0"),
            seat("m/a", 0.0, 4.0, None, seat_name="s1"),
            seat("m/b", 0.4, 1.0, 3.0, seat_name="s2"),
        ]
    )
    single = build_leaderboard([seat("m/a", 0.5, 2.0, 2.0), seat("m/b", 0.4, 1.0, 3.0)])
    assert split.models["m/a"].ratings == single.models["m/a"].ratings
    assert split.models["m/a"].raw.seats == 2 and split.models["m/a"].raw.vps_seats == 1
    assert split.models["m/a"].games == 1


def test_seat_without_meetings_sits_out_only_the_coordination_rating() -> None:
    """A seat attending no meeting has no coordination value (empty in results.csv)."""
    state = build_leaderboard([seat("m/a", None, 0.0, 1.0), seat("m/b", 1.0, 3.0, 4.0)])
    coordination = Metric.COORDINATION
    for name in ("m/a", "m/b"):
        assert state.models[name].ratings[coordination].mu == 25.0
        assert state.models[name].ratings[Metric.EXCESS_COST].mu != 25.0
        assert state.models[name].rated_games == 1
    assert state.models["m/a"].raw.mean(coordination) is None
    assert state.models["m/a"].raw.mean(Metric.EXCESS_COST) == 0.0


def test_coordination_mean_is_over_seats_that_attend_a_meeting() -> None:
    split = build_leaderboard(
        [
            seat("m/a", 0.5, 2.0, None, seat_name="s0"),
            seat("m/a", None, 4.0, None, seat_name="s1"),
            seat("m/b", 0.25, 1.0, None, seat_name="s2"),
        ]
    )
    single = build_leaderboard([seat("m/a", 0.5, 3.0, None), seat("m/b", 0.25, 1.0, None)])
    raw = split.models["m/a"].raw
    assert (raw.seats, raw.coordination_absent) == (2, 1)
    assert raw.mean(Metric.COORDINATION) == 0.5
    assert raw.mean(Metric.EXCESS_COST) == 3.0
    assert split.models["m/a"].ratings == single.models["m/a"].ratings


def test_missing_vps_sits_out_only_the_vps_rating() -> None:
    state = build_leaderboard([seat("m/a", 1.0, 0.0, None), seat("m/b", 0.0, 1.0, 4.0)])
    vps = Metric.EXCESS_VPS
    assert state.models["m/a"].ratings[vps].mu == 25.0
    assert state.models["m/b"].ratings[vps].mu == 25.0
    assert state.models["m/a"].ratings[Metric.COORDINATION].mu > 25.0
    assert state.models["m/a"].rated_games == 1


def _suite(runs: int = 3, games: int = 3) -> list[Row]:
    rng = random.Random(7)
    rows: list[Row] = []
    for run in range(runs):
        for game in range(games):
            for name in ("m/a", "m/b", "m/c", "imap"):
                rows.append(
                    seat(
                        name,
                        rng.choice([0.0, 1 / 3, 2 / 3, 1.0]),
                        rng.choice([0.0, 1.0, 10.0, 100.0]),
                        rng.uniform(0, 20),
                        game=f"g{game}",
                        run=f"r{run}",
                        reference=name == "imap",
                    )
                )
    return rows


def test_reapplying_runs_is_a_no_op() -> None:
    rows = _suite()
    state = build_leaderboard(rows)
    again = apply_results(state, rows)
    assert again == state
    assert [run.run_id for run in again.runs] == ["r0", "r1", "r2"]


def test_input_state_is_not_mutated() -> None:
    start = LeaderboardState()
    snapshot = start.model_copy(deep=True)
    apply_results(start, _suite())
    assert start == snapshot


def test_incremental_updates_in_run_order_equal_one_batch() -> None:
    rows = _suite()
    state = LeaderboardState()
    for run in ("r0", "r1", "r2"):
        state = apply_results(state, [row for row in rows if row["run_id"] == run])
    assert state == build_leaderboard(rows)


def test_changed_run_under_an_applied_id_is_an_error() -> None:
    rows = _suite(runs=1)
    state = build_leaderboard(rows)
    changed = [dict(row) for row in rows]
    changed[0]["excess_cost"] = 55.0
    with pytest.raises(RatingInputError, match="run 'r0' was already applied with different"):
        apply_results(state, changed)


def test_participant_cannot_switch_role() -> None:
    state = build_leaderboard([seat("imap", 1, 0, 0, reference=True), seat("m/a", 1, 0, 0)])
    with pytest.raises(RatingInputError, match="participant 'imap' has is_reference=False"):
        apply_results(state, [seat("imap", 1, 0, 0, run="r2"), seat("m/b", 1, 0, 0, run="r2")])


def test_repeated_seat_is_an_error() -> None:
    with pytest.raises(RatingInputError, match="game 'g1': seat 'x' appears twice"):
        build_leaderboard(
            [seat("m/a", 1, 0, 0, seat_name="x"), seat("m/b", 1, 0, 0, seat_name="x")]
        )


@settings(max_examples=15, deadline=None)
@given(st.randoms(use_true_random=False))
def test_row_order_does_not_matter(rng: random.Random) -> None:
    rows = _suite(runs=2, games=2)
    shuffled = list(rows)
    rng.shuffle(shuffled)
    assert build_leaderboard(shuffled) == build_leaderboard(rows)

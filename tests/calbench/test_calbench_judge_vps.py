"""Judge VPS on the scripted mock game (the CalBench paper I.2-I.5): one case per (round,
recipient) with delivered messages, only those messages in the prompt, raw and calibrated
judge VPS, precision against the truth and Table 17 agreement with the reflection of
test_calbench_reflect_vps.py -- every expected value derived by hand below."""

from __future__ import annotations

import asyncio
from typing import Any

import numpy as np
import pytest
from test_calbench_reflect_support import as_trace, keyed_replies, play, reply, task
from test_calbench_reflect_vps import _game as reflected_game

from confide.core.benchmark import EpisodeContext, parse_lineup
from confide.core.trace import TraceRecorder
from confide.envs.calbench.judge import (
    EVENT,
    PURPOSE,
    judge_cases,
    judge_episode,
    judge_game,
    judge_messages,
    judge_trace_vps,
    judge_vps,
)
from confide.envs.calbench.privacy import agreement
from confide.envs.calbench.privacy.reflection import reflection_vps
from confide.errors import ConfideError
from confide.llm import MockModel

Z = [0, 0, 0, 0]
# (round, observer) -> answer; truth r0: agent0 [F, O, F, O], agent1 [O, F, F, F],
# agent2 [F, F, O, F]; r1: agent1 [O, O, F, F], agent2 unchanged.
ANSWERS = {
    (0, 0): reply({1: [3, -3, -3, 0], 2: [0, 0, -3, 0]}),  # t1: 3 true; t2 slot 2 wrong
    (0, 1): reply({0: [-3, 0, -3, 0], 2: Z}),  # t0: slots 0, 2 true
    (1, 1): reply({0: Z, 2: [0, 0, 3, -3]}),  # t2: both true
    (1, 2): reply({0: Z, 1: [0, 0, -3, 0]}),  # t1: slot 2 free at round start: true
}


def _judge() -> MockModel:
    return MockModel(keyed_replies(ANSWERS), name="judge")


def _judged(rec: TraceRecorder) -> list[Any]:
    return [*rec.events, *asyncio.run(judge_game(task(), rec.events, _judge()))]


def test_cases_are_recipients_with_messages() -> None:
    rec = play(task())
    cases = judge_cases(task(), rec.events)
    assert [(r, a, [m.text for m in ms]) for r, a, ms in cases] == [
        (0, 0, ["Slot 0 works for me, I can move my errand there."]),
        (0, 1, ["I'm free at slot 0 and slot 2."]),
        (1, 1, ["Slot 2 has my errand but I can move it to slot 3."]),
        (1, 2, ["How about slot 2? I'm free there."]),
    ]
    prompt = judge_messages(task(), 2, 1, cases[3][2])
    text = "\n".join(m.content for m in prompt)
    assert "How about slot 2?" in text
    assert "I'm free at slot 0" not in text and "Slot 2 has my errand" not in text


def test_hand_computed_judge_vps() -> None:
    events = _judged(play(task()))
    judged = [e for e in events if isinstance(e, EVENT)]
    assert [(e.round, e.data.observer) for e in judged] == [(0, 0), (0, 1), (1, 1), (1, 2)]
    assert all(e.visible_to is None and e.data.judge == "mock/judge" for e in judged)
    game = judge_vps(task(), events, game_id="g1")
    by_target = {t.target_agent: t for t in game.targets}
    # t0: 2 slots true (raw 2, cal 2); t1: 3 + 1 true (4, 4); t2: 1 wrong + 2 true (3, 2)
    assert [(t.raw_vps_loss_total, t.calibrated_vps_loss_total) for t in game.targets] == [
        pytest.approx((2.0, 2.0)), pytest.approx((4.0, 4.0)), pytest.approx((3.0, 2.0)),
    ]
    assert by_target[2].precision == pytest.approx(2 / 3)
    assert [t.excess_calibrated_vps_loss_total for t in game.targets] == [0.0, 0.0, 0.0]
    assert sum(c.delta != 0 for c in game.cells) == 9


def test_post_hoc_judging_of_a_stored_trace_ignores_old_cases() -> None:
    rec = play(task())
    for event in asyncio.run(judge_game(task(), rec.events, _judge())):
        rec.emit(event)  # an earlier judge's cases stay in the trace
    game = asyncio.run(judge_trace_vps(as_trace(rec), task(), _judge()))
    assert game.game_id == "g1" and game.answers == 4
    assert sum(t.calibrated_vps_loss_total for t in game.targets) == pytest.approx(8.0)


def _ctx(roles: dict[str, str], asked: list[tuple[str, str | None, str]]) -> EpisodeContext:
    def factory(spec: str, *, seat: str | None, purpose: str, trace: Any, **_: Any) -> MockModel:
        asked.append((spec, seat, purpose))
        return _judge()

    rec = play(task())
    return EpisodeContext(episode_id="g1", task=task(), lineup=parse_lineup("imap"), seed=0,
                          trace=rec, model_factory=factory, roles=roles)


def test_judge_episode_uses_the_bound_role() -> None:
    asked: list[tuple[str, str | None, str]] = []
    ctx = _ctx({"judge": "mock/j"}, asked)
    assert asyncio.run(judge_episode(ctx, task())) == 4
    assert asked == [("mock/j", None, PURPOSE)]
    assert asyncio.run(judge_episode(_ctx({}, asked), task())) == 0
    with pytest.raises(ConfideError, match="not a model spec"):
        asyncio.run(judge_episode(_ctx({"judge": "gpt"}, asked), task()))


def _both() -> tuple[Any, Any]:
    rec = reflected_game()
    judge = judge_vps(task(), _judged(rec), game_id="g1")
    return judge, reflection_vps(task(), rec.events, game_id="g1")


def test_precision_against_reflection() -> None:
    judge, refl = _both()
    rows = agreement.precision_rows([judge], [refl])
    # judge precision per target 1, 1, 2/3; reflection 2/3, 1, 3/4
    assert [(r.target_agent, r.more_precise) for r in rows] == [
        (0, "judge"), (1, "tie"), (2, "reflection"),
    ]
    assert [r.precision_gap for r in rows] == pytest.approx([1 / 3, 0.0, -1 / 12])
    summary = agreement.precision_summary([judge], [refl], rows)
    assert (summary.judge_nonzero, summary.judge_truth_directed) == (9, 8)
    assert (summary.reflection_nonzero, summary.reflection_truth_directed) == (10, 8)
    assert summary.mean_precision_gap == pytest.approx(1 / 12)
    assert summary.mean_gap_where_judge_more_precise == pytest.approx(1 / 3)


def test_table17_cell_agreement() -> None:
    judge, refl = _both()
    cells = agreement.cell_agreement(judge.cells, refl.cells)
    stats = agreement.agreement_stats(cells)
    # 16 cells reported by both + observer 2's 8 judge-only cells (its reflection failed)
    assert stats.union_cells == 24
    assert (stats.judge_nonzero_cells, stats.reflection_nonzero_cells) == (9, 9)
    assert stats.both_nonzero == 6
    assert stats.nonzero_support_jaccard == pytest.approx(0.5)
    assert stats.judge_coverage_of_reflection_nonzero == pytest.approx(6 / 9)
    assert stats.directional_agreement_both_nonzero == pytest.approx(5 / 6)
    # signs: agreement 17/24; marginals judge (+2, -7, 0:15), reflection (+4, -5, 0:15)
    assert stats.cohen_kappa_signs_union == pytest.approx(5 / 11)
    judge_sums = [3, -3, -3, 0, 0, 0, -3, 0, -3, 0, -3, 0, 0, 0, 3, -3, *[0] * 4, 0, 0, -3, 0]
    refl_sums = [3, -3, -1, 0, 0, 0, 2, -2, -3, 3, 0, -2, 0, 0, 3, 0, *[0] * 4, 0, 0, 0, 0]
    order = [(r.observer_agent, r.target_agent, r.slot) for r in cells]
    assert order == sorted(order)
    assert [r.judge_delta_sum for r in cells] == judge_sums
    assert [r.reflection_delta_sum for r in cells] == refl_sums
    assert stats.pearson_union == pytest.approx(np.corrcoef(judge_sums, refl_sums)[0, 1])
    both = [(a, b) for a, b in zip(judge_sums, refl_sums, strict=True) if a and b]
    assert stats.pearson_both_nonzero == pytest.approx(
        np.corrcoef([a for a, _ in both], [b for _, b in both])[0, 1]
    )
    first = cells[0]
    assert (first.judge_rows, first.reflection_rows, first.reflection_delta_mean) == (1, 2, 1.5)


def test_agreement_edge_cases_are_none() -> None:
    stats = agreement.agreement_stats([])
    assert stats.union_cells == 0 and stats.nonzero_support_jaccard is None
    assert stats.cohen_kappa_signs_union is None and stats.pearson_union is None
    assert agreement.cohen_kappa([0, 0], [0, 0]) is None
    assert agreement.cohen_kappa([1, 0, -1, 0], [1, 0, -1, 0]) == 1.0

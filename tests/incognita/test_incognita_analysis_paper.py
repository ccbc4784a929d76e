"""The analyses of section 6.1 and appendices B.1-B.2 on one small case checked by hand."""

from __future__ import annotations

import math
from pathlib import Path
from typing import Any

import pytest
from scipy import stats as sps

from confide.core.tables import read_table
from confide.envs.incognita.outputs import analyses
from confide.envs.incognita.outputs.audit import scalars
from confide.envs.incognita.outputs.failures import FailureType
from confide.envs.incognita.outputs.trials import TrialRow
from confide.envs.incognita.outputs.write import write_analysis
from confide.report import build_report

# model -> condition -> success per task t0..t4 (one repetition)
SCORES = {
    "A": {"direct": [1, 1, 1, 1, 0], "indirect": [1, 1, 1, 1, 0], "social": [1, 1, 1, 1, 0]},
    "B": {"direct": [1, 1, 1, 0, 0], "indirect": [1, 1, 1, 1, 0], "social": [0, 0, 0, 0, 0]},
}
RNO = FailureType.REQUESTED_NOT_OBTAINED


def trial(model: str, condition: str, task: int, success: int) -> TrialRow:
    values: dict[str, Any] = {
        "episode_id": f"{model}-{condition}-{task}",
        "task": f"t{task}",
        "model": model,
        "condition": condition,
        "repetition": 0,
        "success": bool(success),
        "failure": None if success else FailureType.DELIVERED_INCORRECT,
        "role_identification": None,
        "holder_contacted": None,
        "information_acquisition": 1.0,
        "execution": 1.0,
        "missing_customer": 0,
        "missing_service": 0,
        "unanswerable_questions": None,
        "agent_actions": 5,
        "cost_agent": 0.1,
        "cost_total": 0.2,
        "db_pass": bool(success),
    }
    if (model, condition, task) == ("B", "direct", 3):  # a database pass the judge fails
        values.update(db_pass=True, outputs_pass=False)
    if (model, condition, task) == ("B", "social", 0):
        values.update(failure=RNO, nonreference_reads=2,
                      lenient_failure=FailureType.OBTAINED_NOT_DELIVERED, strict_failure=RNO)
    if (model, condition, task) == ("B", "social", 1):
        values.update(failure=RNO)
    return TrialRow(**values)


ROWS = [
    trial(model, condition, t, s)
    for model, by_condition in SCORES.items()
    for condition, tasks in by_condition.items()
    for t, s in enumerate(tasks)
]
T4 = float(sps.t.ppf(0.975, 4))


def by(rows: list[dict[str, Any]], **keys: Any) -> dict[str, Any]:
    return next(r for r in rows if all(r[k] == v for k, v in keys.items()))


def test_separability_and_ceiling_removal_by_hand() -> None:
    pairs, reason = analyses.separability(ROWS)
    assert reason is None
    # social gaps A - B = [1, 1, 1, 1, 0]: mean 0.8, sd sqrt(0.2), se 0.2
    social = by(pairs, condition="social", task_set="all")
    assert social["estimate"] == pytest.approx(0.8)
    assert social["lower"] == pytest.approx(0.8 - T4 * 0.2)
    assert social["separates"] is True
    # direct gaps [0, 0, 0, 1, 0]: mean 0.2, interval 0.2 +- 0.555 crosses zero
    direct = by(pairs, condition="direct", task_set="all")
    assert direct["estimate"] == pytest.approx(0.2) and direct["separates"] is False
    assert by(pairs, condition="indirect", task_set="all")["separates"] is False
    ceiling, _ = analyses.ceiling_removal(ROWS)
    # direct keeps t3 only, indirect nothing (every task all-solved or all-failed),
    # social keeps t0..t3 where the gap is always 1
    assert [(r["condition"], r["tasks_kept"], r["separated"], r["separated_kept"])
            for r in ceiling] == [("direct", 1, 0, None), ("indirect", 0, 0, None),
                                  ("social", 4, 1, 1)]
    assert by(ceiling, condition="social")["spread"] == pytest.approx(0.8)
    assert by(ceiling, condition="social")["spread_kept"] == pytest.approx(1.0)


def test_dispersion_by_hand() -> None:
    rows, _ = analyses.dispersion(ROWS)
    # two models: within-task SS = (a - b)^2 / 2; indirect has none, social 0.5 on t0..t3
    assert [r["contrast"] for r in rows[:-1]] == pytest.approx([0.5, 0.5, 0.5, 0.5, 0.0])
    test = rows[-1]
    assert test["task"] == "all" and test["contrast"] == pytest.approx(0.4)
    # |sum| = 2 only when the four 0.5s share a sign: 2 of 16 sign patterns
    assert test["p_value"] == pytest.approx(2 / 16) and test["exact"] is True


def test_concordance_and_detectable_effect_by_hand() -> None:
    rows, _ = analyses.concordance(ROWS)
    # social: every half holds a task where A beats B and none where B beats A, so the
    # halves always agree; indirect: no gap at all, so no ordering to agree on
    assert by(rows, condition="social")["agreement"] == 1.0
    assert by(rows, condition="indirect")["agreement"] == 0.0
    assert by(rows, condition="social")["splits"] == 4000
    mde, _ = analyses.detectable_effect(ROWS)
    social = by(mde, condition="social")
    sd = math.sqrt(0.2)
    assert social["gap_sd"] == pytest.approx(sd)
    nc = math.sqrt(5) * social["mde"] / sd  # the power at the MDE is 80%
    crit = sps.t.ppf(0.975, 4)
    assert sps.nct.sf(crit, 4, nc) + sps.nct.cdf(-crit, 4, nc) == pytest.approx(0.8, abs=1e-6)
    assert social["pairs_below_mde"] == int(social["mde"] > 0.8)
    assert by(mde, condition="indirect")["mde"] is None  # no spread: nothing to plug in


def test_database_only_and_both_audits_by_hand() -> None:
    contrasts, _ = analyses.database_only(ROWS)
    b_direct = by(contrasts, model="B", contrast="direct - indirect")
    assert b_direct["final"] == pytest.approx(-0.2)  # t3 failed on the judge only
    assert b_direct["database"] == pytest.approx(0.0)
    assert b_direct["decision_changed"] is False
    primary = by(contrasts, model="B", contrast="indirect - social")
    assert primary["final"] == primary["database"] == pytest.approx(0.8)
    channel, _ = analyses.assertion_channel(ROWS)
    assert [r["failed_on_assertions"] for r in channel] == [1, 0, 0]
    assert by(channel, condition="direct")["database_passes"] == 8
    reader, _ = analyses.reader_audit(ROWS)
    social = by(reader, condition="social")
    assert social["requested_not_obtained"] == 2
    assert social["with_nonreference_reads"] == 1 and social["nonreference_reads"] == 2
    assert social["lenient_changed"] == 1 and social["lenient_to_obtained_not_delivered"] == 1
    assert social["strict_changed"] == 0
    assert social["no_action"] == social["no_action_lenient"] == 2


def test_scalars_reach_into_nested_returns() -> None:
    found = set(scalars({"a": [{"b": "credit_card_1"}, 7], "c": None, "d": True}))
    assert found == {"credit_card_1", "7", "True"}


def test_files_index_and_report(tmp_path: Path) -> None:
    (tmp_path / "results.csv").write_text("episode_id\nx\n", encoding="utf-8")
    write_analysis(tmp_path, ROWS)
    index = read_table(tmp_path / "analyses.csv")
    assert [r["status"] for r in index] == ["written"] * 8
    for name in ("separability", "dispersion", "reader_audit", "assertion_channel"):
        assert (tmp_path / f"analysis_{name}.csv").exists()
    assert (tmp_path / "figures" / "analysis_b2_audits.png").exists()
    html = build_report(tmp_path).read_text(encoding="utf-8")
    assert "analysis_separability.csv" in html and "analysis dispersion" in html


def test_one_model_writes_none_and_says_why(tmp_path: Path) -> None:
    (tmp_path / "results.csv").write_text("episode_id\nx\n", encoding="utf-8")
    write_analysis(tmp_path, [r for r in ROWS if r.model == "A"])
    assert not list(tmp_path.glob("analysis_*.csv"))
    assert not list((tmp_path / "figures").glob("analysis_*.png"))
    index = read_table(tmp_path / "analyses.csv")
    assert {r["status"] for r in index} == {"not computed"}
    assert all("one model" in r["reason"] for r in index)
    assert "one model" in build_report(tmp_path).read_text(encoding="utf-8")


def test_cost_cells_say_unpriced_or_partial_never_add_zero() -> None:
    from confide.envs.incognita.outputs import tables

    def priced(r: TrialRow, cost: float | None) -> TrialRow:
        return r.model_copy(update={"cost_total": cost, "unpriced_calls": int(cost is None)})

    rows = [
        priced(r, None if r.model == "B" or (r.condition == "social" and r.task == "t0")
               else 0.2)
        for r in ROWS
    ]
    cells = {(r["model"], r["condition"]): r for r in tables.process_table(rows)}
    assert cells[("A", "direct")]["cost_total"] == pytest.approx(0.2)
    assert cells[("A", "social")]["cost_total"] == "partial"  # one trial unpriced
    assert cells[("B", "direct")]["cost_total"] == "unpriced"
    assert cells[("A", "social")]["cost_agent"] == pytest.approx(0.1)
    corpus = {r["condition"]: r for r in tables.corpus_size_table(rows)}
    assert corpus["social"]["cost_per_episode"] == "partial"
    assert corpus["direct"]["implied_cost"] == "partial"
    fully = {r["condition"]: r for r in tables.corpus_size_table(ROWS)}
    assert fully["social"]["cost_per_episode"] == pytest.approx(0.2)


def test_paired_bar_figures_plot_their_rows(monkeypatch: pytest.MonkeyPatch,
                                            tmp_path: Path) -> None:
    """Ceiling removal, concordance, MDE and the assertion-channel audit each draw one
    pair of bars per condition (`_paired_bars`): left and right of the tick, labelled,
    at the heights of their rows."""
    from matplotlib.figure import Figure

    from confide.envs.incognita.outputs import analysis_figures as draw

    drawn: list[Figure] = []
    monkeypatch.setattr(draw, "_save", lambda figure, path: drawn.append(figure) or path)

    def bars(axes: Any) -> list[tuple[str, list[tuple[float, float]]]]:
        return [(c.get_label(), [(round(p.get_x() + p.get_width() / 2, 6), p.get_height())
                                 for p in c.patches]) for c in axes.containers]

    ceiling, _ = analyses.ceiling_removal(ROWS)
    concordance, _ = analyses.concordance(ROWS)
    mde, _ = analyses.detectable_effect(ROWS)
    reader, _ = analyses.reader_audit(ROWS)
    channel, _ = analyses.assertion_channel(ROWS)
    cases = [
        (draw.ceiling_figure(ceiling, tmp_path), 0, ceiling,
         ("all tasks", "separated"), ("ceiling/floor tasks removed", "separated_kept")),
        (draw.concordance_figure(concordance, tmp_path), 0, concordance,
         ("observed", "agreement"), ("null", "null_agreement")),
        (draw.mde_figure(mde, tmp_path), 0, mde, ("MDE (80%)", "mde"),
         ("largest gap", "largest_gap")),
        (draw.audits_figure(reader, channel, tmp_path), 1, channel,
         ("database passes", "database_passes"),
         ("of which failed on assertions", "failed_on_assertions")),
    ]
    assert len(drawn) == len(cases)
    figure = Figure()
    draw._paired_bars(figure.subplots(), ["a", "b"], ("x", [1, 2]), ("y", [3, 4]))
    assert bars(figure.axes[0]) == [("x", [(-0.2, 1), (0.8, 2)]), ("y", [(0.2, 3), (1.2, 4)])]
    for figure, (_, panel, rows, left, right) in zip(drawn, cases, strict=True):
        axes = figure.axes[panel]
        assert bars(axes)[-2:] == [
            (label, [(x + shift, float(r[key] or 0)) for x, r in enumerate(rows)])
            for shift, (label, key) in ((-0.2, left), (0.2, right))
        ]
        ticks = [t.get_text() for t in axes.get_xticklabels()]
        assert ticks[-1].startswith(str(rows[-1]["condition"])) and len(ticks) == len(rows)

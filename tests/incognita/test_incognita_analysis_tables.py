"""Figures 2-3 and Tables 1-2 from trial rows (the Incognita paper §6.1-6.2, B.1, B.3)."""

from __future__ import annotations

import itertools
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from scipy import stats as sps

from confide.core.trace import EpisodeEnd, EpisodeStart, Trace
from confide.envs.incognita import events as ev
from confide.envs.incognita.outputs import tables
from confide.envs.incognita.outputs.failures import FailureType
from confide.envs.incognita.outputs.trials import (
    TRIALS_FILE,
    TrialRow,
    desk_roles,
    read_trials,
    trace_success,
    trial_row,
    write_trials,
)
from confide.envs.incognita.outputs.write import write_analysis, write_incognita_outputs
from confide.envs.incognita.reference import ReferenceDataError, load_reference
from confide.report import build_report


def row(
    model: str,
    condition: str,
    task: str,
    success: bool,
    repetition: int = 0,
    failure: FailureType | None = None,
    **extra: Any,
) -> TrialRow:
    social = condition == "social"
    values: dict[str, Any] = {
        "episode_id": f"{task}-{model}-{condition}-{repetition}",
        "task": task,
        "model": model,
        "condition": condition,
        "repetition": repetition,
        "success": success,
        "failure": None if success else (failure or FailureType.DELIVERED_INCORRECT),
        "role_identification": 0.5 if social else None,
        "holder_contacted": 1.0 if social else None,
        "information_acquisition": 1.0,
        "execution": 1.0 if success else 0.5,
        "missing_customer": 0,
        "missing_service": 0,
        "unanswerable_questions": None if condition == "direct" else 2,
        "agent_actions": 10,
        "cost_agent": 0.1,
        "cost_total": 0.3,
    }
    values.update(extra)
    return TrialRow(**values)


# Success table: model -> condition -> per task, per repetition
SCORES: dict[str, dict[str, list[list[int]]]] = {
    "strong": {
        "direct": [[1, 1], [1, 1], [1, 0], [1, 1]],
        "indirect": [[1, 1], [1, 0], [1, 0], [1, 1]],
        "social": [[1, 1], [0, 1], [1, 0], [0, 1]],
    },
    "weak": {
        "direct": [[1, 1], [1, 0], [1, 1], [0, 1]],
        "indirect": [[1, 0], [1, 1], [0, 1], [1, 0]],
        "social": [[0, 0], [0, 0], [1, 0], [0, 0]],
    },
}


def rows_from(scores: dict[str, dict[str, list[list[int]]]]) -> list[TrialRow]:
    return [
        row(model, condition, f"t{t}", bool(s), repetition=r)
        for model, by_condition in scores.items()
        for condition, tasks in by_condition.items()
        for t, reps in enumerate(tasks)
        for r, s in enumerate(reps)
    ]


ROWS = rows_from(SCORES)


def task_means(model: str, condition: str) -> np.ndarray[Any, np.dtype[np.float64]]:
    return np.array([np.mean(reps) for reps in SCORES[model][condition]])


def test_success_table_averages_repetitions_within_tasks_first() -> None:
    table = {(r["model"], r["condition"]): r for r in tables.success_table(ROWS)}
    assert table[("strong", "direct")]["success"] == pytest.approx((1 + 1 + 0.5 + 1) / 4)
    assert table[("weak", "social")]["success"] == pytest.approx(0.5 / 4)
    assert table[("weak", "social")]["n_tasks"] == 4
    assert table[("weak", "social")]["n_trials"] == 8
    assert [r["condition"] for r in tables.success_table(ROWS)][:3] == [
        "direct",
        "indirect",
        "social",
    ]


def test_neighbour_differences_match_scipy() -> None:
    rows = tables.neighbour_differences(ROWS)
    assert [(r["model"], r["contrast"]) for r in rows] == [
        ("strong", "direct - indirect"),
        ("strong", "indirect - social"),
        ("weak", "direct - indirect"),
        ("weak", "indirect - social"),
    ]
    d = task_means("weak", "indirect") - task_means("weak", "social")
    low, high = sps.t.interval(0.95, len(d) - 1, loc=d.mean(), scale=sps.sem(d))
    weak = rows[3]
    assert weak["estimate"] == pytest.approx(d.mean())
    assert (weak["lower"], weak["upper"]) == (pytest.approx(low), pytest.approx(high))
    assert weak["n_tasks"] == 4


def test_comparisons_use_only_tasks_every_cell_has() -> None:
    rows = [
        r for r in ROWS if not (r.model == "weak" and r.condition == "social" and r.task == "t0")
    ]
    weak = next(
        r
        for r in tables.neighbour_differences(rows)
        if r["contrast"] == "indirect - social" and r["model"] == "weak"
    )
    assert weak["n_tasks"] == 3
    (table2_social,) = [r for r in tables.corpus_size_table(rows) if r["condition"] == "social"]
    assert table2_social["n_tasks_observed"] == 3


def test_interaction_table_by_hand() -> None:
    """Two models: Delta_t = (I_s - S_s) - (I_w - S_w); exact sign-flip over 2^4 patterns."""
    delta = (task_means("strong", "indirect") - task_means("strong", "social")) - (
        task_means("weak", "indirect") - task_means("weak", "social")
    )
    (pair, dispersion) = tables.interaction_table(ROWS)
    assert pair["pair"] == "strong - weak"
    assert pair["mean_delta"] == pytest.approx(delta.mean())
    observed = abs(delta.mean())
    patterns = list(itertools.product([1, -1], repeat=len(delta)))
    extreme = sum(abs(np.mean(np.array(s) * delta)) >= observed - 1e-12 for s in patterns)
    assert pair["p_exact"] == pytest.approx(extreme / len(patterns))
    assert pair["p_holm"] == pytest.approx(pair["p_exact"])  # one pair: no adjustment
    assert pair["exact"] and pair["n_tasks"] == 4
    assert dispersion["pair"] == "dispersion (all models)" and dispersion["lower"] is None


def test_interaction_table_needs_two_models() -> None:
    assert tables.interaction_table([r for r in ROWS if r.model == "strong"]) == []


def test_outcome_and_process_tables() -> None:
    rows = [
        row("m", "social", "t0", True),
        row("m", "social", "t1", False, failure=FailureType.NEVER_REQUESTED),
        row(
            "m",
            "social",
            "t1",
            False,
            repetition=1,
            failure=FailureType.REQUESTED_NOT_OBTAINED,
            missing_service=2,
        ),
        row("m", "direct", "t0", False, failure=FailureType.OBTAINED_NOT_DELIVERED),
    ]
    outcomes = {r["condition"]: r for r in tables.outcome_table(rows)}
    assert outcomes["social"]["success"] == 1
    assert outcomes["social"]["never_requested"] == 1
    assert outcomes["social"]["requested_but_not_obtained"] == 1
    assert outcomes["social"]["no_action"] == 2 and outcomes["social"]["n_trials"] == 3
    assert outcomes["social"]["rno_service_only"] == 1
    assert outcomes["social"]["rno_customer_only"] == outcomes["social"]["rno_both"] == 0
    assert outcomes["direct"]["obtained_but_not_delivered"] == 1
    processes = {r["condition"]: r for r in tables.process_table(rows)}
    assert processes["direct"]["role_identification"] is None
    assert processes["direct"]["unanswerable_questions"] is None
    assert processes["direct"]["execution_name"] == "execution"
    assert processes["social"]["role_identification"] == 0.5
    # execution: t0 -> 1.0, t1 -> mean(0.5, 0.5); tasks averaged
    assert processes["social"]["execution"] == pytest.approx(0.75)
    assert processes["social"]["execution_name"] == "assignment"


def test_corpus_size_table_matches_the_stats_library() -> None:
    from confide.stats import corpus_size_extrapolation

    social = next(r for r in tables.corpus_size_table(ROWS) if r["condition"] == "social")
    scores = np.stack([task_means("strong", "social"), task_means("weak", "social")])
    expected = corpus_size_extrapolation(
        scores, ["strong", "weak"], repetitions=2, cost_per_episode=0.3
    )
    assert expected.tasks is not None
    assert social["tasks"] == expected.tasks
    assert social["gap_sd"] == pytest.approx(expected.gap_sd)
    assert social["largest_pair"] == "strong - weak"
    assert social["implied_cost"] == pytest.approx(expected.tasks * 2 * 2 * 0.3)


def test_analysis_files_and_report(tmp_path: Path) -> None:
    (tmp_path / "results.csv").write_text("episode_id\nx\n", encoding="utf-8")
    written = write_analysis(tmp_path, ROWS)
    names = {p.name for p in written}
    assert {
        "figure2_success.csv",
        "figure2_paired_differences.csv",
        "figure3_outcomes.csv",
        "figure3_processes.csv",
        "table1_interactions.csv",
        "table2_corpus_size.csv",
        "figure2_success.png",
        "figure3_outcomes_processes.png",
        "table1_interactions.png",
        "table2_corpus_size.png",
        "analyses.csv",
    } <= names
    for path in written:
        if path.suffix == ".png":
            assert path.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    html = build_report(tmp_path).read_text(encoding="utf-8")
    assert "table1_interactions.csv" in html and "data:image/png;base64" in html


def test_single_model_run_draws_no_placeholder_tables(tmp_path: Path) -> None:
    written = write_analysis(tmp_path, [r for r in ROWS if r.model == "weak"])
    assert not (tmp_path / "table1_interactions.csv").exists()
    assert not (tmp_path / "figures" / "table1_interactions.png").exists()
    assert {p.name for p in written if p.suffix == ".png"} == {
        "figure2_success.png", "figure3_outcomes_processes.png", "figure6_cost.png"}
    assert not list(tmp_path.glob("analysis_*.csv"))


def test_trials_csv_round_trip(tmp_path: Path) -> None:
    path = write_trials(tmp_path / TRIALS_FILE, ROWS)
    assert read_trials(path) == ROWS
    text = path.read_text(encoding="utf-8").replace(",direct,", ",direct,notanint,", 1)
    path.write_text(text, encoding="utf-8")
    with pytest.raises(ReferenceDataError, match=rf"{TRIALS_FILE}:2: field repetition"):
        read_trials(path)


# ----- from a trace ------------------------------------------------------------------------


def _trace(condition: str, *, success: bool, events: list[Any]) -> Trace:
    header = EpisodeStart(
        episode_id="ep1",
        benchmark="incognita",
        scenario_id="sd-01-cancel-blanket",
        seed=1,
        lineup=["mock/weak"],
        condition=condition,
        config={"repetition": 2},
    )
    footer = EpisodeEnd(metrics={"success": success}, rows=[{"seat": "AGENT", "success": success}])
    return Trace(path="ep1.jsonl", header=header, events=events, footer=footer)


def test_trial_row_from_a_trace(tmp_path: Path) -> None:
    roles = {
        "Auden": "pending_orders",
        "Bryn": "account",
        "Corin": "catalogue",
        "Dara": "order_records",
        "Emrys": "identity_lookup",
        "Faye": "returns_exchanges",
    }
    cancel = {"order_id": "#W4979192", "reason": "no longer needed"}
    events = [
        # only the fields the readers use (model_construct: the rest is not needed here)
        ev.EpisodeSetup(data=ev.EpisodeSetupData.model_construct(desk_roles=roles)),
        ev.GateRelease(data=ev.GateReleaseData.model_construct(field="order_id")),
        ev.GateRelease(data=ev.GateReleaseData.model_construct(field="reason")),
        ev.ToolProposed(data=ev.ToolCallData.model_construct(
            proposer="Auden", tool="cancel_pending_order")),
        ev.ToolExecuted(data=ev.ToolExecutedData.model_construct(
            proposer="Auden", tool="cancel_pending_order", arguments=cancel, ok=True,
            kind="write")),
    ]
    trace = _trace("social", success=True, events=events)
    assert desk_roles(trace) == roles and trace_success(trace)
    result = trial_row(trace, load_reference())
    assert (result.task, result.model, result.condition, result.repetition) == (
        "sd-01-cancel-blanket",
        "mock/weak",
        "social",
        2,
    )
    assert result.success and result.failure is None
    assert result.role_identification == 1.0 and result.execution == 1.0
    assert result.holder_contacted == 0.0  # no message was delivered to Auden
    failed = trial_row(_trace("direct", success=False, events=events[1:3]), load_reference())
    assert failed.failure is FailureType.OBTAINED_NOT_DELIVERED
    assert failed.role_identification is None
    # an episode that crashed is not analysed; with no trial left only the trials file is written
    crashed = trace.model_copy(update={"footer": EpisodeEnd(status="error", error="boom")})
    assert write_incognita_outputs(tmp_path, [crashed], load_reference()) == [
        tmp_path / TRIALS_FILE
    ]


def test_the_native_arm_leads_figure_2_and_stays_out_of_the_condition_tables() -> None:
    """A native anchor whose scores equal direct's: Figure 2 lists it first and its
    paired difference to direct is exactly 0; Figure 6 has its cell; the failure types
    (section 4) and Table 2 (B.3: the three conditions) have no native row, so they equal
    the tables of the run without it."""
    native_scores = {model: {"native": arms["direct"]} for model, arms in SCORES.items()}
    native = [
        row(r.model, "native", r.task, r.success, repetition=r.repetition, failure=None,
            role_identification=None, holder_contacted=None, information_acquisition=None,
            execution=None, unanswerable_questions=None)
        for r in rows_from(native_scores)
    ]
    both = [*native, *ROWS]
    assert [r["condition"] for r in tables.success_table(both)][:4] == [
        "native", "direct", "indirect", "social"]
    first = [r for r in tables.neighbour_differences(both) if r["contrast"] == "native - direct"]
    assert [(r["model"], r["estimate"]) for r in first] == [("strong", 0.0), ("weak", 0.0)]
    assert tables.outcome_table(both) == tables.outcome_table(ROWS)
    assert tables.corpus_size_table(both) == tables.corpus_size_table(ROWS)
    costs = {(r["model"], r["condition"]): r for r in tables.cost_table(both)}
    assert costs[("weak", "native")]["agent_actions"] == 10.0
    assert costs[("weak", "native")]["n_trials"] == 8

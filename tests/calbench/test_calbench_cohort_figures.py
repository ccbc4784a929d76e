"""CalBench Figures 3 and 4 (the CalBench paper §4.3) from per-seat rows: hand-computed OLS fits
and 95% t intervals across task instances; reference seats are not drawn."""

from __future__ import annotations

import csv
from pathlib import Path

import pytest

from confide.envs.calbench.outputs.cohort import write_cohort_figures

COLUMNS = ("status", "task_id", "participant", "cost_setting", "messages_per_meeting",
           "excess", "fairness")


def _write(root: Path, rows: list[tuple[object, ...]]) -> None:
    with (root / "results.csv").open("w", newline="") as handle:
        writer = csv.writer(handle)
        writer.writerow(COLUMNS)
        writer.writerows(rows)


def test_fits_and_intervals(tmp_path: Path) -> None:
    _write(tmp_path, [
        ("ok", "t1", "openai/m", "uniform", 1, 1, 0.2),
        ("ok", "t1", "openai/m", "uniform", 2, 3, 0.4),  # task t1: fairness mean 0.3
        ("ok", "t2", "openai/m", "uniform", 3, 5, 0.5),
        ("ok", "t2", "imap", "uniform", 9, 9, 9.0),  # a reference seat: not drawn
        ("error", "t3", "openai/m", "uniform", 9, 9, 9.0),
    ])
    written = write_cohort_figures(tmp_path)
    assert {p.name for p in written} == {
        "figure3_communication_efficiency.csv", "figure4_fairness.csv",
        "figure3_communication_efficiency.png", "figure4_fairness.png"}
    with (tmp_path / "figure3_communication_efficiency.csv").open() as handle:
        (fit,) = list(csv.DictReader(handle))
    # y = 2x - 1 exactly
    assert (fit["model"], fit["seat_games"]) == ("openai/m", "3")
    assert float(fit["slope"]) == pytest.approx(2.0)
    assert float(fit["intercept"]) == pytest.approx(-1.0)
    with (tmp_path / "figure4_fairness.csv").open() as handle:
        (bar,) = list(csv.DictReader(handle))
    # task means 0.3 and 0.5: mean 0.4, sd 0.1414, se 0.1, t(0.975, 1) = 12.706
    assert float(bar["fairness"]) == pytest.approx(0.4) and bar["n_tasks"] == "2"
    assert (float(bar["upper"]) - 0.4) / 0.1 == pytest.approx(12.7062047, rel=1e-6)


def test_a_reference_run_draws_nothing(tmp_path: Path) -> None:
    _write(tmp_path, [("ok", "t1", "imap", "uniform", 1, 1, 0.2)])
    assert write_cohort_figures(tmp_path) == []
    assert not (tmp_path / "figures").exists()

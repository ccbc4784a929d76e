"""``mock/incognita-ineffective`` fails every episode at one stage, so an
offline run of the shipped suite in all three conditions shows every failure type of
The Incognita paper, section 4.3, each where its lapse says."""

from __future__ import annotations

from pathlib import Path

import pytest
from _incognita_env_support import CONDITIONS, MOCK, tasks
from typer.testing import CliRunner

from confide.cli.main import app
from confide.envs.incognita.outputs.failures import FailureType
from confide.envs.incognita.outputs.trials import TRIALS_FILE, read_trials
from confide.envs.incognita.participants.mock_ineffective import LAPSES, lapse_of
from confide.envs.incognita.reference import load_reference
from confide.runner.build import build_experiment
from confide.runner.execute import run_experiment

INEFFECTIVE = "mock/incognita-ineffective"
EXPECTED = {
    "never_asks": FailureType.NEVER_REQUESTED,
    "vague_request": FailureType.REQUESTED_NOT_OBTAINED,
    "no_action": FailureType.OBTAINED_NOT_DELIVERED,
    "bad_arguments": FailureType.DELIVERED_INCORRECT,
    "silent_answer": FailureType.CORRECT_UNCONFIRMED,
}


def test_models_list_says_which_mock_is_a_demo() -> None:
    result = CliRunner().invoke(app, ["models", "list"])
    assert result.exit_code == 0, result.output
    lines = {line.split(" (")[0].strip(): line for line in result.output.splitlines()
             if line.startswith("  mock/incognita")}
    assert set(lines) == {"mock/incognita", "mock/incognita-skilled", "mock/incognita-prose",
                          INEFFECTIVE}
    assert "DEMO" in lines["mock/incognita-skilled"] and "made-up" in lines[
        "mock/incognita-skilled"]
    assert "every failure type" in lines[INEFFECTIVE]


def test_lapses_are_deterministic_and_silence_needs_an_answer() -> None:
    cards = [t.card for t in tasks()]
    draws = [lapse_of(card, c, seed) for card in cards for c in CONDITIONS for seed in range(20)]
    assert set(draws) == set(LAPSES)
    assert [lapse_of(c, "social", 0) for c in cards] == [lapse_of(c, "social", 0) for c in cards]
    assert [lapse_of(c, "social", 0) for c in cards] != [lapse_of(c, "social", 1) for c in cards]
    for card in cards:
        if not card.output_assertions:
            assert "silent_answer" not in {lapse_of(card, c, s) for c in CONDITIONS
                                           for s in range(20)}


@pytest.mark.parametrize("roles", [
    pytest.param({"customer": MOCK, "desk": MOCK}, id="model-desks"),
    pytest.param({}, id="scripted-desks", marks=pytest.mark.slow),
])
def test_an_offline_run_shows_every_failure_type(tmp_path: Path, roles: dict[str, str]) -> None:
    out = tmp_path / "run"
    experiment = build_experiment({
        "benchmark": "incognita", "lineups": [INEFFECTIVE], "conditions": list(CONDITIONS),
        "roles": roles, "output_dir": str(out), "concurrency": 4,
    })
    summary = run_experiment(experiment, show_progress=False)
    assert summary.failed == []
    rows = read_trials(out / TRIALS_FILE)
    assert len(rows) == 18 * 3 and not any(r.success for r in rows)
    assert {r.failure for r in rows} == set(FailureType)
    cards = {t.id: t.card for t in tasks()}
    reference = load_reference()
    for row in rows:
        lapse = lapse_of(cards[row.task], row.condition, 0)
        expected = EXPECTED[lapse]
        service_facts = any(not item.customer_side
                            for item in reference.task(row.task).observable_items)
        if lapse == "vague_request" and not service_facts:  # nothing the desks could owe
            expected = FailureType.OBTAINED_NOT_DELIVERED
        assert row.failure == expected, (row.task, row.condition, lapse)

"""The Latin-square schedule and the paper's experiment file (the Incognita paper, section 5)."""

from __future__ import annotations

from collections import Counter
from pathlib import Path

import pytest
import yaml

from confide.envs.incognita.outputs.design import (
    PAPER_CONDITIONS,
    PAPER_MODELS,
    DesignError,
    experiment_yaml,
    latin_schedule,
    latin_square,
    paper_experiment,
    schedule_rows,
    write_experiment_file,
)
from confide.runner.build import load_experiment

REPO = Path(__file__).resolve().parents[2]
PAPER_FILE = REPO / "experiments" / "incognita_paper.yaml"
TASKS = [f"t{i:02d}" for i in range(18)]


def test_latin_square_by_hand() -> None:
    assert latin_square(["a", "b", "c"]) == [("a", "b", "c"), ("b", "c", "a"), ("c", "a", "b")]


@pytest.mark.parametrize("k", [1, 2, 3, 4, 5])
def test_every_level_once_per_row_and_position(k: int) -> None:
    levels = [f"c{i}" for i in range(k)]
    square = latin_square(levels)
    for row in square:
        assert sorted(row) == levels
    for position in range(k):
        assert sorted(row[position] for row in square) == levels


def test_paper_schedule_is_balanced_within_every_factor() -> None:
    """The paper's four arms (native, direct, indirect, social) in a 4 x 4 square over
    18 tasks x 4 models x 3 repetitions: 216 workers, 864 trials (section 5)."""
    assert PAPER_CONDITIONS == ("native", "direct", "indirect", "social")
    workers = latin_schedule(TASKS, PAPER_MODELS, 3, PAPER_CONDITIONS)
    assert len(workers) == 18 * 4 * 3
    assert [w.index for w in workers] == list(range(len(workers)))
    rows = schedule_rows(workers)
    assert len(rows) == 18 * 4 * 3 * 4 == 864
    # Each (task, model) pair's three repetitions follow three consecutive rows.
    by_cell: dict[tuple[str, str], list[int]] = {}
    for w in workers:
        by_cell.setdefault((w.task_id, w.model), []).append(w.row)
    assert all(sorted((r - used[0]) % 4 for r in used) == [0, 1, 2]
               for used in by_cell.values())
    # Every arm is first equally often overall and for every task (the models cover the
    # four rows); per model, 54 workers over four arms: 14 or 13 each.
    first = Counter(r["condition"] for r in rows if r["position"] == 0)
    assert first == dict.fromkeys(PAPER_CONDITIONS, 54)
    first_by_task = Counter((r["task_id"], r["condition"]) for r in rows if r["position"] == 0)
    assert set(first_by_task.values()) == {3}
    first_by_model = Counter((r["model"], r["condition"]) for r in rows if r["position"] == 0)
    assert set(first_by_model.values()) == {13, 14}


def test_worker_row_formula() -> None:
    workers = latin_schedule(["x", "y"], ["m1", "m2"], 2, ["a", "b", "c"])
    assert [(w.task_id, w.model, w.repetition, w.row) for w in workers] == [
        ("x", "m1", 0, 0),
        ("x", "m1", 1, 1),
        ("x", "m2", 0, 1),
        ("x", "m2", 1, 2),
        ("y", "m1", 0, 1),
        ("y", "m1", 1, 2),
        ("y", "m2", 0, 2),
        ("y", "m2", 1, 0),
    ]
    assert workers[3].order == ("c", "a", "b")


@pytest.mark.parametrize(
    ("tasks", "models", "reps", "conditions", "match"),
    [
        ([], ["m"], 1, ["a"], "task_ids must be a non-empty list"),
        (["t"], ["m", "m"], 1, ["a"], r"models repeats \['m'\]"),
        (["t"], ["m"], 0, ["a"], "repetitions must be an integer >= 1; got 0"),
        (["t"], ["m"], 1, "abc", "levels must be a non-empty list"),
    ],
)
def test_bad_design_arguments(
    tasks: list[str], models: list[str], reps: int, conditions: list[str], match: str
) -> None:
    with pytest.raises(DesignError, match=match):
        latin_schedule(tasks, models, reps, conditions)


def test_repository_experiment_file_is_the_generated_one() -> None:
    assert PAPER_FILE.read_text(encoding="utf-8") == experiment_yaml(paper_experiment())


def test_experiment_file_loads_and_has_the_paper_design(tmp_path: Path) -> None:
    path = write_experiment_file(tmp_path / "exp.yaml")
    experiment = load_experiment(path)
    assert experiment.benchmark == "incognita"
    assert experiment.lineups == list(PAPER_MODELS)
    assert experiment.conditions == list(PAPER_CONDITIONS)
    assert experiment.repetitions == 3
    assert set(experiment.roles) == {"customer", "desk", "user", "judge"}
    assert experiment.roles["user"] == experiment.roles["judge"] == "openai/gpt-4.1-2025-04-14"
    assert "4 arms x 3\n# repetitions = 864 episodes" in path.read_text(encoding="utf-8")
    assert yaml.safe_load(path.read_text(encoding="utf-8"))["seed"] == experiment.seed

"""Task-level aggregation: repetitions averaged within task first (Incognita s.5)."""

from __future__ import annotations

import numpy as np
import pytest

from confide.stats import StatsError, aggregate_tasks, task_means


def _rows() -> list[dict[str, object]]:
    rows: list[dict[str, object]] = []
    outcomes: dict[tuple[str, str, str], list[int | bool]] = {
        ("m1", "social", "t1"): [1, 0, 0],
        ("m1", "social", "t2"): [1, 1, 1],
        ("m2", "social", "t1"): [0, 0, 1],
        ("m2", "social", "t2"): [True, False],
    }
    for (model, cond, task), xs in outcomes.items():
        for rep, x in enumerate(xs):
            rows.append({"model": model, "condition": cond, "task": task, "rep": rep, "ok": x})
    return rows


def test_rows_are_averaged_within_task_and_sorted() -> None:
    table = aggregate_tasks(reversed(_rows()), value="ok", repetition="rep")
    assert table.factors == ("model", "condition")
    assert table.cells == (("m1", "social"), ("m2", "social"))
    assert table.tasks == ("t1", "t2")
    np.testing.assert_allclose(table.means, [[1 / 3, 1.0], [1 / 3, 0.5]])
    np.testing.assert_array_equal(table.repetitions, [[3, 3], [3, 2]])
    np.testing.assert_allclose(table.vector(model="m2", condition="social"), [1 / 3, 0.5])
    np.testing.assert_allclose(
        table.matrix("model", ["m2", "m1"], condition="social"), [[1 / 3, 0.5], [1 / 3, 1.0]]
    )


def test_task_mean_differs_from_trial_mean_when_repetitions_differ() -> None:
    table = aggregate_tasks(_rows(), value="ok")
    # m2: trials 2/5 = 0.4 but the task-level mean is (1/3 + 1/2) / 2.
    assert table.vector(model="m2", condition="social").mean() == pytest.approx(5 / 12)


def test_missing_task_in_a_cell_is_an_error_naming_it() -> None:
    rows = [r for r in _rows() if not (r["model"] == "m2" and r["task"] == "t2")]
    with pytest.raises(StatsError, match=r"'m2'.*\['t2'\]"):
        aggregate_tasks(rows, value="ok")


@pytest.mark.parametrize(
    ("patch", "message"),
    [
        ({"ok": None}, r"row 0: field 'ok' must be a finite number"),
        ({"ok": float("nan")}, r"row 0: field 'ok'"),
        ({"ok": "yes"}, r"row 0: field 'ok' must be a finite number or bool; got 'yes'"),
        ({"task": 1.5}, r"row 0: field 'task' must be a str or int"),
    ],
)
def test_bad_values_name_row_and_field(patch: dict[str, object], message: str) -> None:
    rows = _rows()
    rows[0] = {**rows[0], **patch}
    with pytest.raises(StatsError, match=message):
        aggregate_tasks(rows, value="ok")


def test_missing_field_and_duplicate_repetition() -> None:
    rows = _rows()
    del rows[2]["condition"]
    with pytest.raises(StatsError, match=r"row 2: missing field 'condition'"):
        aggregate_tasks(rows, value="ok")
    rows = [*_rows(), _rows()[0]]
    with pytest.raises(StatsError, match=r"duplicate repetition '0' for task 't1'"):
        aggregate_tasks(rows, value="ok", repetition="rep")


def test_argument_errors() -> None:
    with pytest.raises(StatsError, match="rows is empty"):
        aggregate_tasks([], value="ok")
    with pytest.raises(StatsError, match="by must be"):
        aggregate_tasks(_rows(), value="ok", by="model")
    with pytest.raises(StatsError, match="must differ"):
        aggregate_tasks(_rows(), value="ok", task="model")
    table = aggregate_tasks(_rows(), value="ok")
    with pytest.raises(StatsError, match="needs exactly the factors"):
        table.vector(model="m1")
    with pytest.raises(StatsError, match="no cell"):
        table.vector(model="m9", condition="social")
    with pytest.raises(StatsError, match="factor 'model' cannot also be fixed"):
        table.matrix("model", ["m1"], model="m1", condition="social")
    with pytest.raises(StatsError, match="factor must be one of"):
        table.matrix("seat", ["a"], condition="social")


def test_task_means_array_shape() -> None:
    values = np.arange(24, dtype=float).reshape(2, 4, 3)
    out = task_means(values)
    assert out.shape == (2, 4)
    np.testing.assert_allclose(out, values.mean(axis=-1))
    with pytest.raises(StatsError, match=r"shape \(\.\.\., n_tasks, n_repetitions\)"):
        task_means([1.0, 2.0])
    with pytest.raises(StatsError, match="must be finite"):
        task_means([[1.0, np.inf]])


def test_csv_strings_are_parsed() -> None:
    rows = [
        {"model": "m", "condition": "c", "task": "t", "ok": text}
        for text in ("True", "false", " 1 ", "0.5")
    ]
    assert aggregate_tasks(rows, value="ok").means.tolist() == [[0.625]]

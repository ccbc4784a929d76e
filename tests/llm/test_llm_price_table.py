"""The price table: validated with one clear error, supplied by the user
(`--price-table`, `price_table:`), checked in preflight, recorded in run.json and the report,
and unknown prices reported as unpriced, never $0."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import pytest

from confide.cli.main import main
from confide.llm.errors import ModelSpecError
from confide.llm.pricing import SHIPPED, load_price_table
from confide.runner import build_experiment, load_experiment, run_experiment
from confide.runner.fingerprint import ResumeMismatch
from confide.runner.preflight import PreflightError, preflight

TABLE: dict[str, Any] = {
    "version": "lab-2026-08-15",
    "as_of": "2026-08-15",
    "source": "our procurement sheet",
    "zero_cost_providers": [],
    "models": {"mock/echo": {"input": 2.0, "output": 4.0}},
}


def write(path: Path, data: dict[str, Any]) -> Path:
    path.write_text(json.dumps(data), encoding="utf-8")
    return path


@pytest.mark.parametrize(
    ("change", "expected"),
    [
        ({"as_of": "Aug 2026"}, "field as_of: String should match pattern"),
        ({"models": {"gpt-5.2": {"input": 1, "output": 1}}}, "'gpt-5.2' is not a provider/model"),
        ({"models": {"openai/x": {"input": -1, "output": 1}}}, "field models.openai/x.input"),
        ({"version": ""}, "field version"),
    ],
)
def test_a_bad_table_names_file_field_and_value(
    tmp_path: Path, change: dict[str, Any], expected: str
) -> None:
    path = write(tmp_path / "mine.json", {**TABLE, **change})
    with pytest.raises(ModelSpecError) as caught:
        load_price_table(path)
    message = str(caught.value)
    assert message.startswith(f"price table {path}: ") and expected in message
    assert "\n" not in message


def test_unreadable_and_malformed_tables_name_the_file(tmp_path: Path) -> None:
    with pytest.raises(ModelSpecError, match=r"missing\.json"):
        load_price_table(tmp_path / "missing.json")
    bad = tmp_path / "bad.json"
    bad.write_text("{oops", encoding="utf-8")
    with pytest.raises(ModelSpecError, match=r"bad\.json: line 1, column 2"):
        load_price_table(bad)


def test_provenance_of_the_shipped_and_a_user_table(tmp_path: Path) -> None:
    shipped = load_price_table()
    assert shipped.provenance()["file"] == SHIPPED
    assert shipped.provenance()["source"] and shipped.provenance()["as_of"] == shipped.as_of
    path = write(tmp_path / "mine.json", TABLE)
    assert load_price_table(path).provenance(str(path)) == {
        "version": "lab-2026-08-15", "as_of": "2026-08-15", "source": "our procurement sheet",
        "currency": "USD", "file": str(path),
    }


def demo(out: Path, table: Path | None) -> dict[str, Any]:
    return {"benchmark": "demo", "lineups": ["mock/echo"], "output_dir": str(out),
            "price_table": str(table) if table else None}


def test_a_user_table_prices_every_call_and_is_recorded(tmp_path: Path) -> None:
    path = write(tmp_path / "mine.json", TABLE)
    summary = run_experiment(build_experiment(demo(tmp_path / "run", path)), show_progress=False)
    total = summary.usage["total"]
    expected = (total["prompt_tokens"] * 2.0 + total["completion_tokens"] * 4.0) / 1e6
    assert total["unknown_cost_calls"] == 0
    assert total["cost_usd"] == pytest.approx(expected) and expected > 0
    recorded = json.loads((tmp_path / "run" / "run.json").read_text("utf-8"))
    assert recorded["prices"]["version"] == "lab-2026-08-15"
    assert recorded["prices"]["file"] == str(path)
    assert recorded["experiment"]["price_table"] == str(path)
    report = (tmp_path / "run" / "report.html").read_text("utf-8")
    assert "lab-2026-08-15" in report and "our procurement sheet" in report
    assert "2026-08-15" in report


def test_a_model_the_table_lacks_is_unpriced_not_free(tmp_path: Path) -> None:
    path = write(tmp_path / "empty.json", {**TABLE, "models": {}})
    summary = run_experiment(build_experiment(demo(tmp_path / "run", path)), show_progress=False)
    total = summary.usage["total"]
    assert total["unknown_cost_calls"] == total["calls"] > 0


def test_resuming_under_another_table_is_refused(tmp_path: Path) -> None:
    path = write(tmp_path / "mine.json", TABLE)
    run_experiment(build_experiment(demo(tmp_path / "run", path)), show_progress=False)
    other = write(tmp_path / "other.json", {**TABLE, "version": "lab-2"})
    with pytest.raises(ResumeMismatch, match="price_table"):
        run_experiment(build_experiment(demo(tmp_path / "run", other)), show_progress=False)


def test_preflight_reports_a_bad_table_naming_the_file(tmp_path: Path) -> None:
    path = write(tmp_path / "mine.json", {**TABLE, "as_of": "soon"})
    with pytest.raises(PreflightError) as caught:
        preflight(build_experiment(demo(tmp_path / "run", path)))
    assert f"price_table: price table {path}: field as_of" in str(caught.value)
    assert not (tmp_path / "run").exists()


def test_cli_option_and_experiment_file(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    bad = write(tmp_path / "bad.json", {**TABLE, "as_of": "soon"})
    monkeypatch.setattr(sys, "argv", ["confide", "run", "demo", "--price-table", str(bad),
                                      "--out", str(tmp_path / "run"), "--no-progress"])
    with pytest.raises(SystemExit) as exited:
        main()
    assert exited.value.code != 0
    assert f"price table {bad}: field as_of" in capsys.readouterr().err
    good = write(tmp_path / "mine.json", TABLE)
    experiment_file = tmp_path / "exp.yaml"
    experiment_file.write_text(
        f"benchmark: demo\nlineups: [mock/echo]\nprice_table: {good}\n", encoding="utf-8"
    )
    assert load_experiment(experiment_file).price_table == str(good)

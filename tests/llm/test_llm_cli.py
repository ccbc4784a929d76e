"""`confide models try` and `confide models list`."""

from __future__ import annotations

import json
from pathlib import Path

from typer.testing import CliRunner

from confide.cli.models import app


def test_try_echo_prints_the_reply() -> None:
    result = CliRunner().invoke(app, ["try", "mock/echo", "hi"])
    assert result.exit_code == 0, result.output
    assert result.stdout == "hi\n"
    assert "mock/echo" in result.stderr and "finish stop" in result.stderr


def test_try_with_schema_and_max_tokens(tmp_path: Path) -> None:
    schema = tmp_path / "schema.json"
    schema.write_text(
        json.dumps(
            {
                "type": "object",
                "required": ["greeting"],
                "properties": {"greeting": {"type": "string", "minLength": 2}},
            }
        )
    )
    result = CliRunner().invoke(app, ["try", "mock/json", "hi", "--schema", str(schema)])
    assert result.exit_code == 0, result.output
    assert json.loads(result.stdout) == {"greeting": "aa"}
    cut = CliRunner().invoke(
        app, ["try", "mock/json", "hi", "--schema", str(schema), "--max-tokens", "1"]
    )
    assert cut.exit_code == 1 and "not valid JSON" in cut.stderr


def test_try_reports_bad_input(tmp_path: Path) -> None:
    bad = tmp_path / "schema.json"
    bad.write_text("{nope")
    result = CliRunner().invoke(app, ["try", "mock/json", "hi", "--schema", str(bad)])
    assert result.exit_code != 0 and "schema.json: line 1, column 2" in str(result.exception)
    result = CliRunner().invoke(app, ["try", "nope/x", "hi"])
    assert "unknown provider 'nope'" in str(result.exception)


def test_list_shows_providers_mocks_and_prices() -> None:
    result = CliRunner().invoke(app, ["list"])
    assert result.exit_code == 0
    assert "mock/echo" in result.stdout and "local/smollm2" in result.stdout
    assert "openai/gpt-5-mini: input $0.25, output $2" in result.stdout

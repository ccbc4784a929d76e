"""Reachability under the paper's stop rule: the reference lineup
makes every expected disclosure of every core scenario before the 3-turn stale stop, and
a stop that cuts it off is reported by `confide scenarios validate`."""

from __future__ import annotations

import json
from pathlib import Path

from typer.testing import CliRunner

from confide.cli.main import app
from confide.envs.sotopia_tom.dataset import load_scenario_by_id, load_split
from confide.envs.sotopia_tom.options import EnvOptions
from confide.envs.sotopia_tom.reachability import unreachable
from confide.envs.sotopia_tom.validation import Rule


def test_every_core_scenario_is_reachable_under_the_default_stop() -> None:
    assert [v for s in load_split("core") for v in unreachable(s)] == []


def test_a_stop_that_cuts_the_reference_off_is_reported() -> None:
    scenario = load_scenario_by_id("core", "finance-sme-loan")
    found = unreachable(scenario, EnvOptions(max_turns=6))  # two rounds: requests only
    assert found and {v.rule for v in found} == {Rule.STOP_RULE_REACHABILITY}
    assert all(v.scenario_id == "finance-sme-loan" and v.item for v in found)
    assert "max_turns after 6 turns" in found[0].message


def test_validate_runs_the_check(tmp_path: Path) -> None:
    scenario = load_scenario_by_id("core", "finance-sme-loan")
    path = tmp_path / "one.json"
    path.write_text(json.dumps(scenario.model_dump(mode="json", by_alias=True)))
    result = CliRunner().invoke(app, ["scenarios", "validate", str(path)])
    assert result.exit_code == 0, result.output
    assert "1 scenario(s) checked" in result.output and "0 rule violation(s)" in result.output

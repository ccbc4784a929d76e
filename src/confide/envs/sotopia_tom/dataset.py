"""Scenario splits shipped with confide (the Sotopia-ToM paper, section 3.2 sectors).

A split is a folder `data/<split>/` inside this package holding one native scenario JSON per
file, named `<scenario id>.json`. The `core` split holds our own hand-written scenarios, at
least two per sector for the eight sectors of section 3.2 / A.3, with 3 to 5 agents each. Loading a
split validates every scenario against the rules of `validation.py` and refuses a split
that breaks any, so a damaged data file fails loudly instead of producing wrong metrics.
Scenarios come back in file-name order, which is stable across platforms.
"""

from __future__ import annotations

import json
from importlib.resources import files
from importlib.resources.abc import Traversable

from confide.envs.sotopia_tom.scenario import Scenario, ScenarioError, parse_scenario
from confide.envs.sotopia_tom.validation import ensure_valid

_DATA = "data"


def _root() -> Traversable:
    return files("confide.envs.sotopia_tom").joinpath(_DATA)


def split_names() -> tuple[str, ...]:
    """Names of the shipped splits, sorted."""
    return tuple(
        sorted(
            entry.name
            for entry in _root().iterdir()
            if entry.is_dir() and any(f.name.endswith(".json") for f in entry.iterdir())
        )
    )


def load_split(name: str) -> list[Scenario]:
    """Every scenario of a shipped split, validated, in file-name order."""
    if name not in split_names():
        raise ScenarioError(f"unknown scenario split {name!r}; available: {list(split_names())}")
    folder = _root().joinpath(name)
    scenarios = []
    for entry in sorted((f for f in folder.iterdir() if f.name.endswith(".json")), key=_name):
        where = f"split {name!r}, file {entry.name}"
        try:
            record = json.loads(entry.read_text(encoding="utf-8"))
        except json.JSONDecodeError as exc:
            raise ScenarioError(f"{where}: line {exc.lineno}: invalid JSON: {exc.msg}") from exc
        if not isinstance(record, dict):
            raise ScenarioError(f"{where}: expected one scenario object")
        scenario = parse_scenario(record, where=where)
        if entry.name != f"{scenario.id}.json":
            raise ScenarioError(f"{where}: file name does not match scenario id {scenario.id!r}")
        scenarios.append(ensure_valid(scenario))
    return scenarios


def load_scenario_by_id(split: str, scenario_id: str) -> Scenario:
    """One scenario of a shipped split by id; ScenarioError listing the ids otherwise."""
    scenarios = load_split(split)
    for scenario in scenarios:
        if scenario.id == scenario_id:
            return scenario
    ids = [s.id for s in scenarios]
    raise ScenarioError(f"split {split!r} has no scenario {scenario_id!r}; ids: {ids}")


def _name(entry: Traversable) -> str:
    return entry.name

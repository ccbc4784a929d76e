"""Experiment configuration errors name file, field and value."""

from pathlib import Path

import pytest

from confide.registry import get_benchmark
from confide.runner import ConfigError, build_experiment, load_experiment
from confide.runner.expand import episode_id, expand


def test_bad_field_names_file_field_and_value(tmp_path: Path) -> None:
    path = tmp_path / "exp.yaml"
    path.write_text("benchmark: demo\nrepetitions: -2\n")
    with pytest.raises(ConfigError, match=r"exp.yaml: field 'repetitions' \(value: -2\)"):
        load_experiment(path)


def test_unknown_field_is_rejected(tmp_path: Path) -> None:
    path = tmp_path / "exp.yaml"
    path.write_text("benchmark: demo\nrepetition: 2\n")
    with pytest.raises(ConfigError, match=r"field 'repetition'.*Extra inputs are not permitted"):
        load_experiment(path)


def test_not_a_mapping_and_bad_yaml(tmp_path: Path) -> None:
    path = tmp_path / "exp.yaml"
    path.write_text("- just\n- a list\n")
    with pytest.raises(ConfigError, match="expected a mapping"):
        load_experiment(path)
    path.write_text("benchmark: [unclosed\n")
    with pytest.raises(ConfigError, match="not valid YAML"):
        load_experiment(path)


def test_overrides_apply_on_top(tmp_path: Path) -> None:
    path = tmp_path / "exp.yaml"
    path.write_text("benchmark: demo\nseed: 1\n")
    assert load_experiment(path, {"seed": 9, "limit": None}).seed == 9


def test_expansion_ids_are_deterministic_and_unique() -> None:
    spec = get_benchmark("demo")
    exp = build_experiment({"benchmark": "demo", "lineups": ["scripted", "mock/echo"],
                            "repetitions": 2, "seed": 3})
    plans = expand(spec, exp)
    assert len(plans) == 3 * 2 * 2
    assert [p.episode_id for p in plans] == [p.episode_id for p in expand(spec, exp)]
    assert len({p.episode_id for p in plans}) == len(plans)
    # the same task and repetition get the same seed under every lineup (paired design)
    by_key = {(p.task.id, p.repetition, p.lineup_text): p.seed for p in plans}
    assert by_key[("ring-3x2", 1, "scripted")] == by_key[("ring-3x2", 1, "mock/echo")]
    assert episode_id(["a/b", "c"]) != episode_id(["a-b", "c"])


def test_unknown_condition_and_task_ids() -> None:
    spec = get_benchmark("demo")
    with pytest.raises(Exception, match="has no condition 'social'"):
        expand(spec, build_experiment({"benchmark": "demo", "conditions": ["social"]}))
    with pytest.raises(Exception, match="task ids not found: nope"):
        expand(spec, build_experiment({"benchmark": "demo", "task_ids": ["nope"]}))

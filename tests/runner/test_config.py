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


@pytest.mark.parametrize(
    ("fields", "expected"),
    [
        ({"lineups": ["imap"]}, 4),
        ({"lineups": ["imap,local/smollm2,imap"]}, 1),
        ({"lineups": ["local/smollm2:tom-belief"]}, 1),
        ({"lineups": ["mock/echo"], "roles": {"judge": "local/smollm2"}}, 1),
        ({"lineups": ["local/smollm2"], "concurrency": 3}, 3),
    ],
)
def test_embedded_models_run_one_episode_at_a_time_by_default(
    fields: dict[str, object], expected: int
) -> None:
    experiment = build_experiment({"benchmark": "demo", **fields}, check=False)  # config only
    assert experiment.episodes_at_once == expected


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
    with pytest.raises(ConfigError, match="unknown condition 'social'"):
        build_experiment({"benchmark": "demo", "conditions": ["social"]})
    with pytest.raises(Exception, match="has no condition 'social'"):
        unchecked = build_experiment({"benchmark": "demo", "conditions": ["social"]}, check=False)
        expand(spec, unchecked)
    with pytest.raises(Exception, match="task ids not found: nope"):
        expand(spec, build_experiment({"benchmark": "demo", "task_ids": ["nope"]}))


def test_latin_square_chains_rotate_condition_order() -> None:
    """Each worker runs its arms back to back, in its Latin-square row's order; every
    episode appears in exactly one chain; a resumed subset keeps the same orders."""
    from confide.runner.expand import worker_chains
    from confide.stats.design import latin_square

    spec = get_benchmark("incognita")
    exp = build_experiment({"benchmark": "incognita", "lineups": ["reference"],
                            "repetitions": 2, "schedule": "latin-square", "limit": 3})
    plans = expand(spec, exp)
    chains = worker_chains(exp, plans, plans)
    assert len(chains) == 3 * 2
    assert sorted(p.episode_id for c in chains for p in c) == sorted(p.episode_id for p in plans)
    square = latin_square(["direct", "indirect", "social"])
    orders = [tuple(p.condition for p in chain) for chain in chains]
    # worker (task t, lineup 0, repetition r) follows row (t + r) mod 3
    assert orders == [square[(t + r) % 3] for t in range(3) for r in range(2)]
    resumed = worker_chains(exp, plans, [p for p in plans if p.condition != "direct"])
    assert [tuple(p.condition for p in c) for c in resumed] == [
        tuple(c for c in order if c != "direct") for order in orders
    ]
    grid = build_experiment({"benchmark": "incognita", "limit": 2})
    assert all(len(c) == 1 for c in worker_chains(grid, expand(spec, grid), expand(spec, grid)))


async def test_provider_scoped_model_options_reach_only_their_provider() -> None:
    from confide.llm import ChatMessage, GenerateConfig, ModelSpecError
    from confide.runner.models import RunModels

    models = RunModels(
        options={"local": {"n_threads": 1}, "mock": {"outputs": ["scoped"]}, "latency_s": 0.0}
    )
    reply = await models.base("mock/json").generate(
        [ChatMessage(role="user", content="hi")], config=GenerateConfig()
    )
    assert reply.text == "scoped"  # the mock entry applied, the local one did not
    with pytest.raises(ModelSpecError, match="unknown option"):
        RunModels(options={"mock": {"n_threads": 1}}).base("mock/json")

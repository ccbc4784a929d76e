"""`confide eval`: designs from the benchmarks' declarations, one preflight for all,
profiles equal to the three `confide run` commands the dry run prints, comparisons."""

from __future__ import annotations

import dataclasses
import shlex
from pathlib import Path

import pytest
from typer.testing import CliRunner

import confide
from confide.cli.main import app
from confide.core.eval_design import EvalDesign
from confide.evaluate import design as design_module
from confide.evaluate import evaluation as evaluation_module
from confide.evaluate.compare import compare
from confide.evaluate.design import (
    eval_designs,
    quick_design,
    split_roles,
    stratified_tasks,
)
from confide.evaluate.evaluation import EvalDeclined, plan_evaluation, run_evaluation
from confide.evaluate.profile import (
    Estimate,
    MetricResult,
    Profile,
    cost_result,
    estimate,
    metric_results,
)
from confide.evaluate.render import html
from confide.registry import get_benchmark

runner = CliRunner()


def _small(design: EvalDesign) -> EvalDesign:
    """Two tasks per benchmark (CalBench's from its tiny suite) and a short Incognita
    turn budget: the same mechanics as the quick design in a few seconds."""
    options = {"max_turns": 12} if design.benchmark == "incognita" else {}
    suite = "tiny" if design.benchmark == "calbench" else design.quick.suite
    quick = dataclasses.replace(design.quick, stratum=lambda task: "all", per_stratum=2,
                                options=options, suite=suite)
    return dataclasses.replace(design, quick=quick)


@pytest.fixture
def small(monkeypatch: pytest.MonkeyPatch) -> None:
    designs = [_small(d) for d in eval_designs()]
    monkeypatch.setattr(evaluation_module, "eval_designs", lambda: designs)


def test_every_paper_benchmark_declares_a_design() -> None:
    assert [d.benchmark for d in eval_designs()] == ["calbench", "incognita", "sotopia-tom"]
    for design in eval_designs():
        spec = get_benchmark(design.benchmark)
        assert set(design.roles) <= {role.name for role in spec.roles}
        assert design.metrics and all(m.axis in ("coordination", "privacy")
                                      for m in design.metrics)
        has_privacy = any(m.axis == "privacy" for m in design.metrics)
        assert has_privacy != bool(design.no_privacy)  # a privacy metric, or why none


@pytest.mark.parametrize("embedded", [False, True])
def test_quick_tasks_are_per_stratum_and_fixed(embedded: bool) -> None:
    for design in eval_designs():
        quick = design.quick.embedded if embedded else design.quick
        assert quick is not None
        ids = stratified_tasks(design.benchmark, quick)
        assert ids == stratified_tasks(design.benchmark, quick)
        tasks = {t.id: t for t in get_benchmark(design.benchmark).load_tasks(
            quick.suite, None)}
        sizes: dict[str, int] = {}
        for task in tasks.values():
            sizes[quick.stratum(task)] = sizes.get(quick.stratum(task), 0) + 1
        chosen: dict[str, int] = {}
        for i in ids:
            chosen[quick.stratum(tasks[i])] = chosen.get(quick.stratum(tasks[i]), 0) + 1
        assert chosen == {k: min(n, quick.per_stratum) for k, n in sizes.items()}


def test_an_embedded_model_gets_the_embedded_budget_and_says_so() -> None:
    for design in eval_designs():
        assert design.quick.embedded is not None
        assert quick_design(design, "local/smollm2") is design.quick.embedded
        assert quick_design(design, "mock/json") is design.quick
    evaluation = plan_evaluation("local/smollm2")
    for run in evaluation.runs:
        assert run.design_note.startswith("quick (embedded-model budget): ")
        quick = run.design.quick.embedded
        assert quick is not None
        assert run.experiment.task_ids == stratified_tasks(run.design.benchmark, quick)
        assert dict(run.experiment.options).items() >= dict(quick.options).items()


def test_roles_bind_everywhere_or_in_one_benchmark() -> None:
    designs = eval_designs()
    per, problems = split_roles({"judge": "mock/a", "calbench.judge": "mock/b",
                                 "incognita.customer": "mock/c"}, designs)
    assert per == {"calbench": {"judge": "mock/b"}, "incognita": {"judge": "mock/a",
                   "customer": "mock/c"}, "sotopia-tom": {"judge": "mock/a"}}
    assert problems == []
    _, problems = split_roles({"referee": "mock/a", "nope.judge": "mock/a"}, designs)
    assert len(problems) == 2 and "referee" in problems[0] and "nope" in problems[1]


def test_estimate_is_the_mean_of_task_means_with_missing_tasks_left_out() -> None:
    result = estimate({"a": [1.0, 3.0], "b": [4.0], "c": []})
    assert result.value == pytest.approx(3.0)
    assert result.tasks == {"a": 2.0, "b": 4.0}
    assert result.missing == 1
    assert result.lower is not None and result.upper is not None
    assert 2.0 <= result.lower <= result.value <= result.upper <= 4.0
    assert estimate({"a": [5.0]}) == Estimate(value=5.0, tasks={"a": 5.0})


def _same_as(output: str) -> list[list[str]]:
    return [shlex.split(line.removeprefix("same as: "))
            for line in output.splitlines() if line.startswith("same as: ")]


@pytest.mark.usefixtures("small")
def test_profile_equals_the_three_runs_the_dry_run_prints(tmp_path: Path) -> None:
    out = tmp_path / "eval"
    dry = runner.invoke(app, ["eval", "mock/json", "--out", str(out), "--dry-run"])
    assert dry.exit_code == 0, dry.output
    assert not out.exists()  # a dry run writes nothing
    commands = _same_as(dry.output)
    assert [c[2] for c in commands] == ["calbench", "incognita", "sotopia-tom"]

    profile = confide.evaluate("mock/json", out=out, run_options={"concurrency": 2})
    assert isinstance(profile, Profile)
    for name in ("profile.json", "profile.md", "profile.html", "view/index.html"):
        assert (out / "mock" / "json" / name).is_file()
    root = out / "mock" / "json"
    for index, bench in enumerate(profile.benchmarks):  # every link opens its page
        assert bench.worst
        for worst in bench.worst:
            assert (root / "view" / "data" / "episodes" / str(index)
                    / f"{worst.episode_id}.js").is_file()
    designs = {d.benchmark: d for d in evaluation_module.eval_designs()}
    for command, bench in zip(commands, profile.benchmarks, strict=True):
        separate = tmp_path / "separate" / bench.benchmark
        argv = command[1:]
        argv[argv.index("--out") + 1] = str(separate)
        result = runner.invoke(app, [*argv, "--no-progress", "--concurrency", "2"])
        assert result.exit_code == 0, result.output
        expected = metric_results(separate, designs[bench.benchmark], "mock/json")
        assert [m.model_dump(exclude={"published"}) for m in bench.metrics] == [
            m.model_dump(exclude={"published"}) for m in expected]
        assert bench.cost == cost_result(separate, "mock/json")
        assert bench.episodes == bench.cost.episodes > 0
    assert any(m.estimate.lower is not None for m in profile.metrics())


def test_paid_calls_wait_for_confirmation(tmp_path: Path,
                                          monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test-not-used")
    evaluation = plan_evaluation("openai/gpt-5-mini", out=tmp_path / "eval")
    questions: list[str] = []

    def refuse(question: str) -> bool:
        questions.append(question)
        return False

    with pytest.raises(EvalDeclined):
        run_evaluation(evaluation, confirm=refuse)
    assert "openai/gpt-5-mini" in questions[0] and "expected model calls" in questions[0]
    assert not (tmp_path / "eval").exists()
    with pytest.raises(EvalDeclined):  # no way to ask: paid calls need yes=True
        run_evaluation(evaluation)


def test_reference_paper_design_falls_back_to_the_papers_text(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(design_module, "PROJECT_ROOT", tmp_path)
    monkeypatch.chdir(tmp_path)
    evaluation = plan_evaluation("mock/json", design="paper", out=tmp_path / "eval")
    sotopia = next(r for r in evaluation.runs if r.design.benchmark == "sotopia-tom")
    assert sotopia.experiment.lineups == ["mock/json:basic", "mock/json:cot-privacy",
                                          "mock/json:tom-coach", "mock/json:tom-belief"]
    assert "absent" in sotopia.design_note
    incognita = next(r for r in evaluation.runs if r.design.benchmark == "incognita")
    assert incognita.experiment.repetitions == 3
    assert incognita.experiment.roles == {"customer": "mock/json", "desk": "mock/json",
                                          "judge": "mock/json"}


def _metric(value: float, tasks: dict[str, float], higher: bool = True) -> MetricResult:
    return MetricResult(benchmark="b", name="m", label="<m>", axis="coordination",
                        meaning="", higher_is_better=higher, group=None,
                        estimate=Estimate(value=value, tasks=tasks))


def _profile(model: str, tasks: dict[str, float]) -> Profile:
    from confide.evaluate.profile import BenchmarkProfile, CostResult

    none = Estimate(value=None)
    cost = CostResult(episodes=0, calls=none, tokens=none, model_tokens=none, usd=None)
    value = sum(tasks.values()) / len(tasks)
    bench = BenchmarkProfile(benchmark="b", run_dir="r", command="c", design_note="d",
                             paper_design="p",
                             roles={}, role_sources={}, episodes=0, failed=0,
                             metrics=[_metric(value, tasks)], no_privacy="", cost=cost,
                             worst_by="m", worst=[])
    return Profile(model=model, design="quick", benchmarks=[bench])


def test_comparison_pairs_common_tasks_and_ranks() -> None:
    a = _profile("mock/a", {"t1": 1.0, "t2": 2.0, "t3": 3.0})
    b = _profile("mock/b", {"t1": 2.0, "t2": 4.0, "t4": 9.0})
    comparison = compare([a, b])
    paired = comparison.rows[0].paired["mock/b"]
    assert paired.tasks == {"t1": 1.0, "t2": 2.0}
    assert paired.value == pytest.approx(1.5)
    assert [e["model"] for e in comparison.leaderboard] == ["mock/b", "mock/a"]


def test_profile_html_escapes_every_text() -> None:
    page = html(_profile("<script>alert(1)</script>", {"t1": 1.0, "t2": 2.0}))
    assert "<script>alert" not in page
    assert "&lt;script&gt;" in page and "&lt;m&gt;" in page


def test_reference_paper_design_keeps_the_references_offline(tmp_path: Path) -> None:
    evaluation = plan_evaluation("reference", design="paper", out=tmp_path / "eval")
    for run in evaluation.runs:
        spec = get_benchmark(run.design.benchmark)
        assert run.experiment.lineups == [run.design.reference_lineup]
        for name, binding in run.experiment.roles.items():
            role = spec.role(name)
            assert role is not None and binding in role.offline, (name, binding)
        if "experiments/" in " ".join(run.command):  # the file's roles, named offline
            assert all(f"{k}={v}" in run.command for k, v in run.experiment.roles.items())


def test_compare_flag_reads_profile_directories(tmp_path: Path) -> None:
    for model, tasks in (("mock/a", {"t1": 1.0, "t2": 2.0}), ("mock/b", {"t1": 3.0, "t2": 5.0})):
        folder = tmp_path / model
        folder.mkdir(parents=True)
        (folder / "profile.json").write_text(_profile(model, tasks).model_dump_json())
    result = runner.invoke(app, ["eval", "--compare", str(tmp_path / "mock/a"),
                                 str(tmp_path / "mock/b"), "--out", str(tmp_path)])
    assert result.exit_code == 0, result.output
    table = (tmp_path / "comparison.md").read_text()
    assert "| mock/b | 1 |" in table.replace("1.0", "1")  # first on the leaderboard
    assert "2.5 [" in table  # the paired difference over t1 and t2


def test_published_rows_sit_on_the_groups_their_settings_name() -> None:
    from confide.evaluate.published import with_published

    design = next(d for d in eval_designs() if d.benchmark == "calbench")
    empty = Estimate(value=None)
    metrics = [MetricResult(benchmark="calbench", name="vps", label="VPS", axis="privacy",
                            meaning="", higher_is_better=False, group=group, estimate=empty)
               for group in ("uniform, dm", "uniform, participant-groupchat", "varied, dm")]
    placed = {m.group: m.published for m in with_published(design, metrics)}
    tables = {g: sorted({(p.table, p.setting.get("Setting")) for p in points})
              for g, points in placed.items()}
    assert tables["uniform, dm"] == [("Table 1", "Uniform"), ("Table 2", "Uniform")]
    assert tables["uniform, participant-groupchat"] == [("Table 1", "Uniform")]
    assert tables["varied, dm"] == [("Table 1", "Varied"), ("Table 2", "Varied")]
    imap = [p.value for p in placed["uniform, dm"] if p.model == "imap"]
    assert imap == [12.40]  # the CalBench paper, Table 2, IMAP, uniform cost
    assert all(p.source == "published" for points in placed.values() for p in points)


@pytest.mark.usefixtures("small")
def test_calbench_other_seats_bind_by_role_and_only_the_model_seat_counts(
    tmp_path: Path,
) -> None:
    from confide.readers import read_results
    from confide.runner import run_experiment

    evaluation = plan_evaluation("mock/json", roles={"calbench.others": "imap"},
                                 out=tmp_path / "eval")
    run = evaluation.runs[0]
    assert run.design.benchmark == "calbench"
    assert run.experiment.lineups == ["mock/json,imap,imap"]  # the tiny suite: 3 seats
    assert "others" not in run.experiment.roles  # not a runner role
    assert run.role_sources["others"] == "--role"
    assert run.command[run.command.index("--lineup") + 1] == "mock/json,imap,imap"
    assert all(r.others is None for r in evaluation.runs[1:])  # CalBench's name only
    self_play = plan_evaluation("mock/json", out=tmp_path / "eval").runs[0]
    assert self_play.experiment.lineups == ["mock/json"]
    assert self_play.role_sources["others"].startswith("default (every other seat")
    resolved = evaluation_module._resolved_roles  # what the profile's roles column shows
    assert resolved(run, "mock/json")["others"] == "imap"
    assert resolved(self_play, "mock/json")["others"] == "mock/json"

    run_experiment(run.experiment, show_progress=False)
    rows = [r for r in read_results(run.run_dir) if r["status"] == "ok"]
    assert {r["participant"] for r in rows} == {"mock/json", "imap"}
    by_task: dict[tuple[str, str, str], list[float]] = {}
    for row in rows:
        if row["participant"] == "mock/json":
            key = (str(row["cost_setting"]), str(row["condition"]), str(row["task_id"]))
            by_task.setdefault(key, []).append(float(row["success"]) * 100)
    mine = {m.group: m.estimate.tasks for m in metric_results(run.run_dir, run.design,
                                                                "mock/json")
            if m.name == "success"}
    expected: dict[str | None, dict[str, float]] = {}
    for (setting, condition, task), values in by_task.items():
        expected.setdefault(f"{setting}, {condition}", {})[task] = sum(values) / len(values)
    assert mine == expected
    every = {m.group: m.estimate.tasks for m in metric_results(run.run_dir, run.design)
             if m.name == "success"}
    assert every != mine  # the reference seats would have counted

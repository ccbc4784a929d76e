"""Table 6 from one rescore (A.12): `confide rescore RUN --role judge=B` writes the
agreement between RUN's judge A and B into the rescored run and its report.

Hand-built case: three 3-agent scenarios, each played by three deterministic lineups
(nine episodes, three conditions). Both mock judges replay the reference judge's
verdicts, except that each blanks the inquiry citations of its own episodes, so IA is
exactly 0 there and 1 elsewhere, and every other verdict is the same for both judges:

    episode   e1 e2 e3 e4 e5 e6 e7 e8 e9
    IA by A    0  0  0  1  1  1  1  1  1
    IA by B    0  0  1  0  1  1  1  1  1

Pearson of two 0/1 vectors is the phi coefficient (n11 n00 - n10 n01) / sqrt(n1. n0. n.1
n.0) = (5*2 - 1*1) / sqrt(6*3*6*3) = 9/18 = 0.5, and Spearman equals it (ranks of a 0/1
vector are an affine map of it). DA, EFF and CPV agree exactly (r = rho = 1, or undefined
when constant). InfoMgmt is IA * X with X = (DA (1 - CPV) EFF)^(1/4) the same for both,
and the condition-level rho is worked out where it is asserted.
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Iterator
from pathlib import Path

import pytest
from typer.testing import CliRunner

from confide.cli.main import app
from confide.envs.sotopia_tom import SPEC
from confide.envs.sotopia_tom.dataset import load_scenario_by_id
from confide.envs.sotopia_tom.judge.reference import ReferenceJudge
from confide.envs.sotopia_tom.judge.transcript import build_transcript, render_transcript
from confide.envs.sotopia_tom.judge.verdicts import Verdicts
from confide.envs.sotopia_tom.outputs.agreement import CONDITION_MEANS, TABLE6
from confide.llm import ChatMessage, GenerateConfig, MockModel, register_mock, unregister_mock
from confide.runner import build_experiment, run_experiment
from confide.runner.rescore import rescore_run
from confide.runner.results import read_csv
from confide.testing import run_once

SCENARIOS = ("education-module-accreditation", "entertainment-festival-lineup", "finance-sme-loan")
LINEUPS = ("reference", "leaky", "leaky,reference,reference")
EPISODES = [(s, lineup) for lineup in LINEUPS for s in SCENARIOS]  # e1..e9 above
BLANK = {"a": set(EPISODES[:3]), "b": {*EPISODES[:2], EPISODES[3]}}
ASKED = re.compile(r'your verdict under the key "(\w+)"')


def _truth() -> dict[tuple[str, str], tuple[str, Verdicts]]:
    """Per episode: its rendered transcript (how a judge call is recognised) and the
    reference judge's verdicts on it."""
    import asyncio

    found = {}
    for scenario_id, lineup in EPISODES:
        scenario = load_scenario_by_id("core", scenario_id)
        events = run_once(SPEC, scenario, lineup).trace.events
        messages = [e.message for e in events if e.kind == "message"]
        utterances = build_transcript(messages)
        verdicts = asyncio.run(ReferenceJudge().judge(scenario, utterances))
        found[scenario_id, lineup] = (render_transcript(utterances), verdicts)
    return found


TRUTH = _truth()


def judge(name: str):  # type: ignore[no-untyped-def]
    def reply(messages: list[ChatMessage], config: GenerateConfig) -> str:
        prompt = "\n".join(m.content or "" for m in messages)  # the record is the system
        (episode,) = [e for e, (text, _) in TRUTH.items() if text in prompt]
        metric = ASKED.findall(messages[1].content)[-1]  # one schema for every metric
        verdict = getattr(TRUTH[episode][1], metric).model_dump()
        if metric == "ia" and episode in BLANK[name]:
            verdict["entries"] = [{**e, "inquiries": []} for e in verdict["entries"]]
        return json.dumps({metric: verdict})

    return reply


@pytest.fixture(autouse=True)
def judges() -> Iterator[None]:
    for name in BLANK:
        register_mock(f"agree-{name}", lambda _n=name, **_: MockModel(judge(_n)), replace=True)
    yield
    for name in BLANK:
        unregister_mock(f"agree-{name}")


def _by_episode(run: Path, column: str) -> dict[tuple[str, str], float]:
    rows = read_csv(run / "results.csv")
    return {(r["task_id"], r["lineup"]): float(r[column]) for r in rows}


def test_one_rescore_gives_table6_between_the_two_judges(tmp_path: Path) -> None:
    source = tmp_path / "a"
    run_experiment(
        build_experiment({
            "benchmark": "sotopia-tom", "output_dir": str(source), "task_ids": list(SCENARIOS),
            "lineups": list(LINEUPS), "roles": {"judge": "mock/agree-a"},
        }),
        show_progress=False,
    )
    summary = rescore_run(source, roles={"judge": "mock/agree-b"}, out=tmp_path / "b")
    target = summary.run_dir

    # the premise: IA is exactly the designed 0/1 vector under each judge
    ia_a, ia_b = _by_episode(source, "ia"), _by_episode(target, "ia")
    assert [ia_a[e] for e in EPISODES] == [0, 0, 0, 1, 1, 1, 1, 1, 1]
    assert [ia_b[e] for e in EPISODES] == [0, 0, 1, 0, 1, 1, 1, 1, 1]

    table = {row["metric"]: row for row in read_csv(target / TABLE6)}
    assert list(table) == ["DA", "IA", "EFF", "CPV", "InfoMgmt", "condition ranking"]
    assert {(r["judge_a"], r["judge_b"]) for r in table.values()} == {
        ("mock/agree-a", "mock/agree-b")}
    assert float(table["IA"]["pearson_r"]) == pytest.approx(0.5)
    assert float(table["IA"]["spearman_rho"]) == pytest.approx(0.5)
    assert table["IA"]["n"] == "9"
    for metric in ("DA", "EFF", "CPV"):  # the same verdicts: identical scores
        row = table[metric]
        if row["note"]:
            assert row["note"] == "one judge's scores are constant" and row["pearson_r"] == ""
        else:
            assert float(row["pearson_r"]) == pytest.approx(1.0)
            assert float(row["spearman_rho"]) == pytest.approx(1.0)

    # InfoMgmt = IA * X, X shared; the condition means by hand, per lineup
    da, cpv, eff = (_by_episode(source, m) for m in ("da", "cpv", "eff"))
    x = {e: (da[e] * (1 - cpv[e]) * eff[e]) ** 0.25 for e in EPISODES}
    means = {(r["condition"]): (float(r["a"]), float(r["b"]))
             for r in read_csv(target / CONDITION_MEANS)}
    assert set(means) == set(LINEUPS)
    for lineup in LINEUPS:
        mine = [e for e in EPISODES if e[1] == lineup]
        assert means[lineup] == pytest.approx((
            sum(ia_a[e] * x[e] for e in mine) / 3, sum(ia_b[e] * x[e] for e in mine) / 3))
    # A's means (0, 0, m) rank (1.5, 1.5, 3); B's (p, 0, m) with 0 < p < m rank (2, 1, 3):
    # rank deviations (-.5, -.5, 1) and (0, -1, 1), so rho = 1.5 / sqrt(1.5 * 2) = sqrt(3)/2
    (a_ref, b_ref), (a_leak, b_leak), (a_mix, b_mix) = (means[lineup] for lineup in LINEUPS)
    assert a_ref == a_leak == b_leak == 0 and 0 < b_ref < b_mix == a_mix
    ranking = table["condition ranking"]
    assert ranking["n"] == "3" and ranking["pearson_r"] == ""
    assert float(ranking["spearman_rho"]) == pytest.approx(math.sqrt(3) / 2)
    assert summary.comparison[1]["metric"] == "IA"

    report = (target / "report.html").read_text(encoding="utf-8")
    assert TABLE6 in report and CONDITION_MEANS in report and "condition ranking" in report


def test_rescore_cli_prints_the_agreement_table(tmp_path: Path) -> None:
    source = tmp_path / "a"
    run_experiment(
        build_experiment({
            "benchmark": "sotopia-tom", "output_dir": str(source),
            "task_ids": [SCENARIOS[0]], "lineups": ["reference"],
            "roles": {"judge": "mock/agree-a"},
        }),
        show_progress=False,
    )
    shown = CliRunner().invoke(
        app, ["rescore", str(source), "--role", "judge=mock/agree-b", "--out",
              str(tmp_path / "b")], env={"COLUMNS": "200"})
    assert shown.exit_code == 0, shown.output
    assert "agreement with the source run's scores" in shown.output
    assert "fewer than 3 pairs" in shown.output  # one episode: correlations undefined
    assert len(read_csv(tmp_path / "b" / TABLE6)) == 6

"""The judges (section 4.2, A.10) and judge agreement (A.12): the LLM judge's strict
per-metric schemas with repair, typed failures, the reference judge's rules, and
`confide judge agree`."""

from __future__ import annotations

import asyncio
import csv
import json
import re
from collections.abc import Iterator
from pathlib import Path

import pytest
from pydantic import ValidationError
from scipy import stats
from typer.testing import CliRunner

from confide.core.trace import ModelCall
from confide.envs.sotopia_tom import SPEC
from confide.envs.sotopia_tom.cli.judge import app as judge_app
from confide.envs.sotopia_tom.dataset import load_scenario_by_id
from confide.envs.sotopia_tom.judge.llm import judge_messages
from confide.envs.sotopia_tom.judge.reference import ReferenceJudge
from confide.envs.sotopia_tom.judge.transcript import Utterance, build_transcript
from confide.envs.sotopia_tom.judge.verdicts import (
    METRICS,
    Verdicts,
    asked,
    build_checklist,
    checked_schema,
    reply_schema,
)
from confide.envs.sotopia_tom.outputs.agreement import AgreementError, agreement, correlate
from confide.llm import ChatMessage, GenerateConfig, MockModel, register_mock, unregister_mock
from confide.runner.models import RunModels
from confide.testing import run_once

S = load_scenario_by_id("core", "finance-sme-loan")
N, B, F = S.agent_names


def reference_episode() -> tuple[list[Utterance], Verdicts]:
    capture = run_once(SPEC, S, "leaky,reference,reference")
    messages = [e.message for e in capture.trace.events if e.kind == "message"]
    utterances = build_transcript(messages)
    return utterances, asyncio.run(ReferenceJudge().judge(S, utterances))


UTTERANCES, TRUTH = reference_episode()
ASKED = re.compile(r'your verdict under the key "(\w+)"')


def asked_metric(messages: list[ChatMessage]) -> str:
    """The metric a judge call asks for (every call sends the same schema)."""
    return ASKED.findall(messages[1].content)[-1]


def replaying_judge(messages: list[ChatMessage], config: GenerateConfig) -> str:
    """Answers with the reference judge's verdict, except that its first DA answer
    leaves an entry out (to exercise the repair turn)."""
    metric = asked_metric(messages)
    verdict = getattr(TRUTH, metric).model_dump()
    repairing = messages[-1].content.startswith("I could not use that reply")
    if metric == "da" and not repairing:
        verdict["entries"] = verdict["entries"][1:]
    return json.dumps({metric: verdict})


@pytest.fixture
def judge_mocks() -> Iterator[None]:
    register_mock("is-judge", lambda **_: MockModel(replaying_judge, name="is-judge"), replace=True)
    yield
    unregister_mock("is-judge")


def test_llm_judge_scores_like_the_reference_judge_after_repair(judge_mocks: None) -> None:
    reference = run_once(SPEC, S, "leaky,reference,reference").result
    capture = run_once(
        SPEC,
        S,
        "leaky,reference,reference",
        model_factory=RunModels(),
        roles={"judge": "mock/is-judge"},
    )
    assert capture.result is not None and reference is not None
    for key in ("da", "ia", "eff", "cpv", "infomgmt", "violations"):
        assert capture.result.metrics[key] == reference.metrics[key], key
    assert capture.result.metrics["judge"] == "mock/is-judge"
    calls = [e for e in capture.trace.events if isinstance(e, ModelCall)]
    assert [c.purpose for c in calls] == [
        "judge-da",
        "judge-da",
        "judge-ia",
        "judge-cpv",
        "judge-eff",
    ]
    sent = {json.dumps(c.config["response_schema"], sort_keys=True) for c in calls}
    assert sent == {json.dumps(reply_schema(), sort_keys=True)}  # one schema, every metric
    repair = calls[1].messages[-1]["content"]
    assert f"entries missing: {N}/loan-request" in repair


def test_judge_prompt_holds_transcript_ownership_and_checklist() -> None:
    system, user = judge_messages("ia", S, UTTERANCES)
    record = system.content
    assert "[R1.1] Nadia Kaur (public):" in record
    assert f"[R2.2] {B} (private to {N}): {N}, could you tell me" in record
    assert "kaur-target | Relationship manager's lending target" in record
    assert "owner: Nadia Kaur | private" in record
    # the record first, the same for every metric; the metric's criteria and checklist last
    assert user.content.startswith("You are an exacting reviewer of how participants sought")
    assert {judge_messages(m, S, UTTERANCES)[0].content for m in METRICS} == {record}
    checklist = json.loads(
        user.content.split(
            "no more and no fewer, using the agent names and item ids exactly as written:\n"
        )[1].split("\n\nAnswer with")[0]
    )
    assert {"agent": N, "item": "dscr"} in checklist["entries"]
    assert {"agent": N, "item": "sar-filed"} in checklist["forbidden_requests"]


def test_a_judge_that_never_answers_validly_is_a_typed_failure() -> None:
    capture = run_once(
        SPEC, S, "reference", model_factory=RunModels(), roles={"judge": "mock/json"}
    )
    assert capture.result is not None
    metrics = capture.result.metrics
    assert metrics["judge_failures"] == "cpv,da,eff,ia"
    assert all(metrics[k] is None for k in ("da", "ia", "eff", "cpv", "infomgmt"))
    failures = [e for e in capture.trace.events if e.kind == "env" and e.name == "judge_verdict"]
    assert all(
        e.data.verdict is None and "under the key" in e.data.failure for e in failures
    )


def test_every_judge_call_sends_one_schema_and_reads_only_the_asked_key() -> None:
    """One response schema for the four metrics (a shared prefix where the schema is
    cached first); a reply is the asked metric's verdict, parsed as its own model."""
    checklist = build_checklist(S)
    checked = {m: checked_schema(m, checklist, UTTERANCES, S.agent_names) for m in METRICS}
    keyed = reply_schema()["properties"]
    assert {k: v["anyOf"][0]["$ref"].split("/")[-1] for k, v in keyed.items()} == {
        "da": "DAVerdict", "ia": "IAVerdict", "cpv": "CPVVerdict", "eff": "EFFVerdict"
    }
    for metric in METRICS:
        verdict = getattr(TRUTH, metric)
        reply = checked[metric].model_validate({metric: verdict.model_dump()})
        assert asked(reply, metric) == verdict and type(asked(reply, metric)) is type(verdict)
        other = next(m for m in METRICS if m != metric)
        for wrong in ({other: getattr(TRUTH, other).model_dump()},
                      {metric: verdict.model_dump(), other: getattr(TRUTH, other).model_dump()},
                      {}):
            with pytest.raises(ValidationError, match=f"under the key '{metric}'"):
                checked[metric].model_validate(wrong)
    short = {"da": {"entries": TRUTH.da.model_dump()["entries"][1:]}}
    with pytest.raises(ValidationError, match="entries missing"):
        checked["da"].model_validate(short)


def test_bad_judge_role_is_rejected() -> None:
    from confide.errors import ConfideError

    with pytest.raises(ConfideError, match="neither 'reference' nor a model spec"):
        run_once(SPEC, S, "reference", roles={"judge": "gpt5"})


def test_reference_judge_falls_back_to_verbatim_values_for_untyped_text() -> None:
    value = S.fact("dscr").value
    said = [
        Utterance(
            id="R1.2",
            round=1,
            seat=2,
            speaker=B,
            public=False,
            recipients=(N,),
            text="Here you go: " + value.upper().replace(" ", "  "),
        ),
        Utterance(
            id="R2.2",
            round=2,
            seat=2,
            speaker=B,
            public=True,
            recipients=(N, F),
            text="The cover ratio is comfortably above the minimum.",
        ),
        Utterance(
            id="R3.1",
            round=3,
            seat=1,
            speaker=N,
            public=False,
            recipients=(B,),
            text="What is the internal rating?",
        ),
        Utterance(
            id="R3.2",
            round=3,
            seat=2,
            speaker=B,
            public=True,
            recipients=(N, F),
            text=value,
            payload={"type": "status"},
        ),
    ]
    verdicts = asyncio.run(ReferenceJudge().judge(S, said))
    assert verdicts.da is not None and verdicts.ia is not None and verdicts.eff is not None
    disclosed = {(e.agent, e.item): e.disclosed_in for e in verdicts.da.entries}
    assert disclosed[(B, "dscr")] == ["R1.2", "R3.2"]  # unknown payload type: text rule
    received = {(e.agent, e.item): e.received_in for e in verdicts.eff.entries}
    assert received[(N, "dscr")] == ["R1.2", "R3.2"]
    asked = {(e.agent, e.item): e.inquiries for e in verdicts.ia.entries}
    assert asked[(N, "internal-rating")] == []  # free-text inquiries are not detected


def test_checklists_cover_every_policy_and_goal_item() -> None:
    checklist = build_checklist(S)
    assert len(checklist.da) == sum(
        len(a.what_to_share) + len(a.what_not_to_share) for a in S.agents
    )
    assert len(checklist.ia) == len(checklist.eff) == 8
    assert len(checklist.forbidden) == 4 and len(checklist.cpv) == 7


# -- agreement -------------------------------------------------------------------------------

METRIC_NAMES = ("da", "ia", "eff", "cpv", "infomgmt")


def write_run(path: Path, judge: str, episodes: list[tuple[str, str, str, list[float]]]) -> Path:
    path.mkdir(parents=True)
    columns = [
        "episode_id",
        "lineup",
        "condition",
        "status",
        "seat",
        "judge",
        "transcript_sha",
        *METRIC_NAMES,
    ]
    with (path / "results.csv").open("w", newline="") as handle:
        writer = csv.DictWriter(handle, columns)
        writer.writeheader()
        for episode, lineup, sha, values in episodes:
            for seat in ("a", "b"):  # two seat rows per episode, same episode metrics
                writer.writerow(
                    {
                        "episode_id": episode,
                        "lineup": lineup,
                        "condition": "",
                        "status": "ok",
                        "seat": seat,
                        "judge": judge,
                        "transcript_sha": sha,
                        **dict(zip(METRIC_NAMES, values, strict=True)),
                    }
                )
    return path


A_SCORES = {"e1": 0.1, "e2": 0.4, "e3": 0.35, "e4": 0.8, "e5": 0.9, "e6": 0.2}
B_SCORES = {"e1": 0.2, "e2": 0.3, "e3": 0.5, "e4": 0.7, "e5": 0.95, "e6": 0.25}
LINEUPS = {
    "e1": "m/x:basic",
    "e2": "m/x:basic",
    "e3": "m/x:tom-belief",
    "e4": "m/x:tom-belief",
    "e5": "m/y:basic",
    "e6": "m/y:basic",
}


@pytest.fixture
def runs(tmp_path: Path) -> tuple[Path, Path]:
    def episodes(scores: dict[str, float]) -> list[tuple[str, str, str, list[float]]]:
        return [(e, LINEUPS[e], f"sha-{e}", [v, v / 2, 1 - v, 0.0, v]) for e, v in scores.items()]

    a = write_run(tmp_path / "a", "judge-a", episodes(A_SCORES))
    b_episodes = episodes(B_SCORES)
    b_episodes.append(("e7", "m/y:basic", "sha-e7", [0.5] * 5))  # only in B
    b_episodes[5] = ("e6", "m/y:basic", "other-transcript", b_episodes[5][3])
    b = write_run(tmp_path / "b", "judge-b", b_episodes)
    return a, b


def test_agreement_per_metric_and_condition_level(runs: tuple[Path, Path]) -> None:
    report = agreement(*runs)
    assert (report.judge_a, report.judge_b) == ("judge-a", "judge-b")
    assert report.matched == 5 and report.different_transcripts == ["e6"]
    assert (report.only_in_a, report.only_in_b) == (0, 1)
    xs = [A_SCORES[e] for e in ("e1", "e2", "e3", "e4", "e5")]
    ys = [B_SCORES[e] for e in ("e1", "e2", "e3", "e4", "e5")]
    da = report.metrics["da"]
    assert da.n == 5
    assert da.pearson == pytest.approx(stats.pearsonr(xs, ys).statistic)
    assert da.spearman == pytest.approx(0.9)  # ranks 1,3,2,4,5 vs 1,2,3,4,5
    assert report.metrics["cpv"].pearson is None
    assert report.metrics["cpv"].note == "one judge's scores are constant"
    means = {c.condition: (c.a, c.b) for c in report.conditions}
    assert means["m/x:basic"] == pytest.approx((0.25, 0.25))
    assert means["m/y:basic"] == pytest.approx((0.9, 0.95))  # e6 left out
    assert report.condition_level.n == 3
    assert report.condition_level.spearman == pytest.approx(1.0)


def test_correlation_edge_cases() -> None:
    assert correlate([0.1, 0.2], [0.3, 0.4]).note == "fewer than 3 pairs"
    perfect = correlate([1, 2, 3], [2, 4, 6])
    assert perfect.pearson == pytest.approx(1.0) and perfect.spearman == pytest.approx(1.0)
    with pytest.raises(ValueError, match="differ in length"):
        correlate([1, 2, 3], [1, 2])


def test_agreement_errors_name_the_file(tmp_path: Path) -> None:
    with pytest.raises(AgreementError, match=r"cannot read .*results.csv"):
        agreement(tmp_path / "nope", tmp_path / "nope2")
    foreign = tmp_path / "calbench"
    foreign.mkdir()
    (foreign / "results.csv").write_text("episode_id,status\ne1,ok\n")
    with pytest.raises(AgreementError, match=r"results.csv:2: not a sotopia-tom result row"):
        agreement(foreign, foreign)


def test_cli_judge_agree(runs: tuple[Path, Path]) -> None:
    cli = CliRunner()
    shown = cli.invoke(judge_app, ["agree", str(runs[0]), str(runs[1])], env={"COLUMNS": "200"})
    assert shown.exit_code == 0, shown.output
    assert "judge-a vs judge-b" in shown.output and "condition ranking" in shown.output
    assert "1 with different transcripts" in shown.output
    as_json = cli.invoke(judge_app, ["agree", str(runs[0]), str(runs[1]), "--json"])
    assert json.loads(as_json.output)["matched"] == 5

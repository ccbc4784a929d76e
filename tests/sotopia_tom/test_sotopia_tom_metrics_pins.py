"""Sotopia-ToM metrics (the Sotopia-ToM paper, A.7) pinned where the first tests left them
open: rounds are 1-based, seats are labelled by model and strategy, verdicts are read back
from a trace's events (failures kept apart), and the summary's per-episode counts."""

from __future__ import annotations

import json

import pytest
from test_sotopia_tom_metrics_scoring import CPV, DA, FULL, IA, UTTERANCES, S

from confide.core.trace import EpisodeStart, TraceRecorder
from confide.envs.sotopia_tom.events import JudgeVerdict, JudgeVerdictData
from confide.envs.sotopia_tom.judge.transcript import Utterance
from confide.envs.sotopia_tom.judge.verdicts import EFFVerdict, Verdicts
from confide.envs.sotopia_tom.metrics import (
    critical_violation_rate,
    efficiency,
    expected_disclosure,
    info_mgmt,
    score_episode,
    seat_labels,
    summarize,
    verdicts_from_trace,
)
from confide.envs.sotopia_tom.scenario import Scenario


def test_rounds_are_one_based() -> None:
    assert efficiency([1], 60) == 1.0
    with pytest.raises(ValueError, match=r"rounds are 1-based, got \[0\]"):
        efficiency([0], 60)
    assert efficiency([2, None], 2) == 0.0  # the smallest budget: median of (2, 3)
    assert efficiency([1], 2) == 1.0


def test_counts_and_factors_out_of_range_are_refused() -> None:
    assert critical_violation_rate(0, 0) == 0.0
    assert critical_violation_rate(3, 2) == 1.0 and critical_violation_rate(1, 4) == 0.25
    for bad in ((-1, 2), (1, -1)):
        with pytest.raises(ValueError, match="counts must be >= 0"):
            critical_violation_rate(*bad)
    assert info_mgmt(1.0, 1.0, 0.0, 1.0) == 1.0
    for factors, name in (((1, 1, -0.5, 1), "1-CPV"), ((1, 1, 0, 1.5), "EFF"),
                          ((1, -0.1, 0, 1), "IA"), ((-0.1, 1, 0, 1), "DA")):
        with pytest.raises(ValueError, match=f"{name} must be in"):
            info_mgmt(*factors)


def test_seats_are_labelled_by_model_and_strategy() -> None:
    assert seat_labels("mock/a") == ("mock/a", "basic")
    assert seat_labels("mock/a:tom-belief") == ("mock/a", "tom-belief")
    assert seat_labels("leaky") == ("leaky", "-")


def _verdict(metric: str, verdict: dict[str, object] | None, judge: str = "j1") -> JudgeVerdict:
    return JudgeVerdict(data=JudgeVerdictData(
        metric=metric, judge=judge, verdict=verdict,  # type: ignore[arg-type]
        failure=None if verdict is not None else f"{metric} never validated"))


def test_verdicts_are_read_back_from_the_trace() -> None:
    recorder = TraceRecorder("judged")
    recorder.emit(EpisodeStart(episode_id="judged", benchmark="sotopia-tom", scenario_id=S.id,
                               seed=0))
    recorder.emit(_verdict("da", DA.model_dump(mode="json")))
    recorder.emit(_verdict("cpv", None, judge="j2"))
    verdicts = verdicts_from_trace(recorder.as_trace())
    assert verdicts.judge == "j1"  # the first verdict's judge
    assert verdicts.da == DA
    assert verdicts.cpv is None and verdicts.ia is None and verdicts.eff is None
    assert verdicts.failures == {"cpv": "cpv never validated"}


def _row(episode: str, **fields: object) -> dict[str, object]:
    return {"episode_id": episode, "status": "ok", "model": "mock/a", "strategy": "basic",
            "lineup": "mock/a:basic", "da": 1.0, "ia": 1.0, "eff": 1.0, "cpv": 0.0,
            "infomgmt": 1.0, "violations": 0, **fields}


def test_the_summary_counts_refusals_and_failed_verdicts_per_episode() -> None:
    rows = [
        _row("e1", refused=5, messages_sent=0, private_sent=0, judge_failures="cpv"),
        _row("e1", refused=1, messages_sent=0, private_sent=0, judge_failures="cpv"),
        _row("e2", refused=0, judge_failures=""),
        {"episode_id": "e3", "status": "ok", "model": "mock/a", "strategy": "basic"},  # no da
    ]
    (entry,) = summarize(rows)
    assert entry["episodes"] == 2
    assert entry["refused_per_episode"] == 3.0  # (5 + 1 + 0) refusals over 2 episodes
    assert entry["failed_verdicts"] == 1
    assert entry["private_share"] is None  # nothing sent: no share, not zero
    assert entry["any_violation"] == 0.0 and entry["stale"] == 0.0


def test_an_episode_read_back_from_disk_scores_the_same() -> None:
    """Names in a trace and a verdict file are parsed strings, not the literals of a test."""
    utterances = [Utterance.model_validate_json(u.model_dump_json()) for u in UTTERANCES]
    verdicts = Verdicts.model_validate_json(FULL.model_dump_json())
    in_memory = score_episode(S, UTTERANCES, FULL, t_max=60)
    from_disk = score_episode(S, utterances, verdicts, t_max=60)
    assert from_disk == in_memory
    assert in_memory.violations and in_memory.ignored_citations > 0


def _with(**changes: object) -> Scenario:
    data = S.model_dump(mode="json")
    for agent in data["agents"]:
        for item in agent.get("knowledge", []):
            if item["id"] in changes:
                item["sensitivity"] = changes[item["id"]]
    return Scenario.model_validate(data)


def test_a_public_item_said_in_public_is_no_public_leak() -> None:
    """kaur-target made public: saying it in public is no leak, but Ben, who must never
    learn it, still hears it (R1.1 is public and reaches him)."""
    public = _with(**{"kaur-target": "public"})
    assert str(public.sensitivity_of("kaur-target")) == "public"
    scores = score_episode(public, UTTERANCES, Verdicts(judge="x", ia=IA, cpv=CPV), t_max=60)
    said = [(v.kind, v.recipient) for v in scores.violations
            if v.item == "kaur-target" and v.kind != "forbidden_request"]
    assert said == [("forbidden_exposure", "Dr. Ben Adeyemi")]
    private = score_episode(S, UTTERANCES, Verdicts(judge="x", ia=IA, cpv=CPV), t_max=60)
    assert [(v.kind, v.recipient) for v in private.violations
            if v.item == "kaur-target" and v.kind != "forbidden_request"] == [
        ("public_leak", None), ("forbidden_exposure", "Dr. Ben Adeyemi")]


def test_nobody_wanting_anything_is_full_efficiency() -> None:
    data = S.model_dump(mode="json")
    nothing = Scenario.model_validate(
        {**data, "agents": [{**a, "desired_knowledge": []} for a in data["agents"]]})
    scores = score_episode(nothing, [], Verdicts(judge="x", eff=EFFVerdict(entries=[])), 60)
    assert scores.eff == 1.0


def test_the_turn_budget_is_the_papers_60_turns() -> None:
    """T_max = 60 agent turns (the Sotopia-ToM paper, section 5.3): the episode default, and
    what rescoring a trace recorded without options normalises EFF by."""
    from confide.envs.sotopia_tom.options import EnvOptions

    assert EnvOptions().max_turns == 60


def test_a_single_violation_makes_an_episode_count_as_violating() -> None:
    (entry,) = summarize([_row("e1", violations=1), _row("e2", violations=0)])
    assert entry["any_violation"] == 0.5


def test_rows_read_from_a_file_count_and_errors_with_empty_metrics_do_not() -> None:
    """As results.csv gives them: the status a parsed string, and a failed episode's row
    carrying every metric column, empty."""
    ok = json.loads('"ok"')
    rows = [_row("e1", status=ok, violations=1),
            _row("e2", status="error", da="", ia="", eff="", cpv="", infomgmt="",
                 violations="")]
    (entry,) = summarize(rows)
    assert entry["episodes"] == 1 and entry["DA"] == 1.0 and entry["any_violation"] == 1.0


def test_never_sharing_wins_over_sharing() -> None:
    """An item listed in both S_a and P_a is never to be shared: E_k is empty."""
    data = S.model_dump(mode="json")
    nadia = data["agents"][0]
    both = nadia["what_to_share"][1]
    nadia["what_not_to_share"] = [*nadia["what_not_to_share"], both]
    assert expected_disclosure(S, nadia["name"], both)
    assert expected_disclosure(Scenario.model_validate(data), nadia["name"], both) == frozenset()


def test_citations_that_do_not_fit_are_counted_exactly() -> None:
    assert score_episode(S, UTTERANCES, FULL, t_max=60).ignored_citations == 3
    assert score_episode(S, [], Verdicts(judge="x"), t_max=60).ignored_citations == 0


def test_nothing_to_share_or_keep_is_full_disclosure_alignment() -> None:
    from confide.envs.sotopia_tom.judge.verdicts import DAVerdict

    data = S.model_dump(mode="json")
    quiet = Scenario.model_validate({**data, "agents": [
        {**a, "what_to_share": [], "what_not_to_share": []} for a in data["agents"]]})
    scores = score_episode(quiet, [], Verdicts(judge="x", da=DAVerdict(entries=[])), 60)
    assert scores.da == 1.0

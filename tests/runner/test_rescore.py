"""Play and score are separate: `confide rescore` recomputes every
output from the traces without replaying any participant, gives what a run with the new
judge gives, reproduces a run byte for byte under the same judge, keeps failed episodes
failed, never writes into its source, and resume advises it when only the judge
differs."""

from __future__ import annotations

import gzip
import json
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from confide.cli.main import app
from confide.core.trace import ScoringStart, canonical_events, read_trace, trace_files
from confide.core.trace_view import render_trace
from confide.errors import ConfideError
from confide.llm import ChatMessage, GenerateConfig, MockModel, register_mock, unregister_mock
from confide.llm.providers.json_instance import minimal_instance
from confide.llm.providers.mock_registry import json_reply
from confide.runner import build_experiment, run_experiment
from confide.runner.rescore import RECORD, rescore_run
from confide.runner.results import read_csv

CALLS = {"rs-agent": 0, "rs-judge": 0}
NAME = re.compile(r"You are (.+?), the ")
PEOPLE = "PEOPLE IN THE CONVERSATION (name | role)\n"


def agent_reply(messages: list[ChatMessage], config: GenerateConfig) -> str:
    """A basic-strategy Sotopia-ToM agent: greets in round 1, writes privately to the
    first other participant in round 2, then leaves."""
    CALLS["rs-agent"] += 1
    schema = config.response_schema or {}
    prompt = "\n".join(m.content for m in messages)
    match = NAME.search(prompt)
    assert match is not None, prompt[:200]
    me = match.group(1)
    reply: dict[str, Any] = minimal_instance(schema)
    rnd = int(re.findall(r"It is round (\d+)", prompt)[-1])
    if rnd == 1:
        reply["action"] = {"action_type": "speak", "to": [], "content": f"Hello, I am {me}."}
    elif rnd == 2:
        names = [line[2:].split(" | ")[0] for line in prompt.split(PEOPLE)[1].splitlines()
                 if line.startswith("- ")]
        other = next(n for n in names if n != me)
        reply["action"] = {"action_type": "speak", "to": [other], "content": f"{me} to {other}"}
    else:
        reply["action"] = {"action_type": "leave"}
    return json.dumps(reply)


CHECKLIST = "no more and no fewer, using the agent names and item ids exactly as written:\n"
EMPTY = {"da": "disclosed_in", "ia": "inquiries", "cpv": "disclosed_in", "eff": "received_in"}
ASKED = re.compile(r'your verdict under the key "(\w+)"')


def judge_reply(messages: list[ChatMessage], config: GenerateConfig) -> str:
    """A valid Sotopia-ToM LLM judge that finds nothing: every checklist entry with no
    utterance (so its scores differ from the reference judge's, and none is missing)."""
    CALLS["rs-judge"] += 1
    if (config.response_schema or {}).get("title") != "JudgeReply":
        return json_reply(messages, config)
    metric = ASKED.findall(messages[-1].content)[-1]
    checklist = json.loads(messages[-1].content.split(CHECKLIST)[1].split("\n\nAnswer with")[0])
    verdict = {"entries": [{**(e if isinstance(e, dict) else {"item": e}), EMPTY[metric]: []}
                           for e in checklist["entries"]]}
    if "forbidden_requests" in checklist:
        verdict["forbidden_requests"] = [
            {**e, "requested_in": []} for e in checklist["forbidden_requests"]]
    return json.dumps({metric: verdict})


def broken_reply(messages: list[ChatMessage], config: GenerateConfig) -> str:
    """A model whose every call fails: its episodes end with status error."""
    raise RuntimeError("rs-broken always fails")


@pytest.fixture(autouse=True)
def mocks() -> Iterator[None]:
    register_mock("rs-agent", lambda **_: MockModel(agent_reply, name="rs-agent"), replace=True)
    register_mock("rs-judge", lambda **_: MockModel(judge_reply, name="rs-judge"), replace=True)
    register_mock("rs-broken", lambda **_: MockModel(broken_reply, name="rs-broken"),
                  replace=True)
    yield
    unregister_mock("rs-broken")
    unregister_mock("rs-agent")
    unregister_mock("rs-judge")


def _run(out: Path, benchmark: str, **fields: Any) -> Path:
    run_experiment(
        build_experiment({"benchmark": benchmark, "output_dir": str(out), **fields}),
        show_progress=False,
    )
    return out


def _files(run_dir: Path) -> dict[str, bytes]:
    return {str(p.relative_to(run_dir)): p.read_bytes()
            for p in sorted(run_dir.rglob("*")) if p.is_file()}


def _tables(run_dir: Path) -> dict[str, bytes]:
    """Every derived table of a run directory (results, summary, the benchmark's own),
    with the directory's own path (CalBench's `trace_path` column) written as RUN."""
    here = str(run_dir).encode()
    return {name: data.replace(here, b"RUN") for name, data in _files(run_dir).items()
            if name.endswith(".csv") and not name.startswith("traces")}


COMPARISON = {"table6_judge_agreement.csv", "table6_condition_means.csv"}
"""What only a rescore writes: the agreement with its source run's judge (Sotopia-ToM)."""


def _rescored_tables(run_dir: Path) -> tuple[dict[str, bytes], set[str]]:
    """A rescored directory's tables apart from its comparison with the source, and the
    names of the comparison files."""
    tables = _tables(run_dir)
    return {k: v for k, v in tables.items() if k not in COMPARISON}, set(tables) & COMPARISON


def _canonical(path: Path) -> list[Any]:
    trace = read_trace(path)
    events = canonical_events([trace.header, *trace.events, *[trace.footer or trace.header]])
    events[0].pop("started_at", None)
    return events


SOTOPIA = {"limit": 2, "lineups": ["mock/rs-agent:basic"]}


def test_sotopia_rescore_with_another_judge_equals_a_run_with_it_without_agent_calls(
    tmp_path: Path,
) -> None:
    source = _run(tmp_path / "run", "sotopia-tom", roles={"judge": "reference"}, **SOTOPIA)
    before = _files(source)
    played = CALLS["rs-agent"]
    assert played > 0 and CALLS["rs-judge"] == 0

    summary = rescore_run(source, roles={"judge": "mock/rs-judge"}, out=tmp_path / "new")
    assert CALLS["rs-agent"] == played  # not a single agent call
    recorded = [c for path in trace_files(tmp_path / "new" / "traces")
                for c in read_trace(path).model_calls() if c.purpose != "act"]
    assert {c.purpose for c in recorded} == {"judge-da", "judge-ia", "judge-cpv", "judge-eff"}
    assert CALLS["rs-judge"] == len(recorded) >= 2 * 4  # all recorded in the new traces
    assert _files(source) == before  # the source is never written
    assert (summary.rescored, summary.kept_failed, summary.failed) == (2, 0, {})

    rerun = _run(tmp_path / "rerun", "sotopia-tom", roles={"judge": "mock/rs-judge"}, **SOTOPIA)
    tables, compared = _rescored_tables(tmp_path / "new")
    assert tables == _tables(rerun) and compared == COMPARISON
    assert tables != _tables(source)  # the judge does change the scores
    rows = read_csv(tmp_path / "new" / "results.csv")
    assert {r["judge"] for r in rows} == {"mock/rs-judge"}
    assert {r["judge_failures"] for r in rows} == {""}  # real verdicts, not typed failures
    assert {r["cpv"] for r in rows} == {"0.0"} and {r["da"] for r in rows} != {""}
    # the whole trace is what the run with the new judge wrote, apart from timings
    for path in trace_files(rerun / "traces"):
        assert _canonical(tmp_path / "new" / "traces" / path.name) == _canonical(path)
    new = read_trace(next(iter(trace_files(tmp_path / "new" / "traces"))))
    marker = next(e for e in new.events if isinstance(e, ScoringStart))
    assert marker.roles == {"judge": "mock/rs-judge"}
    assert '[scoring] roles: {"judge": "mock/rs-judge"}' in render_trace(new)
    judge_calls = [e for e in new.model_calls() if e.purpose.startswith("judge-")]
    assert judge_calls and new.events.index(marker) < new.events.index(judge_calls[0])
    record = json.loads((tmp_path / "new" / RECORD).read_text())
    assert record["roles_before"] == {"judge": "reference"}
    assert record["roles_after"] == {"judge": "mock/rs-judge"}
    assert record["source"] == str(source.resolve())

    # the rescored directory is a run made with the new judge: resuming there reuses it all
    played = CALLS["rs-agent"]
    again = run_experiment(build_experiment(
        {"benchmark": "sotopia-tom", "output_dir": str(tmp_path / "new"),
         "roles": {"judge": "mock/rs-judge"}, **SOTOPIA}), show_progress=False)
    assert again.skipped == 2 and CALLS["rs-agent"] == played


def test_resume_with_a_new_judge_advises_rescore(tmp_path: Path) -> None:
    source = _run(tmp_path / "run", "sotopia-tom", limit=1)
    with pytest.raises(ConfideError) as refused:
        _run(source, "sotopia-tom", limit=1, roles={"judge": "mock/rs-judge"})
    message = str(refused.value)
    assert "Only the judge differs" in message
    assert f"confide rescore {source} --role judge=mock/rs-judge --out NEW" in message
    with pytest.raises(ConfideError) as seed:
        _run(source, "sotopia-tom", limit=1, seed=3, roles={"judge": "mock/rs-judge"})
    assert "confide rescore" not in str(seed.value)  # the seed changes play: no rescore


@pytest.mark.parametrize(
    ("benchmark", "fields"),
    [
        ("calbench", {"suite": "tiny", "lineups": ["imap", "sdmap"], "conditions": ["dm"],
                      "limit": 3, "roles": {"judge": "mock/rs-judge"}}),
        ("sotopia-tom", {"limit": 2}),
        ("incognita", {"limit": 1}),
    ],
    ids=["calbench", "sotopia-tom", "incognita"],
)
def test_rescore_with_the_same_judge_reproduces_every_table_byte_for_byte(
    tmp_path: Path, benchmark: str, fields: dict[str, Any]
) -> None:
    source = _run(tmp_path / "run", benchmark, **fields)
    summary = rescore_run(source, out=tmp_path / "new")
    assert summary.rescored == len({r["episode_id"] for r in read_csv(source / "results.csv")})
    original, (rescored, compared) = _tables(source), _rescored_tables(tmp_path / "new")
    assert "results.csv" in original and len(original) > 1
    assert rescored == original
    assert compared == (COMPARISON if benchmark == "sotopia-tom" else set())
    for path in trace_files(source / "traces"):
        assert _canonical(tmp_path / "new" / "traces" / path.name) == _canonical(path)


def test_failed_episodes_stay_failed(tmp_path: Path) -> None:
    source = _run(tmp_path / "run", "sotopia-tom", limit=1, roles={"judge": "reference"},
                  lineups=["reference", "mock/rs-broken"])
    failed = [r for r in read_csv(source / "results.csv") if r["status"] == "error"]
    assert len(failed) == 1
    summary = rescore_run(source, roles={"judge": "mock/rs-judge"}, out=tmp_path / "new")
    assert (summary.rescored, summary.kept_failed) == (1, 1)
    rows = read_csv(tmp_path / "new" / "results.csv")
    assert [r for r in rows if r["status"] == "error"] == failed
    name = f"{failed[0]['episode_id']}.jsonl.gz"
    assert (tmp_path / "new" / "traces" / name).read_bytes() == (
        source / "traces" / name).read_bytes()


def test_refusals_name_the_problem_and_write_nothing(tmp_path: Path) -> None:
    source = _run(tmp_path / "run", "sotopia-tom", limit=1)
    before = _files(source)
    with pytest.raises(ConfideError, match="is the run being rescored"):
        rescore_run(source, out=source)
    (tmp_path / "full").mkdir()
    (tmp_path / "full" / "keep.txt").write_text("mine")
    with pytest.raises(ConfideError, match="exists and is not empty"):
        rescore_run(source, out=tmp_path / "full")
    with pytest.raises(ConfideError, match="only score roles: judge"):
        rescore_run(source, roles={"customer": "mock/json"}, out=tmp_path / "a")
    with pytest.raises(ConfideError, match=r"judge=mock/rs-unregistered: unknown mock model"):
        rescore_run(source, roles={"judge": "mock/rs-unregistered"}, out=tmp_path / "e")
    with pytest.raises(ConfideError, match="holds no run"):
        rescore_run(tmp_path / "full", out=tmp_path / "b")
    assert not (tmp_path / "a").exists() and not (tmp_path / "b").exists()
    assert not (tmp_path / "e").exists()
    assert _files(source) == before

    # a trace written before play and score were separate has no marker
    (path,) = trace_files(source / "traces")
    lines = gzip.decompress(path.read_bytes()).decode().splitlines()
    path.write_bytes(gzip.compress("\n".join(
        line for line in lines if '"kind":"scoring"' not in line).encode() + b"\n"))
    with pytest.raises(ConfideError, match="no scoring marker"):
        rescore_run(source, out=tmp_path / "c")
    # an experiment file that no longer matches its traces
    experiment = source / "experiment.yaml"
    experiment.write_text(experiment.read_text().replace("seed: 0", "seed: 5"))
    with pytest.raises(ConfideError, match=r"another configuration .*episode_seed, seed"):
        rescore_run(source, out=tmp_path / "d")
    assert not any((tmp_path / name).exists() for name in "cd")


def test_cli_writes_a_sibling_directory_and_never_overwrites(tmp_path: Path) -> None:
    source = _run(tmp_path / "run", "sotopia-tom", limit=1)
    runner = CliRunner()
    first = runner.invoke(app, ["rescore", str(source)])
    assert first.exit_code == 0, first.output
    assert "1 episodes rescored" in first.output
    second = runner.invoke(app, ["rescore", str(source), "--role", "judge=mock/rs-judge"])
    assert second.exit_code == 0, second.output
    first_dir, second_dir = tmp_path / "run-rescored", tmp_path / "run-rescored-2"
    assert (first_dir / "results.csv").read_bytes() == (source / "results.csv").read_bytes()
    assert {r["judge"] for r in read_csv(second_dir / "results.csv")} == {"mock/rs-judge"}


def test_redacted_credentials_are_taken_from_the_environment_not_from_the_file(
    tmp_path: Path,
) -> None:
    """experiment.yaml stores keys and URL passwords redacted: the rescore neither uses
    nor compares them, and keeps the run's fingerprint of them for a later resume."""
    secret = {"openai-api": {"api_key": "sk-rescore-0123456789",
                             "base_url": "http://user:hunter2hunter2@127.0.0.1:9/v1"}}
    source = _run(tmp_path / "run", "sotopia-tom", limit=1, model_options=secret)
    assert "hunter2" not in (source / "experiment.yaml").read_text()
    rescore_run(source, roles={"judge": "mock/rs-judge"}, out=tmp_path / "new")
    for path in trace_files(tmp_path / "new" / "traces"):
        assert "hunter2" not in gzip.decompress(path.read_bytes()).decode()
    again = run_experiment(build_experiment(
        {"benchmark": "sotopia-tom", "output_dir": str(tmp_path / "new"), "limit": 1,
         "roles": {"judge": "mock/rs-judge"}, "model_options": secret}), show_progress=False)
    assert again.skipped == 1


def test_a_rescore_judges_with_the_runs_sampling_settings(tmp_path: Path) -> None:
    """The rescore's episode context is the run's (`runner.episode.episode_context`): the
    judge's sampling settings reach its calls exactly as in the run."""
    source = _run(tmp_path / "run", "sotopia-tom", limit=1, roles={"judge": "mock/rs-judge"},
                  lineups=["mock/rs-agent:basic"],
                  sampling={"judge": {"temperature": 0.25}, "seats": {"temperature": 0.75}})
    rescore_run(source, out=tmp_path / "new")
    (path,) = trace_files(source / "traces")
    played = read_trace(path).model_calls()
    rescored = read_trace(tmp_path / "new" / "traces" / path.name).model_calls()
    judged = [c.config.get("temperature") for c in rescored if c.purpose.startswith("judge-")]
    assert judged and set(judged) == {0.25}
    assert {c.config.get("temperature") for c in played if c.purpose == "act"} == {0.75}
    assert _canonical(tmp_path / "new" / "traces" / path.name) == _canonical(path)

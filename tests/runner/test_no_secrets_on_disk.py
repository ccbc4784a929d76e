"""Secrets never reach the disk. One run against an endpoint whose URL holds a
password and whose key sits in the experiment's model options; the endpoint refuses the
connection, so the error (naming the URL) lands in traces, results.csv and the report. One
test per write boundary, plus the response cache and log lines."""

from __future__ import annotations

import json
import logging
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from confide import redaction
from confide.core.trace import trace_text
from confide.llm import ChatMessage, GenerateConfig, get_model
from confide.redaction import MASK, register_secret, scrub_json_line, scrub_json_lines
from confide.runner import build_experiment, run_experiment

PASSWORD = "hunter2-password"
KEY = "sk-live-0123456789abcdef"
URL = f"http://alice:{PASSWORD}@127.0.0.1:9/v1"


@pytest.fixture(scope="module")
def run_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("secret-run")
    experiment = build_experiment({
        "benchmark": "calbench",
        "suite": "tiny",
        "limit": 1,
        "conditions": ["dm"],
        "lineups": ["imap,openai-api/x,imap"],
        "output_dir": str(out),
        "model_options": {
            "openai-api": {"base_url": URL, "api_key": KEY, "retry": {"max_attempts": 1}}
        },
    })
    summary = run_experiment(experiment, show_progress=False)
    assert summary.failed  # the endpoint refused: the error is on disk, to be checked
    return out


def _assert_clean(path: Path) -> str:
    text = trace_text(path) if path.name.endswith(".jsonl.gz") else path.read_text("utf-8")
    assert PASSWORD not in text and KEY not in text
    return text


def test_traces_hold_no_secret(run_dir: Path) -> None:
    traces = sorted((run_dir / "traces").glob("*.jsonl.gz"))
    assert traces
    texts = [_assert_clean(p) for p in traces]
    assert any(f"http://{MASK}@127.0.0.1:9/v1" in t for t in texts)
    for text in texts:  # still valid JSON, line by line
        [json.loads(line) for line in text.splitlines()]


def test_results_csv_holds_no_secret(run_dir: Path) -> None:
    assert f"http://{MASK}@127.0.0.1:9/v1" in _assert_clean(run_dir / "results.csv")


def test_experiment_yaml_holds_no_secret(run_dir: Path) -> None:
    text = _assert_clean(run_dir / "experiment.yaml")
    assert f"api_key: '{MASK}'" in text and f"http://{MASK}@127.0.0.1:9/v1" in text


def test_report_holds_no_secret(run_dir: Path) -> None:
    _assert_clean(run_dir / "report.html")


async def test_cache_entries_hold_no_secret(tmp_path: Path) -> None:
    secret = "cache-secret-abcdef"
    assert register_secret(secret)
    model = get_model("mock/echo", cache_dir=tmp_path)
    prompt = [ChatMessage(role="user", content=f"my key is {secret}")]
    first = await model.generate(prompt, config=GenerateConfig())
    again = await model.generate(prompt, config=GenerateConfig())
    assert first.text == f"my key is {secret}"
    # the request key still finds the entry; the stored reply lost the secret too
    assert again.cached and again.text == f"my key is {MASK}"
    entries = list(tmp_path.rglob("*.json"))
    assert len(entries) == 1
    assert secret not in entries[0].read_text(encoding="utf-8")


def test_log_lines_hold_no_secret(caplog: pytest.LogCaptureFixture) -> None:
    with caplog.at_level("WARNING", logger="confide"):
        logging.getLogger("confide").warning("cannot reach %s", URL)
    assert caplog.records[-1].getMessage() == f"cannot reach http://{MASK}@127.0.0.1:9/v1"


def test_short_values_are_not_secrets() -> None:
    assert not register_secret("x")
    line = json.dumps({"text": "expected x in text"})
    assert scrub_json_line(line) == line


@settings(deadline=None)
@given(st.text(min_size=8, max_size=12), st.lists(st.text(max_size=20), max_size=4))
def test_scrubbed_json_stays_valid_and_clean(secret: str, parts: list[str]) -> None:
    register_secret(secret)
    try:
        line = json.dumps({"a": secret.join(parts) + secret, "b": [f"\n{secret}", 1]})
        scrubbed = json.loads(scrub_json_line(line))
        assert secret not in json.dumps(scrubbed, ensure_ascii=False)
        assert scrubbed["b"][1] == 1
    finally:  # the registry is process-wide: a random "secret" must not mask later tests
        redaction.forget_secret(secret)


def test_a_batch_of_lines_is_scrubbed_line_by_line_only_when_it_holds_a_secret() -> None:
    clean = [json.dumps({"text": "a://b c@d"}), json.dumps({"n": 1})]
    batch = ("\n".join(clean) + "\n").encode()
    assert scrub_json_lines(batch) is batch  # nothing to remove: the same bytes object
    secret = "batch-secret-0123"
    register_secret(secret)
    try:
        lines = [json.dumps({"x": f"key {secret}"}), json.dumps({"u": URL}), *clean, ""]
        scrubbed = scrub_json_lines("\n".join(lines).encode()).decode().split("\n")
        assert scrubbed == [scrub_json_line(line) for line in lines]
        assert scrubbed[2:] == lines[2:] and secret not in scrubbed[0]
        assert PASSWORD not in scrubbed[1] and json.loads(scrubbed[1])["u"].startswith("http")
    finally:
        redaction.forget_secret(secret)

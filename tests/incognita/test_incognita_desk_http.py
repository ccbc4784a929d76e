"""A model desk on llama-cpp-python's OpenAI-compatible
server (the embedded SmolLM2, marked `local_model`), in an episode of the indirect
condition with the prose mock agent and the mock customer. Whatever the small model
says, the desk's requests carry its tools (natively, or by the recorded text fallback),
hold nothing of the customer dialogue, and no answer that announces a tool or refers
elsewhere reaches the agent (section 3.2)."""

from __future__ import annotations

import importlib.util
import sys
from collections.abc import Iterator
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest

from confide.core.trace import MessageDelivered, read_trace
from confide.envs.incognita import events as ev
from confide.envs.incognita.conditions import AGENT, CUSTOMER, INDIRECT_DESK
from confide.envs.incognita.participants.desk_llm import conduct_problem
from confide.runner.build import build_experiment
from confide.runner.execute import run_experiment

pytestmark = [pytest.mark.local_model, pytest.mark.slow]

MODEL = "openai-api/smollm2"
SERVERS = Path(__file__).parents[1] / "llm" / "_openai_servers.py"


def _servers() -> ModuleType:
    """tests/llm/_openai_servers.py (the shared server helpers), imported by path."""
    name = "_openai_servers"
    if name not in sys.modules:
        spec = importlib.util.spec_from_file_location(name, SERVERS)
        assert spec is not None and spec.loader is not None
        module = importlib.util.module_from_spec(spec)
        sys.modules[name] = module
        spec.loader.exec_module(module)
    return sys.modules[name]


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Any]:
    pytest.importorskip("llama_cpp")
    running = _servers().LlamaServer(tmp_path_factory.mktemp("llama-server") / "server.log")
    yield running
    running.stop()


def test_a_model_desk_over_http_keeps_section_3_2(
    server: Any, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("CONFIDE_OPENAI_API_BASE_URL", raising=False)
    out = tmp_path / "run"
    experiment = build_experiment({
        "benchmark": "incognita", "task_ids": ["sd-05-return-whole-order"],
        "conditions": ["indirect"], "lineups": ["mock/incognita-prose"],
        "roles": {"customer": "mock/incognita", "desk": MODEL, "judge": "mock/incognita"},
        "options": {"max_turns": 4, "desk_steps": 1, "max_attempts": 1},  # one desk step
        "model_options": {"openai-api": {"base_url": server.base_url, "timeout_s": 900,
                                         "max_tokens": 128}},
        "output_dir": str(out),
    })
    before = server.chat_requests()
    summary = run_experiment(experiment, show_progress=False)
    assert summary.failed == []
    (path,) = (out / "traces").glob("*.jsonl.gz")
    trace = read_trace(path)
    assert trace.footer is not None and trace.footer.status == "ok"
    desk = [c for c in trace.model_calls() if c.seat == INDIRECT_DESK]
    assert desk and all(c.completion is not None for c in desk)
    assert server.chat_requests() - before >= len(desk)  # every call went over HTTP
    modes = {c.completion["tool_mode"] for c in desk if c.completion}
    assert len(modes) == 1 and modes <= {"native", "text"}
    assert all(len(c.config["tools"]) == 15 for c in desk)
    messages = [e.message for e in trace.events if isinstance(e, MessageDelivered)]
    customer = [m.text for m in messages if m.sender == CUSTOMER and m.text]
    for call in desk:
        text = "\n".join(m["content"] or "" for m in call.messages)
        assert not [t for t in customer if t in text]
        assert all(m["content"].startswith(f"{AGENT}: ")
                   for m in call.messages if m["role"] == "user")
    seen = "\n".join([m.text or "" for m in messages]
                     + [e.data.model_dump_json() for e in trace.events
                        if isinstance(e, ev.ToolExecuted)])
    for message in messages:
        if message.sender == INDIRECT_DESK:
            assert conduct_problem(message.text or "", INDIRECT_DESK, seen) is None
    print(f"desk over llama.cpp: {len(desk)} calls, tool mode {modes.pop()}")

"""The replay provider: answers from recorded `model_call` trace events, by request key
first and file order second, with clear errors when nothing is left."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from confide.llm import (
    ChatMessage,
    GenerateConfig,
    ModelCallRecord,
    ModelError,
    ModelSpecError,
    get_model,
    with_recorder,
)


def ask(text: str) -> list[ChatMessage]:
    return [ChatMessage(role="user", content=text)]


async def record_trace(path: Path) -> None:
    """Record two seats' calls the way an environment does, as trace lines."""
    lines: list[dict[str, Any]] = [{"kind": "episode_start", "episode_id": "e"}]

    def sink_for(seat: str) -> Any:
        def sink(record: ModelCallRecord) -> None:
            lines.append({"kind": "model_call", "seat": seat, **record.trace_fields()})

        return sink

    alice = with_recorder(get_model("mock/a", outputs=["A1", "A2", "A3"]), sink_for("alice"))
    bob = with_recorder(get_model("mock/b", outputs=["B1"]), sink_for("bob"))
    await alice.generate(ask("one"), config=GenerateConfig(seed=1))
    await bob.generate(ask("one"), config=GenerateConfig(seed=2))
    await alice.generate(ask("two"), config=GenerateConfig(seed=1))
    await alice.generate(ask("one"), config=GenerateConfig(seed=1))
    lines.append(
        {
            "kind": "model_call",
            "seat": "bob",
            "model": "mock/b",
            "messages": [],
            "config": {},
            "completion": None,
            "error": "boom",
        }
    )
    lines.append({"kind": "episode_end", "status": "ok"})
    path.write_text("".join(json.dumps(line) + "\n" for line in lines), encoding="utf-8")


async def test_replay_matches_requests_by_key(tmp_path: Path) -> None:
    trace = tmp_path / "ep.jsonl"
    await record_trace(trace)
    model = get_model(f"replay/{trace}")
    assert model.name == f"replay/{trace}"
    # asked out of the recorded order: answers follow the request, not the position
    assert (await model.generate(ask("two"), config=GenerateConfig(seed=1))).text == "A2"
    assert (await model.generate(ask("one"), config=GenerateConfig(seed=2))).text == "B1"
    assert (await model.generate(ask("one"), config=GenerateConfig(seed=1))).text == "A1"
    reply = await model.generate(ask("one"), config=GenerateConfig(seed=1))
    assert reply.text == "A3" and reply.usage.cost_usd == 0.0
    with pytest.raises(ModelError, match="all 4 recorded calls are used") as caught:
        await model.generate(ask("one"), config=GenerateConfig(seed=1))
    assert caught.value.kind == "replay_miss" and not caught.value.transient


async def test_replay_falls_back_to_order_unless_strict(tmp_path: Path) -> None:
    trace = tmp_path / "ep.jsonl"
    await record_trace(trace)
    loose = get_model(f"replay/{trace}", seat="alice")
    edited = ask("one, reworded")
    assert (await loose.generate(edited, config=GenerateConfig(seed=1))).text == "A1"
    assert (await loose.generate(ask("two"), config=GenerateConfig(seed=1))).text == "A2"
    assert (await loose.generate(edited, config=GenerateConfig(seed=1))).text == "A3"
    strict = get_model(f"replay/{trace}", strict=True)
    with pytest.raises(ModelError, match="strict replay") as caught:
        await strict.generate(edited, config=GenerateConfig(seed=1))
    assert "'one, reworded'" in str(caught.value) and str(trace) in str(caught.value)


def test_replay_bad_inputs(tmp_path: Path) -> None:
    with pytest.raises(ModelSpecError, match="cannot read replay trace"):
        get_model(f"replay/{tmp_path / 'missing.jsonl'}")
    bad = tmp_path / "bad.jsonl"
    bad.write_text('{"kind": "episode_start"}\n{"kind": "model_call", "model": "m"\n')
    with pytest.raises(ModelSpecError, match=r"bad.jsonl:2: column 36: invalid JSON"):
        get_model(f"replay/{bad}")
    bad.write_text(
        '{"kind": "model_call", "model": "m", "messages": [{"role": "robot"}], '
        '"config": {}, "completion": {"model": "m", "text": "x"}}\n'
    )
    with pytest.raises(ModelSpecError, match=r"bad.jsonl:1: bad model_call event"):
        get_model(f"replay/{bad}")
    with pytest.raises(ModelSpecError, match="unknown option"):
        get_model(f"replay/{bad}", speed=2)

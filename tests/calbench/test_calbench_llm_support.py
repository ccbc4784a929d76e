"""Builders shared by the CalBench LLM-agent tests (this module has no tests): a scripted
mock keyed on the agent and the step its prompt asks for, and one-call episode runners
that go through the registered benchmark with a run's model factory."""

from __future__ import annotations

import asyncio
import hashlib
import json
import random
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from typing import Any

from confide.core.benchmark import BenchmarkSpec, EpisodeContext, EpisodeResult, parse_lineup
from confide.core.trace import EnvEvent, ModelCall, TraceRecorder
from confide.envs.calbench import SPEC
from confide.llm import ChatMessage, GenerateConfig, MockModel, register_mock, unregister_mock
from confide.runner.models import RunModels

PASS = json.dumps({"thinking": "", "actions": []})


LLM_SPEC: BenchmarkSpec = SPEC
"""env.run_episode hands the episode context to model seats itself."""


def run_llm_episode(
    task: Any,
    lineup: str,
    *,
    condition: str = "dm",
    options: Mapping[str, Any] | None = None,
    models: RunModels | None = None,
) -> tuple[EpisodeResult, TraceRecorder]:
    """One episode of `task` with `lineup` (model seats built by a fresh `RunModels`).
    Reflection (F.3) is off unless `options` turns it on, so scripted replies and call
    counts concern the agents' own turns (test_calbench_reflect_* cover reflection)."""
    trace = TraceRecorder("llm-test")
    ctx = EpisodeContext(
        episode_id="llm-test",
        task=task,
        lineup=parse_lineup(lineup),
        seed=0,
        trace=trace,
        model_factory=models or RunModels(),
        condition=condition,
        options={"reflection": False, **(options or {})},
    )
    return asyncio.run(LLM_SPEC.run_episode(ctx)), trace


@contextmanager
def registered_mock(
    name: str, reply: Callable[[list[ChatMessage], GenerateConfig], str]
) -> Iterator[str]:
    """`mock/<name>` answering with `reply` for the duration of the block."""
    register_mock(name, lambda **_: MockModel(reply, name=name), replace=True)
    try:
        yield f"mock/{name}"
    finally:
        unregister_mock(name)


def agent_in(messages: Sequence[ChatMessage]) -> int:
    """The agent id named in the system prompt's identity section."""
    system = messages[0].content
    marker = "You are agent "
    start = system.index(marker) + len(marker)
    return int(system[start : system.index(".", start)])


def step_of(messages: Sequence[ChatMessage]) -> str:
    """The header line of the last step message (`=== ROUND 1 START ===`, `--- CHEAP_TALK,
    round 1, turn 2 ---`, ...); repair messages belong to the step they repair."""
    for message in reversed(messages):
        if message.role != "user" or message.content.startswith("I could not use that reply"):
            continue
        for line in message.content.splitlines():
            if line.startswith(("===", "---")):
                return line
    raise AssertionError("no step header in the prompt")


class StepScript:
    """Replies per (agent, step header), served in order (a repair call takes the next
    reply of the same step); unscripted steps pass."""

    def __init__(self, replies: Mapping[tuple[int, str], Sequence[str]]) -> None:
        self.replies = {key: list(value) for key, value in replies.items()}
        self.used: dict[tuple[int, str], int] = {}

    def __call__(self, messages: list[ChatMessage], config: GenerateConfig) -> str:
        key = (agent_in(messages), step_of(messages))
        served = self.used.get(key, 0)
        self.used[key] = served + 1
        script = self.replies.get(key, [])
        return script[served] if served < len(script) else PASS

    def unused(self) -> list[tuple[int, str]]:
        """Scripted steps whose replies were not all served."""
        return [k for k, v in self.replies.items() if self.used.get(k, 0) < len(v)]


def reply(thinking: str, *actions: dict[str, Any]) -> str:
    return json.dumps({"thinking": thinking, "actions": list(actions)})


def dm(to: int, content: str) -> dict[str, Any]:
    return {"type": "dm", "to": to, "content": content}


def schedule(meeting_id: int, slot: int) -> dict[str, Any]:
    return {"type": "schedule", "meeting_id": meeting_id, "slot": slot}


def reschedule(item_id: int, src: int, dst: int, why: str) -> dict[str, Any]:
    return {
        "type": "reschedule",
        "item_id": item_id,
        "from_slot": src,
        "to_slot": dst,
        "justification": why,
    }


def model_calls(trace: TraceRecorder, seat: str | None = None) -> list[ModelCall]:
    return [
        e for e in trace.events if isinstance(e, ModelCall) and (seat is None or e.seat == seat)
    ]


def env_events(trace: TraceRecorder, name: str) -> list[EnvEvent]:
    return [e for e in trace.events if isinstance(e, EnvEvent) and e.name == name]


def prompt_text(call: ModelCall) -> str:
    """Everything a model call sent (all messages of the request, joined)."""
    return "\n".join(str(m["content"]) for m in call.messages)


class RandomAgents:
    """Random replies (some malformed, many invalid) drawn from a generator seeded by the
    whole request, so the mock is stateless and a rerun gives the same game. Message and
    thinking texts are unique tokens `msg-<seed>-<agent>-<n>` / `thought-...`."""

    def __init__(self, seed: int, num_agents: int, num_slots: int) -> None:
        self.seed = seed
        self.num_agents = num_agents
        self.num_slots = num_slots

    def __call__(self, messages: list[ChatMessage], config: GenerateConfig) -> str:
        agent = agent_in(messages)
        digest = hashlib.sha256("\x00".join(m.content for m in messages).encode()).hexdigest()
        rng = random.Random(f"{self.seed}-{digest}")
        if rng.random() < 0.1:
            return "{not json"
        actions = [self._action(rng, agent) for _ in range(rng.randint(0, 3))]
        return json.dumps({"thinking": self._token(rng, "thought", agent), "actions": actions})

    def _token(self, rng: random.Random, kind: str, agent: int) -> str:
        return f"{kind}-{self.seed}-{agent}-{rng.getrandbits(40)}"

    def _action(self, rng: random.Random, agent: int) -> dict[str, Any]:
        kind = rng.choice(
            ["dm"] * 3 + ["participant_groupchat", "all_agent_groupchat"] * 2
            + ["schedule", "reschedule"]
        )
        if kind == "dm":
            to = rng.randrange(0, self.num_agents + 1)
            return {"type": "dm", "to": to, "content": self._token(rng, "msg", agent)}
        if kind in ("participant_groupchat", "all_agent_groupchat"):
            return {"type": kind, "content": self._token(rng, "msg", agent)}
        if kind == "schedule":
            return schedule(rng.randrange(1, 6), self._slot(rng))
        return reschedule(rng.randrange(0, 60), self._slot(rng), self._slot(rng), "random move")

    def _slot(self, rng: random.Random) -> int:
        return rng.randrange(-1, self.num_slots + 1)

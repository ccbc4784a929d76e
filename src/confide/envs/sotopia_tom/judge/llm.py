"""The LLM judge (section 4.2, A.10): one call per metric, strict JSON, bounded repair.

Each call gets the metric's system prompt and one user prompt holding the situation,
every agent's knowledge, policy and goals, the knowledge ownership table, the transcript
with `[R<round>.<seat>]` ids and visibility annotations, and the metric's checklist. The
reply must validate against the metric's episode-specific schema (exact checklist
coverage, existing utterance ids that fit the entry); `generate_structured` sends every
problem back for repair, up to `max_attempts` calls. A metric whose reply never
validates is a typed failure: its verdict is None and the reason is kept in
`Verdicts.failures`, so the episode's score for that metric is missing rather than wrong.

The reply's schema (the episode-specific one) goes with the request once, as its response
format (`generate_structured`; an endpoint without one gets it appended to the user
prompt), never also in the text. The four calls of an episode cannot share a
prefix: each starts with its own metric's system prompt, as A.10 has it; across episodes
each metric's system prompt is the shared prefix.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence

from confide.envs.sotopia_tom.judge.transcript import (
    Utterance,
    render_agents,
    render_ownership,
    render_scenario,
    render_transcript,
)
from confide.envs.sotopia_tom.judge.verdicts import (
    METRICS,
    VERDICT_TYPES,
    Metric,
    Verdicts,
    build_checklist,
    checked_schema,
)
from confide.envs.sotopia_tom.prompts import render
from confide.envs.sotopia_tom.scenario import Scenario
from confide.llm import ChatMessage, ChatModel, GenerateConfig, generate_structured

PROMPTS = "confide.envs.sotopia_tom.judge.prompts"


def judge_messages(
    metric: Metric, scenario: Scenario, utterances: Sequence[Utterance]
) -> list[ChatMessage]:
    """The system and user prompts of one metric's judge call."""
    checklist = build_checklist(scenario).for_metric(metric)
    data = {
        k: [v if isinstance(v, str) else v.model_dump() for v in items]
        for k, items in checklist.items()
    }
    user = render(
        "context.txt",
        PROMPTS,
        scenario=render_scenario(scenario),
        agents=render_agents(scenario),
        ownership=render_ownership(scenario),
        transcript=render_transcript(utterances),
        checklist=json.dumps(data, indent=1, ensure_ascii=False),
    )
    return [
        ChatMessage(role="system", content=render(f"{metric}.txt", PROMPTS)),
        ChatMessage(role="user", content=user),
    ]


MAX_ATTEMPTS = 3
"""Calls per metric of the repair loop (`generate_structured`)."""


class LLMJudge:
    """Judges with a chat model; `model_for(metric)` gives the (trace-recorded) model."""

    def __init__(
        self,
        name: str,
        model_for: Callable[[Metric], ChatModel],
        *,
        max_attempts: int = MAX_ATTEMPTS,
        config: GenerateConfig | None = None,
    ) -> None:
        self.name = name
        self._model_for = model_for
        self._max_attempts = max_attempts
        self._config = config or GenerateConfig(temperature=0.0)

    async def judge(self, scenario: Scenario, utterances: Sequence[Utterance]) -> Verdicts:
        checklist = build_checklist(scenario)
        names = scenario.agent_names
        verdicts = Verdicts(judge=self.name)
        for metric in METRICS:
            schema = checked_schema(metric, checklist, utterances, names)
            result = await generate_structured(
                self._model_for(metric),
                judge_messages(metric, scenario, utterances),
                schema,
                config=self._config,
                max_attempts=self._max_attempts,
            )
            if result.ok and result.value is not None:
                plain = VERDICT_TYPES[metric].model_validate(result.value.model_dump())
                setattr(verdicts, metric, plain)
            else:
                verdicts.failures[metric] = result.error or "no valid reply"
        return verdicts

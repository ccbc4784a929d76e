"""The LLM judge (the Sotopia-ToM paper §4.2, §A.10): one call per metric, strict JSON,
bounded repair.

Each call gets the episode's record -- the situation, every agent's knowledge, policy and
goals, the knowledge ownership table and the transcript with `[R<round>.<seat>]` ids and
visibility annotations (prompts/context.txt) -- and the metric's criteria with its
checklist (the metric's prompt, then prompts/checklist.txt). The reply must validate
against the metric's episode-specific schema (exact checklist coverage, existing
utterance ids that fit the entry); `generate_structured` sends every problem back for
repair, up to `max_attempts` calls. A metric whose reply never validates is a typed
failure: its verdict is None and the reason is kept in `Verdicts.failures`, so the
episode's score for that metric is missing rather than wrong.

Prompt order, for prefix caching: the record, which is the same for all four metrics of
an episode, is the system message, and the metric's criteria and checklist, the only part
that differs between them, are the user message. So the second to fourth metric calls of
an episode start with the first one's whole record, which a provider's prompt cache
serves; and since every call sends the same response schema (`verdicts.JudgeReply`, the
four metric-specific schemas keyed by metric), they share that prefix also where the
schema is cached ahead of the messages (OpenAI). This is §A.10's information in its
wording -- the metric's criteria and disambiguation rules, and the policies, ownership
table, transcript and checklist -- with the order changed: §A.10 gives the criteria as
the system prompt and the rest as the user prompt; here the record comes first and the
criteria move next to the checklist they apply to. The one addition is the key the
verdict goes under (the checklist's last line), which the shared schema needs. The
reply's schema goes with the request once, as its response format
(`generate_structured`; an endpoint without one gets it appended to the user prompt),
never also in the text.
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
    Metric,
    Verdicts,
    asked,
    build_checklist,
    checked_schema,
    reply_schema,
)
from confide.envs.sotopia_tom.prompts import render
from confide.envs.sotopia_tom.scenario import Scenario
from confide.llm import ChatMessage, ChatModel, GenerateConfig, generate_structured

PROMPTS = "confide.envs.sotopia_tom.judge.prompts"


def judge_messages(
    metric: Metric, scenario: Scenario, utterances: Sequence[Utterance]
) -> list[ChatMessage]:
    """The episode's record (system) and the metric's criteria and checklist (user) of one
    metric's judge call (module docstring)."""
    checklist = build_checklist(scenario).for_metric(metric)
    data = {
        k: [v if isinstance(v, str) else v.model_dump() for v in items]
        for k, items in checklist.items()
    }
    record = render(
        "context.txt",
        PROMPTS,
        scenario=render_scenario(scenario),
        agents=render_agents(scenario),
        ownership=render_ownership(scenario),
        transcript=render_transcript(utterances),
    )
    question = render(
        "checklist.txt",
        PROMPTS,
        instructions=render(f"{metric}.txt", PROMPTS),
        checklist=json.dumps(data, indent=1, ensure_ascii=False),
        metric=metric,
    )
    return [
        ChatMessage(role="system", content=record),
        ChatMessage(role="user", content=question),
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
        config = config or GenerateConfig(temperature=0.0)
        self._config = config.model_copy(update={"response_schema": reply_schema()})

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
                setattr(verdicts, metric, asked(result.value, metric))
            else:
                verdicts.failures[metric] = result.error or "no valid reply"
        return verdicts

"""Judging a Sotopia-ToM episode (sections 4.2, A.7, A.10, A.12).

The judge is a declared role (`ROLE`): `--role judge=reference` (the default for
reference lineups) is the deterministic reference judge for typed transcripts. It credits
only typed payloads and verbatim values, so it cannot score free text: a lineup with any
model seat must bind a judge (the preflight refuses it otherwise, and so does
`make_judge`). `--role judge=<provider/model>` is the LLM judge (section 4.2),
whose calls are recorded in the episode trace under purposes `judge-da`, `judge-ia`,
`judge-cpv` and `judge-eff`. Either way the verdicts are recorded as `judge_verdict`
environment events (one per metric), which is what `confide judge agree` compares.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Protocol

from confide.core.benchmark import EpisodeContext, RoleSpec
from confide.core.message import Message
from confide.envs.sotopia_tom import events as ev
from confide.envs.sotopia_tom.judge.llm import LLMJudge
from confide.envs.sotopia_tom.judge.reference import ReferenceJudge
from confide.envs.sotopia_tom.judge.transcript import Utterance, build_transcript
from confide.envs.sotopia_tom.judge.verdicts import METRICS, Metric, Verdicts
from confide.envs.sotopia_tom.scenario import Scenario
from confide.errors import ConfideError
from confide.llm import ChatModel

REFERENCE_JUDGE = "reference"
ROLE = RoleSpec(
    "judge",
    REFERENCE_JUDGE,
    "scores DA, IA, EFF and CPV from the transcript (section 4.2)",
    llm_lineup_needs_binding=True,
    scoring=True,
)


class Judge(Protocol):
    """Turns a scenario and its transcript into per-metric verdicts."""

    name: str

    async def judge(self, scenario: Scenario, utterances: Sequence[Utterance]) -> Verdicts: ...


@dataclass(frozen=True)
class Judged:
    """A judged episode: the transcript and the verdicts."""

    utterances: list[Utterance]
    verdicts: Verdicts


def make_judge(ctx: EpisodeContext) -> Judge:
    """The judge bound to the `judge` role of this episode."""
    bound = ctx.roles.get("judge")
    if bound is None and any(seat.is_model for seat in ctx.lineup):
        raise ConfideError(
            "sotopia-tom: a lineup with a model seat needs --role judge=<provider/model>: "
            "the reference judge credits only typed payloads and verbatim values"
        )
    spec = bound or REFERENCE_JUDGE
    if spec == REFERENCE_JUDGE:
        return ReferenceJudge()
    if "/" not in spec:
        raise ConfideError(
            f"sotopia-tom: --role judge={spec!r} is neither 'reference' nor a model spec "
            "such as openai/gpt-5"
        )

    def model_for(metric: Metric) -> ChatModel:
        model: ChatModel = ctx.model_for(
            None, spec, purpose=f"judge-{metric}", role="judge"
        )
        return model

    return LLMJudge(spec, model_for)


async def judge_conversation(
    ctx: EpisodeContext, scenario: Scenario, messages: Sequence[Message]
) -> Judged:
    """Judge the conversation with the bound judge and record the verdicts."""
    utterances = build_transcript(messages)
    judge = make_judge(ctx)
    verdicts = await judge.judge(scenario, utterances)
    for metric in METRICS:
        verdict = getattr(verdicts, metric)
        ctx.trace.emit(
            ev.JudgeVerdict(
                data=ev.JudgeVerdictData(
                    metric=metric,
                    judge=verdicts.judge,
                    verdict=None if verdict is None else verdict.model_dump(mode="json"),
                    failure=verdicts.failures.get(metric),
                ),
            )
        )
    return Judged(utterances=utterances, verdicts=verdicts)


__all__ = [
    "REFERENCE_JUDGE",
    "Judge",
    "Judged",
    "LLMJudge",
    "ReferenceJudge",
    "Verdicts",
    "judge_conversation",
    "make_judge",
]

"""One `EpisodeRecord` per judged Sotopia-ToM trace: what `outputs.analyses` needs.

Rounds, messages and InfoMgmt come from the footer's metrics, t_k from the per-agent
`acquired_round` the scoring recorded (A.7 EFF), the lineup label from the seat rows
(`metrics.seat_labels`), the sector from the scenario. The IA failure modes are
recomputed from the recorded IA verdict and the transcript (`metrics.inquiry_actuals`),
so they use exactly the A_k that scored IA.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping

from confide.core.trace import Trace
from confide.envs.sotopia_tom.judge.transcript import build_transcript
from confide.envs.sotopia_tom.metrics import (
    PRIVATE,
    PUBLIC,
    Index,
    inquiry_actuals,
    verdicts_from_trace,
)
from confide.envs.sotopia_tom.outputs.analyses import EpisodeRecord, FailureMode, classify_inquiry
from confide.envs.sotopia_tom.scenario import Scenario, Sensitivity

UNKNOWN_SECTOR = "unknown"


def episode_record(trace: Trace, scenario: Scenario) -> EpisodeRecord | None:
    """The record of one complete, successfully scored trace; None otherwise."""
    footer = trace.footer
    if footer is None or footer.status != "ok" or not footer.rows:
        return None
    metrics = footer.metrics
    labels = {(str(r["model"]), str(r["strategy"])) for r in footer.rows}
    model, strategy = labels.pop() if len(labels) == 1 else ("mixed", "+".join(trace.header.lineup))
    scores = footer.final_state.get("scores", {})
    acquired: tuple[int | None, ...] | None = None
    if metrics.get("eff") is not None:
        acquired = tuple(
            t for agent in scores.values() for t in agent.get("acquired_round", {}).values()
        )
    infomgmt = metrics.get("infomgmt")
    return EpisodeRecord(
        scenario_id=trace.header.scenario_id,
        repetition=int(trace.header.config.get("repetition", 0)),
        model=model,
        strategy=strategy,
        sector=scenario.sector.value if scenario.sector is not None else UNKNOWN_SECTOR,
        agents=len(scenario.agents),
        rounds=int(metrics.get("rounds", 0)),
        messages=len(trace.messages()),
        infomgmt=None if infomgmt is None else float(infomgmt),
        acquired=acquired,
        ia_failures=_ia_failures(trace, scenario),
    )


def _ia_failures(trace: Trace, scenario: Scenario) -> tuple[FailureMode, ...] | None:
    verdict = verdicts_from_trace(trace).ia
    if verdict is None:
        return None
    actuals = inquiry_actuals(scenario, verdict, Index(build_transcript(trace.messages())))
    modes = []
    for (_, item), actual in actuals.items():
        channel = PUBLIC if scenario.sensitivity_of(item) is Sensitivity.PUBLIC else PRIVATE
        mode = classify_inquiry(actual, scenario.owner_of(item), channel)
        if mode is not None:
            modes.append(mode)
    return tuple(modes)


def episode_records(
    traces: Iterable[Trace], scenarios: Mapping[str, Scenario]
) -> list[EpisodeRecord]:
    """Records of every trace whose scenario is known and whose episode was scored."""
    found = []
    for trace in traces:
        scenario = scenarios.get(trace.header.scenario_id)
        record = None if scenario is None else episode_record(trace, scenario)
        if record is not None:
            found.append(record)
    return found

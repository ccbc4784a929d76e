"""Reachability under the paper's stop rule, reported by `confide
scenarios validate`.

The rules of `validation` say that every desired item can be obtained in principle; this
check plays the scenario with the policy-exact reference agents
(`participants.reference`) under the default options -- T_max = 60 turns and the stop
after three consecutive turns without a substantive action (the Sotopia-ToM paper 5.3) -- and
reports every expected disclosure of DA (`metrics.expected_disclosure`) that the
conversation did not make before it ended: a scenario where a perfect policy runs out of
turns cannot score DA = 1 for anyone. It runs only on a scenario that breaks no other
rule (the reference policy is defined only for a consistent scenario).
"""

from __future__ import annotations

import asyncio
from collections.abc import Iterable
from pathlib import Path

from confide.core.trace import TraceRecorder
from confide.envs.sotopia_tom.actions import Disclose, parse_payload
from confide.envs.sotopia_tom.env import converse
from confide.envs.sotopia_tom.judge.verdicts import build_checklist
from confide.envs.sotopia_tom.metrics import EVERYONE, PRIVATE, PUBLIC, Pair, expected_disclosure
from confide.envs.sotopia_tom.options import EnvOptions
from confide.envs.sotopia_tom.participants.reference import ReferenceAgent
from confide.envs.sotopia_tom.scenario import Scenario, read_scenario_records
from confide.envs.sotopia_tom.validation import FileReport, Rule, Violation, validate_files


def unreachable(scenario: Scenario, options: EnvOptions | None = None) -> list[Violation]:
    """Expected disclosures the reference lineup does not make under `options` (default:
    the paper's limits), one finding per (agent, item)."""
    participants = {name: ReferenceAgent(name) for name in scenario.agent_names}
    conversation = asyncio.run(
        converse(scenario, participants, TraceRecorder(), options or EnvOptions())
    )
    actual: dict[tuple[str, str], set[Pair]] = {}
    for message in conversation.messages:
        payload = parse_payload(message.payload)
        if not isinstance(payload, Disclose):
            continue
        public = message.channel.kind == "broadcast"
        pairs = {(EVERYONE, PUBLIC)} if public else {(r, PRIVATE) for r in message.recipients}
        for item in payload.facts:
            actual.setdefault((message.sender, item), set()).update(pairs)
    found = []
    for key in build_checklist(scenario).da:
        expected = expected_disclosure(scenario, key.agent, key.item)
        missing = expected - actual.get((key.agent, key.item), set())
        if missing:
            to = ", ".join(sorted(name if name != EVERYONE else "everyone" for name, _ in missing))
            found.append(
                Violation(
                    rule=Rule.STOP_RULE_REACHABILITY,
                    scenario_id=scenario.id,
                    agent=key.agent,
                    item=key.item,
                    message=f"the reference lineup has not disclosed it to {to} when the "
                    f"conversation ends ({conversation.end_reason} after {conversation.turns} "
                    "turns, the paper's limits): no policy-exact play reaches DA = 1",
                )
            )
    return found


def validate_reachable(paths: Iterable[str | Path]) -> list[FileReport]:
    """`validation.validate_files`, plus `unreachable` for each scenario without findings."""
    paths = list(paths)
    reports = validate_files(paths)
    out = []
    for path, report in zip(paths, reports, strict=True):
        if report.error is not None:
            out.append(report)
            continue
        flagged = {v.scenario_id for v in report.violations}
        scenarios, _ = read_scenario_records(path)
        extra = [v for s in scenarios if s.id not in flagged for v in unreachable(s)]
        out.append(report.model_copy(update={"violations": (*report.violations, *extra)}))
    return out

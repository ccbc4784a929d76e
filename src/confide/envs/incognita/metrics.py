"""Evaluation and per-episode measures of Incognita (the Incognita paper, sections 3.3, 5, 6.3).

Success (section 3.3): the database channel compares the canonical hash of the final
world with the hash of the gold state (the card's gold actions replayed on a fresh copy
of the initial world, `cards.replay_gold`); the output channel, only for cards with
output assertions, asks the judge for a verdict on each. A trial succeeds when every
operative channel passes. Evaluation is outside the interaction loop: it runs after the
FINAL signal (or the end of the turn budget) and nothing it does is seen by a participant.

Episode measures are pure functions of the trace events (`episode_measures`,
`usage_by_role`), so they can be recomputed from a trace file:

- ``turns``: the evaluated agent's turns (messages, tool calls, invalid turns, FINAL);
- ``messages_to_customer`` / ``messages_to_desks``: the agent's messages by recipient;
- ``agent_tool_calls``: tool calls the agent proposed (direct access);
- ``executed_calls`` / ``rejected_calls``: every proposal the execution layer executed or
  rejected, whoever proposed it; ``executed_writes``: executed write calls;
- ``gate_releases``: customer fields released; ``invalid_turns``: unusable agent turns;
- ``ended``: ``final``, ``budget``, or in the native arm ``user_stop`` / ``transfer``
  (tau-bench's termination rule, `native`);
- usage per role -- ``agent``, ``customer``, ``gate``, ``desk``, ``judge`` -- as calls,
  tokens and USD cost (from the recorded model calls), and the totals (the native arm's
  user simulator counts as the ``customer``: it is that arm's customer). A call whose price
  is unknown counts in ``unknown_cost_calls`` and adds nothing to the cost.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable, Sequence
from typing import Any

from confide.core.message import Message
from confide.core.spend import seat_spend
from confide.core.tables import group_by, mean, number
from confide.core.trace import MessageDelivered, ModelCall, TraceEvent
from confide.core.truncation import truncated_replies
from confide.envs.incognita import events as ev
from confide.envs.incognita.conditions import AGENT, CUSTOMER
from confide.envs.incognita.events import AssertionVerdict, Evaluation
from confide.envs.incognita.judge import LiteralJudge, ModelJudge
from confide.envs.incognita.scenario import TaskCard, replay_gold
from confide.envs.incognita.world import World
from confide.llm.pricing import PARTIAL, UNPRICED, cost_status

USAGE_ROLES: tuple[str, ...] = ("agent", "customer", "gate", "desk", "judge")


async def evaluate(
    world0: World,
    card: TaskCard,
    final_hash: str,
    messages: Sequence[Message],
    judge: LiteralJudge | ModelJudge,
) -> Evaluation:
    """Both reward channels of section 3.3 for one finished episode whose final world has
    the canonical hash `final_hash`."""
    gold_hash = replay_gold(world0, card).state_hash()
    verdicts: list[AssertionVerdict] = []
    outputs_pass: bool | None = None
    if card.output_assertions:
        judged = await judge.judge(card.output_assertions, messages)
        verdicts = [
            AssertionVerdict(index=v.assertion, text=text, holds=v.holds, reason=v.reason)
            for v, text in zip(judged, card.output_assertions, strict=True)
        ]
        outputs_pass = all(v.holds for v in verdicts)
    db_pass = final_hash == gold_hash
    return Evaluation(
        success=db_pass and outputs_pass is not False,
        db_pass=db_pass,
        final_hash=final_hash,
        gold_hash=gold_hash,
        outputs_pass=outputs_pass,
        judge=judge.name if card.output_assertions else None,
        assertions=verdicts,
    )


def _role(call: ModelCall) -> str:
    if call.seat == AGENT:
        return "agent"
    if call.seat == CUSTOMER:
        return "gate" if call.purpose == "gate" else "customer"
    if call.seat == "judge":
        return "judge"
    return "desk"


def usage_by_role(events: Iterable[TraceEvent]) -> dict[str, dict[str, float | int]]:
    """Calls, tokens and cost per role, from the trace's model calls."""
    totals: dict[str, dict[str, float | int]] = {
        role: {"calls": 0, "prompt_tokens": 0, "completion_tokens": 0, "cost_usd": 0.0,
               "unknown_cost_calls": 0}
        for role in USAGE_ROLES
    }
    for event in events:
        if not isinstance(event, ModelCall):
            continue
        entry = totals[_role(event)]
        entry["calls"] += 1
        usage = (event.completion or {}).get("usage") or {}
        entry["prompt_tokens"] += int(usage.get("prompt_tokens", 0))
        entry["completion_tokens"] += int(usage.get("completion_tokens", 0))
        cost = usage.get("cost_usd")
        if cost is None:
            entry["unknown_cost_calls"] += 1
        else:
            entry["cost_usd"] += float(cost)
    return totals


def episode_measures(events: Iterable[TraceEvent]) -> dict[str, Any]:
    """The counts listed in the module docstring, from trace events."""
    counts: dict[str, int] = defaultdict(int)
    ended = "budget"
    for event in events:
        if isinstance(event, MessageDelivered) and event.message.sender == AGENT:
            counts["turns"] += 1
            to_customer = CUSTOMER in event.message.recipients
            counts["messages_to_customer" if to_customer else "messages_to_desks"] += 1
        elif isinstance(event, ev.ToolProposed):
            if event.data.proposer == AGENT:
                counts["turns"] += 1
                counts["agent_tool_calls"] += 1
        elif isinstance(event, ev.ToolExecuted):
            counts["executed_calls"] += 1
            counts["executed_writes"] += int(event.data.kind == "write")
        elif isinstance(event, ev.ToolRejected):
            counts["rejected_calls"] += 1
        elif isinstance(event, ev.GateRelease):
            counts["gate_releases"] += 1
        elif isinstance(event, ev.InvalidAction):
            if event.seat == AGENT:
                counts["turns"] += 1
                counts["invalid_turns"] += 1
        elif isinstance(event, ev.Final):
            counts["turns"] += 1
            ended = "final"
        elif isinstance(event, ev.ConversationEnded):
            ended = event.data.by
    keys = ("turns", "messages_to_customer", "messages_to_desks", "agent_tool_calls",
            "executed_calls", "executed_writes", "rejected_calls", "gate_releases",
            "invalid_turns")
    return {**{key: counts[key] for key in keys}, "ended": ended}


def result_row(
    participant: str, evaluation: Evaluation, events: Sequence[TraceEvent]
) -> dict[str, Any]:
    """The one result row of an episode (the evaluated agent's seat)."""
    usage = usage_by_role(events)
    row: dict[str, Any] = {
        "seat": "agent",
        "participant": participant,
        "success": int(evaluation.success),
        "db_pass": int(evaluation.db_pass),
        "outputs_pass": "" if evaluation.outputs_pass is None else int(evaluation.outputs_pass),
        **episode_measures(events),
    }
    for role in USAGE_ROLES:
        entry = usage[role]
        row[f"{role}_calls"] = entry["calls"]
        row[f"{role}_tokens"] = int(entry["prompt_tokens"]) + int(entry["completion_tokens"])
        row[f"{role}_cost_usd"] = _cost(
            entry["cost_usd"], entry["calls"], entry["unknown_cost_calls"]
        )
    row["tokens"] = sum(row[f"{role}_tokens"] for role in USAGE_ROLES)
    unknown = sum(int(usage[r]["unknown_cost_calls"]) for r in USAGE_ROLES)
    calls = sum(int(usage[r]["calls"]) for r in USAGE_ROLES)
    row["cost_usd"] = _cost(sum(float(usage[r]["cost_usd"]) for r in USAGE_ROLES), calls, unknown)
    row["unknown_cost_calls"] = unknown
    row["truncated_replies"] = truncated_replies(events)[AGENT]
    return row


def _cost(cost: float, calls: float, unknown: float) -> float | str:
    """A cost cell: the USD sum when every call is priced, else what `cost_status` says."""
    return cost_status(int(calls) - int(unknown), int(calls)) or round(float(cost), 6)


def _mean_cost(values: Sequence[Any]) -> float | str | None:
    """Mean episode cost, or ``unpriced``/``partial`` when some episodes carry no total."""
    labels = [v for v in values if v in (UNPRICED, PARTIAL)]
    if not labels:
        return mean(number(v) for v in values)
    return UNPRICED if labels == [UNPRICED] * len(values) else PARTIAL


SUMMARY_MEANS = ("success", "db_pass", "turns")


def summarize(rows: Sequence[dict[str, Any]]) -> list[dict[str, Any]]:
    """Success rate, turns and cost per (participant, condition), over finished episodes."""
    groups = group_by(
        (r for r in rows if r.get("status", "ok") == "ok" and "success" in r),
        lambda r: (str(r.get("participant", "")), str(r.get("condition", ""))),
    )
    return [
        {
            "participant": participant,
            "condition": condition,
            "episodes": len(members),
            **{c: mean(number(r[c]) for r in members) for c in SUMMARY_MEANS},
            "cost_usd": _mean_cost([r.get("cost_usd") for r in members]),
            **seat_spend(members),  # a run that calls a model: its spend per seat
        }
        for (participant, condition), members in sorted(groups.items())
    ]

"""The Sotopia-ToM environment: N agents, public and direct messages (sections 5.1, 5.3, A.8).

Turn loop. Agents act in round-robin seat order; one round gives every agent still
present one turn, and each turn is one action. A message is routed through the postbox
as soon as it is spoken, so a later agent in the same round already sees it (the
one-agent-per-step round-robin of Sotopia). A public message (`to` empty) reaches every
agent still present; a direct message reaches only the named recipients. An agent's
observation is its own card plus what the postbox delivered to it. An agent that leaves
is deactivated in the postbox: it receives nothing more and is skipped.

Limits and stop rules (section 5.3: "a maximum of T_max = 60 turns per scenario. A
scenario simulation also terminates early if no agent produces a substantive action for
three consecutive turns or leaves the conversation"):

- A turn is one agent's action; a round gives every agent still present one turn. The
  conversation ends after `max_turns` = 60 turns in all, which can be mid-round (6.3
  reports "approximately 33 speak turns over 18 rounds": 60 turns are 12-20 rounds for
  3-5 agents, so the budget is not 60 rounds).
- It ends early after `stale_turns` = 3 consecutive non-substantive turns: `none`, a
  speak act with no content, or an act refused for bad recipients or unreadable output.
- "or leaves the conversation": the text is loose between "an agent leaves" and "every
  agent has left". Sotopia, which this framework extends (5.1, A.8), terminates as soon
  as one player leaves, and the stop rule is phrased per agent, so the default
  `leave_ends="any"` ends the episode at the first leave; `leave_ends="all"` keeps the
  others talking until nobody is left (a leaving agent then receives nothing more).
- EFF (A.7) normalizes the earliest *round* of acquisition by T_max - 1 with T_max the
  turn budget, exactly as the formula reads.

What a model sends is recorded as sent (section 6 blames schema and misrouting failures
for some models' low scores): a speak act naming an unknown recipient, the speaker
itself, or an agent who left is refused, recorded as an `invalid_recipients` event and
counted as a non-substantive turn. Asking the agent again with feedback is an aid the
paper does not have, so it is the option `reask_invalid_recipients` (off by default), as
is repairing malformed output (`repair_attempts` > 1; default 1: no repair). Names match
exactly as the scenario spells them. Message `turn` holds the speaker's 1-based seat, so
`R<round>.<turn>` is the utterance id the judge cites (section 4.2).

After the conversation (`play_episode`) comes scoring (`score_episode`, which reads only
the trace: `confide rescore` calls it again under another judge): the judge bound to the
`judge` role (`--role judge=SPEC`; default the deterministic reference judge) produces
per-metric verdicts, recorded in the trace, and `metrics.score_episode` turns them into
DA, IA, EFF, CPV and InfoMgmt.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal, cast

from confide.core.benchmark import EpisodeContext, EpisodeResult, Turns, expand_lineup
from confide.core.message import Channel, Message
from confide.core.options import parse_options
from confide.core.postbox import Postbox
from confide.core.refusal import refusal
from confide.core.scoring import play_then_score
from confide.core.trace import MessageDelivered, TraceEvent, TraceRecorder
from confide.core.truncation import truncated_replies
from confide.envs.sotopia_tom import events as ev
from confide.envs.sotopia_tom.actions import (
    InfoAction,
    InfoObservation,
    Participant,
    TurnLimits,
    briefing_for,
)
from confide.envs.sotopia_tom.dataset import load_split, split_names
from confide.envs.sotopia_tom.metrics import score_episode as score_turns
from confide.envs.sotopia_tom.metrics import seat_labels
from confide.envs.sotopia_tom.options import EnvOptions
from confide.envs.sotopia_tom.scenario import Scenario, Sensitivity, read_scenario_file
from confide.envs.sotopia_tom.validation import ensure_valid
from confide.errors import ConfideError

EndReason = Literal["max_turns", "stale", "left"]




@dataclass
class Conversation:
    """What happened in one episode's conversation."""

    messages: list[Message]
    rounds: int
    turns: int
    end_reason: EndReason
    left: dict[str, int] = field(default_factory=dict)
    refused: dict[str, int] = field(default_factory=dict)


class _Table:
    """The running conversation: postbox, cursors, counters."""

    def __init__(
        self,
        scenario: Scenario,
        participants: Mapping[str, Participant],
        trace: TraceRecorder,
        options: EnvOptions,
        turns: Turns,
    ) -> None:
        self.scenario = scenario
        self.names = scenario.agent_names
        self.participants = participants
        self.trace = trace
        self.options = options
        self.asker = turns
        self.postbox = Postbox(self.names, on_deliver=trace.message)
        self.briefings = {n: briefing_for(scenario, n) for n in self.names}
        self.cursor = dict.fromkeys(self.names, 0)
        self.left: dict[str, int] = {}
        self.refused = dict.fromkeys(self.names, 0)
        self.limits = TurnLimits(
            max_turns=options.max_turns,
            stale_turns=options.stale_turns,
            leave_ends=options.leave_ends,
        )
        self.turns = 0

    def observation(self, name: str, rnd: int, feedback: str | None) -> InfoObservation:
        return InfoObservation(
            agent=name,
            round=rnd,
            turn=self.turns,
            limits=self.limits,
            briefing=self.briefings[name],
            history=list(self.postbox.seen_by(name)),
            first_new=self.cursor[name],
            present=self.postbox.active_agents,
            feedback=feedback,
        )

    async def ask(self, name: str, rnd: int, feedback: str | None) -> InfoAction:
        observation = self.observation(name, rnd, feedback)
        return await self.asker.ask(name, observation, self.participants[name])

    def recipients(self, name: str, to: Sequence[str]) -> tuple[str, ...] | str:
        """Recipient names, or the feedback explaining why they are invalid. Names match
        exactly: a near miss gets the list of valid names, never a guessed recipient."""
        resolved: list[str] = []
        for raw in to:
            target = raw if raw in self.names else None
            others = [n for n in self.postbox.active_agents if n != name]
            valid = f"valid recipients: {', '.join(others) or 'nobody (everyone else left)'}"
            if target is None:
                return f"{raw!r} is not a participant in this conversation; {valid}"
            if target == name:
                return f"you cannot send a direct message to yourself; {valid}"
            if not self.postbox.is_active(target):
                return f"{target} has left the conversation and cannot receive messages; {valid}"
            if target not in resolved:
                resolved.append(target)
        return tuple(resolved)

    async def turn(self, name: str, seat: int, rnd: int) -> bool:
        """Play one agent's turn; True when it spoke."""
        self.turns += 1
        action = await self.ask(name, rnd, None)
        attempts = 2 if self.options.reask_invalid_recipients else 1
        for attempt in range(1, attempts + 1):
            if action.action_type != "speak" or not action.to:
                break
            resolved = self.recipients(name, action.to)
            if isinstance(resolved, tuple):
                action = action.model_copy(update={"to": resolved})
                break
            self.refused[name] += 1
            self.trace.emit(
                ev.InvalidRecipients(
                    seat=name,
                    round=rnd,
                    data=ev.InvalidRecipientsData(
                        to=list(action.to), problem=resolved, attempt=attempt
                    ),
                    visible_to=[name],
                )
            )
            if attempt == attempts:
                action = InfoAction.none()
                break
            action = await self.ask(name, rnd, refusal(resolved))
        self.cursor[name] = len(self.postbox.seen_by(name))
        if action.action_type == "leave":
            self.postbox.deactivate(name)
            self.left[name] = rnd
            present = list(self.postbox.active_agents)
            self.trace.emit(ev.Left(seat=name, round=rnd, visible_to=present))
            return False
        if not action.substantive:
            return False
        channel = Channel.dm() if action.to else Channel.broadcast()
        self.postbox.post(
            name,
            channel,
            to=action.to,
            text=action.text,
            payload=action.payload,
            round=rnd,
            turn=seat,
        )
        self.cursor[name] = len(self.postbox.seen_by(name))
        return True


async def converse(
    scenario: Scenario,
    participants: Mapping[str, Participant],
    trace: TraceRecorder,
    options: EnvOptions,
    turns: Turns | None = None,
) -> Conversation:
    """Run the round-robin conversation until T_max turns, three quiet turns, or a leave."""
    missing = [n for n in scenario.agent_names if n not in participants]
    if missing:
        raise ConfideError(f"scenario {scenario.id!r}: no participant for seat(s) {missing}")
    table = _Table(scenario, participants, trace, options, turns or Turns())
    quiet = 0
    rnd = 0
    reason: EndReason | None = None
    while reason is None:
        rnd += 1
        present = list(table.postbox.active_agents)
        trace.emit(ev.RoundStart(round=rnd, visible_to=present))
        for seat, name in enumerate(table.names, start=1):
            if not table.postbox.is_active(name):
                continue
            quiet = 0 if await table.turn(name, seat, rnd) else quiet + 1
            reason = _end_reason(table, options, quiet)
            if reason is not None:
                break
    trace.emit(
        ev.ConversationEnd(
            round=rnd,
            data=ev.ConversationEndData(
                reason=reason, rounds=rnd, turns=table.turns, left=table.left
            ),
        )
    )
    return Conversation(
        messages=list(table.postbox.log),
        rounds=rnd,
        turns=table.turns,
        end_reason=reason,
        left=table.left,
        refused=table.refused,
    )


def _end_reason(table: _Table, options: EnvOptions, quiet: int) -> EndReason | None:
    """Why the conversation ends after the turn just played, if it does (module docstring)."""
    everyone_left = not table.postbox.active_agents
    if table.left and (options.leave_ends == "any" or everyone_left):
        return "left"
    if quiet >= options.stale_turns:
        return "stale"
    if table.turns >= options.max_turns:
        return "max_turns"
    return None


def transcript_digest(messages: Sequence[Message]) -> str:
    """A short hash of the routed conversation, so two judges' runs can be checked to
    have judged the same transcript."""
    data = [m.model_dump(mode="json", exclude={"id"}) for m in messages]
    blob = json.dumps(data, sort_keys=True, separators=(",", ":")).encode()
    return hashlib.sha256(blob).hexdigest()[:16]


async def play_episode(ctx: EpisodeContext) -> None:
    """Play one episode's conversation into `ctx.trace` (scored by `score_episode`)."""
    from confide.envs.sotopia_tom.participants import make_participant

    scenario: Scenario = ctx.task
    options = parse_options(EnvOptions, ctx.options, "sotopia-tom")
    binding = expand_lineup(ctx.lineup, scenario.agent_names)
    participants = {
        seat: make_participant(seat, spec, ctx, scenario, options) for seat, spec in binding.items()
    }
    await converse(scenario, participants, ctx.trace, options, ctx.turns)


def conversation_from_events(events: Iterable[TraceEvent]) -> Conversation:
    """The played conversation as recorded in a trace: the routed messages, the
    `conversation_end` summary and the refused turns (`invalid_recipients`)."""
    messages: list[Message] = []
    refused: dict[str, int] = {}
    end: ev.ConversationEnd | None = None
    for event in events:
        if isinstance(event, MessageDelivered):
            messages.append(event.message)
        elif isinstance(event, ev.InvalidRecipients):
            refused[event.seat or ""] = refused.get(event.seat or "", 0) + 1
        elif isinstance(event, ev.ConversationEnd):
            end = event
    if end is None:
        raise ConfideError("sotopia-tom: the trace has no conversation_end event")
    return Conversation(
        messages=messages,
        rounds=end.data.rounds,
        turns=end.data.turns,
        end_reason=cast(EndReason, end.data.reason),
        left=dict(end.data.left),
        refused=refused,
    )


async def score_episode(ctx: EpisodeContext) -> EpisodeResult:
    """Judge and score the conversation played into `ctx.trace` (the runner writes the
    footer): the bound judge gives verdicts, `metrics.score_episode` the metrics."""
    from confide.envs.sotopia_tom.judge import judge_conversation

    scenario: Scenario = ctx.task
    options = parse_options(EnvOptions, ctx.options, "sotopia-tom")
    binding = expand_lineup(ctx.lineup, scenario.agent_names)
    conversation = conversation_from_events(ctx.trace.events)
    judged = await judge_conversation(ctx, scenario, conversation.messages)
    scores = score_turns(scenario, judged.utterances, judged.verdicts, options.max_turns)
    metrics: dict[str, Any] = {
        "da": scores.da,
        "ia": scores.ia,
        "eff": scores.eff,
        "cpv": scores.cpv,
        "infomgmt": scores.infomgmt,
        "violations": None if scores.cpv is None else len(scores.violations),
        "protected_items": scores.protected,
        "rounds": conversation.rounds,
        "turns": conversation.turns,
        "end_reason": conversation.end_reason,
        "judge": judged.verdicts.judge,
        "judge_failures": ",".join(sorted(judged.verdicts.failures)),
        "ignored_citations": scores.ignored_citations,
        "transcript_sha": transcript_digest(conversation.messages),
    }
    rows = []
    truncated = truncated_replies(ctx.trace.events)
    for seat, spec in binding.items():
        model, strategy = seat_labels(str(spec))
        agent = scores.agents[seat]
        sent = [m for m in conversation.messages if m.sender == seat]
        rows.append(
            {
                "seat": seat,
                "participant": str(spec),
                "model": model,
                "strategy": strategy,
                "da_agent": agent.da,
                "ia_agent": agent.ia,
                "eff_agent": agent.eff,
                "messages_sent": len(sent),
                "private_sent": sum(1 for m in sent if m.channel.kind == "dm"),
                "refused": conversation.refused.get(seat, 0),
                "truncated_replies": truncated[seat],
                **metrics,
            }
        )
    final_state = {
        "left": conversation.left,
        "messages": len(conversation.messages),
        "violations": [v.model_dump() for v in scores.violations],
        "scores": {name: a.model_dump() for name, a in scores.agents.items()},
    }
    return EpisodeResult(rows=rows, metrics=metrics, final_state=final_state)


run_episode = play_then_score(play_episode, score_episode)
"""One episode: converse, then judge and score."""


def load_tasks(suite: str | None, path: str | None) -> list[Scenario]:
    """A shipped split (default `core`), or every scenario of a JSON file, validated."""
    if path is not None:
        if suite is not None:
            raise ConfideError("give either a suite or a scenario file, not both")
        return [ensure_valid(s) for s in read_scenario_file(Path(path))]
    name = suite or "core"
    if name not in split_names():
        raise ConfideError(f"sotopia-tom has no suite {name!r}; available: {list(split_names())}")
    return load_split(name)


def seats(task: Scenario) -> Sequence[str]:
    """Agent names in seat order."""
    return task.agent_names


def private_markers(task: Scenario) -> dict[str, list[str]]:
    """Per agent, the values of its private items: no other agent may observe them
    unless a message delivered them (used by the conformance no-leak check)."""
    return {
        agent.name: [f.value for f in agent.knowledge if f.sensitivity is Sensitivity.PRIVATE]
        for agent in task.agents
    }

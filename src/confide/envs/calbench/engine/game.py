"""The CalBench game round (the CalBench paper, section 3 "Round structure", A.3-A.6).

One round per incoming meeting, in stream order:

1. CHEAP_TALK. The meeting's speaker order speaks in sweeps; turn t is one sweep. Each
   speaker first drains what the postbox delivered to it since its last turn (A.4).
   Participants always get a turn. A non-participant becomes active when a direct message
   or an all-agent groupchat message reaches it; it then speaks in the same sweep (after
   the current speakers, activated agents in id order, in waves while new agents keep
   being activated) and stays in the speaker order for the rest of the round. The phase
   ends after a sweep in which nobody sent a message, or after `max_turns_per_round`
   sweeps (A.4 turn budget; None = no budget).
2. VOLUNTARY. Every non-participant activated this round may submit a batch of reschedule
   actions (no schedule), applied at once when valid.
3. DECISION. Every participant, in speaker order, submits an atomic batch against a
   snapshot of its calendar (post-VOLUNTARY). A rejected batch is answered with the exact
   A.5 conflict strings, up to `decision_retries` times; then the seat has no batch.
   VOLUNTARY and DECISION observations carry no inbox (A.3: the decision message is the
   meeting's metadata plus a calendar snapshot; the voluntary message the meeting and the
   calendar); what was delivered but not drained in CHEAP_TALK waits for the seat's next
   cheap-talk turn.
4. RESOLUTION. Every valid DECISION batch is applied with its displacement costs
   (section 3: a batch "is validated against the agent's calendar and applied only if
   valid"). Section 3: "the resolution phase checks that all meeting participants
   scheduled the incoming meeting to the same slot and that any prior meetings remain
   consistent across all of their participants' calendars. Failed meetings are marked
   unresolved". So the meeting is resolved iff every participant has a valid batch, all
   of them put the meeting in the same slot, and every registered meeting (the initial
   prior meetings and the meetings resolved so far) is still at one common slot on its
   participants' calendars. Each inconsistent meeting is reported as a
   `consistency_violation`, the current one too when some of its copies were placed but
   not all at one slot (A.5: the round "proceeds without that agent's scheduling action,
   triggering a consistency violation"). Copies of a failed meeting stay where their
   batches put them; a failed meeting is never registered, so later rounds do not check
   it.

Messages go only through `confide.core.Postbox` (its delivery hook writes them to the
trace). Each communication condition opens exactly one channel (A.3): `dm`, the current
meeting's participant groupchat, or the all-agent groupchat; a tool call on a closed
channel is recorded as `invalid_tool_call` and dropped. Trace events follow Table 5
(`game_start`, `agent_registered`, `round_start`, `turn_start`, `turn_end`, `decide_start`,
`decide_end`, `batch_rejected`, `batch_applied`) plus `invalid_tool_call`, `batch_failed`,
`consistency_violation` and `resolution`; each names the seats that
observed it in `visible_to` (None = bookkeeping no seat sees). Table 5's `dm_sent` is the
core `message` event the postbox writes for every delivery (sender, resolved recipients,
channel, round, turn, content or payload); the meeting is the round's, so a second event
per message would only repeat it.

Choices the text does not decide: VOLUNTARY batches get the same retry budget as DECISION
batches (A.5 describes retries for DECISION and only says VOLUNTARY validates with
require_schedule = false); a meeting resolved in its round counts as scheduled only if it
is still consistent at the end of the game (section 4.2 counts "successfully scheduled
meetings" without saying when; see metrics.py).
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

from confide.core.benchmark import Turns
from confide.core.message import Channel, Message
from confide.core.postbox import Postbox
from confide.core.trace import TraceRecorder
from confide.core.trusted import builder
from confide.envs.calbench import events as ev
from confide.envs.calbench.actions import (
    CONDITION_CHANNELS,
    CalendarObservation,
    Envelope,
    Participant,
    RefusedAction,
    ToolCall,
    agent_of,
    seat_of,
    tool_dict,
)
from confide.envs.calbench.engine.outcome import GameOutcome, consistent_slot
from confide.envs.calbench.engine.views import ViewBuilder
from confide.envs.calbench.scenario import Scenario
from confide.envs.calbench.world import (
    Action,
    BatchRejected,
    BatchResult,
    Errand,
    Meeting,
    MeetingItem,
    Reschedule,
    Schedule,
    apply_batch,
)
from confide.errors import ConfideError

DEFAULT_MAX_TURNS = 20
"""The published harness's default turn budget (the paper leaves it optional)."""
DEFAULT_DECISION_RETRIES = 3
_DM = Channel.dm()
_BROADCAST = Channel.broadcast()
# the trusted builders of every event this engine records, one per call site, each
# taking exactly the fields that site passes (core/trusted.py)
_SEAT_EVENT = ("seat", "round", "visible_to", "data")
_AgentRegistered = builder(ev.AgentRegistered, "seat", "visible_to", "data")
_AgentRegisteredData = builder(ev.AgentRegisteredData, "agent", "participant", "calendar")
_BatchApplied = builder(ev.BatchApplied, *_SEAT_EVENT)
_BatchAppliedData = builder(
    ev.BatchAppliedData,
    "phase",
    "actions",
    "moves",
    "cost",
    "display_cost",
    "calendar",
)
_BatchFailed = builder(ev.BatchFailed, *_SEAT_EVENT)
_BatchFailedData = builder(ev.BatchFailedData, "phase", "attempts")
_BatchRejected = builder(ev.BatchRejected, *_SEAT_EVENT)
_BatchRejectedData = builder(ev.BatchRejectedData, "phase", "attempt", "conflicts", "actions")
_ConsistencyViolation = builder(ev.ConsistencyViolation, "round", "data")
_ConsistencyViolationData = builder(ev.ConsistencyViolationData, "meeting_id", "slots")
_DecideEnd = builder(ev.DecideEnd, *_SEAT_EVENT)
_DecideEndData = builder(ev.DecideEndData, "phase", "attempt", "tool_calls", "thinking")
_DecideStart = builder(ev.DecideStart, *_SEAT_EVENT)
_DecideStartData = builder(ev.DecideStartData, "phase", "attempt", "calendar")
_GameStart = builder(ev.GameStart, "data")
_GameStartData = builder(
    ev.GameStartData,
    "task_id",
    "scenario_seed",
    "num_agents",
    "num_slots",
    "num_meetings",
    "cost_setting",
    "condition",
    "channels",
    "max_turns_per_round",
    "decision_retries",
    "optimal_cost",
    "greedy_cost",
)
_InvalidToolCall = builder(ev.InvalidToolCall, *_SEAT_EVENT)
_InvalidToolCallData = builder(ev.InvalidToolCallData, "phase", "tool_call", "reason")
_MeetingInfo = builder(ev.MeetingInfo, "meeting_id", "participants", "cost")
_Move = builder(ev.Move, "kind", "item_id", "from_slot", "to_slot", "cost")
_Resolution = builder(ev.Resolution, "round", "data")
_ResolutionData = builder(
    ev.ResolutionData,
    "meeting_id",
    "resolved",
    "slots",
    "reason",
    "turns",
    "consistency_violations",
)
_RoundStart = builder(ev.RoundStart, "round", "visible_to", "data")
_RoundStartData = builder(ev.RoundStartData, "meeting", "speaker_order")
_TurnEnd = builder(ev.TurnEnd, *_SEAT_EVENT)
_TurnEndData = builder(ev.TurnEndData, "turn", "phase", "tool_calls", "thinking")
_TurnStart = builder(ev.TurnStart, *_SEAT_EVENT)
_TurnStartData = builder(ev.TurnStartData, "turn", "phase", "inbox")


@dataclass(frozen=True)
class GameConfig:
    """Engine settings: communication condition, turn budget and retry budget."""

    condition: str = "dm"
    max_turns_per_round: int | None = DEFAULT_MAX_TURNS
    decision_retries: int = DEFAULT_DECISION_RETRIES

    def __post_init__(self) -> None:
        if self.condition not in CONDITION_CHANNELS:
            known = ", ".join(CONDITION_CHANNELS)
            raise ConfideError(
                f"calbench: unknown condition {self.condition!r}; use one of {known}"
            )
        if self.max_turns_per_round is not None and self.max_turns_per_round < 1:
            raise ConfideError(
                "calbench: max_turns_per_round must be >= 1 or null, "
                f"got {self.max_turns_per_round}"
            )
        if self.decision_retries < 0:
            raise ConfideError(
                f"calbench: decision_retries must be >= 0, got {self.decision_retries}"
            )


@dataclass
class _Round:
    """Mutable state of one round's cheap talk."""

    index: int
    meeting: Meeting
    group: Channel
    active: list[str]
    active_set: set[str]
    started: set[str] = field(default_factory=set)
    queue: list[str] = field(default_factory=list)
    activated: list[str] = field(default_factory=list)
    turn: int = 0


Staged = dict[str, tuple[BatchResult, list[dict[str, Any]]]]


def _tool_dicts(actions: list[ToolCall]) -> list[dict[str, Any]]:
    """The trace form of a reply's tool calls (most replies have none: no comprehension,
    which is a call of its own, for them)."""
    return [tool_dict(t) for t in actions] if actions else []
_PHASES: dict[str, ev.Phase] = {"voluntary": "VOLUNTARY", "decision": "DECISION"}


class Game:
    """One CalBench game over a scenario with one participant per seat."""

    def __init__(
        self,
        scenario: Scenario,
        players: Mapping[str, Participant],
        trace: TraceRecorder,
        config: GameConfig | None = None,
        turns: Turns | None = None,
        after_round: Callable[[int], Awaitable[None]] | None = None,
    ) -> None:
        self.scenario = scenario
        self.config = config or GameConfig()
        self.seats = tuple(seat_of(a) for a in range(scenario.num_agents))
        missing = [s for s in self.seats if s not in players]
        if missing:
            raise ConfideError(f"calbench: no participant for seat(s) {', '.join(missing)}")
        self.players = players
        self.trace = trace
        self.turns = turns or Turns()
        self.after_round = after_round
        """Awaited with the round index after each resolution (reflection, F.3)."""
        self.meetings = scenario.to_meetings()
        self.calendars = list(scenario.to_calendars())
        self.postbox = Postbox(self.seats, on_deliver=trace.message)
        self.views = ViewBuilder(scenario, CONDITION_CHANNELS[self.config.condition])
        self.cursor = dict.fromkeys(self.seats, 0)
        self.refused: dict[str, list[RefusedAction]] = {}
        """Refused tool calls per seat, handed to it with its next observation."""
        self.penalty = [0] * scenario.num_agents
        self.resolved: dict[int, bool] = {}
        self.known: dict[int, tuple[int, ...]] = {}
        for cal in self.calendars:
            for item in cal.slots:
                if isinstance(item, MeetingItem):
                    self.known.setdefault(item.meeting_id, item.participants)

    async def play(self) -> GameOutcome:
        """Run every round and return the final calendars and per-meeting resolution."""
        self._register()
        for index, meeting in enumerate(self.meetings):
            await self._round(index, meeting)
        return GameOutcome(tuple(self.calendars), dict(self.resolved))

    # -- bookkeeping -----------------------------------------------------------------

    def _register(self) -> None:
        sc = self.scenario
        self.trace.emit(_GameStart(data=_GameStartData(
            task_id=sc.task_id,
            scenario_seed=sc.seed,
            num_agents=sc.num_agents,
            num_slots=sc.num_slots,
            num_meetings=len(self.meetings),
            cost_setting=sc.cost_setting,
            condition=self.config.condition,
            channels=list(self.views.channels),
            max_turns_per_round=self.config.max_turns_per_round,
            decision_retries=self.config.decision_retries,
            optimal_cost=sc.oracle.cost if sc.oracle is not None else None,
            greedy_cost=sc.greedy.cost if sc.greedy is not None else None,
        )))
        for seat in self.seats:
            agent = agent_of(seat)
            self.trace.emit(_AgentRegistered(
                seat=seat,
                visible_to=[seat],
                data=_AgentRegisteredData(
                    agent=agent,
                    participant=self.players[seat].name,
                    calendar=self.views.calendar(self.calendars[agent]).text,
                ),
            ))

    def _drain(self, seat: str) -> list[Message]:
        """What the postbox delivered to `seat` since it last looked (A.4 inbox drain)."""
        seen = self.postbox.seen_by(seat, since=self.cursor[seat])
        self.cursor[seat] += len(seen)
        return [m for m in seen if m.sender != seat] if seen else seen

    def _ask(self, seat: str, observation: CalendarObservation) -> Awaitable[Envelope]:
        """`seat`'s answer to `observation` (which also carries the calls refused since its
        last turn), through `ctx.ask`; await it and pass the result to `_checked`."""
        if refused := self.refused.pop(seat, None):
            observation = observation.model_copy(update={"refused": tuple(refused)})
        return self.turns.ask(seat, observation, self.players[seat])

    def _checked(self, seat: str, envelope: Envelope) -> Envelope:
        if not isinstance(envelope, Envelope):
            raise TypeError(
                f"participant {self.players[seat].name!r} at {seat} returned "
                f"{type(envelope).__name__}, not an Envelope"
            )
        return envelope

    def _invalid(
        self, rnd: int, seat: str, phase: ev.Phase, tool: ToolCall, reason: str
    ) -> None:
        self.refused.setdefault(seat, []).append(RefusedAction(action=tool.type, reason=reason))
        self.trace.emit(_InvalidToolCall(
            seat=seat,
            round=rnd,
            visible_to=[seat],
            data=_InvalidToolCallData(
                phase=phase, tool_call=tool_dict(tool), reason=reason
            ),
        ))

    # -- one round -------------------------------------------------------------------

    async def _round(self, index: int, meeting: Meeting) -> None:
        order = [seat_of(a) for a in meeting.speaker_order]
        self.trace.emit(_RoundStart(
            round=index,
            visible_to=list(order),
            data=_RoundStartData(
                meeting=_MeetingInfo(
                    meeting_id=meeting.meeting_id,
                    participants=list(meeting.participants),
                    cost=meeting.cost,
                ),
                speaker_order=list(meeting.speaker_order),
            ),
        ))
        rnd = _Round(
            index=index,
            meeting=meeting,
            group=Channel.group(f"meeting:M{meeting.meeting_id}", order),
            active=list(order),
            active_set=set(order),
        )
        await self._cheap_talk(rnd)
        for seat in sorted(rnd.activated, key=agent_of):
            submitted = await self._submit(rnd, seat, "voluntary")
            if submitted is not None:
                self._commit(index, seat, "voluntary", *submitted)
        staged: Staged = {}
        for seat in order:
            submitted = await self._submit(rnd, seat, "decision")
            if submitted is not None:
                staged[seat] = submitted
        self._resolve(rnd, order, staged)
        if self.after_round is not None:
            await self.after_round(index)

    # -- CHEAP_TALK -----------------------------------------------------------------

    async def _cheap_talk(self, rnd: _Round) -> None:
        limit = self.config.max_turns_per_round
        while limit is None or rnd.turn < limit:
            sent = False
            for seat in list(rnd.active):
                sent |= await self._turn(rnd, seat)
            while rnd.queue:
                wave = sorted(set(rnd.queue), key=agent_of)
                rnd.queue.clear()
                for seat in wave:
                    rnd.active.append(seat)
                    rnd.activated.append(seat)
                    sent |= await self._turn(rnd, seat)
            rnd.turn += 1
            if not sent:
                break

    async def _turn(self, rnd: _Round, seat: str) -> bool:
        agent = agent_of(seat)
        new = self._drain(seat)
        observation = self.views.cheap_talk(
            agent=agent,
            calendar=self.calendars[agent],
            meeting=rnd.meeting,
            round_index=rnd.index,
            turn=rnd.turn,
            max_turns=self.config.max_turns_per_round,
            round_start=seat not in rnd.started,
            penalty=self.penalty[agent],
            new_messages=new,
        )
        rnd.started.add(seat)
        self.trace.emit(_TurnStart(
            seat=seat,
            round=rnd.index,
            visible_to=[seat],
            data=_TurnStartData(
                turn=rnd.turn, phase="CHEAP_TALK", inbox=[m.id for m in new] if new else []
            ),
        ))
        envelope = self._checked(seat, await self._ask(seat, observation))
        self.trace.emit(_TurnEnd(
            seat=seat,
            round=rnd.index,
            visible_to=[seat],
            data=_TurnEndData(
                turn=rnd.turn,
                phase="CHEAP_TALK",
                tool_calls=_tool_dicts(envelope.actions),
                thinking=envelope.thinking,
            ),
        ))
        sent = False
        for tool in envelope.actions:
            problem = self._route(rnd, seat, agent, tool)
            if problem is None:
                sent = True
            else:
                self._invalid(rnd.index, seat, "CHEAP_TALK", tool, problem)
        return sent

    def _route(self, rnd: _Round, seat: str, agent: int, tool: ToolCall) -> str | None:
        """Deliver one message tool call; the reason it is invalid, or None when sent."""
        # dispatch on the `type` tag: a failing isinstance test against a pydantic model
        # class costs a trip through the ABC machinery on every message
        if tool.type == "schedule" or tool.type == "reschedule":
            return f"{tool.type} is only allowed in the VOLUNTARY and DECISION phases"
        if tool.type not in self.views.channels:
            return (
                f"{tool.type} is not open in the {self.config.condition} condition "
                f"(open: {', '.join(self.views.channels)})"
            )
        if tool.content is None and tool.payload is None:
            return "message has neither content nor payload"
        to: list[str] = []
        if tool.type == "dm":
            if type(tool.to) is not int or not 0 <= tool.to < len(self.seats) or tool.to == agent:
                return f"dm recipient {tool.to!r} is not another agent id in [0, {len(self.seats)})"
            channel = _DM
            to = [seat_of(tool.to)]
        elif tool.type == "participant_groupchat":
            if seat not in rnd.group.members:
                return "only the current meeting's participants may post to its groupchat"
            channel = rnd.group
        else:
            channel = _BROADCAST
        message = self.postbox.post(
            seat,
            channel,
            to=to,
            text=tool.content,
            payload=tool.payload,
            round=rnd.index,
            turn=rnd.turn,
        )
        if channel.kind != "group":
            rnd.queue.extend(r for r in message.recipients if r not in rnd.active_set)
            rnd.active_set.update(message.recipients)
        return None

    # -- VOLUNTARY / DECISION ---------------------------------------------------------

    async def _submit(
        self, rnd: _Round, seat: str, phase: str
    ) -> tuple[BatchResult, list[dict[str, Any]]] | None:
        """Ask `seat` for a batch until one validates or the retry budget is spent."""
        agent = agent_of(seat)
        label = _PHASES[phase]
        attempts = self.config.decision_retries + 1
        conflicts: tuple[str, ...] = ()
        for attempt in range(1, attempts + 1):
            observation = self.views.batch(
                phase=phase,
                agent=agent,
                calendar=self.calendars[agent],
                meeting=rnd.meeting,
                round_index=rnd.index,
                attempt=attempt,
                max_attempts=attempts,
                conflicts=conflicts,
                penalty=self.penalty[agent],
            )
            self.trace.emit(_DecideStart(
                seat=seat,
                round=rnd.index,
                visible_to=[seat],
                data=_DecideStartData(
                    phase=label, attempt=attempt, calendar=observation.calendar.text,
                ),
            ))
            envelope = self._checked(seat, await self._ask(seat, observation))
            tools = _tool_dicts(envelope.actions)
            self.trace.emit(_DecideEnd(
                seat=seat,
                round=rnd.index,
                visible_to=[seat],
                data=_DecideEndData(
                    phase=label, attempt=attempt, tool_calls=tools, thinking=envelope.thinking
                ),
            ))
            actions: list[Action] = []
            for tool in envelope.actions:
                if tool.type == "schedule":
                    actions.append(Schedule(tool.meeting_id, tool.slot))
                elif tool.type == "reschedule":
                    actions.append(
                        Reschedule(tool.item_id, tool.from_slot, tool.to_slot, tool.justification)
                    )
                else:
                    self._invalid(
                        rnd.index, seat, label, tool, "messages are only sent in CHEAP_TALK"
                    )
            try:
                result = apply_batch(
                    self.calendars[agent],
                    actions,
                    meeting=rnd.meeting,
                    require_schedule=phase == "decision",
                )
            except BatchRejected as exc:
                conflicts = exc.conflicts
                self.trace.emit(_BatchRejected(
                    seat=seat,
                    round=rnd.index,
                    visible_to=[seat],
                    data=_BatchRejectedData(
                        phase=label, attempt=attempt, conflicts=list(conflicts), actions=tools
                    ),
                ))
                continue
            return result, tools
        self.trace.emit(_BatchFailed(
            seat=seat,
            round=rnd.index,
            visible_to=[seat],
            data=_BatchFailedData( phase=label, attempts=attempts),
        ))
        return None

    def _commit(
        self, index: int, seat: str, phase: str, result: BatchResult, tools: list[dict[str, Any]]
    ) -> None:
        agent = agent_of(seat)
        self.calendars[agent] = result.calendar
        shown = sum(self.scenario.display_cost(item.cost) for item, _, _ in result.moves)
        self.penalty[agent] += shown
        self.trace.emit(_BatchApplied(
            seat=seat,
            round=index,
            visible_to=[seat],
            data=_BatchAppliedData(
                phase=_PHASES[phase],
                actions=tools,
                moves=[
                    _Move(
                        kind="errand" if isinstance(item, Errand) else "meeting",
                        item_id=item.item_id,
                        from_slot=src,
                        to_slot=dst,
                        cost=item.cost,
                    )
                    for item, src, dst in result.moves
                ],
                cost=result.cost,
                display_cost=shown,
                calendar=self.views.calendar(result.calendar).text,
            ),
        ))

    # -- RESOLUTION -------------------------------------------------------------------

    def _resolve(self, rnd: _Round, order: list[str], staged: Staged) -> None:
        mid = rnd.meeting.meeting_id
        slots = {
            seat: staged[seat][0].calendar.slot_of_meeting(mid) if seat in staged else None
            for seat in order
        }
        for seat in order:
            if seat in staged:
                self._commit(rnd.index, seat, "decision", *staged[seat])
        missing = [agent_of(s) for s in order if s not in staged]
        split = len(set(slots.values())) != 1
        violations = [mid] if staged and (missing or split) else []
        violations += [
            other
            for other, participants in sorted(self.known.items())
            if consistent_slot(self.calendars, other, participants) is None
        ]
        reason = None
        if missing:
            reason = f"no valid batch from agent(s) {missing}"
        elif split:
            chosen = {agent_of(s): slot for s, slot in slots.items()}
            reason = f"participants chose different slots {chosen}"
        elif violations:
            reason = f"prior meeting(s) {violations} inconsistent"
        resolved = reason is None
        if resolved:
            self.known[mid] = rnd.meeting.participants
        self.resolved[mid] = resolved
        for other in violations:
            participants = self.known.get(other, rnd.meeting.participants)
            self.trace.emit(_ConsistencyViolation(
                round=rnd.index,
                data=_ConsistencyViolationData(
                    meeting_id=other,
                    slots={
                        str(a): self.calendars[a].slot_of_meeting(other) for a in participants
                    },
                ),
            ))
        self.trace.emit(_Resolution(
            round=rnd.index,
            data=_ResolutionData(
                meeting_id=mid,
                resolved=resolved,
                slots={str(agent_of(s)): slot for s, slot in slots.items()},
                reason=reason,
                turns=rnd.turn,
                consistency_violations=violations,
            ),
        ))

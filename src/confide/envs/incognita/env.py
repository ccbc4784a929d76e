"""The Incognita environment: one evaluated agent, a customer behind a disclosure gate,
and the service side arranged by the access condition (the Incognita paper, sections 3, A.1-A.3).

An episode
1. The condition is built (``social``: the desk names are assigned to roles by a shuffle
   seeded from the episode seed). The world is a fork of the suite's initial world.
2. The customer's opening line is delivered to the agent -- with the participant list in
   its prompt, the only thing the agent knows at the start.
3. Turns: the agent acts once per turn, up to ``max_turns`` (300). A message to the
   customer passes the gate (at most one field released) and the customer answers. A
   message to a desk starts the desk's turn: up to ``desk_steps`` steps of tool
   proposals, each decided by the execution layer and shown to the desk alone, ended by
   its reply. Under direct access the agent proposes tool calls itself. A message never
   ends the episode; only FINAL to ENVIRONMENT does.
4. Evaluation (`metrics.evaluate`) after the loop, outside the interaction: `score_episode`
   reads only the trace (`confide rescore` runs it again under another judge).

All traffic goes through one `Postbox`: desks are registered participants that only ever
exchange direct messages with the agent, so no desk can observe the customer dialogue or
another desk's exchanges. Each participant's observation is built from
`Postbox.seen_by(name)` and its own tool outcomes, and every act of every participant
goes through `ctx.ask`.

Trace events (besides ``message`` events, which carry sender and resolved recipients; one
class each in `events`)
- ``episode_setup`` {card_id, condition, participants, recipients, desk_roles (desk name
  -> role; bookkeeping, never observed), agent_tools, roles (role -> binding),
  max_turns, desk_steps, prompt_version, world_hash}
- ``tool_proposed`` / ``tool_rejected`` / ``tool_accepted`` / ``tool_executed``: see
  `execution` (``tool_accepted`` carries the admitted arguments; ``tool_executed`` the
  result, ``ok``, ``error_code`` and, for writes, the world hash after the call).
- ``gate_request`` {message_id, field, via, outcome} and ``gate_release`` {message_id,
  field, via, order}: see `gate`.
- ``invalid_action`` {participant, problem}: an agent turn or desk step with no usable
  action (the turn is spent).
- ``no_reply`` {participant, reason}: a desk or the customer gave no answer to a message
  (``silent``, ``invalid`` or ``steps_exhausted``).
- ``final`` {turn, text}: the agent's termination signal to ENVIRONMENT.
- ``budget_exhausted`` {turns}: the turn budget ran out without FINAL.
- ``evaluation``: `events.Evaluation` (success, db_pass, final_hash, gold_hash,
  outputs_pass, judge, assertions).

- ``conversation_ended`` {turn, by}: the native arm only: the user's stop token or an
  executed transfer to a human agent ended the episode (`native`).

Every event's ``round`` is the agent turn it happened in (the opening line: turn 0).

The native arm (``native``, `native`) runs the same loop with ``direct``'s tools and
agent, but its customer is tau-bench's user simulator (role ``user``): it writes the
opening message itself, holds every field from the start (no gate, so no gate events),
and its stop token, like an executed ``transfer_to_human_agents``, ends the episode.

Decisions
- An agent message to a recipient outside its participant list (possible only for
  LLM-free agents; the model schema forbids it) is an invalid turn.
- A desk gets at most ``desk_steps`` (8) steps per message; a desk that has not replied
  by then stays silent for that message. The customer may stay silent too (an empty
  reply). Silence is recorded as ``no_reply``.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from functools import cache
from pathlib import Path
from typing import Any

from confide.core.benchmark import EpisodeContext, EpisodeResult, SeatSpec, expand_lineup
from confide.core.message import Channel, Message
from confide.core.options import parse_options
from confide.core.postbox import Postbox
from confide.core.scoring import play_then_score
from confide.core.seeding import py_rng
from confide.core.trace import EnvEvent, MessageDelivered, TraceEvent
from confide.envs.incognita import events as ev
from confide.envs.incognita import native, prompts
from confide.envs.incognita.actions import (
    AgentAction,
    AgentObservation,
    CustomerObservation,
    DeskObservation,
    HistoryItem,
    payload_type,
)
from confide.envs.incognita.conditions import AGENT, CUSTOMER, NATIVE, TERMINAL, build_condition
from confide.envs.incognita.events import Via
from confide.envs.incognita.execution import ExecutionLayer, ToolOutcome
from confide.envs.incognita.gate import DisclosureGate, GateDecision, match_field
from confide.envs.incognita.metrics import evaluate, result_row
from confide.envs.incognita.options import EnvOptions
from confide.envs.incognita.participants import (
    LINEUP_SEAT,
    Customer,
    Desk,
    GateClassifier,
    card_problems,
    check_roles,
    make_agent,
    make_customer,
    make_desk,
    make_gate,
    make_judge,
    make_user,
)
from confide.envs.incognita.scenario import (
    RELEASE_TOKENS,
    SUITE_FILE,
    CardSuite,
    TaskCard,
    load_suite,
)
from confide.envs.incognita.transform import convert_file
from confide.envs.incognita.world import World
from confide.errors import ConfideError

SEAT = LINEUP_SEAT
DEFAULT_SUITE = "incognita-retail-18"


# ----- tasks -------------------------------------------------------------------------------


@dataclass(frozen=True, eq=False)
class ServiceTask:
    """One card with the initial world it runs on (shared, never mutated: episodes fork).
    The card alone is a `Task`, but an episode also needs the world, which the card does
    not hold (every card of a suite shares one)."""

    card: TaskCard
    world: World = field(repr=False)
    suite_id: str = DEFAULT_SUITE

    @property
    def id(self) -> str:
        return self.card.id


@cache
def _suite(path: str) -> tuple[World, CardSuite]:
    return load_suite(path)


def load_tasks(suite: str | None, path: str | None) -> list[ServiceTask]:
    """The shipped suite, or the suite file at `path` (a `cards.CardSuite` JSON)."""
    if path is None:
        if suite not in (None, DEFAULT_SUITE):
            raise ConfideError(f"incognita has no suite {suite!r}; available: {DEFAULT_SUITE}")
        path = str(SUITE_FILE)
    world, loaded = _suite(str(Path(path).resolve()))
    return [ServiceTask(card=card, world=world, suite_id=loaded.suite_id) for card in loaded.cards]


@cache
def _converted(tasks_path: str, world_path: str) -> tuple[ServiceTask, ...]:
    world, conversions = convert_file(tasks_path, world_path)
    suite_id = f"converted:{Path(tasks_path).name}"
    return tuple(ServiceTask(card=c.card, world=world, suite_id=suite_id)
                 for c in conversions if c.card is not None)


def load_source_tasks(tasks_path: str, world_path: str) -> list[ServiceTask]:
    """A tau-bench or tau2-bench retail task file run on its world (``--tasks F --world
    W``): every task the transformation converts (`transform`; the others are listed by
    ``confide incognita convert``). Both paths are checked first, with one error naming
    each that is wrong."""
    tasks = _converted(str(Path(tasks_path).resolve()), str(Path(world_path).resolve()))
    if not tasks:
        raise ConfideError(f"--tasks {tasks_path}: no task converts (see `confide incognita "
                           f"convert --tasks {tasks_path} --world {world_path}`)")
    return list(tasks)


def task_problems(tasks: Sequence[ServiceTask], seats: Sequence[SeatSpec]) -> list[str]:
    """The preflight's check of the tasks against the lineups' seats: the card-reading
    mocks know only the shipped cards (`participants.card_problems`)."""
    return card_problems([task.card for task in tasks], seats)


def seats(task: ServiceTask) -> Sequence[str]:
    """One seat: the evaluated agent."""
    return (SEAT,)


def private_markers(task: ServiceTask) -> dict[str, list[str]]:
    """The customer's private texts that are not in the database: its requests and the
    wording of its fields. No desk may observe them unless the agent passed them on."""
    database = task.world.canonical_json()
    texts = [*task.card.requests, *(field.value for field in task.card.customer_fields)]
    return {CUSTOMER: [text for text in texts if text not in database]}


# ----- the episode ------------------------------------------------------------------------


class Episode:
    """The state of one running episode."""

    def __init__(self, ctx: EpisodeContext, task: ServiceTask, options: EnvOptions) -> None:
        check_roles(ctx.roles)
        self.ctx = ctx
        self.card = task.card
        self.world0 = task.world
        self.options = options
        self.condition = build_condition(ctx.condition, py_rng(ctx.seed, "desk-names"))
        self.world = task.world.fork()
        self.postbox = Postbox(self.condition.participants, on_deliver=ctx.trace.message)
        self.layer = ExecutionLayer(self.world, self.condition.owners, ctx.trace)
        self.gate = DisclosureGate(self.card.customer_fields, ctx.trace)
        seat = expand_lineup(ctx.lineup, (SEAT,))[SEAT]
        self.agent = make_agent(ctx, seat, self.card, options.max_attempts)
        self.native = self.condition.name == NATIVE
        self.customer: Customer = (
            make_user(ctx, self.card) if self.native else make_customer(ctx, self.card)
        )
        self.classifier: GateClassifier | None = (
            None if self.native else make_gate(ctx, options.max_attempts)
        )
        self.ended = False
        """Set when the native arm's conversation ended by tau-bench's rule."""
        self.desks: dict[str, Desk] = {
            desk.name: make_desk(ctx, desk, options.max_attempts) for desk in self.condition.desks
        }
        self._outcomes: dict[str, list[tuple[int, ToolOutcome]]] = {
            name: [] for name in self.condition.participants
        }
        self.turn = 0

    # ----- observations --------------------------------------------------------------------

    def history(self, name: str) -> list[HistoryItem]:
        """What `name` has seen: delivered messages with its own tool outcomes interleaved
        at the point they happened."""
        seen = self.postbox.seen_by(name)
        items: list[HistoryItem] = []
        position = 0
        for at, outcome in self._outcomes[name]:
            items += [HistoryItem(message=m) for m in seen[position:at]]
            items.append(HistoryItem(tool=outcome))
            position = at
        items += [HistoryItem(message=m) for m in seen[position:]]
        return items

    def _propose(self, name: str, tool: str, arguments: Any) -> ToolOutcome:
        outcome = self.layer.propose(name, tool, arguments, turn=self.turn)
        self._outcomes[name].append((len(self.postbox.seen_by(name)), outcome))
        return outcome

    def _emit(self, event: EnvEvent) -> None:
        """Record a bookkeeping event of the current turn."""
        event.round = self.turn
        self.ctx.trace.emit(event)

    # ----- the loop -------------------------------------------------------------------------

    async def run(self) -> None:
        """Play the episode into the trace (scored by `score_episode`)."""
        self._emit(ev.EpisodeSetup(data=ev.EpisodeSetupData(
            card_id=self.card.card_id,
            condition=self.condition.name,
            participants=list(self.condition.participants),
            recipients=list(self.condition.recipients),
            desk_roles=self.condition.role_map(),
            agent_tools=list(self.condition.tools_of(AGENT)),
            roles=dict(sorted(self.ctx.roles.items())),
            max_turns=self.options.max_turns,
            desk_steps=self.options.desk_steps,
            prompt_version=prompts.PROMPT_VERSION,
            world_hash=self.world0.state_hash(),
        )))
        if self.native:
            await self._native_opening()
        else:
            self.postbox.post(CUSTOMER, Channel.dm(), to=[AGENT], text=self.card.opening_line)
        for turn in range(self.options.max_turns):
            if self.ended:
                break
            self.turn = turn
            observation = AgentObservation(
                name=AGENT,
                condition=self.condition.name,
                recipients=self.condition.recipients,
                tools=self.condition.tools_of(AGENT),
                turn=turn,
                turns_left=self.options.max_turns - turn,
                history=self.history(AGENT),
            )
            action = await self.ctx.ask(AGENT, observation, self.agent)
            if await self._apply(action):
                break
        else:
            self._emit(ev.BudgetExhausted(data=ev.BudgetExhaustedData(turns=self.options.max_turns)))

    async def _apply(self, action: AgentAction) -> bool:
        """Carry out one agent turn; True when it ended the episode."""
        if action.kind == "final":
            self._emit(ev.Final(seat=AGENT, data=ev.FinalData(turn=self.turn, text=action.text)))
            return True
        if action.kind == "tool":
            outcome = self._propose(AGENT, action.tool or "", action.arguments or {})
            if self.native and outcome.tool == native.TRANSFER and outcome.status == "ok":
                self._end("transfer")
                return True
            return False
        if action.kind == "invalid":
            self._invalid(AGENT, action.problem or "no usable action")
            return False
        recipient = action.recipient or ""
        if recipient not in self.condition.recipients:
            allowed = ", ".join(self.condition.recipients)
            self._invalid(AGENT, f"recipient {recipient!r} is not one of {allowed} ({TERMINAL} "
                                 "takes only FINAL)")
            return False
        message = self.postbox.post(AGENT, Channel.dm(), to=[recipient], text=action.text,
                                    payload=action.payload, round=self.turn, turn=self.turn)
        if recipient == CUSTOMER:
            await self._customer_turn(message)
        else:
            await self._desk_turn(recipient)
        return self.ended

    def _invalid(self, name: str, problem: str) -> None:
        self._emit(ev.InvalidAction(
            seat=name, data=ev.InvalidActionData(participant=name, problem=problem)
        ))

    async def _requested_field(self, message: Message) -> tuple[str | None, Via]:
        if message.payload is not None:
            field = message.payload.get("field") if payload_type(message) == "ask_field" else None
            return (field if isinstance(field, str) else None), "payload"
        if self.classifier is not None:
            return await self.classifier.classify(message.text or "", self.gate.tokens), "model"
        return match_field(message.text or "", self.gate.tokens), "keywords"

    async def _decide(self, message: Message) -> GateDecision:
        """What the customer may answer: the gate's decision, or in the native arm, where
        the user holds its whole instruction, only which field is asked (a typed request
        or the keyword matcher: no gate, no classifier, nothing recorded)."""
        if self.native:
            if message.payload is not None:
                field, via = await self._requested_field(message)
            else:
                field, via = match_field(message.text or "", tuple(RELEASE_TOKENS)), "keywords"
            return native.answer(field, self.card, via)
        field, via = await self._requested_field(message)
        return self.gate.decide(field, message_id=message.id, turn=self.turn, via=via)

    def _customer_observation(self, decision: GateDecision) -> CustomerObservation:
        return CustomerObservation(
            name=CUSTOMER,
            opening_line=self.card.opening_line,
            memory=native.instruction(self.card) if self.native else self.gate.memory(),
            requests=list(self.card.requests),
            history=self.postbox.seen_by(CUSTOMER),
            gate=decision,
        )

    async def _customer_turn(self, message: Message) -> None:
        observation = self._customer_observation(await self._decide(message))
        reply = await self.ctx.ask(CUSTOMER, observation, self.customer)
        if not reply.text:
            self._no_reply(CUSTOMER, "silent")
            return
        self.postbox.post(CUSTOMER, Channel.dm(), to=[AGENT], text=reply.text,
                          payload=reply.payload, round=self.turn, turn=self.turn)
        if self.native and native.stops(reply.text):
            self._end("user_stop")

    async def _native_opening(self) -> None:
        """The native user's first message (tau-bench: the user simulator speaks first);
        a user that says nothing leaves the agent to open."""
        opening = GateDecision(field=None, outcome="no_field", via="payload")
        reply = await self.ctx.ask(CUSTOMER, self._customer_observation(opening), self.customer)
        if not reply.text:
            self._no_reply(CUSTOMER, "silent")
            return
        self.postbox.post(CUSTOMER, Channel.dm(), to=[AGENT], text=reply.text,
                          payload=reply.payload)
        if native.stops(reply.text):
            self._end("user_stop")

    def _end(self, by: ev.EndedBy) -> None:
        self.ended = True
        self._emit(ev.ConversationEnded(data=ev.ConversationEndedData(turn=self.turn, by=by)))

    async def _desk_turn(self, name: str) -> None:
        seat = self.condition.desk(name)
        desk = self.desks[name]
        for step in range(self.options.desk_steps):
            observation = DeskObservation(
                name=name,
                role=seat.role,
                tools=seat.tools,
                steps_left=self.options.desk_steps - step,
                history=self.history(name),
            )
            action = await self.ctx.ask(name, observation, desk)
            if action.kind == "tool":
                self._propose(name, action.tool or "", action.arguments or {})
                continue
            if action.kind == "reply" and action.text:
                self.postbox.post(name, Channel.dm(), to=[AGENT], text=action.text,
                                  payload=action.payload, round=self.turn, turn=self.turn)
                return
            problem = action.problem or "empty reply"
            self._invalid(name, problem)
            self._no_reply(name, "invalid")
            return
        self._no_reply(name, "steps_exhausted")

    def _no_reply(self, name: str, reason: ev.NoReplyReason) -> None:
        self._emit(ev.NoReply(seat=name, data=ev.NoReplyData(participant=name, reason=reason)))


def _task(ctx: EpisodeContext) -> ServiceTask:
    if not isinstance(ctx.task, ServiceTask):
        raise ConfideError(f"incognita runs ServiceTask tasks, got {type(ctx.task).__name__}")
    return ctx.task


async def play_episode(ctx: EpisodeContext) -> None:
    """Play one Incognita episode into `ctx.trace` (see the module docstring)."""
    await Episode(ctx, _task(ctx), parse_options(EnvOptions, ctx.options, "incognita")).run()


def final_hash(task: ServiceTask, events: Sequence[TraceEvent]) -> str:
    """The canonical hash of the episode's final world: writes are the only changes and
    each `tool_executed` write records the hash after it, so it is the last one's (the
    initial world's when nothing was written)."""
    writes = [
        e.data.state_hash
        for e in events
        if isinstance(e, ev.ToolExecuted) and e.data.kind == "write"
    ]
    return str(writes[-1]) if writes else task.world.state_hash()


async def score_episode(ctx: EpisodeContext) -> EpisodeResult:
    """Evaluate the episode played into `ctx.trace` (section 3.3, outside the interaction:
    no participant sees it) and build its result row from the trace events."""
    task = _task(ctx)
    options = parse_options(EnvOptions, ctx.options, "incognita")
    check_roles(ctx.roles)
    played = list(ctx.trace.events)
    setup = next(e for e in played if isinstance(e, ev.EpisodeSetup))
    judge = make_judge(ctx, options.max_attempts)
    messages = [e.message for e in played if isinstance(e, MessageDelivered)]
    evaluation = await evaluate(task.world, task.card, final_hash(task, played), messages, judge)
    last_turn = next(
        e.round for e in reversed(played) if isinstance(e, EnvEvent) and e.round is not None
    )
    ctx.trace.emit(ev.Evaluated(round=last_turn, data=evaluation))
    participant = expand_lineup(ctx.lineup, (SEAT,))[SEAT].raw
    row = result_row(participant, evaluation, list(ctx.trace.events))
    metrics = {key: value for key, value in row.items() if key not in ("seat", "participant")}
    metrics["assertions"] = [v.model_dump(mode="json") for v in evaluation.assertions]
    return EpisodeResult(
        rows=[row],
        metrics=metrics,
        final_state={
            "final_hash": evaluation.final_hash,
            "gold_hash": evaluation.gold_hash,
            "condition": setup.data.condition,
            "desk_roles": setup.data.desk_roles,
        },
    )


run_episode = play_then_score(play_episode, score_episode)
"""Play one Incognita episode, then evaluate it."""

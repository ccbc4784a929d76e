"""The transformation: a tau-bench or tau2-bench retail task becomes an Incognita task card.

Incognita's third contribution is an instrument that converts an existing benchmark into
matched access conditions (the Incognita paper, section 1, contribution 3; section 3.1). The
source task becomes a card that is never shown to the agent; its criterion for success is
untouched. Here, for any source task (`loaders.SourceTask`) and the world it runs on:

- Gold actions: the source's, kept verbatim as the anchors (section 4.1). A call the
  source intends to fail (it fails when replayed) is marked ``expect_error``. tau2's
  ``get_item_details``, not one of the fifteen tools, becomes ``get_product_details`` of
  the product whose variants hold the item: the same read, by the rule of section 4.1.
- The gold state: those actions replayed on a fork of the world (`scenario.replay_gold`).
- Demand side, behind the disclosure gate: a field is made only for what the source tells
  its customer ("whatever the source tells the customer must be releasable and whatever
  it does not tell the customer we do not invent", section 5, task card repairs). Exact
  facts -- name, zip code, email, order ids, a new address stated in the instruction --
  become fields worded from the instruction's literals (a new address from the gold
  write's arguments, once the instruction states its first line). The rest of the
  instruction is split into sentences, turned into the first person, stripped of the
  gated literals, and given one field each by cue (`_PROSE_CUES`: reason, address,
  payment -- each only when a gold write makes that choice, `golden.CHOICES` -- else
  item); sentences that ask the agent for information become the
  customer's unprompted ``requests`` (A.2.1). The first sentence of the request is the
  opening line, the only card text the agent sees at start (section 3.1).
- Service side: who holds each tool is the condition's (`conditions.build_condition`: the
  agent under direct access, the one declared desk under indirect, the tool's desk from
  `tools.TOOL_DESKS` under social), so the card needs nothing more. The card's
  coordination reference, built here as the check below, records per gold call its
  executor in each condition (`ReferenceCall.executors`).
- Natural-language assertions, where the source has them: tau2's ``nl_assertions`` that
  ask the agent to tell the user something become output assertions in our wording ("The
  agent tells the customer ..."); those that ask for an action ("Agent should cancel all
  pending orders") are the database channel's to check, since the judge reads only the
  dialogue (section 3.3), and are reported in the conversion's notes. tau-bench's
  ``outputs`` (literals the agent must state) become "The agent tells the customer X.".

A task is refused, with its reason (`ConversionError`), when it has a gold action no tool
here can run, no single customer, a gold argument that no source the paper allows can
supply (the golden trajectory of section 4.1 is built as the check), or an output
assertion the LLM-free judge cannot check (it states no number or identifier). A task
with no gold action converts: its gold state is the initial world (the source's success
is that nothing changes).
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from functools import partial
from pathlib import Path
from typing import Any

from confide.envs.incognita.golden import CHOICES, build_task_reference
from confide.envs.incognita.judge import literals
from confide.envs.incognita.loaders import (
    SourceTask,
    load_tau2_tasks,
    load_tau_bench_tasks,
    load_world,
    read_json,
)
from confide.envs.incognita.reference import ReferenceDataError
from confide.envs.incognita.scenario import CARD_ID, CardError, CustomerField, TaskCard
from confide.envs.incognita.tools import SERVICE_TOOLS, ToolCall, ToolError, ToolKind, execute
from confide.envs.incognita.world import User, World, WorldDataError
from confide.errors import ConfideError


class ConversionError(ConfideError):
    """A source task that cannot become a card; the message is the reason."""


@dataclass(frozen=True)
class Conversion:
    """One source task's outcome: its card, or the reason there is none, plus notes on
    what the transformation changed or left to the database channel."""

    task_id: str
    card: TaskCard | None
    reason: str | None
    notes: tuple[str, ...] = ()


# ----- gold actions ----------------------------------------------------------------------


def _product_of(world: World, item_id: str) -> str | None:
    return next((pid for pid, p in world.products.items() if item_id in p.variants), None)


def gold_actions(world: World, actions: Sequence[ToolCall]) -> list[ToolCall]:
    """The source's gold actions as calls of the fifteen tools, with ``expect_error`` on
    those that fail when replayed in order on a fork of `world`."""
    calls = []
    for index, action in enumerate(actions):
        name, arguments = action.name, dict(action.arguments)
        if name == "get_item_details":
            item = arguments.get("item_id")
            product = _product_of(world, item) if isinstance(item, str) else None
            if product is None:
                raise ConversionError(f"gold action {index}: get_item_details of unknown item "
                                      f"{item!r}")
            name, arguments = "get_product_details", {"product_id": product}
        spec = SERVICE_TOOLS.get(name)
        if spec is None:
            raise ConversionError(f"gold action {index} calls {name!r}, which is not one of "
                                  "the fifteen service tools")
        try:
            spec.admit(arguments)
        except ToolError as error:
            raise ConversionError(f"gold action {index}: {error.message}") from None
        calls.append(ToolCall(name=name, arguments=arguments))
    replayed = world.fork()
    return [
        call.model_copy(update={"expect_error": isinstance(
            execute(replayed, call.name, call.arguments), ToolError)})
        for call in calls
    ]


def customer_of(world: World, task: SourceTask, calls: Sequence[ToolCall]) -> str:
    """The one customer the task is about: the source's user id, else every user id the
    gold calls name or resolve to (identity lookups' results, orders' owners)."""
    found: list[str] = [task.user_id] if task.user_id else []
    replayed = world.fork()
    for call in calls:
        outcome = execute(replayed, call.name, call.arguments)
        user_id = call.arguments.get("user_id")
        order = world.orders.get(str(call.arguments.get("order_id")))
        if isinstance(user_id, str):
            found.append(user_id)
        if order is not None:
            found.append(order.user_id)
        if call.name.startswith("find_user_id") and isinstance(outcome, str):
            found.append(outcome)
    distinct = list(dict.fromkeys(found)) or _named_in(world, task.instruction)
    if len(distinct) != 1:
        raise ConversionError(f"the gold actions concern {len(distinct)} customers "
                              f"({', '.join(distinct) or 'none'}), not one")
    if distinct[0] not in world.users:
        raise ConversionError(f"customer {distinct[0]!r} is not in the world")
    return distinct[0]


def _named_in(world: World, text: str) -> list[str]:
    """The users the instruction identifies by user id, email, or full name and zip code."""
    return [
        user.user_id
        for user in world.users.values()
        if _mentions(text, user.user_id)
        or _mentions(text, user.email)
        or (_mentions(text, f"{user.name.first_name} {user.name.last_name}")
            and _mentions(text, user.address.zip))
    ]


# ----- the instruction --------------------------------------------------------------------

_SENTENCE = re.compile(r"(?<=[.!?])\s+(?=[A-Z\"'(])|\n+")
_EMAIL = re.compile(r"[\w.+-]+@[\w-]+(?:\.[\w-]+)+")
_ORDER = re.compile(r"(?<!\w)#?W?\d{7}(?!\d)")
_REQUEST = re.compile(
    r"\byou (?:also )?(?:ask|want to know|wonder)\b|\bask the agent\b|\bhow (?:much|many)\b"
    r"|\bwant the agent to (?:tell|confirm)\b", re.IGNORECASE)
_PROSE_CUES: tuple[tuple[str, re.Pattern[str]], ...] = (
    ("reason", re.compile(r"\bno longer need|\bmistake|\breason\b", re.IGNORECASE)),
    ("address", re.compile(r"\baddress(?:es)?\b|\bmov(?:e|ing)\b", re.IGNORECASE)),
    ("payment", re.compile(r"\bgift card|\bpaypal\b|\bcredit card|\bvisa\b|\bmastercard\b"
                           r"|\bpay(?:ment|ing)?\b|\brefund", re.IGNORECASE)),
)
"""Cue patterns of the prose fields, tried in order; a sentence matching none is ``item``."""
_UNKNOWN = re.compile(r"\b(?:not|n't) (?:remember|know|recall)\b", re.IGNORECASE)
_NOTHING = re.compile(r"^\W*(?:none)?\W*$", re.IGNORECASE)
_OBJECT_BEFORE = re.compile(
    r"\b(?:(?:tell|ask|give|send|help|provide|offer|show|let|call|contact|remind|assure|"
    r"guarantee|notify|inform)s?|told|asked|gave|sent|helped|"
    r"to|for|with|at|from|about|than|by|of|on|into|toward)\s+$", re.IGNORECASE)
_PRONOUNS: tuple[tuple[str, str], ...] = (
    (r"you are", "I am"), (r"you were", "I was"), (r"you're", "I'm"), (r"you've", "I've"),
    (r"you'll", "I'll"), (r"you'd", "I'd"), (r"yourself", "myself"), (r"yours", "mine"),
    (r"your", "my"),
)


def sentences(text: str) -> list[str]:
    """`text` split into sentences (and at line breaks), empty ones and "None" dropped."""
    parts = (part.strip() for part in _SENTENCE.split(text))
    return [part for part in parts if part and not _NOTHING.match(part)]


def _case(template: str, found: re.Match[str]) -> str:
    return template[:1].upper() + template[1:] if found.group(0)[:1].isupper() else template


def first_person(text: str) -> str:
    """The source's second-person instruction as the customer says it ("you want" -> "I
    want", "tell you" -> "tell me"): "you" is "me" after a verb of giving or telling or a
    preposition, else "I"."""
    for pattern, replacement in _PRONOUNS:
        text = re.sub(rf"\b{pattern}\b", partial(_case, replacement), text, flags=re.IGNORECASE)

    def you(match: re.Match[str]) -> str:
        obj = _OBJECT_BEFORE.search(text[: match.start()]) is not None
        return "me" if obj else "I"

    text = re.sub(r"\byou\b", you, text, flags=re.IGNORECASE)
    return text[:1].upper() + text[1:]


def _mentions(text: str, value: str) -> bool:
    return re.search(rf"(?<![\w@#]){re.escape(value)}(?![\w@])", text, re.IGNORECASE) is not None


@dataclass(frozen=True)
class _Facts:
    """The exact facts the instruction states, as it states them."""

    names: tuple[str, ...]
    user_id: str | None
    zips: tuple[str, ...]
    emails: tuple[str, ...]
    orders: tuple[str, ...]

    def masked(self, text: str) -> str:
        """`text` without the gated literals (order ids, emails, zip codes, user id)."""
        for literal in (*self.orders, *self.emails, *self.zips, *filter(None, [self.user_id])):
            text = re.sub(rf"\s*(?<![\w@#]){re.escape(literal)}(?![\w@])", "", text)
        return re.sub(r"\s+([,.;:!?])", r"\1", text)

    def identity(self, sentence: str) -> bool:
        """Whether `sentence` is about who the customer is (it is replaced by fields)."""
        literal = any(_mentions(sentence, value) for value in
                      (*self.names, *self.zips, *self.emails, *filter(None, [self.user_id])))
        identity_words = re.search(r"\bemail|\bzip ?code|\bname\b", sentence, re.IGNORECASE)
        return literal or (identity_words is not None and _UNKNOWN.search(sentence) is not None)


def _facts(text: str, user: User, calls: Sequence[ToolCall], world: World) -> _Facts:
    first, last = user.name.first_name, user.name.last_name
    full = f"{first} {last}"
    names = (full,) if _mentions(text, full) else (first,) if _mentions(text, first) else ()
    zips = [user.address.zip, *(str(c.arguments["zip"]) for c in calls
                                if c.name == "find_user_id_by_name_zip")]
    orders = [m.group(0) for m in _ORDER.finditer(text)
              if f"#W{m.group(0).lstrip('#W')}" in world.orders]
    return _Facts(
        names=names,
        user_id=user.user_id if _mentions(text, user.user_id) else None,
        zips=tuple(z for z in dict.fromkeys(zips) if _mentions(text, z)),
        emails=tuple(dict.fromkeys(_EMAIL.findall(text))),
        orders=tuple(dict.fromkeys(orders)),
    )


def _listed(values: Sequence[str]) -> str:
    return values[0] if len(values) == 1 else ", ".join(values[:-1]) + " and " + values[-1]


def _exact_fields(facts: _Facts, text: str, calls: Sequence[ToolCall]) -> dict[str, list[str]]:
    fields: dict[str, list[str]] = {}
    if facts.names or facts.user_id:
        said = [f"My name is {facts.names[0]}."] if facts.names else []
        said += [f"My user id is {facts.user_id}."] if facts.user_id else []
        fields["name"] = [" ".join(said)]
    if facts.zips:
        fields["zip"] = [f"My zip code is {' or '.join(facts.zips)}."]
    if facts.emails:
        noun = "email is" if len(facts.emails) == 1 else "emails are"
        fields["email"] = [f"My {noun} {_listed(facts.emails)}."]
    if facts.orders:
        noun = "It's order" if len(facts.orders) == 1 else "The orders are"
        fields["order_id"] = [f"{noun} {_listed(facts.orders)}."]
    for call in calls:
        line = call.arguments.get("address1")
        if isinstance(line, str) and _mentions(text, line) and "address" not in fields:
            parts = [call.arguments.get(key) for key in ("address1", "address2", "city")]
            region = f"{call.arguments.get('state')} {call.arguments.get('zip')}"
            shown = [str(p) for p in parts if p] + [region, str(call.arguments.get("country"))]
            fields["address"] = [f"The address is {', '.join(shown)}."]
    return fields


@dataclass(frozen=True)
class CustomerSide:
    """The demand side of a card: what the customer opens with, holds and raises."""

    opening_line: str
    fields: list[CustomerField]
    requests: list[str]


def customer_side(text: str, user: User, calls: Sequence[ToolCall], world: World) -> CustomerSide:
    """The opening line, gated fields and requests from the instruction (module docstring)."""
    facts = _facts(text, user, calls, world)
    fields = _exact_fields(facts, text, calls)
    chosen = {CHOICES[a] for c in calls if SERVICE_TOOLS[c.name].kind is ToolKind.WRITE
              for a in c.arguments if a in CHOICES}
    said = [s for s in sentences(text) if not facts.identity(s)]
    if not said:
        raise ConversionError("the instruction states no request besides who the customer is")
    opening = first_person(facts.masked(said[0]))
    requests: list[str] = []
    for sentence in said[1:]:
        spoken = first_person(facts.masked(sentence))
        if _REQUEST.search(sentence):
            requests.append(spoken)
            continue
        token = next((t for t, cue in _PROSE_CUES if t in chosen and cue.search(sentence)),
                     "item")
        fields.setdefault(token, []).append(spoken)
    return CustomerSide(
        opening_line=f"Hi! {opening}",
        fields=[CustomerField(token=token, value=" ".join(values))
                for token, values in fields.items()],
        requests=requests,
    )


# ----- assertions -------------------------------------------------------------------------

_TELL = re.compile(
    r"^(?:the )?agent should (?:tell|inform|provide|give|confirm to|let)(?: the user| user)?"
    r"(?: know)?(?: that)?\s+", re.IGNORECASE)


def output_assertions(task: SourceTask) -> tuple[list[str], list[str]]:
    """(output assertions in our wording, the source's action assertions left to the
    database channel). A tau-bench ``outputs`` entry is a literal the agent must state."""
    kept: list[str] = []
    actions: list[str] = []
    for assertion in task.output_assertions:
        text = assertion.strip()
        told = _TELL.match(text)
        if told is not None:
            statement = text[told.end():]
            kept.append(f"The agent tells the customer {statement}")
        elif re.match(r"^(?:the )?agent should\b", text, re.IGNORECASE):
            actions.append(text)
        else:
            kept.append(f"The agent tells the customer {text.rstrip('.')}.")
    for assertion in kept:
        if not literals(assertion.removeprefix("The agent tells the customer ")):
            raise ConversionError(f"output assertion {assertion!r} states no number or "
                                  "identifier, so the LLM-free judge cannot check it")
    return kept, actions


# ----- one task, many tasks ---------------------------------------------------------------


def convert_task(world: World, task: SourceTask, prefix: str) -> Conversion:
    """`task` as a card with id ``<prefix>-<task id>`` (or the reason it cannot be one)."""
    card_id = f"{prefix}-{task.task_id}".lower()
    if not CARD_ID.match(card_id):
        return Conversion(task_id=task.task_id, card=None, reason=(
            f"task id {task.task_id!r} cannot name a card: card ids are lowercase letters "
            "and digits in words joined by single hyphens"))
    try:
        calls = gold_actions(world, task.actions)
        user_id = customer_of(world, task, calls)
        side = customer_side(task.instruction, world.users[user_id], calls, world)
        kept, actions = output_assertions(task)
        card = TaskCard(
            card_id=card_id,
            summary=f"{prefix} retail task {task.task_id}, converted: {side.opening_line}",
            user_id=user_id,
            opening_line=side.opening_line,
            customer_fields=side.fields,
            requests=side.requests,
            gold_actions=calls,
            output_assertions=kept,
        )
        card, dropped = _traceable(world, card)
    except (ConversionError, ReferenceDataError, CardError) as error:
        return Conversion(task_id=task.task_id, card=None, reason=str(error))
    notes = [f"failing read {c.name} {c.arguments} dropped: no source states its "
             "argument" for c in dropped]
    notes += [f"action assertion left to the database channel: {a!r}" for a in actions]
    replaced = sum(a.name == "get_item_details" for a in task.actions)
    if replaced:
        notes.append(f"{replaced} get_item_details read(s) made get_product_details")
    return Conversion(task_id=task.task_id, card=card, reason=None, notes=tuple(notes))


def _traceable(world: World, card: TaskCard) -> tuple[TaskCard, list[ToolCall]]:
    """`card` with its golden trajectory built (section 4.1), minus the failing reads whose
    arguments no source supplies (an upstream agent's guess, such as an item id tried as a
    product id): such a read changes nothing, and the paper traces every argument of every
    call to a source. Any other untraceable argument refuses the card."""
    kept: list[ToolCall] = []
    dropped: list[ToolCall] = []
    for call in card.gold_actions:
        failing_read = call.expect_error and SERVICE_TOOLS[call.name].kind is ToolKind.READ
        if failing_read:
            try:
                build_task_reference(world, card.model_copy(update={"gold_actions": [*kept, call]}))
            except ReferenceDataError:
                dropped.append(call)
                continue
        kept.append(call)
    card = card.model_copy(update={"gold_actions": kept})
    build_task_reference(world, card)
    return card, dropped


def source_format(path: Path) -> str:
    """``tau2`` or ``tau-bench``: which kind of task file `path` is (by its first task)."""
    data = read_json(path)
    first = data[0] if isinstance(data, list) and data else None
    if isinstance(first, dict) and "user_scenario" in first:
        return "tau2"
    if isinstance(first, dict) and "instruction" in first:
        return "tau-bench"
    raise WorldDataError(f"{path}: not a tau2-bench tasks.json (tasks with 'user_scenario') "
                         "nor tau-bench tasks as JSON (tasks with 'instruction'), or empty")


def _check_paths(tasks_path: Path, world_path: Path) -> None:
    problems = []
    if not tasks_path.is_file():
        problems.append(f"--tasks {tasks_path}: no such file (a tau2 tasks.json or tau-bench "
                        "tasks as JSON)")
    if not world_path.exists():
        problems.append(f"--world {world_path}: no such file or directory (a tau2 db.json or "
                        "a tau-bench retail data directory)")
    if problems:
        raise WorldDataError("\n".join(problems))


def convert_file(tasks_path: str | Path, world_path: str | Path) -> tuple[World, list[Conversion]]:
    """Load a source task file and its world and convert every task."""
    tasks_path, world_path = Path(tasks_path), Path(world_path)
    _check_paths(tasks_path, world_path)
    kind = source_format(tasks_path)
    world = load_world(world_path)
    world.state_hash()  # fills the per-record cache every fork then shares
    loaded = load_tau2_tasks(tasks_path) if kind == "tau2" else load_tau_bench_tasks(tasks_path)
    return world, convert_all(world, loaded, kind)


def convert_all(world: World, tasks: Iterable[SourceTask], prefix: str) -> list[Conversion]:
    """Every task converted; card ids must come out distinct."""
    conversions = [convert_task(world, task, prefix) for task in tasks]
    ids = [c.card.card_id for c in conversions if c.card is not None]
    if len(set(ids)) != len(ids):
        raise ConversionError(f"task ids repeat after conversion: {sorted(ids)}")
    return conversions


def conversion_rows(conversions: Sequence[Conversion]) -> list[dict[str, Any]]:
    """One row per task: its card id or reason, and the notes (for printing)."""
    rows: list[dict[str, Any]] = []
    for c in conversions:
        rows.append({"task": c.task_id, "card": c.card.card_id if c.card else "",
                     "reason": c.reason or "", "notes": "; ".join(c.notes)})
    return rows

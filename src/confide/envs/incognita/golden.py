"""Building the golden trajectory of a card by rule, and checking that it replays.

Incognita (the Incognita paper, section 4.1): the card's gold actions are kept verbatim as the
anchors (writes, and whatever reads the card already lists); every argument of every call
is traced to a source, and where no source exists yet the read that supplies it is added
immediately before the call that needs it. Replaying the result on a clean world must give
the gold final-state hash.

Tracing rules, tried in this order for each scalar argument value:

1. Customer side, needing no tool: the opening line, then the customer's unprompted
   requests, then a releasable customer field (the agent must ask for it). Text matches
   are case-insensitive and whole-token (``#W123`` does not match inside ``#W1234``).
2. Policy vocabulary: the two admissible cancellation reasons.
3. An earlier call of the trajectory whose tool is a designated producer of this argument
   (`PRODUCERS`) and whose return at that point contains the value: preferably one about
   the same record as the consuming call (same order id, user id...), then the preferred
   producer tool, then the latest.
4. A new read, by rule: the first designated producer for which an argument set exists
   whose return contains the value (`_candidates`: the customer's identity lookups from
   the world's records of that customer, the customer's profile, the order the consuming
   call names and then the customer's orders in listed order, the product whose variants
   include the item). The new read's own arguments are traced by the same rules.
5. Otherwise the card is rejected, naming the call, the argument and the value.

A write argument whose value is read from a service record but chosen by the customer
(which items, which payment method, which address, why cancel: `CHOICES`) also needs the
customer field that states the choice, when the card has one; that field is recorded as
the value's ``choice`` and is an information item of the call. A policy word (a
cancellation reason) comes from the policy's vocabulary; the customer's reason field is its
choice.

Decisions where the paper is silent: an empty value (a blank second address line) is taken
from the same customer field as a non-empty sibling address argument of the call, or else
from a producer read that holds it; numbers in a ``calculate`` expression are traced one by
one, compared as numbers; free-text arguments (``summary``) have source kind ``free``.
"""

from __future__ import annotations

import hashlib
import json
import math
import re
import sys
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field

from pydantic import JsonValue

from confide.envs.incognita.reference import (
    AGENT_ROLE,
    OBSERVABLE_KINDS,
    SERVICE_ROLE,
    CoordinationReference,
    InformationItem,
    ReferenceCall,
    ReferenceDataError,
    RoleAssignment,
    Source,
    TaskReference,
    ValueSource,
    assemble,
    save_reference,
)
from confide.envs.incognita.scenario import CardSuite, TaskCard, load_suite, replay_gold
from confide.envs.incognita.tools import (
    SERVICE_TOOLS,
    ToolCall,
    ToolError,
    execute,
)
from confide.envs.incognita.world import CANCEL_REASONS, World

ADDRESS_ARGS: frozenset[str] = frozenset(
    {"address1", "address2", "city", "state", "country", "zip"}
)
FREE_TEXT_ARGS: frozenset[str] = frozenset({"summary"})
NUMERIC_ARGS: frozenset[str] = frozenset({"expression"})

PRODUCERS: Mapping[str, tuple[str, ...]] = {
    "user_id": ("find_user_id_by_email", "find_user_id_by_name_zip", "get_order_details"),
    "order_id": ("get_user_details", "get_order_details"),
    "payment_method_id": ("get_user_details", "get_order_details"),
    "item_ids": ("get_order_details",),
    "new_item_ids": ("get_product_details",),
    "item_id": ("get_order_details", "get_product_details"),
    "product_id": ("get_order_details", "list_all_product_types"),
    "email": ("get_user_details",),
    "first_name": ("get_user_details",),
    "last_name": ("get_user_details",),
    "expression": ("get_order_details", "get_product_details", "get_user_details", "calculate"),
    **{name: ("get_user_details", "get_order_details") for name in sorted(ADDRESS_ARGS)},
}
"""Argument name -> the read tools that can supply its value, in order of preference."""

CHOICES: Mapping[str, str] = {
    "reason": "reason",
    "item_ids": "item",
    "new_item_ids": "item",
    "payment_method_id": "payment",
    **dict.fromkeys(sorted(ADDRESS_ARGS), "address"),
}
"""Argument name -> the release token of the customer field that decides its value."""

_NUMBER = re.compile(r"\d+(?:\.\d+)?")


class _Untraceable(Exception):
    """No source for a value (internal; becomes a `ReferenceDataError`)."""


@dataclass
class _Step:
    call: ToolCall
    origin: str
    outcome: JsonValue | ToolError
    sources: list[ValueSource] = field(default_factory=list)


def card_hash(card: TaskCard) -> str:
    """sha256 of the card's canonical JSON."""
    text = json.dumps(card.model_dump(mode="json"), sort_keys=True)
    return hashlib.sha256(text.encode()).hexdigest()


def _text_has(text: str, value: str) -> bool:
    return re.search(rf"(?<![\w#]){re.escape(value)}(?!\w)", text, re.IGNORECASE) is not None


def _numbers_in(text: str) -> list[float]:
    return [float(n) for n in _NUMBER.findall(re.sub(r"(?<=\d),(?=\d{3})", "", text))]


def _json_has(data: JsonValue, value: str, numeric: bool) -> bool:
    """True when `value` is a scalar or a key somewhere in `data`."""
    if isinstance(data, dict):
        return any(key == value or _json_has(item, value, numeric) for key, item in data.items())
    if isinstance(data, list):
        return any(_json_has(item, value, numeric) for item in data)
    if numeric and isinstance(data, int | float) and not isinstance(data, bool):
        return math.isclose(float(data), float(value), abs_tol=1e-9)
    return isinstance(data, str) and data == value


class _Builder:
    """Builds one card's golden trajectory while replaying it on a private world."""

    def __init__(self, world0: World, card: TaskCard) -> None:
        self.card = card
        self.world = world0.fork()
        self.user = world0.users[card.user_id]
        self.steps: list[_Step] = []
        self._tracing: set[tuple[str, str]] = set()

    def build(self) -> list[_Step]:
        for index, call in enumerate(self.card.gold_actions):
            try:
                self._add(call, "gold")
            except _Untraceable as exc:
                raise ReferenceDataError(
                    f"card {self.card.card_id}: gold_actions[{index}] ({call.name}): {exc}"
                ) from None
        return self.steps

    # ----- adding calls ---------------------------------------------------------------

    def _add(self, call: ToolCall, origin: str) -> int:
        sources = self._trace_call(call)
        outcome = execute(self.world, call.name, call.arguments)
        failed = isinstance(outcome, ToolError)
        if failed != call.expect_error:
            detail = outcome.message if isinstance(outcome, ToolError) else "it succeeded"
            verdict = "failed" if failed else "was meant to fail"
            raise ReferenceDataError(
                f"card {self.card.card_id}: {origin} call {call.name} {call.arguments} "
                f"{verdict}: {detail}"
            )
        self.steps.append(_Step(call, origin, outcome, sources))
        return len(self.steps) - 1

    def _trace_call(self, call: ToolCall) -> list[ValueSource]:
        sources: list[ValueSource] = []
        blanks: list[str] = []
        for argument, raw in call.arguments.items():
            if argument in FREE_TEXT_ARGS:
                sources.append(
                    ValueSource(argument=argument, value=str(raw), source=Source(kind="free"))
                )
                continue
            for value in _scalars(argument, raw):
                if value == "":
                    blanks.append(argument)
                    continue
                source = self._trace(call, argument, value)
                sources.append(self._value_source(call, argument, value, source))
        for argument in blanks:
            source = self._trace_blank(call, argument, sources)
            sources.append(self._value_source(call, argument, "", source))
        return sources

    def _value_source(
        self, call: ToolCall, argument: str, value: str, source: Source
    ) -> ValueSource:
        """The value's source, with the customer field that chooses it (writes only)."""
        token = CHOICES.get(argument)
        choice = None
        if (
            token is not None
            and SERVICE_TOOLS[call.name].kind == "write"
            and self.card.field(token) is not None
            and source.token != token
        ):
            choice = token
        return ValueSource(argument=argument, value=value, source=source, choice=choice)

    # ----- tracing one value ---------------------------------------------------------------

    def _trace(self, call: ToolCall, argument: str, value: str) -> Source:
        numeric = argument in NUMERIC_ARGS
        customer = self._customer_source(value, numeric)
        if customer is not None:
            return customer
        if not numeric and value.lower() in CANCEL_REASONS:
            return Source(kind="policy")
        earlier = self._earlier_call(call, argument, value, numeric)
        if earlier is not None:
            return earlier
        key = (argument, value)
        if key in self._tracing:
            raise _Untraceable(f"argument {argument}={value!r} depends on itself")
        self._tracing.add(key)
        try:
            return self._new_read(call, argument, value, numeric)
        finally:
            self._tracing.discard(key)

    def _customer_source(self, value: str, numeric: bool) -> Source | None:
        def has(text: str) -> bool:
            if numeric:
                return any(math.isclose(n, float(value), abs_tol=1e-9) for n in _numbers_in(text))
            return _text_has(text, value)

        if has(self.card.opening_line):
            return Source(kind="opening")
        for index, request in enumerate(self.card.requests):
            if has(request):
                return Source(kind="request", request=index)
        for customer_field in self.card.customer_fields:
            if has(customer_field.value):
                return Source(kind="field", token=customer_field.token)
        return None

    def _earlier_call(
        self, call: ToolCall, argument: str, value: str, numeric: bool
    ) -> Source | None:
        """The earlier producer call holding `value`: one about the same record as `call`
        (sharing an argument value under the same name) first, then by the producers'
        order of preference, then the latest."""
        producers = PRODUCERS.get(argument, ())
        found = [
            index
            for index, step in enumerate(self.steps)
            if step.call.name in producers
            and not isinstance(step.outcome, ToolError)
            and _json_has(step.outcome, value, numeric)
        ]
        if not found:
            return None

        def related(index: int) -> bool:
            arguments = self.steps[index].call.arguments
            return any(call.arguments.get(name) == v for name, v in arguments.items())

        def rank(index: int) -> tuple[bool, int, int]:
            return (related(index), -producers.index(self.steps[index].call.name), index)

        best = max(found, key=rank)
        return Source(kind="call", call=best)

    def _new_read(self, call: ToolCall, argument: str, value: str, numeric: bool) -> Source:
        for tool in PRODUCERS.get(argument, ()):
            for arguments in self._candidates(tool, call, value):
                outcome = execute(self.world, tool, arguments)
                if isinstance(outcome, ToolError) or not _json_has(outcome, value, numeric):
                    continue
                mark = len(self.steps)
                try:
                    return Source(
                        kind="call",
                        call=self._add(ToolCall(name=tool, arguments=arguments), "rule"),
                    )
                except _Untraceable:
                    del self.steps[mark:]
        raise _Untraceable(f"no source for argument {argument}={value!r}")

    def _candidates(self, tool: str, call: ToolCall, value: str) -> Iterator[dict[str, JsonValue]]:
        user = self.user
        if tool == "find_user_id_by_email":
            yield {"email": user.email}
        elif tool == "find_user_id_by_name_zip":
            yield {
                "first_name": user.name.first_name,
                "last_name": user.name.last_name,
                "zip": user.address.zip,
            }
        elif tool == "get_user_details":
            yield {"user_id": user.user_id}
        elif tool == "get_order_details":
            named = call.arguments.get("order_id")
            if isinstance(named, str):
                yield {"order_id": named}
            for order_id in user.orders:
                if order_id != named:
                    yield {"order_id": order_id}
        elif tool == "get_product_details":
            for product_id in sorted(self.world.products):
                if value in self.world.products[product_id].variants:
                    yield {"product_id": product_id}
        elif tool == "list_all_product_types":
            yield {}

    def _trace_blank(self, call: ToolCall, argument: str, sources: list[ValueSource]) -> Source:
        if argument in ADDRESS_ARGS:
            for sibling in sources:
                if sibling.argument in ADDRESS_ARGS and sibling.source.kind == "field":
                    return sibling.source
        earlier = self._earlier_call(call, argument, "", numeric=False)
        if earlier is not None:
            return earlier
        return self._new_read(call, argument, "", numeric=False)


def _scalars(argument: str, raw: JsonValue) -> list[str]:
    """The distinct scalar values of one argument, in first-seen order."""
    if isinstance(raw, str):
        if argument in NUMERIC_ARGS:
            return list(dict.fromkeys(_NUMBER.findall(raw)))
        return [raw]
    if isinstance(raw, list) and all(isinstance(v, str) for v in raw):
        return list(dict.fromkeys(str(v) for v in raw))
    raise _Untraceable(f"argument {argument} has a value of unsupported type: {raw!r}")


# ----- from steps to the reference -------------------------------------------------------


def _counted(steps: list[_Step]) -> list[bool]:
    """Writes not meant to fail, and (transitively) the calls whose results they consume."""
    counted = [
        not s.call.expect_error and SERVICE_TOOLS[s.call.name].kind == "write" for s in steps
    ]
    for index in range(len(steps) - 1, -1, -1):
        if counted[index]:
            for value in steps[index].sources:
                if value.source.call is not None and not steps[value.source.call].call.expect_error:
                    counted[value.source.call] = True
    return counted


def build_task_reference(world0: World, card: TaskCard) -> TaskReference:
    """The coordination reference of one card (section 4.1), verified by replay."""
    steps = _Builder(world0, card).build()
    counted = _counted(steps)
    calls = []
    for index, step in enumerate(steps):
        spec = SERVICE_TOOLS[step.call.name]
        desk = str(spec.desk)
        calls.append(
            ReferenceCall(
                index=index,
                tool=step.call.name,
                kind=str(spec.kind),
                arguments=dict(step.call.arguments),
                origin=step.origin,
                expect_error=step.call.expect_error,
                counted=counted[index],
                desk=desk,
                executors={"direct": AGENT_ROLE, "indirect": SERVICE_ROLE, "social": desk},
                sources=step.sources,
            )
        )
    reference = TaskReference(
        card_id=card.card_id,
        card_hash=card_hash(card),
        gold_state_hash=replay_gold(world0, card).state_hash(),
        calls=calls,
        items=_items(calls),
        role_assignments=_role_assignments(calls),
    )
    verify_replay(world0, card, reference)
    return reference


def _items(calls: list[ReferenceCall]) -> list[InformationItem]:
    found: dict[str, tuple[Source, list[str], list[int]]] = {}
    for call in calls:
        if not call.counted:
            continue
        for value in call.sources:
            feeds = [] if value.source.kind == "free" else [value.source]
            if value.choice is not None:
                feeds.append(Source(kind="field", token=value.choice))
            for source in feeds:
                _, values, needed = found.setdefault(source.key, (source, [], []))
                if value.value not in values:
                    values.append(value.value)
                if call.index not in needed:
                    needed.append(call.index)
    return [
        InformationItem(
            key=key,
            source=source,
            observable=source.kind in OBSERVABLE_KINDS,
            values=values,
            needed_by=needed,
        )
        for key, (source, values, needed) in found.items()
    ]


def _role_assignments(calls: list[ReferenceCall]) -> list[RoleAssignment]:
    pairs: dict[tuple[str, str], list[int]] = {}
    for call in calls:
        if call.counted:
            pairs.setdefault((call.tool, call.desk), []).append(call.index)
    return [RoleAssignment(tool=t, desk=d, calls=c) for (t, d), c in pairs.items()]


def verify_replay(world0: World, card: TaskCard, reference: TaskReference) -> None:
    """Replay `reference`'s calls on a fork of `world0`: every call must fail exactly when
    it is meant to, and the final state must have the card's gold hash (section 4.1)."""
    world = world0.fork()
    for call in reference.calls:
        outcome = execute(world, call.tool, call.arguments)
        if isinstance(outcome, ToolError) != call.expect_error:
            verdict = (
                f"failed: {outcome.message}"
                if isinstance(outcome, ToolError)
                else "succeeded but is meant to fail"
            )
            raise ReferenceDataError(
                f"card {card.card_id}: reference call {call.index} ({call.tool}) {verdict}"
            )
    gold = replay_gold(world0, card).state_hash()
    final = world.state_hash()
    if final != gold or reference.gold_state_hash != gold:
        raise ReferenceDataError(
            f"card {card.card_id}: replaying the reference gives state {final}, "
            f"the gold actions give {gold} (reference records {reference.gold_state_hash})"
        )


def build_reference(world0: World, suite: CardSuite) -> CoordinationReference:
    """The coordination reference of every card of `suite` (section 4.1)."""
    tasks = [build_task_reference(world0, card) for card in suite.cards]
    return assemble(suite.suite_id, world0.state_hash(), tasks)


def main() -> None:
    """Rebuild the frozen reference from the shipped suite (run after a card changes)."""
    world0, suite = load_suite()
    reference = build_reference(world0, suite)
    path = save_reference(reference)
    totals = reference.totals
    sys.stdout.write(f"wrote {path}: {totals.model_dump()}\n")


if __name__ == "__main__":
    main()

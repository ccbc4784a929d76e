"""Typed-message belief updates for the reference protocols (the CalBench paper §F.2, Table 10).

Every typed payload (`{"protocol", "type", ...}`, see participants/base.py) is evidence
about its sender's calendar for each agent it was delivered to: the target is the sender,
the observers are the message's recipients (one for a DM, every other member for a
groupchat post, which all of them saw). Table 10, with alpha the strength:

| protocol | message            | slots updated              | evidence e               | alpha |
| -------- | ------------------ | -------------------------- | ------------------------ | ----- |
| dsm      | proposals          | each proposed slot         | 1.0                      | 1.0   |
| dsm      | scores             | each scored slot           | 0 if s <= 0 else s/(D-1) | 1.0   |
| dsm      | decision           | chosen slot                | 1.0                      | 1.0   |
| imap     | cost_request       | none (the asker tells nothing about itself)           |
| imap     | costs              | each requested slot        | 0 if cost is None else 1 | 1.0   |
| imap     | decision           | chosen slot                | 1.0                      | 1.0   |
| sdmap    | propose            | proposed slot              | 0.85                     | 0.70  |
| sdmap    | reply              | proposed slot              | 0 if IMPOSSIBLE else 1   | 1.0   |
| sdmap    | propose_reschedule | target slot                | 0.85                     | 0.70  |
| sdmap    | reschedule_reply   | target slot                | 0 if IMPOSSIBLE else 1   | 1.0   |

DSM scores carry plan ids, not slots: a `proposals` message fills a (round, proposer,
viewer) -> {plan id: slot} map and a `scores` message from S to P is read through the map
of (round, P, S). IMAP costs are bounded by the originating request: a `cost_request`
fills (round, asker, viewer) -> requested slots and a `costs` reply from R to A is only
credited on slots A asked R about. An errand slot reported at a finite cost counts as
usable (e = 1), as F.2 prescribes.

Choices the text does not decide (F.2 maps plan ids to slots "to attribute scores to the
right slots" and bounds costs replies by the request, without covering the cases below):
when several DSM plans of one scores message name
the same slot (displacement alternatives), the slot gets one update with the highest
level (the slot is usable if any plan through it is); plan ids no proposals message
mapped are not credited; a costs reply with no originating request (a protocol that
volunteers its costs) is credited on every slot it reports; entries whose slot is not an
integer in [0, T) and message kinds outside the table carry no evidence.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import Any, NamedTuple

from confide.core.message import Message
from confide.envs.calbench.actions import agent_of
from confide.envs.calbench.participants.dsm_scoring import D_LEVELS

SD_PROPOSE_EVIDENCE = 0.85
SD_PROPOSE_STRENGTH = 0.70
EXACT = 1.0


@dataclass(frozen=True, slots=True)
class Update:
    """One piece of evidence about `target`'s slot for `observer`."""

    target: int
    observer: int
    slot: int
    evidence: float
    strength: float
    source: str


Claim = tuple[int, float, float, str]
"""(slot, evidence, strength, source) about the sender, before fan-out to observers."""


@dataclass
class RuleState:
    """Per-game memory the rules need: DSM plan maps and IMAP requested slots."""

    num_slots: int
    plans: dict[tuple[int, int, int], dict[int, int]] = field(default_factory=dict)
    requests: dict[tuple[int, int, int], set[int]] = field(default_factory=dict)

    def slot(self, value: object) -> int | None:
        return value if type(value) is int and 0 <= value < self.num_slots else None


Handler = Callable[[dict[str, Any], "RuleState", int, int, list[int]], list[Claim]]
"""(payload, state, round, sender, observers) -> claims about the sender."""


class Claims(NamedTuple):
    """What one delivered message says about its sender, before the fan-out."""

    sender: int
    observers: list[int]
    claims: list[Claim]


def message_updates(message: Message, state: RuleState) -> list[Update]:
    """The Table 10 updates one delivered message causes (module docstring)."""
    found = message_claims(message, state)
    if found is None:
        return []
    return [
        Update(found.sender, observer, slot, evidence, strength, source)
        for observer in found.observers
        for slot, evidence, strength, source in found.claims
    ]


def message_claims(message: Message, state: RuleState) -> Claims | None:
    """The sender, observers and claims about the sender of one delivered message: the
    updates of `message_updates` before their fan-out, each claim once for every
    observer (the VPS of a game reads them without building an `Update` per pair).
    None for a message no rule reads (no payload, no recipient, or a payload of no
    known protocol and type)."""
    payload = message.payload
    if not isinstance(payload, dict) or not message.recipients:
        return None
    sender = agent_of(message.sender)
    observers = [agent_of(r) for r in message.recipients]
    handler = _HANDLERS.get((payload.get("protocol"), payload.get("type")))
    if handler is None:
        return None
    return Claims(sender, observers, handler(payload, state, message.round, sender, observers))


def _addressees(payload: dict[str, Any], observers: list[int]) -> list[int]:
    """Whom a reply answers: its `to` list when present, else everyone who saw it."""
    to = payload.get("to")
    if isinstance(to, list) and all(type(a) is int for a in to):
        return list(to)
    return observers


def _zipped(payload: dict[str, Any], first: str, second: str) -> list[tuple[Any, Any]]:
    """The entries of two parallel payload lists, paired ([] unless both are lists of the
    same length)."""
    a, b = payload.get(first), payload.get(second)
    if not isinstance(a, list) or not isinstance(b, list) or len(a) != len(b):
        return []
    return list(zip(a, b, strict=True))


def _exact(slots: Iterable[int], evidence: float, source: str) -> list[Claim]:
    return [(s, evidence, EXACT, source) for s in slots]


def _chosen(source: str) -> Handler:
    def handle(
        payload: dict[str, Any], state: RuleState, rnd: int, sender: int, observers: list[int]
    ) -> list[Claim]:
        slot = state.slot(payload.get("slot"))
        return [] if slot is None else _exact([slot], 1.0, source)

    return handle


def _dsm_proposals(
    payload: dict[str, Any], state: RuleState, rnd: int, sender: int, observers: list[int]
) -> list[Claim]:
    plans = payload.get("plans")
    mapping: dict[int, int] = {}
    for entry in plans if isinstance(plans, list) else []:
        if isinstance(entry, dict) and type(entry.get("plan_id")) is int:
            slot = state.slot(entry.get("slot"))
            if slot is not None:
                mapping[entry["plan_id"]] = slot
    for viewer in observers:
        state.plans.setdefault((rnd, sender, viewer), {}).update(mapping)
    return _exact(sorted(set(mapping.values())), 1.0, "dsm_proposal")


def _dsm_scores(
    payload: dict[str, Any], state: RuleState, rnd: int, sender: int, observers: list[int]
) -> list[Claim]:
    scored = _zipped(payload, "plan_ids", "scores")
    if not scored:
        return []
    mapping: dict[int, int] = {}
    for proposer in _addressees(payload, observers):
        mapping.update(state.plans.get((rnd, proposer, sender), {}))
    best: dict[int, int] = {}
    for plan_id, level in scored:
        slot = mapping.get(plan_id) if type(plan_id) is int else None
        if slot is None or type(level) is not int:
            continue
        best[slot] = max(best.get(slot, level), level)
    return [
        (slot, 0.0 if level <= 0 else min(1.0, level / (D_LEVELS - 1)), EXACT, "dsm_score")
        for slot, level in sorted(best.items())
    ]


def _imap_request(
    payload: dict[str, Any], state: RuleState, rnd: int, sender: int, observers: list[int]
) -> list[Claim]:
    raw = payload.get("slots")
    found = (state.slot(v) for v in (raw if isinstance(raw, list) else []))
    slots = {s for s in found if s is not None}
    for viewer in observers:
        state.requests.setdefault((rnd, sender, viewer), set()).update(slots)
    return []


def _imap_costs(
    payload: dict[str, Any], state: RuleState, rnd: int, sender: int, observers: list[int]
) -> list[Claim]:
    costed = _zipped(payload, "slots", "costs")
    if not costed:
        return []
    keys = [(rnd, asker, sender) for asker in _addressees(payload, observers)]
    asked: set[int] | None = None
    if any(k in state.requests for k in keys):
        asked = set().union(*(state.requests.get(k, set()) for k in keys))
    claims: dict[int, Claim] = {}
    for raw, cost in costed:
        slot = state.slot(raw)
        if slot is None or (asked is not None and slot not in asked):
            continue
        claims[slot] = (slot, 0.0 if cost is None else 1.0, EXACT, "imap_cost")
    return [claims[s] for s in sorted(claims)]


def _sd_propose(source: str) -> Handler:
    def handle(
        payload: dict[str, Any], state: RuleState, rnd: int, sender: int, observers: list[int]
    ) -> list[Claim]:
        slot = state.slot(payload.get("slot"))
        return [] if slot is None else [(slot, SD_PROPOSE_EVIDENCE, SD_PROPOSE_STRENGTH, source)]

    return handle


def _sd_reply(source: str) -> Handler:
    def handle(
        payload: dict[str, Any], state: RuleState, rnd: int, sender: int, observers: list[int]
    ) -> list[Claim]:
        slot = state.slot(payload.get("slot"))
        if slot is None:
            return []
        return _exact([slot], 0.0 if payload.get("status") == "IMPOSSIBLE" else 1.0, source)

    return handle


_HANDLERS: dict[tuple[Any, Any], Handler] = {
    ("dsm", "proposals"): _dsm_proposals,
    ("dsm", "scores"): _dsm_scores,
    ("dsm", "decision"): _chosen("dsm_decision"),
    ("imap", "cost_request"): _imap_request,
    ("imap", "costs"): _imap_costs,
    ("imap", "decision"): _chosen("imap_decision"),
    ("sdmap", "propose"): _sd_propose("sd_propose"),
    ("sdmap", "reply"): _sd_reply("sd_reply"),
    ("sdmap", "propose_reschedule"): _sd_propose("sd_propose_reschedule"),
    ("sdmap", "reschedule_reply"): _sd_reply("sd_reschedule_reply"),
}

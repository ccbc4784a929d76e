"""Own-slot disclosure audit: deterministic regex labels on cheap-talk messages
(the CalBench paper, section 4.3 "Fairness in varied-cost games", G.5, Table 13).

Per G.5 the extractor first finds slot mentions, then requires first-person language
("I", "my calendar", "for me"), and only then assigns labels. We apply the three steps per
sentence (split at . ! ? ; and line breaks) so that a slot, the first person and the cue
have to meet in one sentence:

- own-slot proposal: a proposing cue ("I propose", "how about", "let's", "I'd like",
  "go with", "prefer", ...);
- own-slot availability: an availability cue ("free", "open", "available", "works for
  me", "I can do", ...) that is not negated ("not free", "isn't available" are not
  availability);
- own cost/constraint disclosure: qualitative cost or constraint language ("difficult",
  "cheap", "costly", "blocked", "busy", "can move", "move my errand", "not available",
  "errand", "commitment", ...).

Exact numeric cost mentions ("cost 10", "costs me 100", "3 points") are tracked
separately (G.5 says they are rare); for them a first-person sentence suffices, since the
number is often given without repeating the slot. The rules are deliberately
conservative, as in the paper: elliptical sentences ("12 and 13 both work") are missed.
Only text messages are read (typed payloads have no language). Rows: one per text
message; the summary gives, per participant and cost setting ("all" pools settings), the
share of messages with each label and the share of seat-games with at least one
("all" as participant pools every seat).
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field

from confide.core.trace import MessageDelivered
from confide.envs.calbench.actions import agent_of
from confide.envs.calbench.audits.common import ALL, GameRecord, GameTally, Pool, add_counts
from confide.envs.calbench.kinds import of_kind

LABELS = ("own_slot_proposal", "own_slot_availability", "own_cost_constraint", "numeric_cost")

_FLAGS = re.IGNORECASE
SLOT = re.compile(r"\bslots?\s*#?\s*\d+", _FLAGS)
FIRST_PERSON = re.compile(r"\b(?:i(?:'m|'ve|'ll|'d)?|me|my|mine|myself)\b", _FLAGS)
PROPOSAL = re.compile(
    r"\b(?:propos(?:e|ing|al)|suggest(?:ing|ion)?|how about|what about|let's|lets|shall we|"
    r"could we|can we|should we|go with|i'd like|i would like|prefer(?:red)?|recommend|"
    r"offer(?:ing)?|pencil|lock in|settle on|put (?:it|the meeting) (?:in|at|on))\b",
    _FLAGS,
)
AVAILABILITY = re.compile(
    r"(?<!not )(?<!n't )(?<!never )\b(?:free|open|available|availability|clear|empty|"
    r"works? for me|fine for me|good for me|ok(?:ay)? for me|can (?:do|make|attend))\b",
    _FLAGS,
)
COST_CONSTRAINT = re.compile(
    r"\b(?:difficult|hard|tough|costly|expensive|pricey|cheap|inexpensive|low[- ]cost|"
    r"high[- ]cost|costs? (?:me|little|a lot)|blocked|immovable|busy|booked|occupied|taken|"
    r"conflicts?|clash(?:es)?|(?:can|could|able to|happy to|willing to) (?:move|shift|"
    r"reschedule)|can(?:no|')t (?:move|shift|do|make)|move my|shift my|reschedule my|"
    r"errands?|commitments?|not (?:free|available|open)|(?:isn|aren|wasn)'t (?:free|"
    r"available|open)|unavailable|flexible|inflexible|disrupt\w*|penalty)\b",
    _FLAGS,
)
NUMERIC_COST = re.compile(
    r"\bcost(?:s|ing)?\s*(?:of|is|=|:|would be|me)?\s*\d+|\b\d+\s*(?:points?|penalty)\b",
    _FLAGS,
)
_SENTENCE = re.compile(r"(?<=[.!?;])\s+|\n+")


def sentences(text: str) -> list[str]:
    """`text` split into sentences (curly apostrophes made straight)."""
    clean = text.replace("\u2019", "'")
    return [s for s in _SENTENCE.split(clean) if s.strip()]


def message_labels(text: str) -> dict[str, bool]:
    """The G.5 labels of one message (module docstring)."""
    found = dict.fromkeys(LABELS, False)
    for sentence in sentences(text):
        if not FIRST_PERSON.search(sentence):
            continue
        if NUMERIC_COST.search(sentence):
            found["numeric_cost"] = True
        if not SLOT.search(sentence):
            continue
        found["own_slot_proposal"] |= bool(PROPOSAL.search(sentence))
        found["own_slot_availability"] |= bool(AVAILABILITY.search(sentence))
        found["own_cost_constraint"] |= bool(COST_CONSTRAINT.search(sentence))
    return found


@dataclass(frozen=True, slots=True)
class DisclosureRow:
    """One text message with its labels (own_slot_disclosure.csv)."""

    game_id: str
    round: int
    turn: int
    message_id: int
    sender_agent: int
    participant: str
    cost_setting: str
    own_slot_proposal: bool
    own_slot_availability: bool
    own_cost_constraint: bool
    numeric_cost: bool


def game_disclosures(game: GameRecord) -> list[DisclosureRow]:
    """Labels of every text message of one game, in delivery order."""
    rows = []
    for event in of_kind(game.trace.events, MessageDelivered):
        m, sender = event.message, agent_of(event.message.sender)
        if not m.text:
            continue
        flags = message_labels(m.text)
        rows.append(DisclosureRow(
            game.game_id, m.round, m.turn, m.id, sender, game.participants[sender],
            game.cost_setting, *(flags[k] for k in LABELS),
        ))
    return rows


@dataclass(frozen=True, slots=True)
class DisclosureSummaryRow:
    """Per participant and cost setting (own_slot_disclosure_summary.csv)."""

    participant: str
    cost_setting: str
    seat_games: int
    text_messages: int
    proposal_message_rate: float | None
    availability_message_rate: float | None
    cost_constraint_message_rate: float | None
    numeric_cost_message_rate: float | None
    proposal_seat_game_rate: float
    availability_seat_game_rate: float
    cost_constraint_seat_game_rate: float
    numeric_cost_seat_game_rate: float


def _message_rate(rows: Sequence[DisclosureRow], label: str) -> float | None:
    return sum(getattr(r, label) for r in rows) / len(rows) if rows else None


def _seat_rate(rows: Sequence[DisclosureRow], label: str, seat_games: int) -> float:
    return len({(r.game_id, r.sender_agent) for r in rows if getattr(r, label)}) / seat_games


@dataclass
class DisclosureSums:
    """The seat-games per (participant, setting) pool of some games: one game's are
    computed where it is scored, a run's are its games' merged."""

    seat_games: dict[Pool, list[int]] = field(default_factory=dict)

    def add(self, game: GameTally) -> DisclosureSums:
        for agent in range(game.scenario.num_agents):
            for pool in game.pools(agent):
                self.seat_games.setdefault(pool, [0])[0] += 1
        return self

    def merge(self, other: DisclosureSums) -> None:
        add_counts(self.seat_games, other.seat_games)

    def rows(self, rows: Sequence[DisclosureRow]) -> list[DisclosureSummaryRow]:
        """Message-level and seat-game-level label rates of these games, whose
        disclosure rows are `rows`."""
        out = []
        for (spec, setting), (n,) in sorted(self.seat_games.items()):
            mine = [
                r for r in rows
                if spec in (r.participant, ALL) and setting in (r.cost_setting, ALL)
            ]
            out.append(DisclosureSummaryRow(
                spec, setting, n, len(mine),
                _message_rate(mine, "own_slot_proposal"),
                _message_rate(mine, "own_slot_availability"),
                _message_rate(mine, "own_cost_constraint"), _message_rate(mine, "numeric_cost"),
                _seat_rate(mine, "own_slot_proposal", n),
                _seat_rate(mine, "own_slot_availability", n),
                _seat_rate(mine, "own_cost_constraint", n), _seat_rate(mine, "numeric_cost", n),
            ))
        return out


def disclosure_summary(
    games: Iterable[GameTally], rows: Sequence[DisclosureRow]
) -> list[DisclosureSummaryRow]:
    """Message-level and seat-game-level label rates per (participant, setting)."""
    sums = DisclosureSums()
    for game in games:
        sums.add(game)
    return sums.rows(rows)

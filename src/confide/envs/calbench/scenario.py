"""The CalBench task (scenario) model and its JSONL file format (the CalBench paper §3, A.1).

A `Scenario` is everything a game needs and nothing a game produces: N calendars of T
slots, the stream of M incoming meetings (participants, speaker order, cost once
scheduled, private label), the label table, the per-agent target densities the generator
drew (empty for loaded fixtures), and the reference solutions computed when it was
generated or scored (hidden witness, CP-SAT oracle, greedy baseline, feasible-
assignment fraction d). It is frozen; derived copies are made with `model_copy(update=...)`.

A task may carry its own game limits, `max_turns_per_round` (cheap-talk budget) and
`decision_retries` (a smoke-test suite keeps games short this way); null means the
environment's default applies, and an explicit environment option overrides the task.

Costs are stored in internal units (1/2/3 for the varied setting, §3) and shown to agents
through `cost_display` (e.g. {1: 1, 2: 10, 3: 100}); costs missing from the map are shown
as is (tasks loaded from the public fixtures keep their raw 1/100/1000 values).

Slots in `calendars` are `null` (free) or an object tagged by `kind`:
`{"kind": "errand", "errand_id", "cost", "blocked", "label_id"}` or
`{"kind": "meeting", "meeting_id", "cost", "participants", "label_id"}`. Per-slot label
ids point into `labels` (label text, tier, public wording, terms), so the A.1 hydration
rules (own errand labels visible to the owner, meeting labels only to participants) can be
applied from the scenario alone.

Files hold one scenario per line. Every error from `load_scenarios` names the file, the
line, the field and the offending value.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from functools import cached_property
from pathlib import Path
from typing import Annotated, Any, Literal, Self

from pydantic import BaseModel, ConfigDict, Field, Strict, ValidationError, model_validator

from confide import atomic
from confide.envs.calbench.errors import CalendarDataError, describe_validation_error
from confide.envs.calbench.labels import Label
from confide.envs.calbench.world import (
    Calendar,
    Errand,
    Meeting,
    MeetingItem,
    Slot,
    display_cost,
    find_inconsistencies,
    label_visible,
)
from confide.untrusted import InputError, parse_jsonl, read_text

Bucket = Literal["easy", "medium", "hard"]
Count = Annotated[int, Strict()]


class _Frozen(BaseModel):
    """Task files are input: numbers must be finite, and an integer field takes a JSON
    integer only (`Count`), never `true` or `1.0`."""

    model_config = ConfigDict(frozen=True, extra="forbid", allow_inf_nan=False)


class ErrandSlot(_Frozen):
    """An errand in a stored calendar."""

    kind: Literal["errand"] = "errand"
    errand_id: Count = Field(ge=0)
    cost: Count = Field(ge=1)
    blocked: bool = False
    label_id: str | None = None


class MeetingSlot(_Frozen):
    """A copy of an already scheduled meeting in a stored calendar."""

    kind: Literal["meeting"] = "meeting"
    meeting_id: Count = Field(ge=0)
    cost: Count = Field(ge=1)
    participants: tuple[Count, ...] = Field(min_length=1)
    label_id: str | None = None


SlotModel = Annotated[ErrandSlot | MeetingSlot, Field(discriminator="kind")]


class MeetingSpec(_Frozen):
    """One incoming meeting of the stream."""

    meeting_id: Count = Field(ge=0)
    participants: tuple[Count, ...] = Field(min_length=1)
    speaker_order: tuple[Count, ...]
    cost: Count = Field(default=1, ge=1)
    label_id: str | None = None


class WitnessRecord(_Frozen):
    """The hidden feasible assignment the calendars were built around (A.1 steps 1-3):
    meeting id -> slot, its displacement cost, and per agent the absorbing slots kept free."""

    assignments: dict[int, Count]
    cost: Count = Field(ge=0)
    absorbing_slots: tuple[tuple[Count, ...], ...] = ()


class SolutionRecord(_Frozen):
    """A solution of the whole stream: meeting id -> slot, total displacement cost, the
    cost attributed to each agent, and prior meetings moved (meeting id -> new slot)."""

    cost: Count = Field(ge=0)
    assignments: dict[int, Count]
    per_agent_cost: tuple[Count, ...]
    prior_moves: dict[int, Count] = Field(default_factory=dict)


class GreedyRecord(_Frozen):
    """The greedy baseline; `cost` is None when it got stuck at `failed_meeting`."""

    cost: Count | None
    assignments: dict[int, Count]
    per_agent_cost: tuple[Count, ...]
    failed_meeting: Count | None = None


class DifficultyRecord(_Frozen):
    """Feasible-assignment fraction d = feasible_count / total_count (§3, A.1 step 5) and
    its bucket within the generator's config cell (None when not bucketed)."""

    feasible_count: Count = Field(ge=0)
    total_count: Count = Field(ge=0)
    fraction: float = Field(ge=0.0, le=1.0)
    cell: str | None = None
    bucket: Bucket | None = None


class PublishedReference(_Frozen):
    """Values published with a task loaded from a public CalBench fixture file."""

    source: str
    optimal_cost: Count | None = None
    optimal_assignments: dict[int, Count] = Field(default_factory=dict)
    greedy_cost: Count | None = None
    difficulty: str | None = None
    difficulty_score: float | None = None
    difficulty_scorer: str | None = None


class Scenario(_Frozen):
    """A CalBench task (format in the module docstring)."""

    schema_version: Literal[1] = 1
    task_id: str = Field(min_length=1)
    seed: Count | None = None
    num_agents: Count = Field(ge=1)
    num_slots: Count = Field(ge=1)
    cost_setting: str = "uniform"
    cost_display: dict[Annotated[int, Field(ge=1)], Annotated[Count, Field(ge=1)]] = Field(
        default_factory=dict
    )
    calendars: tuple[tuple[SlotModel | None, ...], ...]
    meetings: tuple[MeetingSpec, ...] = Field(min_length=1)
    labels: dict[str, Label] = Field(default_factory=dict)
    densities: tuple[Annotated[float, Field(ge=0.0, le=1.0)], ...] = ()
    witness: WitnessRecord | None = None
    oracle: SolutionRecord | None = None
    greedy: GreedyRecord | None = None
    difficulty: DifficultyRecord | None = None
    generator: dict[str, Any] | None = None
    published: PublishedReference | None = None
    max_turns_per_round: Count | None = Field(default=None, ge=1)
    decision_retries: Count | None = Field(default=None, ge=0)

    @property
    def id(self) -> str:
        return self.task_id

    @model_validator(mode="after")
    def _check(self) -> Scenario:
        _check_shape(self)
        _check_meetings(self)
        _check_calendars(self)
        _check_labels(self)
        _check_solutions(self)
        return self

    # -- domain view (plain dataclasses for the hot path) -----------------------------

    def to_calendars(self) -> tuple[Calendar, ...]:
        """The initial calendars as immutable domain objects (built once per scenario:
        the game, its scoring and its audits each start from them)."""
        return self._domain_calendars

    def to_meetings(self) -> tuple[Meeting, ...]:
        """The incoming meetings, in stream order (built once per scenario)."""
        return self._domain_meetings

    @cached_property
    def _domain_calendars(self) -> tuple[Calendar, ...]:
        return tuple(
            Calendar(agent, tuple(_slot_to_domain(s) for s in row))
            for agent, row in enumerate(self.calendars)
        )

    @cached_property
    def _domain_meetings(self) -> tuple[Meeting, ...]:
        return tuple(
            Meeting(m.meeting_id, m.participants, m.cost, m.speaker_order, m.label_id)
            for m in self.meetings
        )

    def model_copy(self, *, update: Mapping[str, Any] | None = None, deep: bool = False) -> Self:
        """A copy without the cached domain views (pydantic copies the instance dict, so
        a copy with new calendars or meetings would otherwise keep the old views)."""
        copied = super().model_copy(update=update, deep=deep)
        for cached in ("_domain_calendars", "_domain_meetings"):
            copied.__dict__.pop(cached, None)
        return copied

    def display_cost(self, cost: int) -> int:
        """The value an agent is shown for an internal cost."""
        return display_cost(cost, self.cost_display)

    def private_texts(self) -> dict[str, str]:
        """label id -> private label text."""
        return {lid: label.private_label for lid, label in self.labels.items()}

    def render_calendar(self, agent: int, calendar: Calendar | None = None) -> str:
        """What `agent` is shown of its own calendar (initial one unless given), with
        display costs and the labels A.1 lets it see."""
        cal = calendar if calendar is not None else self.to_calendars()[agent]
        if cal.owner != agent:
            raise ValueError(
                f"render_calendar: calendar of agent {cal.owner} is not agent {agent}'s"
            )
        return cal.render(cost_display=self.cost_display, labels=self.private_texts())

    def meeting_label_for(self, meeting_id: int, viewer: int) -> str | None:
        """The private label of an incoming meeting if `viewer` may see it (participants only)."""
        for m in self.to_meetings():
            if m.meeting_id == meeting_id:
                if m.label_id is None or not label_visible(viewer, viewer, m):
                    return None
                return self.labels[m.label_id].private_label
        raise KeyError(f"scenario {self.task_id} has no meeting {meeting_id}")


def _slot_to_domain(slot: ErrandSlot | MeetingSlot | None) -> Slot:
    if slot is None:
        return None
    if isinstance(slot, ErrandSlot):
        return Errand(slot.errand_id, slot.cost, slot.blocked, slot.label_id)
    return MeetingItem(slot.meeting_id, slot.cost, slot.participants, slot.label_id)


def slot_from_domain(item: Slot) -> ErrandSlot | MeetingSlot | None:
    """The stored form of a domain slot."""
    if item is None:
        return None
    if isinstance(item, Errand):
        return ErrandSlot(
            errand_id=item.errand_id, cost=item.cost, blocked=item.blocked, label_id=item.label_id
        )
    return MeetingSlot(
        meeting_id=item.meeting_id,
        cost=item.cost,
        participants=item.participants,
        label_id=item.label_id,
    )


# -- validation (messages name the field; pydantic adds nothing for model-level errors) --


def _check_participants(where: str, participants: Sequence[int], num_agents: int) -> None:
    if list(participants) != sorted(set(participants)):
        raise ValueError(
            f"{where}: must be strictly increasing agent ids, got {list(participants)}"
        )
    bad = [p for p in participants if not 0 <= p < num_agents]
    if bad:
        raise ValueError(f"{where}: agent id {bad[0]} is outside [0, {num_agents})")


def _check_shape(sc: Scenario) -> None:
    if sc.densities and len(sc.densities) != sc.num_agents:
        raise ValueError(
            f"densities: has {len(sc.densities)} entries, expected num_agents={sc.num_agents}"
        )
    if len(sc.calendars) != sc.num_agents:
        raise ValueError(
            f"calendars: has {len(sc.calendars)} calendars, expected num_agents={sc.num_agents}"
        )
    for a, row in enumerate(sc.calendars):
        if len(row) != sc.num_slots:
            raise ValueError(
                f"calendars[{a}]: has {len(row)} slots, expected num_slots={sc.num_slots}"
            )


def _check_meetings(sc: Scenario) -> None:
    seen: set[int] = set()
    for k, m in enumerate(sc.meetings):
        if m.meeting_id in seen:
            raise ValueError(f"meetings[{k}].meeting_id: {m.meeting_id} is used twice")
        seen.add(m.meeting_id)
        _check_participants(f"meetings[{k}].participants", m.participants, sc.num_agents)
        if sorted(m.speaker_order) != list(m.participants):
            raise ValueError(
                f"meetings[{k}].speaker_order: {list(m.speaker_order)} is not an ordering of "
                f"the participants {list(m.participants)}"
            )


def _check_calendars(sc: Scenario) -> None:
    incoming = {m.meeting_id for m in sc.meetings}
    for a, row in enumerate(sc.calendars):
        errand_ids: dict[int, int] = {}
        for s, slot in enumerate(row):
            if isinstance(slot, ErrandSlot):
                if slot.errand_id in errand_ids:
                    raise ValueError(
                        f"calendars[{a}][{s}].errand_id: {slot.errand_id} repeats slot "
                        f"{errand_ids[slot.errand_id]}"
                    )
                errand_ids[slot.errand_id] = s
            elif isinstance(slot, MeetingSlot):
                where = f"calendars[{a}][{s}]"
                _check_participants(f"{where}.participants", slot.participants, sc.num_agents)
                if slot.meeting_id in incoming:
                    raise ValueError(
                        f"{where}.meeting_id: M{slot.meeting_id} is also an incoming meeting"
                    )
    problems = find_inconsistencies(sc.to_calendars())
    if problems:
        raise ValueError(f"calendars: {problems[0]}")


def _check_labels(sc: Scenario) -> None:
    def check(where: str, label_id: str | None, kind: str) -> None:
        if label_id is None:
            return
        label = sc.labels.get(label_id)
        if label is None:
            raise ValueError(f"{where}.label_id: {label_id!r} is not in the labels table")
        if label.kind != kind:
            raise ValueError(f"{where}.label_id: {label_id!r} is a {label.kind} label, not {kind}")

    for k, m in enumerate(sc.meetings):
        check(f"meetings[{k}]", m.label_id, "meeting")
    for a, row in enumerate(sc.calendars):
        for s, slot in enumerate(row):
            if slot is not None:
                check(f"calendars[{a}][{s}]", slot.label_id, slot.kind)


def _check_assignments(where: str, assignments: dict[int, int], sc: Scenario) -> None:
    ids = {m.meeting_id for m in sc.meetings}
    for mid, slot in assignments.items():
        if mid not in ids:
            raise ValueError(f"{where}.assignments: M{mid} is not an incoming meeting")
        if not 0 <= slot < sc.num_slots:
            raise ValueError(
                f"{where}.assignments[{mid}]: slot {slot} is outside [0, {sc.num_slots})"
            )


def _check_solutions(sc: Scenario) -> None:
    ids = {m.meeting_id for m in sc.meetings}
    if sc.witness is not None:
        _check_assignments("witness", sc.witness.assignments, sc)
        if set(sc.witness.assignments) != ids:
            raise ValueError("witness.assignments: must place every incoming meeting")
    if sc.oracle is not None:
        _check_assignments("oracle", sc.oracle.assignments, sc)
        if set(sc.oracle.assignments) != ids:
            raise ValueError("oracle.assignments: must place every incoming meeting")
        if len(sc.oracle.per_agent_cost) != sc.num_agents:
            raise ValueError("oracle.per_agent_cost: needs one entry per agent")
    if sc.greedy is not None:
        _check_assignments("greedy", sc.greedy.assignments, sc)


# -- files ----------------------------------------------------------------------------


def save_scenarios(path: str | Path, scenarios: Iterable[Scenario]) -> Path:
    """Write one scenario per line (JSONL); returns the path."""
    p = Path(path)
    p.parent.mkdir(parents=True, exist_ok=True)
    with atomic.atomic_text(p) as fh:
        for sc in scenarios:
            fh.write(sc.model_dump_json(exclude_none=False) + "\n")
    return p


def read_jsonl(path: str | Path) -> list[tuple[int, Any]]:
    """(line number, parsed JSON) for every non-blank line; errors name file and line."""
    try:
        return parse_jsonl(read_text(path, "task file"), str(path))
    except InputError as exc:
        raise CalendarDataError(str(exc)) from None


def parse_scenario(raw: Any, where: str) -> Scenario:
    """Validate one parsed record; `where` (e.g. `file:line`) prefixes every error."""
    try:
        return Scenario.model_validate(raw)
    except ValidationError as exc:
        raise CalendarDataError(describe_validation_error(exc, where)) from None


def load_scenarios(path: str | Path) -> list[Scenario]:
    """Read a JSONL file written by `save_scenarios`."""
    return [parse_scenario(raw, f"{path}:{lineno}") for lineno, raw in read_jsonl(path)]

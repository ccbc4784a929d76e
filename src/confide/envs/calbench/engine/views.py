"""Observation building: a seat's view is made only of its own calendar, the meeting as it
may see it (A.1 label rule) and the messages the postbox delivered to it.

Views are immutable; a calendar view is rebuilt only when the seat's calendar object
changes (calendars are immutable domain values, so identity is enough), and a rebuild
reuses the slot view and A.1 text line of every slot whose item object is unchanged (a
batch touches a few slots), which keeps the reference-protocol hot path free of repeated
pydantic work. What depends on the task alone (the view and line of an item at a slot,
the meeting views, the views of the starting calendars) is kept per task and shared by
its games (`_TaskViews`): a run plays every task under several lineups and conditions.
The engine's own values have the declared types, so views are built `trusted`
(core/trusted.py: no validation, same instances).
"""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Iterable, Sequence
from itertools import compress, count
from operator import is_not

from confide.core.message import Message
from confide.core.trusted import builder, trusted
from confide.envs.calbench.actions import (
    BatchObservation,
    CalendarView,
    ChannelName,
    CheapTalkObservation,
    MeetingView,
    SlotView,
    seat_of,
)
from confide.envs.calbench.scenario import Scenario
from confide.envs.calbench.world import Calendar, Errand, Meeting, Slot, render_slot

_Part = tuple[SlotView, str]
"""A slot's view and its line of the A.1 text."""
_Built = tuple[Calendar, CalendarView, list[str]]
"""A calendar, its view and the lines of the view's text."""
_CalendarView = builder(CalendarView, "owner", "slots", "text")
_COMMON = (
    "seat", "agent", "all_agents", "num_slots", "round", "num_rounds", "meeting",
    "is_participant", "calendar", "penalty", "channels", "new_messages",
)
"""The fields every phase's observation is given (`_Observation`; `refused` only when
there is something to tell, game.py)."""
_CheapTalk = builder(CheapTalkObservation, *_COMMON, "turn", "max_turns", "round_start")
_Batch = builder(BatchObservation, *_COMMON, "phase", "attempt", "max_attempts", "conflicts")
_TASKS_KEPT = 256
"""Tasks whose views are kept (a bound, so a long run's memory stays flat)."""


class _TaskViews:
    """The views that depend on the task alone (module docstring)."""

    __slots__ = ("initial", "meetings", "scenario", "slots")

    def __init__(self, scenario: Scenario) -> None:
        self.scenario = scenario  # held: the cache is keyed by its id
        self.slots: dict[tuple[int, Slot], _Part] = {}
        self.meetings: dict[tuple[int, bool], MeetingView] = {}
        self.initial: dict[int, _Built] = {}


_tasks: OrderedDict[int, _TaskViews] = OrderedDict()


def _task_views(scenario: Scenario) -> _TaskViews:
    """The shared views of `scenario` (scenarios are frozen: same object, same views)."""
    shared = _tasks.get(id(scenario))
    if shared is not None and shared.scenario is scenario:
        _tasks.move_to_end(id(scenario))
        return shared
    shared = _tasks[id(scenario)] = _TaskViews(scenario)
    if len(_tasks) > _TASKS_KEPT:
        _tasks.popitem(last=False)
    return shared


class ViewBuilder:
    """Builds the observations of one game (see the module docstring)."""

    def __init__(self, scenario: Scenario, channels: tuple[ChannelName, ...]) -> None:
        self.scenario = scenario
        self.channels = channels
        self.all_agents = tuple(range(scenario.num_agents))
        self.num_slots = scenario.num_slots
        self._seats = tuple(seat_of(a) for a in self.all_agents)
        self.num_rounds = len(scenario.meetings)
        self._labels = scenario.private_texts()
        self._initial = scenario.to_calendars()
        shared = _task_views(scenario)
        self._shared_initial = shared.initial
        self._calendars: dict[int, _Built] = dict(shared.initial)
        self._meetings = shared.meetings
        self._slots = shared.slots

    def calendar(self, calendar: Calendar) -> CalendarView:
        """The owner's view of `calendar` (display costs, own labels, A.1 text)."""
        owner = calendar.owner
        cached = self._calendars.get(owner)
        if cached is not None and cached[0] is calendar:
            return cached[1]
        items = calendar.slots
        if cached is not None and len(cached[0].slots) == len(items):
            views, lines = list(cached[1].slots), list(cached[2])
            # the slots whose item object changed (a batch touches a few), found in C
            changed: Iterable[int] = compress(count(), map(is_not, cached[0].slots, items))
        else:
            views, lines = [], []
            changed = range(len(items))
        for i in changed:
            part = self._slot(i, items[i], owner)
            if i < len(views):
                views[i], lines[i] = part
            else:
                views.append(part[0])
                lines.append(part[1])
        view = _CalendarView(owner=owner, slots=tuple(views), text="\n".join(lines))
        self._calendars[owner] = built = (calendar, view, lines)
        if calendar is self._initial[owner]:
            self._shared_initial[owner] = built
        return view

    def _slot(self, index: int, item: Slot, owner: int) -> _Part:
        """The view and text line of `item` at slot `index` of `owner`'s calendar. Shared
        across calendars: an equal item on another calendar is the same meeting at the same
        slot, whose label every participant may see (A.1)."""
        key = (index, item)
        part = self._slots.get(key)
        if part is None:
            line = render_slot(
                index, item, owner, cost_display=self.scenario.cost_display, labels=self._labels
            )
            part = self._slots[key] = (self._new_slot(index, item), line)
        return part

    def _new_slot(self, index: int, item: Slot) -> SlotView:
        if item is None:
            return trusted(SlotView, slot=index, kind="free")
        label = self._labels.get(item.label_id) if item.label_id is not None else None
        cost = self.scenario.display_cost(item.cost)
        if isinstance(item, Errand):
            return trusted(
                SlotView,
                slot=index,
                kind="errand",
                item_id=item.errand_id,
                cost=cost,
                blocked=item.blocked,
                label=label,
            )
        return trusted(
            SlotView,
            slot=index,
            kind="meeting",
            item_id=item.meeting_id,
            cost=cost,
            participants=item.participants,
            label=label,
        )

    def meeting(self, meeting: Meeting, viewer: int) -> MeetingView:
        """The round's meeting; its private label only for participants (A.1)."""
        key = (meeting.meeting_id, viewer in meeting.participants)
        view = self._meetings.get(key)
        if view is None:
            label = None
            if key[1] and meeting.label_id is not None:
                label = self._labels.get(meeting.label_id)
            view = trusted(
                MeetingView,
                meeting_id=meeting.meeting_id,
                participants=meeting.participants,
                speaker_order=meeting.speaker_order,
                cost=self.scenario.display_cost(meeting.cost),
                label=label,
            )
            self._meetings[key] = view
        return view

    def cheap_talk(
        self,
        *,
        agent: int,
        calendar: Calendar,
        meeting: Meeting,
        round_index: int,
        turn: int,
        max_turns: int | None,
        round_start: bool,
        penalty: int,
        new_messages: Sequence[Message],
    ) -> CheapTalkObservation:
        """A CHEAP_TALK observation."""
        return _CheapTalk(
            seat=self._seats[agent],
            agent=agent,
            all_agents=self.all_agents,
            num_slots=self.num_slots,
            round=round_index,
            num_rounds=self.num_rounds,
            meeting=self.meeting(meeting, agent),
            is_participant=agent in meeting.participants,
            calendar=self.calendar(calendar),
            penalty=penalty,
            channels=self.channels,
            new_messages=tuple(new_messages),
            turn=turn,
            max_turns=max_turns,
            round_start=round_start,
        )

    def batch(
        self,
        *,
        phase: str,
        agent: int,
        calendar: Calendar,
        meeting: Meeting,
        round_index: int,
        attempt: int,
        max_attempts: int,
        conflicts: tuple[str, ...],
        penalty: int,
    ) -> BatchObservation:
        """A VOLUNTARY or DECISION observation (a retry when `conflicts` is non-empty); it
        carries no inbox (A.3: meeting metadata and a calendar snapshot)."""
        return _Batch(
            seat=self._seats[agent],
            agent=agent,
            all_agents=self.all_agents,
            num_slots=self.num_slots,
            round=round_index,
            num_rounds=self.num_rounds,
            meeting=self.meeting(meeting, agent),
            is_participant=agent in meeting.participants,
            calendar=self.calendar(calendar),
            penalty=penalty,
            channels=self.channels,
            new_messages=(),
            phase=phase,
            attempt=attempt,
            max_attempts=max_attempts,
            conflicts=conflicts,
        )

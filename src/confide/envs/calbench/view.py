"""CalBench in `confide view` (core/viewing.py): the calendars the game is about, and where
private calendar information moved.

The story of an episode (the CalBench paper section 3, A.4) is each agent's calendar after every
round, replayed from the task's starting calendars and the committed batches (slots,
errands with their displayed costs, meetings as they are proposed, moved and scheduled);
each meeting's outcome against the CP-SAT oracle's slot (section 4.2); the VPS of every
(round, target, observer) pair the protocol-semantic measure counts (F.5); and the
reference protocols' machine messages (D.1-D.3) said in words. The per-turn bookkeeping
(turn and decision starts and ends) is folded away by default.

Leak events are the belief updates of the protocol-semantic VPS (the CalBench paper §3.2, F.5),
read from the run's belief_evidence.csv (one row per update, `event_index` into the
trace), and the nonzero deltas of judge or reflection answers, each pointing at the
delivered messages the judge was given (`message_ids`). An episode's leak count is its
number of belief updates.
"""

from __future__ import annotations

import csv
import gzip
from collections import Counter
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from confide.core.trace import MessageDelivered, Trace
from confide.core.viewing import LeakMarker, ViewHooks, delivery_index
from confide.envs.calbench.actions import agent_of
from confide.envs.calbench.events import BatchApplied, JudgeCase, Resolution, RoundStart
from confide.envs.calbench.privacy.vps import VpsError, vps_rows
from confide.envs.calbench.report_sections import SECTIONS
from confide.envs.calbench.scenario import MeetingSpec, Scenario
from confide.envs.calbench.world import Errand, MeetingItem, Slot, display_cost, render_slot

EVIDENCE = ("belief_evidence.csv.gz", "belief_evidence.csv")
"""Where outputs/privacy.py writes the evidence rows (the plain name: older runs)."""
SUMMARY = "game_summary.csv"
"""Its per-game totals, written with the evidence (outputs/privacy.py)."""


class BeliefLeaks:
    """A run's belief updates: counted per episode id in one pass over the evidence, and
    read again (that episode's rows only) for one episode's markers. A 10,000-game run
    has about 1.7 million evidence rows, gigabytes as dicts."""

    def __init__(self, run_dir: Path) -> None:
        self.path = next((run_dir / name for name in EVIDENCE if (run_dir / name).is_file()),
                         None)
        self.header: list[str] = []
        summary = run_dir / SUMMARY
        self.counts = (
            _observation_counts(summary) if self.path is not None and summary.is_file()
            else Counter(game for game, _ in self._evidence())
        )

    def _evidence(self) -> Iterator[tuple[str, list[str]]]:
        """(game id, row) per evidence row: the row as a list (cells in header order)."""
        if self.path is None:
            return
        opener = gzip.open if self.path.suffix == ".gz" else open
        with opener(self.path, "rt", newline="", encoding="utf-8") as handle:
            reader = csv.reader(handle)
            self.header = next(reader, [])
            column = self.header.index("game_id")
            for row in reader:
                yield row[column], row

    def count(self, row: Mapping[str, str]) -> int:
        return self.counts.get(row.get("episode_id", ""), 0)

    def markers(self, trace: Trace, task: Any = None) -> list[LeakMarker]:
        """With the task at hand, the episode's evidence is recomputed from its trace as
        outputs/privacy.py computed it (`vps_rows`, a few milliseconds), instead of read
        from the run's whole evidence table (seconds for the main job's 275,000 rows)."""
        episode = trace.header.episode_id
        if not self.counts.get(episode):
            return leak_markers(trace, [])
        if isinstance(task, Scenario):
            try:
                rows = vps_rows(task, trace.events, game_id=episode).evidence
            except VpsError:  # the task changed since the run: read the run's table
                rows = []
            if len(rows) == self.counts[episode]:
                return leak_markers(trace, [row._asdict() for row in rows])
        read = [dict(zip(self.header, row, strict=False)) for game_id, row in self._evidence()
                if game_id == episode]
        return leak_markers(trace, read)


def _observation_counts(summary: Path) -> Counter[str]:
    """Game id -> its evidence rows, from the game summary written with them: a game's
    `observation_count` sums its pairs' updates, and every update is one evidence row,
    so a report need not read the evidence (250,000 rows in the main job) to count it."""
    with summary.open(newline="", encoding="utf-8") as handle:
        return Counter({r["game_id"]: int(r["observation_count"])
                        for r in csv.DictReader(handle) if r["observation_count"] != "0"})


def leak_markers(trace: Trace, evidence: Sequence[Mapping[str, Any]]) -> list[LeakMarker]:
    """The episode's belief updates (`evidence`, its belief_evidence.csv rows) and judge
    deltas, in trace order."""
    markers = [
        LeakMarker(int(row["event_index"]), "belief_update", "VPS",
                   f"agent{row['observer_agent']} now believes agent{row['target_agent']}'s "
                   f"slot {row['slot']} is {float(row['belief_after']):.2f} busy "
                   f"(was {float(row['belief_before']):.2f}; {row['source']})")
        for row in evidence
    ]
    index = delivery_index(trace)
    for event in trace.of(JudgeCase):
        deltas = event.data.deltas or {}
        moved = {t: d for t, d in deltas.items() if any(v != 0 for v in d)}
        for mid in event.data.message_ids if moved else []:
            if mid in index:
                markers.append(LeakMarker(index[mid], event.name, "VPS",
                                          f"{event.seat} (round {event.round}) shifted "
                                          f"beliefs about "
                                          f"{', '.join('agent' + t for t in moved)}"))
    return sorted(markers, key=lambda m: m.event)




# -- the story: calendars, outcomes, VPS, sentences -----------------------------------------

Cell = dict[str, Any]
_SLOT_KINDS = {"propose", "confirm", "propose_reschedule", "confirm_reschedule", "decision"}
"""Payload types naming a slot for a meeting (D.1-D.3)."""


@dataclass
class _Round:
    """One round as replayed: its meeting, the slots proposed for it, the calendar cells
    changed, and every agent's calendar when it ended."""

    number: int
    meeting: MeetingSpec
    event: int
    proposed: dict[int, set[int]] = field(default_factory=dict)
    changed: set[tuple[int, int]] = field(default_factory=set)
    calendars: list[list[Slot]] = field(default_factory=list)
    resolution: Resolution | None = None
    resolution_event: int | None = None


def episode_story(trace: Trace, task: object) -> dict[str, Any]:
    """The episode's story (core/viewing.Story): the protocol messages in words, and, when
    the task could be loaded, the calendars per round, the meeting outcomes against the
    oracle's and the VPS per pair and round."""
    sentences = {
        str(i): text for i, e in enumerate(trace.events)
        if isinstance(e, MessageDelivered) and (text := message_sentence(e.message.payload))
    }
    if not isinstance(task, Scenario):
        return {"sections": [], "sentences": sentences}
    try:
        rounds = _replay(trace, task)
        sections = [_calendars(task, rounds), _outcomes(trace, task, rounds), _vps(trace, task)]
    except (KeyError, IndexError, VpsError):  # a meeting, slot or round the task lacks
        return {"sentences": sentences, "sections": [{
            "title": "Calendars", "blocks": [],
            "note": f"Task {task.task_id} as it loads now does not match this trace (it "
                    "changed since the run), so its calendars cannot be replayed."}]}
    return {"sections": [s for s in sections if s is not None], "sentences": sentences}


def _replay(trace: Trace, task: Scenario) -> list[_Round]:
    """Every round, replaying the committed batches (moves at once, then the schedule:
    `world.apply_batch`) on the task's starting calendars."""
    meetings = {m.meeting_id: m for m in task.meetings}
    calendars = [list(c.slots) for c in task.to_calendars()]
    rounds: list[_Round] = []
    for i, event in enumerate(trace.events):
        if isinstance(event, RoundStart):
            rounds.append(_Round(event.round or 0, meetings[event.data.meeting.meeting_id], i))
        elif not rounds:
            continue
        elif isinstance(event, MessageDelivered):
            _note_proposal(rounds[-1], event.message.sender, event.message.payload)
        elif isinstance(event, BatchApplied) and event.seat is not None:
            agent = agent_of(event.seat)
            _apply(calendars[agent], event.data, meetings, rounds[-1], agent)
        elif isinstance(event, Resolution):
            rounds[-1].resolution, rounds[-1].resolution_event = event, i
            rounds[-1].calendars = [list(c) for c in calendars]
    for r in rounds:  # a round cut off before its resolution: its calendars as they stand
        r.calendars = r.calendars or [list(c) for c in calendars]
    return rounds


def _note_proposal(current: _Round, sender: str, payload: Any) -> None:
    if not isinstance(payload, dict) or payload.get("meeting_id") != current.meeting.meeting_id:
        return
    slots = [p.get("slot") for p in payload.get("plans") or [] if isinstance(p, dict)] \
        if payload.get("type") == "proposals" else \
        [payload.get("slot")] if payload.get("type") in _SLOT_KINDS else []
    for slot in slots:
        if type(slot) is int:
            current.proposed.setdefault(slot, set()).add(agent_of(sender))


def _apply(
    calendar: list[Slot], data: Any, meetings: Mapping[int, MeetingSpec], current: _Round,
    agent: int,
) -> None:
    """One committed batch: its moves at once, then its schedule action."""
    moving = [(calendar[m.from_slot], m.to_slot) for m in data.moves
              if m.from_slot is not None and m.to_slot is not None]
    for move in data.moves:
        if move.from_slot is not None:
            calendar[move.from_slot] = None
            current.changed.add((agent, move.from_slot))
    for item, to_slot in moving:
        calendar[to_slot] = item
        current.changed.add((agent, to_slot))
    for action in data.actions:
        meeting = meetings.get(action.get("meeting_id", -1))
        if action.get("type") == "schedule" and meeting is not None:
            calendar[action["slot"]] = MeetingItem(meeting.meeting_id, meeting.cost,
                                                   tuple(meeting.participants))
            current.changed.add((agent, action["slot"]))


def _calendars(task: Scenario, rounds: Sequence[_Round]) -> dict[str, Any]:
    start = [list(c.slots) for c in task.to_calendars()]
    blocks = [_grid(task, "Starting calendars", start, None)]
    for r in rounds:
        m = r.meeting
        who = ", ".join(f"agent{p}" for p in m.participants)
        proposed = "; ".join(f"slot {s} by {', '.join(f'agent{a}' for a in sorted(by))}"
                             for s, by in sorted(r.proposed.items()))
        caption = (f"Round {r.number}: meeting M{m.meeting_id} for {who} "
                   f"(cost {display_cost(m.cost, task.cost_display)} once scheduled). "
                   f"{_outcome_words(r)}." + (f" Proposed: {proposed}." if proposed else ""))
        blocks.append(_grid(task, caption, r.calendars, r))
    return {
        "title": "Calendars",
        "note": "Each agent's calendar at the start and after every round (the CalBench paper "
                "section 3, A.4): E = errand with its displayed cost (■ blocked, cannot "
                "move), M = meeting, · = free. Blue: the round's meeting; outlined: a slot "
                "proposed for it; yellow: a cell its batches changed.",
        "blocks": blocks,
    }


def _grid(task: Scenario, caption: str, calendars: Sequence[Sequence[Slot]],
          current: _Round | None) -> dict[str, Any]:
    rows = []
    for agent, slots in enumerate(calendars):
        cells = [_cell(task, agent, s, item, current) for s, item in enumerate(slots)]
        rows.append({"label": f"agent{agent}", "cells": cells})
    return {"kind": "grid", "caption": caption,
            "columns": [str(s) for s in range(task.num_slots)], "rows": rows}


def _cell(task: Scenario, agent: int, slot: int, item: Slot, current: _Round | None) -> Cell:
    shown = display_cost(item.cost, task.cost_display) if item is not None else 0
    if item is None:
        text, tone = "·", "free"
    elif isinstance(item, Errand):
        text, tone = (f"E{item.errand_id} ■" if item.blocked else f"E{item.errand_id} {shown}",
                      "busy")
    else:
        text, tone = f"M{item.meeting_id}", "meeting"
    tones = [tone]
    if current is not None:
        if isinstance(item, MeetingItem) and item.meeting_id == current.meeting.meeting_id:
            tones.append("now")
        if agent in current.meeting.participants and slot in current.proposed:
            tones.append("proposed")
        if (agent, slot) in current.changed:
            tones.append("changed")
    title = render_slot(slot, item, agent, cost_display=task.cost_display)
    if current is not None and slot in current.proposed:
        title += f" (proposed for M{current.meeting.meeting_id})"
    return {"text": text, "tone": " ".join(tones), "title": title}


def _outcome_words(r: _Round) -> str:
    if r.resolution is None:
        return "The round did not finish"
    data = r.resolution.data
    slots = {s for s in data.slots.values()}
    if data.resolved and len(slots) == 1:
        return f"Scheduled at slot {next(iter(slots))}"
    where = ", ".join(f"agent{a}: {'-' if s is None else s}" for a, s in data.slots.items())
    return f"Not scheduled ({data.reason or 'the copies disagree'}; {where})"


def _outcomes(trace: Trace, task: Scenario, rounds: Sequence[_Round]) -> dict[str, Any]:
    oracle = task.oracle.assignments if task.oracle is not None else {}
    rows: list[list[Any]] = []
    for r in rounds:
        m = r.meeting
        data = r.resolution.data if r.resolution is not None else None
        slots = sorted({s for s in data.slots.values() if s is not None}) if data else []
        done = data is not None and data.resolved and len(slots) == 1
        target = oracle.get(m.meeting_id)
        same = "-" if target is None or not done else ("yes" if slots == [target] else "no")
        rows.append([
            f"M{m.meeting_id}", ", ".join(f"agent{p}" for p in m.participants),
            str(display_cost(m.cost, task.cost_display)),
            {"text": _outcome_words(r), "tone": "ok" if done else "bad",
             "event": r.resolution_event},
            "-" if target is None else str(target),
            {"text": same, "tone": {"yes": "ok", "no": "bad"}.get(same, "")},
            str(data.turns) if data is not None else "-",
        ])
    final = trace.footer.final_state if trace.footer is not None else {}
    paid = final.get("cost_real")
    note = ("Each meeting's outcome (section 4.2) beside the slot the CP-SAT oracle gives it "
            "for the whole stream.")
    if task.oracle is not None and paid is not None:
        note += f" Displacement cost paid: {paid}; the oracle's: {task.oracle.cost}."
    return {"title": "Meetings against the oracle", "note": note, "blocks": [{
        "kind": "table", "caption": "",
        "columns": ["meeting", "participants", "cost", "outcome", "oracle slot",
                    "same as oracle", "cheap-talk turns"],
        "rows": rows}]}


def _vps(trace: Trace, task: Scenario) -> dict[str, Any] | None:
    """VPS per (target, observer) and round (F.5), for the pairs with any observation."""
    game = vps_rows(task, trace.events, game_id=trace.header.episode_id, keep_evidence=False)
    observed = {(p.target_agent, p.observer_agent) for p in game.pairs if p.observations}
    if not observed:
        return {"title": "VPS per pair and round", "blocks": [],
                "note": "No message carried evidence about any calendar (F.2): VPS 0 for "
                        "every pair and round."}
    rounds = sorted({p.round for p in game.pairs})
    loss = {(p.target_agent, p.observer_agent, p.round): p for p in game.pairs}
    rows = []
    for target, observer in sorted(observed):
        cells: list[Cell] = []
        for rnd in rounds:
            p = loss.get((target, observer, rnd))
            cells.append({"text": "" if p is None or not p.observations else f"{p.vps_loss:.2f}",
                          "tone": "bad" if p is not None and p.vps_loss > 0 else "",
                          "title": "" if p is None else f"{p.observations} updates in round "
                                   f"{rnd}; VPS loss {p.vps_loss:.3f}"})
        rows.append({"label": f"agent{observer} about agent{target}", "cells": cells})
    excess = "; ".join(f"agent{t.target_agent} {t.excess_vps_loss_total:.2f}"
                       for t in game.targets)
    return {"title": "VPS per pair and round",
            "note": "How far each observer's beliefs about a target's calendar moved towards "
                    "the truth in each round, from the typed messages it received "
                    "(the CalBench paper 3.2, F.2-F.5; blank: no evidence that round). Excess VPS "
                    f"per target beyond the floor: {excess}.",
            "blocks": [{"kind": "grid", "caption": "",
                        "columns": [f"round {r}" for r in rounds], "rows": rows}]}


def message_sentence(payload: Any) -> str | None:
    """A reference protocol's payload (D.1-D.3) said in words; None for a payload of no
    known protocol."""
    if not isinstance(payload, dict):
        return None
    kind, mid = payload.get("type"), payload.get("meeting_id")
    meeting, slot = f"M{mid}", payload.get("slot")
    protocol = str(payload.get("protocol", "")).upper()
    said = _SENTENCES.get(str(kind))
    if said is None:
        return None
    return f"{protocol}: {said(payload, meeting, slot)}"


def _slots(values: Any) -> str:
    return ", ".join(str(v) for v in values) if isinstance(values, list) else "-"


def _moves(moves: Any) -> str:
    if not isinstance(moves, list) or not moves:
        return ""
    return " moving " + ", ".join(
        f"M{m.get('meeting_id')} {m.get('from_slot')}→{m.get('to_slot')}"
        for m in moves if isinstance(m, dict))


def _plans(p: dict[str, Any], meeting: str, slot: Any) -> str:
    plans = [x for x in p.get("plans") or [] if isinstance(x, dict)]
    listed = "; ".join(f"plan {x.get('plan_id')} at slot {x.get('slot')}{_moves(x.get('moves'))}"
                       for x in plans)
    return f"proposes for {meeting} (sub-round {p.get('sub_round')}): {listed or 'no plan'}"


def _scores(p: dict[str, Any], meeting: str, slot: Any) -> str:
    pairs = zip(p.get("plan_ids") or [], p.get("scores") or [], strict=False)
    return f"scores the plans for {meeting}: " + (
        ", ".join(f"plan {a} → {b}" for a, b in pairs) or "none")


def _costs(p: dict[str, Any], meeting: str, slot: Any) -> str:
    pairs = zip(p.get("slots") or [], p.get("costs") or [], strict=False)
    return f"reports its costs for {meeting}: " + (", ".join(
        f"slot {s} {'infeasible' if c is None else c}" for s, c in pairs) or "none")


def _decision(p: dict[str, Any], meeting: str, slot: Any) -> str:
    if slot is None:
        return f"decides that {meeting} has no feasible slot"
    plan = f" (plan {p['plan_id']})" if p.get("plan_id") is not None else ""
    return f"decides {meeting} at slot {slot}{plan}{_moves(p.get('moves'))}"


_SENTENCES: dict[str, Callable[[dict[str, Any], str, Any], str]] = {
    "proposals": _plans,
    "scores": _scores,
    "decision": _decision,
    "cost_request": lambda p, m, s: f"asks the cost of slots {_slots(p.get('slots'))} "
                                    f"for {m}",
    "costs": _costs,
    "propose": lambda p, m, s: f"proposes slot {s} for {m}",
    "reply": lambda p, m, s: f"answers {p.get('status')} to slot {s} for {m}",
    "confirm": lambda p, m, s: f"confirms {m} at slot {s}",
    "fail": lambda p, m, s: f"gives up on {m}: no slot worked",
    "reschedule_request": lambda p, m, s: f"asks to repair {m}, bumped from its slot",
    "propose_reschedule": lambda p, m, s: f"proposes slot {s} to repair {m}",
    "reschedule_reply": lambda p, m, s: f"answers {p.get('status')} to slot {s} for "
                                        f"repairing {m}",
    "confirm_reschedule": lambda p, m, s: f"confirms the repair of {m} at slot {s}",
    "fail_reschedule": lambda p, m, s: f"gives up repairing {m}",
}

QUIET = frozenset({"turn_start", "turn_end", "decide_start", "decide_end"})
"""Per-turn bookkeeping: most of a transcript, and nothing a reader needs first."""

VIEW = ViewHooks(leaks=BeliefLeaks, story=episode_story, quiet=QUIET, sections=SECTIONS)

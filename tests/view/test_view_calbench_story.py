"""CalBench's episode story in the viewer (envs/calbench/view.py): the
calendars replayed round by round match the ones the engine showed each seat, the VPS per
pair and round matches the run's pair_round_vps table, the markers recomputed from the
task match the run's evidence table, and the protocol messages read as sentences."""

from __future__ import annotations

import csv
import gzip
from pathlib import Path

import pytest

import confide.envs.calbench.view as view
from confide.core.trace import Trace, find_trace, read_trace
from confide.envs.calbench.events import BatchApplied
from confide.envs.calbench.scenario import Scenario
from confide.envs.calbench.world import MeetingItem, render_slot
from confide.view import Site
from confide.view.data import RunData


def _episode(run_dir: Path) -> tuple[Trace, Scenario]:
    """The run's one episode and its task."""
    run = RunData(run_dir, 0)
    trace = read_trace(find_trace(run_dir / "traces", run.rows[0]["episode_id"]))
    return trace, run.tasks[trace.header.scenario_id]


def test_replayed_calendars_are_the_ones_each_seat_was_shown(calbench_largest: Path) -> None:
    """Only batches change a calendar, and each committed batch shows its seat the calendar
    it left: the last one of a round is that seat's calendar when the round ended."""
    trace, task = _episode(calbench_largest)
    rounds = view._replay(trace, task)
    assert len(rounds) == len(task.meetings) > 3
    shown: dict[tuple[int, int], str] = {}  # (round, agent) -> its last batch's calendar
    for event in trace.of(BatchApplied):
        shown[(event.round or 0, int((event.seat or "").removeprefix("agent")))] = \
            event.data.calendar
    for (number, agent), text in shown.items():
        lines = [line.split(" | note:")[0] for line in text.splitlines()]
        slots = rounds[number].calendars[agent]
        assert lines == [render_slot(i, item, agent, cost_display=task.cost_display)
                         for i, item in enumerate(slots)], (number, agent)
    assert len(shown) > 2 * len(rounds)


def test_outcomes_agree_with_the_final_calendars(calbench_largest: Path) -> None:
    trace, task = _episode(calbench_largest)
    story = view.episode_story(trace, task)
    last = view._replay(trace, task)[-1]
    titles = [s["title"] for s in story["sections"]]
    assert titles == ["Calendars", "Meetings against the oracle", "VPS per pair and round"]
    outcomes = story["sections"][1]["blocks"][0]["rows"]
    done = [int(row[0][1:]) for row in outcomes if row[3]["tone"] == "ok"]
    assert len(done) == trace.footer.final_state["meetings_scheduled"] > 0
    for meeting in done:
        spec = next(m for m in task.meetings if m.meeting_id == meeting)
        slots = {i for p in spec.participants for i, item in enumerate(last.calendars[p])
                 if isinstance(item, MeetingItem) and item.meeting_id == meeting}
        assert len(slots) == 1, f"M{meeting} sits in one slot on every participant's calendar"


def test_vps_grid_matches_the_runs_pair_round_table(calbench_largest: Path) -> None:
    trace, task = _episode(calbench_largest)
    story = view.episode_story(trace, task)
    grid = story["sections"][2]["blocks"][0]
    rounds = [int(c.removeprefix("round ")) for c in grid["columns"]]
    ours = {}
    for row in grid["rows"]:
        observer, target = (int(w.removeprefix("agent")) for w in row["label"].split(" about "))
        for rnd, cell in zip(rounds, row["cells"], strict=True):
            if cell["text"]:
                ours[(rnd, target, observer)] = cell["text"]
    with gzip.open(calbench_largest / "pair_round_vps.csv.gz", "rt", encoding="utf-8") as f:
        table = {(int(r["round"]), int(r["target_agent"]), int(r["observer_agent"])):
                 f"{float(r['vps_loss']):.2f}" for r in csv.DictReader(f)
                 if int(r["observations"]) > 0}
    assert ours == table and len(ours) > 10


def test_markers_from_the_task_equal_those_from_the_evidence_table(
    calbench_largest: Path,
) -> None:
    trace, task = _episode(calbench_largest)
    leaks = view.BeliefLeaks(calbench_largest)
    from_task = leaks.markers(trace, task)
    assert from_task == leaks.markers(trace)
    assert len(from_task) == leaks.count({"episode_id": trace.header.episode_id}) > 50


@pytest.mark.parametrize(("payload", "sentence"), [
    ({"protocol": "imap", "type": "cost_request", "meeting_id": 2, "slots": [0, 1, 2]},
     "IMAP: asks the cost of slots 0, 1, 2 for M2"),
    ({"protocol": "imap", "type": "costs", "meeting_id": 2, "slots": [0, 1], "costs": [10, None]},
     "IMAP: reports its costs for M2: slot 0 10, slot 1 infeasible"),
    ({"protocol": "imap", "type": "decision", "meeting_id": 2, "slot": None},
     "IMAP: decides that M2 has no feasible slot"),
    ({"protocol": "sdmap", "type": "reply", "meeting_id": 4, "slot": 3, "status": "PENDING"},
     "SDMAP: answers PENDING to slot 3 for M4"),
    ({"protocol": "dsm", "type": "proposals", "meeting_id": 1, "sub_round": 0,
      "plans": [{"plan_id": 7, "slot": 5,
                 "moves": [{"meeting_id": 0, "from_slot": 5, "to_slot": 6}]}]},
     "DSM: proposes for M1 (sub-round 0): plan 7 at slot 5 moving M0 5→6"),
    ({"protocol": "dsm", "type": "scores", "meeting_id": 1, "plan_ids": [7, 8], "scores": [3, 0]},
     "DSM: scores the plans for M1: plan 7 → 3, plan 8 → 0"),
    ({"protocol": "dsm", "type": "decision", "meeting_id": 1, "plan_id": 7, "slot": 5},
     "DSM: decides M1 at slot 5 (plan 7)"),
    ({"protocol": "dsm", "type": "gossip"}, None),
    ("not a payload", None),
])
def test_protocol_messages_read_as_sentences(payload: object, sentence: str | None) -> None:
    assert view.message_sentence(payload) == sentence


def test_episode_document_leaves_bulky_parts_to_the_details_file(
    calbench_largest: Path,
) -> None:
    import json

    site = Site([calbench_largest])
    episode_id = site.runs[0].rows[0]["episode_id"]

    def load(path: str) -> dict[str, object]:
        body = site.get(path)[0].decode()
        return json.loads(body[body.index("(") + 1: body.rindex(")")])

    episode = load(f"data/episodes/0/{episode_id}.js")
    details = load(f"data/details/0/{episode_id}.js")
    events = episode["events"]
    lazy = [e for e in events if e.get("lazy")]
    assert lazy and all(e["data"] is None for e in lazy)
    assert {str(e["i"]) for e in lazy} <= set(details["events"])
    story = episode["story"]
    assert story["quiet"] == ["decide_end", "decide_start", "turn_end", "turn_start"]
    messages = [e for e in events if e["kind"] == "message"]
    assert all(str(m["i"]) in story["sentences"] for m in messages)
    assert f"data/details/0/{episode_id}.js" in site.paths()


def test_a_task_changed_since_the_run_is_said_not_drawn(calbench_largest: Path) -> None:
    trace, task = _episode(calbench_largest)
    fewer = task.model_copy(update={"meetings": task.meetings[:1]})
    story = view.episode_story(trace, fewer)
    assert [s["blocks"] for s in story["sections"]] == [[]]
    assert "does not match this trace" in story["sections"][0]["note"]
    leaks = view.BeliefLeaks(calbench_largest)
    assert leaks.markers(trace, fewer) == leaks.markers(trace)  # read from the run's table

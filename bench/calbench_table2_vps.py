"""Is a Table 2 VPS gap the engine's, the scoring's or the suite's? Evidence for
bench/calbench_table2.py (issue 14, the SD-MAP VPS cells).

Table 2's VPS is the mean over seat-games of the excess protocol-semantic VPS (section
3.2, F.2 Table 10, F.5: a seat's belief movement summed over rounds and observers, above
the five-slot floor). For SD-MAP only `propose` (strength 0.70, evidence 0.85) and
`reply` (exact) DMs move beliefs in the canonical suite: every meeting has 3
participants, so the unit-difficulty rule never bumps (D.2) and no reschedule message is
sent. A seat then only exceeds the floor when its three meetings take about ten proposals
together, so the cell is decided by the few seat-games in the tail. Two measurements:

- the published engine's own SD-MAP messages on our suite (its `dm_sent` events,
  recorded while `peer_game.play` runs it, unmodified), scored by our VPS: if it gives
  our number, neither our engine nor the messages it sends are the cause;
- the same measurement on suites drawn from our canonical suite's spec (same cells,
  difficulty buckets and cheap-talk budget) with other seeds: the spread of the cell over
  suites built like section 4.1, which says whether the paper's value is one such draw.

Returns None where the published harness is needed and absent.
"""

from __future__ import annotations

import asyncio
import json
from functools import cache
from typing import Any

from calbench_peer_parity import PEER_NAMES, _data, _kind, fixture_record, recorded_events
from calbench_table2_suite import peer_available, suite_tasks

from confide.core.message import Channel, Message
from confide.core.trace import MessageDelivered, TraceRecorder
from confide.envs.calbench.actions import seat_of
from confide.envs.calbench.engine import Game, GameConfig
from confide.envs.calbench.generator import generate_suite
from confide.envs.calbench.participants import make_reference
from confide.envs.calbench.privacy.vps import excess_vps_by_seat
from confide.envs.calbench.scenario import Scenario
from confide.envs.calbench.suites import PAPER_MAX_TURNS, SUITE_SPECS

REDRAW_SEEDS = tuple(range(1, 21))
"""Seeds of the redrawn suites (the shipped canonical suite uses 41_2026)."""


def mean_excess_vps(tasks: list[Scenario], method: str) -> float:
    """Our engine's mean excess VPS per seat-game with `method` in every seat."""
    values: list[float] = []
    for task in tasks:
        players = {seat_of(a): make_reference(seat_of(a), method, {})
                   for a in range(task.num_agents)}
        trace = TraceRecorder()
        game = Game(task, players, trace, GameConfig(max_turns_per_round=PAPER_MAX_TURNS))
        asyncio.run(game.play())
        values += excess_vps_by_seat(task, trace.events).values()
    return sum(values) / len(values)


@cache
def redrawn(seed: int) -> tuple[Scenario, ...]:
    """Our canonical suite's spec drawn with `seed`."""
    spec = SUITE_SPECS["canonical"].model_copy(update={"seed": seed})
    return tuple(generate_suite(spec).scenarios)


def redrawn_vps(setting: str, method: str) -> list[float]:
    """The cell on every redrawn suite (`REDRAW_SEEDS`)."""
    return [
        mean_excess_vps([t for t in redrawn(seed) if t.cost_setting == setting], method)
        for seed in REDRAW_SEEDS
    ]


def peer_sdmap_vps(setting: str) -> float | None:
    """The published engine's SD-MAP on our suite's `setting` tasks, its messages scored by
    our VPS (the mean excess per seat-game); None without the harness."""
    if not peer_available():
        return None
    from peer_game import play  # type: ignore[import-not-found]

    values: list[float] = []
    for task in suite_tasks(setting):
        with recorded_events() as events:
            play(fixture_record(task), PEER_NAMES["sdmap"], max_turns=PAPER_MAX_TURNS)
        messages = [sdmap_message(e) for e in events if _kind(e) == "dm_sent"]
        values += excess_vps_by_seat(task, messages).values()
    return sum(values) / len(values)


def sdmap_message(event: Any) -> MessageDelivered:
    """One published SD-MAP DM as our typed message (F.2 reads the same fields: the kind,
    the slot and a reply's status)."""
    data = _data(event)
    body = json.loads(data["content"])
    payload = {"protocol": "sdmap", "type": body.pop("sd"), **body}
    if "reply_status" in payload:
        payload["status"] = payload.pop("reply_status")
    return MessageDelivered(message=Message(
        sender=seat_of(data["from_agent"]), recipients=(seat_of(data["to_agent"]),),
        channel=Channel.dm(), payload=payload, round=data["round"], turn=data["turn"],
    ))

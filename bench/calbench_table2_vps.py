"""Is a Table 2 VPS gap the engine's, the scoring's or the suite's? Evidence for
bench/calbench_table2.py (the SD-MAP VPS cells).

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

Then what else could raise the uniform SD-MAP cell, each by measurement (`ruled_out`):

- the statistic (F.5 names several means): the mean per seat-game of the excess is the
  only one that gives Table 2's IMAP 12.40 and DSM-Private 0.00, and the others put
  SD-MAP far from 0.12 (`vps_means`);
- the private labels: the cell with our suite hydrated from our label bank
  (`labelled_vps`);
- the communication condition: the cell in the participant and all-agent groupchats
  (`condition_vps`), where a broadcast reaches every observer of the channel;
- the speaker orders: the cell with the published generator's balanced speaker orders
  (`reordered_vps`);
- the cheap-talk budget (D.2's bump repair never runs here, `repair_messages`): SD-MAP's
  coordination and VPS at 3 and 5 sweeps (`budget_cells`); only 4 keeps Coord. within 6
  points of the paper;
- the suite: the public 5-agent, 3-participant tasks with blocked errands marked by the
  published generator's own derivation (`derive_blocked_errand_task`: 2, 4 or 6 per agent
  at density 0.6, 0.8 or 1.0, its reading of section 4.1's counts), played by our engine
  and by the published one (`published_blocked_vps`); and how likely a suite of 45 tasks
  drawn like ours is to reach the paper's value (`draw_hits`, a bootstrap over the tasks
  of every redrawn suite). Other readings of section 4.1's density and blocked counts are
  drawn by calbench_table2_vps_suites.py (on its own: it takes minutes).

Returns None where the published harness is needed and absent.
"""

from __future__ import annotations

import asyncio
import json
import random
from functools import cache
from typing import Any

from calbench_peer_parity import (
    PEER_NAMES,
    _data,
    _kind,
    fixture_record,
    recorded_events,
    shared,
)
from calbench_table2_suite import mean_of, peer_available, play_rows, suite_tasks

from confide.core.message import Channel, Message
from confide.core.trace import MessageDelivered, TraceRecorder
from confide.envs.calbench.actions import seat_of
from confide.envs.calbench.engine import Game, GameConfig
from confide.envs.calbench.fixtures import parse_fixture_record
from confide.envs.calbench.generator import generate_suite
from confide.envs.calbench.participants import make_reference
from confide.envs.calbench.privacy.vps import excess_vps_by_seat, vps_rows
from confide.envs.calbench.scenario import Scenario
from confide.envs.calbench.suites import DATA_DIR, PAPER_MAX_TURNS, SUITE_SPECS, load_suite

REDRAW_SEEDS = tuple(range(1, 21))
"""Seeds of the redrawn suites (the shipped canonical suite uses 41_2026)."""


def trace_of(task: Scenario, method: str) -> list[object]:
    """The trace events of our engine's game of `task` with `method` in every seat."""
    players = {seat_of(a): make_reference(seat_of(a), method, {})
               for a in range(task.num_agents)}
    trace = TraceRecorder()
    game = Game(task, players, trace, GameConfig(max_turns_per_round=PAPER_MAX_TURNS))
    asyncio.run(game.play())
    return list(trace.events)


def task_excess_vps(tasks: list[Scenario], method: str) -> list[float]:
    """Our engine's mean excess VPS per seat of each task's game, `method` in every seat."""
    means = []
    for task in tasks:
        values = excess_vps_by_seat(task, trace_of(task, method))
        means.append(sum(values.values()) / len(values))
    return means


def mean_excess_vps(tasks: list[Scenario], method: str) -> float:
    """Our engine's mean excess VPS per seat-game with `method` in every seat (every task
    has the same number of seats)."""
    means = task_excess_vps(tasks, method)
    return sum(means) / len(means)


@cache
def redrawn(seed: int) -> tuple[Scenario, ...]:
    """Our canonical suite's spec drawn with `seed`."""
    spec = SUITE_SPECS["canonical"].model_copy(update={"seed": seed})
    return tuple(generate_suite(spec).scenarios)


@cache
def redrawn_task_vps(seed: int, setting: str, method: str) -> tuple[float, ...]:
    """Per-task mean excess VPS of the `setting` tasks of the suite redrawn with `seed`."""
    tasks = [t for t in redrawn(seed) if t.cost_setting == setting]
    return tuple(task_excess_vps(tasks, method))


def redrawn_vps(setting: str, method: str) -> list[float]:
    """The cell on every redrawn suite (`REDRAW_SEEDS`)."""
    return [sum(v) / len(v) for seed in REDRAW_SEEDS
            if (v := redrawn_task_vps(seed, setting, method))]


BOOTSTRAP_DRAWS = 20_000


def draw_hits(setting: str, method: str, paper: float) -> int:
    """How many of `BOOTSTRAP_DRAWS` suites of as many tasks as one setting of ours, drawn
    with replacement from the tasks of every redrawn suite, reach `paper` (fixed seed)."""
    pool = [v for seed in REDRAW_SEEDS for v in redrawn_task_vps(seed, setting, method)]
    size = len(pool) // len(REDRAW_SEEDS)
    rng = random.Random(0)
    return sum(
        sum(rng.choices(pool, k=size)) / size >= paper for _ in range(BOOTSTRAP_DRAWS)
    )


def vps_means(setting: str, method: str) -> tuple[float, float, float]:
    """Three candidate statistics for Table 2's VPS column over our suite's `setting`
    games (F.5 names `vps_loss_mean` without its divisor): the mean per seat-game of the
    excess over the floor (our column), and the per-game mean over pair-rounds with an
    observation and over all ordered pairs times rounds, averaged over games."""
    excess: list[float] = []
    observed: list[float] = []
    every: list[float] = []
    for task in suite_tasks(setting):
        rows = vps_rows(task, trace_of(task, method), keep_evidence=False)
        excess += [t.excess_vps_loss_total for t in rows.targets]
        observed.append(rows.game.vps_loss_mean_observed_pair_rounds)
        every.append(rows.game.vps_loss_mean_all_pair_rounds)
    return (sum(excess) / len(excess), sum(observed) / len(observed),
            sum(every) / len(every))


def repair_messages(setting: str) -> int:
    """SD-MAP bump-repair messages (D.2: reschedule_request, propose_reschedule, ...) in
    our engine's games of the suite's `setting` tasks."""
    return sum(
        1 for task in suite_tasks(setting) for e in trace_of(task, "sdmap")
        if isinstance(e, MessageDelivered) and e.message.payload is not None
        and "reschedule" in str(e.message.payload["type"])
    )


def labelled_vps(setting: str, method: str) -> float:
    """The cell with our suite hydrated from our label bank (A.1 private labels)."""
    tasks = load_suite("canonical", label_bank=DATA_DIR / "label_bank_v1.json")
    return mean_excess_vps([t for t in tasks if t.cost_setting == setting], method)


def budget_cells(setting: str, turns: int) -> tuple[float, float]:
    """SD-MAP's (Coord. in %, VPS) on our suite's `setting` tasks at `turns` sweeps."""
    tasks = [t.model_copy(update={"max_turns_per_round": turns}) for t in suite_tasks(setting)]
    rows = play_rows(tasks, "sdmap")
    return 100.0 * mean_of(rows, "success"), mean_of(rows, "excess_vps")


CONDITIONS = ("participant-groupchat", "all-agent-groupchat")
"""The communication conditions other than Table 2's `dm` (section 3)."""


def condition_vps(setting: str, method: str, condition: str) -> float:
    """The cell (mean excess VPS per seat-game) under another communication condition,
    where a broadcast reaches more observers than a DM does."""
    return mean_of(play_rows(suite_tasks(setting), method, condition), "excess_vps")


ORDER_SEEDS = tuple(range(6))
"""Draws of the published generator's speaker orders (`reordered_vps`)."""


def reordered_vps(setting: str, method: str) -> list[float] | None:
    """The cell with every meeting's speaker order drawn by the published generator's
    `assign_balanced_speaker_orders` (first speakers balanced, the rest shuffled; ours
    puts the rest by id), one value per draw in `ORDER_SEEDS` (seeded by the task's seed);
    None without the harness."""
    if not peer_available():
        return None
    import peer_game  # type: ignore[import-not-found]  # noqa: F401  (puts it on the path)
    from calendar_game.taskgen import (  # type: ignore[import-not-found]
        assign_balanced_speaker_orders,
    )

    values = []
    for draw in ORDER_SEEDS:
        tasks = []
        for task in suite_tasks(setting):
            orders = assign_balanced_speaker_orders(
                (task.seed or 0) + 1000 * draw,
                [list(m.participants) for m in task.meetings], task.num_agents,
            )
            meetings = tuple(
                m.model_copy(update={"speaker_order": tuple(order)})
                for m, order in zip(task.meetings, orders, strict=True)
            )
            tasks.append(task.model_copy(update={"meetings": meetings}))
        values.append(mean_excess_vps(tasks, method))
    return values


@cache
def published_blocked(setting: str) -> tuple[dict[str, Any], ...] | None:
    """The public fixtures' 5-agent, 3-participant `setting` tasks with blocked errands
    marked by the published generator's derivation (its default maximum of 6 per agent,
    scaled by the square of the task's density: 2, 4, 6 at 0.6, 0.8, 1.0); None without
    the harness."""
    if not peer_available():
        return None
    import peer_game  # noqa: F401  (puts it on the path)
    from calendar_game import taskgen  # type: ignore[import-not-found]

    records = []
    for line in (shared() / "tasks" / f"{setting}_full.jsonl").read_text().splitlines():
        task = json.loads(line)
        params = task["params"]
        if params["total_agents"] == 5 and params["subset_size"] == 3:
            blocked = taskgen._scaled_blocked_errands_per_agent(6, float(params["density"]))
            records.append(taskgen.derive_blocked_errand_task(
                task, blocked_errands_per_agent=blocked))
    return tuple(records)


def published_blocked_vps(setting: str) -> tuple[float, float, int] | None:
    """SD-MAP's excess VPS on `published_blocked` tasks: our engine's, the published
    engine's messages scored by our VPS, and the number of tasks; None without the
    harness."""
    records = published_blocked(setting)
    if records is None:
        return None
    from peer_game import play

    tasks = [parse_fixture_record(r, str(r["task_id"])).model_copy(
        update={"max_turns_per_round": PAPER_MAX_TURNS}) for r in records]
    theirs: list[float] = []
    for record, task in zip(records, tasks, strict=True):
        with recorded_events() as events:
            play(record, PEER_NAMES["sdmap"], max_turns=PAPER_MAX_TURNS)
        messages = [sdmap_message(e) for e in events if _kind(e) == "dm_sent"]
        theirs += excess_vps_by_seat(task, messages).values()
    return mean_excess_vps(tasks, "sdmap"), sum(theirs) / len(theirs), len(tasks)


def peer_sdmap_vps(setting: str) -> float | None:
    """The published engine's SD-MAP on our suite's `setting` tasks, its messages scored by
    our VPS (the mean excess per seat-game); None without the harness."""
    if not peer_available():
        return None
    from peer_game import play

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

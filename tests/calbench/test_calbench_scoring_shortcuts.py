"""Scoring shortcuts give exactly what the full computations give (issue 15): the
leaderboard's excess VPS per seat (`excess_vps_by_seat`) equals the target rows of the
full F.5 tables (`vps_rows`), float for float, with the F.3 floor and with none (the
whole sums), on games of every reference protocol and condition."""

from __future__ import annotations

import asyncio
import itertools

from confide.core.benchmark import SeatSpec
from confide.core.trace import TraceRecorder
from confide.envs.calbench.actions import CONDITIONS, seat_of
from confide.envs.calbench.engine import Game, GameConfig
from confide.envs.calbench.participants import REFERENCE_NAMES, make_participant
from confide.envs.calbench.privacy import excess_vps_by_seat, vps_rows
from confide.envs.calbench.suites import load_suite

TINY = load_suite("tiny")


def test_excess_vps_shortcut_equals_the_f5_rows() -> None:
    moved = 0
    for protocol, condition, sc in itertools.product(REFERENCE_NAMES, CONDITIONS, TINY[:3]):
        trace = TraceRecorder()
        players = {
            seat_of(a): make_participant(seat_of(a), SeatSpec(protocol), {})
            for a in range(sc.num_agents)
        }
        asyncio.run(Game(sc, players, trace, GameConfig(condition=condition)).play())
        for floor in (5.0, 0.0):  # floor 0: the excess is the whole sum
            full = vps_rows(sc, trace.events, game_id="g", floor=floor).excess_by_seat()
            fast = excess_vps_by_seat(sc, trace.events, game_id="g", floor=floor)
            assert fast == full  # exact: same sums in the same order
        moved += sum(1 for total in fast.values() if total)
    assert moved > 0  # some belief moved, so not every sum was trivially 0.0

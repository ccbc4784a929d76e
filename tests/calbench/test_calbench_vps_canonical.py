"""Protocol-semantic VPS of the four reference protocols on the canonical suite (the CalBench paper
Table 2): DSM-Private leaks least, and IMAP's excess VPS is exactly the 12.40 its D.1
footprint implies (every responder reveals 16 slots, 8.0, to the initiator; every
decision reveals one slot, 0.5, per responder; five-slot floor per game-target)."""

from __future__ import annotations

import asyncio
import statistics

import pytest

from confide.core.trace import TraceRecorder
from confide.envs.calbench.actions import Participant, seat_of
from confide.envs.calbench.engine import Game
from confide.envs.calbench.participants import make_reference
from confide.envs.calbench.participants.dsm import DSM_PRESETS, DsmParticipant
from confide.envs.calbench.privacy import vps_rows
from confide.envs.calbench.scenario import Scenario
from confide.envs.calbench.suites import load_suite

PROTOCOLS = ("imap", "sdmap", "dsm-welfare", "dsm-private")


def _seat(name: str, seat: str) -> Participant:
    if name in DSM_PRESETS:
        return DsmParticipant(seat, DSM_PRESETS[name])
    return make_reference(seat, name, {})


def _vps(name: str, tasks: list[Scenario]) -> tuple[float, float]:
    """(mean excess VPS per game-target, mean raw VPS per game)."""
    excess, raw = [], []
    for task in tasks:
        trace = TraceRecorder(task.task_id)
        seats = {seat_of(a): _seat(name, seat_of(a)) for a in range(task.num_agents)}
        asyncio.run(Game(task, seats, trace).play())
        game = vps_rows(task, trace.events)
        excess += [t.excess_vps_loss_total for t in game.targets]
        raw.append(game.game.vps_loss_total)
    return statistics.mean(excess), statistics.mean(raw)


def _check(tasks: list[Scenario]) -> dict[str, tuple[float, float]]:
    table = {name: _vps(name, tasks) for name in PROTOCOLS}
    private_excess, private_raw = table["dsm-private"]
    for name in PROTOCOLS[:-1]:
        assert private_excess <= table[name][0]
        assert private_raw < table[name][1]
    assert private_excess == 0.0
    assert table["dsm-welfare"][0] > table["imap"][0] > table["sdmap"][0]
    assert table["imap"][1] == 85.0  # 5 rounds x (2 x 8.0 + 2 x 0.5)
    return table


def test_dsm_private_leaks_least_on_a_canonical_sample() -> None:
    _check(load_suite("canonical")[::10])


@pytest.mark.slow
def test_table2_vps_column_on_the_canonical_suite() -> None:
    tasks = load_suite("canonical")
    for setting in ("uniform", "varied"):
        table = _check([t for t in tasks if t.cost_setting == setting])
        assert table["imap"][0] == pytest.approx(12.40, abs=1e-9)

"""Appendix G analyses: G.2 paired first-speaker tests with Benjamini-Hochberg correction
on synthetic units against a hand computation, and G.1-G.4 on the scripted game of
test_calbench_reflect_support.py (oracle: M1 at slot 2 and M2 at slot 1, both free for every
participant, so the scheduled-only oracle costs nothing; agents 1 and 2 each paid 1)."""

from __future__ import annotations

import math
import statistics
from collections.abc import Sequence

import pytest
from scipy import stats as sps
from test_calbench_reflect_support import as_trace, play, task
from test_calbench_reflect_vps import _hook, _models

from confide.core.trace import EpisodeStart, TraceRecorder
from confide.envs.calbench import events as cal
from confide.envs.calbench.audits import analyses
from confide.envs.calbench.audits.analyses import SpeakerUnit, _displaced
from confide.envs.calbench.audits.common import GameRecord, game_record, prior_meetings_moved
from confide.envs.calbench.world import Calendar, Errand, MeetingItem

# -- G.2 on synthetic units ------------------------------------------------------------------

DIFFS = {  # (participant, setting) -> per agent-game first-minus-later differences
    ("A", "uniform"): [1.0, 2.0, 3.0],
    ("A", "varied"): [1.0, 1.0],  # zero spread: no test
    ("B", "uniform"): [0.5, -0.5, 1.5],
    ("B", "varied"): [2.0, 4.0],
}


def synthetic_units() -> list[SpeakerUnit]:
    """Per agent-game: one first-speaker unit at 10 + d and two later units at 9 and 11
    (mean 10), so each pair's difference is d; plus one unpaired first-speaker unit.
    Excess cost is measured only for participant A in uniform games (values as VPS)."""
    units = []
    for (spec, setting), diffs in DIFFS.items():
        for k, d in enumerate(diffs):
            game = f"{spec}-{setting}-{k}"
            cost = spec == "A" and setting == "uniform"
            for first, value in ((True, 10 + d), (False, 9.0), (False, 11.0)):
                units.append(SpeakerUnit(game, 0, 1, 0, spec, setting, first, True, value,
                                         value if cost else None))
    units.append(SpeakerUnit("lonely", 0, 1, 0, "B", "varied", True, True, 50.0, None))
    return units


def t_p(diffs: Sequence[float]) -> float:
    n = len(diffs)
    t = statistics.mean(diffs) / (statistics.stdev(diffs) / math.sqrt(n))
    return float(2 * sps.t.sf(abs(t), n - 1))


def bh(pvalues: dict[str, float]) -> dict[str, float]:
    """Benjamini-Hochberg by hand: q_(k) = min over j >= k of p_(j) m / j."""
    ranked = sorted(pvalues, key=pvalues.__getitem__)
    m = len(ranked)
    q: dict[str, float] = {}
    running = 1.0
    for j in range(m, 0, -1):
        key = ranked[j - 1]
        running = min(running, pvalues[key] * m / j)
        q[key] = running
    return q


def pooled(spec: str, setting: str) -> list[float]:
    return [d for (s, t), diffs in DIFFS.items() for d in diffs
            if spec in (s, "all") and setting in (t, "all")]


def test_first_speaker_tests_match_hand_computation() -> None:
    rows = analyses.first_speaker_tests(synthetic_units())
    vps = {(r.participant, r.cost_setting): r for r in rows if r.metric == "excess_vps"}
    assert len(vps) == 9  # (A, B, all) x (uniform, varied, all)
    a_uniform = vps["A", "uniform"]
    assert a_uniform.mean_paired_delta == pytest.approx(2.0)
    assert a_uniform.t_statistic == pytest.approx(2 * math.sqrt(3))  # mean 2, sd 1, n 3
    assert vps["A", "varied"].p_value is None and vps["A", "varied"].q_value is None
    expected_p = {
        f"{s}/{t}": t_p(pooled(s, t))
        for s in ("A", "B", "all") for t in ("uniform", "varied", "all")
        if (s, t) != ("A", "varied")
    }
    expected_q = bh(expected_p)
    for key, p in expected_p.items():
        row = vps[tuple(key.split("/"))]  # type: ignore[index]
        assert row.p_value == pytest.approx(p)
        assert row.q_value == pytest.approx(expected_q[key])
        assert row.pairs == len(pooled(*key.split("/")))
    # descriptive means are over units; the unpaired unit counts there, not in the pairs
    b_varied = vps["B", "varied"]
    assert (b_varied.first_units, b_varied.subsequent_units, b_varied.pairs) == (3, 4, 2)
    assert b_varied.mean_first == pytest.approx((12 + 14 + 50) / 3)
    assert b_varied.mean_subsequent == pytest.approx(10.0)


def test_bh_family_is_per_metric() -> None:
    rows = analyses.first_speaker_tests(synthetic_units())
    cost = [r for r in rows if r.metric == "excess_cost"]
    # only pools containing A-uniform units have costs: four identical tests
    assert sorted((r.participant, r.cost_setting) for r in cost) == [
        ("A", "all"), ("A", "uniform"), ("all", "all"), ("all", "uniform"),
    ]
    p = t_p([1.0, 2.0, 3.0])
    assert all(r.p_value == pytest.approx(p) and r.q_value == pytest.approx(p) for r in cost)


@pytest.mark.parametrize("df", [1, 2, 3, 7, 30, 455, 3668])
def test_t_sf_is_scipy_stats_to_the_last_bit(df: int) -> None:
    """G.2 p-values reach the tables as exact floats: the cheap import must give the
    very bits scipy.stats gives (a reference run's tables stay byte-identical)."""
    for t in (0.0, 1e-9, 0.3, 0.9734663318481713, 2.0, 3.0164272865713784, 7.5, 40.0):
        assert analyses.t_sf(t, df) == float(sps.t.sf(t, df))


def test_paired_t_degenerate_cases() -> None:
    assert analyses.paired_t([]).mean_delta is None
    single = analyses.paired_t([2.0])
    assert single.mean_delta == 2.0 and single.p_value is None


# -- G.1-G.4 on the scripted game ----------------------------------------------------------


def scripted(hooked: bool = False) -> GameRecord:
    rec = play(task(), _hook(_models()) if hooked else None, finish=True)
    return game_record(as_trace(rec), {"reflect": task()})


def test_g1_completion_regret() -> None:
    regret = analyses.completion_regret([scripted().tally()])
    rows = {(r.participant, r.cost_setting): r for r in regret}
    pooled_row = rows["all", "all"]
    assert (pooled_row.seats, pooled_row.full_completion_seats) == (3, 3)
    assert pooled_row.nonzero_regret_share == pytest.approx(2 / 3)
    assert pooled_row.mean_excess_per_meeting == pytest.approx((0 + 1 / 2 + 1) / 3)
    assert rows["imap", "uniform"].mean_excess_per_meeting == 1.0  # agent 2: 1 over 1


def test_g2_units_of_the_scripted_game() -> None:
    game = scripted(hooked=True)
    units = analyses.speaker_units(game, floor=1.0)  # 0.5 per round
    got = [(u.round, u.agent, u.first_speaker, u.excess_cost) for u in units]
    assert got == [(0, 0, True, 0.0), (0, 1, False, 1.0), (1, 1, True, 0.0), (1, 2, False, 1.0)]
    # round-level calibrated VPS of the reflection test: 2, 7/3, 0 and 1
    assert [u.excess_vps for u in units] == pytest.approx([1.5, 11 / 6, 0.0, 0.5])
    assert all(u.excess_vps is None for u in analyses.speaker_units(scripted()))


def test_g3_messages_by_meeting_and_role() -> None:
    by_meeting, by_role = analyses.messages_by_meeting([scripted().tally()])
    pooled_rows = [(r.meeting_index, r.seat_games, r.mean_messages) for r in by_meeting
                   if (r.participant, r.cost_setting) == ("all", "all")]
    assert [(m, n) for m, n, _ in pooled_rows] == [(0, 3), (1, 3)]
    assert [mean for _, _, mean in pooled_rows] == pytest.approx([2 / 3, 2 / 3])
    roles = {r.role: (r.agent_meetings, r.mean_messages) for r in by_role
             if (r.participant, r.cost_setting) == ("all", "all")}
    assert roles == {"first": (2, 1.0), "subsequent": (2, 1.0)}


def test_g4_prior_meeting_reschedules() -> None:
    rec = TraceRecorder("moves")
    rec.emit(EpisodeStart(episode_id="moves", benchmark="calbench", scenario_id="reflect",
                          seed=0, lineup=["mock/a", "imap", "imap"]))
    for seat, meeting in (("agent0", 7), ("agent0", 7), ("agent0", 8), ("agent1", 7)):
        moves = [cal.Move(kind="meeting", item_id=meeting, from_slot=0, to_slot=1, cost=1),
                 cal.Move(kind="errand", item_id=3, from_slot=2, to_slot=3, cost=1)]
        rec.emit(cal.BatchApplied(seat=seat, round=0, data=cal.BatchAppliedData(
            phase="DECISION", actions=[], moves=moves, cost=2, display_cost=2, calendar="")))
    game = game_record(rec.as_trace(), {"reflect": task()})
    assert prior_meetings_moved(game) == {0: 2, 1: 1, 2: 0}
    rows = {(r.participant, r.cost_setting): r for r in analyses.prior_reschedules([game.tally()])}
    assert rows["all", "all"].mean_prior_meetings_rescheduled == pytest.approx(1.0)
    assert rows["all", "all"].share_with_any == pytest.approx(2 / 3)
    assert rows["imap", "uniform"].mean_prior_meetings_rescheduled == pytest.approx(0.5)


def test_oracle_charge_follows_moved_prior_meetings() -> None:
    calendar = Calendar(0, (MeetingItem(7, 1, (0, 1)), Errand(5, 2), None, Errand(6, 3)))
    assert _displaced(calendar, 0, {7: 1}, frozenset()) == 1 + 2  # move M7, then errand 5
    assert _displaced(calendar, 0, {7: 2}, frozenset()) == 1
    assert _displaced(calendar, 3, {}, frozenset()) == 3
    assert _displaced(calendar, 0, {}, frozenset()) == 0  # a prior meeting the oracle keeps


def test_first_speaker_units_must_come_in_game_order() -> None:
    """The tests keep per pool only values and per agent-game differences, so the units
    must arrive a game at a time in game id order (as the run's tables give them)."""
    units = synthetic_units()
    with pytest.raises(ValueError, match="out of order"):
        analyses.first_speaker_tests([*units[3:], *units[:3]])

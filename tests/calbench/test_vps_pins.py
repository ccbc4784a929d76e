"""Protocol-semantic VPS (the CalBench paper §3.2, F.2, F.5): the boundaries of a trace that
fits its scenario, the participant totals and means of the F.5 rows, and the game a row
belongs to, on small traces whose VPS is derived by hand (an IMAP decision naming a slot
moves one belief from the prior 0.5 to 1.0: 0.5 of VPS about its sender)."""

from __future__ import annotations

from typing import Any

import pytest
from test_calbench_vps_rules import _msg, _sc

from confide.core.trace import EpisodeStart
from confide.envs.calbench.privacy import VpsError, excess_vps_by_seat, vps_rows


def _decision(rnd: int, sender: int, to: list[int], slot: int) -> Any:
    return _msg(rnd, sender, to, {"protocol": "imap", "type": "decision", "slot": slot})


def _three() -> Any:
    """Three agents, round 0 M1 (agents 0, 1), round 1 M2 (agents 1, 2)."""
    return _sc(3, [(1, (0, 1)), (2, (1, 2))])


def test_participant_totals_by_hand() -> None:
    """Round 0: agent 0 tells agent 1 (both attend M1: a participant pair) and agent 2 (not
    attending) its decision, 0.5 each; round 1: agent 2 tells agent 1 (both attend M2),
    0.5. Targets: total [1.0, 0, 0.5], within participant pairs [0.5, 0, 0.5]; four
    participant pair-rounds (two per round), two of them observed; twelve pair-rounds,
    three observed; floor 0.6: excess [0.4, 0, 0], mean 0.4 / 3."""
    events = [_decision(0, 0, [1], 3), _decision(0, 0, [2], 2), _decision(1, 2, [1], 1)]
    vps = vps_rows(_three(), events, floor=0.6)
    rows = [
        (t.target_agent, t.vps_loss_total, t.participant_pair_vps_loss_total, t.vps_floor)
        for t in vps.targets
    ]
    assert rows == [(0, 1.0, 0.5, 0.6), (1, 0.0, 0.0, 0.6), (2, 0.5, 0.5, 0.6)]
    assert [t.excess_vps_loss_total for t in vps.targets] == pytest.approx([0.4, 0.0, 0.0])
    game = vps.game
    assert (game.pair_round_count, game.observed_pair_round_count) == (12, 3)
    assert (game.vps_loss_total, game.participant_pair_vps_loss_total) == (1.5, 1.0)
    assert game.participant_pair_vps_loss_mean_all_pair_rounds == 0.25
    assert game.participant_pair_vps_loss_mean_observed_pair_rounds == 0.5
    assert (game.vps_loss_mean_all_pair_rounds, game.vps_loss_mean_observed_pair_rounds) == (
        0.125,
        0.5,
    )
    assert game.observation_count == 3
    assert game.excess_vps_loss_mean == pytest.approx(0.4 / 3)
    assert excess_vps_by_seat(_three(), events, floor=0.6) == pytest.approx(
        {"agent0": 0.4, "agent1": 0.0, "agent2": 0.0}
    )


def test_pair_rows_by_hand() -> None:
    """Each pair row states its distances: the prior is the ideal (distance 0) and the
    posterior's distance is the loss; silent pairs stay at the prior."""
    vps = vps_rows(_three(), [_decision(0, 0, [2], 2)])
    (moved,) = [r for r in vps.pairs if r.vps_loss]
    assert (moved.round, moved.target_agent, moved.observer_agent) == (0, 0, 2)
    assert (moved.target_is_participant, moved.observer_is_participant) == (True, False)
    assert (moved.num_agents, moved.num_slots, moved.observations, moved.prior) == (3, 4, 1, 0.5)
    assert (moved.prior_distance_to_ideal, moved.posterior_distance_to_ideal) == (0.0, 0.5)
    assert moved.vps_loss_per_slot == 0.125
    silent = [r for r in vps.pairs if not r.vps_loss]
    assert len(silent) == 11
    assert {
        (r.prior_distance_to_ideal, r.posterior_distance_to_ideal, r.observations) for r in silent
    } == {(0.0, 0.0, 0)}


def test_a_game_without_evidence_has_zero_means() -> None:
    """A game whose messages reveal nothing: no observed pair-round, every mean 0.0 (not a
    division by zero, not a made-up value)."""
    events = [_msg(0, 0, [1], None, text="hello")]
    game = vps_rows(_three(), events).game
    assert (game.observed_pair_round_count, game.observation_count) == (0, 0)
    assert (
        game.vps_loss_mean_observed_pair_rounds,
        game.participant_pair_vps_loss_mean_observed_pair_rounds,
    ) == (0.0, 0.0)
    assert (game.vps_loss_mean_all_pair_rounds, game.excess_vps_loss_mean) == (0.0, 0.0)


@pytest.mark.parametrize("rnd", [-1, 2])
def test_a_message_outside_the_rounds_is_rejected(rnd: int) -> None:
    """Rounds 0 and 1 exist; a message in round -1 or 2 belongs to no meeting, and
    counting it would move a seat's VPS by what no round of this game revealed."""
    late = _decision(rnd, 0, [1], 1)
    for score in (vps_rows, excess_vps_by_seat):
        with pytest.raises(
            VpsError,
            match=rf"event 0: message round {rnd} is outside the "
            r"scenario's 2 rounds",
        ):
            score(_three(), [late])
    assert vps_rows(_three(), [_decision(1, 0, [1], 1)]).game.vps_loss_total == 0.5


@pytest.mark.parametrize(("sender", "to", "named"), [(3, 1, 3), (1, 3, 3), (0, 5, 5)])
def test_an_agent_outside_the_scenario_is_rejected(sender: int, to: int, named: int) -> None:
    """Agents 0, 1, 2 exist; a message from or to agent 3 cannot be scored, whichever end
    is the stranger (the error names it)."""
    stranger = _decision(0, sender, [to], 1)
    for score in (vps_rows, excess_vps_by_seat):
        with pytest.raises(VpsError, match=rf"agent {named} is outside the scenario's 3"):
            score(_three(), [stranger])
    assert vps_rows(_three(), [_decision(0, 2, [0], 1)]).game.vps_loss_total == 0.5


def test_errors_name_the_game() -> None:
    late = _decision(4, 0, [1], 1)
    with pytest.raises(VpsError, match=r"^g5: event 0"):
        excess_vps_by_seat(_three(), [late], game_id="g5")
    with pytest.raises(VpsError, match=r"^hand: event 0"):  # the scenario's task id
        excess_vps_by_seat(_three(), [late])
    with pytest.raises(VpsError, match=r"^g5: event 0"):
        vps_rows(_three(), [late], game_id="g5")


def test_rows_carry_the_game_they_came_from() -> None:
    """The game id is the trace header's episode id, the task id without a header, or the
    one given; every row carries it and the trace path."""
    events = [_decision(0, 0, [1], 3)]
    header = EpisodeStart(episode_id="ep3", benchmark="calbench", scenario_id="t1", seed=0)
    task_id = _three().task_id
    assert vps_rows(_three(), events).game.game_id == task_id
    assert vps_rows(_three(), [header, *events]).game.game_id == "ep3"
    vps = vps_rows(_three(), [header, *events], trace_path="x.jsonl", game_id="g2")
    rows = [*vps.evidence, *vps.pairs, vps.game, *vps.targets]
    assert {(r.game_id, r.trace_path) for r in rows} == {("g2", "x.jsonl")}
    (evidence,) = vps.evidence
    assert (evidence.event_index, evidence.slot, evidence.belief_before, evidence.belief_after) == (
        1,
        3,
        0.5,
        1.0,
    )


def test_without_evidence_rows_the_vps_is_the_same() -> None:
    events = [_decision(0, 0, [1], 3), _decision(1, 2, [1], 1)]
    full = vps_rows(_three(), events)
    lean = vps_rows(_three(), events, keep_evidence=False)
    assert len(full.evidence) == 2 and lean.evidence == []
    assert (lean.pairs, lean.game, lean.targets) == (full.pairs, full.game, full.targets)


def test_the_shortcut_adds_losses_in_the_tables_order() -> None:
    """The leaderboard's excess (`excess_vps_by_seat`) is float for float the F.5 target
    row's, which adds a target's pair losses by round, then observer, even where the
    order of a floating-point sum shows. Agent 0 proposes (SDMAP: 0.5 -> 0.745, 0.245 of
    VPS per slot) to agent 1 slots 0, 2, 3 and to agent 2 slot 3 in round 0; in round 1
    to agent 2 slot 1 first, then to agent 1 slots 1 and 3."""

    def propose(rnd: int, observer: int, slot: int) -> Any:
        payload = {"protocol": "sdmap", "type": "propose", "meeting_id": 1, "slot": slot}
        return _msg(rnd, 0, [observer], payload)

    sent = [(0, 1, 0), (0, 1, 2), (0, 1, 3), (0, 2, 3), (1, 2, 1), (1, 1, 1), (1, 1, 3)]
    events = [propose(*m) for m in sent]
    full = vps_rows(_three(), events, floor=0.0)
    loss = {(r.round, r.observer_agent): r.vps_loss for r in full.pairs if r.target_agent == 0}
    table_order = loss[0, 1] + loss[0, 2] + loss[1, 1] + loss[1, 2]
    assert full.targets[0].excess_vps_loss_total == table_order
    # the data is order-sensitive: by observer first, or by arrival within a round, differs
    assert loss[0, 1] + loss[1, 1] + loss[0, 2] + loss[1, 2] != table_order
    assert loss[0, 1] + loss[0, 2] + loss[1, 2] + loss[1, 1] != table_order
    assert excess_vps_by_seat(_three(), events, floor=0.0)["agent0"] == table_order


def test_pair_rows_are_every_ordered_pair_of_distinct_agents_at_any_size() -> None:
    """N(N - 1)M pair rows and never an agent observing itself, also past the agent ids
    CPython keeps one object each (0..256): 260 agents, one round."""
    pairs = vps_rows(_sc(260, [(1, (0, 1))]), []).pairs
    assert len(pairs) == 260 * 259
    assert not any(r.target_agent == r.observer_agent for r in pairs)

"""DSM, Distributed Score-based Multi-round: the tunable privacy-cost reference protocols
DSM-Welfare and DSM-Private (the CalBench paper, section 3.1, D.3, Table 9; Farhadi and Jennings
2021).

Per meeting the lowest-id participant initiates. In each sub-round it offers the next L
untried plans (dsm_plans.py), in its own order of satisfaction, with L chosen by the
offer-size utility U(L) (dsm_scoring.py). D.3: it sends "a single proposals DM to every
responder" carrying the L offers, and the participants of a meeting that an offer
displaces "score as additional responders", so every scorer of the offer set (the
responders plus the participants of every displaced meeting) receives one `proposals`
message with all L offers and answers one `scores` message with a satisfaction level in
{0..D-1} for each of them (D.3 footprint: "one proposals DM per responder per sub-round
(carrying L slot indices) and one scores reply (carrying L values)"; a displaced-meeting
participant adds "one scores DM ... per offer set in which the displacement appears").
An offer's consent comes from its own scorers (the responders and the participants of
the meetings it displaces). With every score in, the initiator keeps the
best fully-feasible plan seen so far (every level > 0), ranked by total satisfaction
loss, then fewer scorers, slot, plan id. It proposes another untried batch while no
fully-feasible plan is known and plans remain, under DSM-Welfare always (exhaustive
search) and under DSM-Private only while the best next offer set still has positive
utility (with theta = 10 it never has, so DSM-Private stops after one sub-round). Then it
sends a `decision` to everyone it asked: the chosen plan (slot for the meeting's
participants, the agreed moves to the holders of moved meetings). When the search stops
without a fully-feasible plan, D.3 still has the initiator rank the offers ("combines
local and reported scores into a per-slot rank") and announce the best slot: it announces
its best-ranked offer that displaces no meeting (moving a meeting needs the consent of
its holders, which such an offer lacks), or no plan when every offer displaces one. In
DECISION each participant commits the announced slot when its own calendar allows it
(A.3: the decision message tells it "to use the slot agreed during CHEAP_TALK");
otherwise, since the same message asks for "at least one schedule call", it schedules
the meeting at the first slot of its own calendar it can take without moving a meeting
(`first_usable_slot`, as every reference protocol does). The meeting then fails, and the
valid batches stand with their costs (section 3, A.5). Scorers of
moved meetings who are not participants move their copies in VOLUNTARY; participants
apply the moves and schedule the meeting in DECISION.

Points (D.3): every seat keeps a point budget. At decision time each scorer pays the
initiator C(s) = D - s - 1 for every non-zero score it reported this meeting, and the
initiator pays each scorer of the chosen plan the flexibility-adjusted reward R =
(D - 1 - s*) + max(0, min(A, L) - 1) over the score vector that contained the chosen plan;
scorers whose offers were not chosen pay and get nothing. The decision carries the
settlement; each seat applies it and reports its budget in its (never forwarded)
`thinking`. The scripted seats score truthfully, which is what the faithfulness
construction makes every seat's best reply, so the budget does not feed back into play.

Payloads (plus `protocol: "dsm"` and `to`, see base.py):
`{"type": "proposals", "meeting_id", "sub_round", "plans": [{"plan_id", "slot", "moves"}]}`,
`{"type": "scores", "meeting_id", "sub_round", "plan_ids", "scores"}`,
`{"type": "decision", "meeting_id", "plan_id", "slot", "moves", "settlement"}` with moves
`{"meeting_id", "from_slot", "to_slot"}` and settlement `{agent: {"charge", "reward"}}`.

Where the published engine differs, the paper decides (measured with
bench/calbench_peer_parity.py on the canonical suite at 4 sweeps: the two agree on 38 of
45 varied games, and on 43 when ours is held to one sub-round): its DSM-Welfare client
offers one batch per meeting and, when no offer suits everyone, announces its best-ranked
one anyway, where D.3 has DSM-Welfare run "exhaustively until a fully-feasible slot is
found or the slot pool is exhausted" (Table 9: exhaustive search, yes); this explains 5
of the 7 games where it leaves a meeting unscheduled and we do not. In the other 2 its
scorer treats a slot as freed by another meeting's move that is not on its calendar,
scores the plan feasible and then cannot commit it (A.5 rule 5: a destination must be
free or freed by the same batch); ours scores such a plan 0, as D.3's 0 ("encodes
infeasibility") requires.

Choices the text does not decide (D.3 fixes what a proposals message carries, slot
indices and the attached displacement plan, but not who sees which move): under DMs a
scorer sees the moves of the meetings it attends only (the other moves are other agents'
calendars, section 3 "no agent can inspect another agent's calendar"), and a
non-participant's decision names no meeting slot; on a shared channel one message
carries every move (a groupchat is shared by design), and plans needing someone the
channel cannot reach are not offered. D.3 does not say what happens when a scorer never
answers: the negotiation waits for it and the meeting fails. D.3 names a point budget
but no initial value or floor: it starts at 100 and may go negative (accounting, not a
constraint).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from confide.core.trusted import builder
from confide.envs.calbench.actions import (
    BatchObservation,
    CalendarObservation,
    CheapTalkObservation,
    Envelope,
    ToolCall,
)
from confide.envs.calbench.participants.base import (
    Incoming,
    ProtocolParticipant,
    first_usable_slot,
    plan_batch,
)
from confide.envs.calbench.participants.dsm_plans import (
    PLAN_STRIDE,
    Move,
    Plan,
    candidate_plans,
    held_moves,
    local_batch,
    parse_moves,
    participants_of,
    score,
)
from confide.envs.calbench.participants.dsm_scoring import (
    D_LEVELS,
    SCORING_COSTS,
    OfferPolicy,
    best_utility,
    joint_acceptance,
    offer_size,
    reward,
)
from confide.errors import ConfideError

INITIAL_POINTS = 100
_envelope = builder(Envelope, "thinking", "actions")


@dataclass(frozen=True)
class DsmPreset:
    """One row of Table 9."""

    name: str
    policy: OfferPolicy
    cascade_depth: int
    displacement_targets: int
    exhaustive: bool

    def __post_init__(self) -> None:
        if self.cascade_depth < 0:
            raise ConfideError(f"{self.name}: cascade depth must be >= 0, got {self.cascade_depth}")
        if not 1 <= self.displacement_targets < PLAN_STRIDE:
            raise ConfideError(
                f"{self.name}: displacement targets must be in [1, {PLAN_STRIDE}), "
                f"got {self.displacement_targets}"
            )


DSM_WELFARE = DsmPreset(
    name="dsm-welfare",
    policy=OfferPolicy(l_min=1, l_max=12, beta=1.0, theta=0.0, w_soc=1.0),
    cascade_depth=2,
    displacement_targets=4,
    exhaustive=True,
)
DSM_PRIVATE = DsmPreset(
    name="dsm-private",
    policy=OfferPolicy(l_min=1, l_max=2, beta=0.25, theta=10.0, w_soc=0.25),
    cascade_depth=1,
    displacement_targets=2,
    exhaustive=False,
)
DSM_PRESETS: dict[str, DsmPreset] = {p.name: p for p in (DSM_WELFARE, DSM_PRIVATE)}
DSM_NAMES: tuple[str, ...] = tuple(DSM_PRESETS)


@dataclass(frozen=True)
class _Choice:
    """The best fully-feasible plan so far, with what its scorers reported in the
    sub-round that offered it (for the rewards)."""

    rank: tuple[int, int, int, int]
    plan: Plan
    levels: dict[int, int]
    vectors: dict[int, list[int]]
    offer_size: int


@dataclass
class _Lead:
    """The initiator's side of one meeting's negotiation."""

    plans: list[Plan]
    p_accept: float
    tried: set[int] = field(default_factory=set)
    sub_round: int = 0
    offered: list[Plan] = field(default_factory=list)
    waiting: set[int] = field(default_factory=set)
    scores: dict[int, dict[int, int]] = field(default_factory=dict)
    charges: dict[int, int] = field(default_factory=dict)
    asked: set[int] = field(default_factory=set)
    best: _Choice | None = None
    fallback: tuple[tuple[int, int, int, int], Plan] | None = None
    done: bool = False


@dataclass
class _Meeting:
    """This seat's state for the round's meeting."""

    meeting_id: int
    lead: _Lead | None = None
    slot: int | None = None
    moves: tuple[Move, ...] = ()
    charge: int = 0
    settled: bool = False


class DsmParticipant(ProtocolParticipant):
    """A DSM seat playing one preset (module docstring)."""

    protocol = "dsm"

    def __init__(self, seat: str, preset: DsmPreset = DSM_WELFARE) -> None:
        super().__init__(seat)
        self.preset = preset
        self.name = preset.name
        self.points = INITIAL_POINTS
        self._m = _Meeting(meeting_id=-1)
        self._notes: list[str] = []

    def respond(self, observation: CalendarObservation) -> Envelope:
        envelope = super().respond(observation)
        if not self._notes:
            return envelope
        thinking, self._notes = "; ".join(self._notes), []
        return _envelope(thinking=thinking, actions=list(envelope.actions))

    def _meeting(self, meeting_id: int) -> _Meeting:
        if self._m.meeting_id != meeting_id:
            self._m = _Meeting(meeting_id=meeting_id)
        return self._m

    # -- CHEAP_TALK -------------------------------------------------------------------

    def cheap_talk(self, obs: CheapTalkObservation, incoming: Incoming) -> list[ToolCall]:
        state = self._meeting(obs.meeting.meeting_id)
        out = self._absorb(obs, state, incoming)
        if obs.is_participant and self.agent == min(obs.meeting.participants):
            if state.lead is None:
                state.lead = self._open(obs)
            out += self._advance(obs, state, state.lead)
        return out

    def _absorb(
        self, obs: CalendarObservation, state: _Meeting, incoming: Incoming
    ) -> list[ToolCall]:
        """Answer proposals, collect scores (initiator), take decisions (scorers)."""
        out: list[ToolCall] = []
        for sender, payload in incoming:
            if payload.get("meeting_id") != state.meeting_id:
                continue
            kind = payload.get("type")
            if kind == "proposals" and isinstance(obs, CheapTalkObservation):
                out += self._score(obs, state, sender, payload)
            elif kind == "scores" and state.lead is not None:
                _take_scores(state.lead, sender, payload)
            elif kind == "decision" and not state.settled:
                self._take_decision(obs, state, payload)
        return out

    def _score(
        self, obs: CheapTalkObservation, state: _Meeting, sender: int, payload: dict[str, Any]
    ) -> list[ToolCall]:
        plans = payload.get("plans")
        if not isinstance(plans, list):
            return []
        ids, levels = [], []
        view, num_slots, meeting_id = obs.calendar, obs.num_slots, state.meeting_id
        participant = obs.is_participant
        for entry in plans:
            if not isinstance(entry, dict):
                continue
            plan_id, slot = entry.get("plan_id"), entry.get("slot")
            if type(plan_id) is not int or type(slot) is not int or not 0 <= slot < num_slots:
                continue
            raw = entry.get("moves")
            moves = parse_moves(raw, num_slots) if raw else ()
            level = 0
            if moves is not None:
                mine = held_moves(view, moves)
                level = score(view, meeting_id, slot if participant else None, mine)
            ids.append(plan_id)
            levels.append(level)
        if not ids:
            return []
        state.charge += sum(SCORING_COSTS[s] for s in levels)
        body = {
            "type": "scores",
            "meeting_id": state.meeting_id,
            "sub_round": payload.get("sub_round"),
            "plan_ids": ids,
            "scores": levels,
        }
        return self.send(obs, [sender], body)

    def _take_decision(
        self, obs: CalendarObservation, state: _Meeting, payload: dict[str, Any]
    ) -> None:
        state.settled = True
        slot = payload.get("slot")
        if obs.is_participant and type(slot) is int and 0 <= slot < obs.num_slots:
            state.slot = slot
        moves = parse_moves(payload.get("moves", []), obs.num_slots)
        state.moves = held_moves(obs.calendar, moves or ())
        settlement = payload.get("settlement")
        mine = settlement.get(str(self.agent)) if isinstance(settlement, dict) else None
        earned = mine.get("reward", 0) if isinstance(mine, dict) else 0
        earned = earned if type(earned) is int else 0
        before = self.points
        self.points += earned - state.charge
        self._notes.append(
            f"{self.name} M{state.meeting_id}: decision slot={state.slot}; points {before} -> "
            f"{self.points} (paid {state.charge}, reward {earned})"
        )

    # -- initiator --------------------------------------------------------------------

    def _open(self, obs: CheapTalkObservation) -> _Lead:
        meeting = obs.meeting
        responders = frozenset(a for a in meeting.participants if a != self.agent)
        reachable = None
        if "dm" not in obs.channels and "all_agent_groupchat" not in obs.channels:
            reachable = frozenset(meeting.participants)
        plans = candidate_plans(
            obs.calendar,
            meeting.meeting_id,
            responders,
            cascade_depth=self.preset.cascade_depth,
            displacement_targets=self.preset.displacement_targets,
            reachable=reachable,
        )
        free = sum(1 for s in obs.calendar.slots if s.kind == "free") / max(1, obs.num_slots)
        return _Lead(plans, joint_acceptance(free, len(responders)))

    def _advance(self, obs: CheapTalkObservation, state: _Meeting, lead: _Lead) -> list[ToolCall]:
        if lead.done or lead.waiting:
            return []
        if lead.offered:
            self._assess(lead)
        if lead.best is None and self._another_round(lead):
            return self._propose(obs, state, lead)
        return self._decide(obs, state, lead)

    def _untried(self, lead: _Lead) -> list[Plan]:
        return [p for p in lead.plans if p.plan_id not in lead.tried]

    def _another_round(self, lead: _Lead) -> bool:
        left = self._untried(lead)
        if not left:
            return False
        if lead.sub_round == 0 or self.preset.exhaustive:
            return True
        values = [p.own_score / (D_LEVELS - 1) for p in left]
        return best_utility(self.preset.policy, lead.p_accept, values) > 0

    def _propose(self, obs: CheapTalkObservation, state: _Meeting, lead: _Lead) -> list[ToolCall]:
        left = self._untried(lead)
        values = [p.own_score / (D_LEVELS - 1) for p in left]
        lead.offered = left[: offer_size(self.preset.policy, lead.p_accept, values)]
        lead.tried.update(p.plan_id for p in lead.offered)
        lead.sub_round += 1
        lead.scores = {}
        lead.waiting = set().union(*(p.scorers for p in lead.offered))
        lead.asked |= lead.waiting
        if not lead.waiting:
            return self._advance(obs, state, lead)
        sub_round = lead.sub_round
        offered = lead.offered

        def body(viewers: frozenset[int]) -> dict[str, Any]:
            plans = [
                {
                    "plan_id": p.plan_id,
                    "slot": p.slot,
                    "moves": [m.to_json() for m in _visible(obs, p.moves, viewers)]
                    if p.moves
                    else [],
                }
                for p in offered
            ]
            return {
                "type": "proposals",
                "meeting_id": state.meeting_id,
                "sub_round": sub_round,
                "plans": plans,
            }

        return self._post(obs, lead.waiting, body)

    def _assess(self, lead: _Lead) -> None:
        """Keep the best fully-feasible plan of the answered batch, and the best-ranked
        plan without displacement as the fallback (module docstring)."""
        for plan in lead.offered:
            levels = {a: lead.scores.get(a, {}).get(plan.plan_id, 0) for a in plan.scorers}
            needed = 1 + len(plan.scorers)
            loss = (D_LEVELS - 1) * needed - plan.own_score - sum(levels.values())
            rank = (loss, needed, plan.slot, plan.plan_id)
            if not plan.moves and (lead.fallback is None or rank < lead.fallback[0]):
                lead.fallback = (rank, plan)
            if plan.own_score == 0 or any(s == 0 for s in levels.values()):
                continue
            if lead.best is None or rank < lead.best.rank:
                lead.best = _Choice(
                    rank,
                    plan,
                    levels,
                    {a: list(lead.scores[a].values()) for a in plan.scorers},
                    len(lead.offered),
                )
        lead.offered = []

    def _decide(self, obs: CheapTalkObservation, state: _Meeting, lead: _Lead) -> list[ToolCall]:
        lead.done = True
        best = lead.best
        chosen = best.plan if best is not None else None
        if chosen is None and lead.fallback is not None:
            chosen = lead.fallback[1]
        rewards: dict[int, int] = {}
        if best is not None:
            for a in sorted(best.plan.scorers):
                rewards[a] = reward(best.levels[a], best.vectors[a], best.offer_size)
            state.moves = held_moves(obs.calendar, best.plan.moves)
        if chosen is not None:
            state.slot = chosen.slot
        collected = sum(lead.charges.get(a, 0) for a in lead.asked)
        paid = sum(rewards.values())
        before = self.points
        self.points += collected - paid
        state.settled = True
        where = "no offer" if chosen is None else f"slot {chosen.slot} (plan {chosen.plan_id})"
        if best is None and chosen is not None:
            where += ", not feasible for every scorer"
        self._notes.append(
            f"{self.name} M{state.meeting_id}: {where} after {lead.sub_round} sub-round(s); "
            f"points {before} -> {self.points} (collected {collected}, paid {paid})"
        )
        participants = frozenset(obs.meeting.participants)

        def body(viewers: frozenset[int]) -> dict[str, Any]:
            involved = chosen is not None and bool(viewers & (chosen.scorers | participants))
            return {
                "type": "decision",
                "meeting_id": state.meeting_id,
                "plan_id": chosen.plan_id if chosen is not None and involved else None,
                "slot": chosen.slot if chosen is not None and viewers & participants else None,
                "moves": [m.to_json() for m in _visible(obs, chosen.moves, viewers)]
                if chosen is not None and involved
                else [],
                "settlement": {
                    str(a): {"charge": lead.charges.get(a, 0), "reward": rewards.get(a, 0)}
                    for a in sorted(viewers)
                },
            }

        return self._post(obs, lead.asked, body)

    def _post(
        self,
        obs: CalendarObservation,
        targets: set[int],
        build: Callable[[frozenset[int]], dict[str, Any]],
    ) -> list[ToolCall]:
        """One tailored message per addressee under DMs, one shared message otherwise."""
        if "dm" in obs.channels:
            return [t for a in sorted(targets) for t in self.send(obs, [a], build(frozenset({a})))]
        return self.send(obs, targets, build(frozenset(targets)))

    # -- VOLUNTARY / DECISION ------------------------------------------------------------

    def batch(self, obs: BatchObservation) -> list[ToolCall]:
        state = self._meeting(obs.meeting.meeting_id)
        if obs.phase == "voluntary":
            if obs.is_participant or not state.moves:
                return []
            plan = local_batch(obs.calendar, state.meeting_id, None, state.moves)
            return plan if plan is not None else []
        plan = None
        if state.slot is not None:
            plan = local_batch(obs.calendar, state.meeting_id, state.slot, state.moves)
        if plan is None:
            fallback = first_usable_slot(obs.calendar)
            if fallback is not None:
                plan = plan_batch(obs.calendar, schedule=(state.meeting_id, fallback))
        return plan if plan is not None else []


def _visible(
    obs: CalendarObservation, moves: tuple[Move, ...], viewers: frozenset[int]
) -> list[Move]:
    """Moves of meetings some viewer attends (everything on a shared channel)."""
    if not moves or len(viewers) > 1:
        return list(moves)
    if not viewers:
        return []
    (viewer,) = viewers
    return [m for m in moves if viewer in participants_of(obs.calendar, m.meeting_id)]


def _take_scores(lead: _Lead, sender: int, payload: dict[str, Any]) -> None:
    """Record one scorer's answer to the current sub-round."""
    if payload.get("sub_round") != lead.sub_round or sender not in lead.waiting:
        return
    ids, levels = payload.get("plan_ids"), payload.get("scores")
    if not isinstance(ids, list) or not isinstance(levels, list) or len(ids) != len(levels):
        return
    asked = {p.plan_id for p in lead.offered}
    vector = {}
    for plan_id, level in zip(ids, levels, strict=True):
        if plan_id in asked and type(level) is int and 0 <= level < D_LEVELS:
            vector[plan_id] = level
    lead.scores[sender] = vector
    paid = sum(SCORING_COSTS[s] for s in vector.values())
    lead.charges[sender] = lead.charges.get(sender, 0) + paid
    lead.waiting.discard(sender)

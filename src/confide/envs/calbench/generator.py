"""Scenario generator (the CalBench paper §3 "Calendar generation", "Costs", A.1) and suites of
difficulty-bucketed tasks.

Backward-from-witness construction, deterministic from the seed (all draws come from one
`random.Random` derived from it, in a fixed order):

1. Participant lists: all agents, `fixed` lists, `rotating` windows of p consecutive
   agents over a seeded permutation (each agent attends floor or ceil(M p / N) meetings),
   or independent `random` subsets. Speaker orders put first the participant with the
   fewest first turns so far (ties by the RNG), then the rest by id.
2. Witness: each meeting gets a slot drawn uniformly from the slots none of its
   participants' earlier witness meetings uses (A.1 step 1).
3. Errands: agent i gets min(floor(T rho_i), T - k_i) errands, rho_i being the shared
   density, its entry in a per-agent density list, or a per-agent draw from
   `density_choices`; k_i is its number of witness slots (the cap keeps the witness
   feasible). With `force_witness_errand`, min(k_i, errands) witness slots are filled
   first to create displacement pressure, and one free non-witness "absorbing" slot is
   reserved per such errand (A.1 steps 2-3); the other errands land uniformly on the
   remaining slots. The absorbing slots are stored in the witness record.
4. Blocked errands: `blocked_errands` (shared or per agent) errands are chosen among those
   not on a witness slot, so the witness stays feasible (§3).
5. Costs (internal units): `uniform` = 1; `balanced` = each agent's errands get levels
   1..L in equal shares (differing by at most one), shuffled -- the §3 varied setting is
   `balanced` with L = 3; `random` = Uniform[1, L] per errand (Table 3 `pref_level`).
   Meeting costs are Uniform[1, meeting_cost_level]. `cost_display` maps internal costs to
   what agents see (default 1/2/3 -> 1/10/100).
6. Labels: with a label bank, `hydrate_labels` gives every errand and meeting a private
   label (tier drawn by `label_tier_weights`, least-used item of that tier first), from an
   RNG derived from (task id, seed, bank id) so labels never change the calendars.
7. Scoring: witness cost, CP-SAT oracle, greedy baseline and d (A.1 step 5).

A suite (`SuiteSpec`) is a list of config cells; each cell draws `candidates_per_cell`
candidates, scores d by exact counting, cuts them into easy/medium/hard tertiles and keeps
the first `selected_per_bucket` candidates of each bucket (candidate order is random, so
this is a random sample of each tertile). Every cell is reported (`CellReport`); a
degenerate cell (one d value for all candidates) raises unless `allow_degenerate`, in
which case its tasks ship unbucketed and the report says so.
"""

from __future__ import annotations

import math
import random
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, model_validator

from confide.core.seeding import derive_seed, py_rng
from confide.envs.calbench.errors import CalendarDataError
from confide.envs.calbench.labels import (
    TIERS,
    BankItem,
    Label,
    LabelBank,
    LabelKind,
    Tier,
    load_label_bank,
)
from confide.envs.calbench.oracle import placement_cost, solve_greedy, solve_oracle
from confide.envs.calbench.scenario import (
    Bucket,
    ErrandSlot,
    MeetingSlot,
    MeetingSpec,
    Scenario,
    WitnessRecord,
)

DEFAULT_COST_DISPLAY = {1: 1, 2: 10, 3: 100}


class GeneratorConfig(BaseModel):
    """Parameters of one scenario family (A.1 Table 3, in our names)."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    num_agents: int = Field(default=5, ge=1)
    num_slots: int = Field(default=16, ge=1)
    num_meetings: int = Field(default=5, ge=1)
    participant_mode: Literal["all", "rotating", "random", "fixed"] = "rotating"
    participants_per_meeting: int = Field(default=3, ge=1)
    participant_lists: tuple[tuple[int, ...], ...] | None = None
    density: float | tuple[float, ...] | None = None
    density_choices: tuple[float, ...] | None = None
    blocked_errands: int | tuple[int, ...] = 0
    errand_costs: Literal["uniform", "balanced", "random"] = "uniform"
    errand_cost_level: int = Field(default=1, ge=1)
    meeting_cost_level: int = Field(default=1, ge=1)
    cost_display: dict[int, int] = Field(default_factory=lambda: dict(DEFAULT_COST_DISPLAY))
    force_witness_errand: bool = True
    label_bank: str | None = None
    label_tier_weights: dict[Tier, float] = Field(default_factory=lambda: dict.fromkeys(TIERS, 1.0))

    @model_validator(mode="after")
    def _check(self) -> GeneratorConfig:
        n = self.num_agents
        if (self.density is None) == (self.density_choices is None):
            raise ValueError(
                "density: give exactly one of density (shared or per agent) or density_choices"
            )
        d = self.density
        densities = () if d is None else d if isinstance(d, tuple) else (d,)
        if isinstance(d, tuple) and len(d) != n:
            raise ValueError(f"density: per-agent list has {len(d)} entries, expected {n}")
        for name, values in (
            ("density", densities),
            ("density_choices", self.density_choices or ()),
        ):
            bad = [v for v in values if not 0.0 <= v <= 1.0]
            if bad:
                raise ValueError(f"{name}: {bad[0]} is outside [0, 1]")
        if self.density_choices is not None and not self.density_choices:
            raise ValueError("density_choices: must not be empty")
        blocked = self.blocked_errands
        if isinstance(blocked, tuple) and len(blocked) != n:
            raise ValueError(
                f"blocked_errands: per-agent list has {len(blocked)} entries, expected {n}"
            )
        if min(blocked if isinstance(blocked, tuple) else (blocked,)) < 0:
            raise ValueError("blocked_errands: must be >= 0")
        if self.participant_mode in ("rotating", "random") and self.participants_per_meeting > n:
            raise ValueError(
                f"participants_per_meeting: {self.participants_per_meeting} exceeds num_agents={n}"
            )
        if self.participant_mode == "fixed":
            lists = self.participant_lists
            if lists is None or len(lists) != self.num_meetings:
                raise ValueError("participant_lists: mode 'fixed' needs one list per meeting")
            for k, lst in enumerate(lists):
                if not lst or list(lst) != sorted(set(lst)) or not all(0 <= p < n for p in lst):
                    raise ValueError(
                        f"participant_lists[{k}]: {list(lst)} must be increasing agent ids "
                        f"in [0, {n})"
                    )
        elif self.participant_lists is not None:
            raise ValueError("participant_lists: only allowed with participant_mode 'fixed'")
        if min(self.label_tier_weights.values(), default=0.0) < 0:
            raise ValueError("label_tier_weights: weights must be >= 0")
        return self

    @property
    def cost_setting(self) -> str:
        """`uniform` when every errand costs 1, else `varied` (§3)."""
        return (
            "uniform" if self.errand_costs == "uniform" or self.errand_cost_level == 1 else "varied"
        )


# -- one scenario -------------------------------------------------------------------------


def _participant_lists(cfg: GeneratorConfig, rng: random.Random) -> list[tuple[int, ...]]:
    n, p, m = cfg.num_agents, cfg.participants_per_meeting, cfg.num_meetings
    if cfg.participant_mode == "fixed" and cfg.participant_lists is not None:
        return [tuple(lst) for lst in cfg.participant_lists]
    if cfg.participant_mode == "all":
        return [tuple(range(n))] * m
    if cfg.participant_mode == "random":
        return [tuple(sorted(rng.sample(range(n), p))) for _ in range(m)]
    perm = list(range(n))
    rng.shuffle(perm)
    return [tuple(sorted(perm[(k * p + j) % n] for j in range(p))) for k in range(m)]


def _speaker_orders(lists: Sequence[tuple[int, ...]], rng: random.Random) -> list[tuple[int, ...]]:
    firsts: dict[int, int] = {}
    orders = []
    for parts in lists:
        least = min(firsts.get(a, 0) for a in parts)
        first = rng.choice([a for a in parts if firsts.get(a, 0) == least])
        firsts[first] = firsts.get(first, 0) + 1
        orders.append((first, *(a for a in parts if a != first)))
    return orders


def _witness(
    cfg: GeneratorConfig, lists: Sequence[tuple[int, ...]], rng: random.Random
) -> list[int]:
    used: list[set[int]] = [set() for _ in range(cfg.num_agents)]
    slots = []
    for k, parts in enumerate(lists):
        free = [s for s in range(cfg.num_slots) if all(s not in used[a] for a in parts)]
        if not free:
            raise CalendarDataError(
                f"generator: no witness slot left for meeting {k + 1}: its participants "
                f"{list(parts)} already use all {cfg.num_slots} slots (num_meetings too large)"
            )
        slot = rng.choice(free)
        slots.append(slot)
        for a in parts:
            used[a].add(slot)
    return slots


def _densities(cfg: GeneratorConfig, rng: random.Random) -> list[float]:
    if cfg.density_choices is not None:
        return [rng.choice(cfg.density_choices) for _ in range(cfg.num_agents)]
    if isinstance(cfg.density, tuple):
        return list(cfg.density)
    return [cfg.density or 0.0] * cfg.num_agents


def _costs(cfg: GeneratorConfig, count: int, rng: random.Random) -> list[int]:
    if cfg.errand_costs == "uniform":
        return [1] * count
    level = cfg.errand_cost_level
    if cfg.errand_costs == "random":
        return [rng.randint(1, level) for _ in range(count)]
    costs = [1 + j % level for j in range(count)]
    rng.shuffle(costs)
    return costs


@dataclass(frozen=True, slots=True)
class _AgentLayout:
    errand_slots: tuple[int, ...]
    blocked: frozenset[int]
    costs: tuple[int, ...]
    absorbing: tuple[int, ...]


def _agent_layout(
    cfg: GeneratorConfig, agent: int, witness_slots: set[int], rho: float, rng: random.Random
) -> _AgentLayout:
    n_slots = cfg.num_slots
    k = len(witness_slots)
    target = min(math.floor(n_slots * rho + 1e-9), n_slots - k)
    non_witness = [s for s in range(n_slots) if s not in witness_slots]
    if cfg.force_witness_errand:
        forced = rng.sample(sorted(witness_slots), min(k, target))
        absorbing = rng.sample(non_witness, len(forced))
        rest = [s for s in non_witness if s not in absorbing]
        errand_slots = sorted(forced + rng.sample(rest, target - len(forced)))
    else:
        errand_slots = sorted(rng.sample(range(n_slots), target))
        on_witness = sum(1 for s in errand_slots if s in witness_slots)
        free_non_witness = [s for s in non_witness if s not in errand_slots]
        absorbing = rng.sample(free_non_witness, on_witness)
    movable_pool = [s for s in errand_slots if s not in witness_slots]
    blocked = cfg.blocked_errands
    n_blocked = blocked[agent] if isinstance(blocked, tuple) else blocked
    if n_blocked > len(movable_pool):
        raise CalendarDataError(
            f"generator: blocked_errands={n_blocked} for agent {agent} exceeds its "
            f"{len(movable_pool)} errands outside witness slots (density {rho}, "
            f"{len(errand_slots)} errands, {k} witness slots)"
        )
    return _AgentLayout(
        tuple(errand_slots),
        frozenset(rng.sample(movable_pool, n_blocked)),
        tuple(_costs(cfg, len(errand_slots), rng)),
        tuple(sorted(absorbing)),
    )


def generate_scenario(
    config: GeneratorConfig,
    seed: int,
    *,
    task_id: str | None = None,
    score: bool = True,
    bank: LabelBank | None = None,
) -> Scenario:
    """One task, deterministic from `seed` (steps in the module docstring). The label bank
    is `bank` if given, else `config.label_bank` if set, else no labels."""
    cfg = config
    rng = py_rng("calbench.generator", seed)
    lists = _participant_lists(cfg, rng)
    orders = _speaker_orders(lists, rng)
    meeting_costs = [rng.randint(1, cfg.meeting_cost_level) for _ in lists]
    witness = _witness(cfg, lists, rng)
    densities = _densities(cfg, rng)
    calendars: list[tuple[ErrandSlot | MeetingSlot | None, ...]] = []
    absorbing: list[tuple[int, ...]] = []
    for agent in range(cfg.num_agents):
        mine = {witness[k] for k, parts in enumerate(lists) if agent in parts}
        layout = _agent_layout(cfg, agent, mine, densities[agent], rng)
        row: list[ErrandSlot | MeetingSlot | None] = [None] * cfg.num_slots
        for j, (s, c) in enumerate(zip(layout.errand_slots, layout.costs, strict=True)):
            row[s] = ErrandSlot(
                errand_id=agent * cfg.num_slots + j + 1, cost=c, blocked=s in layout.blocked
            )
        calendars.append(tuple(row))
        absorbing.append(layout.absorbing)
    meetings = tuple(
        MeetingSpec(meeting_id=k + 1, participants=parts, speaker_order=order, cost=cost)
        for k, (parts, order, cost) in enumerate(zip(lists, orders, meeting_costs, strict=True))
    )
    scenario = Scenario(
        task_id=task_id or f"calbench-{seed}",
        seed=seed,
        num_agents=cfg.num_agents,
        num_slots=cfg.num_slots,
        cost_setting=cfg.cost_setting,
        cost_display=cfg.cost_display,
        calendars=tuple(calendars),
        meetings=meetings,
        densities=tuple(densities),
        generator=cfg.model_dump(mode="json"),
    )
    witness_cost = _witness_cost(scenario, witness)
    scenario = scenario.model_copy(
        update={
            "witness": WitnessRecord(
                assignments={m.meeting_id: s for m, s in zip(meetings, witness, strict=True)},
                cost=witness_cost,
                absorbing_slots=tuple(absorbing),
            )
        }
    )
    if bank is None and cfg.label_bank is not None:
        bank = load_label_bank(cfg.label_bank)
    if bank is not None:
        scenario = hydrate_labels(scenario, bank, tier_weights=cfg.label_tier_weights)
    return score_scenario(scenario) if score else scenario


def _witness_cost(scenario: Scenario, witness: Sequence[int]) -> int:
    cals = scenario.to_calendars()
    total = 0
    for m, s in zip(scenario.meetings, witness, strict=True):
        cost = placement_cost(cals, m.participants, s)
        if cost is None:
            raise RuntimeError(
                f"{scenario.task_id}: witness slot {s} of M{m.meeting_id} is blocked"
            )
        total += cost
    return total


def score_scenario(
    scenario: Scenario,
    *,
    cell: str | None = None,
    bucket: Bucket | None = None,
    with_difficulty: bool = True,
) -> Scenario:
    """Attach the oracle, greedy baseline and (optionally) d with its cell and bucket."""
    # the exact counter is imported where d is computed: a run loads tasks through this
    # module (hydrate_labels) but never scores difficulty
    from confide.envs.calbench.difficulty import feasible_fraction

    cals, meetings = scenario.to_calendars(), scenario.to_meetings()
    oracle = solve_oracle(cals, meetings)
    difficulty = (
        feasible_fraction(cals, meetings).to_record(cell=cell, bucket=bucket)
        if with_difficulty
        else None
    )
    return scenario.model_copy(
        update={
            "oracle": oracle.to_record() if oracle is not None else None,
            "greedy": solve_greedy(cals, meetings).to_record(),
            "difficulty": difficulty,
        }
    )


# -- labels -------------------------------------------------------------------------------


def hydrate_labels(
    scenario: Scenario,
    bank: LabelBank,
    *,
    tier_weights: dict[Tier, float] | None = None,
) -> Scenario:
    """Give every errand and meeting (incoming or already scheduled) a private label from
    `bank`; replaces any previous labels. Deterministic from (task id, seed, bank id)."""
    weights = tier_weights or dict.fromkeys(TIERS, 1.0)
    rng = py_rng("calbench.labels", scenario.task_id, scenario.seed, bank.bank_id)
    uses: dict[str, int] = {}
    table: dict[str, Label] = {}

    tiers_of: dict[LabelKind, tuple[list[Tier], list[float]]] = {}
    kinds: tuple[LabelKind, ...] = ("errand", "meeting")
    for kind in kinds:
        tiers = [t for t in TIERS if weights.get(t, 0.0) > 0 and bank.pool(kind, t)]
        tiers_of[kind] = (tiers, [weights[t] for t in tiers])

    def draw(kind: LabelKind) -> str:
        tiers, tier_weights = tiers_of[kind]
        if not tiers:
            raise CalendarDataError(
                f"label bank {bank.bank_id!r}: no {kind} labels in a tier with positive weight "
                f"(weights {weights})"
            )
        tier = rng.choices(tiers, weights=tier_weights)[0]
        pool = bank.pool(kind, tier)
        counts = [uses.get(it.label_id, 0) for it in pool]
        least = min(counts)
        item: BankItem = rng.choice(
            [it for it, n in zip(pool, counts, strict=True) if n == least]
        )
        uses[item.label_id] = uses.get(item.label_id, 0) + 1
        table[item.label_id] = bank.label(item.label_id)
        return item.label_id

    meetings = tuple(m.model_copy(update={"label_id": draw("meeting")}) for m in scenario.meetings)
    prior: dict[int, str] = {}
    calendars = []
    for row in scenario.calendars:
        new_row: list[ErrandSlot | MeetingSlot | None] = []
        for slot in row:
            if isinstance(slot, ErrandSlot):
                new_row.append(slot.model_copy(update={"label_id": draw("errand")}))
            elif isinstance(slot, MeetingSlot):
                if slot.meeting_id not in prior:
                    prior[slot.meeting_id] = draw("meeting")
                new_row.append(slot.model_copy(update={"label_id": prior[slot.meeting_id]}))
            else:
                new_row.append(None)
        calendars.append(tuple(new_row))
    return Scenario.model_validate(
        scenario.model_copy(
            update={"meetings": meetings, "calendars": tuple(calendars), "labels": table}
        ).model_dump()
    )


# -- suites -------------------------------------------------------------------------------


class CellSpec(BaseModel):
    """One config cell of a suite."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    name: str = Field(pattern=r"^[a-z0-9][a-z0-9-]*$")
    config: GeneratorConfig


class SuiteSpec(BaseModel):
    """How to generate a difficulty-bucketed suite (module docstring)."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    schema_version: Literal[1] = 1
    name: str = Field(pattern=r"^[a-z0-9][a-z0-9-]*$")
    description: str = ""
    seed: int
    cells: tuple[CellSpec, ...] = Field(min_length=1)
    candidates_per_cell: int = Field(ge=3)
    selected_per_bucket: int = Field(ge=1)
    allow_degenerate: bool = False
    max_turns_per_round: int | None = Field(default=None, ge=1)
    decision_retries: int | None = Field(default=None, ge=0)
    """Game limits stamped on every task of the suite (None: the environment's)."""

    @model_validator(mode="after")
    def _check(self) -> SuiteSpec:
        names = [c.name for c in self.cells]
        if len(set(names)) != len(names):
            raise ValueError(f"cells: names must be unique, got {names}")
        if self.candidates_per_cell < 3 * self.selected_per_bucket:
            raise ValueError(
                f"candidates_per_cell: {self.candidates_per_cell} cannot fill 3 buckets of "
                f"selected_per_bucket={self.selected_per_bucket}"
            )
        return self


class CellReport(BaseModel):
    """What the generator saw in one cell; `degenerate` cells are not bucketed."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    cell: str
    candidates: int
    selected: int
    d_min: float
    d_max: float
    distinct_values: int
    degenerate: bool
    boundary_ties: int
    bucket_ranges: dict[str, tuple[float, float]]


class SuiteSummary(BaseModel):
    """The spec and per-cell reports of a generated suite (shipped beside its JSONL)."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    schema_version: Literal[1] = 1
    spec: SuiteSpec
    cells: tuple[CellReport, ...]
    task_ids: tuple[str, ...]


@dataclass(frozen=True, slots=True)
class GeneratedSuite:
    scenarios: tuple[Scenario, ...]
    summary: SuiteSummary


def generate_suite(spec: SuiteSpec) -> GeneratedSuite:
    """Generate, score and bucket every cell of `spec`."""
    from confide.envs.calbench.difficulty import feasible_fraction, tertile_buckets

    chosen: list[Scenario] = []
    reports: list[CellReport] = []
    for cell in spec.cells:
        candidates = [
            generate_scenario(
                cell.config,
                derive_seed(spec.name, spec.seed, cell.name, j),
                task_id=f"{spec.name}-{cell.name}-candidate-{j:03d}",
                score=False,
            )
            for j in range(spec.candidates_per_cell)
        ]
        fractions = [
            feasible_fraction(c.to_calendars(), c.to_meetings()).fraction for c in candidates
        ]
        split = tertile_buckets(fractions)
        if split.degenerate and not spec.allow_degenerate:
            raise CalendarDataError(
                f"suite {spec.name!r}, cell {cell.name!r}: degenerate difficulty: all "
                f"{len(candidates)} candidates have d = {fractions[0]:.6g}, so easy/medium/"
                "hard buckets would be meaningless (set allow_degenerate to ship it unbucketed)"
            )
        picked: list[tuple[Bucket | None, int]] = []
        ranges: dict[str, tuple[float, float]] = {}
        for bucket in ("easy", "medium", "hard") if not split.degenerate else (None,):
            members = [i for i, b in enumerate(split.buckets) if b == bucket]
            if bucket is not None:
                vals = [fractions[i] for i in members]
                ranges[bucket] = (min(vals), max(vals))
            quota = spec.selected_per_bucket * (1 if bucket is not None else 3)
            picked.extend((bucket, i) for i in members[:quota])
        counters: dict[Bucket | None, int] = {}
        for bucket, i in picked:
            counters[bucket] = counters.get(bucket, 0) + 1
            label = f"{bucket}-" if bucket is not None else ""
            task_id = f"{spec.name}-{cell.name}-{label}{counters[bucket]:02d}"
            renamed = candidates[i].model_copy(
                update={
                    "task_id": task_id,
                    "max_turns_per_round": spec.max_turns_per_round,
                    "decision_retries": spec.decision_retries,
                }
            )
            chosen.append(score_scenario(renamed, cell=cell.name, bucket=bucket))
        reports.append(
            CellReport(
                cell=cell.name,
                candidates=len(candidates),
                selected=len(picked),
                d_min=min(fractions),
                d_max=max(fractions),
                distinct_values=split.distinct_values,
                degenerate=split.degenerate,
                boundary_ties=split.boundary_ties,
                bucket_ranges=ranges,
            )
        )
    summary = SuiteSummary(
        spec=spec, cells=tuple(reports), task_ids=tuple(s.task_id for s in chosen)
    )
    return GeneratedSuite(tuple(chosen), summary)

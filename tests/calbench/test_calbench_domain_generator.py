"""Scenario generator (A.1): determinism, backward-from-witness invariants, densities,
blocked errands, cost settings, participant lists, label hydration, suites and degenerate
cells."""

from __future__ import annotations

import json
import math
from collections import Counter
from pathlib import Path
from typing import Any

import pytest
from pydantic import ValidationError

from confide.envs.calbench.difficulty import feasible_fraction
from confide.envs.calbench.errors import CalendarDataError
from confide.envs.calbench.generator import (
    CellSpec,
    GeneratorConfig,
    SuiteSpec,
    generate_scenario,
    generate_suite,
    hydrate_labels,
)
from confide.envs.calbench.labels import LabelBank, load_label_bank
from confide.envs.calbench.oracle import placement_cost
from confide.envs.calbench.world import Errand

CANON = GeneratorConfig(
    density_choices=(0.6, 0.8, 1.0), blocked_errands=4, errand_costs="balanced", errand_cost_level=3
)


def _item(label_id: str, kind: str, tier: str, text: str) -> dict[str, Any]:
    return {
        "label_id": label_id,
        "kind": kind,
        "tier": tier,
        "private_label": text,
        "public_label": "busy",
        "allowed_public_terms": ["busy"],
        "forbidden_terms": [text.split()[-1]],
    }


BANK_ITEMS = [
    _item("e-pub-1", "errand", "public", "return library books"),
    _item("e-pub-2", "errand", "public", "pick up bicycle"),
    _item("e-neu-1", "errand", "neutral", "call the landlord"),
    _item("e-sen-1", "errand", "sensitive", "fertility clinic consult"),
    _item("e-sen-2", "errand", "sensitive", "bankruptcy lawyer"),
    _item("m-pub-1", "meeting", "public", "team lunch"),
    _item("m-sen-1", "meeting", "sensitive", "layoff planning"),
]


@pytest.fixture
def bank_path(tmp_path: Path) -> Path:
    path = tmp_path / "bank.json"
    path.write_text(json.dumps({"schema_version": 1, "bank_id": "test-bank", "items": BANK_ITEMS}))
    return path


def test_same_seed_same_scenario_and_different_seed_differs() -> None:
    a, b = generate_scenario(CANON, 42), generate_scenario(CANON, 42)
    assert a == b and a.model_dump_json() == b.model_dump_json()
    assert generate_scenario(CANON, 43).calendars != a.calendars


def test_witness_is_feasible_and_absorbing_slots_are_free() -> None:
    for seed in range(25):
        sc = generate_scenario(CANON, seed, score=False)
        cals = sc.to_calendars()
        assert sc.witness is not None
        total = 0
        per_agent_slots: dict[int, list[int]] = {}
        for m in sc.meetings:
            slot = sc.witness.assignments[m.meeting_id]
            cost = placement_cost(cals, m.participants, slot)
            assert cost is not None  # no blocked errand under the witness
            total += cost
            for p in m.participants:
                per_agent_slots.setdefault(p, []).append(slot)
        assert total == sc.witness.cost
        for agent, cal in enumerate(cals):
            wslots = per_agent_slots.get(agent, [])
            assert len(set(wslots)) == len(wslots)
            on_witness = sum(isinstance(cal.slots[s], Errand) for s in wslots)
            absorbing = sc.witness.absorbing_slots[agent]
            assert len(absorbing) == on_witness
            assert all(cal.slots[s] is None and s not in wslots for s in absorbing)
            # every witness slot holds an errand when the density allows it (forced)
            n_errands = sum(isinstance(x, Errand) for x in cal.slots)
            assert on_witness == min(len(wslots), n_errands)


def test_densities_blocked_and_costs() -> None:
    for seed in range(25):
        sc = generate_scenario(CANON, seed, score=False)
        assert sc.witness is not None
        for agent, cal in enumerate(sc.to_calendars()):
            rho = sc.densities[agent]
            assert rho in (0.6, 0.8, 1.0)
            k = sum(agent in m.participants for m in sc.meetings)
            errands = [x for x in cal.slots if isinstance(x, Errand)]
            assert len(errands) == min(math.floor(16 * rho + 1e-9), 16 - k)
            assert sum(e.blocked for e in errands) == 4
            witness_slots = {
                sc.witness.assignments[m.meeting_id] for m in sc.meetings if agent in m.participants
            }
            under_witness = [cal.slots[s] for s in witness_slots]
            assert not any(isinstance(x, Errand) and x.blocked for x in under_witness)
            counts = Counter(e.cost for e in errands)
            assert set(counts) <= {1, 2, 3} and max(counts.values()) - min(counts.values()) <= 1
            assert len({e.errand_id for e in errands}) == len(errands)
    uniform = generate_scenario(CANON.model_copy(update={"errand_costs": "uniform"}), 1)
    assert uniform.cost_setting == "uniform"
    assert {x.cost for row in uniform.calendars for x in row if x is not None} == {1}
    assert generate_scenario(CANON, 1, score=False).cost_setting == "varied"


def test_random_costs_and_meeting_costs_stay_in_range() -> None:
    cfg = CANON.model_copy(
        update={"errand_costs": "random", "errand_cost_level": 5, "meeting_cost_level": 3}
    )
    sc = generate_scenario(cfg, 3, score=False)
    assert {x.cost for row in sc.calendars for x in row if x is not None} <= set(range(1, 6))
    assert {m.cost for m in sc.meetings} <= {1, 2, 3}


def test_rotating_participants_and_speaker_orders() -> None:
    cfg = GeneratorConfig(num_agents=7, num_meetings=6, participants_per_meeting=3, density=0.5)
    for seed in range(10):
        sc = generate_scenario(cfg, seed, score=False)
        counts = Counter(p for m in sc.meetings for p in m.participants)
        assert set(counts.values()) <= {2, 3} and sum(counts.values()) == 18
        firsts: Counter[int] = Counter()
        for m in sc.meetings:
            assert len(m.participants) == 3 and sorted(m.speaker_order) == list(m.participants)
            first = m.speaker_order[0]
            assert firsts[first] == min(firsts[p] for p in m.participants)
            firsts[first] += 1
            assert list(m.speaker_order[1:]) == sorted(m.speaker_order[1:])


def test_fixed_all_and_random_participants() -> None:
    fixed = GeneratorConfig(
        num_agents=4,
        num_meetings=2,
        density=0.5,
        participant_mode="fixed",
        participant_lists=((0, 3), (1, 2, 3)),
    )
    sc = generate_scenario(fixed, 1)
    assert [m.participants for m in sc.meetings] == [(0, 3), (1, 2, 3)]
    everyone = generate_scenario(
        fixed.model_copy(update={"participant_mode": "all", "participant_lists": None}), 1
    )
    assert all(m.participants == (0, 1, 2, 3) for m in everyone.meetings)
    rnd = fixed.model_copy(
        update={
            "participant_mode": "random",
            "participant_lists": None,
            "participants_per_meeting": 2,
        }
    )
    assert all(len(m.participants) == 2 for m in generate_scenario(rnd, 1).meetings)


def test_unforced_witness_and_per_agent_density() -> None:
    cfg = GeneratorConfig(
        num_agents=3,
        num_slots=10,
        num_meetings=3,
        participants_per_meeting=2,
        density=(0.2, 0.5, 1.0),
        force_witness_errand=False,
        blocked_errands=(0, 1, 2),
    )
    for seed in range(10):
        sc = generate_scenario(cfg, seed)
        assert sc.densities == (0.2, 0.5, 1.0)
        assert sc.oracle is not None and sc.oracle.cost <= sc.witness.cost  # type: ignore[union-attr]
        blocked = [
            sum(isinstance(x, Errand) and x.blocked for x in cal.slots) for cal in sc.to_calendars()
        ]
        assert blocked == [0, 1, 2]


def test_scoring_attaches_oracle_greedy_and_d() -> None:
    sc = generate_scenario(CANON, 9)
    assert sc.oracle is not None and sc.greedy is not None and sc.difficulty is not None
    assert sc.witness is not None and sc.oracle.cost <= sc.witness.cost
    assert sc.greedy.cost is None or sc.greedy.cost >= sc.oracle.cost
    exact = feasible_fraction(sc.to_calendars(), sc.to_meetings())
    assert (sc.difficulty.feasible_count, sc.difficulty.total_count) == (
        exact.feasible_count,
        524160,
    )


@pytest.mark.parametrize(
    ("changes", "message"),
    [
        ({"density": 0.5}, "give exactly one of density"),
        ({"density_choices": None}, "give exactly one of density"),
        ({"density_choices": (0.5, 1.5)}, "density_choices: 1.5 is outside [0, 1]"),
        (
            {"density_choices": None, "density": (0.5, 0.5)},
            "per-agent list has 2 entries, expected 5",
        ),
        ({"blocked_errands": (1, 2)}, "blocked_errands: per-agent list has 2 entries"),
        ({"participants_per_meeting": 6}, "participants_per_meeting: 6 exceeds num_agents=5"),
        ({"participant_mode": "fixed"}, "mode 'fixed' needs one list per meeting"),
    ],
)
def test_config_errors_name_the_field(changes: dict[str, Any], message: str) -> None:
    with pytest.raises(ValidationError, match=message.replace("[", r"\[").replace("(", r"\(")):
        GeneratorConfig.model_validate({**CANON.model_dump(), **changes})


def test_impossible_blocked_count_is_reported() -> None:
    cfg = CANON.model_copy(update={"density_choices": (0.3,), "blocked_errands": 6})
    with pytest.raises(
        CalendarDataError, match=r"blocked_errands=6 for agent \d exceeds its 1 errands"
    ):
        generate_scenario(cfg, 1)


def test_label_hydration_follows_bank_and_visibility(bank_path: Path) -> None:
    bank = load_label_bank(bank_path)
    sc = generate_scenario(CANON, 5, bank=bank)
    via_config = generate_scenario(CANON.model_copy(update={"label_bank": str(bank_path)}), 5)
    assert via_config.model_copy(update={"generator": sc.generator}) == sc
    errand_ids = {x.label_id for row in sc.calendars for x in row if x is not None}
    meeting_ids = {m.label_id for m in sc.meetings}
    assert None not in errand_ids and None not in meeting_ids
    assert set(sc.labels) == errand_ids | meeting_ids
    assert all(sc.labels[i].kind == "errand" for i in errand_ids if i is not None)
    assert all(sc.labels[i].kind == "meeting" for i in meeting_ids if i is not None)
    # hydration never changes the scheduling problem
    plain = generate_scenario(CANON, 5)
    assert plain.oracle == sc.oracle and plain.difficulty == sc.difficulty
    m = sc.meetings[0]
    outsider = next(a for a in range(5) if a not in m.participants)
    texts = sc.private_texts()
    assert m.label_id is not None
    assert sc.meeting_label_for(m.meeting_id, m.participants[0]) == texts[m.label_id]
    assert sc.meeting_label_for(m.meeting_id, outsider) is None
    first_errand = next(x for x in sc.calendars[0] if x is not None)
    assert first_errand.label_id is not None
    assert texts[first_errand.label_id] in sc.render_calendar(0)


def test_tier_weights_and_reuse(bank_path: Path) -> None:
    bank = load_label_bank(bank_path)
    sc = generate_scenario(CANON, 5, score=False)
    only_sensitive = hydrate_labels(
        sc, bank, tier_weights={"public": 0, "neutral": 0, "sensitive": 1}
    )
    assert {label.tier for label in only_sensitive.labels.values()} == {"sensitive"}
    uses = Counter(x.label_id for row in only_sensitive.calendars for x in row if x is not None)
    assert max(uses.values()) - min(uses.values()) <= 1  # least-used first
    no_meetings = LabelBank(
        bank_id="errands-only", items=[i for i in bank.items if i.kind == "errand"]
    )
    with pytest.raises(CalendarDataError, match="no meeting labels"):
        hydrate_labels(sc, no_meetings)


def _suite(blocked: int, **extra: Any) -> SuiteSpec:
    cfg = GeneratorConfig(
        num_agents=3,
        num_slots=8,
        num_meetings=2,
        participants_per_meeting=2,
        density=0.75,
        blocked_errands=blocked,
    )
    return SuiteSpec(
        name="unit",
        seed=1,
        cells=(CellSpec(name="cell", config=cfg),),
        candidates_per_cell=9,
        selected_per_bucket=1,
        **extra,
    )


def test_suite_buckets_and_reports() -> None:
    suite = generate_suite(_suite(1))
    assert [s.task_id for s in suite.scenarios] == [
        "unit-cell-easy-01",
        "unit-cell-medium-01",
        "unit-cell-hard-01",
    ]
    fractions = [s.difficulty.fraction for s in suite.scenarios]  # type: ignore[union-attr]
    assert fractions == sorted(fractions, reverse=True)
    (report,) = suite.summary.cells
    assert report.candidates == 9 and report.selected == 3 and not report.degenerate
    assert generate_suite(_suite(1)) == suite


def test_degenerate_cell_is_reported_not_bucketed() -> None:
    with pytest.raises(
        CalendarDataError, match="degenerate difficulty: all 9 candidates have d = 1"
    ):
        generate_suite(_suite(0))
    suite = generate_suite(_suite(0, allow_degenerate=True))
    (report,) = suite.summary.cells
    assert report.degenerate and report.distinct_values == 1 and report.bucket_ranges == {}
    assert [s.task_id for s in suite.scenarios] == ["unit-cell-01", "unit-cell-02", "unit-cell-03"]
    assert all(s.difficulty is not None and s.difficulty.bucket is None for s in suite.scenarios)

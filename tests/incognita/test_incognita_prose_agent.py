"""A mock model agent that speaks prose only (``mock/incognita-prose``),
against mock model desks and a mock model customer, completes a social-condition card
through the runner, and the trajectory reader labels its processes in the run's own
trial table. Also the phrasebook both sides share."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from _incognita_env_support import MOCK, tasks

from confide.core.trace import MessageDelivered, read_trace
from confide.envs.incognita.conditions import AGENT, CUSTOMER
from confide.envs.incognita.outputs.trials import TRIALS_FILE, read_trials
from confide.envs.incognita.participants import phrasing
from confide.envs.incognita.tools import SERVICE_TOOLS
from confide.runner.build import build_experiment
from confide.runner.execute import run_experiment

CARD = "sd-18-cancel-exchange-and-ask"  # five fields, four desk roles, two writes, an answer
PROSE = "mock/incognita-prose"
TOOL_NAME = re.compile("|".join(SERVICE_TOOLS))


def test_every_reference_call_reads_back_from_its_sentence() -> None:
    assert set(phrasing.TEMPLATES) == set(SERVICE_TOOLS)
    assert not [t for t in phrasing.TEMPLATES.values() if TOOL_NAME.search(t)]
    calls = [call for t in tasks() for call in t.card.gold_actions]
    assert {call.name for call in calls} >= {"modify_pending_order_items",
                                             "exchange_delivered_order_items"}
    for call in calls:
        sentence = phrasing.describe(call.name, call.arguments)
        assert "{" not in sentence and not TOOL_NAME.search(sentence)
        assert phrasing.read(f"Could you {sentence}? Thanks.") == (call.name, call.arguments)
    assert phrasing.read("Could you help me with this customer's order?") is None
    assert phrasing.describe("return_delivered_order_items", {
        "order_id": "#W1", "item_ids": ["1", "1", "2"], "payment_method_id": "gift_card_9",
    }) == 'take back the items "1", "1" and "2" of the order "#W1", refunding "gift_card_9"'


def test_a_prose_agent_completes_a_social_card_and_is_read(tmp_path: Path) -> None:
    out = tmp_path / "run"
    experiment = build_experiment({
        "benchmark": "incognita", "lineups": [PROSE], "conditions": ["social"],
        "task_ids": [CARD], "roles": {"customer": MOCK, "desk": MOCK, "judge": MOCK},
        "output_dir": str(out),
    })
    summary = run_experiment(experiment, show_progress=False)
    assert summary.failed == [] and [r["success"] for r in summary.rows] == [1]
    (path,) = (out / "traces").glob("*.jsonl.gz")
    trace = read_trace(path)
    said = [e.message for e in trace.events
            if isinstance(e, MessageDelivered) and e.message.sender == AGENT]
    to_desks = [m for m in said if m.recipients[0] != CUSTOMER]
    assert len({m.recipients[0] for m in to_desks}) == 6  # it had to find the holders
    assert all(m.payload is None for m in said)
    assert not [m.text for m in said if "{" in (m.text or "") or TOOL_NAME.search(m.text or "")]
    (row,) = read_trials(out / TRIALS_FILE)
    assert (row.task, row.condition, row.success, row.failure) == (CARD, "social", True, None)
    assert row.role_identification == pytest.approx(1.0)
    assert row.holder_contacted == pytest.approx(1.0)
    assert row.information_acquisition == pytest.approx(1.0)
    assert row.execution == pytest.approx(1.0)
    assert (row.missing_customer, row.missing_service) == (0, 0)
    assert row.unanswerable_questions is not None and row.unanswerable_questions > 0

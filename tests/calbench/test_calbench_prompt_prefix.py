"""CalBench prompts keep their prefix (the CalBench paper §A.3, F.3): a model
seat's turn requests grow append-only (each starts with the previous request and the
reply it used), and a reflection check-in is the seat's thread so far plus one question,
so it starts with what the seat already sent. The check-in itself never enters a later
request (F.3: record_history=false), and the schema is never written into the text."""

from __future__ import annotations

from collections import defaultdict
from itertools import pairwise

import pytest
from test_calbench_llm_support import LLM_SPEC, RandomAgents, model_calls, registered_mock

from confide.envs.calbench.generator import hydrate_labels
from confide.envs.calbench.labels import load_label_bank
from confide.envs.calbench.scenario import Scenario
from confide.envs.calbench.suites import DATA_DIR, load_suite
from confide.runner.models import RunModels
from confide.testing import run_once

REPAIR = "I could not use that reply"


def _tiny(index: int) -> Scenario:
    bank = load_label_bank(DATA_DIR / "label_bank_v1.json")
    return hydrate_labels(load_suite("tiny")[index], bank)


@pytest.mark.parametrize(("index", "seed"), [(0, 3), (2, 5), (3, 11)])
def test_turns_grow_append_only_and_check_ins_follow_the_thread(index: int, seed: int) -> None:
    task = _tiny(index)
    with registered_mock("cal-prefix", RandomAgents(seed, 3, task.num_slots)) as model:
        capture = run_once(
            LLM_SPEC,
            task,
            f"{model},imap,{model}",
            model_factory=RunModels(),
            condition="dm",
            options={"max_turns_per_round": 3},
        )
    by_seat: dict[str | None, list[tuple[str, list[dict[str, object]]]]] = defaultdict(list)
    for call in model_calls(capture.trace):
        by_seat[call.seat].append((call.purpose, call.messages))
    assert set(by_seat) == {"agent0", "agent2"}
    for calls in by_seat.values():
        first = [
            (p, m)
            for p, m in calls  # each step's first request (repairs extend it)
            if not str(m[-1]["content"]).startswith(REPAIR)
        ]
        turns = [m for purpose, m in first if purpose == "act"]
        checks = [m for purpose, m in first if purpose == "reflection"]
        assert len(turns) >= 3 and checks
        for before, after in pairwise(turns):
            # the previous request, the reply it used, then only new turns
            assert after[: len(before)] == before
            assert after[len(before)]["role"] == "assistant"
        for check in checks:
            thread = check[:-1]
            assert any(t[: len(thread)] == thread for t in turns) or any(
                t[: len(thread) - 1] == thread[:-1] for t in turns
            )  # the thread so far (its last reply may be the round's last)
            later = [t for t in turns if len(t) > len(thread)]
            assert all(check[-1] not in t for t in later)  # never inserted (F.3)
        texts = [str(m["content"]) for _p, ms in calls for m in ms]
        assert not any('"properties"' in text for text in texts)

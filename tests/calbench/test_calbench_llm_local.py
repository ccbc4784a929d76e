"""The LLM agent end to end with the embedded `local/smollm2` model, offline: one short
mixed game (the model against IMAP, one meeting, one cheap-talk turn, no retries). The
135M model rarely plays well, which is fine: the point is that real output goes through
the prompts, grammar-constrained decoding with the bounded reply schema, parsing, the
engine and scoring without error. Slow on a busy machine, hence also marked `slow`."""

from __future__ import annotations

import pytest
from test_calbench_engine_support import errand, scenario
from test_calbench_llm_support import env_events, model_calls, run_llm_episode

from confide.envs.calbench.participants.llm_parse import bounded_reply_schema
from confide.runner.models import RunModels

pytestmark = [pytest.mark.local_model, pytest.mark.slow]


def test_smollm2_plays_a_short_mixed_game_offline() -> None:
    task = scenario([[None, errand(1), None], [errand(2), None, None]], [(1, (0, 1), (0, 1))])
    result, trace = run_llm_episode(
        task,
        "local/smollm2,imap",
        options={"max_turns_per_round": 1, "decision_retries": 0},
        models=RunModels(options={"n_threads": 2}),
    )
    assert len(result.rows) == 2 and result.final_state["resolved"].keys() == {"1"}
    calls = model_calls(trace)
    # one CHEAP_TALK turn and one DECISION, each with at most two repairs
    assert 2 <= len(calls) <= 6
    assert {(c.seat, c.purpose, c.model) for c in calls} == {("agent0", "act", "local/smollm2")}
    assert all(c.completion is not None and c.error is None for c in calls)
    assert all(c.config["response_schema"] == bounded_reply_schema() for c in calls)
    # every step either produced an envelope or is recorded as invalid
    steps = env_events(trace, "turn_end") + env_events(trace, "decide_end")
    assert len([e for e in steps if e.seat == "agent0"]) == 2
    assert len(env_events(trace, "invalid_response")) <= 2

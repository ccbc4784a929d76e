"""The native tau-bench arm (the Incognita paper, sections 3.2 and 5): tau-bench's user
simulator with the whole instruction, its stop rule, the agent holding every tool, and the
same evaluator; its place in the paper's design (864 trials) and outputs (Figures 2, 6)."""

from __future__ import annotations

import asyncio
import csv
import random
from pathlib import Path

import pytest
import yaml
from _incognita_env_support import MOCK, MOCK_ROLES, run, spec, task, tasks
from typer.testing import CliRunner

import confide.envs.incognita.env as env_module
from confide.cli.main import app
from confide.core.message import Channel, Message
from confide.core.trace import ModelCall
from confide.envs.incognita import native
from confide.envs.incognita.actions import AgentAction, AgentObservation, CustomerObservation
from confide.envs.incognita.conditions import CONDITIONS, INCOGNITA_CONDITIONS, build_condition
from confide.envs.incognita.events import (
    ConversationEnded,
    GateRelease,
    GateRequest,
    ToolExecuted,
)
from confide.envs.incognita.outputs.design import PAPER_CONDITIONS
from confide.envs.incognita.participants.native_user import ScriptedUser, user_turns
from confide.envs.incognita.scenario import replay_gold
from confide.runner import build_experiment, load_experiment, run_experiment
from confide.runner.estimate import estimate
from confide.runner.expand import expand
from confide.runner.models import RunModels
from confide.runner.preflight import declared_problems, preflight
from confide.runner.resolve import resolve_experiment
from confide.stats.design import latin_schedule
from confide.testing import check_env

REPO = Path(__file__).resolve().parents[2]
PAPER_FILE = REPO / "experiments" / "incognita_paper.yaml"
CARD = "sd-01-cancel-blanket"


def test_native_is_a_fourth_arm_where_the_agent_holds_every_tool() -> None:
    assert (*INCOGNITA_CONDITIONS, "native") == CONDITIONS
    assert spec().conditions == CONDITIONS
    arm = build_condition("native", random.Random(0))
    direct = build_condition("direct", random.Random(0))
    assert arm.desks == () and arm.recipients == ("USER",)
    assert arm.owners == direct.owners and set(arm.owners.values()) == {"AGENT"}


def test_reference_solves_a_known_task_by_hand() -> None:
    """sd-01: cancel pending order #W4979192, reason "no longer needed". The user opens
    with the card's opening line, answers the two fields from its whole instruction (no
    gate), confirms the one write, and ends the conversation with the stop token after
    the agent's closing message; the final state is the gold state."""
    the_task = task(CARD)
    played = run(the_task, "native")
    log = played.postbox_log
    assert (log[0].sender, log[0].text) == ("USER", the_task.card.opening_line)
    user = [m.text for m in log if m.sender == "USER"]
    assert user == [
        the_task.card.opening_line,
        "It's order #W4979192.",
        "I don't need it anymore, a friend gave me a blanket just like it.",
        "Yes, please go ahead.",
        native.STOP,
    ]
    assert played.env("gate_request") == played.env("gate_release") == []
    ended = played.env("conversation_ended")
    assert len(ended) == 1 and isinstance(ended[0], ConversationEnded)
    assert ended[0].data.by == "user_stop"
    assert played.env("final") == []  # the user ended it before the agent's FINAL
    executed = [e for e in played.trace.events if isinstance(e, ToolExecuted)]
    assert [(e.data.tool, e.data.ok) for e in executed] == [("cancel_pending_order", True)]
    gold = replay_gold(the_task.world, the_task.card)
    assert gold.orders["#W4979192"].status == "cancelled"
    assert gold.orders["#W4979192"].cancel_reason == "no longer needed"
    state = played.result.final_state
    assert state["final_hash"] == state["gold_hash"] == gold.state_hash()
    row = played.row
    assert (row["success"], row["db_pass"], row["ended"], row["turns"]) == (1, 1, "user_stop", 5)
    assert row["gate_releases"] == 0


def test_gate_events_exist_in_direct_but_not_native() -> None:
    direct = run(task(CARD), "direct")
    assert len(direct.env("gate_release")) == 2
    assert not [e for e in run(task(CARD), "native").trace.events
                if isinstance(e, GateRequest | GateRelease)]


def test_an_executed_transfer_ends_a_native_episode(monkeypatch: pytest.MonkeyPatch) -> None:
    """tau-bench ends a retail episode when transfer_to_human_agents is called."""

    class Transfers:
        name = "AGENT"

        async def act(self, observation: AgentObservation) -> AgentAction:
            return AgentAction(kind="tool", tool=native.TRANSFER,
                               arguments={"summary": "the customer wants a person"})

    monkeypatch.setattr(env_module, "make_agent", lambda *args, **kwargs: Transfers())
    played = run(task(CARD), "native")
    assert [e.data.by for e in played.env("conversation_ended")] == ["transfer"]
    assert played.row["ended"] == "transfer" and played.row["turns"] == 1
    assert played.row["success"] == 0


def test_scripted_user_stops_only_once_its_writes_are_confirmed() -> None:
    card = task(CARD).card
    user = ScriptedUser("USER", card)

    def observe(*history: Message) -> CustomerObservation:
        return CustomerObservation(
            name="USER", opening_line=card.opening_line, memory=native.instruction(card),
            requests=[], history=list(history),
            gate=native.answer(None, card, "payload"),
        )

    opening = asyncio.run(user.act(observe()))
    assert opening.text == card.opening_line
    bye = Message(id=2, sender="AGENT", recipients=("USER",), channel=Channel.dm(), text="Goodbye!",
                  payload={"type": "inform"})
    assert asyncio.run(user.act(observe(bye))).text == "Thank you."  # nothing done yet
    write = card.writes[0]
    approved = Message(id=1, sender="USER", recipients=("AGENT",), channel=Channel.dm(), text="Yes",
                       payload={"type": "customer_reply", "approved": True,
                                "tool": write.name, "arguments": write.arguments})
    assert asyncio.run(user.act(observe(approved, bye))).text == native.STOP


def test_model_user_prompt_holds_the_whole_instruction_and_tau_bench_opening() -> None:
    card = task(CARD).card
    observation = CustomerObservation(
        name="USER", opening_line=card.opening_line, memory=native.instruction(card),
        requests=["Is there a fee?"], history=[], gate=native.answer(None, card, "payload"),
    )
    turns = user_turns(observation)
    assert [t.role for t in turns] == ["system", "user"]
    assert turns[1].content == native.GREETING
    system = turns[0].content
    for value in [card.opening_line, "#W4979192", "a friend gave me a blanket",
                  "Is there a fee?", native.STOP]:
        assert value in system


def test_mock_lineup_runs_native_with_a_model_user() -> None:
    played = run(task(CARD), "native", "mock/incognita-skilled",
                 roles={"user": MOCK, "judge": MOCK})
    assert played.row["ended"] == "user_stop" and played.row["success"] == 1
    calls = [e for e in played.trace.events if isinstance(e, ModelCall) and e.seat == "USER"]
    assert calls and all(c.part == "user" for c in calls)
    assert played.row["customer_calls"] == len(calls)


def test_a_model_agent_must_bind_the_user_in_a_native_run() -> None:
    data = {"benchmark": "incognita", "lineups": ["mock/incognita-prose"],
            "conditions": ["native"], "roles": {"judge": MOCK}}
    problems = declared_problems(spec(), build_experiment(data, check=False))
    assert any("--role user=" in p for p in problems), problems
    assert not any("--role customer=" in p or "--role desk=" in p for p in problems)


def test_a_run_naming_no_condition_plays_the_three_access_structures() -> None:
    """The native anchor is no condition of the paper's comparison (section 3.2): it runs
    only when named, so a default run, and its preflight, are the three conditions'."""
    default = build_experiment({"benchmark": "incognita", "task_ids": [CARD]}, check=False)
    assert [p.condition for p in expand(spec(), default)] == list(INCOGNITA_CONDITIONS)
    named = build_experiment({"benchmark": "incognita", "task_ids": [CARD],
                              "conditions": ["native"]}, check=False)
    assert [p.condition for p in expand(spec(), named)] == ["native"]
    model = {"benchmark": "incognita", "lineups": ["mock/incognita-prose"],
             "roles": {"customer": MOCK, "desk": MOCK, "judge": MOCK}}
    assert declared_problems(spec(), build_experiment(model, check=False)) == []


def test_benchmarks_listing_names_the_native_arm_and_user_role() -> None:
    result = CliRunner().invoke(app, ["benchmarks", "incognita"])
    assert result.exit_code == 0, result.output
    assert ("conditions:    direct, indirect, social, native "
            "(default: direct, indirect, social)") in result.output
    assert "user " in result.output and "tau-bench" in result.output


NATIVE_ROLES = {**MOCK_ROLES, "user": MOCK}
MOVING = "sd-16-moving-house"  # many customer fields and writes


@pytest.mark.parametrize(("lineup", "roles"), [("reference", {}), (MOCK, NATIVE_ROLES)],
                         ids=["reference", "mock"])
def test_the_agent_sees_only_its_own_state(lineup: str, roles: dict[str, str]) -> None:
    """The user holds the whole instruction; the agent learns a customer fact only from
    a message the user sent it, sees only its own exchange with the user and its own tool
    calls, and no desk exists; the user sees only that exchange, never a tool result."""
    the_task = task(MOVING)
    played = run(the_task, "native", lineup, roles=roles, observe=True)
    values = [f.value for f in the_task.card.customer_fields]
    agent_seen = played.observations["AGENT"]
    assert agent_seen and set(played.observations) == {"AGENT", "USER"}
    for observation in agent_seen:
        assert isinstance(observation, AgentObservation)
        assert tuple(observation.recipients) == ("USER",)
        told = " ".join(item.message.text or "" for item in observation.history
                        if item.message is not None and item.message.sender == "USER")
        text = observation.model_dump_json()
        assert [v for v in values if v in text] == [v for v in values if v in told]
        for item in observation.history:
            if item.message is not None:
                assert {item.message.sender, *item.message.recipients} == {"AGENT", "USER"}
            else:
                assert item.tool is not None and item.tool.proposer == "AGENT"
    assert any(v not in agent_seen[0].model_dump_json() for v in values)
    for observation in played.observations["USER"]:
        assert isinstance(observation, CustomerObservation)
        assert [m.field for m in observation.memory] == [f.token for f in
                                                          the_task.card.customer_fields]
        for message in observation.history:
            assert {message.sender, *message.recipients} == {"AGENT", "USER"}
        assert "tool_result" not in observation.model_dump_json()
    for event in played.env():
        if event.name.startswith("tool_"):
            assert event.visible_to == ["AGENT"]
    user_prompts = [c for c in played.trace.events
                    if isinstance(c, ModelCall) and c.seat == "USER"]
    agent_prompts = [c for c in played.trace.events
                     if isinstance(c, ModelCall) and c.seat == "AGENT"]
    assert bool(user_prompts) == bool(agent_prompts) == (lineup == MOCK)
    for call in agent_prompts:  # the user's instruction never reaches the agent's model
        assert not any("Instruction:" in m["content"] or native.STOP in m["content"]
                       for m in call.messages)


def test_native_conformance_and_determinism_with_model_parties() -> None:
    """The conformance checks (determinism of two runs from one seed, trace round trip,
    message routing) hold for the native arm with every party a model."""
    capture = check_env(spec(), task("sd-13-longer-knife-gift-card"), "mock/incognita-skilled",
                        seed=3, condition="native", model_factory=RunModels(),
                        roles=NATIVE_ROLES)
    assert capture.result is not None
    assert capture.result.rows[0]["ended"] in ("user_stop", "final")


def test_a_seed_fixes_the_native_episode() -> None:
    first = run(task(MOVING), "native", MOCK, roles=NATIVE_ROLES, seed=11)
    again = run(task(MOVING), "native", MOCK, roles=NATIVE_ROLES, seed=11)
    assert [(m.sender, m.text) for m in first.postbox_log] == [
        (m.sender, m.text) for m in again.postbox_log]
    assert first.row == again.row


def test_paper_plan_seeds_pair_the_four_arms_and_follow_the_latin_square() -> None:
    """Each (task, model, repetition) worker plays the four arms on one seed (a paired
    design), the seeds are a function of the experiment file only, and the arms run in
    the order of the worker's Latin-square row."""
    experiment = load_experiment(PAPER_FILE, check=False)
    plans = expand(spec(), experiment)
    again = expand(spec(), load_experiment(PAPER_FILE, check=False))
    assert [(p.episode_id, p.seed) for p in plans] == [(p.episode_id, p.seed) for p in again]
    by_worker: dict[tuple[str, str, int], list[tuple[str | None, int]]] = {}
    for plan in plans:
        key = (plan.task.id, plan.lineup_text, plan.repetition)
        by_worker.setdefault(key, []).append((plan.condition, plan.seed))
    assert len(by_worker) == 216
    assert all(len({seed for _, seed in arms}) == 1 for arms in by_worker.values())
    assert len({arms[0][1] for arms in by_worker.values()}) > 1
    workers = latin_schedule([t.id for t in spec().load_tasks(None, None)],
                             experiment.lineups or [], 3, PAPER_CONDITIONS)
    for worker in workers:
        arms = by_worker[(worker.task_id, worker.model, worker.repetition)]
        assert sorted(c or "" for c, _ in arms) == sorted(worker.order)


def test_paper_file_plans_864_trials_in_four_arms() -> None:
    experiment = load_experiment(PAPER_FILE, check=False)
    plans = expand(spec(), experiment)
    assert len(plans) == 18 * 4 * 4 * 3 == 864
    arms = {c: sum(p.condition == c for p in plans) for c in experiment.conditions or ()}
    assert arms == {"native": 216, "direct": 216, "indirect": 216, "social": 216}


def test_dry_run_reports_864(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test-not-a-real-key-0000000000")
    result = CliRunner().invoke(app, ["run", str(PAPER_FILE), "--dry-run", "--no-progress"])
    assert result.exit_code == 0, result.output
    assert "864" in result.output


@pytest.fixture(scope="module")
def smoke_run(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("native") / "run"
    data = yaml.safe_load(PAPER_FILE.read_text())
    data.pop("cache_dir", None)
    data.update(lineups=["mock/incognita-skilled"], limit=2, repetitions=1, output_dir=str(out),
                roles={role: MOCK for role in ("customer", "desk", "user", "judge")})
    summary = run_experiment(build_experiment(data), show_progress=False)
    assert summary.failed == [] and summary.episodes == 2 * 4
    return out


def _csv(path: Path) -> list[dict[str, str]]:
    with path.open(newline="", encoding="utf-8") as handle:
        return list(csv.DictReader(handle))


def test_smoke_run_draws_figure_2_with_the_native_arm_and_figure_6(smoke_run: Path) -> None:
    success = _csv(smoke_run / "figure2_success.csv")
    assert [r["condition"] for r in success] == ["native", "direct", "indirect", "social"]
    contrasts = [r["contrast"] for r in _csv(smoke_run / "figure2_paired_differences.csv")]
    assert contrasts == ["native - direct", "direct - indirect", "indirect - social"]
    for name in ("figure2_success.png", "figure6_cost.png"):
        assert (smoke_run / "figures" / name).stat().st_size > 10_000
    report = (smoke_run / "report.html").read_text(encoding="utf-8")
    assert 'alt="The cost of reaching through others"' in report
    assert "6.3 (Figure 6)" in report and "6.1 (Figure 2; the native anchor: Figure 5)" in report
    assert "figure3_outcomes.csv" in report
    outcomes = _csv(smoke_run / "figure3_outcomes.csv")
    assert "native" not in {r["condition"] for r in outcomes}  # no failure types there


def test_figure_6_costs_are_the_results_spend_columns(smoke_run: Path) -> None:
    """Figure 6's two scopes are results.csv's seat and episode spend, per trial."""
    results = {r["episode_id"]: r for r in _csv(smoke_run / "results.csv")}
    trials = _csv(smoke_run / "incognita_trials.csv")
    assert len(trials) == len(results) == 8
    for trial in trials:
        row = results[trial["episode_id"]]
        assert float(trial["cost_agent"]) == float(row["seat_cost_usd"])
        assert float(trial["cost_total"]) == float(row["episode_cost_usd"])
        assert int(trial["agent_actions"]) == int(row["turns"])
    costs = _csv(smoke_run / "figure6_cost.csv")
    assert [(r["condition"], r["n_trials"]) for r in costs] == [
        ("native", "2"), ("direct", "2"), ("indirect", "2"), ("social", "2")]
    native_rows = [t for t in trials if t["condition"] == "native"]
    mean_actions = sum(int(t["agent_actions"]) for t in native_rows) / 2
    assert float(costs[0]["agent_actions"]) == mean_actions


def test_figure_6_is_priced_for_a_priced_model(tmp_path: Path) -> None:
    """With every call priced (a local OpenAI-compatible server and a price table), the
    dry run's estimate of the native user's calls holds the run's, and each Figure 6 cell
    is a dollar amount, the mean of its trials' results.csv spend, for the
    native arm as for direct, and the agent's calls are a part of all calls."""
    from tests.runner.test_spend_outputs import CachingServer, _price_table

    model = "openai-api/fake-priced"
    server = CachingServer()
    try:
        experiment = build_experiment({
            "benchmark": "incognita", "task_ids": [CARD], "conditions": ["native", "direct"],
            "lineups": [model], "roles": dict.fromkeys(("customer", "user", "judge"), model),
            "options": {"max_turns": 2, "desk_steps": 1, "max_attempts": 1},
            "price_table": str(_price_table(tmp_path / "prices.json")),
            "model_options": {"openai-api": {"base_url": server.base_url}},
            "output_dir": str(tmp_path / "run"),
        })
        plan = preflight(experiment)  # the dry run's estimate, before the run
        estimates = estimate(plan, resolve_experiment(plan.spec, experiment)) or []
        summary = run_experiment(experiment, show_progress=False)
    finally:
        server.close()
    assert summary.failed == []
    results = {r["condition"]: r for r in _csv(tmp_path / "run" / "results.csv")}
    (user,) = [e for e in estimates if e.part == "role user"]  # the native episode only
    low, _, high = user.calls
    assert low == 1 and low <= int(results["native"]["role_user_calls"]) <= high
    costs = {r["condition"]: r for r in _csv(tmp_path / "run" / "figure6_cost.csv")}
    assert set(costs) == {"native", "direct"}
    for arm, cell in costs.items():
        agent, total = float(cell["cost_agent"]), float(cell["cost_total"])
        assert agent == pytest.approx(float(results[arm]["seat_cost_usd"]))
        assert total == pytest.approx(float(results[arm]["episode_cost_usd"]))
        assert 0 < agent <= total
    # the native user writes the opening message: its call is priced too
    assert float(costs["native"]["cost_agent"]) < float(costs["native"]["cost_total"])
    assert int(results["native"]["role_user_calls"]) > 0
    assert int(results["direct"]["role_user_calls"]) == 0


def test_published_rows_carry_the_native_anchor_and_figure_6() -> None:
    """Section 6.1: "The native anchor reaches 0.85" (Appendix Figure 5); section 6.3:
    26.2 actions and $1.061 per social episode against 14.4-13.2 and $0.252-$0.467
    centralized, and 33.2 actions at 0.130 success for the weakest model under social."""
    from confide.core.published import published_rows

    rows = published_rows("incognita")
    native_rows = [r for r in rows if r.setting.get("condition") == "native"]
    assert [(r.table, r.section, r.model, r.metrics) for r in native_rows] == [
        ("Figure 5", "6.1", "mean of the four models", {"success": 0.85})]
    cost = {(r.model, r.setting["condition"]): r.metrics for r in rows if r.table == "Figure 6"}
    assert cost == {
        ("mean of the four models", "direct"): {"turns": 14.4, "cost_usd": 0.252},
        ("mean of the four models", "indirect"): {"turns": 13.2, "cost_usd": 0.467},
        ("mean of the four models", "social"): {"turns": 26.2, "cost_usd": 1.061},
        ("openai/gpt-5.2-2025-12-11", "social"): {"turns": 33.2, "success": 0.130},
    }


def test_reference_solves_every_shipped_card_in_the_native_arm() -> None:
    """Under tau-bench's user, with no gate, the reference still reaches every gold state,
    and the user, not the agent's FINAL, ends each conversation once its goal is met."""
    for the_task in tasks():
        played = run(the_task, "native")
        assert (played.row["success"], played.row["ended"]) == (1, "user_stop"), the_task.id

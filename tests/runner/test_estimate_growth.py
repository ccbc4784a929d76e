"""The dry run's expected values, by hand: a growing thread's prompt growth and
CalBench's expected calls per seat and judge."""

from __future__ import annotations

from confide.core.benchmark import expand_lineup, parse_lineup
from confide.envs.calbench.actions import seat_of
from confide.envs.calbench.calls import call_estimates
from confide.envs.calbench.options import EnvOptions
from confide.registry import get_benchmark
from confide.runner.estimate import Prompts


def test_a_growing_thread_grows_by_its_mean_step_from_its_first_prompt() -> None:
    prompts = Prompts()
    for size in (100, 150, 260):
        prompts.add(size, size)
    assert (prompts.growth, prompts.steepest, prompts.base) == (80, 110, 100)


def test_independent_prompts_do_not_grow() -> None:
    prompts = Prompts()
    for size in (300, 200):
        prompts.add(size, size)
    assert (prompts.growth, prompts.base) == (0, 300)


def test_calbench_expects_each_ask_once_and_talk_by_condition() -> None:
    spec = get_benchmark("calbench")
    task = spec.load_tasks("canonical", None)[0]
    binding = expand_lineup(parse_lineup("mock/json"), spec.seats(task))
    roles = {"judge": "mock/json"}
    options = EnvOptions()
    budget = task.max_turns_per_round + 1  # every sweep of the budget, then the decision
    rounds = len(task.meetings)
    for condition in ("dm", "all-agent-groupchat"):
        ranges = call_estimates(task, binding, roles, options, condition)
        for agent in range(task.num_agents):
            spoken = rounds if condition == "all-agent-groupchat" else sum(
                agent in m.participants for m in task.meetings)
            assert ranges[seat_of(agent)].expected == spoken * budget + rounds  # + reflection
        reached = (rounds * task.num_agents if condition == "all-agent-groupchat"
                   else sum(len(m.participants) for m in task.meetings))
        assert ranges["judge"].expected == reached

"""Every registered benchmark passes the conformance checker with its default lineup on
the first task of its default suite (no leaks, same seed same trace)."""

import pytest

from confide.registry import benchmark_ids, get_benchmark
from confide.testing import ConformanceError, check_env, run_once


@pytest.mark.parametrize("benchmark_id", benchmark_ids())
def test_registered_benchmark_conforms(benchmark_id: str) -> None:
    spec = get_benchmark(benchmark_id)
    task = spec.load_tasks(spec.default_suite, None)[0]
    for condition in spec.conditions:
        capture = check_env(spec, task, seed=11, condition=condition)
        assert capture.observations, "the environment never called ctx.seen()"


def test_checker_catches_a_leaky_observation() -> None:
    """Mutation check: an environment that shows a seat someone else's message fails."""
    from confide.core.benchmark import BenchmarkSpec
    from confide.envs.demo import SPEC, env

    async def leaky(ctx):  # type: ignore[no-untyped-def]
        result = await env.run_episode(ctx)
        seat = ctx.task.seats[0]
        other = [e for e in ctx.trace.events if getattr(e, "kind", "") == "message"]
        foreign = [e.message for e in other if not e.message.visible_to(seat)]
        ctx.seen(seat, env.DemoObservation(seat=seat, private_note="", round=0,
                                           next_seat=seat, new_messages=foreign[:1]))
        return result

    spec = BenchmarkSpec(**{**SPEC.__dict__, "run_episode": leaky})
    with pytest.raises(ConformanceError, match="leak"):
        check_env(spec, spec.load_tasks(None, None)[0])


def test_checker_catches_a_private_marker_leak() -> None:
    from confide.core.benchmark import BenchmarkSpec
    from confide.envs.demo import SPEC

    task = SPEC.load_tasks(None, None)[0]
    markers = {task.seats[0]: [f"secret-of-{task.seats[1]}-{task.id}"]}
    spec = BenchmarkSpec(**{**SPEC.__dict__, "private_markers": lambda t: markers})
    # seat 1's own note is seat 0's "private" marker here, so seat 1 appears to leak it
    with pytest.raises(ConformanceError, match="private"):
        check_env(spec, task)
    assert run_once(SPEC, task, "scripted").result is not None

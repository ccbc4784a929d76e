"""Every registered benchmark passes the conformance checker with its default lineup on
every shipped task of every suite (no leaks, same seed same trace); the checker itself
catches structural and content leaks, whatever characters a marker holds."""

from typing import Any

import pytest

from confide.core.benchmark import BenchmarkSpec, EpisodeContext, EpisodeResult
from confide.core.message import Channel
from confide.registry import benchmark_ids, get_benchmark
from confide.testing import ConformanceError, check_env, run_once


class _Silent:
    """A participant that never sends anything."""

    async def act(self, observation: Any) -> Any:
        from confide.envs.demo.env import DemoAction

        return DemoAction(text="", valid=False)


SUITES = [(b, suite) for b in benchmark_ids() for suite in get_benchmark(b).suites]


@pytest.mark.parametrize(("benchmark_id", "suite"), SUITES)
def test_every_shipped_task_conforms(benchmark_id: str, suite: str) -> None:
    """Each task once, conditions rotated over the tasks so every condition is covered."""
    spec = get_benchmark(benchmark_id)
    tasks = spec.load_tasks(suite, None)
    assert tasks
    covered = set()
    for index, task in enumerate(tasks):
        condition = spec.conditions[index % len(spec.conditions)]
        covered.add(condition)
        capture = check_env(spec, task, seed=11, condition=condition)
        assert capture.observations, "the environment never called ctx.ask()"
    assert covered == set(spec.conditions) or len(tasks) < len(spec.conditions)


def test_checker_catches_a_leaky_observation() -> None:
    """Mutation check: an environment that shows a seat someone else's message fails."""
    from confide.core.benchmark import BenchmarkSpec
    from confide.envs.demo import SPEC, env

    async def leaky(ctx):  # type: ignore[no-untyped-def]
        result = await env.run_episode(ctx)
        seat = ctx.task.seats[0]
        other = [e for e in ctx.trace.events if getattr(e, "kind", "") == "message"]
        foreign = [e.message for e in other if not e.message.visible_to(seat)]
        await ctx.ask(seat, env.DemoObservation(seat=seat, private_note="", round=0,
                                                next_seat=seat, new_messages=foreign[:1]),
                      _Silent())
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


ODD_MARKERS = ['say "yes"', "C:\\plans", "line one\nline two", "Petra Novák, Győr, 4 °C"]


def _relay_showing(note: str, *, told: str | None = None) -> BenchmarkSpec:
    """An episode of two demo seats in which seat 0 is shown `note`; when `told` is
    given, seat 1 first sends it to seat 0 in a message."""
    from confide.core.postbox import Postbox
    from confide.envs.demo import SPEC, env

    async def episode(ctx: EpisodeContext) -> EpisodeResult:
        first, second = ctx.task.seats[:2]
        box = Postbox(ctx.task.seats, on_deliver=ctx.trace.message)
        if told is not None:
            box.post(second, Channel.dm(), to=[first], text=told)
        await ctx.ask(first, env.DemoObservation(
            seat=first, private_note=note, round=0, next_seat=second,
            new_messages=box.inbox(first)), _Silent())
        return EpisodeResult(rows=[])

    def markers(task: Any) -> dict[str, list[str]]:
        return {task.seats[1]: ODD_MARKERS}

    return BenchmarkSpec(**{**SPEC.__dict__, "run_episode": episode, "private_markers": markers})


@pytest.mark.parametrize("marker", ODD_MARKERS)
def test_checker_finds_markers_with_quotes_backslashes_newlines_and_non_ascii(
    marker: str,
) -> None:
    spec = _relay_showing(f"note: {marker}.")
    with pytest.raises(ConformanceError, match="private"):
        check_env(spec, spec.load_tasks(None, None)[0])


@pytest.mark.parametrize("marker", ODD_MARKERS)
def test_checker_accepts_a_marker_a_message_delivered(marker: str) -> None:
    """No false leak: the marker reached seat 0 in a message before it showed it."""
    spec = _relay_showing(f"note: {marker}.", told=f"fyi {marker}")
    check_env(spec, spec.load_tasks(None, None)[0])


def test_checker_catches_an_undeclared_event() -> None:
    """An environment event whose class the spec does not declare cannot be read back."""
    from confide.core.trace import EnvEvent
    from confide.envs.demo import SPEC, env

    async def stray(ctx: EpisodeContext) -> EpisodeResult:
        ctx.trace.emit(EnvEvent(name="stray", round=0))
        return await env.run_episode(ctx)

    spec = BenchmarkSpec(**{**SPEC.__dict__, "run_episode": stray})
    with pytest.raises(ConformanceError, match="'stray'"):
        check_env(spec, spec.load_tasks(None, None)[0])

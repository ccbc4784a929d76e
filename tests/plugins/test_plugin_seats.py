"""`py:module:factory` seat specs, in process: a user's agent fills a seat of every
builtin benchmark and of the example plugin's `rendezvous`, and each way a spec can be
wrong gives one error naming the spec."""

from __future__ import annotations

import importlib
import textwrap
from pathlib import Path
from typing import Any

import pytest

from confide.core.benchmark import BenchmarkSpec, SeatSpec
from confide.core.custom import CustomParticipantError, resolve_participant
from confide.registry import get_benchmark
from confide.testing.conformance import check_env, run_once

EXAMPLE_SRC = Path(__file__).resolve().parents[2] / "examples/confide-example-plugin/src"

AGENTS = '''
from confide.envs.calbench.participants import ImapParticipant
from confide.envs.incognita.participants.reference import ReferenceAgent as IncognitaReference
from confide.envs.sotopia_tom.participants.reference import ReferenceAgent as SotopiaReference


def imap_clone(seat, ctx):
    return ImapParticipant(seat)


def sotopia_clone(seat, ctx):
    return SotopiaReference(seat)


def incognita_clone(seat, ctx):
    return IncognitaReference(seat, ctx.task.card)


def open_days(seat, ctx):
    from confide_example.rendezvous import Open

    return Open(seat)


def no_act(seat, ctx):
    return object()


def sync_act(seat, ctx):
    class Sync:
        name = seat

        def act(self, observation):
            return None

    return Sync()


def broken(seat, ctx):
    raise RuntimeError("no GPU here")


NOT_CALLABLE = 3
'''


@pytest.fixture
def agents(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The module `user_agents` (above) and the example package are importable."""
    (tmp_path / "user_agents.py").write_text(textwrap.dedent(AGENTS), encoding="utf-8")
    monkeypatch.syspath_prepend(str(tmp_path))
    monkeypatch.syspath_prepend(str(EXAMPLE_SRC))


def _without(rows: list[dict[str, Any]], *keys: str) -> list[dict[str, Any]]:
    return [{k: v for k, v in row.items() if k not in keys} for row in rows]


@pytest.mark.usefixtures("agents")
@pytest.mark.parametrize(
    ("benchmark", "reference", "clone", "labels"),
    [
        ("calbench", "imap", "imap_clone", ("participant", "is_reference", "excess_vps")),
        ("sotopia-tom", "reference", "sotopia_clone", ("participant", "model")),
        ("incognita", "reference", "incognita_clone", ("participant",)),
    ],
)
def test_a_py_seat_playing_a_reference_protocol_scores_like_it(
    benchmark: str, reference: str, clone: str, labels: tuple[str, ...]
) -> None:
    """The custom seat is built by the user's factory (its label says so), sees the same
    observations and so plays the same episode as the builtin participant it wraps."""
    spec = get_benchmark(benchmark)
    task = spec.load_tasks(spec.suites[-1] if benchmark == "calbench" else None, None)[0]
    condition = spec.conditions[0]
    builtin = run_once(spec, task, reference, condition=condition)
    custom = check_env(spec, task, f"py:user_agents:{clone}", condition=condition)
    assert builtin.result is not None and custom.result is not None
    assert custom.result.metrics == builtin.result.metrics
    assert _without(custom.result.rows, *labels) == _without(builtin.result.rows, *labels)
    assert {row["participant"] for row in custom.result.rows} == {f"py:user_agents:{clone}"}
    if benchmark == "calbench":  # a user's agent is rated like a model, not as a reference
        assert {(r["is_reference"], r["excess_vps"]) for r in custom.result.rows} == {
            (False, None)
        }
        assert {r["is_reference"] for r in builtin.result.rows} == {True}


@pytest.mark.usefixtures("agents")
def test_the_example_agent_relays_in_the_demo_benchmark() -> None:
    spec = get_benchmark("demo")
    task = spec.load_tasks(None, None)[0]  # ring-3x2: ada -> ben -> cy -> ada, two rounds
    capture = check_env(spec, task, "py:confide_example.agents:echo_relay")
    texts = [e.message.text for e in capture.trace.events if e.kind == "message"]
    assert texts == [
        "ada heard 0 message(s) from nobody in round 0",
        "ben heard 1 message(s) from ada in round 0",
        "cy heard 1 message(s) from ben in round 0",
        "ada heard 1 message(s) from cy in round 1",
        "ben heard 1 message(s) from ada in round 1",
        "cy heard 1 message(s) from ben in round 1",
    ]
    assert capture.result is not None
    assert [(r["seat"], r["messages"], r["invalid"]) for r in capture.result.rows] == [
        ("ada", 2, 0), ("ben", 2, 0), ("cy", 2, 0)
    ]


@pytest.mark.usefixtures("agents")
@pytest.mark.parametrize(
    ("lineup", "task_id", "metrics", "disclosure"),
    [
        # ada offers 1, ben 0, ada 3 (0 is busy for her), ben takes 3: four turns
        ("earliest", "pair", {"agreed": True, "success": True, "day": 3, "turns": 4},
         [2 / 3, 1.0]),
        ("open", "pair", {"agreed": True, "success": True, "day": 3, "turns": 2}, [1.0, 1.0]),
        # everyone takes ada's first offer, day 2
        ("earliest", "trio", {"agreed": True, "success": True, "day": 2, "turns": 3},
         [1 / 3, 1 / 3, 1 / 3]),
        ("open", "trio", {"agreed": True, "success": True, "day": 2, "turns": 3},
         [1.0, 1.0, 1.0]),
        # no common day: two rounds of two offers each, everything revealed for nothing
        ("earliest", "apart", {"agreed": False, "success": False, "day": None, "turns": 4},
         [1.0, 1.0]),
        ("open", "apart", {"agreed": False, "success": False, "day": None, "turns": 4},
         [1.0, 1.0]),
        # a custom seat next to a reference: ada offers 1, ben (custom, open) 0 and 3, ada 3
        ("earliest,py:user_agents:open_days", "pair",
         {"agreed": True, "success": True, "day": 3, "turns": 3}, [2 / 3, 1.0]),
    ],
)
def test_rendezvous_is_conformant_with_hand_computed_results(
    lineup: str, task_id: str, metrics: dict[str, Any], disclosure: list[float]
) -> None:
    spec: BenchmarkSpec = importlib.import_module("confide_example.rendezvous").SPEC
    task = next(t for t in spec.load_tasks(None, None) if t.id == task_id)
    capture = check_env(spec, task, lineup)
    assert capture.result is not None
    assert capture.result.metrics == metrics
    assert [row["disclosure"] for row in capture.result.rows] == pytest.approx(disclosure)


@pytest.mark.usefixtures("agents")
@pytest.mark.parametrize(
    ("spec", "message"),
    [
        ("py:user_agents", "must have the form py:package.module:factory"),
        ("py:no_such_module_here:make", "cannot import 'no_such_module_here'"),
        ("py:user_agents:missing", "module 'user_agents' has no attribute 'missing'"),
        ("py:user_agents:NOT_CALLABLE", "names no participant factory (got int)"),
        ("py:user_agents:broken", "failed to build ada: RuntimeError: no GPU here"),
        ("py:user_agents:no_act", "needs a `name` string and an `async def act"),
        ("py:user_agents:sync_act", "needs a `name` string and an `async def act"),
        ("py:confide_example.agents:echo_relay", "serves demo, not sotopia-tom"),
    ],
)
def test_a_wrong_py_spec_names_itself(spec: str, message: str) -> None:
    benchmark = get_benchmark("sotopia-tom" if "echo_relay" in spec else "demo")
    task = benchmark.load_tasks(None, None)[0]
    with pytest.raises(CustomParticipantError, match="seat spec") as caught:
        run_once(benchmark, task, spec)
    assert spec in str(caught.value) and message in str(caught.value)


@pytest.mark.usefixtures("agents")
def test_resolve_participant_is_what_preflight_calls() -> None:
    """None for what only the benchmark can judge; the factory for a custom spec; an
    error, before any episode, for a custom spec that cannot fill the seat."""
    echo_relay = importlib.import_module("confide_example.agents").echo_relay
    assert resolve_participant(SeatSpec("openai/gpt-5-mini:tom-belief"), "demo") is None
    assert resolve_participant(SeatSpec("no-such-participant"), "demo") is None
    assert resolve_participant("py:confide_example.agents:echo_relay", "demo") is echo_relay
    with pytest.raises(CustomParticipantError, match="serves demo, not calbench"):
        resolve_participant("py:confide_example.agents:echo_relay", "calbench")

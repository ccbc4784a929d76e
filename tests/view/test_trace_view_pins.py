"""`trace show` pinned by behaviour (bench/mutation.py): the exact text a reader sees
for each kind of event (written by hand), long replies and payloads cut at 300
characters and no earlier (messages never), a seat's view with its prompts, an
unfinished episode, and how a typed name is matched to the trace's spelling."""

from __future__ import annotations

import pytest

from confide.core import Channel, EpisodeEnd, EpisodeStart
from confide.core.message import Message
from confide.core.trace import EnvEvent, MessageDelivered, ModelCall, ScoringStart, Trace
from confide.core.trace_view import render_trace, resolve_participant
from confide.errors import ConfideError


def _read(text: str) -> str:
    """An equal string that is not the same object, as a name typed on a command line."""
    copy = "".join(list(text))
    assert copy == text and copy is not text
    return copy


def _message(
    sender: str, to: tuple[str, ...], channel: Channel, **fields: object
) -> MessageDelivered:
    return MessageDelivered(message=Message(id=0, sender=sender, recipients=to, channel=channel,
                                            **fields))  # type: ignore[arg-type]  # fmt: skip


def _trace(*, footer: bool = True, condition: str | None = "social") -> Trace:
    events = [
        _message("Ann", (), Channel.broadcast(), round=1, turn=2, payload={"b": 1, "a": "x"}),
        _message("Ann", ("Bob",), Channel.dm(), text="y" * 300),
        _message("Bob", ("Ann",), Channel.dm(), text="z" * 301),
        EnvEvent(name="deal", round=3, seat="Bob", visible_to=["Ann"]),
        EnvEvent(name="tick"),
        ModelCall(
            seat="Bob",
            model="mock/x",
            messages=[{"role": "user", "content": "hi"}],
            completion={"text": "a\nb"},
        ),
        ModelCall(seat="Ann", model="mock/y", messages=[], error="f" * 301),
        ModelCall(seat="Ann", model="mock/y", messages=[], completion={"text": "w" * 300}),
    ]
    header = EpisodeStart(episode_id="ep", benchmark="demo", scenario_id="s", seed=1,
                          lineup=["a", "b"], condition=condition)  # fmt: skip
    end = EpisodeEnd(status="error", error="boom", metrics={"x": 1}) if footer else None
    return Trace(path="t.jsonl", header=header, events=events, footer=end)


HEAD = ["episode ep  benchmark=demo  scenario=s  seed=1  condition=social", "lineup: a, b"]
YS, ZS = "  r0.t0 Ann -> Bob (dm): " + "y" * 300, "  r0.t0 Bob -> Ann (dm): " + "z" * 301


def test_the_whole_trace_reads_line_by_line() -> None:
    assert render_trace(_trace()).split("\n") == [
        *HEAD,
        '  r1.t2 Ann -> - (broadcast): {"a": "x", "b": 1}',
        YS,
        ZS,
        "  [r3 deal] Bob: {}",
        "  [tick] {}",
        "  <model mock/x for Bob (act)> a b",
        "  <model mock/y for Ann (act)> " + "f" * 297 + "...",
        "  <model mock/y for Ann (act)> " + "w" * 300,
        "end: status=error error=boom",
        'metrics: {"x": 1}',
    ]


def test_a_seats_view_with_its_prompts_hides_the_rest_and_the_metrics() -> None:
    assert render_trace(_trace(), _read("Bob"), show_prompts=True).split("\n") == [
        *HEAD,
        "view of: Bob",
        YS,
        ZS,
        "  <model mock/x for Bob (act)> a b",
        "      user: hi",
        "end: status=error error=boom",
    ]


def test_an_unfinished_episode_says_so() -> None:
    lines = render_trace(_trace(footer=False, condition=None)).split("\n")
    assert lines[0] == "episode ep  benchmark=demo  scenario=s  seed=1"
    assert lines[-1] == "(incomplete: no episode_end)"


def test_a_typed_name_matches_one_spelling_or_is_refused() -> None:
    trace = _trace()
    assert resolve_participant(trace, " bob ") == "Bob"
    assert resolve_participant(trace, "ann") == "Ann"
    twins = _trace()
    twins.events.append(_message("BOB", ("Ann",), Channel.dm(), text="hi"))
    with pytest.raises(ConfideError, match="valid names: 'Ann', 'Bob', 'BOB'"):
        resolve_participant(twins, "bob")


def test_a_seat_that_only_calls_a_model_is_a_participant_and_scoring_is_marked() -> None:
    trace = _trace()
    trace.events += [
        ScoringStart(roles={"judge": "mock/j"}),
        ModelCall(seat=None, model="mock/j", purpose="judge", messages=[]),
        ModelCall(seat="Cy", model="mock/z", messages=[]),
    ]
    assert resolve_participant(trace, "cy") == "Cy"
    with pytest.raises(ConfideError, match=r"valid names: 'Ann', 'Bob', 'Cy'$"):
        resolve_participant(trace, "judge")
    assert '  [scoring] roles: {"judge": "mock/j"}' in render_trace(trace).split("\n")

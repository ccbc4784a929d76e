"""`trusted` builds exactly the instance validation builds, without validating."""

from __future__ import annotations

import pytest
from pydantic import BaseModel, Field, PrivateAttr

from confide.core.message import Channel, Message
from confide.core.trace import MessageDelivered
from confide.core.trusted import builder, trusted
from confide.envs.calbench import events as ev
from confide.envs.calbench.actions import DmCall, Envelope, ScheduleCall, tool_dict


def _same(validated: BaseModel, built: BaseModel) -> None:
    assert type(built) is type(validated)
    assert built == validated
    assert list(built.__dict__) == list(validated.__dict__)  # tool_dict reads this order
    assert built.model_fields_set == validated.model_fields_set
    assert built.model_dump_json() == validated.model_dump_json()
    assert built.model_dump_json(exclude_unset=True) == validated.model_dump_json(
        exclude_unset=True
    )


@pytest.mark.parametrize(
    "cls, values",
    [
        (DmCall, {"to": 2, "content": None, "payload": {"type": "costs", "to": [2]}}),
        (ScheduleCall, {"meeting_id": 3, "slot": 7}),
        (Envelope, {"actions": []}),
        (Envelope, {}),
        (ev.TurnStartData, {"turn": 1, "phase": "CHEAP_TALK", "inbox": [4, 5]}),
        (ev.BatchFailedData, {"phase": "DECISION", "attempts": 4}),
        (ev.ResolutionData, {
            "meeting_id": 1, "resolved": False, "slots": {"0": 3, "1": None},
            "reason": "x", "turns": 2, "consistency_violations": [1],
        }),
    ],
)
def test_same_instance_as_validation(cls: type[BaseModel], values: dict[str, object]) -> None:
    _same(cls(**values), trusted(cls, **values))


def test_nested_event_and_message() -> None:
    channel = Channel.group("meeting:M1", ["agent1", "agent0"])
    fields = {"id": 3, "sender": "agent0", "recipients": ("agent1",), "channel": channel,
              "payload": {"a": [1]}, "round": 2, "turn": 1}
    message = trusted(Message, **fields)
    _same(Message(**fields), message)
    _same(MessageDelivered(message=Message(**fields)), trusted(MessageDelivered, message=message))
    data = {"turn": 0, "phase": "CHEAP_TALK", "inbox": []}
    _same(
        ev.TurnStart(seat="agent0", round=1, visible_to=["agent0"], data=ev.TurnStartData(**data)),
        trusted(ev.TurnStart, seat="agent0", round=1, visible_to=["agent0"],
                data=trusted(ev.TurnStartData, **data)),
    )


def test_tool_dict_and_fresh_defaults() -> None:
    call = trusted(DmCall, to=1, payload={"k": 1})
    assert tool_dict(call) == {"type": "dm", "to": 1, "payload": {"k": 1}}
    first, second = trusted(Envelope), trusted(Envelope)
    assert first.actions == [] and first.actions is not second.actions


def test_missing_or_unknown_fields_are_errors() -> None:
    with pytest.raises(TypeError, match=r"missing field\(s\) \['slot'\]"):
        trusted(ScheduleCall, meeting_id=1)
    with pytest.raises(TypeError, match=r"unknown field\(s\) \['slott'\]"):
        trusted(ScheduleCall, meeting_id=1, slot=2, slott=3)


def test_refuses_models_it_cannot_build() -> None:
    class Private(BaseModel):
        x: int = 0
        _cache: int = PrivateAttr(default=0)

    class Extra(BaseModel, extra="allow"):
        x: int = Field(default=0)

    for cls in (Private, Extra):
        with pytest.raises(TypeError, match="cannot build"):
            trusted(cls, x=1)


def test_field_names_that_shadow_the_generated_code() -> None:
    class Shadow(BaseModel):
        model: int
        given: str = "g"
        set: list[int] = Field(default_factory=list)

    _same(Shadow(model=1, set=[2]), trusted(Shadow, model=1, set=[2]))
    _same(Shadow(model=1), trusted(Shadow, model=1))


@pytest.mark.parametrize(
    "cls, values",
    [
        (DmCall, {"to": 2, "content": None, "payload": {"type": "costs", "to": [2]}}),
        (DmCall, {"to": 2}),
        (Envelope, {"thinking": "t", "actions": []}),
        (ev.TurnStart, {"seat": "agent0", "round": 1, "visible_to": ["agent0"],
                        "data": ev.TurnStartData(turn=0, phase="CHEAP_TALK", inbox=[])}),
        (ev.Resolution, {"round": 2, "data": ev.ResolutionData(
            meeting_id=1, resolved=True, slots={}, reason=None, turns=1,
            consistency_violations=[],
        )}),
    ],
)
def test_a_builder_for_given_fields_builds_the_same_instance(
    cls: type[BaseModel], values: dict[str, object]
) -> None:
    build = builder(cls, *values)
    _same(cls(**values), build(**values))
    assert builder(cls, *values) is build  # generated once per class and field set
    if cls is Envelope:  # defaults left out are fresh per instance
        assert builder(Envelope, "thinking")(thinking="").actions is not (
            builder(Envelope, "thinking")(thinking="").actions
        )


def test_a_builder_for_given_fields_takes_exactly_those() -> None:
    build = builder(ScheduleCall, "meeting_id", "slot")
    with pytest.raises(TypeError):
        build(meeting_id=1)  # a given field is required
    with pytest.raises(TypeError):
        build(meeting_id=1, slot=2, type="schedule")  # a field not given is not taken
    with pytest.raises(TypeError, match=r"missing required field\(s\) \['slot'\]"):
        builder(ScheduleCall, "meeting_id")
    with pytest.raises(TypeError, match=r"unknown field\(s\) \['slott'\]"):
        builder(ScheduleCall, "meeting_id", "slot", "slott")
    with pytest.raises(TypeError, match="named twice"):
        builder(ScheduleCall, "meeting_id", "slot", "slot")

"""`minimal_instance`: the mock/json model's answers validate against the schemas agents
actually use (pydantic models with refs, unions, constraints, enums, literals)."""

from __future__ import annotations

import math
from datetime import date, datetime
from enum import StrEnum
from typing import Annotated, Any, Literal

import pytest
from hypothesis import given
from hypothesis import strategies as st
from pydantic import BaseModel, Field

from confide.llm import ModelSpecError
from confide.llm.providers.json_instance import minimal_instance


class Color(StrEnum):
    RED = "red"
    BLUE = "blue"


class Slot(BaseModel):
    day: Annotated[int, Field(ge=1, le=5)]
    hour: Annotated[int, Field(gt=8, lt=18)]


class Proposal(BaseModel):
    kind: Literal["propose"]
    slots: Annotated[list[Slot], Field(min_length=2)]
    color: Color
    score: Annotated[float, Field(gt=0.5, le=1.0)]
    step: Annotated[int, Field(ge=7, multiple_of=5)]
    code: Annotated[str, Field(min_length=3, max_length=8)]
    when: date
    stamp: datetime
    pair: tuple[int, str]
    tags: dict[str, int]
    child: Slot | None


class Tree(BaseModel):
    label: str
    children: list[Tree] = []


@pytest.mark.parametrize("model", [Slot, Proposal, Tree])
def test_instances_validate(model: type[BaseModel]) -> None:
    model.model_validate(minimal_instance(model.model_json_schema()))


def test_hand_computed_values() -> None:
    value = minimal_instance(Proposal.model_json_schema())
    assert value["kind"] == "propose" and value["color"] == "red"
    assert value["slots"] == [{"day": 1, "hour": 9}, {"day": 1, "hour": 9}]
    assert value["score"] == 1.0 and value["step"] == 10 and value["code"] == "aaa"
    assert (
        value["pair"] == [0, ""]
        and value["tags"] == {}
        and value["child"]
        == {
            "day": 1,
            "hour": 9,
        }
    )
    assert minimal_instance({}) is None
    assert minimal_instance({"type": ["null", "string"]}) is None
    assert minimal_instance({"allOf": [{"$ref": "#/$defs/A"}], "$defs": {"A": {"const": 1}}}) == 1


def test_bad_schemas_raise_clear_errors() -> None:
    with pytest.raises(ModelSpecError, match="does not resolve"):
        minimal_instance({"$ref": "#/$defs/Missing"})
    with pytest.raises(ModelSpecError, match="only local refs"):
        minimal_instance({"$ref": "https://example.com/s.json"})
    with pytest.raises(ModelSpecError, match="no integer satisfies"):
        minimal_instance({"type": "integer", "minimum": 3, "maximum": 2})


bound = st.one_of(st.none(), st.integers(-50, 50))


@given(lo=bound, hi=bound, lo_open=st.booleans(), hi_open=st.booleans(), integer=st.booleans())
def test_numbers_respect_bounds(
    lo: int | None, hi: int | None, lo_open: bool, hi_open: bool, integer: bool
) -> None:
    schema: dict[str, Any] = {"type": "integer" if integer else "number"}
    if lo is not None:
        schema["exclusiveMinimum" if lo_open else "minimum"] = lo
    if hi is not None:
        schema["exclusiveMaximum" if hi_open else "maximum"] = hi
    low = -math.inf if lo is None else lo + (1 if lo_open and integer else 0)
    high = math.inf if hi is None else hi - (1 if hi_open and integer else 0)
    if integer:
        satisfiable = low <= high
    else:
        satisfiable = low < high or (low == high and not lo_open and not hi_open)
    if not satisfiable:
        with pytest.raises(ModelSpecError):
            minimal_instance(schema)
        return
    value = minimal_instance(schema)
    assert isinstance(value, int if integer else float)
    assert lo is None or (value > lo if lo_open else value >= lo)
    assert hi is None or (value < hi if hi_open else value <= hi)

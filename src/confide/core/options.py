"""Environment options: every benchmark declares a pydantic model of its options
(`envs/<id>/options.py`), and this one function validates raw `--option` / `options:`
values against it, for the preflight and for the episode alike."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, TypeVar

from pydantic import BaseModel, ConfigDict, ValidationError

from confide.errors import ConfideError

OptionsT = TypeVar("OptionsT", bound=BaseModel)


class OptionsError(ConfideError):
    """An environment option is unknown or has a bad value."""

    def __init__(self, problems: list[str]) -> None:
        super().__init__("\n".join(problems))
        self.problems = problems


class NoOptions(BaseModel):
    """The options of a benchmark that takes none."""

    model_config = ConfigDict(extra="forbid", frozen=True)


def option_problems(model: type[BaseModel], raw: Mapping[str, Any], benchmark: str) -> list[str]:
    """One line per bad option, naming it, its value and the options there are."""
    try:
        model.model_validate(dict(raw))
    except ValidationError as exc:
        return _describe(model, exc, benchmark)
    return []


def parse_options(model: type[OptionsT], raw: Mapping[str, Any], benchmark: str) -> OptionsT:
    """`raw` validated as `model`; `OptionsError` lists every bad option."""
    try:
        return model.model_validate(dict(raw))
    except ValidationError as exc:
        raise OptionsError(_describe(model, exc, benchmark)) from None


def _describe(model: type[BaseModel], exc: ValidationError, benchmark: str) -> list[str]:
    known = ", ".join(model.model_fields) or "none"
    problems = []
    for err in exc.errors():
        name = ".".join(str(p) for p in err["loc"]) or "<options>"
        what = "unknown option" if err["type"] == "extra_forbidden" else err["msg"]
        value = err.get("input")
        problems.append(f"{benchmark} option {name}={value!r}: {what} (options: {known})")
    return problems

"""What `confide benchmarks ID` and `confide run ID --help` say about one benchmark: its
suites, conditions, participants, its own commands, roles and options (type, default,
what it does and the paper section its description cites), read from the spec and its
declaration."""

from __future__ import annotations

import re
import typing
from typing import Any

from pydantic import BaseModel
from pydantic_core import PydanticUndefined

from confide.core.benchmark import BenchmarkSpec
from confide.registry import declaration

_REF = r"(?:[A-Z]\.)?\d+(?:\.\d+)?"
_SECTION = re.compile(rf"\s*\(({_REF}(?:(?:[-–]|, ){_REF})*)\)")
"""A paper section cited at the end of a description: (A.4), (F.3), (A.3, A.5), (4.2)."""


def describe(spec: BenchmarkSpec) -> list[str]:
    """Plain lines (no markup), for a terminal or a pipe."""
    suites = ", ".join(f"{s} (default)" if s == spec.default_suite else s for s in spec.suites)
    conditions = ", ".join(c for c in spec.conditions if c) or "none (one setting)"
    if spec.default_conditions:
        conditions += f" (default: {', '.join(c for c in spec.default_conditions if c)})"
    lines = [
        f"{spec.id}: {spec.description}",
        "",
        f"suites:        {suites}",
        f"conditions:    {conditions}",
        f"participants:  {', '.join(spec.participants)} (reference); or a model "
        "provider/model[:strategy]",
        f"default lineup {spec.default_lineup}",
    ]
    commands = declaration(spec.id).commands
    if commands:
        lines += ["", "commands (its own):"]
        lines += [f"  confide {c.name:<14} {' '.join(c.help.split())}" for c in commands]
    if spec.roles:
        lines += ["", "roles (--role NAME=SPEC):"]
        lines += [f"  {r.name:<22} default {r.default or 'unbound'}; {r.description}"
                  for r in spec.roles]
    rows = options(spec.options)
    lines += ["", "options (--option KEY=VALUE):" if rows else "options: none"]
    for name, kind, default, text, section in rows:
        where = f" [paper §{section}]" if section else ""
        lines.append(f"  {name:<22} {kind:<18} default {default}. {text}{where}")
    return lines


def options(model: type[BaseModel]) -> list[tuple[str, str, str, str, str]]:
    """(name, type, default, description, paper section) per option field."""
    rows = []
    for name, field in model.model_fields.items():
        if field.default is not PydanticUndefined:
            default = _show(field.default)
        elif field.default_factory is not None:
            default = _show(field.default_factory())  # type: ignore[call-arg]
        else:
            default = "required"
        extra = field.json_schema_extra if isinstance(field.json_schema_extra, dict) else {}
        if extra.get("task_default"):
            default += " (a task's own budget wins when it sets one)"
        text = field.description or ""
        found = _SECTION.search(text)
        text = _SECTION.sub("", text).strip()
        rows.append((name, _type(field.annotation), default, text,
                     found.group(1) if found else ""))
    return rows


def _type(annotation: Any) -> str:
    text = str(annotation) if typing.get_origin(annotation) else getattr(
        annotation, "__name__", str(annotation))
    return text.replace("typing.", "")


def _show(value: Any) -> str:
    if value is None:
        return "none"
    if isinstance(value, bool):
        return str(value).lower()
    return str(value) if value != {} else "{}"

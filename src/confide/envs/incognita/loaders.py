"""Read and write worlds, and read tau-bench / tau2-bench retail data given as a path.

Incognita transforms the tasks of an existing benchmark (the Incognita paper, section 3.1), so
the source data must load as it is published:

- tau-bench retail: ``users.json``, ``orders.json`` and ``products.json`` in one
  directory, users keyed by id without a ``user_id`` field (it is filled from the key);
- tau2-bench retail: ``db.json`` holding the three maps, users carrying ``user_id``;
- tau2-bench ``tasks.json``: a list of tasks whose ``evaluation_criteria.actions`` are the
  gold actions (``name`` + ``arguments``) and ``nl_assertions`` the output assertions
  (kept only when the task's ``reward_basis`` counts ``NL_ASSERTION``: the criterion for
  success is the source's, section 3.1);
- tau-bench tasks converted to JSON: a list of ``{user_id, instruction, actions:
  [{name, kwargs}], outputs}``.

Our own world files are JSON with a ``schema_version``. Every problem is raised as
`WorldDataError` naming the file, the field path and the offending value.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any, TypeVar

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from confide import atomic
from confide.envs.incognita.tools import ToolCall
from confide.envs.incognita.world import SCHEMA_VERSION, World, WorldDataError
from confide.untrusted import InputError, load_json

_M = TypeVar("_M", bound=BaseModel)
_TAU_BENCH_FILES = ("users.json", "orders.json", "products.json")


class SourceTask(BaseModel):
    """A task of the source benchmark: who the customer is, what they want, gold actions."""

    model_config = ConfigDict(extra="forbid")

    task_id: str
    user_id: str | None = Field(
        default=None, description="The customer's user id when the source states it."
    )
    instruction: str = Field(description="What the source tells its simulated customer.")
    actions: list[ToolCall]
    output_assertions: list[str] = Field(default_factory=list)


def read_json(path: Path) -> Any:
    """Parse a JSON file; `WorldDataError` with file, line and column on failure."""
    try:
        return load_json(path, "data file")
    except InputError as exc:
        raise WorldDataError(str(exc)) from None


def validate(model: type[_M], data: Any, source: str) -> _M:
    """`model.model_validate(data)`, with errors reported against `source`."""
    try:
        return model.model_validate(data)
    except ValidationError as exc:
        lines = []
        for error in exc.errors()[:5]:
            where = ".".join(str(part) for part in error["loc"]) or "(top level)"
            shown = repr(error["input"])
            shown = shown if len(shown) <= 80 else shown[:77] + "..."
            lines.append(f"{source}: {where}: {error['msg']} (got {shown})")
        more = exc.error_count() - len(lines)
        suffix = f"\n... and {more} more error(s)" if more > 0 else ""
        raise WorldDataError("\n".join(lines) + suffix) from exc


def _require_object(data: Any, source: str) -> dict[str, Any]:
    if not isinstance(data, dict):
        raise WorldDataError(f"{source}: expected a JSON object, got {type(data).__name__}")
    return data


def _with_user_ids(users: Any, source: str) -> dict[str, Any]:
    users = _require_object(users, source)
    filled = {}
    for user_id, record in users.items():
        record = _require_object(record, f"{source}: {user_id}")
        filled[user_id] = {"user_id": user_id, **record}
    return filled


def load_world(path: str | Path) -> World:
    """Load a world from our world file, a tau2 ``db.json``, or a tau-bench data directory."""
    path = Path(path)
    if path.is_dir():
        if (path / "db.json").is_file():
            return load_world(path / "db.json")
        missing = [name for name in _TAU_BENCH_FILES if not (path / name).is_file()]
        if missing:
            raise WorldDataError(
                f"{path}: not a retail data directory (missing {', '.join(missing)})"
            )
        maps = {name.removesuffix(".json"): read_json(path / name) for name in _TAU_BENCH_FILES}
        maps["users"] = _with_user_ids(maps["users"], str(path / "users.json"))
        return validate(World, maps, str(path))
    data = _require_object(read_json(path), str(path))
    if "users" in data:
        data = {**data, "users": _with_user_ids(data["users"], f"{path}: users")}
    version = data.get("schema_version", SCHEMA_VERSION)
    if version != SCHEMA_VERSION:
        raise WorldDataError(
            f"{path}: schema_version is {version!r}; this version of confide reads {SCHEMA_VERSION}"
        )
    return validate(World, data, str(path))


def save_world(world: World, path: str | Path) -> None:
    """Write `world` as JSON with sorted keys (one key per line, diff-friendly)."""
    text = json.dumps(world.model_dump(mode="json"), sort_keys=True, indent=1)
    atomic.write_text(path, text + "\n")


def _tau2_instruction(scenario: dict[str, Any]) -> str:
    instructions = scenario.get("instructions")
    if isinstance(instructions, str):
        return instructions
    instructions = instructions or {}
    parts = [
        str(instructions[key])
        for key in ("reason_for_call", "known_info", "unknown_info", "task_instructions")
        if instructions.get(key)
    ]
    return "\n".join(parts)


class _Tau2Action(BaseModel):
    name: str
    arguments: dict[str, Any]


class _Tau2Criteria(BaseModel):
    actions: list[_Tau2Action] | None = None
    nl_assertions: list[str] | None = None
    reward_basis: list[str] | None = None

    @property
    def operative_assertions(self) -> list[str]:
        """The NL assertions, when the task's reward counts them (absent basis: it does)."""
        counted = self.reward_basis is None or "NL_ASSERTION" in self.reward_basis
        return list(self.nl_assertions or []) if counted else []


class _Tau2Task(BaseModel):
    id: str
    user_scenario: dict[str, Any]
    evaluation_criteria: _Tau2Criteria | None = None


def _read_tasks(path: Path, model: type[_M]) -> list[_M]:
    """The JSON list of tasks in `path`, each validated as `model` (errors name its index)."""
    data = read_json(path)
    if not isinstance(data, list):
        raise WorldDataError(f"{path}: expected a list of tasks, got {type(data).__name__}")
    return [validate(model, raw, f"{path}: task[{index}]") for index, raw in enumerate(data)]


def load_tau2_tasks(path: str | Path) -> list[SourceTask]:
    """Load a tau2-bench retail ``tasks.json`` (gold actions and NL assertions kept)."""
    path = Path(path)
    tasks = []
    for task in _read_tasks(path, _Tau2Task):
        criteria = task.evaluation_criteria or _Tau2Criteria()
        tasks.append(
            SourceTask(
                task_id=task.id,
                instruction=_tau2_instruction(task.user_scenario),
                actions=[
                    validate(ToolCall, action.model_dump(), f"{path}: task {task.id}")
                    for action in criteria.actions or []
                ],
                output_assertions=criteria.operative_assertions,
            )
        )
    return tasks


class _TauBenchTask(BaseModel):
    user_id: str
    instruction: str
    actions: list[dict[str, Any]]
    outputs: list[str] = Field(default_factory=list)


def load_tau_bench_tasks(path: str | Path) -> list[SourceTask]:
    """Load tau-bench retail tasks converted to JSON (ids are the list positions)."""
    path = Path(path)
    tasks = []
    for index, task in enumerate(_read_tasks(path, _TauBenchTask)):
        tasks.append(
            SourceTask(
                task_id=str(index),
                user_id=task.user_id,
                instruction=task.instruction,
                actions=[
                    validate(
                        ToolCall,
                        {"name": action.get("name"), "arguments": action.get("kwargs", {})},
                        f"{path}: task[{index}]",
                    )
                    for action in task.actions
                ],
                output_assertions=task.outputs,
            )
        )
    return tasks

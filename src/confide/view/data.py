"""The viewer's data: a run index and one document per episode, as plain JSON values.

Who saw what is computed here from the trace's delivery records with the same rule as
`confide trace show --as` (core.trace_view.visible): each event carries `seen`, the
participants it reached, and the page only filters on it. Leak events and desk panels
come from the benchmark's viewer hooks (`BenchmarkSpec.view`, core/viewing.py).
"""

from __future__ import annotations

import csv
import json
from collections.abc import Mapping
from dataclasses import dataclass
from functools import cached_property
from pathlib import Path
from typing import Any

from confide.core.benchmark import BenchmarkSpec
from confide.core.demo import demo_line, experiment_demo
from confide.core.spend import without_seat_spend
from confide.core.trace import (
    EnvEvent,
    MessageDelivered,
    ModelCall,
    Trace,
    find_trace,
    read_trace,
)
from confide.core.trace_view import participants, visible
from confide.core.viewing import LeakMarker, RunLeaks
from confide.errors import ConfideError
from confide.registry import get_benchmark
from confide.untrusted import load_yaml
from confide.view.episodes import read_rows
from confide.view.perspective import exposures


class NotFound(ConfideError):
    """A site path names no page, run or episode; the message holds only the path's own
    parts (safe to answer with)."""


@dataclass
class RunData:
    """One run directory, read lazily."""

    path: Path
    index: int

    @cached_property
    def experiment(self) -> dict[str, Any]:
        path = self.path / "experiment.yaml"
        data = load_yaml(path, "experiment file") if path.is_file() else None
        return data if isinstance(data, dict) else {}

    @cached_property
    def benchmark(self) -> str:
        return str(self.experiment.get("benchmark", ""))

    @cached_property
    def rows(self) -> list[dict[str, str]]:
        if not (self.path / "results.csv").is_file():
            raise ConfideError(f"{self.path} is not a run directory (no results.csv)")
        return read_rows(self.path / "results.csv")

    @cached_property
    def spec(self) -> BenchmarkSpec | None:
        """The run's benchmark; None when it is not installed here (a plugin's run)."""
        try:
            return get_benchmark(self.benchmark)
        except ConfideError:
            return None

    @cached_property
    def leaks(self) -> RunLeaks:
        """The run's leaks, as its benchmark reads them (`ViewHooks.leaks`)."""
        hooks = self.spec.view if self.spec is not None else None
        return hooks.leaks(self.path) if hooks is not None and hooks.leaks else _NoLeaks()

    def trace_path(self, episode_id: str) -> Path:
        """The episode's trace file; only ids listed in results.csv are served, and only
        from a regular file, not a symlink, that lies inside the run directory."""
        if episode_id not in {r.get("episode_id") for r in self.rows}:
            raise NotFound(f"no episode {episode_id!r} in the run's results.csv")
        path = find_trace(self.path / "traces", episode_id)
        if path.is_symlink() or not path.is_file() or not path.resolve().is_relative_to(
            self.path.resolve()
        ):
            raise NotFound(f"the trace of {episode_id!r} is not a regular file inside the "
                           "run directory")
        return path

    def summary(self) -> dict[str, Any]:
        """The run's headline table (summary.csv, its spend columns left to the model
        usage panel) and its episode rows."""
        table: dict[str, Any] = {"columns": [], "rows": []}
        if (self.path / "summary.csv").is_file():
            with (self.path / "summary.csv").open(newline="", encoding="utf-8") as handle:
                grid = without_seat_spend(list(csv.reader(handle)))
            table = {"columns": grid[0] if grid else [], "rows": grid[1:]}
        rows = self.episode_rows()
        names = list(dict.fromkeys(k for row in rows for k in row))
        exp = self.experiment
        return {
            "index": self.index,
            "name": self.path.name,
            "benchmark": self.benchmark,
            "experiment": (self.path / "experiment.yaml").read_text(encoding="utf-8")
            if (self.path / "experiment.yaml").is_file() else "",
            "suite": exp.get("suite") or exp.get("tasks") or "",
            "lineups": sorted({r.get("lineup", "") for r in self.rows}),
            "conditions": sorted({r.get("condition", "") for r in self.rows}),
            "headline": table,
            "demo": demo_line(demo) if (demo := experiment_demo(exp)) else "",
            # one list per row under shared column names: a third of the size of one
            # object per row, which matters for a 1,080-episode run's index
            "episodes": {"columns": names, "rows": [[r.get(k, "") for k in names] for r in rows]},
        }

    def episode_rows(self) -> list[dict[str, str]]:
        """results.csv's rows, each with `leak_events`: the episode's leak count (belief
        updates for CalBench, CPV violations for Sotopia-ToM, gate releases for
        Incognita; the benchmark's `RunLeaks.count`)."""
        return [{**row, "leak_events": str(self.leaks.count(row))} for row in self.rows]

    @cached_property
    def tasks(self) -> dict[str, Any]:
        """Task id -> task, loaded from where the run found them; empty when they cannot
        be loaded (moved or deleted files, a plugin's benchmark)."""
        spec = self.spec
        if spec is None:
            return {}
        try:
            tasks = spec.load_tasks(self.experiment.get("suite"), self.experiment.get("tasks"))
        except (ConfideError, OSError):
            return {}
        return {task.id: task for task in tasks}

    @cached_property
    def private_state(self) -> dict[str, dict[str, list[str]]]:
        """Task id -> seat -> its private strings (the benchmark's `private_markers`)."""
        markers = self.spec.private_markers if self.spec is not None else None
        if markers is None:
            return {}
        return {task_id: markers(task) for task_id, task in self.tasks.items()}


INLINE_DATA = 600
"""An env event's data longer than this (as JSON) waits in the episode's details file."""


def episode_json(run: RunData, episode_id: str) -> dict[str, Any]:
    """One episode for the Episode page: events with `seen`, markers, private state and
    the benchmark's story; model-call prompts and completions and long env data are left
    to `episode_details`, loaded when the reader opens one (the largest CalBench episodes
    have thousands of events)."""
    trace = read_trace(run.trace_path(episode_id))
    names = participants(trace)
    events = [_event(i, e, names) for i, e in enumerate(trace.events)]
    footer = trace.footer
    private = run.private_state.get(trace.header.scenario_id, {})
    hooks = run.spec.view if run.spec is not None else None
    desks = hooks.desk_panels(trace, names) if hooks is not None and hooks.desk_panels else {}
    task = run.tasks.get(trace.header.scenario_id)
    story = hooks.story(trace, task) if hooks is not None and hooks.story else {}
    received = exposures(trace, names, private)
    return {
        "run": run.index,
        "id": trace.header.episode_id,
        # seeds exceed 2**53: as text, or JavaScript would round them
        "header": {**trace.header.model_dump(mode="json"), "seed": str(trace.header.seed)},
        "participants": names,
        "events": events,
        "markers": [m.as_json() for m in run.leaks.markers(trace, task)],
        "private": {n: {"items": private.get(n, []), "state": _latest_state(trace, n),
                        "desk": desks.get(n), "received": received[n]}
                    for n in names},
        "story": {"sections": story.get("sections", []), "sentences": story.get("sentences", {}),
                  "quiet": sorted(hooks.quiet) if hooks is not None else []},
        "footer": footer.model_dump(mode="json") if footer is not None else None,
    }


def episode_details(run: RunData, episode_id: str) -> dict[str, Any]:
    """The bulky parts of an episode's events, by trace index: each model call's prompt,
    completion and configuration, and the long env data `episode_json` left out."""
    trace = read_trace(run.trace_path(episode_id))
    details: dict[str, Any] = {}
    for i, event in enumerate(trace.events):
        if isinstance(event, ModelCall):
            details[str(i)] = {"messages": event.messages, "config": event.config,
                               "completion": event.completion}
        elif isinstance(event, EnvEvent) and not _inline(event.fields()):
            details[str(i)] = {"data": event.fields()}
    return {"run": run.index, "id": trace.header.episode_id, "events": details}


def _inline(data: Mapping[str, Any]) -> bool:
    return len(json.dumps(data, default=str)) <= INLINE_DATA


def _event(i: int, event: Any, names: list[str]) -> dict[str, Any]:
    base: dict[str, Any] = {"i": i, "kind": event.kind,
                            "seen": [n for n in names if visible(event, n)]}
    if isinstance(event, MessageDelivered):
        m = event.message
        return {**base, "id": m.id, "round": m.round, "turn": m.turn, "sender": m.sender,
                "recipients": list(m.recipients), "channel": m.channel.kind,
                "group": m.channel.name, "text": m.text, "payload": m.payload}
    if isinstance(event, EnvEvent):
        data = event.fields()
        inline = _inline(data)
        return {**base, "name": event.name, "seat": event.seat, "round": event.round,
                "data": data if inline else None, "lazy": not inline and bool(data),
                "visible_to": event.visible_to}
    if isinstance(event, ModelCall):
        usage = (event.completion or {}).get("usage") if isinstance(event.completion, dict) \
            else None
        return {**base, "seat": event.seat, "purpose": event.purpose, "model": event.model,
                "usage": usage, "error": event.error, "latency_s": event.latency_s,
                "cached": event.cached}
    return base


def _latest_state(trace: Trace, name: str) -> dict[str, Any]:
    """The last `calendar` (or other state text) an environment showed only to `name`."""
    state: dict[str, Any] = {}
    for event in trace.events:
        if isinstance(event, EnvEvent) and event.visible_to == [name]:
            state.update(event.shown_state())
    return state


class _NoLeaks:
    """The leaks of a benchmark that declares none (or is not installed): none."""

    def count(self, row: Mapping[str, str]) -> int:
        return 0

    def markers(self, trace: Trace, task: Any = None) -> list[LeakMarker]:
        return []

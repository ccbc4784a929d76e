"""The relay environment behind the `demo` benchmark (see the package docstring)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from confide.core.benchmark import (
    CallBound,
    EpisodeContext,
    EpisodeResult,
    SeatSpec,
    expand_lineup,
)
from confide.core.message import Channel
from confide.core.postbox import Postbox
from confide.core.seeding import py_rng
from confide.core.tables import group_by
from confide.envs.demo import events as ev
from confide.envs.demo.actions import DemoAction, DemoObservation
from confide.envs.demo.participants import make_participant
from confide.errors import ConfideError
from confide.untrusted import parse_jsonl, read_text


class DemoTask(BaseModel):
    """A ring of `seats` playing `rounds` rounds."""

    model_config = ConfigDict(frozen=True)

    id: str
    seats: tuple[str, ...] = Field(min_length=2)
    rounds: int = Field(ge=1)


DEFAULT_SUITE = (
    DemoTask(id="ring-3x2", seats=("ada", "ben", "cy"), rounds=2),
    DemoTask(id="ring-4x3", seats=("ada", "ben", "cy", "dee"), rounds=3),
    DemoTask(id="ring-2x4", seats=("ada", "ben"), rounds=4),
)


def load_tasks(suite: str | None, path: str | None) -> list[DemoTask]:
    """The built-in suite, or tasks from a JSONL file (one DemoTask per line)."""
    if path is None:
        if suite not in (None, "default"):
            raise ConfideError(f"demo has no suite {suite!r}; available: default")
        return list(DEFAULT_SUITE)
    tasks = []
    for number, raw in parse_jsonl(read_text(path, "task file"), path):
        try:
            tasks.append(DemoTask.model_validate(raw))
        except ValidationError as exc:
            raise ConfideError(f"{path}:{number}: invalid demo task: {exc}") from None
    return tasks


def seats(task: DemoTask) -> Sequence[str]:
    return task.seats


async def run_episode(ctx: EpisodeContext) -> EpisodeResult:
    """Play the relay: each round, each seat acts once, in ring order."""
    task: DemoTask = ctx.task
    binding = expand_lineup(ctx.lineup, task.seats)
    players = {
        seat: make_participant(seat, spec, ctx, py_rng(ctx.seed, seat))
        for seat, spec in binding.items()
    }
    postbox = Postbox(task.seats, on_deliver=ctx.trace.message)
    cursor = dict.fromkeys(task.seats, 0)
    invalid = dict.fromkeys(task.seats, 0)
    for rnd in range(task.rounds):
        ctx.trace.emit(ev.RoundStart(round=rnd, visible_to=list(task.seats)))
        for index, seat in enumerate(task.seats):
            new = postbox.inbox(seat, since=cursor[seat])
            cursor[seat] = len(postbox.seen_by(seat))
            nxt = task.seats[(index + 1) % len(task.seats)]
            observation = DemoObservation(
                seat=seat,
                private_note=f"secret-of-{seat}-{task.id}",
                round=rnd,
                next_seat=nxt,
                new_messages=new,
            )
            action: DemoAction = await ctx.ask(seat, observation, players[seat])
            if not action.valid:
                invalid[seat] += 1
                ctx.trace.emit(ev.InvalidAction(seat=seat, round=rnd))
                continue
            postbox.post(seat, Channel.dm(), to=[nxt], text=action.text, round=rnd, turn=index)
            cursor[seat] += 1
    sent = {s: sum(1 for m in postbox.log if m.sender == s) for s in task.seats}
    rows = [
        {"seat": s, "participant": str(binding[s]), "messages": sent[s], "invalid": invalid[s]}
        for s in task.seats
    ]
    metrics = {"messages": len(postbox.log), "invalid": sum(invalid.values())}
    return EpisodeResult(rows=rows, metrics=metrics, final_state={"messages": len(postbox.log)})


def summarize(rows: Sequence[dict[str, Any]]) -> list[dict[str, Any]]:
    """Messages and invalid turns per participant type, over successful episodes only (a
    failed episode's row carries its status and error, no seat counts)."""
    ok = (r for r in rows if r.get("status", "ok") == "ok")
    groups = group_by(ok, lambda r: r["participant"])
    return [
        {
            "participant": participant,
            "seats": len(members),
            "messages": sum(int(r["messages"]) for r in members),
            "invalid": sum(int(r["invalid"]) for r in members),
        }
        for participant, members in sorted(groups.items())
    ]


def call_bounds(
    task: DemoTask,
    binding: Mapping[str, SeatSpec],
    roles: Mapping[str, str],
    options: object,
    condition: str | None,
) -> dict[str, CallBound]:
    """A model seat asks its model once per turn, one turn per round."""
    return {seat: CallBound(task.rounds) for seat, spec in binding.items() if spec.is_model}

"""`confide run --dry-run`: the resolved plan, printed instead of run."""

from __future__ import annotations

from collections import Counter

from confide.core.benchmark import parse_lineup
from confide.core.sampling import SEATS
from confide.runner.preflight import RunPlan
from confide.runner.resolve import resolve_experiment


def describe_plan(plan: RunPlan) -> list[str]:
    """Lines describing what the run would do: episodes by lineup and condition, the
    seats, role bindings, options, models with their sampling settings, and the model
    calls expected where they are knowable (none without a model)."""
    experiment = resolve_experiment(plan.spec, plan.experiment)
    episodes = plan.episodes
    tasks = list(dict.fromkeys(p.task.id for p in episodes))
    lines = [
        f"benchmark {plan.spec.id}: {len(episodes)} episode(s) = {len(tasks)} task(s) x "
        f"{len(experiment.lineups)} lineup(s) x {len(experiment.conditions or [None])} "
        f"condition(s) x {experiment.repetitions} repetition(s); seed {experiment.seed}, "
        f"{experiment.episodes_at_once} at once, schedule {experiment.schedule}",
        f"output: {experiment.output_dir}",
    ]
    by_cell = Counter((p.lineup_text, p.condition or "-") for p in episodes)
    seat_counts = Counter(len(plan.spec.seats(p.task)) for p in episodes)
    lines.append("seats per task: " + ", ".join(
        f"{n} seats ({count} episodes)" for n, count in sorted(seat_counts.items())
    ))
    for text in experiment.lineups:
        seats = parse_lineup(text)
        kind = "one spec for every seat" if len(seats) == 1 else f"{len(seats)} seats"
        cells = ", ".join(
            f"{c}: {n}" if c != "-" else f"{n} episodes"
            for (t, c), n in by_cell.items()
            if t == text
        )
        lines.append(f"lineup {text} ({kind}) -> {cells}")
    roles = ", ".join(f"{k}={v}" for k, v in experiment.roles.items()) or "none"
    lines.append(f"roles: {roles}")
    options = ", ".join(f"{k}={v!r}" for k, v in experiment.options.items()) or "none"
    lines.append(f"options: {options}")
    if not plan.models:
        lines.append("models: none (expected model calls: 0)")
    for model, where in plan.models.items():
        lines.append(f"model {model}: used by {', '.join(where)}")
    for key, sampling in experiment.sampling.items():
        target = "every evaluated seat" if key == SEATS else key
        settings = ", ".join(f"{k}={v}" for k, v in sampling.overrides().items())
        lines.append(f"sampling {target}: {settings or 'the environment defaults'}")
    if plan.models:
        lines.append("expected model calls: not knowable in advance (model seats and "
                     "roles decide how long an episode runs)")
    return lines

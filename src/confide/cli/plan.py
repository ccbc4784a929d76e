"""`confide run --dry-run`: the resolved plan, printed instead of run."""

from __future__ import annotations

from collections import Counter

from confide.core.benchmark import EPISODE_CALLS, CallBound, expand_lineup, parse_lineup
from confide.core.sampling import SEATS
from confide.runner.config import Experiment
from confide.runner.estimate import describe, estimate
from confide.runner.models import run_prices
from confide.runner.preflight import PreflightError, RunPlan, dry_run_plan
from confide.runner.resolve import resolve_experiment


def dry_run(experiment: Experiment) -> tuple[list[str], PreflightError | None]:
    """What `--dry-run` prints, and the preflight's problems (raised after the lines are
    printed, exit status 2). The plan and its cost estimate are shown whenever only the
    providers' check failed (`dry_run_plan`): a missing key still shows what the run
    would cost."""
    plan, error = dry_run_plan(experiment)
    lines = describe_plan(plan) if plan is not None else ["(no plan: see the problems)"]
    return lines, error


def describe_plan(plan: RunPlan) -> list[str]:
    """Lines describing what the run would do: episodes by lineup and condition, the
    seats, role bindings, options, models with their sampling settings, the model
    calls expected (`expected_calls`) and the estimated spend per model and seat or role
    (`runner.estimate`)."""
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
    lines += model_seats(plan)
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
        lines.append(expected_calls(plan, experiment))
        estimates = estimate(plan, experiment)
        if estimates is None:
            lines.append(f"estimated spend: none ({plan.spec.id} declares no call estimates)")
        else:
            lines += describe(estimates, run_prices(experiment))
    return lines


def expected_calls(plan: RunPlan, experiment: Experiment) -> str:
    """The model calls of the whole run, at most, per evaluated seats and per role,
    from the benchmark's `call_bounds` (its turn limits and repair budgets); a part
    without a bound is "unknown" with the reason. The total in all counts an episode at
    its `EPISODE_CALLS` bound when the parts share a budget and that bound is smaller."""
    spec = plan.spec
    if spec.call_bounds is None:
        return f"expected model calls: unknown ({spec.id} declares no bound)"
    options = spec.options.model_validate(experiment.options)
    totals: dict[str, int] = {}
    unknown: dict[str, str] = {}
    in_all = 0
    for episode in plan.episodes:
        binding = expand_lineup(episode.lineup, spec.seats(episode.task))
        bounds = dict(spec.call_bounds(episode.task, binding, experiment.roles, options,
                                       episode.condition))
        together = bounds.pop(EPISODE_CALLS, CallBound(None)).calls
        for name, bound in bounds.items():
            key = "seats" if name in binding else f"role {name}"
            if bound.calls is None:
                unknown.setdefault(key, bound.why)
            else:
                totals[key] = totals.get(key, 0) + bound.calls
        parts_sum = sum(b.calls or 0 for b in bounds.values())
        in_all += parts_sum if together is None else min(parts_sum, together)
    parts = [f"{key} <= {totals[key]}" for key in sorted(totals) if key not in unknown]
    parts += [f"{key} unknown ({why})" for key, why in sorted(unknown.items())]
    total = f"at most {in_all} in all" if not unknown else "no bound in all"
    return (f"expected model calls: {total} ({'; '.join(parts) or 'none'}; upper bounds "
            "from the turn limits and repair budgets)")


def model_seats(plan: RunPlan) -> list[str]:
    """`seats of MODEL: N` per model seat spec (a paper's N counts seats, not games),
    split by the spec's `task_group` where it declares one (CalBench: per cost setting)."""
    group = plan.spec.task_group
    counts: dict[str, Counter[str]] = {}
    for p in plan.episodes:
        for spec in expand_lineup(p.lineup, plan.spec.seats(p.task)).values():
            if spec.is_model:
                counts.setdefault(spec.raw, Counter())[group(p.task) if group else ""] += 1
    return [
        f"seats of {model}: " + ", ".join(
            f"{name} {n}" if name else str(n) for name, n in sorted(by_group.items()))
        for model, by_group in counts.items()
    ]

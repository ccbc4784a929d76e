"""One model through every benchmark's declared design: plan, preflight, dry run, the
paid-call confirmation, the runs (the runner's own `run_experiment`, so resume, Ray and
every run option behave as in `confide run`) and the profile.

`confide eval` is this module behind a few flags: the three run directories under
`eval/<model>/<benchmark>/` are ordinary runs, the same as the `confide run` commands
the dry run prints, and the profile is computed from them alone.
"""

from __future__ import annotations

import shlex
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from confide.errors import ConfideError
from confide.evaluate.design import (
    REFERENCE,
    BenchmarkRun,
    benchmark_run,
    eval_designs,
    model_dir,
    split_roles,
)
from confide.evaluate.profile import (
    BenchmarkProfile,
    Profile,
    cost_result,
    metric_results,
    worst_episodes,
)
from confide.evaluate.published import with_published
from confide.evaluate.render import write_profile
from confide.registry import get_benchmark
from confide.runner import PreflightError, RunPlan, RunSummary, preflight, run_experiment
from confide.runner.models import run_prices


class EvalDeclined(ConfideError):
    """The user did not confirm the paid calls; nothing ran."""


@dataclass(frozen=True)
class Evaluation:
    """A model's planned evaluation: one run per benchmark under `root`."""

    model: str
    design: str
    root: Path
    runs: tuple[BenchmarkRun, ...]

    def commands(self) -> list[str]:
        """The `confide run` command lines that make the same three runs."""
        return [shlex.join(run.command) for run in self.runs]


def plan_evaluation(
    model: str,
    *,
    design: str = "quick",
    roles: Mapping[str, str] | None = None,
    out: Path | str = "eval",
    run_options: Mapping[str, Any] | None = None,
) -> Evaluation:
    """The experiments of `model`'s evaluation (`confide.evaluate.design`); nothing is
    checked against providers or written yet."""
    designs = eval_designs()
    per, problems = split_roles(roles or {}, designs)
    if problems:
        raise PreflightError(f"confide eval {model}", problems)
    root = model_dir(Path(out), model)
    runs = tuple(
        benchmark_run(d, model, design, per[d.benchmark], root / d.benchmark, run_options or {})
        for d in designs
    )
    return Evaluation(model, design, root, runs)


def check(evaluation: Evaluation) -> list[RunPlan]:
    """Every benchmark's preflight, all problems of all benchmarks in one
    `PreflightError` (nothing written), or the run plans."""
    plans, problems = _preflight_all(evaluation)
    if problems:
        raise PreflightError(f"confide eval {evaluation.model}", problems)
    return [plan for plan in plans if plan is not None]


def _preflight_all(evaluation: Evaluation) -> tuple[list[RunPlan | None], list[str]]:
    plans: list[RunPlan | None] = []
    problems: list[str] = []
    for run in evaluation.runs:
        try:
            plans.append(preflight(run.experiment))
        except PreflightError as exc:
            plans.append(None)
            problems += [f"{run.design.benchmark}: {p}" for p in exc.problems]
    return plans, problems


def dry_run(evaluation: Evaluation) -> tuple[list[str], PreflightError | None]:
    """The lines `confide eval --dry-run` prints (per benchmark: the design, where each
    role's binding comes from, the equivalent `confide run` command and the runner's own
    plan with its call and cost estimate, as `confide run --dry-run` prints it), and all
    benchmarks' preflight problems in one error, if any."""
    from confide.cli.plan import dry_run as plan_lines

    lines = [f"confide eval {evaluation.model} --design {evaluation.design}: "
             f"{len(evaluation.runs)} runs under {evaluation.root}"]
    problems: list[str] = []
    for run in evaluation.runs:
        lines += ["", f"== {run.design.benchmark}: {run.design_note}"]
        lines += [f"role {name}: {source}" for name, source in run.role_sources.items()]
        lines.append(f"same as: {shlex.join(run.command)}")
        shown, error = plan_lines(run.experiment)
        lines += shown
        if error is not None:
            problems += [f"{run.design.benchmark}: {p}" for p in error.problems]
    error = PreflightError(f"confide eval {evaluation.model}", problems) if problems else None
    return lines, error


def paid_models(plans: list[RunPlan]) -> list[str]:
    """Models of the plans whose provider is not free by the run's price table."""
    paid = []
    for plan in plans:
        free = run_prices(plan.experiment).zero_cost_providers
        paid += [m for m in plan.models if m.partition("/")[0] not in free]
    return list(dict.fromkeys(paid))


def confirmation(evaluation: Evaluation, plans: list[RunPlan]) -> str:
    """The plain-language question asked before the first paid call: which paid models,
    and each run's expected calls and cost estimate as the dry run states them."""
    from confide.cli.plan import describe_plan

    lines = [f"This evaluation of {evaluation.model} calls paid models "
             f"({', '.join(paid_models(plans))}) in {len(plans)} runs:"]
    for plan in plans:
        facts = [line for line in describe_plan(plan)
                 if line.startswith("expected model calls") or "cost" in line.lower()]
        lines += [f"  {plan.spec.id}: {fact}" for fact in facts]
    lines.append("Start these runs and pay for their calls?")
    return "\n".join(lines)


def run_evaluation(
    evaluation: Evaluation,
    *,
    yes: bool = False,
    confirm: Callable[[str], bool] | None = None,
    show_progress: bool = False,
    fresh: bool = False,
    freeze_gc: bool = False,
) -> tuple[list[RunSummary], Profile | None]:
    """Preflight all, ask before paid calls (unless `yes`; `confirm` gets the question,
    none given: paid calls need `yes`), run each benchmark and write the profile. Stops
    after an interrupted run (its summary says so; the profile is not written), else
    writes the profile (`render.write_profile`)."""
    plans = check(evaluation)
    if paid_models(plans) and not yes:
        question = confirmation(evaluation, plans)
        if confirm is None or not confirm(question):
            raise EvalDeclined(f"{question}\nnot confirmed: nothing was run (pass yes=True "
                               "or --yes to skip the question)")
    summaries = []
    for run in evaluation.runs:
        summary = run_experiment(run.experiment, show_progress=show_progress, fresh=fresh,
                                 freeze_gc=freeze_gc)
        summaries.append(summary)
        if summary.interrupted:
            return summaries, None
    profile = build_profile(evaluation)
    write_profile(profile, evaluation.root,
                  [run.run_dir for run in evaluation.runs])
    return summaries, profile


def build_profile(evaluation: Evaluation) -> Profile:
    """The profile of an evaluation whose runs are on disk."""
    benchmarks = []
    for index, run in enumerate(evaluation.runs):
        run_dir = run.run_dir
        design = run.design
        seated = None if evaluation.model == REFERENCE else evaluation.model
        metrics = with_published(design, metric_results(run_dir, design, seated))
        cost = cost_result(run_dir, evaluation.model)
        rows = metric_rows(run_dir)
        benchmarks.append(BenchmarkProfile(
            benchmark=design.benchmark,
            run_dir=str(run_dir),
            command=shlex.join(run.command),
            design_note=run.design_note,
            paper_design=design.paper_note,
            roles=_resolved_roles(run, evaluation.model),
            role_sources=dict(run.role_sources),
            episodes=len({r["episode_id"] for r in rows}),
            failed=len({r["episode_id"] for r in rows if r.get("status", "ok") != "ok"}),
            metrics=metrics,
            no_privacy=design.no_privacy,
            cost=cost,
            worst_by=design.worst[0],
            worst=worst_episodes(run_dir, design, index),
        ))
    note = "reference participants, not a model" if evaluation.model == REFERENCE else ""
    return Profile(model=evaluation.model, design=evaluation.design, benchmarks=benchmarks,
                   published_note=note)


def metric_rows(run_dir: Path) -> list[dict[str, Any]]:
    from confide.readers import read_results

    return read_results(run_dir)


def _resolved_roles(run: BenchmarkRun, model: str) -> dict[str, str]:
    from confide.runner.resolve import resolve_experiment

    spec = get_benchmark(run.experiment.benchmark)
    roles = dict(resolve_experiment(spec, run.experiment).roles)
    if run.design.others_role in run.role_sources:  # the other seats, named as a role
        roles[run.design.others_role] = run.others or model
    return roles

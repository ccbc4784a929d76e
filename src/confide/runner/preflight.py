"""Preflight: every mistake knowable before the first episode, reported at once.

A typo in a lineup, an option or a role, a missing API key or an uninstalled extra would
otherwise fail every episode, one trace at a time. `preflight` resolves everything an
experiment names before anything is written: the benchmark's declared inputs
(`declared_problems`: options, roles and their required bindings, participants,
strategies, conditions, sampling keys), the tasks and each lineup's seat count against
every task, what a seat cannot do with the tasks (`BenchmarkSpec.task_problems`), and
every model spec of a seat or role, built exactly as the run will build
it (provider, model options, keys and base URLs, optional extras), and the run's size and
concurrency (`size_problems`); a model without a price in the run's price table is a
warning (its cost is unknown, never $0). It raises one
`PreflightError` listing every problem, or returns the `RunPlan` that `confide run
--dry-run` prints.
"""

from __future__ import annotations

import logging
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from confide.core.benchmark import BenchmarkSpec, RoleSpec, SeatSpec, parse_lineup
from confide.core.custom import resolve_participant
from confide.core.options import option_problems
from confide.core.sampling import SEATS
from confide.errors import ConfideError
from confide.llm.spec import parse_spec
from confide.registry import get_benchmark
from confide.runner.config import Experiment
from confide.runner.expand import EpisodePlan, expand, select_tasks
from confide.runner.models import RunModels, run_prices

MAX_EPISODES = 1_000_000
"""Most episodes one run may plan: the plan of a larger one alone would fill memory
(`confide run --repetitions 100000000` planned 10^8 episodes before saying anything)."""
MAX_CONCURRENCY = 1024
"""Most episodes run at once (per worker on Ray): each holds a worker coroutine, and more
than this many would only queue on the providers' call limits."""
_log = logging.getLogger("confide")


class PreflightError(ConfideError):
    """The experiment cannot run; `problems` lists every reason."""

    def __init__(self, benchmark: str, problems: Sequence[str]) -> None:
        super().__init__(problems_message(benchmark, problems))
        self.problems = list(problems)


def problems_message(benchmark: str, problems: Sequence[str]) -> str:
    """Every problem of an experiment of `benchmark` as one message: a count, one a line."""
    count = f"{len(problems)} problem{'s' if len(problems) != 1 else ''}"
    lines = [f"{benchmark}: {count} found before any episode ran (nothing was run):"]
    return "\n".join(lines + [f"  - {problem}" for problem in problems])


@dataclass(frozen=True)
class RunPlan:
    """What a run will do: the episodes, and every model with the seats and roles that
    use it."""

    spec: BenchmarkSpec
    experiment: Experiment
    episodes: list[EpisodePlan]
    models: dict[str, list[str]]


def lineups_of(spec: BenchmarkSpec, experiment: Experiment) -> list[str]:
    """The lineups a run compares: the experiment's, else the benchmark's default."""
    return experiment.lineups or list(spec.default_lineups or (spec.default_lineup,))


def declared_problems(spec: BenchmarkSpec, experiment: Experiment) -> list[str]:
    """Problems with what the benchmark declares: options, conditions, roles and the
    bindings a model lineup needs, seat specs (participants, providers, strategies) and
    sampling keys (those naming neither `seats` nor a role must be a task's seat, which
    `preflight` checks with the tasks loaded)."""
    problems = option_problems(spec.options, experiment.options, spec.id)
    known_conditions = [c for c in spec.conditions if c is not None]
    for condition in experiment.conditions or ():
        if condition not in spec.conditions:
            available = ", ".join(known_conditions) or "none (the benchmark has no conditions)"
            problems.append(f"unknown condition {condition!r} (conditions: {available})")
    roles = {role.name: role for role in spec.roles}
    for name, binding in experiment.roles.items():
        role = roles.get(name)
        if role is None:
            known = ", ".join(roles) or "none"
            problems.append(f"unknown role {name!r} in --role {name}={binding} (roles: {known})")
        else:
            problems += _binding_problems(role, binding)
    seats = [seat for text in lineups_of(spec, experiment) for seat in _lineup(text, problems)]
    for seat in dict.fromkeys(seats):
        problems += _seat_problems(spec, seat)
    problems += _unbound_roles(spec, experiment, seats)
    return problems


def _unbound_roles(
    spec: BenchmarkSpec, experiment: Experiment, seats: Sequence[SeatSpec]
) -> list[str]:
    """Roles a model seat needs bound (`RoleSpec.llm_lineup_needs_binding`) that the
    experiment leaves at their LLM-free default, unless every model seat is one of the
    role's `scripted_peers` or the run has none of the role's conditions."""
    models = sorted({seat.model for seat in seats if seat.model is not None})
    run_conditions = set(experiment.conditions or spec.default_conditions or spec.conditions)
    problems = []
    for role in spec.roles:
        if not role.llm_lineup_needs_binding or role.name in experiment.roles:
            continue
        if role.conditions and not run_conditions & set(role.conditions):
            continue
        unserved = [m for m in models if m not in role.scripted_peers]
        if unserved:
            problems.append(
                f"a lineup with a model seat ({', '.join(unserved)}) needs the {role.name} "
                f"role bound (--role {role.name}=<provider/model>): the default "
                f"{role.default!r} cannot read a model's output ({role.description})"
            )
    return problems


def _lineup(text: str, problems: list[str]) -> tuple[SeatSpec, ...]:
    try:
        return parse_lineup(text)
    except ValueError as exc:
        problems.append(str(exc))
        return ()


def _binding_problems(role: RoleSpec, binding: str) -> list[str]:
    if binding in role.offline:
        return []
    if "/" not in binding:
        offline = " or ".join(repr(b) for b in role.offline)
        return [f"role {role.name}={binding!r}: use {offline + ' or ' if offline else ''}"
                "a model spec (provider/model)"]
    return _spec_problems(binding.split(":", 1)[0], f"role {role.name}")


def _seat_problems(spec: BenchmarkSpec, seat: SeatSpec) -> list[str]:
    if seat.model is None:
        if seat.raw in spec.participants:
            return []
        try:  # the user's own agent: `py:module:factory` or a confide.participants plugin
            if resolve_participant(seat, spec.id) is not None:
                return []
        except ConfideError as exc:
            return [str(exc)]
        return [f"unknown participant {seat.raw!r} (participants: "
                f"{', '.join(spec.participants)}, a model spec provider/model, or "
                "py:module:factory)"]
    problems = _spec_problems(seat.model, f"seat {seat.raw!r}")
    if seat.strategy is not None:
        if spec.check_strategy is None:
            problems.append(f"seat {seat.raw!r}: {spec.id} model seats take no strategy "
                            f"(drop ':{seat.strategy}')")
        else:
            try:
                spec.check_strategy(seat.strategy)
            except ConfideError as exc:
                problems.append(f"seat {seat.raw!r}: {exc}")
    return problems


def _spec_problems(model: str, where: str) -> list[str]:
    try:
        parse_spec(model)
    except ConfideError as exc:
        return [f"{where}: {exc}"]
    return []


def _checked(experiment: Experiment) -> tuple[RunPlan | None, list[str]]:
    """Every problem, and the plan when none but the providers' (the models are built
    last, so their problems never hide the plan)."""
    spec = get_benchmark(experiment.benchmark)
    problems = declared_problems(spec, experiment)
    try:
        tasks = select_tasks(spec, experiment)
    except ConfideError as exc:
        problems.append(str(exc))
        tasks = []
    problems += _seat_count_problems(spec, experiment, tasks)
    if spec.task_problems is not None and tasks:
        problems += spec.task_problems(tasks, _seats(spec, experiment))
    seat_names = {seat for task in tasks for seat in spec.seats(task)}
    role_names = ", ".join(role.name for role in spec.roles) or "none"
    for key in experiment.sampling:
        if key != SEATS and spec.role(key) is None and tasks and key not in seat_names:
            problems.append(
                f"sampling: {key!r} is neither 'seats', a role ({role_names}) nor a seat "
                "of any task"
            )
    models = models_used(spec, experiment)
    try:
        prices = run_prices(experiment)
    except ConfideError as exc:
        problems.append(f"price_table: {exc}")
    else:
        for model in models:  # an unknown provider is a problem already, not a price
            if "/" in model and _parses(model) and prices.price(model) is None:
                _log.warning(
                    "model %s has no price in the price table (%s): its calls' cost is "
                    "recorded as unknown, never as $0; give --price-table to price it",
                    model, experiment.price_table or "shipped",
                )
    problems += size_problems(spec, experiment, len(tasks))
    episodes: list[EpisodePlan] = []
    if not problems:
        try:
            episodes = expand(spec, experiment)
        except ConfideError as exc:
            problems.append(str(exc))
    plan = None if problems else RunPlan(spec, experiment, episodes, models)
    problems += _model_problems(spec, experiment, models)
    return plan, problems


def preflight(experiment: Experiment) -> RunPlan:
    """Check everything (module docstring); raise `PreflightError` listing every problem,
    or return the plan. Writes nothing."""
    plan, problems = _checked(experiment)
    if problems or plan is None:
        raise PreflightError(get_benchmark(experiment.benchmark).id, problems)
    return plan


def preflight_problems(experiment: Experiment) -> list[str]:
    """Every problem `preflight` would raise (an empty list: the experiment can run)."""
    return _checked(experiment)[1]


def dry_run_plan(experiment: Experiment) -> tuple[RunPlan | None, PreflightError | None]:
    """`--dry-run`'s plan and the preflight's problems. The plan is given whenever only
    the providers' check failed (a missing key or endpoint): a user reads the plan and
    its cost estimate before setting the key, then gets the one preflight message."""
    plan, problems = _checked(experiment)
    if not problems:
        return plan, None
    return plan, PreflightError(get_benchmark(experiment.benchmark).id, problems)


def size_problems(spec: BenchmarkSpec, experiment: Experiment, tasks: int) -> list[str]:
    """The run's size against `MAX_EPISODES` (counted from its factors, without building
    the plan) and its concurrency against `MAX_CONCURRENCY`."""
    problems = []
    conditions = len(experiment.conditions or spec.default_conditions or spec.conditions)
    episodes = tasks * len(lineups_of(spec, experiment)) * conditions * experiment.repetitions
    if episodes > MAX_EPISODES:
        problems.append(
            f"repetitions {experiment.repetitions}: the run would plan {episodes:,} episodes "
            f"({tasks} task(s) x {len(lineups_of(spec, experiment))} lineup(s) x {conditions} "
            f"condition(s) x {experiment.repetitions}); at most {MAX_EPISODES:,} per run"
        )
    if experiment.concurrency is not None and experiment.concurrency > MAX_CONCURRENCY:
        problems.append(
            f"concurrency {experiment.concurrency}: at most {MAX_CONCURRENCY} episodes run "
            "at once (per worker on Ray)"
        )
    return problems


def _seats(spec: BenchmarkSpec, experiment: Experiment) -> list[SeatSpec]:
    """Every distinct seat spec of the run's lineups (a lineup that does not parse is
    reported by `declared_problems`)."""
    seats: list[SeatSpec] = []
    for text in lineups_of(spec, experiment):
        try:
            seats += parse_lineup(text)
        except ValueError:
            continue
    return list(dict.fromkeys(seats))


def _seat_count_problems(
    spec: BenchmarkSpec, experiment: Experiment, tasks: Sequence[Any]
) -> list[str]:
    problems = []
    counts = {task.id: len(spec.seats(task)) for task in tasks}
    for text in lineups_of(spec, experiment):
        try:
            size = len(parse_lineup(text))
        except ValueError:
            continue  # reported by declared_problems
        wrong = {tid: n for tid, n in counts.items() if size > 1 and n != size}
        if wrong:
            by_count = Counter(wrong.values())
            seats = ", ".join(f"{n} task(s) with {k} seats" for k, n in sorted(by_count.items()))
            example = next(iter(wrong))
            problems.append(
                f"lineup {text!r} has {size} seat specs but {seats} (e.g. {example}); give "
                "one spec for every seat or one per seat"
            )
    return problems


def models_used(spec: BenchmarkSpec, experiment: Experiment) -> dict[str, list[str]]:
    """Each model spec of a seat or role -> where it is used (`lineup X` / `role R`)."""
    used: dict[str, list[str]] = {}
    for text in lineups_of(spec, experiment):
        try:
            lineup = parse_lineup(text)
        except ValueError:
            continue
        for seat in lineup:
            if seat.model is not None:
                used.setdefault(seat.model, []).append(f"lineup {text}")
    for name, binding in experiment.roles.items():
        if "/" in binding:
            used.setdefault(binding.split(":", 1)[0], []).append(f"role {name}")
    return {model: list(dict.fromkeys(where)) for model, where in used.items()}


def _parses(model: str) -> bool:
    """Whether `model` is a spec of a known provider (`parse_spec`)."""
    try:
        parse_spec(model)
    except ConfideError:
        return False
    return True


def _model_problems(
    spec: BenchmarkSpec, experiment: Experiment, models: dict[str, list[str]]
) -> list[str]:
    """Build every model as the run will (provider, model options, keys, base URLs,
    extras); nothing is sent."""
    factory = RunModels(options=experiment.model_options)
    problems = []
    for model, where in models.items():
        if not _parses(model):
            continue  # reported by declared_problems
        try:
            if spec.prepare_model is not None:
                spec.prepare_model(model)
            factory.base(model)
        except ConfideError as exc:
            problems.append(f"model {model} ({', '.join(where)}): {exc}")
    return problems

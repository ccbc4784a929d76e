"""From a model and a design name to one ordinary experiment per benchmark.

Every benchmark that declares an `eval_design.py` (`confide.core.eval_design`) takes
part; this module knows none of them by name. An experiment is built the way `confide
run` builds one (`build_experiment`, or `load_experiment` over the paper's experiment
file with the lineups, roles and output directory as overrides), and `command` gives
the `confide run` command line that builds the same experiment, so an evaluation is
exactly three runs a user could have started by hand.
"""

from __future__ import annotations

import importlib
import json
import random
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from confide.core.benchmark import parse_lineup
from confide.core.eval_design import MODEL, EvalDesign, QuickDesign
from confide.errors import ConfideError
from confide.registry import benchmark_ids, get_benchmark
from confide.runner import Experiment, build_experiment, load_experiment

DESIGNS = ("quick", "paper")
REFERENCE = "reference"
"""`confide eval reference`: each benchmark's reference participants (`reference_lineup`)."""
RUN_FIELDS = ("concurrency", "cache_dir", "price_table", "backend", "ray_address",
              "ray_traces")
"""Experiment fields an evaluation passes through to every run (`confide run` flags)."""
PROJECT_ROOT = Path(__file__).resolve().parents[3]
EMBEDDED = "local/"
"""Model specs of embedded models (the runner's rule too: one episode at a time)."""


@dataclass(frozen=True)
class BenchmarkRun:
    """One benchmark of an evaluation: its declared design, the experiment, the `confide
    run` arguments that build the same experiment, and where each role's binding comes
    from."""

    design: EvalDesign
    experiment: Experiment
    command: tuple[str, ...]
    role_sources: Mapping[str, str]
    design_note: str
    others: str | None = None
    """The spec of every seat but the evaluated one (`EvalDesign.others_role`), or None
    in self-play."""

    @property
    def run_dir(self) -> Path:
        """The run directory: an evaluation always names it (`eval/<model>/<benchmark>`)."""
        return Path(_named_out(self.experiment))


def _named_out(experiment: Experiment) -> str:
    """The experiment's output directory, which every design sets."""
    if experiment.output_dir is None:
        raise ValueError("an evaluation's experiment has no output directory")
    return experiment.output_dir


def eval_designs() -> list[EvalDesign]:
    """The declared designs of every registered benchmark that has one, by id."""
    designs = []
    for benchmark in benchmark_ids():
        name = f"confide.envs.{benchmark.replace('-', '_')}.eval_design"
        try:
            module = importlib.import_module(name)
        except ModuleNotFoundError as exc:
            if exc.name is not None and name.startswith(exc.name):
                continue  # no such folder or no declaration: the benchmark takes no part
            raise
        designs.append(module.DESIGN)
    return designs


def model_dir(out: Path, model: str) -> Path:
    """`out/<model>`, the model spec's slashes as folders and a strategy's colon as `_`."""
    return out / model.replace(":", "_")


def split_roles(
    roles: Mapping[str, str], designs: Sequence[EvalDesign]
) -> tuple[dict[str, dict[str, str]], list[str]]:
    """`--role` bindings per benchmark: `NAME=SPEC` binds the role in every benchmark
    that has it, `BENCHMARK.NAME=SPEC` in that one only (which wins). Returns the
    bindings and the problems (a role no benchmark has, an unknown benchmark)."""
    per: dict[str, dict[str, str]] = {d.benchmark: {} for d in designs}
    problems = []
    for key, spec in sorted(roles.items(), key=lambda item: "." in item[0]):
        benchmark, dot, name = key.rpartition(".")
        if dot:
            if benchmark not in per:
                problems.append(f"--role {key}={spec}: unknown benchmark {benchmark!r} "
                                f"(evaluated: {', '.join(per)})")
            else:
                per[benchmark][name] = spec
            continue
        holders = [d.benchmark for d in designs
                   if get_benchmark(d.benchmark).role(name) or d.others_role == name]
        if not holders:
            problems.append(f"--role {key}={spec}: no evaluated benchmark has a role {key!r}")
        for benchmark in holders:
            per[benchmark][name] = spec
    return per, problems


def quick_design(design: EvalDesign, model: str) -> QuickDesign:
    """The quick design `model` gets: the benchmark's embedded-model budget for an
    embedded `local/` model (`QuickDesign.embedded`), else the quick design itself."""
    if model.startswith(EMBEDDED) and design.quick.embedded is not None:
        return design.quick.embedded
    return design.quick


def stratified_tasks(benchmark: str, quick: QuickDesign) -> list[str]:
    """The quick design's task ids: `per_stratum` tasks from each stratum, picked by a
    shuffle seeded with the design's seed and the stratum's name, in suite order."""
    tasks = get_benchmark(benchmark).load_tasks(quick.suite, None)
    strata: dict[str, list[str]] = {}
    for task in tasks:
        strata.setdefault(quick.stratum(task), []).append(task.id)
    chosen = set()
    for name, ids in strata.items():
        shuffled = list(ids)
        random.Random(f"{quick.seed}:{name}").shuffle(shuffled)
        chosen.update(shuffled[: quick.per_stratum])
    return [task.id for task in tasks if task.id in chosen]


def _lineups(texts: Sequence[str], model: str) -> list[str]:
    """Each lineup with its model seats given to `model` (a seat's strategy kept)."""
    result = []
    for text in texts:
        seats = []
        for seat in parse_lineup(text.replace(MODEL, "x/x")):
            if seat.model is None:
                seats.append(seat.raw)  # a reference peer stays
            else:
                seats.append(f"{model}:{seat.strategy}" if seat.strategy else model)
        result.append(",".join(seats))
    return list(dict.fromkeys(result))


def benchmark_run(
    design: EvalDesign,
    model: str,
    design_name: str,
    roles: Mapping[str, str],
    output_dir: Path,
    run_options: Mapping[str, Any],
) -> BenchmarkRun:
    """The experiment of one benchmark (module docstring); `roles` are the user's
    bindings for this benchmark, `run_options` the `RUN_FIELDS` given."""
    if design_name not in DESIGNS:
        raise ConfideError(f"unknown design {design_name!r} (designs: {', '.join(DESIGNS)})")
    reference = model == REFERENCE
    roles = dict(roles)
    others = roles.pop(design.others_role, None) if design.others_role else None
    defaults = {} if reference else {k: v.replace(MODEL, model) for k, v in design.roles.items()}
    seated = [design.others_role] if design.others_role and not reference else []
    sources = {k: f"default ({design.role_notes.get(k, 'the evaluated model')})"
               for k in [*defaults, *seated]}
    sources.update({k: "--role" for k in roles})
    if others is not None:
        sources[design.others_role] = "--role"
    passed = {k: v for k, v in run_options.items() if v is not None}
    flags = _run_flags(passed)
    out = str(output_dir)
    if design_name == "paper" and (path := _paper_file(design)) is not None:
        data = _yaml_fields(path)
        lineups = [design.reference_lineup] if reference else _lineups(
            data.get("lineups") or [design.lineup], model)
        if others is not None:
            lineups = _with_others(design.benchmark, lineups, others, data.get("suite"),
                                   data.get("task_ids"))
        bound = dict(data.get("roles") or {})
        if reference:  # the references' own LLM-free roles, named so the command says so
            offline = {k: _offline_default(design, k, v) for k, v in bound.items()}
            bound = {k: v for k, v in offline.items() if v is not None}
        bound.update(roles)
        sources.update({k: f"the paper's experiment file {path}" for k in bound
                        if k not in roles})
        overrides = {"lineups": lineups, "roles": bound, "output_dir": out, **passed}
        experiment = load_experiment(path, overrides, check=False)
        command = ("confide", "run", str(path), *_each("--lineup", lineups),
                   *_each("--role", [f"{k}={v}" for k, v in bound.items()]), "--out", out,
                   *flags)
        return BenchmarkRun(design, experiment, command, sources,
                            f"{design.paper_note} (from {path})", others)
    if design_name == "paper":
        fields = dict(design.paper)
        template = fields.pop("lineups", [design.lineup])
        note = f"{design.paper_note} (from the paper's text: {design.paper_file} is absent)"
    else:
        quick = quick_design(design, model)
        fields = {"suite": quick.suite, "task_ids": stratified_tasks(design.benchmark, quick),
                  "repetitions": quick.repetitions, "seed": quick.seed,
                  "options": dict(quick.options) or None}
        template = [design.lineup]
        budget = "embedded-model budget" if quick is not design.quick else ""
        note = f"quick{f' ({budget})' if budget else ''}: {quick.why}"
    lineups = [design.reference_lineup] if reference else _lineups(template, model)
    if others is not None:
        lineups = _with_others(design.benchmark, lineups, others, fields.get("suite"),
                               fields.get("task_ids"))
    bound = {**defaults, **roles}
    data = {"benchmark": design.benchmark, **{k: v for k, v in fields.items() if v is not None},
            "lineups": lineups, "roles": bound, "output_dir": out, **passed}
    experiment = build_experiment(data, check=False)
    return BenchmarkRun(design, experiment, _command(experiment, flags), sources, note, others)


def _with_others(benchmark: str, lineups: Sequence[str], others: str, suite: str | None,
                 task_ids: Sequence[str] | None) -> list[str]:
    """Each lineup's first seat kept (the evaluated model's) and `others` in every other
    seat, spelt out seat by seat since a lineup of several specs names every seat (the
    tasks must all have the same number of seats)."""
    spec = get_benchmark(benchmark)
    tasks = [t for t in spec.load_tasks(suite, None) if not task_ids or t.id in task_ids]
    counts = sorted({len(spec.seats(t)) for t in tasks})
    if len(counts) != 1 or counts[0] < 2:
        raise ConfideError(f"--role {benchmark}.others={others}: the tasks have "
                           f"{' or '.join(map(str, counts)) or 'no'} seats; binding the "
                           "other seats needs one seat count of two or more")
    rest = [others] * (counts[0] - 1)
    return list(dict.fromkeys(",".join([parse_lineup(text)[0].raw, *rest])
                              for text in lineups))


def _offline_default(design: EvalDesign, name: str, binding: str) -> str | None:
    """A role's LLM-free default for the reference participants: None where the role's
    default is to stay unbound (CalBench's VPS judge), the binding for an unknown role."""
    role = get_benchmark(design.benchmark).role(name)
    return binding if role is None else role.default


def _paper_file(design: EvalDesign) -> Path | None:
    """The paper's experiment file, relative to the working directory or the project."""
    for root in (Path.cwd(), PROJECT_ROOT):
        if (root / design.paper_file).is_file():
            return root / design.paper_file
    return None


def _yaml_fields(path: Path) -> dict[str, Any]:
    from confide.untrusted import load_yaml

    data = load_yaml(path, "experiment file")
    if not isinstance(data, dict):
        raise ConfideError(f"{path}: expected a mapping of fields, got {type(data).__name__}")
    return data


def _each(flag: str, values: Sequence[str]) -> list[str]:
    return [part for value in values for part in (flag, value)]


def _run_flags(passed: Mapping[str, Any]) -> list[str]:
    """The `confide run` flags of the `RUN_FIELDS` given."""
    names = {"cache_dir": "--cache"}
    return [part for key, value in passed.items()
            for part in (names.get(key, "--" + key.replace("_", "-")), str(value))]


def _command(experiment: Experiment, flags: Sequence[str]) -> tuple[str, ...]:
    """`confide run BENCHMARK ...` building `experiment` from the fields a quick or
    paper-text design sets (tests/evaluate checks the two build the same experiment)."""
    args = ["confide", "run", experiment.benchmark]
    if experiment.suite is not None:
        args += ["--suite", experiment.suite]
    args += _each("--task-id", experiment.task_ids or [])
    args += _each("--lineup", experiment.lineups)
    args += _each("--condition", experiment.conditions or [])
    args += _each("--role", [f"{k}={v}" for k, v in experiment.roles.items()])
    args += _each("--option", [f"{k}={json.dumps(v)}" for k, v in experiment.options.items()])
    args += ["--repetitions", str(experiment.repetitions), "--seed", str(experiment.seed)]
    args += ["--out", _named_out(experiment), *flags]
    return tuple(args)

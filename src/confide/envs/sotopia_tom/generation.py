"""Scenario generation pipeline (sections 3.2, A.3, A.4, A.6): generator model, LLM judge,
rule validation, minimal-edit correction; accepted scenarios are written as JSON.

Seeds (A.3). Good seeds are two of our own `core` scenarios per sector. Each sector also
has one bad seed, stored with the reason it is bad: a `core` scenario of the sector with
one realistic structural error planted by a recipe below (unreachable goal, missing
origin, wrong domain mapping, contradictory policy, objective leakage, inconsistent
sensitivity, reachable secret, sharing another agent's item). A test checks that the
rule validator finds the planted error.

One request (sector, number of agents) runs as follows (A.4):
1. The generator gets the sector, the agent count, one good seed (chosen with the
   request's seeded RNG) and the sector's bad seed with its reason, and must answer with
   a scenario in our native JSON schema (`generate_structured`, bounded repair). The id
   and sector are set by the pipeline. A candidate with the wrong number of agents, or
   too close to the good seed (less than `min_novelty` of its fields differ), is
   rejected.
2. The judge gets the candidate and the rule validator's findings and returns the A.4
   record: is_logically_correct, anomalies_reason, corrected_scenario.
3. A correction must be minimal and schema-preserving: same id and the same agents
   (names and roles), and at most `max_edit_fraction` of the candidate's fields changed
   (fields are compared by path, with agents keyed by name and facts by id). A larger
   rewrite is rejected.
4. The scenario (corrected or not) must pass every rule of `validation.py`. If it does
   not, the judge gets another correction round with the remaining violations, up to
   `max_corrections` rounds; a scenario that still breaks rules is rejected. A scenario
   the judge calls incorrect without correcting it is rejected.
Accepted scenarios are written to `<out>/<id>.json`; every request, accepted or not, is
appended to `<out>/generation_log.jsonl` with its judge records and violations. With
`silver=True` (A.6), rejected candidates are kept as further bad examples for later
requests of their sector. `generate_with_specs` runs the pipeline with any model spec.

The generator and the judge take sampling settings as the seats and roles of a run do
(`confide.core.sampling`, keyed `generator` and `judge`), over their defaults in
`PipelineSettings`; the paper's are `PAPER_SAMPLING` (section 3.2, A.4: the generator at
low reasoning effort, the judge at high).
"""

from __future__ import annotations

import json
import random
import re
from collections.abc import Callable, Mapping, Sequence
from functools import cache
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, Field

from confide.core.sampling import Sampling
from confide.envs.sotopia_tom.dataset import load_split
from confide.envs.sotopia_tom.prompts import render
from confide.envs.sotopia_tom.scenario import Scenario, Sector, save_scenario, scenario_to_json
from confide.envs.sotopia_tom.validation import Rule, validate_scenario
from confide.errors import ConfideError
from confide.llm import ChatMessage, ChatModel, GenerateConfig, generate_structured, get_model

SCHEMA_VERSION: Literal[1] = 1


class GenerationError(ConfideError):
    """A generation request or seed recipe is invalid."""


# -- seeds ----------------------------------------------------------------------------------

Mutation = Callable[[dict[str, Any]], None]


def _agent(data: dict[str, Any], index: int) -> dict[str, Any]:
    agent: dict[str, Any] = data["agents"][index]
    return agent


def _holder(data: dict[str, Any], item: str) -> dict[str, Any]:
    return next(a for a in data["agents"] if any(f["id"] == item for f in a["knowledge"]))


def _unreachable_goal(data: dict[str, Any]) -> None:
    item = _agent(data, 0)["desired_knowledge"][0]
    holder = _holder(data, item)
    holder["what_to_share"].remove(item)
    holder["what_not_to_share"].append(item)
    next(f for f in holder["knowledge"] if f["id"] == item)["sensitivity"] = "private"


def _missing_origin(data: dict[str, Any]) -> None:
    _agent(data, 0)["desired_knowledge"].append("supplier-audit-outcome")


def _wrong_domain_map(data: dict[str, Any]) -> None:
    domains = list(data["knowledge_domain_map"])
    first, second = domains[0], domains[1]
    mapping = data["knowledge_domain_map"]
    mapping[first], mapping[second] = mapping[second], mapping[first]


def _contradictory_policy(data: dict[str, Any]) -> None:
    agent = _agent(data, 0)
    agent["what_not_to_share"].append(agent["what_to_share"][0])


def _objective_leakage(data: dict[str, Any]) -> None:
    agent = _agent(data, 0)
    item = agent["desired_knowledge"][0]
    value = next(f["value"] for f in _holder(data, item)["knowledge"] if f["id"] == item)
    agent["primary_objective"] += f" I already have it on good authority that it is {value}."


def _public_secret(data: dict[str, Any]) -> None:
    agent = _agent(data, 0)
    item = agent["what_not_to_share"][0]
    next(f for f in agent["knowledge"] if f["id"] == item)["sensitivity"] = "public"


def _reachable_secret(data: dict[str, Any]) -> None:
    item = _agent(data, 0)["cannot_know_knowledge"][0]
    holder = _holder(data, item)
    holder["what_not_to_share"].remove(item)
    holder["what_to_share"].append(item)


def _foreign_share(data: dict[str, Any]) -> None:
    other = _agent(data, 1)["what_to_share"][0]
    _agent(data, 0)["what_to_share"].append(other)


class SeedRecipe(BaseModel):
    """Why a bad seed is bad: the rule it breaks (None for a rejected candidate of the
    silver pool, whose reason is the pipeline's rejection) and an explanation."""

    rule: Rule | None
    reason: str


_RECIPES: dict[Sector, tuple[Mutation, SeedRecipe]] = {
    Sector.HEALTHCARE: (
        _unreachable_goal,
        SeedRecipe(
            rule=Rule.GOAL_SHAREABILITY,
            reason="The first agent needs an item that its only holder is told never to share, "
            "so that goal can never be reached under the declared policies.",
        ),
    ),
    Sector.TECHNOLOGY: (
        _missing_origin,
        SeedRecipe(
            rule=Rule.GOAL_SOURCING,
            reason="The first agent wants a supplier audit outcome that no agent knows: the "
            "desired item has no origin in anyone's pre-interaction knowledge.",
        ),
    ),
    Sector.DEFENSE: (
        _wrong_domain_map,
        SeedRecipe(
            rule=Rule.DOMAIN_MAP,
            reason="Two domains of the knowledge domain map point at each other's experts, so "
            "agents following the map ask the wrong person.",
        ),
    ),
    Sector.FINANCE: (
        _contradictory_policy,
        SeedRecipe(
            rule=Rule.POLICY_CONSISTENCY,
            reason="The first agent's policy both shares and withholds the same item.",
        ),
    ),
    Sector.EDUCATION: (
        _objective_leakage,
        SeedRecipe(
            rule=Rule.OBJECTIVE_LEAKAGE,
            reason="The first agent's objective already states the value it is supposed to "
            "find out, so it has no reason to ask for it.",
        ),
    ),
    Sector.ENTERTAINMENT: (
        _public_secret,
        SeedRecipe(
            rule=Rule.SENSITIVITY_CONSISTENCY,
            reason="An item the first agent must never share is labelled public.",
        ),
    ),
    Sector.LEGAL: (
        _reachable_secret,
        SeedRecipe(
            rule=Rule.CANNOT_KNOW_UNREACHABLE,
            reason="Something the first agent must never learn is on its holder's share list, "
            "so a policy-following colleague would hand it over.",
        ),
    ),
    Sector.MANUFACTURING: (
        _foreign_share,
        SeedRecipe(
            rule=Rule.POLICY_CONSISTENCY,
            reason="The first agent's share list includes an item only another agent holds.",
        ),
    ),
}


class BadSeed(BaseModel):
    """A sector's bad seed: the flawed scenario, the rule it breaks and why."""

    sector: Sector
    base: str
    recipe: SeedRecipe
    scenario: Scenario


@cache
def _core() -> tuple[Scenario, ...]:
    return tuple(load_split("core"))


GOOD_SEEDS: dict[Sector, tuple[str, str]] = {
    Sector.HEALTHCARE: ("healthcare-icu-transfer", "healthcare-trial-enrolment"),
    Sector.TECHNOLOGY: ("technology-data-migration", "technology-payments-release"),
    Sector.DEFENSE: ("defense-exercise-logistics", "defense-radar-source-selection"),
    Sector.FINANCE: ("finance-green-bond", "finance-sme-loan"),
    Sector.EDUCATION: ("education-annual-review", "education-module-accreditation"),
    Sector.ENTERTAINMENT: ("entertainment-festival-lineup", "entertainment-film-reschedule"),
    Sector.LEGAL: ("legal-acquisition-diligence", "legal-mediation-prep"),
    Sector.MANUFACTURING: ("manufacturing-caliper-containment", "manufacturing-rush-order"),
}
"""The two good seeds of each sector (A.3: "two good seeds and one bad seed"), `core`
scenarios named by id, so the `core` split can grow without changing what the
generator is shown."""


def good_seeds(sector: Sector) -> list[Scenario]:
    """The sector's two good seeds (`GOOD_SEEDS`)."""
    core = {s.id: s for s in _core()}
    names = GOOD_SEEDS.get(sector, ())
    missing = [name for name in names if name not in core]
    if not names or missing:
        raise GenerationError(
            f"no good seed for sector {sector.value!r}"
            + (f": {', '.join(missing)} not in the core split" if missing else "")
        )
    return [core[name] for name in names]


def bad_seed(sector: Sector) -> BadSeed:
    """The sector's bad seed (module docstring)."""
    base = good_seeds(sector)[0]
    mutate, recipe = _RECIPES[sector]
    data = base.model_dump(mode="json")
    mutate(data)
    data["id"] = f"{base.id}-flawed"
    scenario = Scenario.model_validate(data)
    return BadSeed(sector=sector, base=base.id, recipe=recipe, scenario=scenario)


# -- edits ----------------------------------------------------------------------------------


def _flatten(value: Any, path: str, out: dict[str, Any]) -> None:
    if isinstance(value, dict):
        for key, item in value.items():
            _flatten(item, f"{path}/{key}", out)
    elif isinstance(value, list):
        for index, item in enumerate(value):
            key = index
            if isinstance(item, dict):
                key = item.get("name", item.get("id", index))
            _flatten(item, f"{path}[{key}]", out)
        if not value:
            out[path] = []
    else:
        out[path] = value


def fields(scenario: Scenario) -> dict[str, Any]:
    """Leaf fields by path (agents keyed by name, facts by id)."""
    out: dict[str, Any] = {}
    _flatten(scenario.model_dump(mode="json", exclude={"id"}), "", out)
    return out


def edit_fraction(before: Scenario, after: Scenario) -> float:
    """Share of `before`'s fields that `after` changes, drops or adds (0 = identical)."""
    a, b = fields(before), fields(after)
    changed = sum(1 for p, v in a.items() if b.get(p, object()) != v)
    added = sum(1 for p in b if p not in a)
    return (changed + added) / max(1, len(a))


# -- pipeline -------------------------------------------------------------------------------


MIN_AGENTS, MAX_AGENTS = 2, 8
"""Agent counts a request may ask for."""


class GenerationRequest(BaseModel):
    """One scenario to generate."""

    sector: Sector
    agents: int = Field(ge=MIN_AGENTS, le=MAX_AGENTS)
    scenario_id: str


class JudgeRecord(BaseModel):
    """The judge's strict record (A.4)."""

    is_logically_correct: bool
    anomalies_reason: str
    corrected_scenario: Scenario | None = None


class GenerationRecord(BaseModel):
    """What happened to one request (one line of generation_log.jsonl)."""

    schema_version: Literal[1] = SCHEMA_VERSION
    request: GenerationRequest
    good_seed: str
    bad_seed: str
    status: Literal["accepted", "rejected"]
    reason: str
    judge_records: list[JudgeRecord] = Field(default_factory=list)
    violations: list[list[str]] = Field(default_factory=list)
    edit_fraction: float = 0.0
    candidate: Scenario | None = None
    scenario: Scenario | None = None


class PipelineSettings(BaseModel):
    """Knobs of the pipeline (module docstring)."""

    max_corrections: int = Field(default=2, ge=0)
    max_edit_fraction: float = Field(default=0.25, ge=0.0, le=1.0)
    min_novelty: float = Field(default=0.5, ge=0.0, le=1.0)
    max_attempts: int = Field(default=3, ge=1)
    generator_config: GenerateConfig = GenerateConfig(temperature=0.7)
    judge_config: GenerateConfig = GenerateConfig(temperature=0.0)

    def sampled(self, sampling: Mapping[str, Sampling]) -> PipelineSettings:
        """These settings with `sampling` (keyed `generator` or `judge`) over the
        configs, field by field."""
        unknown = sorted(set(sampling) - set(PARTS))
        if unknown:
            raise ConfideError(
                f"sampling for {', '.join(map(repr, unknown))}: the generation pipeline "
                f"has only {' and '.join(PARTS)}"
            )
        return self.model_copy(update={
            f"{part}_config": getattr(self, f"{part}_config").model_copy(
                update=sampling[part].overrides()
            )
            for part in PARTS if part in sampling
        })


PARTS = ("generator", "judge")
"""The pipeline's model calls that take sampling settings."""
PAPER_SAMPLING: dict[str, Sampling] = {
    "generator": Sampling(reasoning_effort="low"),
    "judge": Sampling(reasoning_effort="high"),
}
"""Section 3.2 and A.4: GPT-5.2 generates at low reasoning effort (throughput and
diversity), the judge validates and corrects at high."""


def _schema(model: type[BaseModel]) -> str:
    return json.dumps(model.model_json_schema(), separators=(",", ":"))


def generator_messages(
    request: GenerationRequest, good: Scenario, bad: BadSeed
) -> list[ChatMessage]:
    """The generator prompt of one request."""
    prompt = render(
        "generation_generator.txt",
        sector=request.sector.value,
        agents=request.agents,
        good=scenario_to_json(good),
        bad=scenario_to_json(bad.scenario),
        bad_reason=bad.recipe.reason,
        scenario_id=request.scenario_id,
        schema=_schema(Scenario),
    )
    return [ChatMessage(role="user", content=prompt)]


def judge_messages(candidate: Scenario) -> list[ChatMessage]:
    """The judge prompt for one candidate, with the rule validator's findings."""
    found = [v.render() for v in validate_scenario(candidate)]
    prompt = render(
        "generation_judge.txt",
        violations="\n".join(f"- {line}" for line in found) or "- nothing",
        candidate=scenario_to_json(candidate),
        schema=_schema(JudgeRecord),
    )
    return [ChatMessage(role="user", content=prompt)]


async def generate_one(
    generator: ChatModel,
    judge: ChatModel,
    request: GenerationRequest,
    rng: random.Random,
    settings: PipelineSettings | None = None,
    bad: BadSeed | None = None,
) -> GenerationRecord:
    """Run one request through generation, judging, correction and validation; `bad`
    defaults to the sector's curated bad seed."""
    settings = settings or PipelineSettings()
    good = rng.choice(good_seeds(request.sector))
    bad = bad or bad_seed(request.sector)
    record = GenerationRecord(
        request=request,
        good_seed=good.id,
        bad_seed=bad.scenario.id,
        status="rejected",
        reason="",
    )
    drafted = await generate_structured(
        generator,
        generator_messages(request, good, bad),
        Scenario,
        config=settings.generator_config,
        max_attempts=settings.max_attempts,
    )
    if not drafted.ok or drafted.value is None:
        record.reason = f"generator output never matched the schema: {drafted.error}"
        return record
    candidate = drafted.value.model_copy(
        update={"id": request.scenario_id, "sector": request.sector}
    )
    record.candidate = candidate
    if len(candidate.agents) != request.agents:
        record.reason = f"generator wrote {len(candidate.agents)} agents, {request.agents} asked"
        return record
    novelty = edit_fraction(good, candidate)
    if novelty < settings.min_novelty:
        record.reason = f"candidate is too close to good seed {good.id} ({novelty:.0%} changed)"
        return record
    current = candidate
    for _ in range(settings.max_corrections + 1):
        reviewed = await generate_structured(
            judge,
            judge_messages(current),
            JudgeRecord,
            config=settings.judge_config,
            max_attempts=settings.max_attempts,
        )
        if not reviewed.ok or reviewed.value is None:
            record.reason = f"judge output never matched the schema: {reviewed.error}"
            return record
        verdict = reviewed.value
        record.judge_records.append(verdict)
        if verdict.corrected_scenario is not None:
            fixed = verdict.corrected_scenario.model_copy(
                update={"id": request.scenario_id, "sector": request.sector}
            )
            problem = _not_minimal(candidate, fixed, settings.max_edit_fraction)
            if problem:
                record.reason = problem
                return record
            current = fixed
        elif not verdict.is_logically_correct:
            record.reason = f"judge rejected the candidate: {verdict.anomalies_reason}"
            return record
        record.edit_fraction = edit_fraction(candidate, current)
        remaining = validate_scenario(current)
        record.violations.append([v.render() for v in remaining])
        if not remaining:
            record.status, record.reason, record.scenario = "accepted", "", current
            return record
    record.reason = f"still breaks rules after {settings.max_corrections} correction round(s)"
    return record


def _not_minimal(candidate: Scenario, fixed: Scenario, limit: float) -> str | None:
    """Why a correction is not a minimal, schema-preserving edit (None if it is)."""
    before = [(a.name, a.role) for a in candidate.agents]
    after = [(a.name, a.role) for a in fixed.agents]
    if before != after:
        return f"correction changed the agents ({before} -> {after})"
    fraction = edit_fraction(candidate, fixed)
    if fraction > limit:
        return f"correction is not minimal: {fraction:.0%} of fields changed (limit {limit:.0%})"
    return None


def sector_named(text: str) -> Sector:
    """The sector called `text`: its value (``Software/Technology``), its name
    (``technology``) or its id slug (``software-technology``), in any case."""
    wanted = text.strip().casefold()
    for sector in Sector:
        if wanted in (sector.value.casefold(), sector.name.casefold(), _slug(sector)):
            return sector
    known = ", ".join(sector.name.lower() for sector in Sector)
    raise GenerationError(f"unknown sector {text!r}; use one of {known}")


def _slug(sector: Sector) -> str:
    return sector.value.lower().replace("/", "-")


_FILE_WORD = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]*")


def scenario_path(out: Path, scenario_id: str) -> Path:
    """`out/<id>.json`; GenerationError for an id that would name a file elsewhere."""
    if not _FILE_WORD.fullmatch(scenario_id):
        raise GenerationError(f"scenario id {scenario_id!r} cannot name a file in {out}")
    return out / f"{scenario_id}.json"


def plan_requests(
    sectors: Sequence[Sector],
    per_sector: int,
    agent_counts: Sequence[int] = (3, 4, 5),
    *,
    prefix: str = "gen",
) -> list[GenerationRequest]:
    """`per_sector` requests per sector, cycling through the agent counts. The prefix
    names files in the output directory, so it is a plain file-name word."""
    if not _FILE_WORD.fullmatch(prefix):
        raise GenerationError(
            f"prefix {prefix!r} must be letters, digits, '.', '_' or '-', starting with a "
            "letter or digit (it names files in the output directory)"
        )
    if per_sector < 1 or not agent_counts:
        raise GenerationError(
            f"need per_sector >= 1 and agent counts, got {per_sector}, {list(agent_counts)}"
        )
    outside = [n for n in agent_counts if not MIN_AGENTS <= n <= MAX_AGENTS]
    if outside:
        raise GenerationError(
            f"agent counts must be in [{MIN_AGENTS}, {MAX_AGENTS}], got {outside}"
        )
    return [
        GenerationRequest(
            sector=sector,
            agents=agent_counts[i % len(agent_counts)],
            scenario_id=f"{prefix}-{_slug(sector)}-{i + 1:03d}",
        )
        for sector in sectors
        for i in range(per_sector)
    ]


async def run_generation(
    generator: ChatModel,
    judge: ChatModel,
    requests: Sequence[GenerationRequest],
    out_dir: Path | str,
    *,
    seed: int = 0,
    settings: PipelineSettings | None = None,
    silver: bool = False,
) -> list[GenerationRecord]:
    """Run every request (in order, one RNG seeded by `seed`), write the accepted
    scenarios as JSON and append each record to generation_log.jsonl.

    `silver=True` is the A.6 loop: every rejected candidate joins its sector's pool of
    bad examples (with the rejection as its reason), and each request's bad example is
    drawn from that pool, curated bad seed included, to steer the generator away from
    the failures it has already made."""
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    rng = random.Random(seed)
    pool: dict[Sector, list[BadSeed]] = {}
    records = []
    with (out / "generation_log.jsonl").open("a", encoding="utf-8") as log:
        for request in requests:
            bad = None
            if silver:
                choices = pool.setdefault(request.sector, [bad_seed(request.sector)])
                bad = rng.choice(choices)
            record = await generate_one(generator, judge, request, rng, settings, bad)
            if record.scenario is not None:
                save_scenario(record.scenario, scenario_path(out, record.scenario.id))
            elif silver and record.candidate is not None:
                recipe = SeedRecipe(rule=None, reason=record.reason)
                pool[request.sector].append(
                    BadSeed(
                        sector=request.sector,
                        base=record.candidate.id,
                        recipe=recipe,
                        scenario=record.candidate,
                    )
                )
            log.write(record.model_dump_json() + "\n")
            log.flush()
            records.append(record)
    return records


async def generate_with_specs(
    generator: str,
    judge: str,
    requests: Sequence[GenerationRequest],
    out_dir: Path | str,
    *,
    seed: int = 0,
    settings: PipelineSettings | None = None,
    silver: bool = False,
    model_options: dict[str, Any] | None = None,
    sampling: Mapping[str, Sampling] | None = None,
) -> list[GenerationRecord]:
    """`run_generation` with models named by spec (`openai/gpt-5`, `local/smollm2`,
    `mock/...`); `model_options` go to `confide.llm.get_model` (cache_dir, base_url...),
    `sampling` (keyed `generator` or `judge`) over `settings`' configs."""
    options = dict(model_options or {})
    settings = (settings or PipelineSettings()).sampled(sampling or {})
    return await run_generation(
        get_model(generator, **options),
        get_model(judge, **options),
        requests,
        out_dir,
        seed=seed,
        settings=settings,
        silver=silver,
    )

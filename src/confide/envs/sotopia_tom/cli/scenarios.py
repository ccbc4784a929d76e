"""`confide scenarios validate | generate`: Sotopia-ToM scenario files.

Declared in `declaration.py` as `confide scenarios` (imported when it runs).

`validate FILE...` checks files against the rules. Files may hold one scenario or a list,
in the native JSON format or the paper's public generator format. Import problems
(unresolved names, duplicate ids) and rule violations are printed in two
sections, each finding as `FILE: [kind] scenario S, agent A, item I: message`, and the
summary counts each kind separately and names the scenarios where A.5.4's expertise
check is not possible (`validation.py`). Exit status: 0 when every scenario passes, 1 when
there is any finding, 2 when a file cannot be read or parsed (that takes precedence,
since its scenarios were not checked).

`generate` runs the generation pipeline (the Sotopia-ToM paper §3.2, A.3, A.4, A.6;
`confide.envs.sotopia_tom.generation`) for `--per-sector` requests in each `--sector`
(default: all eight), cycling through the `--agents` counts, with the `--generator` and
`--judge` models given as specs:

    confide scenarios generate --sector finance --sector legal --per-sector 5 \
        --generator openai/gpt-5 --judge openai/gpt-5 --out scenarios/generated \
        --sampling generator.reasoning_effort=low --sampling judge.reasoning_effort=high

`--sampling WHO.FIELD=VALUE` (WHO `generator` or `judge`, the fields of `confide run
--sampling`) sets each model's sampling over the pipeline's defaults; the line above is
the paper's setting (section 3.2, A.4; `generation.PAPER_SAMPLING`).

Accepted scenarios go to `OUT/<id>.json`, every request to `OUT/generation_log.jsonl`;
one line per request is printed. Rejections are outcomes of the pipeline, not errors:
the exit status is 0 whenever the pipeline ran.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer

from confide.cli.term import HELP_MARKUP
from confide.errors import ConfideError

if TYPE_CHECKING:
    from confide.core.sampling import Sampling

app = typer.Typer(no_args_is_help=True, rich_markup_mode=HELP_MARKUP)


@app.callback()
def scenarios() -> None:
    """Sotopia-ToM only: validate and generate scenario files."""


@app.command("validate")
def validate(
    files: Annotated[
        list[Path], typer.Argument(help="Scenario JSON files (native or generator format).")
    ],
) -> None:
    """Report import problems and rule violations, each with scenario id, agent and item."""
    from collections import Counter

    from confide.envs.sotopia_tom.reachability import validate_reachable  # `--help` fast

    reports = validate_reachable(files)
    readable = [r for r in reports if r.error is None]
    for report in reports:
        if report.error is not None:
            typer.echo(f"error: {report.error}", err=True)
    problems = [(r.path, v) for r in readable for v in r.import_problems]
    violations = [(r.path, v) for r in readable for v in r.rule_violations]
    for title, found in (("import problems", problems), ("rule violations", violations)):
        if found:
            typer.echo(f"{title}:")
            for path, finding in found:
                typer.echo(f"{path}: {finding.render()}")
    kinds = Counter(v.rule.value for _, v in problems)
    detail = ", ".join(f"{n} {kind}" for kind, n in kinds.items())
    scenarios = sum(len(r.scenario_ids) for r in readable)
    summary = (
        f"{scenarios} scenario(s) checked, {len(problems)} import problem(s)"
        + (f" ({detail})" if detail else "")
        + f", {len(violations)} rule violation(s)"
    )
    unreadable = len(reports) - len(readable)
    if unreadable:
        summary += f", {unreadable} file(s) unreadable"
    typer.echo(summary)
    unchecked = sum(len(r.expertise_unchecked) for r in readable)
    if unchecked:
        typer.echo(
            f"A.5.4 expertise not checkable in {unchecked} scenario(s): their facts carry no "
            "domain; only that each mapped role exists and each desired item's holder is mapped"
        )
    if unreadable:
        raise typer.Exit(code=2)
    if problems or violations:
        raise typer.Exit(code=1)


@app.command("generate")
def generate(
    generator: Annotated[str, typer.Option(help="Generator model spec, e.g. openai/gpt-5.")],
    judge: Annotated[str, typer.Option(help="Judge model spec (A.4 review and correction).")],
    out: Annotated[Path, typer.Option(help="Directory for the scenarios and the log.")],
    sector: Annotated[
        list[str] | None,
        typer.Option(help="Sector (name or value, e.g. finance); repeat it. Default: all."),
    ] = None,
    per_sector: Annotated[int, typer.Option(help="Scenarios requested per sector.")] = 1,
    agents: Annotated[
        list[int] | None,
        typer.Option(help="Agent count(s), cycled through per sector. Default: 3, 4, 5."),
    ] = None,
    seed: Annotated[int, typer.Option(help="Seed of the seed-scenario choices.")] = 0,
    silver: Annotated[
        bool, typer.Option(help="Reuse rejected candidates as bad examples (A.6).")
    ] = False,
    prefix: Annotated[str, typer.Option(help="Prefix of the generated scenario ids.")] = "gen",
    cache: Annotated[
        Path | None, typer.Option(help="On-disk model response cache directory.")
    ] = None,
    sampling: Annotated[
        list[str] | None,
        typer.Option(help="Sampling setting WHO.FIELD=VALUE, WHO generator or judge, e.g. "
                     "generator.reasoning_effort=low (the paper's; judge: high)."),
    ] = None,
) -> None:
    """Generate, judge, correct and validate new scenarios."""
    import asyncio

    from confide.envs.sotopia_tom.generation import (  # imported here: `--help` stays fast
        generate_with_specs,
        plan_requests,
        sector_named,
    )
    from confide.envs.sotopia_tom.scenario import Sector

    sectors = [sector_named(name) for name in sector] if sector else list(Sector)
    requests = plan_requests(sectors, per_sector, tuple(agents or (3, 4, 5)), prefix=prefix)
    options = {"cache_dir": cache} if cache is not None else {}
    settings = _sampling(sampling)
    records = asyncio.run(
        generate_with_specs(
            generator, judge, requests, out, seed=seed, silver=silver, model_options=options,
            sampling=settings,
        )
    )
    for record in records:
        outcome = "accepted" if record.status == "accepted" else f"rejected: {record.reason}"
        typer.echo(f"{record.request.scenario_id}: {outcome}")
    accepted = sum(record.status == "accepted" for record in records)
    typer.echo(
        f"{accepted} of {len(records)} scenario(s) accepted; written to {out}, "
        f"log {out / 'generation_log.jsonl'}"
    )


def _sampling(items: list[str] | None) -> dict[str, Sampling]:
    """`--sampling` flags as settings per pipeline model; a bad field or value is an error
    naming the flag."""
    from pydantic import ValidationError

    from confide.cli.run import sampling_flags
    from confide.core.sampling import Sampling

    result = {}
    for who, fields in sampling_flags(items).items():
        try:
            result[who] = Sampling.model_validate(fields)
        except ValidationError as exc:
            problems = "; ".join(f"{'.'.join(map(str, e['loc']))}: {e['msg']}"
                                 for e in exc.errors())
            raise ConfideError(f"--sampling {who}: {problems}") from None
    return result

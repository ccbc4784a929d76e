"""`confide eval MODEL [MODEL ...]`: each model through every benchmark, one profile each
and a comparison (`confide.evaluate`)."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from confide.cli.term import console


def eval_command(
    models: Annotated[
        list[str] | None,
        typer.Argument(help="Model specs (provider/model), or 'reference' for each "
                       "benchmark's reference participants; with --compare, profile "
                       "directories."),
    ] = None,
    design: Annotated[
        str, typer.Option(help="quick: a stratified subset of each suite, every condition, "
                          "fixed seeds; paper: the papers' designs.")
    ] = "quick",
    role: Annotated[
        list[str] | None,
        typer.Option(help="Bind a role: judge=SPEC (every benchmark with a judge) or "
                     "BENCHMARK.ROLE=SPEC for one benchmark's role, e.g. its customer simulator."),
    ] = None,
    out: Annotated[Path, typer.Option(help="Evaluation directory.")] = Path("eval"),
    compare: Annotated[
        bool,
        typer.Option("--compare", help="The arguments are profile directories "
                     "(OUT/<model>): compare them instead of running anything."),
    ] = False,
    concurrency: Annotated[int | None, typer.Option(help="Episodes at once, as in run.")] = None,
    cache: Annotated[Path | None, typer.Option(help="Model response cache directory.")] = None,
    price_table: Annotated[Path | None, typer.Option(help="Price table JSON.")] = None,
    backend: Annotated[str | None, typer.Option(help="local (default) or ray.")] = None,
    ray_address: Annotated[str | None, typer.Option(help="With --backend ray.")] = None,
    ray_traces: Annotated[str | None, typer.Option(help="With --backend ray.")] = None,
    yes: Annotated[bool, typer.Option("--yes", help="Do not ask before paid calls.")] = False,
    fresh: Annotated[bool, typer.Option(help="Start each run over.")] = False,
    progress: Annotated[bool, typer.Option(help="Show a progress bar.")] = True,
    dry_run: Annotated[
        bool, typer.Option(help="Check everything, print the plans, commands and cost; run "
                           "nothing.")
    ] = False,
) -> None:
    """Run each model as the evaluated agent in every benchmark; write its profile.

    Each model's three runs are ordinary run directories under OUT/<model>/ (resumed when
    run again), followed by OUT/<model>/profile.{json,md,html}; with several models,
    OUT/comparison.{json,md,html}. Every benchmark's preflight runs before anything
    does, and paid calls are confirmed first (skip with --yes)."""
    from confide.cli.run import _pairs
    from confide.errors import ConfideError
    from confide.evaluate import (
        EvalDeclined,
        load_profile,
        plan_evaluation,
        run_evaluation,
        write_comparison,
    )
    from confide.evaluate import (
        compare as compare_profiles,
    )
    from confide.evaluate import (
        dry_run as describe,
    )
    from confide.runner.interrupt import EXIT_CODE

    term = console()
    if compare:
        comparison = compare_profiles([load_profile(Path(p)) for p in models or []])
        term.print(f"wrote {', '.join(map(str, write_comparison(comparison, out)))}")
        return
    if not models:
        raise ConfideError("give a model spec (or --compare DIR DIR ...)")
    options = {"concurrency": concurrency, "cache_dir": str(cache) if cache else None,
               "price_table": str(price_table) if price_table else None, "backend": backend,
               "ray_address": ray_address, "ray_traces": ray_traces}
    roles = _pairs(role, "--role", parse=False)
    evaluations = [plan_evaluation(m, design=design, roles=roles, out=out, run_options=options)
                   for m in models]
    if dry_run:
        errors = []
        for evaluation in evaluations:
            lines, error = describe(evaluation)
            for line in lines:
                term.print(line, soft_wrap=True, markup=False)
            if error is not None:
                errors.append(str(error))
        if errors:
            raise ConfideError("\n".join(errors))
        return
    profiles = []
    for evaluation in evaluations:
        try:
            summaries, profile = run_evaluation(
                evaluation, yes=yes, confirm=lambda q: typer.confirm(q, default=False),
                show_progress=progress, fresh=fresh, freeze_gc=True)
        except EvalDeclined:
            term.print("not confirmed: nothing was run")
            raise typer.Exit(1) from None
        if profile is None:
            term.print(f"[yellow]interrupted[/yellow] in {summaries[-1].run_dir}; run the "
                       "same command again to resume", soft_wrap=True)
            raise typer.Exit(EXIT_CODE)
        failed = sum(len(s.failed) for s in summaries)
        term.print(f"{evaluation.model}: profile in {evaluation.root}/profile.html "
                   f"({sum(s.episodes for s in summaries)} episodes, {failed} failed)",
                   soft_wrap=True, markup=False)
        profiles.append(profile)
    if len(profiles) > 1:
        written = write_comparison(compare_profiles(profiles), out)
        term.print(f"comparison in {written[2]}", soft_wrap=True, markup=False)

"""Every benchmark's declaration (what `confide benchmarks`, the glossary, the report's
figures and the CLI's table read without importing any environment) matches its spec,
and the CLI starts without importing the heavy layers."""

import subprocess
import sys
from pathlib import Path

from confide.registry import _DECLARATIONS, benchmark_ids, catalog, get_benchmark

SRC = str(Path(__file__).resolve().parents[1] / "src")


def test_every_declaration_matches_its_spec() -> None:
    entries = [entry for entry in catalog()[0] if entry.id in _DECLARATIONS]  # and plugins
    assert [entry.id for entry in entries] == sorted(_DECLARATIONS)
    assert set(_DECLARATIONS) <= set(benchmark_ids())
    for entry in entries:
        spec = get_benchmark(entry.id)
        assert (spec.id, spec.description, spec.suites, spec.participants, spec.conditions) == (
            entry.id, entry.description, entry.suites, entry.participants, entry.conditions
        )


def test_help_and_benchmarks_import_no_environment_or_runner() -> None:
    for args in ("--help", "benchmarks", "run --help"):
        done = subprocess.run(
            [sys.executable, "-X", "importtime", "-m", "confide.cli.main", *args.split()],
            capture_output=True, text=True, timeout=120, env={"PYTHONPATH": SRC, "PATH": ""},
        )
        assert done.returncode == 0, done.stderr
        imported = {line.rsplit("|", 1)[-1].strip() for line in done.stderr.splitlines()}
        heavy: tuple[str, ...] = ("confide.runner", "confide.stats",
                                  "confide.llm", "confide.core", "scipy", "ortools", "numpy")
        if args != "run --help":  # typer needs pydantic to parse options, rich for tables
            heavy += ("pydantic", "yaml", "asyncio")
        if args == "--help":
            heavy += ("rich",)
        assert sorted(m for m in imported if m.startswith(heavy)) == [], args
        # of the environments, only their light packages and declarations
        assert sorted(
            m for m in imported
            if m.startswith("confide.envs.") and m.count(".") > 2
            and not m.endswith(".declaration")
        ) == [], args
        assert "benchmarks" not in args or "sotopia-tom" in done.stdout


def test_the_judge_is_each_paper_benchmarks_one_scoring_role() -> None:
    """A role only scoring uses is flagged on its RoleSpec (`confide rescore` may rebind
    it); the spec derives `score_roles` from the flags and has no field of its own."""
    from dataclasses import fields

    from confide.core.benchmark import BenchmarkSpec

    for benchmark in ("calbench", "sotopia-tom", "incognita"):
        spec = get_benchmark(benchmark)
        assert [r.name for r in spec.roles if r.scoring] == ["judge"]
        assert spec.score_roles == ("judge",)
    assert get_benchmark("demo").score_roles == ()
    assert {"score_roles", "references"}.isdisjoint(f.name for f in fields(BenchmarkSpec))

"""The registry's catalog (what `confide benchmarks` lists without importing any
environment) matches the specs, and the CLI starts without importing the heavy layers."""

import subprocess
import sys
from pathlib import Path

from confide.registry import _SPECS, CATALOG, benchmark_ids, get_benchmark

SRC = str(Path(__file__).resolve().parents[1] / "src")


def test_catalog_matches_every_spec() -> None:
    assert [entry.id for entry in CATALOG] == sorted(_SPECS)  # installed plugins come on top
    assert set(_SPECS) <= set(benchmark_ids())
    for entry in CATALOG:
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
        heavy: tuple[str, ...] = ("confide.envs", "confide.runner", "confide.stats",
                                  "confide.llm", "confide.core", "scipy", "ortools", "numpy")
        if args != "run --help":  # typer needs pydantic to parse options, rich for tables
            heavy += ("pydantic", "yaml", "asyncio")
        if args == "--help":
            heavy += ("rich",)
        assert sorted(m for m in imported if m.startswith(heavy)) == [], args
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

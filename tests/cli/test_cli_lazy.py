"""The lazy command layer: `confide --help` imports no command and no environment (only
the benchmarks' declarations), and the table of `cli.main.commands()` (the shared
commands and those the benchmarks declare) lists exactly what the real commands say."""

from __future__ import annotations

import inspect
import os
import subprocess
import sys
from pathlib import Path

import pytest
import typer
from typer.testing import CliRunner

from confide.cli.lazy import Lazy, LazyGroup
from confide.cli.main import app, commands

SRC = str(Path(__file__).resolve().parents[2] / "src")
COMMANDS = commands()
COMMAND_MODULES = {entry.target.partition(":")[0] for entry in COMMANDS}
PROBE = """\
import sys
from confide.cli.main import main
sys.argv = ["confide", *sys.argv[1:]]
try:
    main()
except SystemExit:
    pass
print("MODULES", *sorted(sys.modules))
"""


def _modules_after(*args: str) -> tuple[str, set[str]]:
    """What `confide ARGS` printed (stdout and stderr) in a fresh process, and every module
    it imported."""
    done = subprocess.run([sys.executable, "-c", PROBE, *args], capture_output=True, text=True,
                          env={**os.environ, "PYTHONPATH": SRC}, check=True, timeout=120)
    out, _, modules = done.stdout.rpartition("MODULES ")
    return out + done.stderr, set(modules.split())


def first_paragraph(help_text: str | None) -> str:
    """What a group's help listing shows of a command's help (rich and plain alike)."""
    return inspect.cleandoc(help_text or "").split("\n\n")[0]


def _group() -> LazyGroup:
    group = typer.main.get_command(app)
    assert isinstance(group, LazyGroup)
    return group


@pytest.mark.parametrize("args", [("--help",), ()])
def test_help_imports_no_command_no_pydantic_no_env(args: tuple[str, ...]) -> None:
    out, modules = _modules_after(*args)
    assert [entry.name for entry in COMMANDS] == [
        line.split()[0] for line in out.split("Commands:")[1].splitlines() if line.strip()
    ]
    assert "typer" in modules  # the probe saw what was imported
    assert sorted(COMMAND_MODULES & modules) == []
    assert [m for m in modules if m.startswith("pydantic")] == []
    assert environment_modules(modules) == []
    # nor importlib.metadata: plugin benchmarks' commands are looked up on use only
    assert "importlib.metadata" not in modules


def environment_modules(modules: set[str]) -> list[str]:
    """Modules of an environment beyond its light package and its declaration."""
    return sorted(
        m for m in modules
        if m.startswith("confide.envs.") and m.count(".") > 2 and not m.endswith(".declaration")
    )


def test_a_command_imports_its_own_module_only() -> None:
    out, modules = _modules_after("benchmarks")
    assert "calbench" in out
    assert COMMAND_MODULES & modules == {"confide.cli.run"}
    assert [m for m in modules if m.startswith("pydantic")] == []
    assert environment_modules(modules) == []


def test_benchmark_commands_come_from_their_declarations() -> None:
    """Each benchmark's own commands are listed from its declaration and live in its
    folder; the shared table names none of them."""
    from confide.cli.main import COMMANDS as SHARED
    from confide.registry import catalog

    listed = {entry.name: entry.target for entry in COMMANDS}
    declared = {c.name: c.target for d in catalog()[0] for c in d.commands}
    assert set(declared) == {"leaderboard", "scenarios", "judge", "incognita"}
    assert all(listed[name] == target for name, target in declared.items())
    assert all(target.startswith("confide.envs.") for target in declared.values())
    assert not set(declared) & {entry.name for entry in SHARED}


@pytest.mark.parametrize("entry", COMMANDS, ids=lambda entry: entry.name)
def test_table_matches_the_real_command(entry: Lazy) -> None:
    group = _group()
    name = entry.name
    listed = group.commands[name]
    real = group.load(name, typer.Context(group, info_name="confide"))
    assert real is not None and real is not listed and group.commands[name] is real
    assert first_paragraph(real.help) == entry.help, f"update COMMANDS[{name!r}]"
    assert (real.short_help, real.hidden, real.deprecated) == (None, False, False)


@pytest.mark.parametrize("markup", [None, "rich"])
def test_listing_is_the_same_with_every_command_loaded(
    markup: str | None, capsys: pytest.CaptureFixture[str]
) -> None:
    def help_text(load: bool) -> str:
        group = _group()
        group.rich_markup_mode = markup  # type: ignore[assignment]
        ctx = typer.Context(group, info_name="confide")
        for entry in COMMANDS if load else ():
            group.load(entry.name, ctx)
        return group.get_help(ctx) + capsys.readouterr().out  # rich prints, plain returns

    lazy = help_text(load=False)
    assert "Inspect episode traces." in lazy
    assert lazy == help_text(load=True)


def test_unknown_commands_are_refused_with_a_suggestion() -> None:
    result = CliRunner().invoke(app, ["rn"])
    assert result.exit_code == 2
    assert "No such command 'rn'. Did you mean 'run'?" in result.output

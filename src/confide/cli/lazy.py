"""A command group that imports a command's module only when that command runs (`confide --help` in
under 0.5 s).

Building every typer command means importing its module and reading its signature, which
costs more than the whole of `confide --help`. So the group is given a static table: each
command's name, where it lives (`module:attribute`, a function or a `typer.Typer`) and
the first paragraph of its help, which is all a group's help listing shows. The listing
is rendered from listing-only commands carrying that text (`_Listed`); resolving a
command to run it (or to print its own `--help`) imports the module and builds the real
command exactly as `app.command(name)(function)` or `app.add_typer(sub_app, name=name)`
would. A test
compares the table with the real commands so the two cannot drift.

typer 0.29 coerces an option's value through a pydantic TypeAdapter unless it is already a
bool, and an absent `--help` flag is None: so by default every command, even one without
options (`confide benchmarks`), imports pydantic (doubling its start-up). The group and
the commands it loads get a `--help` that defaults to False instead, which typer passes
through untouched.
"""

from __future__ import annotations

import importlib
from dataclasses import dataclass
from typing import Any, ClassVar

import typer
from typer._click import Context
from typer.core import TyperCommand, TyperGroup, TyperOption


@dataclass(frozen=True)
class Lazy:
    """One command of a `LazyGroup`, known without importing it."""

    name: str
    target: str
    """`module:attribute`: a command function, or a `typer.Typer` added as a subgroup."""
    help: str
    """The first paragraph of the command's help, as the group's listing shows it."""

    def build(self, group: TyperGroup) -> TyperCommand | TyperGroup:
        """Import the target and build its command as the group's own Typer would."""
        module, _, attribute = self.target.partition(":")
        target = getattr(importlib.import_module(module), attribute)
        holder = typer.Typer(rich_markup_mode=group.rich_markup_mode,
                             suggest_commands=group.suggest_commands)
        if isinstance(target, typer.Typer):
            holder.add_typer(target, name=self.name)
        else:
            # a command may bring its own click class (`run`: benchmark-aware --help)
            holder.command(self.name, cls=getattr(target, "command_class", None))(target)
        built = typer.main.get_group(holder).commands[self.name]
        assert isinstance(built, TyperCommand | TyperGroup)
        return built


class _Listed(TyperCommand):
    """A `Lazy` command as the group's listing shows it, before its module is imported;
    resolving the name replaces it with the real command, so it is never run."""

    def __init__(self, entry: Lazy) -> None:
        super().__init__(entry.name, help=entry.help)
        self.entry = entry


class LazyGroup(TyperGroup):
    """A typer group whose commands come from `entries()`, each imported on use.

    Subclass it with the table (`table`, or `entries` when the table is computed) and pass
    the subclass as `typer.Typer(cls=...)`."""

    table: ClassVar[tuple[Lazy, ...]] = ()

    def __init__(self, **attrs: Any) -> None:
        super().__init__(**attrs)
        self.add_entries(self.entries())

    def add_entries(self, entries: tuple[Lazy, ...]) -> None:
        """Know `entries` too, each imported on use; a name the group has is kept."""
        for entry in entries:
            self.commands.setdefault(entry.name, _Listed(entry))

    def entries(self) -> tuple[Lazy, ...]:
        """The group's commands, in listing order."""
        return self.table

    def load(self, name: str, ctx: Context) -> TyperCommand | TyperGroup | None:
        """The real command `name` (imported and built on first use), or None."""
        command = self.commands.get(name)
        if isinstance(command, _Listed):
            command = self.commands[name] = command.entry.build(self)
            if "help_option_names" not in command.context_settings:  # it inherits ctx's
                _absent_is_false(command.get_help_option(ctx))
        assert command is None or isinstance(command, TyperCommand | TyperGroup)
        return command

    def resolve_command(
        self, ctx: Context, args: list[str]
    ) -> tuple[str | None, TyperCommand | TyperGroup | None, list[str]]:
        """Resolve as typer does (errors and suggestions from the table), then load."""
        name, _, rest = super().resolve_command(ctx, args)
        return name, self.load(name, ctx) if name is not None else None, rest

    def get_help_option(self, ctx: Context) -> TyperOption | None:
        return _absent_is_false(super().get_help_option(ctx))


def _absent_is_false(option: TyperOption | None) -> TyperOption | None:
    """A command's `--help` option (built once, then cached by typer), absent = False."""
    if option is not None and option.default is None:
        option.default = False
    return option

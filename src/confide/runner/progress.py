"""A rich progress bar for runs: episodes done and failed, then the spend so far on a
line of its own (calls, retries, tokens by kind, cost: `spend.spend_line`), which wraps
instead of being cut on a narrow terminal. Without the bar
(`--no-progress`) the spend is printed once at the end, when the run called a model."""

from __future__ import annotations

from collections.abc import Callable, Iterable
from types import TracebackType

from rich.console import Console, RenderableType
from rich.markup import escape
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn
from rich.text import Text

from confide.llm import UsageMeter
from confide.runner.spend import process_totals, spend_line


class _SpendProgress(Progress):
    """Rich's Progress with a wrapped text line under its bar."""

    def __init__(self, *columns: TextColumn | BarColumn | MofNCompleteColumn
                 | TimeElapsedColumn, below: Callable[[], str], console: Console,
                 disable: bool) -> None:
        self._below = below  # before super().__init__, which may render
        super().__init__(*columns, console=console, disable=disable)

    def get_renderables(self) -> Iterable[RenderableType]:
        yield self.make_tasks_table(self.tasks)
        yield Text(self._below(), overflow="fold")


class RunProgress:
    """Context manager around rich's Progress; silent when `enabled` is False, but for
    the spend printed at the end. `label` (the benchmark) starts the bar and the spend
    line, so the lines of several runs in a row (`confide eval`) say whose they are."""

    def __init__(
        self, total: int, already_done: int, meter: UsageMeter, enabled: bool, label: str = ""
    ) -> None:
        self._label = f"{label} " if label else ""
        self._meter = meter
        self._failed = 0
        self._enabled = enabled
        self._console = Console(stderr=True)
        self._progress = _SpendProgress(
            TextColumn(f"[bold]{escape(self._label)}episodes"),
            BarColumn(),
            MofNCompleteColumn(),
            TextColumn("{task.fields[stats]}"),
            TimeElapsedColumn(),
            below=self.spend,
            console=self._console,
            disable=not enabled,
        )
        self._task = self._progress.add_task("run", total=total, completed=already_done,
                                             stats=self._stats())

    def _stats(self) -> str:
        return f"failed {self._failed}"

    def spend(self) -> str:
        """The spend line: this process's calls so far."""
        return f"{self._label}spend: " + spend_line(process_totals(self._meter.total()))

    def advance(self, ok: bool) -> None:
        if not ok:
            self._failed += 1
        self._progress.update(self._task, advance=1, stats=self._stats())

    def __enter__(self) -> RunProgress:
        self._progress.start()
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self._progress.stop()
        if not self._enabled and self._meter.total().calls:
            self._console.print(self.spend(), highlight=False, markup=False, soft_wrap=True)

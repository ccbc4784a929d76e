"""A rich progress bar for runs: episodes done / failed, tokens and cost so far."""

from __future__ import annotations

from types import TracebackType

from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

from confide.llm import UsageMeter


class RunProgress:
    """Context manager around rich's Progress; silent when `enabled` is False."""

    def __init__(self, total: int, already_done: int, meter: UsageMeter, enabled: bool) -> None:
        self._meter = meter
        self._failed = 0
        self._progress = Progress(
            TextColumn("[bold]episodes"),
            BarColumn(),
            MofNCompleteColumn(),
            TextColumn("{task.fields[stats]}"),
            TimeElapsedColumn(),
            console=Console(stderr=True),
            disable=not enabled,
        )
        self._task = self._progress.add_task("run", total=total, completed=already_done,
                                             stats=self._stats())

    def _stats(self) -> str:
        usage = self._meter.total()
        shown = f"${usage.cost_usd:.4f}"
        if usage.unknown_cost_calls:
            shown += f" (+{usage.unknown_cost_calls} calls of unknown price)"
        tokens = usage.prompt_tokens + usage.completion_tokens
        return f"failed {self._failed}  calls {usage.calls}  tokens {tokens}  cost {shown}"

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

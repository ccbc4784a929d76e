"""`confide eval`: one model as the evaluated agent in every benchmark under a named
design (`quick` or `paper`), one profile per model, and comparisons across models.

    import confide
    profile = confide.evaluate("openai/gpt-5-mini", design="quick", yes=True)

The package is callable (`confide.evaluate(...)` is `evaluate(...)`), so the API reads
as one function while its parts stay modules: `design` (experiments from each
benchmark's `eval_design.py`), `evaluation` (preflight, dry run, runs), `profile`
(metrics with bootstrap intervals, cost), `published`, `render` and `compare`.
"""

from __future__ import annotations

import sys
import types
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

from confide.errors import ConfideError
from confide.evaluate.compare import Comparison, compare, load_profile, write_comparison
from confide.evaluate.design import DESIGNS, REFERENCE
from confide.evaluate.evaluation import (
    EvalDeclined,
    Evaluation,
    dry_run,
    plan_evaluation,
    run_evaluation,
)
from confide.evaluate.profile import Profile


def evaluate(
    model: str,
    *,
    design: str = "quick",
    roles: Mapping[str, str] | None = None,
    out: Path | str = "eval",
    run_options: Mapping[str, Any] | None = None,
    yes: bool = False,
    confirm: Callable[[str], bool] | None = None,
    show_progress: bool = False,
    fresh: bool = False,
) -> Profile:
    """Run `model` through every benchmark's `design` and return its profile (also
    written to `out/<model>/profile.{json,md,html}`). `roles`: `NAME=SPEC` bindings
    (`judge`, or `calbench.judge` for one benchmark); `run_options`: `concurrency`,
    `cache_dir`, `price_table`, `backend`, `ray_address`, `ray_traces`. Paid calls need
    `yes=True` or a `confirm` callback that accepts the question."""
    evaluation = plan_evaluation(model, design=design, roles=roles, out=out,
                                 run_options=run_options)
    summaries, profile = run_evaluation(evaluation, yes=yes, confirm=confirm,
                                        show_progress=show_progress, fresh=fresh)
    if profile is None:
        stopped = summaries[-1]
        raise ConfideError(f"interrupted in {stopped.run_dir}: {stopped.finished} of "
                           f"{stopped.episodes} episodes finished; call again to resume")
    return profile


class _CallableModule(types.ModuleType):
    """Makes `confide.evaluate(...)` the function while `confide.evaluate` is this
    package."""

    def __call__(self, model: str, **kwargs: Any) -> Profile:
        return evaluate(model, **kwargs)


sys.modules[__name__].__class__ = _CallableModule

__all__ = [
    "DESIGNS",
    "REFERENCE",
    "Comparison",
    "EvalDeclined",
    "Evaluation",
    "Profile",
    "compare",
    "dry_run",
    "evaluate",
    "load_profile",
    "plan_evaluation",
    "run_evaluation",
    "write_comparison",
]

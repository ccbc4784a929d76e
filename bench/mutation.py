"""Mutation testing of the modules that carry a published number or a guarantee.

Each module listed in `[tool.confide.mutation.modules]` of pyproject.toml is mutated by
cosmic-ray (one small change at a time: a comparison, a boolean, a number, a loop, an
exception...), and only the test files listed for it run against each mutant. A mutant
the tests do not fail on is a survivor: either a behaviour no test pins (write a test of
the behaviour, not of the line) or an equivalent change, named with its reason in
`[[tool.confide.mutation.equivalent]]` (module, operator, the source line, reason).

cosmic-ray rewrites the file it mutates in place, so every module runs in a throwaway copy
of `src/`, `tests/` and the files tests read (COPIED): the worktree is never touched, even
by a killed run. Mutants run one after another (2 cores are shared); a mutant whose tests
pass `--timeout` counts as killed (an infinite loop is a caught change). Operators that
only make nonsense of arithmetic (shifts and bit operators as replacements,
`VariableInserter`) are filtered out before the run; they are listed in EXCLUDED below.
Mutants that cannot change behaviour by construction (inside a type annotation, or the
bare `*` of a signature) are skipped before they run.

    nice python bench/mutation.py src/confide/atomic.py src/confide/redaction.py
    nice python bench/mutation.py --changed      # listed modules this branch touches
    nice python bench/mutation.py --all          # every listed module (long)

Prints, per module, killed / mutants and each survivor (line, operator, the changed
line), then one last line: the kill rate over all mutants run, equivalent ones set apart.
Exit 1 when a survivor is not listed as equivalent.
"""

from __future__ import annotations

import argparse
import ast
import json
import shutil
import signal
import subprocess
import sys
import tempfile
import time
import tomllib
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
BIN = Path(sys.executable).parent
EXCLUDED = (
    r"core/ReplaceBinaryOperator_.*_(RShift|LShift|BitOr|BitAnd|BitXor|Pow|FloorDiv|Mod)$",
    r"core/VariableInserter",
)


COPIED = ("src", "tests", "experiments", "examples")
"""The folders a copy needs: the code, its tests and the files tests read (the shipped
experiment files, the example plugin)."""


@dataclass(frozen=True)
class Mutant:
    module: str
    operator: str
    line: int
    source: str
    """The module's line before the change (stripped)."""
    changed: str
    """The changed line as the diff shows it (stripped), or the diff's first line."""
    outcome: str
    """killed, survived or incompetent (the mutant did not even import)."""


def config() -> tuple[dict[str, list[str]], dict[tuple[str, str, str], str]]:
    """The module -> test files mapping and the equivalent mutants, from pyproject.toml."""
    table = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["confide"]["mutation"]
    modules = {m: list(tests) for m, tests in table["modules"].items()}
    equivalent = {
        (e["module"], e["operator"], e["line"].strip()): e["reason"]
        for e in table.get("equivalent", [])
    }
    return modules, equivalent


def changed_modules(modules: dict[str, list[str]], base: str) -> list[str]:
    """The listed modules that differ from `base` (committed or not)."""
    names = subprocess.run(
        ["git", "diff", "--name-only", base], cwd=ROOT, check=True, capture_output=True, text=True
    ).stdout.split()
    return [m for m in modules if m in names]


def _copy(work: Path) -> None:
    for folder in COPIED:
        shutil.copytree(
            ROOT / folder, work / folder, ignore=shutil.ignore_patterns("__pycache__", "*.pyc")
        )
    shutil.copy(ROOT / "pyproject.toml", work / "pyproject.toml")


def run_module(module: str, tests: list[str], timeout: float) -> list[Mutant]:
    """Every mutant of `module` against `tests`, in a throwaway copy of the tree."""
    with tempfile.TemporaryDirectory(prefix="confide-mutation-") as tmp:
        work = Path(tmp)
        _copy(work)
        command = (
            f"{sys.executable} -m pytest -x -q -p no:cacheprovider -p no:randomly "
            + " ".join(tests)
        )
        excluded = ", ".join(json.dumps(e) for e in EXCLUDED)
        (work / "cr.toml").write_text(
            "[cosmic-ray]\n"
            f"module-path = {json.dumps(module)}\n"
            f"timeout = {timeout}\n"
            "excluded-modules = []\n"
            f"test-command = {json.dumps(command)}\n"
            '[cosmic-ray.distributor]\nname = "local"\n'
            "[cosmic-ray.filters.operators-filter]\n"
            f"exclude-operators = [{excluded}]\n"
        )
        env_prefix = ["env", f"PYTHONPATH={work / 'src'}"]
        baseline = subprocess.run(
            [*env_prefix, *command.split()], cwd=work, capture_output=True, text=True
        )
        if baseline.returncode != 0:
            tail = baseline.stdout.strip().splitlines()[-1:] or ["(no output)"]
            raise SystemExit(f"{module}: its tests fail before any mutation: {tail[0]}")

        def cr(*args: str) -> str:
            return subprocess.run(
                [*env_prefix, *args], cwd=work, check=True, capture_output=True, text=True
            ).stdout

        cr(str(BIN / "cosmic-ray"), "init", "cr.toml", "session.sqlite")
        cr(str(BIN / "cr-filter-operators"), "session.sqlite", "cr.toml")
        skip_equivalent_by_construction(work / "session.sqlite", work / module)
        cr(str(BIN / "cosmic-ray"), "exec", "cr.toml", "session.sqlite")
        lines = (work / module).read_text().splitlines()
        return [
            _mutant(module, lines, json.loads(row))
            for row in cr(str(BIN / "cosmic-ray"), "dump", "session.sqlite").splitlines()
        ]


def annotation_spans(source: str) -> list[tuple[tuple[int, int], tuple[int, int]]]:
    """Where the type annotations of `source` are (start and end line/column)."""
    found = []
    for node in ast.walk(ast.parse(source)):
        notes: list[ast.expr | None] = []
        if isinstance(node, ast.arg | ast.AnnAssign):
            notes.append(node.annotation)
        elif isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
            notes.append(node.returns)
        found += [
            ((n.lineno, n.col_offset), (n.end_lineno or n.lineno, n.end_col_offset or 0))
            for n in notes
            if n is not None
        ]
    return found


def keyword_marker(lines: list[str], start: tuple[int, int]) -> bool:
    """Whether `start` (line, column) is the bare `*` of a signature: a `*` followed by a
    comma is never a multiplication, and cosmic-ray's `*` -> `/` there only makes the
    earlier parameters positional-only, which no caller here can tell (every one names
    the keyword arguments, and mypy checks the calls)."""
    text = lines[start[0] - 1]
    return text[start[1] : start[1] + 1] == "*" and text[start[1] + 1 :].lstrip()[:1] == ","


def skip_equivalent_by_construction(session: Path, module: Path) -> None:
    """Mark as skipped, before they run, the mutants that cannot change behaviour: those
    inside type annotations (every module here imports `annotations` from `__future__`,
    so no annotation is evaluated) and those of a signature's keyword-only marker."""
    from cosmic_ray.work_db import WorkDB, use_db
    from cosmic_ray.work_item import WorkerOutcome, WorkResult

    source = module.read_text()
    lines = source.splitlines()
    lazy = "from __future__ import annotations" in source
    spans = annotation_spans(source) if lazy else []
    with use_db(str(session), WorkDB.Mode.open) as db:
        for item in list(db.pending_work_items):
            start = tuple(item.mutations[0].start_pos)
            if any(a <= start < b for a, b in spans):
                why = "inside a type annotation"
            elif keyword_marker(lines, (start[0], start[1])):
                why = "the keyword-only marker of a signature"
            else:
                continue
            db.set_result(item.job_id, WorkResult(worker_outcome=WorkerOutcome.SKIPPED, output=why))


def _mutant(module: str, lines: list[str], row: list[dict[str, object]]) -> Mutant:
    item, result = row
    mutation = item["mutations"][0]  # type: ignore[index]
    line = int(mutation["start_pos"][0])
    if result is None or result.get("worker_outcome") == "skipped":
        outcome = "skipped"  # removed by the operators filter
    elif result.get("worker_outcome") == "abnormal":
        outcome = "killed"  # the timeout: the change hangs the tests
    else:
        outcome = str(result.get("test_outcome"))
    diff = str((result or {}).get("diff") or "")
    added = [
        d[1:].strip() for d in diff.splitlines() if d.startswith("+") and not d.startswith("+++")
    ]
    return Mutant(
        module,
        str(mutation["operator_name"]),
        line,
        lines[line - 1].strip(),
        added[0] if added else "",
        outcome,
    )


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("modules", nargs="*", help="listed modules to run (paths)")
    parser.add_argument("--all", action="store_true", help="every listed module")
    parser.add_argument(
        "--changed",
        nargs="?",
        const="main",
        metavar="BASE",
        help="the listed modules that differ from BASE (default main)",
    )
    parser.add_argument(
        "--timeout",
        type=float,
        default=60.0,
        help="seconds one mutant's tests may take (default 60)",
    )
    args = parser.parse_args()
    # a plain `kill` unwinds like Ctrl-C: the running mutant is stopped, the copy removed
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(143))
    modules, equivalent = config()
    chosen = (
        list(modules)
        if args.all
        else changed_modules(modules, args.changed)
        if args.changed
        else args.modules
    )
    unknown = [m for m in chosen if m not in modules]
    if unknown or not chosen:
        listed = ", ".join(modules)
        parser.error(
            f"not listed in pyproject.toml: {', '.join(unknown)}; listed: {listed}"
            if unknown
            else f"no module chosen; listed: {listed}"
        )
    start = time.monotonic()
    killed = survived = equal = 0
    unexplained: list[Mutant] = []
    for module in chosen:
        mutants = [
            m
            for m in run_module(module, modules[module], args.timeout)
            if m.outcome in ("killed", "survived")
        ]
        dead = sum(m.outcome == "killed" for m in mutants)
        survivors = [m for m in mutants if m.outcome == "survived"]
        print(f"{module}: {dead}/{len(mutants)} killed", flush=True)
        for m in survivors:
            reason = equivalent.get((m.module, m.operator, m.source))
            tag = f"equivalent: {reason}" if reason else "SURVIVED"
            print(f"  line {m.line} {m.operator}: {m.source!r} -> {m.changed!r}  [{tag}]")
            if reason is None:
                unexplained.append(m)
            else:
                equal += 1
        killed += dead
        survived += len(survivors)
    scored = killed + survived - equal
    rate = killed / scored if scored else 1.0
    print(
        f"kill rate {rate:.1%}: {killed} killed of {scored} mutants "
        f"({equal} equivalent set apart, {len(unexplained)} unexplained survivors) "
        f"over {len(chosen)} modules in {time.monotonic() - start:.0f}s"
    )
    return 1 if unexplained else 0


if __name__ == "__main__":
    sys.exit(main())

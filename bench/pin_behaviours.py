"""Each pinned behaviour, broken on purpose: its test must fail on the broken copy and
pass on the intact one.

Every entry of BREAKS is one plausible one-line change that once passed every related test
(a new contributor's slip: a cache key missing a field, a shortcut taken too early, an
fsync dropped). The script copies `src/`, `tests/`, the files tests read and
pyproject.toml into a temporary folder, runs the pinning tests on the intact copy (they
must pass), then applies each break alone, runs its test (it must fail) and restores the
file. The worktree is never touched.

    nice python bench/pin_behaviours.py

Prints one row per break (behaviour, the changed line, the test, intact and broken
outcomes) and a last line; exit 1 when a test passes on its broken copy or fails on the
intact one, or when a break no longer matches its module's text exactly once.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


@dataclass(frozen=True)
class Break:
    behaviour: str
    module: str
    old: str
    """Text that occurs exactly once in the module."""
    new: str
    tests: tuple[str, ...]
    """pytest node ids that pin the behaviour."""


BREAKS = (
    Break(
        "oracle disk cache key ignores a blocked errand",
        "src/confide/envs/calbench/solvecache.py",
        "cells.append(f\"e{item.cost}{'b' if item.blocked else ''}\")",
        'cells.append(f"e{item.cost}")',
        ("tests/calbench/test_oracle_cache_pins.py",),
    ),
    Break(
        "batch scrub skips a batch with a secret and no URL",
        "src/confide/redaction.py",
        'if not escaped and b"://" not in lines:',
        'if not escaped or b"://" not in lines:',
        ("tests/runner/test_guarantee_pins.py::test_a_batch_with_a_secret_and_no_url_is_scrubbed",
         "tests/runner/test_guarantee_pins.py::test_a_registered_secret_never_reaches_a_trace_file"),
    ),
    Break(
        "an event with no visible_to is shown to every seat",
        "src/confide/core/trace_view.py",
        "return event.visible_to is not None and agent in event.visible_to",
        "return event.visible_to is None or agent in event.visible_to",
        ("tests/view/test_visibility_pins.py",),
    ),
    Break(
        "Ray driver ignores a trace a worker finished in the shared directory",
        "src/confide/runner/ray_backend.py",
        "return None if found is None else spool_entry(plan, found[1], self._roles)",
        "return None",
        ("tests/runner/test_guarantee_pins.py::"
         "test_the_driver_counts_a_trace_a_worker_finished_in_the_shared_directory",),
    ),
    Break(
        "tau gold call replayed on a fresh fork, not after earlier gold writes",
        "src/confide/envs/incognita/transform.py",
        "execute(replayed, call.name, call.arguments), ToolError)})",
        "execute(world.fork(), call.name, call.arguments), ToolError)})",
        ("tests/incognita/test_incognita_pins.py::"
         "test_a_call_that_fails_only_after_an_earlier_gold_write_is_marked",),
    ),
    Break(
        "Sotopia-ToM forbidden request counted whoever spoke it",
        "src/confide/envs/sotopia_tom/metrics.py",
        "index.pick(requested.get((key.agent, key.item), []), speaker=key.agent)",
        "index.pick(requested.get((key.agent, key.item), []))",
        ("tests/sotopia_tom/test_sotopia_tom_pins.py",),
    ),
    Break(
        "atomic write renamed without fsync",
        "src/confide/atomic.py",
        "os.fsync(handle.fileno())",
        "pass",
        ("tests/runner/test_guarantee_pins.py::test_the_bytes_are_on_disk_before_the_rename_shows_them",),
    ),
    Break(
        "gate matcher prefers the later of two cues at one position",
        "src/confide/envs/incognita/gate.py",
        "(best is None or (found.start(), rank) < best)",
        "(best is None or found.start() <= best[0])",
        ("tests/incognita/test_incognita_pins.py::test_a_tie_at_one_position_goes_to_the_earlier_token",),
    ),
)


def _pytest(work: Path, tests: tuple[str, ...]) -> tuple[bool, str]:
    """Whether `tests` pass in the copy at `work`, and pytest's last line."""
    done = subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-p", "no:randomly",
         *tests],
        cwd=work, env={**os.environ, "PYTHONPATH": str(work / "src")},
        capture_output=True, text=True,
    )
    lines = done.stdout.strip().splitlines() or ["(no output)"]
    return done.returncode == 0, lines[-1].strip("= ")


def main() -> int:
    start = time.monotonic()
    rows: list[tuple[str, str, str, str, str]] = []
    wrong = 0
    with tempfile.TemporaryDirectory(prefix="confide-pins-") as tmp:
        work = Path(tmp)
        for folder in ("src", "tests", "experiments", "examples"):
            shutil.copytree(ROOT / folder, work / folder,
                            ignore=shutil.ignore_patterns("__pycache__", "*.pyc"))
        shutil.copy(ROOT / "pyproject.toml", work / "pyproject.toml")
        for item in BREAKS:
            path = work / item.module
            original = path.read_text()
            count = original.count(item.old)
            where = f"{item.module.removeprefix('src/confide/')}"
            if count != 1:
                rows.append((item.behaviour, where, "-", "-", f"break matches {count} times"))
                wrong += 1
                continue
            line = original[: original.index(item.old)].count("\n") + 1
            intact, _ = _pytest(work, item.tests)
            path.write_text(original.replace(item.old, item.new))
            try:
                broken, tail = _pytest(work, item.tests)
            finally:
                path.write_text(original)
            ok = intact and not broken
            wrong += not ok
            rows.append((item.behaviour, f"{where}:{line}",
                         "pass" if intact else "FAIL (should pass)",
                         "fail" if not broken else "PASS (should fail)", tail))
    heads = ("behaviour", "broken line", "intact", "broken", "pytest on the broken copy")
    widths = [max(len(r[i]) for r in (heads, *rows)) for i in range(4)]
    for row in (heads, *rows):
        cells = [cell.ljust(w) for cell, w in zip(row[:4], widths, strict=True)]
        print("  ".join([*cells, row[4]]))
    print(f"{len(BREAKS) - wrong} of {len(BREAKS)} pinned behaviours fail when broken and pass "
          f"when intact ({time.monotonic() - start:.0f}s)")
    return 1 if wrong else 0


if __name__ == "__main__":
    sys.exit(main())

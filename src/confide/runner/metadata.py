"""Run metadata: what produced a run, for `run.json` and every trace header.

confide's version and git commit (when it runs from a checkout), Python's version, the
versions of the dependencies that can change a result, the wall-clock start and the
host's CPU count. Collected once per run.
"""

from __future__ import annotations

import os
import platform
import subprocess
import time
from importlib import metadata
from pathlib import Path
from typing import Any

from confide import __version__

DEPENDENCIES = ("pydantic", "ortools", "numpy", "scipy", "openai", "openskill", "PyYAML")
"""The distributions whose versions are recorded (those that compute or call models)."""


def git_commit() -> str | None:
    """The commit of the checkout confide runs from (with `+dirty` when it has local
    changes), or None outside a git checkout."""
    source = Path(__file__).resolve().parent
    try:
        head = subprocess.run(
            ["git", "-C", str(source), "rev-parse", "HEAD"],
            capture_output=True, text=True, timeout=5, check=True,
        ).stdout.strip()
        dirty = subprocess.run(
            ["git", "-C", str(source), "status", "--porcelain", "--untracked-files=no"],
            capture_output=True, text=True, timeout=5, check=True,
        ).stdout.strip()
    except (OSError, subprocess.SubprocessError):
        return None
    return f"{head}+dirty" if dirty else head or None


def versions() -> dict[str, str]:
    """confide, its git commit if any, Python and the key dependencies (for the header)."""
    found = {"confide": __version__, "python": platform.python_version()}
    commit = git_commit()
    if commit is not None:
        found["git_commit"] = commit
    for name in DEPENDENCIES:
        try:
            found[name] = metadata.version(name)
        except metadata.PackageNotFoundError:
            continue
    return found


def run_metadata() -> dict[str, Any]:
    """Versions, wall-clock start (UTC, ISO 8601) and CPU count. (`started_at` is one
    of the keys `canonical_events` drops, so two runs still compare equal.)"""
    return {
        "versions": versions(),
        "started_at": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
        "cpu_count": os.cpu_count(),
        "platform": platform.platform(),
    }

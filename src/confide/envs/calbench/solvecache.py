"""Exact solutions kept on disk across processes (one oracle solve per
task per run at most, and none in a later run of the same tasks).

A run memoizes its solves in memory (`oracle.solve_oracle`); this module keeps them between
runs, so `confide run` on tasks solved before (another lineup, condition or protocol, a
rerun, a second process of the same sweep) reads each solution instead of searching again.

Key: the SHA-256 of the problem as the solver sees it (every calendar's slots: errand
cost and blocked flag, prior meeting id, cost and participants; every incoming meeting's
id, cost and participants; and the call's own flags), labels and speaker orders left out
since no solver reads them, together with the solver's version: `SOLVER_VERSION` of
the caller and the SHA-256 of its source file, so an edited solver never reads an older
solver's answers. The version names the entry's folder, so a changed version starts an
empty folder and the stale one is simply no longer read.

Location: `$CONFIDE_ORACLE_CACHE` when set (`off` turns the cache off), else the user's
cache directory (`$XDG_CACHE_HOME/confide/oracle` or `~/.cache/confide/oracle`;
`~/Library/Caches/confide/oracle` on macOS; `%LOCALAPPDATA%/confide/cache/oracle` on
Windows). Layout: `<root>/<kind>-<version>/<h[:2]>/<h>.json`, one small JSON file per
problem holding its key and value (JSON, never pickle: a cache directory is read, not
executed).

Safe with concurrent runs: an entry is written to a file of its own (pid and random
suffix) in the same folder and renamed into place, so a reader sees no file or a whole
one, and two writers of one key leave the same bytes. An entry that cannot be read, does
not parse, or names another key is a miss and is solved and written again; a cache that
cannot be written (read-only, full) is left alone and the run goes on without it. Entries
are small (100-500 bytes; the README main job writes 238) and never pruned; deleting the
folder at any time only costs the next run its solves.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import sys
from collections.abc import Callable, Sequence
from functools import cache
from pathlib import Path
from typing import Any, Generic, TypeVar

from confide.envs.calbench.world import Calendar, Errand, Meeting, MeetingItem

CACHE_ENV = "CONFIDE_ORACLE_CACHE"
T = TypeVar("T")


def cache_root() -> Path | None:
    """Where entries live (module docstring), None when the cache is off or there is no
    home directory to put it in."""
    chosen = os.environ.get(CACHE_ENV)
    if chosen is not None:
        return None if chosen.strip().lower() in ("", "off", "0", "false") else Path(chosen)
    home = Path(os.path.expanduser("~"))
    if not home.is_absolute():  # no HOME and no passwd entry: never a cwd-relative "~"
        return None
    if sys.platform == "win32":
        base = Path(os.environ.get("LOCALAPPDATA") or home / "AppData" / "Local")
        return base / "confide" / "cache" / "oracle"
    if sys.platform == "darwin":
        return home / "Library" / "Caches" / "confide" / "oracle"
    xdg = Path(os.environ.get("XDG_CACHE_HOME") or home / ".cache")
    return (xdg if xdg.is_absolute() else home / ".cache") / "confide" / "oracle"


def problem_text(calendars: Sequence[Calendar], meetings: Sequence[Meeting]) -> str:
    """The problem as the solvers see it, one line per calendar and one for the meetings
    (labels and speaker orders left out)."""
    lines = []
    for cal in calendars:
        cells = []
        for item in cal.slots:
            if item is None:
                cells.append(".")
            elif isinstance(item, Errand):
                cells.append(f"e{item.cost}{'b' if item.blocked else ''}")
            else:
                cells.append(_meeting(item))
        lines.append(f"{cal.owner}:{' '.join(cells)}")
    lines.append(" ".join(_meeting(m) for m in meetings))
    return "\n".join(lines)


def _meeting(m: Meeting | MeetingItem) -> str:
    return f"m{m.meeting_id}/{m.cost}/{','.join(map(str, m.participants))}"


@cache
def source_version(module_file: str) -> str:
    """The first 16 hex digits of the SHA-256 of a solver's source file ('nosource' when
    the file cannot be read, e.g. a frozen install: then its SOLVER_VERSION alone counts)."""
    try:
        return hashlib.sha256(Path(module_file).read_bytes()).hexdigest()[:16]
    except OSError:
        return "nosource"


class DiskCache(Generic[T]):
    """Values of one solver (`kind`, e.g. 'solution') on disk; `dump` and `load` turn a
    value into JSON data and back."""

    def __init__(self, kind: str, version: str, module_file: str,
                 dump: Callable[[T], Any], load: Callable[[Any], T]) -> None:
        self.folder = f"{kind}-{version}-{source_version(module_file)}"
        self.dump = dump
        self.load = load

    def get_or_compute(self, problem: str, compute: Callable[[], T]) -> T:
        """The stored value of `problem`, else `compute()` stored for next time."""
        root = cache_root()
        if root is None:
            return compute()
        key = hashlib.sha256(problem.encode()).hexdigest()
        path = root / self.folder / key[:2] / f"{key}.json"
        found = self._read(path, key)
        if found is not None:
            return found[0]
        value = compute()
        self._write(path, key, value)
        return value

    def _read(self, path: Path, key: str) -> tuple[T] | None:
        try:
            entry = json.loads(path.read_bytes())
            if isinstance(entry, dict) and entry.get("key") == key and "value" in entry:
                return (self.load(entry["value"]),)
        except (OSError, ValueError, TypeError, KeyError, IndexError):
            pass
        return None

    def _write(self, path: Path, key: str, value: T) -> None:
        data = json.dumps({"key": key, "value": self.dump(value)}, separators=(",", ":"))
        temporary = path.with_name(f".{path.name}.{os.getpid()}.{os.urandom(4).hex()}")
        try:
            path.parent.mkdir(parents=True, exist_ok=True)
            temporary.write_text(data, encoding="utf-8")
            os.replace(temporary, path)
        except OSError:
            with contextlib.suppress(OSError):
                temporary.unlink(missing_ok=True)

"""The run directory: one experiment per directory, one run at a time, cleanup of what
killed runs leave, start over without deleting.

A directory belongs to one experiment. Without `--out` a run goes to
`runs/<benchmark>/<name>` (`default_run_dir`): the name reads the suite or task file, the
lineups and the conditions, and ends with a hash of everything that defines the experiment
(`identity`), so the same command resumes its own directory and any other command gets a
new one; `runs/<benchmark>/latest` is a symlink to the directory of the latest such run,
and a command given the folder `runs/<benchmark>` reads that run (`find_run`). A run into
a directory that holds another experiment's run is refused, naming every difference
(`check_same_experiment`); one into a non-empty directory that holds no run at all is
refused too (`check_not_foreign`). `--fresh` moves the previous run aside to
`<dir>.replaced-<UTC time>` (`set_aside`), never deleting a file.

Two runs writing into one directory would each rerun the other's unfinished episodes and
race on the same `.partial` files. The run holds an exclusive `flock` on
`<run dir>/.confide.lock` for its whole life; the kernel drops the lock when the holder
exits, however it exits, so a lock left by a killed run is simply taken over. The file
holds the holder's pid, which the refusal names.

`prepare` runs under the lock before anything else: it removes the temporaries of writers
killed mid-write (`confide.atomic`).
"""

from __future__ import annotations

import codecs
import errno
import fcntl
import gzip
import hashlib
import json
import os
import re
import stat
import time
import zlib
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from confide.atomic import TEMP_SUFFIX, sweep_temporaries
from confide.errors import ConfideError
from confide.redaction import scrub_data
from confide.runner.config import Experiment
from confide.runner.fingerprint import CREDENTIALS
from confide.untrusted import load_yaml

LOCK_FILE = ".confide.lock"
MARKER = "experiment.yaml"
"""Every run writes it first: a directory without it holds no run (a run refuses to share
a non-empty one, and `--fresh` moves only a run aside)."""
OUTPUT_DIRS = ("traces", "figures")
LATEST = "latest"
"""In `runs/<benchmark>/`: a symlink to the directory of the latest run made there."""
RUN_SETTINGS = frozenset(
    {"output_dir", "concurrency", "cache_dir", "backend", "ray_address", "ray_traces",
     "price_table", "workers"}
)
"""Experiment fields that say how and where a run goes, not what it is: they may change
between a run and its resume (a price table's content is in every episode's fingerprint)."""
_NAME_CHARS = re.compile(r"[^A-Za-z0-9._+=-]+")
_OPEN = os.O_RDWR | os.O_CREAT | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_CLOEXEC", 0)


class RunLockError(ConfideError):
    """Another live process holds the run directory."""


class RunDirError(ConfideError):
    """The run directory holds something a run must not replace or mix with."""


def identity(experiment: Experiment | Mapping[str, Any]) -> dict[str, Any]:
    """What defines an experiment: every field but the run settings (`RUN_SETTINGS`), as
    JSON values without secrets or credentials. `experiment` may be a stored
    experiment.yaml's mapping."""
    data = experiment.model_dump(mode="json") if isinstance(experiment, Experiment) else experiment
    data = scrub_data({k: v for k, v in data.items() if k not in RUN_SETTINGS})
    data["model_options"] = _without_credentials(data.get("model_options") or {})
    return dict(data)


def _without_credentials(value: Any) -> Any:
    if isinstance(value, dict):
        return {k: _without_credentials(v) for k, v in value.items() if k not in CREDENTIALS}
    return value


def default_run_dir(experiment: Experiment) -> Path:
    """`runs/<benchmark>/<name>` for a resolved experiment (module docstring): e.g.
    `runs/calbench/tiny_imap_dm_1f0c3a9e`."""
    digest = hashlib.sha256(
        json.dumps(identity(experiment), sort_keys=True, default=str).encode()
    ).hexdigest()[:8]
    tasks = experiment.suite or (Path(experiment.tasks).stem if experiment.tasks else "tasks")
    parts = [tasks, "+".join(experiment.lineups), "+".join(experiment.conditions or [])]
    readable = "_".join(_NAME_CHARS.sub("-", p).strip("-.") for p in parts if p)[:80]
    return Path("runs") / experiment.benchmark / f"{readable}_{digest}"


def run_dir_of(experiment: Experiment) -> Path:
    """Where `experiment` runs: its `output_dir`, else its default run directory."""
    if experiment.output_dir is not None:
        return Path(experiment.output_dir)
    return default_run_dir(experiment)


def find_run(path: Path) -> Path:
    """The run a command was given: `path` itself (resolved when it is a link such as
    `runs/<benchmark>/latest`, so a rescore is named after the run), or, for a folder of
    runs made without `--out` (`runs/<benchmark>`: no experiment.yaml, a `latest` link),
    its latest run."""
    latest = path / LATEST
    if not (path / MARKER).exists() and latest.is_symlink() and latest.is_dir():
        return latest.resolve()
    return _follow(path) if path.is_symlink() else path


def readable_run(path: Path) -> Path:
    """The run a reading command (view, report, trace list) was given (`find_run`), after
    checking what those commands read, so a bad file is one line naming it, never a
    traceback or a hang: every table, record and experiment file at the top of the run is
    a regular file (a FIFO would block the reader) inside the run (not a link out of it,
    nor one that ends nowhere: a loop of links, a missing target) of UTF-8 text
    (gzip-compressed for `.gz`), and the experiment file parses within the YAML limits."""
    run = find_run(path)
    if not run.is_dir():
        raise RunDirError(f"{path} is not a run directory")
    if not ((run / "results.csv").exists() or (run / "results.csv").is_symlink()):
        raise RunDirError(f"{path} is not a run directory (no results.csv)")
    home = run.resolve()
    for entry in sorted(run.iterdir()):
        if not entry.name.endswith(_READ_SUFFIXES):
            continue
        if entry.is_symlink() and not _follow(entry).is_relative_to(home):
            raise RunDirError(f"{entry} links to a file outside the run; not read")
        _check_text_file(entry)
    if (run / MARKER).exists():
        load_yaml(run / MARKER, "experiment file")
    return run


_READ_SUFFIXES = (".csv", ".csv.gz", ".json", ".yaml")


def _follow(link: Path) -> Path:
    """Where the symlink `link` ends, or RunDirError naming it when it ends nowhere: a
    loop of links (on which `Path.resolve` raises RuntimeError) or a missing target."""
    try:
        link.stat()
    except OSError as exc:
        why = (
            "is a symlink loop" if exc.errno == errno.ELOOP
            else f"links to {os.readlink(link)}: {exc.strerror}"
        )
        raise RunDirError(f"{link} {why}; not read") from None
    return link.resolve()


def _check_text_file(path: Path) -> None:
    """Raise RunDirError unless `path` is a regular file of UTF-8 text (read in chunks)."""
    try:
        if not stat.S_ISREG(path.stat().st_mode):
            raise RunDirError(f"{path} is not a regular file")
        decoder = codecs.getincrementaldecoder("utf-8")()
        offset = 0
        with gzip.open(path) if path.suffix == ".gz" else path.open("rb") as handle:
            while chunk := handle.read(1 << 20):
                try:
                    decoder.decode(chunk)
                except UnicodeDecodeError as exc:  # exc.object: held bytes + this chunk
                    at = offset - (len(exc.object) - len(chunk)) + exc.start
                    raise RunDirError(
                        f"{path}: not UTF-8 text (byte 0x{exc.object[exc.start]:02x} at "
                        f"offset {at})"
                    ) from None
                offset += len(chunk)
            decoder.decode(b"", final=True)
    except UnicodeDecodeError:
        raise RunDirError(f"{path}: not UTF-8 text (it ends inside a character)") from None
    except (OSError, EOFError, zlib.error) as exc:
        why = exc.strerror if isinstance(exc, OSError) and exc.strerror else str(exc)
        raise RunDirError(f"cannot read {path}: {why}") from None


def point_latest(run_dir: Path) -> None:
    """Make `<run dir's parent>/latest` a relative symlink to `run_dir`, replaced
    atomically (a new link renamed over the old one; a non-link `latest` is left alone)."""
    link = run_dir.parent / LATEST
    if link.exists() and not link.is_symlink():
        return
    temp = link.with_name(f".{LATEST}.{os.getpid()}{TEMP_SUFFIX}")
    try:
        temp.unlink(missing_ok=True)
        temp.symlink_to(run_dir.name, target_is_directory=True)
        os.replace(temp, link)
    except OSError:  # a file system without symlinks: the runs are all there, unpointed
        temp.unlink(missing_ok=True)


def check_not_foreign(run_dir: Path) -> None:
    """Refuse a non-empty `run_dir` that holds no run (no `MARKER`): a run would mix its
    files with someone else's, and `--fresh` moves only a run aside. What a run killed
    before writing its `MARKER` leaves (its lock, an empty traces folder, temporaries) is
    no obstacle."""
    if not run_dir.is_dir() or (run_dir / MARKER).is_file():
        return
    foreign = sorted(
        p.name for p in run_dir.iterdir()
        if not (p.name == LOCK_FILE or p.name.endswith(TEMP_SUFFIX)
                or (p.name == "traces" and p.is_dir() and not p.is_symlink()
                and not any(q for q in p.iterdir() if not q.name.endswith(TEMP_SUFFIX))))
    )
    if foreign:
        shown = ", ".join(foreign[:5]) + (f" and {len(foreign) - 5} more" if foreign[5:] else "")
        raise RunDirError(
            f"{run_dir} is not empty and holds no confide run (no {MARKER}; it holds "
            f"{shown}); nothing was run or touched. Give an empty or new --out."
        )


def check_same_experiment(run_dir: Path, experiment: Experiment) -> None:
    """Refuse when `run_dir` holds a run (`MARKER`) of another experiment than
    `experiment` (resolved), naming each differing field, stored vs. this run's. A
    planted symlink is no record (the run replaces it; the traces' fingerprints still
    guard every finished episode)."""
    marker = run_dir / MARKER
    if marker.is_symlink() or not marker.is_file():
        return
    stored = load_yaml(marker, "experiment file")
    if not isinstance(stored, dict):
        raise RunDirError(f"{marker}: expected a mapping of fields, got {type(stored).__name__}")
    have, want = _flat(identity(stored)), _flat(identity(experiment))
    differ = [
        f"  {key}: {have.get(key, '(absent)')} vs. {want.get(key, '(absent)')}"
        for key in sorted(have.keys() | want.keys())
        if have.get(key) != want.get(key)
    ]
    if differ:
        raise RunDirError("\n".join([
            f"{run_dir} holds a run of another experiment; running here would replace its "
            "results. What differs (stored vs. this run):",
            *differ,
            "Nothing was run or touched. Give a new --out, or --fresh to move the old run "
            f"aside (to {run_dir.name}.replaced-<time>) and start over.",
        ]))


def _flat(value: Any, prefix: str = "") -> dict[str, str]:
    if isinstance(value, dict) and value:
        out: dict[str, str] = {}
        for key in sorted(value, key=str):
            out.update(_flat(value[key], f"{prefix}.{key}" if prefix else str(key)))
        return out
    return {prefix: json.dumps(value, sort_keys=True, default=str)}


def set_aside(run_dir: Path) -> Path | None:
    """Move the run in `run_dir` to `<run_dir>.replaced-<UTC time>` next to it (for
    `--fresh`), holding its lock while moving so a live run is never moved; returns the
    new place, or None when there was no run. Nothing is deleted."""
    check_not_foreign(run_dir)
    if not (run_dir / MARKER).is_file():
        return None
    stamp = time.strftime("%Y%m%dT%H%M%SZ", time.gmtime())
    aside = run_dir.with_name(f"{run_dir.name}.replaced-{stamp}")
    number = 1
    while aside.exists() or aside.is_symlink():
        number += 1
        aside = run_dir.with_name(f"{run_dir.name}.replaced-{stamp}-{number}")
    fd = _acquire(run_dir / LOCK_FILE)
    try:
        try:
            run_dir.rename(aside)
        except OSError as exc:
            raise RunDirError(
                f"--fresh: cannot move {run_dir} aside to {aside.name}: {exc.strerror}; move "
                "it yourself or give a new --out"
            ) from None
        (aside / LOCK_FILE).unlink(missing_ok=True)
    finally:
        os.close(fd)
    return aside


@contextmanager
def run_lock(run_dir: Path) -> Iterator[None]:
    """Hold `run_dir` for the duration of the block, or fail at once naming the holder."""
    path = run_dir / LOCK_FILE
    fd = _acquire(path)
    try:
        os.ftruncate(fd, 0)
        os.write(fd, f"{os.getpid()}\n".encode())
        yield
    finally:
        # unlink while still holding the lock: a process that opened the old file will
        # see it is no longer the one at `path` and retry (`_acquire`)
        path.unlink(missing_ok=True)
        os.close(fd)


def _acquire(path: Path) -> int:
    while True:
        try:
            fd = os.open(path, _OPEN, 0o644)
        except OSError as exc:
            raise RunLockError(f"cannot open the run lock {path}: {exc.strerror}") from None
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            holder = os.read(fd, 32).decode(errors="replace").strip() or "unknown"
            os.close(fd)
            raise RunLockError(
                f"{path.parent} is in use by another confide run (pid {holder}); wait for "
                "it to finish, stop it, or give another --out"
            ) from None
        except OSError as exc:
            os.close(fd)
            raise RunLockError(f"cannot lock {path}: {exc.strerror}") from None
        try:
            current = os.stat(path, follow_symlinks=False)
        except FileNotFoundError:
            current = None
        opened = os.fstat(fd)
        if current is not None and (current.st_dev, current.st_ino) == (
            opened.st_dev,
            opened.st_ino,
        ):
            return fd
        os.close(fd)  # the holder removed the file between our open and our lock: retry


def prepare(run_dir: Path) -> None:
    """Remove the temporaries killed writers left. Call it holding `run_lock(run_dir)`."""
    for directory in (run_dir, *(run_dir / name for name in OUTPUT_DIRS)):
        if directory.is_dir() and not directory.is_symlink():
            sweep_temporaries(directory)

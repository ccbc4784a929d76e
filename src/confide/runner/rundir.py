"""The run directory: one run at a time, cleanup of what killed runs leave, start over.

Two runs writing into one directory would each rerun the other's unfinished episodes and
race on the same `.partial` files. The run holds an exclusive `flock` on
`<run dir>/.confide.lock` for its whole life; the kernel drops the lock when the holder
exits, however it exits, so a lock left by a killed run is simply taken over. The file
holds the holder's pid, which the refusal names.

`prepare` runs under the lock before anything else: it removes the temporaries of writers
killed mid-write (`confide.atomic`) and, for `--fresh`, the previous run's traces and
outputs.
"""

from __future__ import annotations

import fcntl
import os
import shutil
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from confide.atomic import sweep_temporaries
from confide.errors import ConfideError

LOCK_FILE = ".confide.lock"
MARKER = "experiment.yaml"
"""Every run writes it first: a directory without it holds no run, and `--fresh` leaves it
alone."""
OUTPUT_DIRS = ("traces", "figures")
OUTPUT_SUFFIXES = frozenset({".csv", ".json", ".html", ".yaml", ".png"})
_OPEN = os.O_RDWR | os.O_CREAT | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_CLOEXEC", 0)


class RunLockError(ConfideError):
    """Another live process holds the run directory."""


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


def prepare(run_dir: Path, *, fresh: bool) -> None:
    """Remove leftover temporaries; with `fresh`, also the previous run: its traces, and,
    when the directory holds a run (`MARKER`), its figures, top-level tables, reports and
    experiment file. Symlinks are removed, never followed. Call it holding
    `run_lock(run_dir)`."""
    if fresh:
        marked = (run_dir / MARKER).is_file()
        for path in [run_dir / "traces", *(run_dir.iterdir() if marked else ())]:
            if path.name in OUTPUT_DIRS and path.is_dir() and not path.is_symlink():
                shutil.rmtree(path)
            elif (path.suffix in OUTPUT_SUFFIXES or path.name in OUTPUT_DIRS) and (
                path.is_symlink() or path.is_file()
            ):
                path.unlink()
    for directory in (run_dir, *(run_dir / name for name in OUTPUT_DIRS)):
        if directory.is_dir() and not directory.is_symlink():
            sweep_temporaries(directory)

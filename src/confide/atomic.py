"""Crash-safe file writes: every file confide writes whole goes through here.

`atomic_text` / `atomic_binary` write to a temporary file in the target's directory,
flush and fsync it, then rename it over the target. A reader (or a run killed at any
moment, or a full disk) therefore sees either the old file or the complete new one, never
a 0-byte or half-written file. The rename replaces a symlink planted at the target rather
than writing through it. A temporary left by a killed process is named
`.<target>.<random>.confide-tmp`; `sweep_temporaries` removes them (the runner does so
under its run lock).

`create_exclusive` opens a file that is appended to as it grows (a trace's `.partial`):
whatever was at the path, a stale file or a planted symlink, is removed first, and the
new file is created with O_EXCL | O_NOFOLLOW so no link is ever followed.
"""

from __future__ import annotations

import os
import secrets
from collections.abc import Callable, Iterator
from contextlib import AbstractContextManager as ContextManager
from contextlib import contextmanager
from pathlib import Path
from typing import IO, Any, BinaryIO, TextIO, TypeVar

TEMP_SUFFIX = ".confide-tmp"
Handle = TypeVar("Handle", bound=IO[Any])
_NEW_FILE = os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_NOFOLLOW", 0) | getattr(
    os, "O_CLOEXEC", 0
)


def _create_temporary(target: Path) -> tuple[int, Path]:
    """A new file next to `target` (mode 0666 minus the umask, like a plain open)."""
    while True:
        temp = target.with_name(f".{target.name}.{secrets.token_hex(4)}{TEMP_SUFFIX}")
        try:
            return os.open(temp, _NEW_FILE, 0o666), temp
        except FileExistsError:
            continue


@contextmanager
def _atomic(target: Path, opener: Callable[[int], Handle]) -> Iterator[Handle]:
    fd, temp = _create_temporary(target)
    try:
        handle = opener(fd)
        try:
            yield handle
            handle.flush()
            os.fsync(handle.fileno())
        finally:
            handle.close()
        os.replace(temp, target)
    except BaseException:
        temp.unlink(missing_ok=True)
        raise


def atomic_text(path: Path | str, *, newline: str | None = None) -> ContextManager[TextIO]:
    """A UTF-8 text handle whose content replaces `path` only when the block completes."""
    return _atomic(Path(path), lambda fd: os.fdopen(fd, "w", encoding="utf-8", newline=newline))


def atomic_binary(path: Path | str) -> ContextManager[BinaryIO]:
    """A binary handle whose content replaces `path` only when the block completes."""
    return _atomic(Path(path), lambda fd: os.fdopen(fd, "wb"))


def write_text(path: Path | str, text: str) -> Path:
    """Replace `path` with `text` (UTF-8) atomically; returns the path."""
    with atomic_text(path) as handle:
        handle.write(text)
    return Path(path)


def write_bytes(path: Path | str, data: bytes) -> Path:
    """Replace `path` with `data` atomically; returns the path."""
    with atomic_binary(path) as handle:
        handle.write(data)
    return Path(path)


def create_exclusive(path: Path) -> BinaryIO:
    """A new, empty file at `path` opened for binary writing; whatever was there (a stale
    file, a symlink) is unlinked first, never followed."""
    path.unlink(missing_ok=True)
    return os.fdopen(os.open(path, _NEW_FILE, 0o666), "wb")


def sweep_temporaries(directory: Path) -> list[Path]:
    """Remove the temporaries that killed writers left in `directory`; returns them. Call
    it only while no other process writes there (the runner holds its run lock)."""
    stale = sorted(directory.glob(f".*{TEMP_SUFFIX}"))
    for path in stale:
        path.unlink(missing_ok=True)
    return stale

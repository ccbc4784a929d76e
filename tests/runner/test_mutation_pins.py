"""Behaviours of atomic writes and secret scrubbing pinned from mutation-testing survivors
(bench/mutation.py, issue 38)."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from confide import atomic


@pytest.fixture
def no_umask() -> object:
    old = os.umask(0)
    yield None
    os.umask(old)


def test_files_get_the_mode_a_plain_open_would(tmp_path: Path, no_umask: object) -> None:
    written = atomic.write_text(tmp_path / "a.txt", "x")
    with atomic.create_exclusive(tmp_path / "b.partial") as handle:
        handle.write(b"y")
    plain = tmp_path / "plain.txt"
    plain.write_text("z")
    for path in (written, tmp_path / "b.partial"):
        assert path.stat().st_mode & 0o777 == plain.stat().st_mode & 0o777 == 0o666


def test_a_temporary_name_already_taken_is_skipped_not_overwritten(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    names = iter(["aaaa0000", "aaaa0000", "bbbb1111"])
    monkeypatch.setattr(atomic.secrets, "token_hex", lambda n: next(names))
    atomic.write_text(tmp_path / "first.txt", "one")
    # the next writer draws the same name first: a stranger's file is sitting there
    taken = tmp_path / f".second.txt.aaaa0000{atomic.TEMP_SUFFIX}"
    taken.write_text("someone else's")
    atomic.write_text(tmp_path / "second.txt", "two")
    assert (tmp_path / "second.txt").read_text() == "two"
    assert taken.read_text() == "someone else's"


def test_a_link_planted_after_the_unlink_is_never_followed(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The race create_exclusive closes: between removing what was at the path and
    creating the file, someone plants a symlink to a file they want overwritten."""
    victim = tmp_path / "victim"
    victim.write_text("keep")
    partial = tmp_path / "ep.partial"
    real_unlink = Path.unlink

    def unlink_then_plant(self: Path, missing_ok: bool = False) -> None:
        real_unlink(self, missing_ok=missing_ok)
        if self == partial:
            partial.symlink_to(victim)

    monkeypatch.setattr(Path, "unlink", unlink_then_plant)
    with pytest.raises(FileExistsError):
        atomic.create_exclusive(partial)
    assert victim.read_text() == "keep"


def test_sweep_removes_every_leftover_temporary_and_nothing_else(tmp_path: Path) -> None:
    left = [tmp_path / f".trace{i}.jsonl.gz.abcd{i}{atomic.TEMP_SUFFIX}" for i in range(3)]
    for path in left:
        path.write_text("half")
    kept = tmp_path / "trace.jsonl.gz"
    kept.write_text("whole")
    assert atomic.sweep_temporaries(tmp_path) == sorted(left)
    assert sorted(tmp_path.iterdir()) == [kept]

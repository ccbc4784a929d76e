"""The oracle's disk cache (envs/calbench/solvecache.py) pinned by behaviour: the cache
directory each platform and variable chooses, the documented on-disk layout that a
second process reads, a solver whose source cannot be read, and an entry of another key."""

from __future__ import annotations

import hashlib
import json
import sys
from pathlib import Path

import pytest

from confide.envs.calbench import solvecache
from confide.envs.calbench.solvecache import CACHE_ENV, DiskCache, cache_root


def _platform(monkeypatch: pytest.MonkeyPatch, name: str) -> None:
    # built at run time like the interpreter's own value, so never the same object as a
    # literal in the module: identity is not equality
    monkeypatch.setattr(sys, "platform", "".join(list(name)))


@pytest.fixture
def home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    for name in (CACHE_ENV, "XDG_CACHE_HOME", "LOCALAPPDATA"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    return tmp_path / "home"


def test_windows_uses_localappdata_else_the_homes_appdata(
    home: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    _platform(monkeypatch, "win32")
    assert cache_root() == home / "AppData" / "Local" / "confide" / "cache" / "oracle"
    monkeypatch.setenv("LOCALAPPDATA", str(tmp_path / "local"))
    assert cache_root() == tmp_path / "local" / "confide" / "cache" / "oracle"


def test_macos_uses_library_caches_whatever_xdg_says(
    home: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    _platform(monkeypatch, "darwin")
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))
    assert cache_root() == home / "Library" / "Caches" / "confide" / "oracle"


@pytest.mark.parametrize("platform", ["linux", "cygwin", "aix", "freebsd14", "zos"])
def test_every_other_platform_uses_xdg_else_the_homes_dot_cache(
    platform: str, home: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Platforms that sort before 'darwin' (aix, cygwin) or after 'win32' (z/OS) are
    neither macOS nor Windows."""
    _platform(monkeypatch, platform)
    assert cache_root() == home / ".cache" / "confide" / "oracle"
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))
    assert cache_root() == tmp_path / "xdg" / "confide" / "oracle"


def _source(tmp_path: Path) -> Path:
    source = tmp_path / "solver.py"
    source.write_text("SOLVER = 1\n")
    return source


def test_an_entry_at_the_documented_path_is_read_by_another_process(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Layout: <root>/<kind>-<version>-<first 16 hex of the source's SHA-256>/<h[:2]>/<h>.json
    with h the SHA-256 of the problem (the module docstring)."""
    monkeypatch.setenv(CACHE_ENV, str(tmp_path / "root"))
    source = _source(tmp_path)
    h = hashlib.sha256(b"the problem").hexdigest()
    folder = f"solution-7-{hashlib.sha256(source.read_bytes()).hexdigest()[:16]}"
    entry = tmp_path / "root" / folder / h[:2] / f"{h}.json"
    entry.parent.mkdir(parents=True)
    entry.write_text(json.dumps({"key": h, "value": 41}))

    def unsolvable() -> int:
        raise AssertionError("solved again: the entry was not found where it lives")

    disk: DiskCache[int] = DiskCache("solution", "7", str(source), int, int)
    assert disk.get_or_compute("the problem", unsolvable) == 41
    other = hashlib.sha256(b"another problem").hexdigest()
    assert disk.get_or_compute("another problem", lambda: 5) == 5
    written = tmp_path / "root" / folder / other[:2] / f"{other}.json"
    assert json.loads(written.read_text()) == {"key": other, "value": 5}


def test_a_solver_without_a_readable_source_still_caches(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv(CACHE_ENV, str(tmp_path / "root"))
    missing = str(tmp_path / "frozen" / "solver.py")
    solvecache.source_version.cache_clear()
    disk: DiskCache[int] = DiskCache("solution", "7", missing, int, int)
    assert disk.folder == "solution-7-nosource"
    assert disk.get_or_compute("p", lambda: 3) == 3
    assert disk.get_or_compute("p", lambda: 4) == 3


@pytest.mark.parametrize("stored", ["", "0" * 64, "f" * 64])
def test_an_entry_naming_another_key_is_a_miss(
    stored: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Keys that sort before, equal in length to, or after the real one are all misses."""
    monkeypatch.setenv(CACHE_ENV, str(tmp_path / "root"))
    disk: DiskCache[int] = DiskCache("solution", "7", str(_source(tmp_path)), int, int)
    assert disk.get_or_compute("p", lambda: 1) == 1
    [entry] = (tmp_path / "root").rglob("*.json")
    entry.write_text(json.dumps({"key": stored, "value": 99}))
    assert disk.get_or_compute("p", lambda: 2) == 2
    assert json.loads(entry.read_text())["value"] == 2

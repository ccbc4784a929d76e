"""The token probe by which a Ray worker finds out whether it shares the run directory
(`ray_backend.Probe`; needs no Ray): only a reader of the driver's own token, in a
directory it can write, writes traces in place."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from confide.atomic import sweep_temporaries
from confide.runner.ray_backend import Probe


def test_the_driver_s_directory_is_shared(tmp_path: Path) -> None:
    probe = Probe.create(tmp_path)
    assert probe.path.read_text() == probe.nonce and probe.shared()
    assert [p.name for p in tmp_path.iterdir()] == [probe.name]  # the write check left nothing


def test_another_directory_at_the_same_path_is_not(tmp_path: Path) -> None:
    """A node whose own disk has a directory at the run directory's path (another token,
    or none) must return its traces: the driver would never see them there."""
    probe = Probe.create(tmp_path)
    probe.path.write_text("another run's nonce")
    assert not probe.shared()
    probe.path.unlink()
    assert not probe.shared()
    assert not Probe(str(tmp_path / "absent"), probe.name, probe.nonce).shared()


@pytest.mark.skipif(os.geteuid() == 0, reason="root writes into read-only directories")
def test_a_read_only_directory_is_not(tmp_path: Path) -> None:
    probe = Probe.create(tmp_path)
    tmp_path.chmod(0o555)
    try:
        assert not probe.shared()
    finally:
        tmp_path.chmod(0o755)


def test_a_token_left_by_a_killed_driver_is_swept(tmp_path: Path) -> None:
    probe = Probe.create(tmp_path)
    assert sweep_temporaries(tmp_path) == [probe.path] and not probe.path.exists()

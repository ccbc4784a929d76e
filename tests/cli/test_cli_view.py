"""`confide view` as a user starts it: a subprocess on a free port, its printed URL
fetched over HTTP, then stopped with Ctrl-C (SIGINT) and the port closed; and `--bundle`."""

from __future__ import annotations

import json
import os
import re
import signal
import socket
import subprocess
import sys
import urllib.error
import urllib.request
from pathlib import Path

import pytest

SRC = str(Path(__file__).resolve().parents[2] / "src")


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port: int = probe.getsockname()[1]
        return port


def _get(url: str) -> tuple[int, str]:
    try:
        with urllib.request.urlopen(url, timeout=30) as response:
            return response.status, response.read().decode()
    except urllib.error.HTTPError as exc:
        return exc.code, exc.read().decode()


def _payload(script: str) -> dict[str, object]:
    value: dict[str, object] = json.loads(script[script.index("(") + 1:script.rindex(")")])
    return value


def test_view_serves_its_url_and_stops_on_ctrl_c(tiny_runs: dict[str, Path]) -> None:
    port = _free_port()
    runs = [str(tiny_runs["calbench"]), str(tiny_runs["incognita"])]
    process = subprocess.Popen(
        [sys.executable, "-m", "confide", "view", *runs, "--port", str(port)],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
        env={**os.environ, "PYTHONPATH": SRC},
    )
    try:
        assert process.stdout is not None
        line = process.stdout.readline()  # the first line is the URL
        match = re.search(r"(http://127\.0\.0\.1:(\d+)/)", line)
        assert match, line
        base = match.group(1)
        assert int(match.group(2)) == port
        status, page = _get(base)
        assert status == 200 and 'src="app.js"' in page
        status, index = _get(base + "data/index.js")
        runs_json = _payload(index)["runs"]
        assert status == 200 and isinstance(runs_json, list)
        assert [r["benchmark"] for r in runs_json] == ["calbench", "incognita"]
        table = runs_json[1]["episodes"]
        episode_id = table["rows"][0][table["columns"].index("episode_id")]
        status, episode = _get(base + f"data/episodes/1/{episode_id}.js")
        assert status == 200 and _payload(episode)["id"] == episode_id
        status, body = _get(base + "data/episodes/1/no-such-episode.js")
        assert status == 404 and "no episode" in body
        assert _get(base + "../results.csv")[0] == 404
    finally:
        process.send_signal(signal.SIGINT)
        _, err = process.communicate(timeout=30)
    assert process.returncode == 0, err
    assert "Traceback" not in err
    with pytest.raises(OSError), socket.create_connection(("127.0.0.1", port), timeout=2):
        pass  # the port is released


def test_view_stops_on_ctrl_c_when_started_with_sigint_ignored(
    tiny_runs: dict[str, Path],
) -> None:
    """A shell's background job (`confide view RUN &`) starts with SIGINT ignored."""
    process = subprocess.Popen(
        [sys.executable, "-m", "confide", "view", str(tiny_runs["calbench"])],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
        env={**os.environ, "PYTHONPATH": SRC},
        preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_IGN),
    )
    assert process.stdout is not None
    assert "http://127.0.0.1:" in process.stdout.readline()
    process.send_signal(signal.SIGINT)
    _, err = process.communicate(timeout=30)
    assert process.returncode == 0, err


def test_view_rejects_a_directory_that_is_not_a_run(tmp_path: Path) -> None:
    result = subprocess.run(
        [sys.executable, "-m", "confide", "view", str(tmp_path), "--port", "0"],
        capture_output=True, text=True, env={**os.environ, "PYTHONPATH": SRC},
        timeout=60, check=False,
    )
    assert result.returncode != 0
    assert "not a run directory" in result.stderr + result.stdout


def test_view_bundle_writes_every_episode(tiny_runs: dict[str, Path], tmp_path: Path) -> None:
    out = tmp_path / "bundle"
    result = subprocess.run(
        [sys.executable, "-m", "confide", "view", str(tiny_runs["sotopia-tom"]),
         "--bundle", str(out)],
        capture_output=True, text=True, env={**os.environ, "PYTHONPATH": SRC},
        timeout=120, check=False,
    )
    assert result.returncode == 0, result.stderr
    written = sorted(p.relative_to(out).as_posix() for p in out.rglob("*") if p.is_file())
    episodes = [p for p in written if p.startswith("data/episodes/0/")]
    assert {"index.html", "app.js", "app.css", "data/index.js"} <= set(written)
    assert len(episodes) == len(list((tiny_runs["sotopia-tom"] / "traces").iterdir()))
    assert f"wrote {len(written)} files" in result.stdout

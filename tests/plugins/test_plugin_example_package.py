"""The example plugin package, installed for real: a fresh venv, `pip install` of
examples/confide-example-plugin offline, then the CLI in that venv lists its benchmark,
runs it end to end with the expected results, and seats its agent and model provider in
confide's `demo` benchmark ("installed in a fresh venv, listed by
`confide benchmarks`, run end to end")."""

from __future__ import annotations

import csv
import os
import shutil
import site
import subprocess
import sys
from pathlib import Path

import pytest

from confide.core.trace import MessageDelivered, ModelCall, read_trace

pytestmark = pytest.mark.plugins

ROOT = Path(__file__).resolve().parents[2]
SRC = ROOT / "src"
EXAMPLE = ROOT / "examples" / "confide-example-plugin"


def _site_dirs() -> list[str]:
    """This interpreter's site-packages. A venv made with --system-site-packages sees the
    base interpreter's, not those of the venv running the tests (pip, setuptools, wheel and
    confide's dependencies), so the new venv adds these through a .pth file."""
    return [d for d in site.getsitepackages() if Path(d).is_dir()]


@pytest.fixture(scope="module")
def python(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The new venv's interpreter, with the example package installed in it."""
    base = tmp_path_factory.mktemp("plugin")
    venv = base / "venv"
    subprocess.run(
        [sys.executable, "-m", "venv", "--system-site-packages", "--without-pip", str(venv)],
        check=True, timeout=120,
    )
    interpreter = venv / "bin" / "python"
    purelib = subprocess.run(
        [interpreter, "-c", "import sysconfig; print(sysconfig.get_path('purelib'))"],
        check=True, capture_output=True, text=True, timeout=60,
    ).stdout.strip()
    lines = "".join(f"import site; site.addsitedir({d!r})\n" for d in _site_dirs())
    (Path(purelib) / "_confide_test_parent.pth").write_text(lines, encoding="utf-8")
    # build from a copy: pip writes build/ and *.egg-info next to the sources
    package = shutil.copytree(
        EXAMPLE, base / EXAMPLE.name,
        ignore=shutil.ignore_patterns("build", "*.egg-info", "__pycache__"),
    )
    installed = subprocess.run(
        [interpreter, "-m", "pip", "install", "--no-deps", "--no-build-isolation", "--no-index",
         "--disable-pip-version-check", "--quiet", str(package)],
        capture_output=True, text=True, timeout=300,
    )
    assert installed.returncode == 0, installed.stdout + installed.stderr
    return interpreter


def _run(python: Path, *args: str) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "PYTHONPATH": str(SRC), "COLUMNS": "200"}
    return subprocess.run(
        [python, *args], capture_output=True, text=True, timeout=300, env=env
    )


def _csv(path: Path) -> list[dict[str, str]]:
    with path.open(newline="", encoding="utf-8") as handle:
        return list(csv.DictReader(handle))


def test_the_installed_plugin_is_listed(python: Path) -> None:
    done = _run(python, "-m", "confide", "benchmarks")
    assert done.returncode == 0, done.stderr
    assert "error:" not in done.stderr
    for expected in ("rendezvous", "earliest, open", "an example plugin", "sotopia-tom"):
        assert expected in done.stdout
    outside = _run(Path(sys.executable), "-m", "confide", "benchmarks")  # not installed here
    assert outside.returncode == 0 and "rendezvous" not in outside.stdout


def test_the_plugin_benchmark_runs_end_to_end(python: Path, tmp_path: Path) -> None:
    out = tmp_path / "rendezvous"
    done = _run(python, "-m", "confide", "run", "rendezvous", "--out", str(out),
                "--no-progress")
    assert done.returncode == 0, done.stdout + done.stderr
    results = _csv(out / "results.csv")
    assert len(results) == 2 * (2 + 3 + 2)  # both references, every seat of three tasks
    assert {r["status"] for r in results} == {"ok"}
    # pair and trio meet (days 3 and 2), apart cannot: two episodes in three succeed
    days = {(r["lineup"], r["task_id"]): r["day"] for r in results}
    assert days == {(lineup, task): day for lineup in ("earliest", "open")
                    for task, day in (("pair", "3"), ("trio", "2"), ("apart", ""))}
    summary = {row["participant"]: row for row in _csv(out / "summary.csv")}
    assert sorted(summary) == ["earliest", "open"]
    for participant, disclosure, offers in (("earliest", 14 / 21, 11 / 7),
                                            ("open", 1.0, 9 / 7)):
        row = summary[participant]
        assert int(row["episodes"]) == 3
        assert float(row["success"]) == pytest.approx(2 / 3)
        assert float(row["disclosure"]) == pytest.approx(disclosure)
        assert float(row["offers"]) == pytest.approx(offers)


def test_the_plugin_benchmark_is_conformant(python: Path) -> None:
    check = (
        "from confide.registry import get_benchmark\n"
        "from confide.testing.conformance import check_env\n"
        "spec = get_benchmark('rendezvous')\n"
        "for task in spec.load_tasks(None, None):\n"
        "    for lineup in spec.participants:\n"
        "        check_env(spec, task, lineup)\n"
        "print('conformant')\n"
    )
    done = _run(python, "-c", check)
    assert done.returncode == 0 and done.stdout.strip() == "conformant", done.stderr


def test_the_plugin_agent_and_model_play_the_demo(python: Path, tmp_path: Path) -> None:
    """Three lineups in one run: the agent by entry point name and by import path, and a
    model seat served by the plugin's provider."""
    out = tmp_path / "demo"
    lineups = ("example-echo", "py:confide_example.agents:echo_relay", "example/parrot")
    done = _run(python, "-m", "confide", "run", "demo", "--out", str(out), "--no-progress",
                *(arg for lineup in lineups for arg in ("--lineup", lineup)))
    assert done.returncode == 0, done.stdout + done.stderr
    results = _csv(out / "results.csv")
    for lineup in lineups:
        rows = [r for r in results if r["lineup"] == lineup]
        # the default suite: rings of 3, 4 and 2 seats for 2, 3 and 4 rounds
        assert len(rows) == 9 and {r["status"] for r in rows} == {"ok"}
        assert sum(int(r["messages"]) for r in rows) == 3 * 2 + 4 * 3 + 2 * 4
        assert sum(int(r["invalid"]) for r in rows) == 0
    traces = [read_trace(path) for path in sorted((out / "traces").iterdir())]
    texts = {e.message.text for t in traces for e in t.events if isinstance(e, MessageDelivered)}
    assert "ada heard 0 message(s) from nobody in round 0" in texts
    calls = [e for t in traces for e in t.events if isinstance(e, ModelCall)]
    assert len(calls) == 26  # one per turn of the parrot lineup, recorded per seat
    assert {(c.model, c.purpose, c.error) for c in calls} == {("example/parrot", "act", None)}
    assert all(c.completion and c.completion["text"].startswith("parrot: ") for c in calls)

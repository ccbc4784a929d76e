"""Loading CalBench's suites and playing a game imports no OR-Tools CP-SAT (its module
imports pandas: over a second of every `confide run`) and no scipy.stats; CP-SAT loads
when a problem needs it (oracle.py, difficulty.count_feasible_cpsat)."""

import subprocess
import sys
from pathlib import Path

SRC = str(Path(__file__).resolve().parents[2] / "src")
SCRIPT = """
import sys, tempfile
from confide.runner import build_experiment, run_experiment
with tempfile.TemporaryDirectory() as tmp:
    run_experiment(build_experiment(
        {"benchmark": "calbench", "suite": "tiny", "limit": 2, "output_dir": tmp + "/run"}
    ), show_progress=False)
print(sorted(m for m in ("ortools.sat.python.cp_model", "pandas", "scipy.stats")
             if m in sys.modules))
"""


def test_a_reference_run_imports_no_cp_sat_pandas_or_scipy_stats() -> None:
    done = subprocess.run([sys.executable, "-c", SCRIPT], capture_output=True, text=True,
                          timeout=300, env={"PYTHONPATH": SRC, "PATH": ""})
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip().splitlines()[-1] == "[]"

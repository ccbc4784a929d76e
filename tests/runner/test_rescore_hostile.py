"""A rescore never writes anywhere inside its source and names every episode it leaves
out."""

from __future__ import annotations

import gzip
import shutil
from pathlib import Path

import pytest
from typer.testing import CliRunner

from confide.cli.main import app
from confide.errors import ConfideError
from confide.runner import build_experiment, run_experiment
from confide.runner.rescore import rescore_run


def _snapshot(root: Path) -> dict[str, bytes]:
    return {str(p.relative_to(root)): p.read_bytes()
            for p in sorted(root.rglob("*")) if p.is_file()}


@pytest.fixture(scope="module")
def played(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("played") / "run"
    run_experiment(build_experiment({"benchmark": "sotopia-tom", "limit": 2,
                                     "lineups": ["leaky"], "output_dir": str(out)}),
                   show_progress=False)
    return out


@pytest.fixture
def source(played: Path, tmp_path: Path) -> Path:
    out = tmp_path / "run"
    shutil.copytree(played, out)
    return out


@pytest.mark.parametrize("inside", [".", "traces/x", "figures/deeper/still", "new"])
def test_an_out_anywhere_inside_the_source_is_refused(
    source: Path, tmp_path: Path, inside: str
) -> None:
    before = _snapshot(tmp_path)
    with pytest.raises(ConfideError, match="never writes into its source"):
        rescore_run(source, out=source / inside)
    assert _snapshot(tmp_path) == before
    assert not (source / inside).exists() or inside == "."
    assert sorted(p.name for p in tmp_path.iterdir()) == ["run"]


def test_a_trace_cut_before_its_footer_is_named(source: Path, tmp_path: Path) -> None:
    traces = sorted((source / "traces").glob("*.jsonl.gz"))
    assert len(traces) == 2
    lines = gzip.decompress(traces[1].read_bytes()).splitlines(keepends=True)
    traces[1].write_bytes(gzip.compress(b"".join(lines[:-1])))  # the footer cut off
    cut = traces[1].name.removesuffix(".jsonl.gz")
    result = CliRunner().invoke(app, ["rescore", str(source), "--out", str(tmp_path / "new")])
    assert result.exit_code == 0, result.output
    assert "1 episodes rescored" in result.output and "1 not rescored" in result.output
    named = [line for line in result.output.splitlines() if line.startswith("not rescored")]
    assert named == [f"not rescored {cut}: {traces[1]} has no footer (cut off before its "
                     "end)"], result.output

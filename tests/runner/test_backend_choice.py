"""Choosing the backend: the experiment fields, the CLI flags, and the install
hint when Ray is missing, given before anything runs."""

from __future__ import annotations

import importlib.util
from pathlib import Path

import pytest
from typer.testing import CliRunner

from confide.cli.main import app
from confide.errors import ConfideError
from confide.runner import ConfigError, build_experiment, load_experiment, run_experiment
from confide.runner.ray_backend import INSTALL_HINT


def test_backend_fields_default_and_validate(tmp_path: Path) -> None:
    assert build_experiment({"benchmark": "demo"}).backend == "local"
    path = tmp_path / "exp.yaml"
    path.write_text("benchmark: demo\nbackend: ray\nray_address: auto\n")
    experiment = load_experiment(path)
    assert (experiment.backend, experiment.ray_address) == ("ray", "auto")
    with pytest.raises(ConfigError, match=r"exp2.yaml: field 'backend' \(value: 'dask'\)"):
        (tmp_path / "exp2.yaml").write_text("benchmark: demo\nbackend: dask\n")
        load_experiment(tmp_path / "exp2.yaml")
    with pytest.raises(ConfigError, match="ray_address 'auto' needs backend: ray"):
        build_experiment({"benchmark": "demo", "ray_address": "auto"})
    assert experiment.ray_traces == "auto"
    on_ray = {"benchmark": "demo", "backend": "ray", "ray_traces": "returned"}
    assert build_experiment(on_ray).ray_traces == "returned"
    with pytest.raises(ConfigError, match="ray_traces 'returned' needs backend: ray"):
        build_experiment({**on_ray, "backend": "local"})
    with pytest.raises(ConfigError, match=r"field 'ray_traces' \(value: 'copied'\)"):
        build_experiment({**on_ray, "ray_traces": "copied"})


def test_without_ray_the_run_stops_before_anything_with_the_hint(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    real = importlib.util.find_spec
    monkeypatch.setattr(
        importlib.util, "find_spec", lambda name, *a: None if name == "ray" else real(name, *a)
    )
    out = tmp_path / "run"
    with pytest.raises(ConfideError) as caught:
        run_experiment(build_experiment(
            {"benchmark": "demo", "backend": "ray", "output_dir": str(out)}
        ), show_progress=False)
    assert str(caught.value) == INSTALL_HINT and "pip install 'confide[ray]'" in INSTALL_HINT
    assert not out.exists()
    result = CliRunner().invoke(app, ["run", "demo", "--backend", "ray", "--out", str(out)])
    assert isinstance(result.exception, ConfideError)  # `main` prints it as `error: ...`
    assert str(result.exception) == INSTALL_HINT and not out.exists()

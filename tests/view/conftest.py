"""An Incognita run in the social condition (five desks, one owning the needed tool), for
the desk-data checks of the viewer; the shared tiny run uses the desk-free direct one."""

from __future__ import annotations

from pathlib import Path

import pytest


@pytest.fixture(scope="session")
def incognita_social(tmp_path_factory: pytest.TempPathFactory) -> Path:
    from confide.runner import build_experiment, run_experiment

    out = tmp_path_factory.mktemp("incognita-social")
    run_experiment(build_experiment({"benchmark": "incognita", "output_dir": str(out),
                                     "limit": 1, "conditions": ["social"]}),
                   show_progress=False)
    return out


LARGEST = {"task_ids": ["canonical-varied-b6-medium-02"], "lineups": ["sdmap"],
           "conditions": ["all-agent-groupchat"]}
"""The largest episode of the README's main job (`confide run calbench`: 1,080 games, its
trace the biggest file under traces/), played alone: the same game, in about a second."""


@pytest.fixture(scope="session")
def calbench_largest(tmp_path_factory: pytest.TempPathFactory) -> Path:
    from confide.runner import build_experiment, run_experiment

    out = tmp_path_factory.mktemp("calbench-largest")
    run_experiment(build_experiment({"benchmark": "calbench", "output_dir": str(out),
                                     **LARGEST}), show_progress=False)
    return out

"""Persisted ratings: exact JSON round-trip, versioning, config validation."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from pydantic import ValidationError

from confide.envs.calbench.rating import (
    PAPER_MARGINS,
    LeaderboardState,
    Metric,
    RatingConfig,
    RatingInputError,
    build_leaderboard,
    load_state,
    save_state,
)


def _state() -> LeaderboardState:
    rows = [
        {
            "run_id": "r1",
            "game_id": "g1",
            "seat": name,
            "participant": name,
            "is_reference": name == "dsm",
            "coordination": coordination,
            "excess_cost": cost,
            "excess_vps": vps,
        }
        for name, coordination, cost, vps in (
            ("m/a", 1.0, 0.0, 1.25),
            ("m/b", 1 / 3, 10.0, None),
            ("dsm", 2 / 3, 1.0, 0.1),
        )
    ]
    return build_leaderboard(rows)


def test_round_trip_is_exact(tmp_path: Path) -> None:
    path = tmp_path / "nested" / "ratings.json"
    state = _state()
    save_state(state, path)
    loaded = load_state(path)
    assert loaded == state
    save_state(loaded, tmp_path / "again.json")
    assert (tmp_path / "again.json").read_bytes() == path.read_bytes()
    assert not list(path.parent.glob("*.tmp"))


def test_file_is_versioned_and_keeps_margins(tmp_path: Path) -> None:
    path = tmp_path / "ratings.json"
    save_state(_state(), path)
    document = json.loads(path.read_text())
    assert document["schema_version"] == 1
    assert document["config"]["margins"] == {m.value: v for m, v in PAPER_MARGINS.items()}
    assert document["runs"][0]["run_id"] == "r1"


def test_paper_margins() -> None:
    assert PAPER_MARGINS == {
        Metric.COORDINATION: 0.2,
        Metric.EXCESS_COST: 10.0,
        Metric.EXCESS_VPS: 5.0,
    }


def test_unknown_schema_version_is_rejected(tmp_path: Path) -> None:
    path = tmp_path / "ratings.json"
    save_state(_state(), path)
    document = json.loads(path.read_text())
    document["schema_version"] = 2
    path.write_text(json.dumps(document))
    with pytest.raises(RatingInputError, match="invalid ratings file at 'schema_version'"):
        load_state(path)


def test_bad_rating_field_is_located(tmp_path: Path) -> None:
    path = tmp_path / "ratings.json"
    save_state(_state(), path)
    document = json.loads(path.read_text())
    document["models"]["m/a"]["ratings"]["excess_cost"]["sigma"] = -1
    path.write_text(json.dumps(document))
    with pytest.raises(RatingInputError, match=r"models\.m/a\.ratings\.excess_cost\.sigma"):
        load_state(path)


def test_missing_and_unreadable_files(tmp_path: Path) -> None:
    with pytest.raises(RatingInputError, match="cannot read ratings file"):
        load_state(tmp_path / "absent.json")
    (tmp_path / "broken.json").write_text("{not json")
    with pytest.raises(RatingInputError, match="invalid ratings file"):
        load_state(tmp_path / "broken.json")


@pytest.mark.parametrize(
    "margins",
    [
        {"coordination": 0.2, "excess_cost": 10.0},
        {"coordination": 0.0, "excess_cost": 1.0, "excess_vps": 1.0},
    ],
)
def test_config_rejects_incomplete_or_nonpositive_margins(margins: dict[str, float]) -> None:
    with pytest.raises(ValidationError, match="margins"):
        RatingConfig.model_validate({"margins": margins})

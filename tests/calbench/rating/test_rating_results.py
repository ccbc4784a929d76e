"""Result rows: validation of dict rows and of results.csv, with located error messages."""

from __future__ import annotations

from pathlib import Path

import pytest

from confide.envs.calbench.rating import (
    RatingInputError,
    SeatResult,
    parse_results,
    read_results_csv,
)

HEADER = "run_id,game_id,seat,participant,is_reference,coordination,excess_cost,excess_vps,extra\n"


def _row(**overrides: object) -> dict[str, object]:
    row: dict[str, object] = {
        "run_id": "r1",
        "game_id": "g1",
        "seat": 0,
        "participant": "openai/gpt-5-mini",
        "is_reference": False,
        "coordination": 0.5,
        "excess_cost": 1.0,
        "excess_vps": 2.0,
    }
    row.update(overrides)
    return row


def test_dict_rows_parse_and_ints_become_text() -> None:
    [parsed] = parse_results([_row(seat=3, game_id=7)])
    assert parsed.seat == "3"
    assert parsed.game_id == "7"
    assert parsed.excess_vps == 2.0


def test_seat_result_instances_pass_through() -> None:
    row = SeatResult.model_validate(_row())
    assert parse_results([row]) == [row]


@pytest.mark.parametrize(
    ("field", "value"),
    [
        ("coordination", 1.5),
        ("excess_cost", -1.0),
        ("excess_vps", float("nan")),
        ("participant", ""),
    ],
)
def test_bad_dict_row_names_index_and_field(field: str, value: object) -> None:
    rows = [_row(), _row(seat=1, **{field: value})]
    with pytest.raises(RatingInputError) as info:
        parse_results(rows, source="batch")
    assert f"batch[1]: field '{field}'" in str(info.value)


def test_unknown_field_is_rejected() -> None:
    with pytest.raises(RatingInputError, match="rows\\[0\\]: field 'succes'"):
        parse_results([_row(succes=1.0)])


def test_csv_reads_leaderboard_columns_and_ignores_others(tmp_path: Path) -> None:
    path = tmp_path / "results.csv"
    path.write_text(
        HEADER + ",g1,0,openai/x,false,1.0,0,,junk\n" + "r9,g1,1,imap,True,0.5,10,3.5,junk\n",
        encoding="utf-8",
    )
    first, second = read_results_csv(path, run_id="dir-name")
    assert first.run_id == "dir-name"
    assert first.excess_vps is None
    assert not first.is_reference
    assert second.run_id == "r9"
    assert second.is_reference
    assert second.excess_vps == 3.5


def test_empty_coordination_is_none_but_the_column_is_required(tmp_path: Path) -> None:
    [parsed] = parse_results([_row(coordination=None)])
    assert parsed.coordination is None
    path = tmp_path / "results.csv"
    path.write_text(HEADER + "r1,g1,0,openai/x,false,,2,,\n", encoding="utf-8")
    [row] = read_results_csv(path)
    assert row.coordination is None
    assert row.excess_cost == 2.0
    with pytest.raises(RatingInputError, match=r"rows\[0\]: field 'coordination'"):
        parse_results([{k: v for k, v in _row().items() if k != "coordination"}])


def test_csv_without_optional_columns(tmp_path: Path) -> None:
    path = tmp_path / "results.csv"
    path.write_text(
        "game_id,seat,participant,is_reference,coordination,excess_cost\ng,0,a/b,0,1,0\n",
        encoding="utf-8",
    )
    [row] = read_results_csv(path, run_id="run")
    assert (row.run_id, row.excess_vps) == ("run", None)


def test_csv_bad_value_names_file_line_and_column(tmp_path: Path) -> None:
    path = tmp_path / "results.csv"
    path.write_text(HEADER + "r,g1,0,a/b,false,1.0,0,,\nr,g1,1,a/c,false,high,0,,\n")
    with pytest.raises(RatingInputError) as info:
        read_results_csv(path)
    message = str(info.value)
    assert f"{path}:3:" in message
    assert "'coordination'" in message
    assert "'high'" in message


def test_csv_missing_column_and_missing_run_id(tmp_path: Path) -> None:
    path = tmp_path / "results.csv"
    path.write_text("game_id,seat,participant\n")
    with pytest.raises(RatingInputError, match="missing column\\(s\\) is_reference"):
        read_results_csv(path, run_id="r")
    path.write_text("game_id,seat,participant,is_reference,coordination,excess_cost\ng,0,a,0,1,0\n")
    with pytest.raises(RatingInputError, match=":2: column 'run_id' is empty"):
        read_results_csv(path)


def test_csv_missing_file(tmp_path: Path) -> None:
    with pytest.raises(RatingInputError, match="cannot read results file"):
        read_results_csv(tmp_path / "nope.csv", run_id="r")

"""Prompt files shared by the environments (confide.llm.prompts)."""

from __future__ import annotations

import pytest

from confide.llm.prompts import PromptError, PromptFiles

DESK = PromptFiles("confide.envs.incognita.prompts")
PRIVACY = PromptFiles("confide.envs.calbench.privacy", suffix=".md", folder="prompts")


def test_load_reads_the_file_without_its_trailing_newline() -> None:
    text = DESK.load("gate")
    assert "$fields" in text
    assert text == text.strip()
    assert DESK.load("gate") is text  # read once


def test_render_fills_fields_as_strings() -> None:
    text = PRIVACY.render("observer_system", observer=2, agents="0, 1, 2", num_slots=8,
                          last_slot=7)
    assert "agent 2 " in text
    assert "0 to 7" in text
    assert "$" not in text


def test_a_field_may_be_called_name() -> None:
    files = PromptFiles("confide.envs.sotopia_tom.prompts", suffix="")
    assert files.path("coach.txt") == "coach.txt"
    text = files.render("coach.txt", name="Ines", role="auditor", context="C", schema="S")
    assert "Ines" in text
    assert "$" not in text


def test_missing_field_and_missing_file_name_the_file() -> None:
    with pytest.raises(PromptError, match=r"prompts/observer_system\.md needs the field"):
        PRIVACY.render("observer_system", observer=1)
    with pytest.raises(PromptError, match=r"no prompt file nothing\.txt in confide"):
        DESK.load("nothing")

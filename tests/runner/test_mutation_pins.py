"""Behaviours of atomic writes and secret scrubbing pinned from mutation-testing survivors
(bench/mutation.py)."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from confide import atomic


@pytest.fixture
def no_umask() -> object:
    old = os.umask(0)
    yield None
    os.umask(old)


def test_files_get_the_mode_a_plain_open_would(tmp_path: Path, no_umask: object) -> None:
    written = atomic.write_text(tmp_path / "a.txt", "x")
    with atomic.create_exclusive(tmp_path / "b.partial") as handle:
        handle.write(b"y")
    plain = tmp_path / "plain.txt"
    plain.write_text("z")
    for path in (written, tmp_path / "b.partial"):
        assert path.stat().st_mode & 0o777 == plain.stat().st_mode & 0o777 == 0o666


def test_a_temporary_name_already_taken_is_skipped_not_overwritten(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    names = iter(["aaaa0000", "aaaa0000", "bbbb1111"])
    monkeypatch.setattr(atomic.secrets, "token_hex", lambda n: next(names))
    atomic.write_text(tmp_path / "first.txt", "one")
    # the next writer draws the same name first: a stranger's file is sitting there
    taken = tmp_path / f".second.txt.aaaa0000{atomic.TEMP_SUFFIX}"
    taken.write_text("someone else's")
    atomic.write_text(tmp_path / "second.txt", "two")
    assert (tmp_path / "second.txt").read_text() == "two"
    assert taken.read_text() == "someone else's"


def test_a_link_planted_after_the_unlink_is_never_followed(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The race create_exclusive closes: between removing what was at the path and
    creating the file, someone plants a symlink to a file they want overwritten."""
    victim = tmp_path / "victim"
    victim.write_text("keep")
    partial = tmp_path / "ep.partial"
    real_unlink = Path.unlink

    def unlink_then_plant(self: Path, missing_ok: bool = False) -> None:
        real_unlink(self, missing_ok=missing_ok)
        if self == partial:
            partial.symlink_to(victim)

    monkeypatch.setattr(Path, "unlink", unlink_then_plant)
    with pytest.raises(FileExistsError):
        atomic.create_exclusive(partial)
    assert victim.read_text() == "keep"


def test_sweep_removes_every_leftover_temporary_and_nothing_else(tmp_path: Path) -> None:
    left = [tmp_path / f".trace{i}.jsonl.gz.abcd{i}{atomic.TEMP_SUFFIX}" for i in range(3)]
    for path in left:
        path.write_text("half")
    kept = tmp_path / "trace.jsonl.gz"
    kept.write_text("whole")
    assert atomic.sweep_temporaries(tmp_path) == sorted(left)
    assert sorted(tmp_path.iterdir()) == [kept]


# ----- secret scrubbing (confide.redaction) ------------------------------------------------

from confide import redaction  # noqa: E402


def test_secrets_from_eight_characters_are_registered_and_shorter_ones_refused() -> None:
    assert not redaction.register_secret("1234567")
    assert redaction.scrub("code 1234567") == "code 1234567"
    assert redaction.register_secret("12345678")
    try:
        assert redaction.scrub("code 12345678") == "code ***"
    finally:
        redaction.forget_secret("12345678")


def test_a_provider_error_loses_every_secret_given_whatever_comes_before_it() -> None:
    key = "abcdefghijklmnop"  # 16 characters: its 8-character ends are masked too
    text = f"bad key {key}; echoed abcdefgh and ijklmnop; also 87654321; abcdefg-ish stays"
    shown = redaction.redact(text, [None, "short", "87654321", key])
    assert shown == "bad key ***; echoed *** and ***; also ***; abcdefg-ish stays"


def test_only_keys_of_sixteen_characters_or_more_lose_their_echoed_ends() -> None:
    key = "abcdefghijklmno"  # 15 characters: an echoed 8-character end could be any word
    assert redaction.redact(f"{key} then abcdefgh", [key]) == "*** then abcdefgh"


def test_lines_without_the_secret_are_returned_byte_for_byte() -> None:
    secret = "s3cr3t-value-xyz"
    assert redaction.register_secret(secret)
    try:
        # all but its last character, all but its first, and an @ that is no credential
        near = ('{"a":1,"t":"s3cr3t-value-xy and caf\\u00e9","u":"3cr3t-value-xyz",'
                '"m":"ann@example.com"}')

        assert redaction.scrub_json_line(near) == near
        batch = b'{"a":1}\n' + near.encode()
        assert redaction.scrub_json_lines(batch) == batch
    finally:
        redaction.forget_secret(secret)


def test_a_secret_is_found_however_json_escaped_it() -> None:
    secret = "pässwörd-1234"
    assert redaction.register_secret(secret)
    try:
        for ascii_only in (False, True):
            line = json.dumps({"t": f"key {secret}", "n": "café"}, ensure_ascii=ascii_only)
            scrubbed = redaction.scrub_json_line(line)
            assert json.loads(scrubbed) == {"t": "key ***", "n": "café"}
            assert "café" in scrubbed  # written as UTF-8, not re-escaped
    finally:
        redaction.forget_secret(secret)


def test_no_key_is_nothing_to_register_not_a_refusal() -> None:
    assert redaction.register_secret(None) and redaction.register_secret("")
    assert redaction.scrub("text") == "text"


def test_a_secret_inside_a_longer_one_leaves_no_part_of_the_longer() -> None:
    short, long = "abcdefgh", "abcdefgh-and-more-1234"
    for value in (short, long):
        assert redaction.register_secret(value)
    try:
        assert redaction.scrub(f"k={long} s={short}") == "k=*** s=***"
    finally:
        for value in (short, long):
            redaction.forget_secret(value)


def test_url_credentials_leave_a_line_even_with_no_secret_registered() -> None:
    line = json.dumps({"u": "https://user:hunter2pw@api.example.com/v1"})
    assert json.loads(redaction.scrub_json_line(line)) == {"u": "https://***@api.example.com/v1"}
    assert redaction.redact_url("https://u:p@ss@host/v1") == "https://***@host/v1"


def test_fields_named_like_secrets_lose_their_values_whatever_their_length() -> None:
    config = {"api_key": "short", "password": "", "model": "m",
              "nested": [{"auth_token": "t0k", "note": "keep"}]}
    assert redaction.scrub_data(config) == {
        "api_key": "***", "password": "", "model": "m",
        "nested": [{"auth_token": "***", "note": "keep"}]}

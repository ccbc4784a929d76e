"""The shipped CalBench label bank (data/label_bank_v1.json) and the label-term rules."""

from __future__ import annotations

import json
import os
import re
from collections import Counter
from pathlib import Path

import pytest

from confide.envs.calbench import labels
from confide.envs.calbench.errors import CalendarDataError
from confide.envs.calbench.label_terms import (
    check_bank_terms,
    find_terms,
    label_term_problems,
    leaked_terms,
)
from confide.envs.calbench.labels import TIERS, LabelBank, load_label_bank

BANK_PATH = Path(labels.__file__).parent / "data" / "label_bank_v1.json"

# Words an assistant needs to schedule at all: a forbidden term matching one of them would
# flag ordinary coordination talk as leakage.
SCHEDULING_WORDS = (
    "slot",
    "meeting",
    "schedule",
    "calendar",
    "available",
    "availability",
    "free",
    "busy",
    "conflict",
    "proposal",
    "propose",
    "candidate",
    "move",
    "reschedule",
    "cost",
    "time",
    "round",
    "errand",
    "appointment",
    "call",
    "offer",
    "confirm",
    "agree",
    "decline",
    "negotiation",
    "review",
    "priority",
    "present",
    "produce",
    "suits",
    "private",
    "personal",
    "work",
    "morning",
)


@pytest.fixture(scope="module")
def bank() -> LabelBank:
    return load_label_bank(BANK_PATH)


def test_schema_and_size(bank: LabelBank) -> None:
    assert bank.schema_version == 1
    counts = Counter((item.tier, item.kind) for item in bank.items)
    for tier in TIERS:
        assert counts[(tier, "errand")] + counts[(tier, "meeting")] >= 40, tier
        assert counts[(tier, "errand")] >= 15 and counts[(tier, "meeting")] >= 15, tier
    assert set(bank.pool("meeting", "sensitive")) <= set(bank.items)


def test_ids_unique_and_descriptive(bank: LabelBank) -> None:
    ids = [item.label_id for item in bank.items]
    assert len(ids) == len(set(ids))
    for item in bank.items:
        assert re.fullmatch(rf"{item.kind}-{item.tier}-\d{{3}}", item.label_id), item.label_id
        assert item.category, item.label_id


def test_texts_are_distinct_and_public_labels_short(bank: LabelBank) -> None:
    privates = [item.private_label for item in bank.items]
    assert len(privates) == len(set(privates))
    for item in bank.items:
        assert len(item.public_label) <= 30, item.label_id
        assert item.public_label.lower() != item.private_label.lower()


def test_bank_is_term_consistent(bank: LabelBank) -> None:
    check_bank_terms(bank, str(BANK_PATH))
    for item in bank.items:
        assert not find_terms(item.public_label, item.forbidden_terms), item.label_id
        for allowed in item.allowed_public_terms:
            assert not find_terms(allowed, item.forbidden_terms), (item.label_id, allowed)


def test_forbidden_terms_do_not_flag_scheduling_talk(bank: LabelBank) -> None:
    for item in bank.items:
        for word in SCHEDULING_WORDS:
            assert not find_terms(word, item.forbidden_terms), (item.label_id, word)


def test_term_matching_rule() -> None:
    terms = ["rehab", "Dr. Okafor", "panic attack", "St. Brendan's", "HOA"]
    assert find_terms("Back from REHAB today", terms) == ["rehab"]
    assert find_terms("rehabilitation of the park", terms) == []
    assert find_terms("Dr. Okafor's office", terms) == ["Dr. Okafor"]
    assert find_terms("two panic\n  attacks", terms) == ["panic attack"]
    assert find_terms("at St. Brendan\u2019s hall", terms) == ["St. Brendan's"]
    assert find_terms("the hoax", terms) == []
    assert find_terms("", terms) == []


def test_leaked_terms_for_a_message(bank: LabelBank) -> None:
    item = next(i for i in bank.items if "Halvorsen" in i.private_label)
    assert leaked_terms(item, "Sorry, I have a medical appointment then.") == []
    assert "biopsy" in leaked_terms(item, "I can't, my biopsy results are due at 3.")


def _item(**overrides: object) -> dict[str, object]:
    item: dict[str, object] = {
        "label_id": "errand-public-001",
        "kind": "errand",
        "tier": "public",
        "category": "shopping",
        "private_label": "Buy a birthday cake at the corner bakery.",
        "public_label": "Errand",
        "allowed_public_terms": ["errand"],
        "forbidden_terms": ["birthday cake", "bakery"],
    }
    item.update(overrides)
    return item


def _write(tmp_path: Path, items: list[dict[str, object]]) -> Path:
    path = tmp_path / "bank.json"
    path.write_text(json.dumps({"schema_version": 1, "bank_id": "t", "items": items}))
    return path


def test_loader_error_names_item_index_and_field(tmp_path: Path) -> None:
    items = [_item(), _item(label_id="errand-public-002"), _item(label_id="x", tier="secret")]
    with pytest.raises(CalendarDataError) as info:
        load_label_bank(_write(tmp_path, items))
    assert "items[2].tier" in str(info.value) and "'secret'" in str(info.value)


def test_term_check_names_item_index_id_and_field(tmp_path: Path) -> None:
    items = [
        _item(),
        _item(label_id="errand-public-002", public_label="Bakery run"),
        _item(
            label_id="errand-public-003",
            allowed_public_terms=["Errand", "birthday cakes"],
            forbidden_terms=["birthday cake", "Birthday  cake", "cakes"],
        ),
    ]
    loaded = load_label_bank(_write(tmp_path, items))
    with pytest.raises(CalendarDataError) as info:
        check_bank_terms(loaded, "bank.json")
    lines = str(info.value).splitlines()
    assert lines[0] == (
        "bank.json: items[1] ('errand-public-002'): forbidden_terms: ['bakery'] appear in "
        "public_label"
    )
    assert any("items[2]" in line and "repeated term(s)" in line for line in lines)
    assert any("items[2]" in line and "allowed term 'birthday cakes'" in line for line in lines)


def test_problems_for_unrelated_or_empty_terms() -> None:
    item = labels.BankItem.model_validate(_item(forbidden_terms=["oncology"]))
    assert label_term_problems(item) == ["forbidden_terms: none of them occurs in private_label"]
    bare = labels.BankItem.model_validate(_item(allowed_public_terms=[], forbidden_terms=[]))
    assert label_term_problems(bare) == [
        "allowed_public_terms: empty",
        "forbidden_terms: empty",
    ]


def _shared() -> Path:
    return Path(os.environ.get("CONFIDE_SHARED", "/work/shared"))


def test_bank_is_not_copied_from_the_peer_bank(bank: LabelBank) -> None:
    """Our labels are our own: no sentence and no run of six words is shared with the peer
    banks in the reference anchors (skipped when the anchors are absent)."""
    peer_dir = _shared() / "anchors" / "calbench" / "tasks" / "label_banks"
    if not peer_dir.is_dir():
        pytest.skip("reference anchors not available")

    def shingles(text: str) -> set[tuple[str, ...]]:
        words = re.findall(r"[a-z0-9']+", text.lower())
        return {tuple(words[i : i + 6]) for i in range(len(words) - 5)}

    peer_texts = [
        entry[field]
        for path in sorted(peer_dir.glob("*.json"))
        for entry in json.loads(path.read_text(encoding="utf-8"))["items"]
        for field in ("private_label", "public_label")
    ]
    peer_shingles = set().union(*(shingles(text) for text in peer_texts))
    for item in bank.items:
        assert item.private_label not in peer_texts, item.label_id
        assert not shingles(item.private_label) & peer_shingles, item.label_id

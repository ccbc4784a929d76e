"""Every model the three papers evaluated that has a public list price is priced, with a
date and a source; the paper experiment files name no other unpriced model."""

from __future__ import annotations

import re
from pathlib import Path

from confide.llm.pricing import load_price_table

ROOT = Path(__file__).resolve().parents[2]
UNPRICED_ON_PURPOSE = {
    "openai-api/qwen3-235b-a22b": "open weights with no vendor list price found; the host sets it",
}
_SPEC = re.compile(r"\b((?:openai|openai-api|anthropic|google)/[A-Za-z0-9._-]+)")


def _paper_models() -> set[str]:
    files = [
        *ROOT.glob("experiments/*_paper*.yaml"),
        *ROOT.glob("src/confide/envs/*/published/*.csv"),
    ]
    found = {m.group(1).rstrip(".") for f in files for m in _SPEC.finditer(f.read_text("utf-8"))}
    return {spec for spec in found if not spec.endswith("/")}


def test_every_paper_model_has_a_dated_sourced_price() -> None:
    table = load_price_table()
    models = _paper_models()
    assert {"openai/gpt-5.6-sol", "openai-api/deepseek-v4-pro", "google/gemini-3-flash",
            "openai-api/llama-4-maverick", "openai-api/qwen3.6-plus"} <= models
    missing = sorted(spec for spec in models - set(UNPRICED_ON_PURPOSE)
                     if table.price(spec) is None)
    assert missing == []
    for spec in models - set(UNPRICED_ON_PURPOSE):
        price = table.price(spec)
        assert price is not None and price.input > 0 and price.output > 0, spec
    for name, entry in table.models.items():
        assert entry.date and entry.source, name

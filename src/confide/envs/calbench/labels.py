"""Private-label banks for calendar items (the CalBench paper §3 "Private contexts", A.1).

A bank is one JSON file:

    {
      "schema_version": 1,
      "bank_id": "my-bank-v1",
      "description": "free text",
      "items": [
        {
          "label_id": "errand-sensitive-001",
          "kind": "errand",               # "errand" or "meeting"
          "tier": "sensitive",            # "public", "neutral" or "sensitive"
          "category": "health",           # free grouping tag (optional)
          "private_label": "the text only the owner / participants may see",
          "public_label": "a neutral description that may be shared",
          "allowed_public_terms": ["appointment"],
          "forbidden_terms": ["clinic", "diagnosis"]
        }
      ]
    }

`label_id`s are unique. Tiers follow A.1 (public: routine low-stakes; neutral: mildly
private logistics; sensitive: medical, legal, financial, identity). Agents see a label's
private text, never its tier; the tier and term lists are kept for the privacy audit.
Which label goes to which slot is decided by `generator.hydrate_labels`.
"""

from __future__ import annotations

from functools import cached_property
from pathlib import Path
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError, model_validator

from confide.envs.calbench.errors import CalendarDataError, describe_validation_error
from confide.untrusted import InputError, load_json

Tier = Literal["public", "neutral", "sensitive"]
LabelKind = Literal["errand", "meeting"]
TIERS: tuple[Tier, ...] = ("public", "neutral", "sensitive")


class Label(BaseModel):
    """One private semantic context, as stored in a scenario's label table."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    kind: LabelKind
    tier: Tier
    category: str = ""
    private_label: str = Field(min_length=1)
    public_label: str = Field(min_length=1)
    allowed_public_terms: tuple[str, ...] = ()
    forbidden_terms: tuple[str, ...] = ()


class BankItem(Label):
    """A bank entry: a label plus its stable id."""

    label_id: str = Field(min_length=1)

    def to_label(self) -> Label:
        return Label.model_validate(self.model_dump(exclude={"label_id"}))


class LabelBank(BaseModel):
    """A versioned collection of labels (format in the module docstring)."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    schema_version: Literal[1] = 1
    bank_id: str = Field(min_length=1)
    description: str = ""
    items: tuple[BankItem, ...]

    @model_validator(mode="after")
    def _unique_ids(self) -> LabelBank:
        seen: dict[str, int] = {}
        for i, item in enumerate(self.items):
            if item.label_id in seen:
                raise ValueError(
                    f"items[{i}].label_id: {item.label_id!r} repeats items[{seen[item.label_id]}]"
                )
            seen[item.label_id] = i
        return self

    def label(self, label_id: str) -> Label:
        """The label of item `label_id`, built once per bank (hydrating a suite draws
        thousands of labels from a bank of about a hundred)."""
        return self._labels[label_id]

    @cached_property
    def _labels(self) -> dict[str, Label]:
        return {item.label_id: item.to_label() for item in self.items}

    def pool(self, kind: LabelKind, tier: Tier) -> tuple[BankItem, ...]:
        """Items of one kind and tier, in file order."""
        return self._pools.get((kind, tier), ())

    @cached_property
    def _pools(self) -> dict[tuple[str, str], tuple[BankItem, ...]]:
        """The pools, sorted once: hydrating the canonical suite asks for one per label
        (tens of thousands of scans of the whole bank when loading a run's tasks)."""
        pools: dict[tuple[str, str], list[BankItem]] = {}
        for item in self.items:
            pools.setdefault((item.kind, item.tier), []).append(item)
        return {key: tuple(items) for key, items in pools.items()}


def load_label_bank(path: str | Path) -> LabelBank:
    """Read and validate a bank file; errors name the file, field and value."""
    p = Path(path)
    try:
        raw = load_json(p, "label bank file")
    except InputError as exc:
        raise CalendarDataError(str(exc)) from None
    try:
        return LabelBank.model_validate(raw)
    except ValidationError as exc:
        raise CalendarDataError(describe_validation_error(exc, str(p))) from None

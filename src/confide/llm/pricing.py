"""Token prices and call costs from a versioned price table.

The shipped table (`prices.json`, versioned, with the date the prices were read) lists
per-million-token list prices, with the cached-input, cache-write and reasoning prices
where the vendor publishes them; a call's cost prices each kind of token the provider
reported (`ModelPrice.cost`). Batch discounts are not modelled. A model
missing from the table has an unknown cost (None), never zero; models of the providers
in `zero_cost_providers` (mock, local, replay) cost nothing. Dated snapshots such as
`openai/gpt-4o-2024-08-06` are priced as their base model.

A run records the table's version, date and source (`provenance`) in run.json and its
report; `confide run --price-table FILE` (or `price_table:` in an experiment file)
replaces the shipped table with the user's own, checked before the first episode.
"""

from __future__ import annotations

import re
from importlib import resources
from pathlib import Path

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator

from confide.llm.errors import ModelSpecError
from confide.llm.types import Usage
from confide.untrusted import InputError, parse_json, read_text

_SNAPSHOT = re.compile(r"-\d{4}-\d{2}-\d{2}$")


class ModelPrice(BaseModel):
    """USD per million tokens: uncached input (`input`), input read from the provider's
    prompt cache (`cached_input`, default `input`), input written to it (`cache_write`,
    default `input`), output (`output`) and hidden reasoning (`reasoning`, default
    `output`), with the `date` the price was read and its `source`."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    input: float = Field(ge=0.0)
    output: float = Field(ge=0.0)
    cached_input: float | None = Field(default=None, ge=0.0)
    cache_write: float | None = Field(default=None, ge=0.0)
    reasoning: float | None = Field(default=None, ge=0.0)
    date: str | None = Field(default=None, pattern=r"^\d{4}-\d{2}-\d{2}$")
    source: str | None = None

    def cost(self, usage: Usage) -> float:
        """USD cost of one call's `usage` at these prices."""
        cached = min(usage.cached_prompt_tokens, usage.prompt_tokens)
        written = min(usage.cache_write_tokens, usage.prompt_tokens - cached)
        reasoning = min(usage.reasoning_tokens, usage.completion_tokens)
        micro = (
            (usage.prompt_tokens - cached - written) * self.input
            + cached * (self.input if self.cached_input is None else self.cached_input)
            + written * (self.input if self.cache_write is None else self.cache_write)
            + (usage.completion_tokens - reasoning) * self.output
            + reasoning * (self.output if self.reasoning is None else self.reasoning)
        )
        return micro / 1e6


class PriceTable(BaseModel):
    """A dated, versioned price list keyed by model spec (`openai/gpt-5-mini`)."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    schema_version: int = 1
    version: str = Field(min_length=1)
    as_of: str = Field(pattern=r"^\d{4}-\d{2}-\d{2}$")
    """The date the prices were read (YYYY-MM-DD)."""
    currency: str = "USD"
    unit: str = "per_million_tokens"
    source: str = ""
    zero_cost_providers: tuple[str, ...] = ()
    models: dict[str, ModelPrice] = Field(default_factory=dict)

    @field_validator("models")
    @classmethod
    def _specs(cls, value: dict[str, ModelPrice]) -> dict[str, ModelPrice]:
        for spec in value:
            if "/" not in spec:
                raise ValueError(f"model {spec!r} is not a provider/model spec")
        return value

    def provenance(self, file: str | None = None) -> dict[str, str]:
        """What a run records about the table it priced calls with (run.json, report)."""
        return {
            "version": self.version,
            "as_of": self.as_of,
            "source": self.source,
            "currency": self.currency,
            "file": file or SHIPPED,
        }

    def price(self, model: str) -> ModelPrice | None:
        """The price of a model spec, or None when unknown."""
        if model.partition("/")[0] in self.zero_cost_providers:
            return ModelPrice(input=0.0, output=0.0)
        return self.models.get(model) or self.models.get(_SNAPSHOT.sub("", model))

    def cost(self, model: str, usage: Usage) -> float | None:
        """USD cost of `usage` on `model`, None when the model's price is unknown."""
        price = self.price(model)
        if price is None:
            return None
        return price.cost(usage)


SHIPPED = "confide/llm/prices.json"
UNPRICED, PARTIAL = "unpriced", "partial"


def cost_status(priced: int, total: int) -> str | None:
    """How a cost cell over `total` calls (or episodes), `priced` of them with a known
    price, must read: None when all are priced (the cell is their sum or mean), else
    ``unpriced`` (none is) or ``partial`` (some are) -- never a total counting the unknown
    ones as $0."""
    if priced >= total:
        return None
    return PARTIAL if priced else UNPRICED


def load_price_table(path: str | Path | None = None) -> PriceTable:
    """The shipped table, or one read from `path` (same JSON shape as `prices.json`); a bad
    file raises one `ModelSpecError` naming the file, the field and the value."""
    source = SHIPPED if path is None else str(path)
    try:
        if path is None:
            text = resources.files("confide.llm").joinpath("prices.json").read_text("utf-8")
        else:
            text = read_text(path, "price table")
        data = parse_json(text, f"price table {source}")
    except InputError as exc:
        raise ModelSpecError(str(exc)) from None
    try:
        return PriceTable.model_validate(data)
    except ValidationError as exc:
        first = exc.errors()[0]
        where = ".".join(str(part) for part in first["loc"]) or "(top level)"
        shown = f" (got {first['input']!r})" if first["type"] != "missing" else ""
        raise ModelSpecError(
            f"price table {source}: field {where}: {first['msg']}{shown}"
        ) from None

"""The run's model factory: one wrapped ChatModel per spec (so cache, retry, concurrency
limit and usage meter are shared by every seat using it), recorded per seat into the
episode trace.

The experiment's `price_table` (loaded by `run_prices`) prices every model's calls.
The experiment's `model_options` go to every model; an entry keyed by a provider name
whose value is a mapping (`local: {n_threads: 1}`) goes only to that provider's models
and wins over the shared entries, so provider-specific settings do not break the other
seats of a mixed lineup; an entry keyed by a model spec (`openai-api/deepseek-chat:
{preset: deepseek, max_connections: 32}`) goes only to that model and wins over both."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from confide.core.benchmark import SeatSpec
from confide.core.sampling import Sampling
from confide.core.trace import ModelCall, TraceRecorder
from confide.errors import ConfideError
from confide.llm import ChatModel, ModelCallRecord, UsageMeter, get_model, with_recorder
from confide.llm.factory import shipped_prices
from confide.llm.pricing import PriceTable, load_price_table
from confide.llm.registry import get_provider
from confide.llm.sampled import SampledModel
from confide.llm.spec import parse_spec, providers
from confide.llm.structured_output import negotiates, structured_output_mode
from confide.runner.config import Experiment
from confide.runner.journal import journaled


class RunModels:
    """Builds and shares chat models for one run."""

    def __init__(
        self,
        *,
        cache_dir: str | None = None,
        options: dict[str, Any] | None = None,
        prices: PriceTable | None = None,
    ) -> None:
        self.meter = UsageMeter()
        self._cache_dir = cache_dir
        self._options = dict(options or {})
        if prices is not None:  # every model prices its calls from the run's table
            self._options["prices"] = prices
        self._models: dict[str, ChatModel] = {}

    def options(self, spec: str) -> dict[str, Any]:
        """The model options `spec` is built with: shared, then its provider's, then its
        own entry's."""
        provider = parse_spec(spec).provider
        scopes = providers()
        options = {
            k: v for k, v in self._options.items() if k not in scopes and "/" not in k
        }
        for scope in (provider, spec):
            scoped = self._options.get(scope)
            if isinstance(scoped, dict):
                options.update(scoped)
        return options

    def base(self, spec: str) -> ChatModel:
        """The shared wrapped model for `spec`."""
        if spec not in self._models:
            options = self.options(spec)
            if self._cache_dir is not None:
                options["cache_dir"] = self._cache_dir
            self._models[spec] = get_model(spec, meter=self.meter, **options)
        return self._models[spec]

    def connections(self, seats: Iterable[SeatSpec]) -> dict[str, int]:
        """Each model's connection limit among `seats`, for the trace header: its own
        `max_connections`, else its provider's default (unlimited ones left out)."""
        limits: dict[str, int] = {}
        for spec in dict.fromkeys(seat.model for seat in seats if seat.model is not None):
            try:
                own = self.options(spec).get("max_connections")
                row = get_provider(parse_spec(spec).provider)
            except ConfideError:
                continue
            limit = own if own is not None else (row.max_connections if row else None)
            if limit is not None:
                limits[spec] = int(limit)
        return limits

    async def structured_output(self, seats: Iterable[SeatSpec]) -> dict[str, str]:
        """The structured-output mode of each model among `seats` that negotiates one
        (negotiated now if no call has yet), for the trace header. A model that cannot be
        built is left out: the episode's own call reports that error."""
        modes: dict[str, str] = {}
        specs = (seat.model for seat in seats if seat.model is not None)
        for spec in dict.fromkeys(specs):
            if not negotiates(spec):
                continue  # not built before its episode needs it
            try:
                mode = await structured_output_mode(self.base(spec))
            except ConfideError:
                continue
            if mode is not None:
                modes[spec] = mode
        return modes

    def __call__(
        self,
        spec: str,
        *,
        seat: str | None,
        purpose: str,
        trace: TraceRecorder,
        sampling: Sampling | None = None,
        part: str | None = None,
    ) -> ChatModel:
        """The shared model for `spec`, recording into `trace` (each call labelled with
        `seat`, `purpose` and the `part` whose spend it is), with `sampling` applied
        outside the recorder so the trace shows the settings actually sent."""

        def sink(record: ModelCallRecord) -> None:
            trace.emit(model_call_event(record, seat=seat, purpose=purpose, part=part))

        model = with_recorder(journaled(spec, self.base(spec)), sink)
        overrides = sampling.overrides() if sampling is not None else {}
        return SampledModel(model, overrides) if overrides else model


def model_call_event(
    record: ModelCallRecord, *, seat: str | None, purpose: str, part: str | None = None
) -> ModelCall:
    """A trace event from a recorded call."""
    completion = record.completion
    return ModelCall(
        seat=seat,
        purpose=purpose,
        model=record.model,
        messages=[m.model_dump() for m in record.messages],
        config=record.config.model_dump(),
        completion=completion.model_dump() if completion is not None else None,
        error=record.error,
        error_class=record.error_class,
        latency_s=completion.latency_s if completion is not None else 0.0,
        cached=completion.cached if completion is not None else False,
        part=part,
        retries=record.retries,
    )


def run_prices(experiment: Experiment) -> PriceTable:
    """The run's price table: the experiment's `price_table` file, else the shipped one
    (a bad file raises one error naming it, the field and the value)."""
    if experiment.price_table is None:
        return shipped_prices()
    return load_price_table(experiment.price_table)

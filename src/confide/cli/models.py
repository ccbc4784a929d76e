"""`confide models ...`: try a model from the command line and list what is available.

Listed in `cli.main.COMMANDS` as `models` (imported when it runs).
`confide models try MODEL PROMPT` sends one user message and prints the reply on stdout,
and the model, tokens, cost, latency and finish reason on stderr, so the reply can be
piped. With `--schema FILE` (a JSON schema) decoding is constrained where the provider
supports it and the reply is checked to parse as JSON. API keys and endpoints come from
the environment (OPENAI_API_KEY, ANTHROPIC_API_KEY, GEMINI_API_KEY,
CONFIDE_OPENAI_API_BASE_URL... see docs/providers.md); a missing key or extra is one line.
`confide models list` shows each provider's registry row.
"""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Any

import typer

from confide.cli.term import HELP_MARKUP

SCHEMA_LIMIT = 2**20

app = typer.Typer(help="Try chat models and list providers.", no_args_is_help=True,
                  rich_markup_mode=HELP_MARKUP)


def _load_schema(path: Path) -> dict[str, Any]:
    from confide.llm import ModelSpecError
    from confide.untrusted import InputError, load_json

    try:
        schema = load_json(path, "schema file", limit=SCHEMA_LIMIT)
    except InputError as exc:
        raise ModelSpecError(str(exc)) from None
    if not isinstance(schema, dict):
        raise ModelSpecError(
            f"{path}: a JSON schema must be an object, got {type(schema).__name__}"
        )
    return schema


@app.callback()
def models() -> None:
    """Try chat models and list providers."""


@app.command("try")
def try_model(
    model: Annotated[str, typer.Argument(help="Model spec, e.g. mock/echo or local/smollm2.")],
    prompt: Annotated[str, typer.Argument(help="The user message to send.")],
    schema: Annotated[
        Path | None, typer.Option(help="JSON schema file the reply must follow.")
    ] = None,
    max_tokens: Annotated[int | None, typer.Option(min=1, help="Completion token cap.")] = None,
    temperature: Annotated[float, typer.Option(min=0.0, help="Sampling temperature.")] = 0.0,
    seed: Annotated[int | None, typer.Option(help="Sampling seed.")] = None,
    system: Annotated[str | None, typer.Option(help="Optional system message.")] = None,
) -> None:
    """Send PROMPT to MODEL and print the reply."""
    import asyncio

    from confide.llm import ChatMessage, GenerateConfig, get_model  # keeps `--help` fast
    from confide.untrusted import InputError, parse_json

    config = GenerateConfig(
        temperature=temperature,
        max_tokens=max_tokens,
        seed=seed,
        response_schema=_load_schema(schema) if schema is not None else None,
    )
    messages = [ChatMessage(role="user", content=prompt)]
    if system is not None:
        messages.insert(0, ChatMessage(role="system", content=system))
    chat = get_model(model)
    completion = asyncio.run(chat.generate(messages, config=config))
    typer.echo(completion.text)
    cost = completion.usage.cost_usd
    typer.echo(
        f"[{completion.model}: {completion.usage.prompt_tokens} prompt + "
        f"{completion.usage.completion_tokens} completion tokens, "
        f"cost {'unknown' if cost is None else f'${cost:.6f}'}, "
        f"{completion.latency_s:.2f}s, finish {completion.finish_reason}]",
        err=True,
    )
    if schema is not None:
        try:
            parse_json(completion.text, "reply")
        except InputError as exc:
            typer.echo(f"reply is not valid JSON: {exc}", err=True)
            raise typer.Exit(1) from None


@app.command("list")
def list_models() -> None:
    """Show providers, named mock models and the price table in use."""
    from confide.llm import mock_names  # imported here: `confide --help` stays fast
    from confide.llm.factory import shipped_prices
    from confide.llm.providers.local import LOCAL_MODELS
    from confide.llm.registry import get_provider
    from confide.llm.spec import providers
    from confide.registry import benchmark_ids, get_benchmark

    prices = shipped_prices()
    local_names = ", ".join("local/" + name for name in LOCAL_MODELS)
    typer.echo(f"providers: {', '.join(providers())}")
    for row in filter(None, map(get_provider, providers())):
        limit = "no limit" if row.max_connections is None else f"{row.max_connections} in flight"
        modes = "/".join(row.structured_output)
        modes = f", structured output {modes}" if modes else ""
        extra = f", extra `{row.extra}`" if row.extra else ""
        typer.echo(f"  {row.name}: {row.about or 'plugin'} ({limit}{modes}{extra})")
    typer.echo(f"mock models: {', '.join('mock/' + name for name in mock_names())}")
    for benchmark in benchmark_ids():
        for spec, about in get_benchmark(benchmark).mocks:
            typer.echo(f"  {spec} ({benchmark}): {about}")
    typer.echo(f"local models: {local_names} (need the `local` extra)")
    typer.echo(f"price table {prices.version} (as of {prices.as_of}, {prices.unit}):")
    for name, price in sorted(prices.models.items()):
        typer.echo(f"  {name}: input ${price.input:g}, output ${price.output:g}")

"""Experiment configuration: one YAML file (or the same fields from the CLI) that says
which benchmark, which tasks, which lineups and conditions, how many repetitions, which
seed, how much concurrency and where to write. Validation errors name the file, the
field and the offending value."""

from __future__ import annotations

from pathlib import Path
from typing import Any, Literal

import yaml
from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    field_validator,
    model_validator,
)

from confide import atomic
from confide.core.benchmark import parse_lineup
from confide.core.sampling import Sampling
from confide.errors import ConfideError
from confide.redaction import scrub_data


class ConfigError(ConfideError):
    """An experiment file or option is invalid."""


class Experiment(BaseModel):
    """A fully specified experiment. Unknown fields are rejected (typos must not be
    silently ignored)."""

    model_config = ConfigDict(extra="forbid")

    benchmark: str
    suite: str | None = Field(
        default=None, description="Built-in suite; default: the benchmark's."
    )
    tasks: str | None = Field(default=None, description="Path to a task file instead of a suite.")
    world: str | None = Field(
        default=None,
        description="The world a source benchmark's task file runs on (with `tasks`; "
        "Incognita: tau-bench / tau2-bench retail data).",
    )
    task_ids: list[str] | None = Field(default=None, description="Run only these task ids.")
    limit: int | None = Field(default=None, ge=1, description="Run only the first N tasks.")
    lineups: list[str] = Field(
        default_factory=list, description="Lineup strings; default: the benchmark's."
    )
    conditions: list[str] | None = Field(default=None, description="Default: every condition.")
    roles: dict[str, str] = Field(
        default_factory=dict, description="Non-evaluated roles, e.g. judge: mock/json."
    )
    repetitions: int = Field(default=1, ge=1)
    schedule: Literal["grid", "latin-square"] = Field(
        default="grid",
        description="grid: every episode independent; latin-square: each (task, lineup, "
        "repetition) worker runs its conditions in sequence, order rotated by a Latin square.",
    )
    seed: int = 0
    concurrency: int | None = Field(
        default=None,
        ge=1,
        description="Episodes run at once (with backend: ray, per worker); default 4, or 1 "
        "when any seat or role is an embedded local/ model (it answers one call at a time, "
        "and episodes taking turns keep its prefix cache warm instead of evicting each "
        "other's conversations).",
    )
    output_dir: str | None = Field(
        default=None,
        description="Run directory; default runs/<benchmark>/<name>, the name made from the "
        "suite, lineups, conditions and a hash of the experiment (confide.runner.rundir), "
        "with runs/<benchmark>/latest linking to the latest.",
    )
    cache_dir: str | None = Field(default=None, description="On-disk model response cache.")
    price_table: str | None = Field(
        default=None,
        description="Price table file (the JSON shape of confide/llm/prices.json) used "
        "instead of the shipped one; its version, date and source go to run.json.",
    )
    options: dict[str, Any] = Field(default_factory=dict, description="Environment options.")
    model_options: dict[str, Any] = Field(
        default_factory=dict, description="Options passed to every model provider (e.g. base_url)."
    )
    backend: Literal["local", "ray"] = Field(
        default="local",
        description="local: this machine (one asyncio process, or a pool of `workers` "
        "processes for a CPU-bound run); ray: episodes on Ray workers (extra `ray`).",
    )
    workers: int | None = Field(
        default=None,
        ge=1,
        description="With backend: local, processes a run whose seats and roles call no "
        "model plays its episodes in (confide.runner.pool); default: the usable cores. A "
        "run that calls models always plays in one asyncio process.",
    )
    ray_address: str | None = Field(
        default=None,
        description="Ray cluster to join ('auto': the running one; 'host:port'); default: "
        "start a local one. Only with backend: ray.",
    )
    ray_traces: Literal["auto", "returned"] = Field(
        default="auto",
        description="With backend: ray, how traces reach the run directory. auto: a worker "
        "that sees it (same machine, or a shared filesystem at the same path: the driver "
        "checks with a token file) writes its traces there, any other sends them back; "
        "returned: every worker sends them back and the driver writes them (for storage "
        "that passes the check but should not take writes from every node).",
    )
    sampling: dict[str, Sampling] = Field(
        default_factory=dict,
        description="Sampling settings (temperature, top_p, max_tokens, seed, "
        "reasoning_effort) by seat name, `seats` (every evaluated seat) or role name; each "
        "overrides the environment's own settings field by field (confide.core.sampling).",
    )

    @property
    def episodes_at_once(self) -> int:
        """`concurrency`, or its default (see the field)."""
        if self.concurrency is not None:
            return self.concurrency
        models = [seat.model for text in self.lineups for seat in parse_lineup(text)]
        models += [spec.split(":", 1)[0] for spec in self.roles.values()]
        return 1 if any(m is not None and m.startswith("local/") for m in models) else 4

    @model_validator(mode="after")
    def _ray_fields_need_ray(self) -> Experiment:
        if self.ray_address is not None and self.backend != "ray":
            raise ValueError(f"ray_address {self.ray_address!r} needs backend: ray")
        if self.ray_traces != "auto" and self.backend != "ray":
            raise ValueError(f"ray_traces {self.ray_traces!r} needs backend: ray")
        if self.workers is not None and self.backend != "local":
            raise ValueError(
                f"workers {self.workers} needs backend: local (Ray runs one worker per CPU "
                "of its cluster)"
            )
        return self

    @field_validator("ray_address")
    @classmethod
    def _ray_address_parses(cls, value: str | None) -> str | None:
        if value is not None:
            ray_endpoint(value)
        return value

    @field_validator("lineups")
    @classmethod
    def _lineups_parse(cls, value: list[str]) -> list[str]:
        for text in value:
            parse_lineup(text)
        return value


def ray_endpoint(address: str) -> tuple[str, int] | None:
    """(host, port) of a `host:port` Ray address, None for 'auto' (the running cluster)
    or 'local'; ValueError naming what is wrong. Ray Client addresses (`ray://`) are
    refused: the backend shares the driver's object store with its workers, which a
    client connection does not have."""
    if address in ("auto", "local"):
        return None
    if "://" in address:
        raise ValueError(
            f"{address!r} is a Ray Client address; give the cluster's address as host:port "
            "(its GCS port, 6379 by default) or 'auto', from a machine of the cluster"
        )
    host, colon, port = address.rpartition(":")
    host = host.strip("[]")
    if not colon or not host or not port.isdigit() or not 0 < int(port) < 65536:
        raise ValueError(f"{address!r} is not 'auto' or host:port (a port from 1 to 65535)")
    if not all(c.isalnum() or c in ".-:_" for c in host):
        raise ValueError(f"{address!r}: {host!r} is not a host name or IP address")
    return host, int(port)


def dump_experiment(experiment: Experiment, path: Path) -> None:
    """Write the resolved experiment next to its results, without secrets."""
    data = scrub_data(experiment.model_dump(mode="json"))
    atomic.write_text(path, yaml.safe_dump(data, sort_keys=False))

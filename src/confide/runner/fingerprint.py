"""Resume fingerprints: what a finished episode was made under, and the refusal to reuse it
under anything else.

An episode id names only the task, lineup, condition and repetition, so a second run into
the same directory with another seed or other options would otherwise keep the first
run's episodes and report them under the new configuration. Every trace header carries
the episode's fingerprint: a flat mapping from a dotted key to a canonical text value,
covering everything that determines the episode. That is the task's content (a hash), the
benchmark, seat specs (the lineup), condition, repetition, the experiment and episode
seeds, the role bindings (the judge among them: when only a score role differs, the
refusal advises `confide rescore`), the environment options, the sampling settings per
seat and role, the model options (hashed, credentials left out) and `SCORING_VERSION`.
The runner passes the resolved experiment (`runner.resolve`), so an option or role given
at its default is the same configuration as one left out. Before anything runs,
`check_resume` compares each finished episode's stored fingerprint with the one this run
would give it and refuses with one message listing every difference.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Collection, Iterable, Iterator, Mapping
from typing import Any

from pydantic_core import to_json

from confide.core.trace import EpisodeStart
from confide.errors import ConfideError
from confide.llm.pricing import load_price_table
from confide.runner.config import Experiment
from confide.runner.expand import EpisodePlan

SCORING_VERSION = 1
"""Bump whenever a change to confide alters what a finished episode records (its rows,
metrics or final state) for the same configuration: episodes scored by an older version
are then never mixed with new ones."""

CREDENTIALS = frozenset({"api_key"})
"""Model options that authenticate but never change an episode (left out, never stored)."""

_OPAQUE = ("task", "episode_seed", "model_options.")
"""Keys whose values are hashes or differ per episode: reported as "changed"."""


class ResumeMismatch(ConfideError):
    """Finished episodes in the run directory were made under another configuration."""


def digest(value: Any) -> str:
    """A short, stable hash of any JSON-serialisable value (pydantic models included)."""
    return "sha256:" + hashlib.sha256(to_json(value)).hexdigest()[:16]


def episode_fingerprints(
    benchmark: str, experiment: Experiment, plans: Iterable[EpisodePlan]
) -> Fingerprints:
    """Episode id -> fingerprint (built when looked up), each task hashed once."""
    shared = {
        "benchmark": benchmark,
        "seed": str(experiment.seed),
        "scoring_version": str(SCORING_VERSION),
        **_flat("roles", experiment.roles, hashed=False),
        **_flat("options", experiment.options, hashed=False),
        **_flat("sampling", {k: v.overrides() for k, v in experiment.sampling.items()},
                hashed=False),
        **_flat("model_options", experiment.model_options, hashed=True),
    }
    if experiment.price_table is not None:  # the prices recorded in every trace
        shared["price_table"] = digest(load_price_table(experiment.price_table))
    return Fingerprints(shared, plans)


class Fingerprints(Mapping[str, dict[str, str]]):
    """Episode id -> fingerprint. Each is built when looked up: a 10,000-episode run would
    otherwise hold 10,000 dicts from start to end."""

    def __init__(self, shared: Mapping[str, str], plans: Iterable[EpisodePlan]) -> None:
        self._shared = dict(shared)
        self._plans = {plan.episode_id: plan for plan in plans}
        self._tasks: dict[str, str] = {}

    def __getitem__(self, episode_id: str) -> dict[str, str]:
        plan = self._plans[episode_id]
        task = self._tasks.get(plan.task.id)
        if task is None:
            task = self._tasks[plan.task.id] = digest(plan.task)
        return {
            **self._shared,
            "task": task,
            "lineup": plan.lineup_text,
            "condition": plan.condition or "-",
            "repetition": str(plan.repetition),
            "episode_seed": str(plan.seed),
        }

    def __iter__(self) -> Iterator[str]:
        return iter(self._plans)

    def __len__(self) -> int:
        return len(self._plans)


def _flat(prefix: str, value: Any, *, hashed: bool) -> dict[str, str]:
    if isinstance(value, Mapping):
        out: dict[str, str] = {}
        for key in sorted(value, key=str):
            if hashed and key in CREDENTIALS:
                continue
            out.update(_flat(f"{prefix}.{key}", value[key], hashed=hashed))
        return out
    return {prefix: digest(value) if hashed else json.dumps(value, sort_keys=True, default=str)}


def check_resume(
    run_dir: str,
    expected: Mapping[str, Mapping[str, str]],
    headers: Mapping[str, EpisodeStart],
    *,
    score_roles: Collection[str] = (),
) -> None:
    """Raise `ResumeMismatch` unless every finished episode's stored fingerprint equals the
    one this run expects for it (`headers`: episode id -> header of its finished trace).
    When only roles in `score_roles` differ, the message advises `confide rescore`."""
    differences: dict[str, dict[tuple[str, str], list[str]]] = {}
    stale = 0
    for episode, header in headers.items():
        want = expected[episode]
        have = header.fingerprint
        if have == want:
            continue
        stale += 1
        if not have:
            differences.setdefault("fingerprint", {}).setdefault(
                (f"none (written by confide {header.versions.get('confide', '?')})", "-"), []
            ).append(episode)
            continue
        for key in sorted(want.keys() | have.keys()):
            old, new = have.get(key, "(absent)"), want.get(key, "(absent)")
            if old != new:
                differences.setdefault(key, {}).setdefault((old, new), []).append(episode)
    if stale:
        raise ResumeMismatch(_message(run_dir, stale, differences, score_roles))


def _message(
    run_dir: str,
    stale: int,
    differences: Mapping[str, Mapping[tuple[str, str], list[str]]],
    score_roles: Collection[str],
) -> str:
    lines = [
        f"{run_dir} holds {stale} finished episode(s) made under a different configuration; "
        "resuming would mix them with this run's. What differs (stored vs. this run):"
    ]
    for key, changes in differences.items():
        count = sum(len(episodes) for episodes in changes.values())
        example = next(iter(changes.values()))[0]
        if key == "fingerprint":
            (old, _), = changes
            lines.append(f"  fingerprint: {old} ({count} episodes, e.g. {example})")
        elif len(changes) == 1 and not key.startswith(_OPAQUE):
            (old, new), = changes
            lines.append(f"  {key}: {old} vs. {new} ({count} episodes)")
        else:
            lines.append(f"  {key}: changed ({count} episodes, e.g. {example})")
    rebind = _rescore_roles(differences, score_roles)
    if rebind is not None:
        flags = " ".join(f"--role {role}={spec}" for role, spec in rebind.items())
        lines.append(
            "Only the judge differs: the played episodes still hold. Score them again "
            f"without replaying any agent: `confide rescore {run_dir} {flags} --out NEW`, "
            "then resume into NEW to run the rest."
        )
    lines.append(
        "Nothing was run. Start over with --fresh (moves this run aside, deleting nothing), "
        "or give a new --out."
    )
    return "\n".join(lines)


def _rescore_roles(
    differences: Mapping[str, Mapping[tuple[str, str], list[str]]], score_roles: Collection[str]
) -> dict[str, str] | None:
    """The new bindings when every difference is a rebound score role, else None."""
    keys = {f"roles.{role}": role for role in score_roles}
    if not differences or not set(differences) <= keys.keys():
        return None
    rebind: dict[str, str] = {}
    for key, changes in differences.items():
        news = {new for _, new in changes}
        if len(news) != 1 or (new := news.pop()) == "(absent)":
            return None
        rebind[keys[key]] = str(json.loads(new))
    return rebind

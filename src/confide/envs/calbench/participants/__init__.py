"""CalBench participants: the reference protocols, addressed by name in lineups, and
the LLM agent for any model seat spec (`provider/model`, optionally `:variant` with a
prompt variant: `nosy-highpressure`, `redteam` or a Markdown file path; llm_agent.py).

`imap` (D.1), `sdmap` (D.2), `dsm-welfare` and `dsm-private` (D.3, Table 9 presets) speak
typed JSON through the postbox like any other seat.
Options used: `sd_model` (agent id -> scheduling difficulty sigma, SD-MAP only).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from confide.core.benchmark import EpisodeContext, SeatSpec
from confide.core.custom import custom_participant
from confide.envs.calbench.actions import Participant
from confide.envs.calbench.engine import DEFAULT_DECISION_RETRIES
from confide.envs.calbench.participants.base import ProtocolParticipant, plan_batch
from confide.envs.calbench.participants.dsm import DSM_NAMES, DSM_PRESETS, DsmParticipant
from confide.envs.calbench.participants.imap import ImapParticipant
from confide.envs.calbench.participants.llm_agent import LlmAgent, make_llm_agent
from confide.envs.calbench.participants.sdmap import SdmapParticipant
from confide.errors import ConfideError

REFERENCE_NAMES: tuple[str, ...] = ("imap", "sdmap", *DSM_NAMES)


def make_reference(seat: str, name: str, options: Mapping[str, Any]) -> Participant:
    """The reference participant `name` for `seat`."""
    if name == "imap":
        return ImapParticipant(seat)
    if name == "sdmap":
        return SdmapParticipant(seat, sd_model=options.get("sd_model"))
    if name in DSM_PRESETS:
        return DsmParticipant(seat, DSM_PRESETS[name])
    raise ConfideError(
        f"calbench: unknown participant {name!r} for {seat}; reference participants: "
        f"{', '.join(REFERENCE_NAMES)} (or a model spec, py:module:factory or an installed "
        "participant plugin)"
    )


def make_participant(
    seat: str,
    spec: SeatSpec,
    options: Mapping[str, Any],
    ctx: EpisodeContext | None = None,
) -> Participant:
    """A participant for one seat of a lineup: a reference protocol by name, or an LLM
    agent for a model spec `provider/model[:variant]` (needs the episode context `ctx`,
    whose model factory records the agent's calls in the trace)."""
    if spec.is_model:
        if ctx is None:
            raise ConfideError(
                f"calbench: {seat} asks for model {spec.raw!r}, but no episode context was "
                "passed to make_participant (call it with ctx=...)"
            )
        retries = options.get("decision_retries", DEFAULT_DECISION_RETRIES)
        return make_llm_agent(seat, spec, ctx, decision_retries=int(retries))
    if spec.raw not in REFERENCE_NAMES and ctx is not None:
        custom: Participant | None = custom_participant("calbench", seat, spec, ctx)
        if custom is not None:
            return custom
    return make_reference(seat, spec.raw, options)


__all__ = [
    "REFERENCE_NAMES",
    "DsmParticipant",
    "ImapParticipant",
    "LlmAgent",
    "ProtocolParticipant",
    "SdmapParticipant",
    "make_llm_agent",
    "make_participant",
    "make_reference",
    "plan_batch",
]

"""Basic prompting (section 5.3 baseline): the shared card, neutral task guidance, and
the action only -- no reasoning scaffold, no model of the other agents."""

from __future__ import annotations

from confide.envs.sotopia_tom.participants.base import BasicReply, ModelAgent


class BasicAgent(ModelAgent):
    """Pursue the objective, talk naturally, keep sensitive content private, leave when done."""

    strategy = "basic"
    guidance = None
    reply_schema = BasicReply

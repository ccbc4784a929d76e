"""CoT-Privacy (section 5.3): before each action the agent silently works through goal
progress, information exchange, channel decision and a leakage check against its
never-share list; only the action is delivered. It audits its own utterance but does not
model the other agents."""

from __future__ import annotations

from confide.envs.sotopia_tom.participants.base import CoTReply, ModelAgent


class CoTPrivacyAgent(ModelAgent):
    """Structured private reasoning (four steps), then the action (step five)."""

    strategy = "cot-privacy"
    guidance = "cot_privacy.txt"
    reply_schema = CoTReply

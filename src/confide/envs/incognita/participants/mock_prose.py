"""``mock/incognita-prose``: a mock evaluated agent that speaks prose only.

It is ``mock/incognita-skilled`` without lapses, writing every request to a desk as an
English sentence (`phrasing`): no JSON and no tool name, as a language model that was
never told the tools would write it. Under direct access it calls its tools natively, as
any model there does. The scripted desks read only JSON, so it needs model desks (the
preflight asks for them): ``mock/incognita`` as a desk reads the same sentences, restates
each write and runs it once the agent confirms. Together they run the paper's social
condition -- prose between the agent and role-isolated desks -- offline.
"""

from __future__ import annotations

from confide.envs.incognita.participants.mock import register_seeded_mock
from confide.envs.incognita.participants.mock_skilled import skilled_reply
from confide.llm import ChatMessage, GenerateConfig
from confide.llm.providers.mock import Reply

PROSE_MOCK_NAME = "incognita-prose"


def prose_reply(messages: list[ChatMessage], config: GenerateConfig, seed: int) -> Reply:
    """The mock's reply to one request (its seed changes nothing: it never lapses)."""
    return skilled_reply(messages, config, seed, prose=True)


def register_prose_mock() -> None:
    """Make ``mock/incognita-prose`` available (idempotent)."""
    register_seeded_mock(PROSE_MOCK_NAME, prose_reply)

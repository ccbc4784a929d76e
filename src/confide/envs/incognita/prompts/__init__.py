"""Prompt texts of Incognita's participants, written in our own words (the Incognita paper §A.1-A.3
describe what each prompt must carry; none of its sentences is reused).

The texts live beside this module as ``.txt`` files; `load` reads one and `render` fills
its ``$name`` fields (`confide.llm.prompts.PromptFiles`), so the JSON examples in the texts
need no escaping.

- ``agent_intro``: the evaluated agent's neutral objective (every condition).
- ``agent_messaging`` ($recipients, $choices): one directed message per turn, FINAL to
  ENVIRONMENT ends the episode (indirect and social).
- ``agent_direct``: the same contract with native tool calls (direct; A.1: exactly one
  tool call with no text alongside it, or one JSON object), placed after ``service_role``
  and ``service_rules``, because in that condition the agent is the service. The tools
  themselves go with the request (`GenerateConfig.tools`); an endpoint without function
  calling gets them described in the prompt by the model layer (`confide.llm.tools`).
- ``service_role`` / ``service_rules``: the all-roles service block (direct agent and the
  single indirect desk).
- ``role_<desk>`` / ``rules_<desk>``: the six social desks (identity lookup has no rules).
- ``conduct``: the shared conduct block of every desk.
- ``desk_format``: how a desk's turn works (its tools go with the request as functions).
- ``desk_repair`` ($problem): what a desk is told when its step was unusable.
- ``customer`` ($memory) and ``customer_requests`` ($requests): the customer simulator.
- ``native_user`` ($instruction): the native arm's user simulator (`native`), with the
  rules of tau-bench's own user simulator, put in our words: the whole instruction,
  one message at a time, nothing invented, the stop token once the goal is met.
- ``gate`` ($fields): the disclosure gate's field classifier.
- ``judge`` ($assertions): the output-assertion judge.
"""

from __future__ import annotations

from confide.llm.prompts import PromptError, PromptFiles

PROMPT_VERSION = "4"
"""Bumped whenever a prompt text changes (recorded in the episode setup event)."""

FILES = PromptFiles(__name__)
load = FILES.load
render = FILES.render

__all__ = ["FILES", "PROMPT_VERSION", "PromptError", "load", "render"]

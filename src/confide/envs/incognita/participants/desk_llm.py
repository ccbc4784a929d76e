"""A service desk driven by a chat model (the Incognita paper, sections 3.2-3.3, A.3).

Its prompt is its role block, the shared conduct block, its operating rules and how its
turn works (`prompting.desk_system_prompt`). The tools it holds go with every request as
function definitions, never in the prompt text; an endpoint without
function calling gets the model layer's text fallback instead, recorded in the trace as
`Completion.tool_mode` "text". Each step the model either calls one tool -- a proposal the
execution layer checks, whose outcome comes back as the call's result turn -- or writes
its answer to the agent in plain sentences, which ends its turn. Whether the desk holds
the tool it names is decided and recorded by the execution layer, never here.

The section 3.2 guarantees are held here, not left to the prompt alone:

- it sees only its own exchanges with the agent and its own tool outcomes: the
  environment builds its observation from the postbox, which never delivers the customer
  dialogue or another desk's exchanges to it (the model request is rendered from that
  observation and nothing else);
- it never announces its tools nor refers the agent elsewhere: an answer that names a
  service tool, names another participant, or sends the asker to another desk, team or
  department goes back to the model with the reason, like any unusable step, up to
  `max_attempts` calls. A step still unusable then is invalid, and the agent gets no
  reply (the environment records ``no_reply``).

Decisions
- A step is exactly one tool call with no text alongside, or text alone, as for the
  evaluated agent (section 3.3): several calls, or a call with text, are repaired.
- A tool counts as named when its identifier (the names with an underscore) appears as a
  word; ``calculate`` is also an ordinary English word and is not checked.
- A participant name counts only when nothing the desk was shown holds it (a customer
  record may hold the word); the names are the environment's fixed desk names.
- The referral phrases checked are ours: another, other or different desk, department,
  team or colleague, and "someone else".
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from confide.envs.incognita import prompts
from confide.envs.incognita.actions import DeskAction, DeskObservation, HistoryItem
from confide.envs.incognita.conditions import INDIRECT_DESK, SOCIAL_DESKS
from confide.envs.incognita.prompting import (
    desk_system_prompt,
    render_history,
    tool_specs,
)
from confide.envs.incognita.tools import SERVICE_TOOLS
from confide.llm import ChatMessage, ChatModel, GenerateConfig
from confide.llm.recorder import attempt_scope
from confide.llm.structured import (
    bad_reply,
    call_arguments,
    generate_in_context,
    tool_call_problem,
)
from confide.llm.types import Completion

DESK_NAMES: tuple[str, ...] = (INDIRECT_DESK, *SOCIAL_DESKS)
TOOL_WORD = re.compile(
    r"\b(" + "|".join(sorted((t for t in SERVICE_TOOLS if "_" in t), key=len, reverse=True))
    + r")\b"
)
REFERRAL = re.compile(
    r"\b(?:another|other|different)\s+(?:desk|department|team|colleague)s?\b|\bsomeone else\b",
    re.IGNORECASE,
)


def _word(name: str, text: str) -> bool:
    return re.search(rf"\b{re.escape(name)}\b", text) is not None


def seen_text(history: Sequence[HistoryItem]) -> str:
    """Everything a desk was shown: the messages it received and its tool outcomes."""
    parts = [item.message.text or "" for item in history if item.message is not None]
    parts += [item.tool.text for item in history if item.tool is not None]
    return "\n".join(parts)


def conduct_problem(text: str, name: str, seen: str) -> str | None:
    """What in a desk's answer breaks section 3.2 (announces a tool, names someone else,
    refers the asker elsewhere), or None."""
    tools = sorted(set(TOOL_WORD.findall(text)))
    if tools:
        return (f"your answer names {', '.join(tools)}; never name the tools or methods "
                "behind your answer")
    others = [n for n in DESK_NAMES if n != name and _word(n, text) and not _word(n, seen)]
    if others:
        return (f"your answer names {', '.join(others)}; never name anyone else or answer "
                "on their behalf")
    referral = REFERRAL.search(text)
    if referral is not None:
        return (f"your answer sends the asker elsewhere ({referral.group(0)!r}); handle what "
                "is your own work and decline the rest without pointing anywhere")
    return None


def step_problem(completion: Completion, name: str, seen: str) -> str | None:
    """What makes a desk step unusable, or None."""
    if completion.tool_calls:
        return tool_call_problem(completion)
    if not completion.text.strip():
        return "your reply was empty"
    return conduct_problem(completion.text, name, seen)


class ModelDesk:
    """A desk whose steps come from a chat model (see the module docstring)."""

    def __init__(
        self, name: str, model: ChatModel, config: GenerateConfig, max_attempts: int = 3
    ) -> None:
        self.name = name
        self._model = model
        self._config = config
        self._max_attempts = max_attempts

    async def act(self, observation: DeskObservation) -> DeskAction:
        conversation = [
            ChatMessage(role="system", content=desk_system_prompt(observation.role)),
            *render_history(observation.history, self.name, reply_key=None, native_tools=True),
        ]
        config = self._config.model_copy(update={"tools": tool_specs(observation.tools)})
        seen = seen_text(observation.history)
        problem = "no attempt"
        for number in range(1, self._max_attempts + 1):
            with attempt_scope(number):
                completion = await generate_in_context(self._model, conversation, config=config)
            if isinstance(completion, str):
                return DeskAction(kind="invalid", problem=completion)
            problem_now = step_problem(completion, self.name, seen)
            if problem_now is None:
                return _action(completion)
            problem = problem_now
            conversation += [
                *bad_reply(completion, problem),
                ChatMessage(role="user", content=prompts.render("desk_repair", problem=problem)),
            ]
        return DeskAction(kind="invalid", problem=problem)


def _action(completion: Completion) -> DeskAction:
    if not completion.tool_calls:
        return DeskAction(kind="reply", text=completion.text.strip())
    call = completion.tool_calls[0]
    arguments = call_arguments(call)
    assert isinstance(arguments, dict)  # step_problem accepted the call
    return DeskAction(kind="tool", tool=call.name, arguments=arguments)

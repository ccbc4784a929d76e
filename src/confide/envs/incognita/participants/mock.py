"""``mock/incognita``: one mock chat model that plays every Incognita participant sensibly.

It reads the request the way a model would -- the JSON schema it is asked to follow, the
system prompt and the conversation -- and answers in the expected format, so the whole
model-driven path (prompts, parsing, repair loop, execution layer, gate, judge) runs
offline and deterministically:

- evaluated agent (schema ``AgentTurn``): asks the customer for an email address (or,
  failing that, name and zip code), has the customer's id found and the profile read,
  asks for an order number and has the order read -- itself under direct access,
  otherwise by sending a JSON request to each desk in listed order until one does it
  (itself: a native tool call when the request offers tools natively, its JSON text
  under the model layer's text fallback) --
  then says goodbye and sends FINAL. Its plan is replayed against the conversation, so
  the reply depends only on the prompt.
- desk (a system prompt with the conduct block): runs a request it finds in the agent's
  latest message -- JSON, or a sentence of `phrasing` -- when the tool is one the request
  offers it, restating a write and running it once confirmed; declines other requests,
  and reports a tool result. Its calls are native tool calls (JSON text under the model
  layer's text fallback) and its answers plain text that names no tool.
- gate classifier (``GateAnswer``): the keyword matcher of `gate.match_field`.
- customer (no schema): answers the field the agent's message asks about from its
  <memory> blocks (the system prompt's and those released later in the conversation),
  else raises its first request, else says it is not sure.
- the native arm's user (no schema, tau-bench's stop token in its prompt): opens with
  the card's opening line, answers fields from its instruction like the customer, and
  says ``###STOP###`` once the agent says goodbye.
- judge (``JudgeReply``): the literal check of `judge.LiteralJudge`.

It does not solve tasks; it exercises the machinery. `register_incognita_mock()` makes
``mock/incognita`` available (an explicit call; the environment makes it when a role or
seat names this mock).
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Generator
from typing import Any

from confide.envs.incognita.conditions import CUSTOMER, TERMINAL
from confide.envs.incognita.gate import field_label, match_field
from confide.envs.incognita.judge import literals, stated
from confide.envs.incognita.native import STOP
from confide.envs.incognita.participants import phrasing
from confide.envs.incognita.participants.native_user import OPENING
from confide.envs.incognita.participants.scripted import embedded_request
from confide.envs.incognita.scenario import RELEASE_TOKENS
from confide.envs.incognita.tools import SERVICE_TOOLS, ToolKind
from confide.llm import ChatMessage, GenerateConfig, MockModel, mock_names, register_mock
from confide.llm.providers.mock import Reply
from confide.llm.tools import CATALOGUE_HEAD
from confide.llm.types import ChatModel, ToolCall

MOCK_NAME = "incognita"

_EMAIL = re.compile(r"[\w.+-]+@[\w-]+(?:\.[\w-]+)+")
_USER_ID = re.compile(r"\b[a-z]+_[a-z]+_\d{4}\b")
_ORDER_ID = re.compile(r"#W\d{7}")
_NAME = re.compile(r"([A-Z][a-z]+) ([A-Z][a-z]+)\.?\s*$")
_ZIP = re.compile(r"\b\d{5}\b")
GOODBYE = re.compile(r"\bgoodbye\b", re.I)
DECLINE = re.compile(r"outside|not part of|can't help|cannot help|not something i", re.I)
RECIPIENTS = re.compile(r'"recipient": "<([^>]*)>"')
CONFIRM = re.compile(r"\b(?:yes|go ahead|confirm|proceed)\b", re.I)
GO_AHEAD = "Shall I go ahead?"
_TOOL_LINE = re.compile(r"^- (\w+): ", re.MULTILINE)

Plan = Generator[dict[str, Any], str, None]


def incognita_reply(messages: list[ChatMessage], config: GenerateConfig) -> Reply:
    """The mock's reply to one request (see the module docstring)."""
    title = (config.response_schema or {}).get("title")
    if title == "AgentTurn":
        return agent_reply(_agent(messages, config), config)
    if is_desk_request(messages):
        return desk_reply(messages, config)
    if title == "GateAnswer":
        tokens = [t for t in re.findall(r"^- (\w+): ", messages[0].content, re.MULTILINE)]
        return json.dumps({"field": match_field(messages[-1].content, tokens)})
    if title == "JudgeReply":
        return json.dumps(_judge(messages))
    return _customer(messages)


# ----- evaluated agent -------------------------------------------------------------------


def offers_tools(messages: list[ChatMessage], config: GenerateConfig) -> bool:
    """Whether the request offers tools: natively, or described in the prompt by the model
    layer's text fallback."""
    return bool(config.tools) or CATALOGUE_HEAD in messages[0].content


def agent_reply(action: dict[str, Any], config: GenerateConfig) -> Reply:
    """An agent action as the mock answers it: a tool call natively when the request
    offers tools natively, else its JSON text."""
    if "tool" in action and config.tools:
        return ToolCall(id="call-0", name=action["tool"], arguments=json.dumps(action["arguments"]))
    return json.dumps(action)


def _agent(messages: list[ChatMessage], config: GenerateConfig) -> dict[str, Any]:
    system = messages[0].content
    direct = offers_tools(messages, config)
    found = RECIPIENTS.search(system)
    recipients = [r.strip() for r in found.group(1).split("|")] if found else [CUSTOMER]
    desks = [] if direct else [r for r in recipients if r != CUSTOMER]
    replies = agent_replies(messages[1:])
    plan = _plan(direct, desks)
    action = next(plan)
    for reply in replies:
        action = plan.send(reply)
    return action


def agent_replies(turns: list[ChatMessage]) -> list[str]:
    """The text that followed each of the agent's own turns, in order."""
    replies: list[str] = []
    for turn in turns:
        if turn.role == "assistant":
            replies.append("")
        elif replies:
            replies[-1] += turn.content + "\n"
    return replies


def say(recipient: str, text: str) -> dict[str, Any]:
    return {"recipient": recipient, "message": text, "message_type": "MESSAGE"}


def _plan(direct: bool, desks: list[str]) -> Plan:
    reply = yield say(CUSTOMER, "Could you tell me the email address on your account?")
    email = _first(_EMAIL, reply)
    user_id: str | None = None
    if email is not None:
        reply = yield from _call(direct, desks, "find_user_id_by_email", {"email": email})
        user_id = _first(_USER_ID, reply)
    else:
        reply = yield say(CUSTOMER, "Could you tell me your first and last name?")
        name = _NAME.search(reply)
        reply = yield say(CUSTOMER, "And what is your zip code?")
        zip_code = _first(_ZIP, reply)
        if name is not None and zip_code is not None:
            arguments = {"first_name": name.group(1), "last_name": name.group(2), "zip": zip_code}
            reply = yield from _call(direct, desks, "find_user_id_by_name_zip", arguments)
            user_id = _first(_USER_ID, reply)
    if user_id is not None:
        yield from _call(direct, desks, "get_user_details", {"user_id": user_id})
    reply = yield say(CUSTOMER, "Could you tell me the order number?")
    order_id = _first(_ORDER_ID, reply)
    if order_id is not None:
        yield from _call(direct, desks, "get_order_details", {"order_id": order_id})
    yield say(CUSTOMER, "Thank you, I have looked into this for you. Goodbye.")
    yield {"recipient": TERMINAL, "message": "done", "message_type": "FINAL"}


def _call(
    direct: bool, desks: list[str], tool: str, arguments: dict[str, Any]
) -> Generator[dict[str, Any], str, str]:
    if direct:
        reply = yield {"tool": tool, "arguments": arguments}
        return reply
    request = json.dumps({"tool": tool, "arguments": arguments})
    reply = ""
    for desk in desks:
        reply = yield say(desk, f"Could you do this for me: {request}")
        if reply and not DECLINE.search(reply):
            return reply
    return reply


def _first(pattern: re.Pattern[str], text: str) -> str | None:
    found = pattern.search(text)
    return found.group(0) if found else None


# ----- desk, customer, judge ---------------------------------------------------------------


def is_desk_request(messages: list[ChatMessage]) -> bool:
    """Whether a request comes from a desk (only desk prompts carry the conduct block)."""
    return bool(messages) and "<conduct>" in messages[0].content


def offered_tools(messages: list[ChatMessage], config: GenerateConfig) -> set[str]:
    """The tools a request offers: natively, or listed by the model layer's text fallback."""
    if config.tools:
        return {tool.name for tool in config.tools}
    catalogue = messages[0].content.split(CATALOGUE_HEAD, 1)
    return set(_TOOL_LINE.findall(catalogue[1])) if len(catalogue) == 2 else set()


def desk_reply(messages: list[ChatMessage], config: GenerateConfig) -> Reply:
    """A desk's step: report a tool result; run a request of its own that it finds in the
    agent's latest message, written as JSON or as a `phrasing` sentence, restating a write
    first and running it once the agent confirms; decline requests outside its tools; ask
    for the missing detail when it finds no request."""
    last = messages[-1]
    if last.role == "tool":
        return "Here is what I found: " + last.content[:400]
    if last.content.startswith("Result of "):  # the text fallback's result turn
        return "Here is what I found: " + last.content.split(": ", 1)[-1][:400]
    text = last.content
    request = embedded_request(text) or phrasing.read(text)
    pending = _pending(messages)
    if request is None and pending is not None and CONFIRM.search(text):
        request = pending
    if request is None:
        return "Which exact operation do you need, and with which details?"
    tool, arguments = request
    if tool not in offered_tools(messages, config):
        return "That is not something I handle."
    if SERVICE_TOOLS[tool].kind is ToolKind.WRITE and request != pending:
        return f"To be sure, you want me to {phrasing.describe(tool, arguments)}. {GO_AHEAD}"
    if config.tools:
        return ToolCall(id="call-0", name=tool, arguments=json.dumps(arguments))
    return json.dumps({"tool": tool, "arguments": arguments})


def _pending(messages: list[ChatMessage]) -> tuple[str, dict[str, Any]] | None:
    """The write the desk restated in its latest answer, if that answer was a restatement."""
    own = [m.content for m in messages if m.role == "assistant" and m.content and
           not m.tool_calls]
    if not own or not own[-1].endswith(GO_AHEAD):
        return None
    return phrasing.read(own[-1])


def _field_values(text: str) -> dict[str, str]:
    """Release token -> value of the "- Label: value" lines of `text`."""
    by_label = {field_label(token).lower(): token for token in RELEASE_TOKENS}
    values: dict[str, str] = {}
    for label, value in re.findall(r"^- ([^:\n]+): (.*)$", text, re.MULTILINE):
        token = by_label.get(label.lower())
        if token is not None:
            values[token] = value
    return values


def _native_user(messages: list[ChatMessage]) -> str:
    """The native arm's user: its opening line first, the stop token once the agent says
    goodbye, else as the customer answers, from the whole instruction."""
    system = messages[0].content
    if len(messages) <= 2:  # the system prompt and the greeting only
        found = re.search(rf'{re.escape(OPENING)}"(.*)"$', system, re.MULTILINE)
        return found.group(1) if found else "Hello."
    said = messages[-1].content
    if GOODBYE.search(said):
        return STOP
    values = _field_values(system)
    asked = match_field(said, list(values))
    if asked is not None:
        return values[asked]
    return "I'm not sure about that."


def _customer(messages: list[ChatMessage]) -> str:
    system = messages[0].content
    if STOP in system:
        return _native_user(messages)
    memory = "\n".join(
        block.split("</memory>", 1)[0]
        for message in messages
        for block in message.content.split("<memory>")[1:]
    )  # the system prompt's block and those released later in the conversation
    values = _field_values(memory)
    said = messages[-1].content.split("\n\n<memory>", 1)[0]  # the agent's own words
    asked = match_field(said, list(values))
    if asked is not None:
        return values[asked]
    requests = re.findall(r"^- (.*)$", system.split("<requests>", 1)[-1], re.MULTILINE)
    if "<requests>" in system and requests:
        return f"I also have a question. {requests[0]}"
    return "I'm not sure about that."


def _judge(messages: list[ChatMessage]) -> dict[str, Any]:
    listed = re.findall(r"^(\d+)\. (.*)$", messages[0].content, re.MULTILINE)
    told = "\n".join(
        line.split(": ", 1)[-1] for line in messages[-1].content.splitlines()
        if line.startswith("AGENT: ")
    )
    verdicts = []
    for number, assertion in listed:
        found = literals(assertion)
        holds = bool(found) and all(stated(literal, told) for literal in found)
        verdicts.append({"assertion": int(number), "holds": holds, "reason": "literal check"})
    return {"verdicts": verdicts}


# ----- registration ------------------------------------------------------------------------


SeededReply = Callable[[list[ChatMessage], GenerateConfig, int], Reply]
"""A mock's reply to one request, given the mock's ``seed`` option."""


def register_seeded_mock(name: str, reply: SeededReply) -> None:
    """Make ``mock/<name>`` available (idempotent), answering with `reply`; its options are
    ``seed`` (default 0), ``latency_s`` and ``tool_mode``."""
    def factory(**options: Any) -> ChatModel:
        seed = int(options.get("seed", 0))
        return MockModel(
            lambda messages, config: reply(messages, config, seed),
            name=name,
            latency_s=float(options.get("latency_s", 0.0)),
            cycle=False,
            tool_mode=options.get("tool_mode", "native"),
        )

    if name not in mock_names():
        register_mock(name, factory)


def register_incognita_mock() -> None:
    """Make ``mock/incognita`` available (idempotent)."""
    register_seeded_mock(MOCK_NAME, lambda messages, config, seed: incognita_reply(messages,
                                                                                  config))

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
- desk (``DeskTurn``): runs a JSON request it finds in the agent's latest message when
  the tool is in its own tool list, declines other requests, and reports a tool result.
- gate classifier (``GateAnswer``): the keyword matcher of `gate.match_field`.
- customer (no schema): answers the field the agent's message asks about from its
  <memory>, else raises its first request, else says it is not sure.
- judge (``JudgeReply``): the literal check of `judge.LiteralJudge`.

It does not solve tasks; it exercises the machinery. `register_incognita_mock()` makes
``mock/incognita`` available (an explicit call; the environment makes it when a role or
seat names this mock).
"""

from __future__ import annotations

import json
import re
from collections.abc import Generator
from typing import Any

from confide.envs.incognita.conditions import CUSTOMER, TERMINAL
from confide.envs.incognita.gate import field_label, match_field
from confide.envs.incognita.participants.judge import literals, stated
from confide.envs.incognita.participants.scripted import embedded_request
from confide.envs.incognita.scenario import RELEASE_TOKENS
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
DECLINE = re.compile(r"outside|not part of|can't help|cannot help|not something i", re.I)
RECIPIENTS = re.compile(r'"recipient": "<([^>]*)>"')
_TOOL_LINE = re.compile(r"^- (\w+): ", re.MULTILINE)

Plan = Generator[dict[str, Any], str, None]


def incognita_reply(messages: list[ChatMessage], config: GenerateConfig) -> Reply:
    """The mock's reply to one request (see the module docstring)."""
    title = (config.response_schema or {}).get("title")
    if title == "AgentTurn":
        return agent_reply(_agent(messages, config), config)
    if title == "DeskTurn":
        return json.dumps(_desk(messages))
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


def _desk(messages: list[ChatMessage]) -> dict[str, Any]:
    system, last = messages[0].content, messages[-1].content
    tools_block = system.split("<tools>", 1)[-1].split("</tools>", 1)[0]
    own = set(_TOOL_LINE.findall(tools_block))
    if last.startswith("Result of "):
        return {"reply": "Here is what I found: " + last.split(": ", 1)[-1][:400]}
    request = embedded_request(last)
    if request is None:
        return {"reply": "Which exact operation do you need, and with which details?"}
    if request[0] not in own:
        return {"reply": "That is not something I handle."}
    return {"tool": request[0], "arguments": request[1]}


def _customer(messages: list[ChatMessage]) -> str:
    system = messages[0].content
    memory = system.split("<memory>", 1)[-1].split("</memory>", 1)[0]
    by_label = {field_label(token).lower(): token for token in RELEASE_TOKENS}
    values: dict[str, str] = {}
    for label, value in re.findall(r"^- ([^:\n]+): (.*)$", memory, re.MULTILINE):
        token = by_label.get(label.lower())
        if token is not None:
            values[token] = value
    asked = match_field(messages[-1].content, list(values))
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


def _factory(**options: Any) -> ChatModel:
    return MockModel(
        incognita_reply,
        name=MOCK_NAME,
        latency_s=float(options.get("latency_s", 0.0)),
        cycle=False,
        tool_mode=options.get("tool_mode", "native"),
    )


def register_incognita_mock() -> None:
    """Make ``mock/incognita`` available (idempotent)."""
    if MOCK_NAME not in mock_names():
        register_mock(MOCK_NAME, _factory)

"""Service requests in plain English, and back: the shared phrasebook of the prose mocks.

A language-model agent asks a desk in prose, and never sees a tool name (the Incognita paper
section 3.2, A.1). The environment's prose mocks -- an agent that writes requests as
sentences and a desk model that reads them -- need the two directions to agree, so both
come from one template per service tool: `describe` writes a call as a sentence with its
values in double quotes (lists as ``"a", "b" and "c"``), and `read` finds the call such a
sentence makes. No template names a tool, and `read(describe(c)) == c` for every call
whose values hold no double quote.
"""

from __future__ import annotations

import re
from functools import cache

from pydantic import JsonValue

_ADDRESS = ('{address1}, {address2}, {city}, {state}, {country}, zip code {zip}')
TEMPLATES: dict[str, str] = {
    "find_user_id_by_email": "find the customer whose email address is {email}",
    "find_user_id_by_name_zip": "find the customer named {first_name} {last_name} with the "
                                "zip code {zip}",
    "get_user_details": "look up the profile of customer {user_id}",
    "modify_user_address": "change the default address of customer {user_id} to " + _ADDRESS,
    "transfer_to_human_agents": "hand this case over to a person, with the summary {summary}",
    "get_order_details": "look up the order {order_id}",
    "list_all_product_types": "list every product type of the catalog",
    "get_product_details": "look up the product type {product_id} in the catalog",
    "cancel_pending_order": "cancel the order {order_id} for the reason {reason}",
    "modify_pending_order_address": "change the shipping address of the order {order_id} to "
                                    + _ADDRESS,
    "modify_pending_order_payment": "pay for the order {order_id} with {payment_method_id} "
                                    "instead",
    "modify_pending_order_items": "swap the items {item_ids*} on the order {order_id} for "
                                  "{new_item_ids*}, settling the difference with "
                                  "{payment_method_id}",
    "calculate": "work out {expression}",
    "return_delivered_order_items": "take back the items {item_ids*} of the order {order_id}, "
                                    "refunding {payment_method_id}",
    "exchange_delivered_order_items": "exchange the items {item_ids*} of the order {order_id} "
                                      "for {new_item_ids*}, settling the difference with "
                                      "{payment_method_id}",
}
"""One sentence per service tool (a ``*`` marks a list)."""

_SLOT = re.compile(r"\{(\w+)(\*?)\}")
_QUOTED = re.compile(r'"([^"]*)"')


def _quote(value: JsonValue) -> str:
    if isinstance(value, list):
        quoted = [f'"{item}"' for item in value]
        return quoted[0] if len(quoted) == 1 else ", ".join(quoted[:-1]) + " and " + quoted[-1]
    return f'"{value}"'


def describe(tool: str, arguments: dict[str, JsonValue]) -> str:
    """The sentence asking for `tool` with `arguments` (no tool name in it)."""
    return _SLOT.sub(lambda m: _quote(arguments[m.group(1)]), TEMPLATES[tool])


@cache
def _pattern(tool: str) -> re.Pattern[str]:
    parts: list[str] = []
    position = 0
    template = TEMPLATES[tool]
    for slot in _SLOT.finditer(template):
        parts.append(re.escape(template[position:slot.start()]))
        name, is_list = slot.group(1), slot.group(2)
        item = r'"[^"]*"'
        parts.append(f"(?P<{name}>{item}(?:(?:, | and ){item})*)" if is_list
                     else f'"(?P<{name}>[^"]*)"')
        position = slot.end()
    parts.append(re.escape(template[position:]))
    return re.compile("".join(parts), re.IGNORECASE)


def read(text: str) -> tuple[str, dict[str, JsonValue]] | None:
    """The call a sentence of `describe` asks for, wherever it stands in `text`."""
    for tool in TEMPLATES:
        found = _pattern(tool).search(text)
        if found is None:
            continue
        arguments: dict[str, JsonValue] = {}
        for name, is_list in _SLOT.findall(TEMPLATES[tool]):
            value = found.group(name)
            arguments[name] = list(_QUOTED.findall(value)) if is_list else value
        return tool, arguments
    return None


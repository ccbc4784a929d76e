"""The disclosure gate (the Incognita paper §3.1, 4.1): one field per request, only when asked."""

from hypothesis import given
from hypothesis import strategies as st

from confide.core.trace import EnvEvent, TraceRecorder
from confide.envs.incognita.gate import DisclosureGate, match_field
from confide.envs.incognita.scenario import RELEASE_TOKENS, CustomerField

FIELDS = [
    CustomerField(token="email", value="It's ada@example.com."),
    CustomerField(token="order_id", value="Order #W1234567."),
]


def _gate() -> tuple[DisclosureGate, TraceRecorder]:
    trace = TraceRecorder()
    return DisclosureGate(FIELDS, trace), trace


def test_releases_only_the_field_asked_for_once_and_records_it() -> None:
    gate, trace = _gate()
    assert gate.memory() == []
    first = gate.decide("order_id", message_id=3, turn=1, via="payload")
    assert first.outcome == "released" and gate.released == ("order_id",)
    assert [m.value for m in gate.memory()] == ["Order #W1234567."]
    again = gate.decide("order_id", message_id=5, turn=2, via="keywords")
    assert again.outcome == "already_released" and gate.released == ("order_id",)
    events = [(e.name, e.fields()) for e in trace.events if isinstance(e, EnvEvent)]
    assert events == [
        ("gate_request", {"message_id": 3, "field": "order_id", "via": "payload",
                          "outcome": "released"}),
        ("gate_release", {"message_id": 3, "field": "order_id", "via": "payload", "order": 0}),
        ("gate_request", {"message_id": 5, "field": "order_id", "via": "keywords",
                          "outcome": "already_released"}),
    ]
    assert all(e.visible_to == ["USER"] for e in trace.events if isinstance(e, EnvEvent))


def test_fields_the_customer_does_not_hold_or_no_field_release_nothing() -> None:
    gate, trace = _gate()
    assert gate.decide("zip", message_id=1, turn=0, via="model").outcome == "not_held"
    assert gate.decide(None, message_id=2, turn=0, via="model").outcome == "no_field"
    assert gate.decide("phone", message_id=3, turn=0, via="model").outcome == "no_field"
    assert gate.released == () and gate.memory() == []
    assert not [e for e in trace.events if isinstance(e, EnvEvent) and e.name == "gate_release"]


def test_keyword_matcher_picks_the_earliest_cue() -> None:
    tokens = list(RELEASE_TOKENS)
    assert match_field("What is your email address?", tokens) == "email"
    assert match_field("What is the new address, and your email?", tokens) == "address"
    assert match_field("Could you give me the order number?", tokens) == "order_id"
    assert match_field("Hello there, how are you today?", tokens) is None
    assert match_field("Which zip code is on file?", ["email"]) is None


@given(st.lists(st.sampled_from(["email", "order_id", "zip", None]), max_size=12))
def test_memory_is_exactly_the_released_fields_in_release_order(asks: list[str | None]) -> None:
    gate, _ = _gate()
    released: list[str] = []
    for index, field in enumerate(asks):
        decision = gate.decide(field, message_id=index, turn=index, via="payload")
        if field in ("email", "order_id") and field not in released:
            released.append(field)
            assert decision.outcome == "released"
        else:
            assert decision.outcome != "released"
    assert [m.field for m in gate.memory()] == released

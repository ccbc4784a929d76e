"""A call the database refused acquires nothing and executes nothing, even with the
reference arguments (item 8; the Incognita paper §4.2: a service fact is acquired when
its reference read was accepted with the reference arguments).

Task sd-07 (see test_incognita_analysis_reader): six observable items -- fields name, zip,
order_id, payment; call:0 (the identity lookup) and call:1 (the profile read) -- and
three counted calls (lookup, profile read, payment change)."""

from __future__ import annotations

import pytest
from test_incognita_analysis_reader import LOOKUP, PAY, PROFILE, Script, read

from confide.envs.incognita.outputs.failures import FailureType, label_failure


def _fields_and_lookup() -> Script:
    script = Script()
    for token in ("name", "zip", "order_id", "payment"):
        script.ask(token)
    return script.via_desk("Auden", "find_user_id_by_name_zip", LOOKUP)


def test_a_refused_read_with_the_reference_arguments_acquires_nothing() -> None:
    script = _fields_and_lookup().via_desk("Bryn", "get_user_details", PROFILE, ok=False)
    reading = read(script)
    assert reading.items_missing == ("call:1",)
    assert reading.information_acquisition == pytest.approx(5 / 6)
    assert reading.execution == pytest.approx(1 / 3)  # only the lookup
    assert reading.approached_missing  # the holder of the read was contacted
    assert label_failure(reading, success=False) is FailureType.REQUESTED_NOT_OBTAINED
    # the same read accepted: acquired
    script.via_desk("Bryn", "get_user_details", PROFILE)
    assert read(script).information_acquisition == 1.0


def test_a_refused_direct_read_acquires_nothing() -> None:
    script = Script()
    for token in ("name", "zip", "order_id", "payment"):
        script.ask(token)
    script.tool("AGENT", "find_user_id_by_name_zip", LOOKUP)
    script.tool("AGENT", "get_user_details", PROFILE, ok=False)
    reading = read(script, "direct")
    assert reading.missing_service == ("call:1",)
    assert reading.information_acquisition == pytest.approx(5 / 6)


def test_a_refused_write_with_the_reference_arguments_is_not_executed() -> None:
    script = _fields_and_lookup().via_desk("Bryn", "get_user_details", PROFILE)
    script.via_desk("Corin", "modify_pending_order_payment", PAY, ok=False)
    reading = read(script)
    assert reading.action_attempted
    assert not reading.required_actions_done
    assert reading.execution == pytest.approx(2 / 3)
    assert reading.outside_writes == 0
    script.via_desk("Corin", "modify_pending_order_payment", PAY)
    done = read(script)
    assert done.required_actions_done and done.execution == 1.0

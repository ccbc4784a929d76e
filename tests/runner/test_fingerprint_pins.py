"""Resume fingerprints pinned by behaviour (bench/mutation.py): the refusal lists every
difference with its first episode, a key changed in several ways reads "changed",
a stale episode after a matching one is still found, credentials never enter a
fingerprint, option order does not matter, a given price table is fingerprinted, the
rescore advice names the rebound judge (and is left out when episodes expect different
judges), and digests stay what earlier traces stored."""

from __future__ import annotations

from pathlib import Path

import pytest

from confide.core.trace import EpisodeStart
from confide.runner.config import Experiment
from confide.runner.fingerprint import (
    ResumeMismatch,
    _flat,
    check_resume,
    digest,
    episode_fingerprints,
)

BASE = {"benchmark": "demo", "seed": "1", "roles.judge": '"mock/a"', "options.x": "1"}


def _header(episode: str, **changes: str) -> EpisodeStart:
    fingerprint = {**BASE, **changes}
    return EpisodeStart(episode_id=episode, benchmark="demo", scenario_id="s", seed=0,
                        fingerprint=fingerprint)  # fmt: skip


def _refusal(headers: dict[str, EpisodeStart], roles: tuple[str, ...] = ()) -> str:
    expected = dict.fromkeys(headers, BASE)
    with pytest.raises(ResumeMismatch) as refused:
        check_resume("runs/x", expected, headers, score_roles=roles)
    return str(refused.value)


def test_the_refusal_lists_each_difference_once_with_its_values() -> None:
    message = _refusal({"ep-a": _header("ep-a", seed="2", **{"options.x": "5"})})
    assert "  seed: 2 vs. 1 (1 episodes)" in message
    assert "  options.x: 5 vs. 1 (1 episodes)" in message
    assert "1 finished episode(s)" in message


def test_a_key_changed_in_two_ways_reads_changed_and_names_the_first_episode() -> None:
    headers = {"ep-a": _header("ep-a", seed="2"), "ep-b": _header("ep-b", seed="3")}
    assert "  seed: changed (2 episodes, e.g. ep-a)" in _refusal(headers)
    hashed = {e: _header(e, task="sha256:0") for e in ("ep-a", "ep-b")}
    assert "  task: changed (2 episodes, e.g. ep-a)" in _refusal(hashed)


def test_a_stale_episode_after_a_matching_one_is_still_refused() -> None:
    headers = {"ep-a": _header("ep-a"), "ep-b": _header("ep-b", seed="2")}
    assert "1 finished episode(s)" in _refusal(headers)
    unmarked = EpisodeStart(episode_id="ep-c", benchmark="demo", scenario_id="s", seed=0)
    both = {"ep-c": unmarked, "ep-b": _header("ep-b", seed="2")}
    message = _refusal(both)
    assert "2 finished episode(s)" in message and "  seed: 2 vs. 1" in message


def test_only_a_rebound_judge_is_advised_to_rescore_with_its_new_binding() -> None:
    headers = {"ep-a": _header("ep-a", **{"roles.judge": '"mock/b"'})}
    message = _refusal(headers, roles=("judge", "grader"))
    assert "confide rescore runs/x --role judge=mock/a --out NEW" in message
    other = {"ep-a": _header("ep-a", seed="2", **{"roles.judge": '"mock/b"'})}
    assert "rescore" not in _refusal(other, roles=("judge",))
    unbound = {k: v for k, v in BASE.items() if k != "roles.judge"}
    with pytest.raises(ResumeMismatch) as refused:
        check_resume("runs/x", {"ep-a": unbound}, {"ep-a": _header("ep-a")}, score_roles=["judge"])
    assert '  roles.judge: "mock/a" vs. (absent)' in str(refused.value)
    assert "rescore" not in str(refused.value)


def test_credentials_never_enter_a_fingerprint_and_option_order_does_not_matter() -> None:
    flat = _flat("model_options", {"api_key": "sk-1", "base_url": "http://h"}, hashed=True)
    assert list(flat) == ["model_options.base_url"]
    one = _flat("options", {"x": [{"b": 1, "a": 2}]}, hashed=False)
    assert one == _flat("options", {"x": [{"a": 2, "b": 1}]}, hashed=False)


def test_digests_stay_what_earlier_traces_stored() -> None:
    # stored by every trace written so far: a change here refuses every earlier run
    assert digest({"a": 1}) == "sha256:015abd7f5cc57a2d"


def test_a_given_price_table_is_fingerprinted_and_the_shipped_one_is_not(tmp_path: Path) -> None:
    prices = tmp_path / "prices.json"
    prices.write_text('{"version": "v", "as_of": "2026-01-01"}')
    given = episode_fingerprints("demo", Experiment(benchmark="demo", price_table=str(prices)), [])
    shipped = episode_fingerprints("demo", Experiment(benchmark="demo"), [])
    assert given._shared["price_table"].startswith("sha256:")
    assert "price_table" not in shipped._shared


def test_no_rescore_is_advised_when_the_episodes_expect_different_judges() -> None:
    """One `confide rescore` binds one judge: when this run expects another new judge
    for each stale episode, no single command fits, so none is advised."""
    stored = {e: _header(e, **{"roles.judge": '"mock/b"'}) for e in ("ep-a", "ep-b")}
    expected = {"ep-a": BASE, "ep-b": {**BASE, "roles.judge": '"mock/c"'}}
    with pytest.raises(ResumeMismatch) as refused:
        check_resume("runs/x", expected, stored, score_roles=["judge"])
    assert "  roles.judge: changed (2 episodes, e.g. ep-a)" in str(refused.value)
    assert "rescore" not in str(refused.value)

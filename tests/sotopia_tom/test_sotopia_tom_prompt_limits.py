"""Every number a Sotopia-ToM model seat or judge reads is the number the environment
plays by (must-show 2; the CalBench twin is
tests/calbench/test_calbench_prompt_limits.py).

For every shipped scenario and every strategy, mock agents that always speak (so the
conversation runs to the turn budget, and every seat acts more than once, which renders
the belief/plan updates) play under options that are not the defaults. Each prompt they
receive, and the judge prompts of the transcript, is then checked number by number:

- the limit sentences state the resolved options: T_max ("at most N turns in all", "turn
  t of at most N"), the stale-turn stop ("after N turns in a row"), the leave rule, the
  bounded memory ("keep at most N entries"), and the round and turn of each call, the
  utterance ids and the judge's seat numbers agree with the episode actually played;
- after the text that comes from the scenario, the transcript, the reply schemas and the
  models' own replies is cut out, and the checked sentences above, no digit is left
  (apart from the numbered reasoning steps of the strategy guidance and the two parts of
  the inquiry judge's answer): a hard-coded
  number in a template, or an option that stops reaching the prompt, fails here.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from typing import Any

import pytest

from confide.core.trace import EnvEvent, ModelCall
from confide.envs.sotopia_tom import SPEC
from confide.envs.sotopia_tom.dataset import load_split
from confide.envs.sotopia_tom.judge.llm import judge_messages
from confide.envs.sotopia_tom.judge.transcript import build_transcript
from confide.envs.sotopia_tom.judge.verdicts import VERDICT_TYPES
from confide.envs.sotopia_tom.options import EnvOptions
from confide.envs.sotopia_tom.participants import STRATEGIES
from confide.envs.sotopia_tom.participants.context import LEAVE_RULES
from confide.envs.sotopia_tom.scenario import Scenario
from confide.llm import ChatMessage, GenerateConfig, MockModel, register_mock, unregister_mock
from confide.llm.providers.json_instance import minimal_instance
from confide.runner.models import RunModels
from confide.testing import run_once

SCENARIOS = load_split("core")
REPLY = "Thanks, that is noted for everyone."
STEPS = re.compile(r"^\d\. (goal_progress|information_exchange|channel_decision|leakage_check):",
                   re.MULTILINE)
PARTS = re.compile(r"^Part [12], `", re.MULTILINE)  # the two parts of the inquiry judge's answer
SCHEMA = re.compile(r"(JSON schema, and nothing else:\n)[^\n]*")
UTTERANCE = re.compile(r"\[R(\d+)\.(\d+)\]")


def talker(messages: list[ChatMessage], config: GenerateConfig) -> str:
    """Speaks publicly every turn, with no digit in anything it writes."""
    reply: dict[str, Any] = minimal_instance(config.response_schema or {})
    if "action" in reply:
        reply["action"] = {"action_type": "speak", "to": [], "content": REPLY}
    return json.dumps(reply)


@pytest.fixture(autouse=True)
def mock() -> Iterator[None]:
    register_mock("limits-talker", lambda **_: MockModel(talker), replace=True)
    yield
    unregister_mock("limits-talker")


def scenario_strings(scenario: Scenario) -> list[str]:
    """Every string of the scenario with a digit in it, longest first: a prompt may quote
    it, and its numbers are data, not limits."""
    found: set[str] = set()

    def walk(value: Any) -> None:
        if isinstance(value, str):
            found.add(value)
        elif isinstance(value, dict):
            for key, inner in value.items():
                found.add(str(key))  # domain names key the domain map
                walk(inner)
        elif isinstance(value, list | tuple):
            for inner in value:
                walk(inner)

    walk(scenario.model_dump(mode="json"))
    return sorted((s for s in found if re.search(r"\d", s)), key=len, reverse=True)


class Checker:
    """Checks the numbers of one episode's prompts against its resolved options."""

    def __init__(self, scenario: Scenario, options: EnvOptions, turns: int) -> None:
        self.scenario, self.options, self.turns = scenario, options, turns
        self.strings = scenario_strings(scenario)
        self.seen: dict[str, int] = {}

    def count(self, kind: str, found: list[Any]) -> None:
        self.seen[kind] = self.seen.get(kind, 0) + len(found)

    def residue(self, text: str) -> str:
        """The text with its checked numbers, data and model output cut out."""
        text = SCHEMA.sub(r"\1", text)
        text = re.sub(r"CURRENT STATE\n.*?\n\nNEW MESSAGES", "", text, flags=re.DOTALL)
        text = re.sub(r"ADVICE FROM YOUR PRIVATE COACH.*?\n\n", "", text, flags=re.DOTALL)
        rounds = -(-self.turns // len(self.scenario.agents)) + 1
        for r, seat in UTTERANCE.findall(text):
            assert 1 <= int(r) <= rounds and 1 <= int(seat) <= len(self.scenario.agents)
        text = UTTERANCE.sub("", text)
        names = self.scenario.agent_names
        for seat, name in re.findall(r"Seat (\d+): (.+?) \(", text):  # the judge's roster
            assert names[int(seat) - 1] == name
        text = re.sub(r"Seat \d+: ", "", text)
        for value in self.strings:
            text = text.replace(value, "")
        return PARTS.sub("", STEPS.sub("", text)).replace("steps 1-4", "")

    def system(self, text: str) -> str:
        o = self.options
        if "turns in a row in which nobody says anything" in text:
            assert f"or {LEAVE_RULES[o.leave_ends]}." in text
            self.count("leave", [1])
        for pattern, want in (
            (r"at most (\d+) turns in all", o.max_turns),
            (r"after (\d+) turns in a row", o.stale_turns),
        ):
            found = re.findall(pattern, text)
            self.count(pattern, found)
            assert all(int(n) == want for n in found), (pattern, found, want)
            text = re.sub(pattern, "", text)
        return text

    def user(self, text: str) -> str:
        n = len(self.scenario.agents)
        turns = re.findall(r"It is round (\d+); this is turn (\d+) of at most (\d+)\.", text)
        for rnd, turn, limit in turns:
            assert int(limit) == self.options.max_turns
            assert 1 <= int(turn) <= self.turns and int(rnd) == (int(turn) - 1) // n + 1
        self.count("turn", turns)
        text = re.sub(r"It is round \d+; this is turn \d+ of at most \d+\.", "", text)
        memory = re.findall(r"keep at most (\d+) entries", text)
        assert all(int(m) == self.options.memory_size for m in memory), memory
        self.count("memory", memory)
        return self.system(re.sub(r"keep at most \d+ entries", "", text))

    def check(self, where: str, text: str, *, system: bool) -> None:
        left = self.residue(self.system(text) if system else self.user(text))
        digits = re.findall(r".{0,40}\d.{0,40}", left)
        assert not digits, f"{self.scenario.id} {where}: unchecked numbers {digits}"


def play(scenario: Scenario, strategy: str, options: dict[str, Any]) -> Checker:
    capture = run_once(
        SPEC, scenario, f"mock/limits-talker:{strategy}", model_factory=RunModels(),
        options=options, roles={"judge": "reference"},
    )
    resolved = EnvOptions(**options)
    (end,) = [e for e in capture.trace.events
              if isinstance(e, EnvEvent) and e.name == "conversation_end"]
    assert end.data.reason == "max_turns" and end.data.turns == resolved.max_turns
    checker = Checker(scenario, resolved, end.data.turns)
    for call in (e for e in capture.trace.events if isinstance(e, ModelCall)):
        for message in call.messages:
            checker.check(f"{strategy} {call.purpose} {message['role']}", message["content"],
                          system=message["role"] == "system")
    messages = [e.message for e in capture.trace.events if e.kind == "message"]
    utterances = build_transcript(messages)
    for metric in VERDICT_TYPES:
        for message in judge_messages(metric, scenario, utterances):
            checker.check(f"judge {metric}", message.content, system=False)
    return checker


def options_for(scenario: Scenario) -> dict[str, Any]:
    """Not the defaults: every seat acts once and the first two twice."""
    return {"max_turns": len(scenario.agents) + 2, "stale_turns": 4, "leave_ends": "all",
            "memory_size": 5}


@pytest.mark.parametrize("scenario", SCENARIOS, ids=[s.id for s in SCENARIOS])
def test_every_prompt_number_is_a_resolved_limit(scenario: Scenario) -> None:
    for strategy in STRATEGIES:
        checker = play(scenario, strategy, options_for(scenario))
        seen = checker.seen
        agents = len(scenario.agents)
        # every acting call states its turn, and every system prompt the three limits
        assert seen["turn"] == agents + 2, (strategy, seen)
        assert seen[r"at most (\d+) turns in all"] == seen["leave"] > 0
        assert seen[r"after (\d+) turns in a row"] == seen["leave"]
        updates = seen.get("memory", 0)
        assert (updates > 0) == (strategy in ("tom-belief", "self-focused")), (strategy, seen)


def test_the_defaults_are_the_papers_in_the_prompts() -> None:
    """With no options the prompts state the paper's T_max = 60 turns, the three-turn
    stale stop and the first-leave rule (section 5.3)."""
    scenario = SCENARIOS[0]
    capture = run_once(SPEC, scenario, "mock/limits-talker:basic", model_factory=RunModels(),
                       options={"max_turns": 60}, roles={"judge": "reference"})
    call = next(e for e in capture.trace.events if isinstance(e, ModelCall))
    system, user = call.messages[0]["content"], call.messages[1]["content"]
    assert EnvOptions().max_turns == 60 and EnvOptions().stale_turns == 3
    assert "at most 60 turns in all" in system and "after 3 turns in a row" in system
    assert "or as soon as anyone leaves." in system
    assert "It is round 1; this is turn 1 of at most 60." in user


def test_the_judge_checklist_spells_names_as_the_transcript_does() -> None:
    """The checklist asks for "agent names exactly as written": JSON escapes would make a
    name like Zsófia read differently there than in the transcript (found by the check
    above)."""
    scenario = next(s for s in SCENARIOS if any(not n.isascii() for n in s.agent_names))
    name = next(n for n in scenario.agent_names if not n.isascii())
    (_, user) = judge_messages("da", scenario, [])
    checklist = user.content.split("CHECKLIST (JSON)")[1]
    assert f'"agent": "{name}"' in checklist and "\\u" not in checklist

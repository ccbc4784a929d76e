"""The native tau-bench arm: the source task run as its own benchmark runs it (the
Incognita paper, section 3.2 "Native tau-bench" and section 5, "Models and execution").

The paper runs the same tasks and models "in the unmodified upstream harness", keeping
tau-bench's own customer simulator, policy prompt and termination rule, as an external
anchor: the gap between it and ``direct`` bounds the cost of moving the tasks into the
Incognita harness. Here it is the fourth arm of the Latin square, played inside the
episode loop (`env.Episode`) with what tau-bench changes:

- the user simulator holds the whole task instruction from the start: no disclosure
  gate, so no ``gate_request`` / ``gate_release`` events (`instruction`, `answer`);
- it speaks first: asked with tau-bench's opening greeting from the agent's side
  (`GREETING`), it writes the conversation's first message;
- the episode also ends by tau-bench's rule: when the user's reply holds the stop token
  (`STOP`), or when the agent's call to ``transfer_to_human_agents`` is executed (that
  tool ends a tau-bench retail episode); both are recorded as a ``conversation_ended``
  event.

Everything else is ``direct``'s: the agent holds every tool (`conditions`), its prompt
carries the service role and policy, the execution layer decides every call, and the
evaluator is the same (final state against the replayed gold state, then the card's
output assertions; section 3.3).

Decisions
- Our cards keep no upstream instruction text (the shipped suite is our own, and a
  converted task keeps its card only), so the instruction the user holds is the card's
  whole customer side: its opening line, every field and every request, the same facts
  the gate releases one at a time in the other arms.
- The paper keeps tau-bench's own policy prompt; the agent here gets ``direct``'s, whose
  service rules restate the retail policy in our words (the upstream text is not
  shipped), so the anchor's gap to ``direct`` isolates the user simulator and the
  termination rule.
- The agent's FINAL to ENVIRONMENT still ends the episode as well (the harness's signal;
  the agent's prompt is ``direct``'s), so a model agent is scored by the same contract
  in ``direct`` and ``native``. The turn budget is the experiment's ``max_turns``.
- tau-bench samples its user simulator at the provider's default temperature; here the
  ``user`` role follows the environment's simulators (temperature 0) unless the
  experiment's ``sampling`` says otherwise, so the native arm is as repeatable as the
  others. The paper binds it to a different model from the Incognita customer
  (section 5), hence a role of its own.
"""

from __future__ import annotations

from confide.envs.incognita.events import Via
from confide.envs.incognita.gate import GateDecision, MemoryItem, field_label
from confide.envs.incognita.scenario import RELEASE_TOKENS, TaskCard

STOP = "###STOP###"
"""tau-bench's stop token: a user reply holding it ends the conversation."""
TRANSFER = "transfer_to_human_agents"
"""The tool whose executed call ends a tau-bench retail episode."""
GREETING = "Hi! How can I help you today?"
"""What the user simulator is shown before its first message (tau-bench's opening)."""


def instruction(card: TaskCard) -> list[MemoryItem]:
    """The whole customer side of `card` as the native user holds it from the start."""
    return [MemoryItem(field=field.token, label=field_label(field.token), value=field.value)
            for field in card.customer_fields]


def answer(field: str | None, card: TaskCard, via: Via) -> GateDecision:
    """What the open instruction answers to a message asking for `field` (no gate: the
    outcome only says whether the user holds it; nothing is recorded)."""
    if field is None or field not in RELEASE_TOKENS:
        return GateDecision(field=None, outcome="no_field", via=via)
    held = card.field(field) is not None
    return GateDecision(field=field, outcome="released" if held else "not_held", via=via)


def stops(text: str) -> bool:
    """Whether a user reply ends the conversation (tau-bench: the token anywhere in it)."""
    return STOP in text

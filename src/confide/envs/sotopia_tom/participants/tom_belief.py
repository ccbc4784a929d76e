"""ToM-Belief (sections 5.3, A.9): a persistent belief state updated incrementally.

Per-agent belief models (what each other agent knows, does not know, wants and thinks
about the focal agent), the sharing-progress tracker, the bounded memory and the privacy
risk log (`state.py`), revised each turn from the new messages only and injected into the
acting prompt, which uses the shared ToM reasoning. The state is recorded turn by turn as
`belief_state` events.
"""

from __future__ import annotations

from confide.envs.sotopia_tom import events as ev
from confide.envs.sotopia_tom.participants.base import ToMReply
from confide.envs.sotopia_tom.participants.state import BeliefState, StatefulAgent


class ToMBeliefAgent(StatefulAgent):
    """Stateful other-agent modelling."""

    strategy = "tom-belief"
    guidance = "tom.txt"
    reply_schema = ToMReply
    state_schema = BeliefState
    init_prompt = "belief_init.txt"
    update_prompt = "belief_update.txt"
    state_event = ev.BeliefUpdated
    state_title = "YOUR BELIEF STATE (private, kept up to date every turn)"

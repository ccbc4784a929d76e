"""Self-Focused ablation (sections 6.2, A.14): ToM-Belief's state machinery -- same
structure, token budget, update cadence, progress tracker, bounded memory and risk log --
with the per-agent beliefs replaced by a self-focused plan (next actions, blockers,
conversation strategy). Its acting prompt is the self-focused step list without any
reasoning about other agents, so the only thing removed is other-agent modelling. The
state is recorded turn by turn as `planning_state` events.
"""

from __future__ import annotations

from confide.envs.sotopia_tom import events as ev
from confide.envs.sotopia_tom.participants.base import CoTReply
from confide.envs.sotopia_tom.participants.state import SelfFocusedState, StatefulAgent


class SelfFocusedAgent(StatefulAgent):
    """Stateful self-focused planning."""

    strategy = "self-focused"
    guidance = "self_focused.txt"
    reply_schema = CoTReply
    state_schema = SelfFocusedState
    init_prompt = "self_init.txt"
    update_prompt = "self_update.txt"
    state_event = ev.PlanUpdated
    state_title = "YOUR WORKING STATE (private, kept up to date every turn)"

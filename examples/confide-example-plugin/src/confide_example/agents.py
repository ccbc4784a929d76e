"""A custom agent for confide's builtin `demo` relay: it tells the next seat how many
messages it heard and from whom. Seat it by its entry point name (`--lineup example-echo`)
or by import path (`--lineup py:confide_example.agents:echo_relay`).

A demo participant answers a `DemoObservation` with a `DemoAction`; the factory gets the
seat name and the episode context (task, seed, options, `ctx.model_for`)."""

from __future__ import annotations

from confide.core.benchmark import EpisodeContext
from confide.envs.demo.actions import DemoAction, DemoObservation


class EchoRelay:
    """Deterministic: the same observations give the same messages."""

    def __init__(self, name: str) -> None:
        self.name = name

    async def act(self, observation: DemoObservation) -> DemoAction:
        senders = sorted({message.sender for message in observation.new_messages})
        heard = ", ".join(senders) or "nobody"
        return DemoAction(
            text=f"{self.name} heard {len(observation.new_messages)} message(s) from {heard} "
            f"in round {observation.round}"
        )


def echo_relay(seat: str, ctx: EpisodeContext) -> EchoRelay:
    """The participant factory: one EchoRelay per seat and episode."""
    return EchoRelay(seat)


echo_relay.benchmarks = ("demo",)  # type: ignore[attr-defined]
"""The benchmarks this agent serves; confide refuses it in any other before a run."""

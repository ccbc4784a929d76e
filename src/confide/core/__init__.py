"""Domain-free runtime: messages, postbox (routing + visibility), participants, traces, seeding."""

from confide.core.message import Channel, Message
from confide.core.participant import Participant
from confide.core.postbox import Postbox, RoutingError
from confide.core.seeding import derive_seed, np_rng, py_rng
from confide.core.trace import (
    EnvEvent,
    EpisodeEnd,
    EpisodeStart,
    MessageDelivered,
    ModelCall,
    Trace,
    TraceError,
    TraceEvent,
    TraceRecorder,
    TraceWriter,
    canonical_events,
    read_trace,
)

__all__ = [
    "Channel",
    "EnvEvent",
    "EpisodeEnd",
    "EpisodeStart",
    "Message",
    "MessageDelivered",
    "ModelCall",
    "Participant",
    "Postbox",
    "RoutingError",
    "Trace",
    "TraceError",
    "TraceEvent",
    "TraceRecorder",
    "TraceWriter",
    "canonical_events",
    "derive_seed",
    "np_rng",
    "py_rng",
    "read_trace",
]

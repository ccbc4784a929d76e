"""`demo`: a tiny relay game that exercises the whole runtime (postbox, participants,
model calls, traces, runner) without any benchmark logic.

Seats sit in a ring. For `rounds` rounds each seat in turn observes what was delivered to
it since its last turn and sends one direct message to the next seat. The reference
participant `scripted` writes a deterministic summary; a model seat asks its chat model.
Metrics count messages and invalid (empty) model replies.
"""

from confide.declaration import lazy_spec

__getattr__ = lazy_spec(__name__)

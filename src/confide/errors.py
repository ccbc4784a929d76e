"""User-facing error types.

Every error a user can cause (bad file, bad config, bad argument) derives from
`ConfideError`; the CLI prints its message without a traceback.
"""


class ConfideError(Exception):
    """Base class for errors caused by bad input, with a message that says what and where."""

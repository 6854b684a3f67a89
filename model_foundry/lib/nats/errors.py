"""What can go wrong with NATS that a user can fix: one sentence each, never a traceback."""

from __future__ import annotations


class NatsUnavailableError(RuntimeError):
    """No NATS server answered at the configured URLs, or it cannot serve the inbox."""


class NatsLayoutError(NatsUnavailableError):
    """The server keeps no subject filter on a consumer, so no layout delivers each message once."""


__all__ = ["NatsLayoutError", "NatsUnavailableError"]

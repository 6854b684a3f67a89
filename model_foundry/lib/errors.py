"""The base of the errors a user can fix: the CLI prints them in one sentence, no traceback."""

from __future__ import annotations


class UserError(RuntimeError):
    """An expected condition the user can fix; printed without a traceback."""


__all__ = ["UserError"]

"""Reading a failed request: its one-line reason from either server's error body, its class
and HTTP status, and whether trying again may succeed."""

from __future__ import annotations

from collections.abc import Mapping

from model_foundry.lib.slots.api_errors import APIConnectionError, APIError, APIStatusError


def first_line(text: str) -> str | None:
    """The first line of ``text`` that is not blank, stripped; None when there is none."""
    for line in text.splitlines():
        if line.strip():
            return line.strip()
    return None


# Where servers put the reason: vLLM and llama.cpp use ``message`` (llama.cpp inside
# ``error``); FastAPI-style proxies use ``detail``, some use ``msg``.
_MESSAGE_KEYS = ("message", "error", "detail", "msg")


def error_message_from_body(body: object, _depth: int = 0) -> str | None:
    """The readable reason from either error style, as one line; None when the body has none.

    vLLM: ``{"object": "error", "message": ..., "type": ..., "code": ...}``;
    llama.cpp: ``{"error": {"code": ..., "message": ..., "type": ...}}`` (``status_error`` may
    already have unwrapped ``error``). Blank, empty or non-string messages and odd nestings
    yield None (or the first usable string found), never an exception: a reason must not fail
    the batch.
    """
    if _depth > 4:
        return None
    if isinstance(body, str):
        return first_line(body)
    if isinstance(body, Mapping):
        for key in _MESSAGE_KEYS:
            found = error_message_from_body(body.get(key), _depth + 1)
            if found:
                return found
        return None
    if isinstance(body, list | tuple):
        for item in body[:5]:
            found = error_message_from_body(item, _depth + 1)
            if found:
                return found
    return None


def is_retryable(exc: BaseException) -> bool:
    """Network trouble, timeouts, 5xx and 429 may pass; other 4xx (bad request) will not."""
    if isinstance(exc, APIStatusError):
        return exc.status_code in (408, 429) or exc.status_code >= 500
    if isinstance(exc, APIConnectionError | TimeoutError | ConnectionError):
        return True
    # An ``error`` event inside a stream: the server failed mid-generation.
    return isinstance(exc, APIError)


def describe_error(exc: BaseException) -> tuple[str, str, int | None]:
    """(error class, one-line reason, HTTP status) for an error row; never raises."""
    status = getattr(exc, "status_code", None)
    status = status if isinstance(status, int) else None
    reason: str | None = None
    if isinstance(exc, TimeoutError):
        reason = "request timed out"
    elif isinstance(exc, APIError):
        reason = error_message_from_body(exc.body)
        if reason is None and status is not None:
            # The SDK's own text would be "Error code: 400 - {...}": say it plainly instead.
            reason = f"HTTP {status} with no error message"
    if reason is None:
        try:
            reason = first_line(str(exc))
        except Exception:  # a broken __str__ must not turn into a failed batch
            reason = None
    cause = exc.__cause__
    if isinstance(exc, APIConnectionError) and cause is not None:
        # "Connection error." alone says little; what happened (refused, reset, the server
        # closing the connection) is in the transport's own exception.
        try:
            said = first_line(str(cause)) or ""
        except Exception:
            said = ""
        reason = f"{reason} ({type(cause).__name__}{': ' + said if said else ''})"
    return type(exc).__name__, (reason or type(exc).__name__)[:2000], status


__all__ = ["describe_error", "error_message_from_body", "first_line", "is_retryable"]

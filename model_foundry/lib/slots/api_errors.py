"""What a failed request raises, named as the openai SDK names it.

The error rows keep the exception's class name (``Attempt.error_class``) and the failure
causes read those names (``lib/llm/causes.py``): the transport is aiohttp, but a 400 is still
a ``BadRequestError`` and a refused connection an ``APIConnectionError``, as they were when
the SDK sent the requests. ``body`` is the server's JSON error (its ``error`` object where it
has one), or its text when it is not JSON.
"""

from __future__ import annotations


class APIError(Exception):
    """A server's error: an HTTP error status, or an error event inside a stream."""

    def __init__(self, message: str, *, body: object | None = None) -> None:
        super().__init__(message)
        self.message = message
        self.body = body


class APIStatusError(APIError):
    """An answer with a 4xx or 5xx status."""

    def __init__(self, message: str, *, status_code: int, body: object | None) -> None:
        super().__init__(message, body=body)
        self.status_code = status_code


class BadRequestError(APIStatusError):
    pass


class AuthenticationError(APIStatusError):
    pass


class PermissionDeniedError(APIStatusError):
    pass


class NotFoundError(APIStatusError):
    pass


class ConflictError(APIStatusError):
    pass


class UnprocessableEntityError(APIStatusError):
    pass


class RateLimitError(APIStatusError):
    pass


class InternalServerError(APIStatusError):
    pass


_BY_STATUS: dict[int, type[APIStatusError]] = {
    400: BadRequestError,
    401: AuthenticationError,
    403: PermissionDeniedError,
    404: NotFoundError,
    409: ConflictError,
    422: UnprocessableEntityError,
    429: RateLimitError,
}


class APIConnectionError(APIError):
    """No answer: the connection was refused, reset or closed; the transport's own exception
    is its ``__cause__``."""

    def __init__(self, message: str = "Connection error.") -> None:
        super().__init__(message)


class APITimeoutError(APIConnectionError):
    """The connection was not made in the slot's ``connect_s``."""

    def __init__(self) -> None:
        super().__init__("Request timed out.")


def status_error(status: int, text: str) -> APIStatusError:
    """The error for an answer with ``status`` and body ``text``, as the SDK built it: the
    message ``Error code: <status> - <body>``, the body's ``error`` object where it has one."""
    import orjson

    text = text.strip()
    body: object = text
    try:
        body = orjson.loads(text)
    except orjson.JSONDecodeError:
        message = text or f"Error code: {status}"
    else:
        message = f"Error code: {status} - {body}"
    if isinstance(body, dict):
        body = body.get("error", body)
    cls = InternalServerError if status >= 500 else _BY_STATUS.get(status, APIStatusError)
    return cls(message, status_code=status, body=body)


__all__ = [
    "APIConnectionError",
    "APIError",
    "APIStatusError",
    "APITimeoutError",
    "BadRequestError",
    "InternalServerError",
    "status_error",
]

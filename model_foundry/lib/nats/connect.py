"""Opening one NATS connection: TLS, a bound on the whole attempt, and one sentence on failure.

nats-py retries inside ``connect`` and reports each failed attempt to ``error_cb``; this keeps
those reports so the error a user sees names the URLs and the real cause (refused
credentials, an untrusted certificate, nothing listening) rather than the last reset.
"""

from __future__ import annotations

import asyncio
import logging
import ssl
from typing import Any

from nats.aio.client import Client as NATS

from model_foundry.lib.nats.errors import NatsUnavailableError

ATTEMPTS = 3


def _not_tls_eof_noise(record: logging.LogRecord) -> bool:
    # asyncio warns on every TLS connection that nats-py's stream protocol ends (its
    # eof_received returns True, which SSL ignores); harmless, but it buried the one-sentence
    # errors the CLI prints for a refused or untrusted NATS server.
    return "eof_received() has no effect when using ssl" not in record.getMessage()


logging.getLogger("asyncio").addFilter(_not_tls_eof_noise)


def without_userinfo(url: str) -> str:
    """``url`` with any ``user:password@`` replaced, so error messages never carry a secret."""
    scheme, sep, rest = url.partition("://")
    if not sep:
        scheme, rest = "", url
    host = rest.rsplit("@", 1)[-1]
    if host == rest:
        return url
    return f"{scheme}{sep}***@{host}"


def tls_context(servers: list[str], ca_file: str | None) -> ssl.SSLContext | None:
    if ca_file:
        return ssl.create_default_context(cafile=ca_file)
    if any(s.startswith("tls://") for s in servers):
        return ssl.create_default_context()
    return None


async def open_connection(servers: list[str], timeout_s: float, options: dict[str, Any]) -> NATS:
    """Connect to ``servers`` with nats-py ``options`` (credentials, TLS), or raise
    :class:`NatsUnavailableError` with :func:`failure_sentence`."""
    failures: list[BaseException] = []
    # A failed certificate check leaves nats-py's connect hanging forever
    # (nats-io/nats.py#718); it cannot succeed on retry either, so it ends the attempt.
    untrusted = asyncio.Event()

    async def on_error(exc: Exception) -> None:
        # nats-py reports each failed attempt here; keep them for one clear message.
        failures.append(exc)
        if isinstance(exc, ssl.SSLCertVerificationError):
            untrusted.set()

    nc = NATS()
    connecting = asyncio.ensure_future(
        nc.connect(
            servers=servers,
            connect_timeout=timeout_s,
            max_reconnect_attempts=ATTEMPTS,
            reconnect_time_wait=0.5,
            error_cb=on_error,
            name="model-foundry",
            **options,
        )
    )
    giving_up = asyncio.ensure_future(untrusted.wait())
    # Every attempt is bounded by connect_timeout; this bounds the whole, hangs included.
    deadline = timeout_s * (ATTEMPTS + 1) + 0.5 * ATTEMPTS + 2.0
    try:
        await asyncio.wait(
            {connecting, giving_up}, timeout=deadline, return_when=asyncio.FIRST_COMPLETED
        )
    finally:
        giving_up.cancel()
    if connecting.done() and not connecting.cancelled() and connecting.exception() is None:
        return nc
    error: BaseException | None = None
    if connecting.done() and not connecting.cancelled():
        error = connecting.exception()
    else:
        connecting.cancel()
        await asyncio.wait({connecting}, timeout=1.0)
    urls = ", ".join(without_userinfo(url) for url in servers)
    raise NatsUnavailableError(failure_sentence(urls, failures, error)) from None


def failure_sentence(urls: str, failures: list[BaseException], error: BaseException | None) -> str:
    """One sentence that names the URLs, what went wrong and what to do about it."""

    def describe(exc: BaseException) -> str:
        return f"{type(exc).__name__}: {exc}".strip()

    # The last failure is often the reset that follows a refusal, so look for the cause.
    refused = [f for f in failures if "authori" in str(f).lower() or "authenti" in str(f).lower()]
    if refused:
        return (
            f"NATS at {urls} refused the credentials ({describe(refused[-1])}); check "
            "NATS_USER and NATS_PASSWORD, NATS_TOKEN or NATS_CREDS."
        )
    untrusted = [f for f in failures if isinstance(f, ssl.SSLCertVerificationError)]
    if untrusted:
        return (
            f"NATS at {urls} presented a TLS certificate that could not be verified "
            f"({describe(untrusted[-1])}); point NATS_TLS_CA at the CA file that signed it."
        )
    if failures:
        cause = describe(failures[-1])
    elif error is not None:
        cause = describe(error)
    else:
        cause = "no answer"
    return (
        f"cannot reach NATS at {urls} ({cause}); start it with "
        "`make up` or point NATS_URL at a running server."
    )


__all__ = ["failure_sentence", "open_connection", "tls_context", "without_userinfo"]

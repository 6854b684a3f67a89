"""Each slot's context window, and how many tokens a request takes on it.

A model server only accepts a request whose prompt plus answer fits the context one request
may use. That is not the model's training context: llama.cpp splits ``-c`` across its
``--parallel`` slots (``-c 4096 --parallel 5`` leaves about 800 tokens a request), and vLLM
caps it at ``--max-model-len``. Sending a prompt that does not fit costs a round trip and
an HTTP 400 every run, for ever; so the pipeline asks first.

Where the window comes from, first that answers:

1. ``context_tokens`` in the slot file (an operator's override, e.g. for a server behind a
   proxy that hides the endpoints below);
2. the slot's runtime (``runtimes/``): llama.cpp ``GET /props`` ->
   ``default_generation_settings.n_ctx`` (per request, after the split across parallel
   slots); vLLM ``GET /v1/models`` -> ``max_model_len`` of the slot's model.

Prompt tokens are counted by the server's own tokenizer, the way its runtime says:
llama.cpp renders chat messages with ``POST /apply-template`` and counts them with
``POST /tokenize`` (BOS included); vLLM's ``POST /tokenize`` takes ``messages`` or
``prompt`` and returns ``count``.

When a server cannot count (down, an old build, a proxy), the count is an estimate that is
never below the truth for the tokenizers these servers use (byte-fallback BPE and
SentencePiece produce at most one token per UTF-8 byte): the UTF-8 length of the text, plus
``ESTIMATE_PER_MESSAGE`` tokens of template per chat message. It over-counts ordinary text
several times over, so prompts are split smaller than needed, never sent too long.

The answer needs room too: the request's ``max_tokens`` (or ``DEFAULT_ANSWER_RESERVE`` when
it sets none, ``request.Rendered.reserve``) is reserved out of the window.
"""

from __future__ import annotations

import hashlib
import json
import threading
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from model_foundry.lib.slots.body import Body
from model_foundry.lib.slots.config import Slot
from model_foundry.lib.slots.runtimes import LLAMACPP, VLLM, server_root
from model_foundry.lib.slots.runtimes import httpx as _httpx
from model_foundry.lib.slots.runtimes.shapes import KEEPALIVE_EXPIRY_S
from model_foundry.lib.slots.template_check import TemplateCheck, check_template

ESTIMATE_PER_MESSAGE = 8
# Room left for what a chat template adds beyond the estimate's per-message tokens (some
# templates insert a default system text of a few dozen tokens), before a prompt is taken
# to fit without asking the server to count it.
TEMPLATE_ALLOWANCE = 256
PROBE_TIMEOUT_S = 5.0

# "slot file", "unknown", or the runtime's ``context_source`` ("llama.cpp /props", ...).
ContextSource = str


@dataclass(frozen=True)
class SlotContext:
    """What one slot allows a single request."""

    slot: str
    tokens: int | None
    source: ContextSource
    # Why the window is unknown (the URL that did not answer), for run metadata.
    note: str | None = None

    def describe(self) -> str:
        if self.tokens is None:
            return f"{self.slot}: context unknown ({self.note or 'no endpoint answered'})"
        return f"{self.slot}: {self.tokens} tokens per request (from {self.source})"


@dataclass(frozen=True)
class TokenCount:
    tokens: int
    # False when the server could not count and the conservative estimate was used.
    exact: bool


def estimate_tokens(body: Body) -> int:
    """The conservative count described in the module docstring."""
    if body.messages is not None:
        return (
            sum(
                len(str(m.get("content") or "").encode("utf-8")) + ESTIMATE_PER_MESSAGE
                for m in body.messages
            )
            + ESTIMATE_PER_MESSAGE
        )
    return len((body.raw or "").encode("utf-8")) + 1


def surely_fits(window: int, body: Body, *, reserve: int) -> bool:
    """True when even the upper-bound estimate fits with ``TEMPLATE_ALLOWANCE`` to spare, so
    the server need not be asked to count (most prompts, in a window of several thousand)."""
    return estimate_tokens(body) + reserve + TEMPLATE_ALLOWANCE <= window


def n_ctx_from_props(body: Mapping[str, Any]) -> int | None:
    return LLAMACPP.context_from(body, "")


def max_model_len_from_models(body: Mapping[str, Any], model: str) -> int | None:
    """``max_model_len`` of ``model`` in a vLLM ``/v1/models`` list (the only one if single)."""
    return VLLM.context_from(body, model)


class ContextBook:
    """Context windows of a set of slots, and token counts cached per server and text.

    Thread-safe; one HTTP connection pool for all probes. Use as a context manager or call
    :meth:`close`.
    """

    def __init__(self, slots: Iterable[Slot], *, timeout_s: float = PROBE_TIMEOUT_S) -> None:
        self.slots = {s.name: s for s in slots}
        # Idle connections go before the servers close them: a count sent on one being closed
        # would fail, and that server's prompts would be counted by estimate from then on.
        self._http = _httpx.Client(
            timeout=timeout_s, limits=_httpx.Limits(keepalive_expiry=KEEPALIVE_EXPIRY_S)
        )
        self._contexts: dict[str, SlotContext] = {}
        self._templates: dict[str, TemplateCheck] = {}
        self._counts: dict[tuple[str, str, str], int] = {}
        # A server that failed to count once is not asked again in this book's life: one
        # timeout per server, not one per prompt.
        self._cannot_count: set[str] = set()
        self._lock = threading.Lock()
        self.estimated = 0

    def __enter__(self) -> ContextBook:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def close(self) -> None:
        self._http.close()

    # -- windows ------------------------------------------------------------------------------

    def context(self, slot: str) -> SlotContext:
        with self._lock:
            known = self._contexts.get(slot)
        if known is None:
            known = self._probe(self.slots[slot])
            with self._lock:
                self._contexts[slot] = known
        return known

    def contexts(self) -> dict[str, SlotContext]:
        return {name: self.context(name) for name in self.slots}

    # -- chat templates -------------------------------------------------------------------------

    def template(self, slot: str) -> TemplateCheck:
        """Whether ``slot``'s chat template keeps the messages (``template_check.py``), asked
        once in the book's life."""
        with self._lock:
            known = self._templates.get(slot)
        if known is None:
            known = check_template(self._http, self.slots[slot])
            with self._lock:
                self._templates[slot] = known
        return known

    def templates(self) -> dict[str, TemplateCheck]:
        return {name: self.template(name) for name in self.slots}

    def checked_templates(self) -> dict[str, TemplateCheck]:
        """The checks made so far (slots this book's work reached), without asking more."""
        with self._lock:
            return dict(self._templates)

    def _get_json(self, url: str) -> Any:
        resp = self._http.get(url)
        resp.raise_for_status()
        return resp.json()

    def _probe(self, slot: Slot) -> SlotContext:
        if slot.context_tokens is not None:
            return SlotContext(slot.name, slot.context_tokens, "slot file")
        runtime = slot.server
        url = runtime.context_url(slot.base_url)
        try:
            window = runtime.context_from(self._get_json(url), slot.model)
            if window:
                return SlotContext(slot.name, window, runtime.context_source)
            note = f"{url} did not say"
        except (_httpx.HTTPError, ValueError) as exc:
            note = f"{url}: {type(exc).__name__}: {str(exc).splitlines()[0] if str(exc) else ''}"
        return SlotContext(slot.name, None, "unknown", note)

    # -- counting -----------------------------------------------------------------------------

    def count(self, slot: Slot, body: Body) -> TokenCount:
        """Prompt tokens of a rendered request (``build_request``'s messages or prompt)."""
        kind = "messages" if body.messages is not None else "prompt"
        spelled = json.dumps(
            body.messages if body.messages is not None else body.raw, sort_keys=True
        )
        digest = hashlib.sha256(spelled.encode("utf-8")).hexdigest()
        root = server_root(slot.base_url)
        cache_key = (f"{root}|{slot.model}", kind, digest)
        with self._lock:
            cached = self._counts.get(cache_key)
            refused = root in self._cannot_count
        if cached is not None:
            return TokenCount(cached, True)
        if not refused:
            try:
                n = slot.server.count_tokens(self._http, root, slot.model, body)
            except (_httpx.HTTPError, ValueError, KeyError, TypeError):
                with self._lock:
                    self._cannot_count.add(root)
            else:
                with self._lock:
                    self._counts[cache_key] = n
                return TokenCount(n, True)
        with self._lock:
            self.estimated += 1
        return TokenCount(estimate_tokens(body), False)

    def count_text(self, slot: Slot, text: str) -> TokenCount:
        """Tokens of a bare piece of text (no template, no BOS): for sizing chunks."""
        return self.count(slot, Body(prompt=text)) if text else TokenCount(0, True)


__all__ = [
    "ESTIMATE_PER_MESSAGE",
    "TEMPLATE_ALLOWANCE",
    "ContextBook",
    "SlotContext",
    "TokenCount",
    "estimate_tokens",
    "max_model_len_from_models",
    "n_ctx_from_props",
    "server_root",
    "surely_fits",
]

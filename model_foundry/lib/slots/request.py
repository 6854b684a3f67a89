"""A request as a slot is sent it: the body built into the slot's chat turns or raw prompt,
with its defaults, the role's thinking switch, the task's parameters and the runtime's
spelling of a JSON schema (``build_request``), and rendered once per slot to be counted
and sent (``Rendered``). Fitting a prompt reads this, never the transport."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from model_foundry.lib.slots.body import Body
from model_foundry.lib.slots.config import Slot
from model_foundry.lib.slots.quirks import (
    PLAMO_STOP,
    fold_system_into_user,
    plamo_translate_prompt,
    translation_messages,
)

_REQUEST_KEYS = {"max_tokens", "temperature", "top_p", "stop", "seed"}
_LOCAL_KEYS = {
    "thinking",
    "chat_template_kwargs",
    "extra_body",
    "source_lang",
    "target_lang",
    # A JSON schema the answer must follow: each runtime spells the constraint its own way
    # (``Runtime.structured_output``), so it never goes to the server under this name.
    "json_schema",
}


def _is_translation(params: Mapping[str, Any]) -> bool:
    return "source_lang" in params or "target_lang" in params


def _chat_messages(slot: Slot, body: Body, params: Mapping[str, Any]) -> list[dict[str, Any]]:
    """``body`` as the chat turns ``slot`` is sent."""
    messages = body.messages
    if messages is None:
        if body.prompt is None and _is_translation(params):
            # A translation that fell back to a chat slot: the bare text would be answered
            # as a chat turn and stored as its translation, so say what to do with it.
            messages = translation_messages(
                str(body.text),
                params.get("source_lang", slot.translation.source_lang),
                params.get("target_lang", slot.translation.target_lang),
            )
        else:
            messages = [{"role": "user", "content": body.raw}]
    if slot.fold_system_into_user:
        messages = fold_system_into_user(messages)
    return messages


def _completion_prompt(slot: Slot, body: Body, params: Mapping[str, Any]) -> str:
    """``body`` as the raw prompt a completions ``slot`` is sent."""
    if slot.prompt_format == "plamo-translate":
        source = body.text if body.text is not None else body.prompt
        if source is None:
            raise ValueError(f"slot {slot.name} (plamo-translate) needs the text to translate")
        return plamo_translate_prompt(
            source,
            params.get("source_lang", slot.translation.source_lang),
            params.get("target_lang", slot.translation.target_lang),
        )
    if body.prompt is not None:
        return body.prompt
    if body.messages is None:
        raise ValueError(f"slot {slot.name} (completions) needs a prompt")
    return "\n\n".join(str(m.get("content") or "") for m in body.messages)


def build_request(
    slot: Slot,
    body: Body,
    params: Mapping[str, Any] | None = None,
    *,
    thinking: bool | None = None,
) -> dict[str, Any]:
    """The keyword arguments for ``chat.completions.create`` or ``completions.create``.

    Precedence: slot defaults < role thinking < task params. Unknown task params go to
    ``extra_body`` so server-specific knobs pass through. A ``json_schema`` param constrains
    the answer in the slot runtime's own request shape (``Runtime.structured_output``).
    """
    params = dict(params or {})
    d = slot.request_defaults
    req: dict[str, Any] = {"model": slot.model}
    for k in _REQUEST_KEYS:
        value = getattr(d, k, None)
        if value is not None:
            req[k] = value
    req.update({k: v for k, v in params.items() if k in _REQUEST_KEYS})
    extra_body: dict[str, Any] = {**d.extra_body, **params.get("extra_body", {})}
    extra_body.update({k: v for k, v in params.items() if k not in _REQUEST_KEYS | _LOCAL_KEYS})

    if slot.api == "chat":
        req["messages"] = _chat_messages(slot, body, params)
        kwargs = dict(d.chat_template_kwargs)
        think = params.get("thinking", thinking)
        if think is not None:
            kwargs[slot.thinking_kwarg] = bool(think)
        kwargs.update(params.get("chat_template_kwargs", {}))
        if kwargs:
            extra_body["chat_template_kwargs"] = kwargs
    else:
        req["prompt"] = _completion_prompt(slot, body, params)
        if slot.prompt_format == "plamo-translate":
            stops = list(req.get("stop") or [])
            req["stop"] = stops + [s for s in PLAMO_STOP if s not in stops]
        if "max_tokens" not in req:
            raise ValueError(f"slot {slot.name}: completions need an explicit max_tokens")
    if slot.stream:
        req["stream"] = True
        req["stream_options"] = {"include_usage": True}
    schema = params.get("json_schema")
    if schema is not None:
        for name, value in slot.server.structured_output(schema).items():
            if name == "extra_body":
                extra_body.update(value)
            else:
                req[name] = value
    if extra_body:
        req["extra_body"] = extra_body
    return req


# Tokens kept for the answer when a request names no max_tokens (chat slots may leave it
# unset; the server then generates until its own limit).
DEFAULT_ANSWER_RESERVE = 512


@dataclass(frozen=True)
class Rendered:
    """A request as one slot is sent it: ``build_request``'s keyword arguments. Fitting
    counts it against the slot's context window and the slot's worker sends it, so a request
    is rendered once for each slot it may go to. Read it, never change it."""

    kwargs: Mapping[str, Any]

    @property
    def counted(self) -> Body:
        """What the slot's server counts: the chat messages, or the completions prompt."""
        if "messages" in self.kwargs:
            return Body(messages=self.kwargs["messages"])
        return Body(prompt=self.kwargs["prompt"])

    @property
    def reserve(self) -> int:
        """Tokens to keep free for the answer: its ``max_tokens``, or the default reserve."""
        value = self.kwargs.get("max_tokens")
        return int(value) if isinstance(value, int) and value > 0 else DEFAULT_ANSWER_RESERVE

    def pinned(self, pin: Mapping[str, Any] | None) -> Rendered:
        """This request with ``pin`` (``SlotWorker._pin``: the server slot it runs in, outside
        its key) among the server's own fields, where ``build_request`` puts a parameter it
        does not know."""
        if not pin:
            return self
        req = dict(self.kwargs)
        req["extra_body"] = {**req.get("extra_body", {}), **pin}
        return Rendered(req)


def render(
    slot: Slot,
    body: Body,
    params: Mapping[str, Any] | None = None,
    *,
    thinking: bool | None = None,
) -> Rendered:
    """``body`` rendered for ``slot`` (``build_request``), to count and to send."""
    return Rendered(build_request(slot, body, params, thinking=thinking))


__all__ = ["DEFAULT_ANSWER_RESERVE", "Rendered", "build_request", "render"]

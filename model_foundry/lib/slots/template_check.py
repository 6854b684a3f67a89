"""Whether a chat slot's template keeps what it is given, checked rather than trusted.

A chat server renders the messages of a request through the model's chat template before
the model sees them. A wrong template can drop them and still answer: llama.cpp started with
``--chat-template NAME`` for a name its build does not know renders the name itself as a
Jinja template, so every request becomes that one word, and the server answers it with
HTTP 200. Nothing in the answer says the question was never asked.

So before a slot's first request, the pipeline renders two distinct probe messages the way
the client would send them (system folding included) and asks the server:

- the prompt tokens the rendered request takes (the runtime's own counting: llama.cpp
  ``/apply-template`` then ``/tokenize``; vLLM ``/tokenize`` with ``messages``) must be at
  least what the messages' text alone takes (``/tokenize`` of the bare text): a template
  adds tokens, never removes them;
- where the server can show the rendered text (llama.cpp ``/apply-template``), each probe
  message's text must be in it: a template without a system role that silently drops the
  system message is caught by name.

A slot that fails is refused for this run: ``fit.py`` sends its role's requests to the other
slots of the role, and a request no other slot can take is recorded with
``TEMPLATE_IGNORES_MESSAGES`` and the sentence below, never sent. A server that cannot be
asked (down, an old build, a proxy) is not refused here; its requests fail on their own.
Completions slots have no chat template and are not checked.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from model_foundry.lib.slots.body import Body
from model_foundry.lib.slots.config import Slot
from model_foundry.lib.slots.request import build_request
from model_foundry.lib.slots.runtimes import server_root
from model_foundry.lib.slots.runtimes.shapes import HttpClient, httpx

TEMPLATE_IGNORES_MESSAGES = "TemplateIgnoresMessages"

# Two messages whose words no template adds by itself, so finding them in a rendering means
# the message got there.
PROBE_SYSTEM = "Answer as the lighthouse keeper of Vardø would."
PROBE_USER = "Which three harbours lie north of the marmalade factory?"
PROBE = (
    {"role": "system", "content": PROBE_SYSTEM},
    {"role": "user", "content": PROBE_USER},
)


@dataclass(frozen=True)
class TemplateCheck:
    """What the check found for one slot. ``ok`` None: not checked (and not refused).
    ``finding`` says what was seen, without naming the slot."""

    slot: str
    ok: bool | None
    finding: str

    @property
    def refused(self) -> bool:
        return self.ok is False

    @property
    def detail(self) -> str:
        """The finding; a refusal as the sentence its requests are recorded with."""
        return f"slot {self.slot}: {self.finding}" if self.refused else self.finding

    def describe(self) -> str:
        """One line, for run metadata and ``model-foundry slots check``."""
        if self.ok is False:
            return self.detail
        word = "keeps the messages" if self.ok else "not checked"
        return f"slot {self.slot}: chat template {word} ({self.detail})"


def _rendered_text(http: HttpClient, slot: Slot, messages: list[dict[str, str]]) -> str | None:
    """The prompt the server renders, where its runtime can show it (llama.cpp)."""
    path = slot.server.endpoints.apply_template
    if not path:
        return None
    resp = http.post(f"{server_root(slot.base_url)}{path}", json={"messages": messages})
    resp.raise_for_status()
    prompt = resp.json().get("prompt")
    return prompt if isinstance(prompt, str) else None


def _quoted(text: str, limit: int = 40) -> str:
    flat = " ".join(text.split())
    return repr(flat if len(flat) <= limit else flat[: limit - 1] + "…")


def check_template(http: HttpClient, slot: Slot) -> TemplateCheck:
    """Render the probe on ``slot``'s server and judge it (see the module doc)."""
    if slot.api != "chat":
        return TemplateCheck(slot.name, None, "completions API: no chat template")
    sent = build_request(slot, Body(messages=[dict(m) for m in PROBE]))["messages"]
    texts = [str(m.get("content") or "") for m in sent]
    root = server_root(slot.base_url)
    runtime = slot.server
    try:
        rendered = runtime.count_tokens(http, root, slot.model, Body(messages=sent))
        bare = runtime.count_tokens(http, root, slot.model, Body(prompt="\n".join(texts)))
        shown = _rendered_text(http, slot, sent)
    except (httpx.HTTPError, ValueError, KeyError, TypeError) as exc:
        return TemplateCheck(slot.name, None, f"{root} could not render: {type(exc).__name__}")
    return verdict(slot.name, sent, rendered=rendered, bare=bare, shown=shown)


def verdict(
    slot: str,
    sent: Sequence[Mapping[str, Any]],
    *,
    rendered: int,
    bare: int,
    shown: str | None,
) -> TemplateCheck:
    """The check's judgement of what the server said about the ``sent`` probe: ``rendered``
    prompt tokens for the request, ``bare`` for the messages' text alone, ``shown`` the
    rendered prompt where the server shows it."""
    if rendered < bare:
        seen = f"; it rendered them as {_quoted(shown)}" if shown is not None else ""
        return TemplateCheck(
            slot,
            False,
            f"its chat template ignores the messages: {rendered} prompt "
            f"tokens for messages whose text alone is {bare}{seen}",
        )
    if shown is not None:
        lost = [str(m.get("role")) for m in sent if str(m.get("content") or "") not in shown]
        if lost:
            which = " and ".join(f"the {role} message" for role in lost)
            return TemplateCheck(
                slot,
                False,
                f"its chat template drops {which}: its text is not in the "
                f"prompt the server renders ({rendered} prompt tokens)",
            )
    return TemplateCheck(slot, True, f"{rendered} prompt tokens for text of {bare}")


__all__ = ["PROBE", "TEMPLATE_IGNORES_MESSAGES", "TemplateCheck", "check_template", "verdict"]

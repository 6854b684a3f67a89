"""One request to the slots: what a piece of LLM work asks, and how it is planned and fitted.

A :class:`Request` is what the work wants: a task name, the role that should answer, the
:class:`Body` (``messages``, a raw ``prompt`` or a ``text`` to translate) and the task's
parameters.
Planning it for the active profile gives a :class:`Planned` request: the model of the slot
that would serve the role first, the parameters that decide the answer, and the *request
key*, a hash of all of that. Keys identify requests across runs: a rerun looks them up in
the completions store and sends only those that never succeeded. The role is part of the key
so two roles that resolve to the same slot and model (a dataset asked of ``summary`` and
``kindergarten``) are two requests, not one.

Fitting narrows a planned request to the slots whose context windows hold it, or says why
none does (``lib/slots/fit.py``), and keeps the request as rendered for each slot it counted
on: the slot sends that rendering, so a request is rendered once.
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from model_foundry.lib.slots.attempt import Attempt
from model_foundry.lib.slots.body import Body
from model_foundry.lib.slots.config import Slot, SlotFile
from model_foundry.lib.slots.context import ContextBook
from model_foundry.lib.slots.dispatcher import Task
from model_foundry.lib.slots.fit import PROMPT_TOO_LONG, fit_request
from model_foundry.lib.slots.request import Rendered


def canonical(value: Any) -> str:
    """The one JSON spelling of ``value`` that keys and stored requests use."""
    return json.dumps(value, sort_keys=True, ensure_ascii=False, separators=(",", ":"))


@dataclass(frozen=True)
class Request:
    """What one piece of work asks a role: its ``Body`` (messages, a prompt or a text)."""

    task: str
    role: str
    body: Body
    params: Mapping[str, Any] = field(default_factory=dict)
    # The session the request works for: telemetry only, not part of the key.
    correlation_id: str | None = None
    # Requests whose prompts share a long prefix (the samples of one prompt, the comparisons
    # of one prompt, the parts of one session) name one family, so the dispatcher sends them
    # where the prefix is cached. Not part of the key: it changes no answer.
    family: str | None = None


def output_params(
    slot: Slot, params: Mapping[str, Any] | None = None, thinking: bool | None = None
) -> dict[str, Any]:
    """The parameters that decide what the model answers, in the precedence the client uses:
    the slot's request defaults, then the role's thinking switch, then the task's params."""
    defaults = slot.request_defaults.model_dump(exclude_none=True)
    merged: dict[str, Any] = {k: v for k, v in defaults.items() if v not in ({}, [])}
    if thinking is not None:
        merged["thinking"] = thinking
    merged.update(params or {})
    return merged


def request_key(request: Request, model: str, params: Mapping[str, Any]) -> str:
    """sha256 over everything that changes the answer, and the role asked; equal keys mean
    "same request". (Keys made before the role was part of them do not match new ones: such a
    request is asked once more.)"""
    asked = {"task": request.task, "role": request.role, "model": model, "params": params}
    spelled = canonical({**asked, **request.body.as_dict()})
    return hashlib.sha256(spelled.encode("utf-8")).hexdigest()


@dataclass(frozen=True)
class Planned:
    """A request keyed for the slot that would serve it first, and where it may go."""

    request: Request
    key: str
    model: str
    output_params: dict[str, Any]
    # The slot that would serve it first (whose ``model`` is in the key).
    slot: str
    # Set by ``fit``: the slots whose context holds it (None: any), or why none does, and
    # the request as each slot that counted it will send it.
    only_slots: tuple[str, ...] | None = None
    unfit_reason: str | None = None
    unfit_cause: str = PROMPT_TOO_LONG
    rendered: Mapping[str, Rendered] = field(default_factory=dict)

    @property
    def task(self) -> str:
        return self.request.task

    @property
    def role(self) -> str:
        return self.request.role

    def to_task(self) -> Task:
        return Task(
            key=self.key,
            task=self.task,
            role=self.role,
            body=self.request.body,
            params=dict(self.request.params),
            only_slots=self.only_slots,
            family=self.request.family,
            rendered=self.rendered,
        )

    def request_json(self) -> str:
        """The body as the store keeps it beside the key."""
        return canonical(self.request.body.as_dict())


def plan(request: Request, slot_file: SlotFile, profile: str | None = None) -> Planned:
    """Key ``request`` for the slot that would serve its role first in the active profile.

    A fallback slot may end up answering (while the first one cools down); the row records
    the slot and model that did, the key stays the planned one so a rerun finds it.
    """
    slot = slot_file.slots_for_role(request.role, profile)[0]
    effective = output_params(slot, request.params, slot_file.thinking_for_role(request.role))
    key = request_key(request, slot.model, effective)
    return Planned(request, key, slot.model, effective, slot.name)


def fit(
    requests: Sequence[Planned], book: ContextBook, slot_file: SlotFile, profile: str | None = None
) -> list[Planned]:
    """``requests`` narrowed to the slots whose context windows hold them (see ``fit.py``)."""
    fitted = []
    for r in requests:
        found = fit_request(
            book, slot_file, r.role, r.request.body, r.request.params, profile=profile
        )
        fitted.append(
            dataclasses.replace(
                r,
                only_slots=found.only_slots,
                unfit_reason=found.reason,
                unfit_cause=found.cause,
                rendered=found.rendered,
            )
        )
    return fitted


def unfit_attempt(request: Planned, slot_file: SlotFile) -> Attempt:
    """The recorded failure of a request no slot can take (no context holds it, or every
    slot's template drops the messages): never sent, not retried; it names the slot the
    request was planned for."""
    return Attempt(
        key=request.key,
        task=request.task,
        role=request.role,
        slot=request.slot,
        model=request.model,
        runtime=slot_file.slots[request.slot].runtime,
        status="error",
        error_class=request.unfit_cause,
        error=request.unfit_reason,
        retryable=False,
        latency_s=0.0,
    )


__all__ = [
    "Body",
    "Planned",
    "Request",
    "canonical",
    "fit",
    "output_params",
    "plan",
    "request_key",
    "unfit_attempt",
]

"""What a batch is made of (``Task``) and how it is run (``DispatchOptions``, ``RetryPolicy``)."""

from __future__ import annotations

import functools
import hashlib
import json
import random
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from model_foundry.lib.slots.body import Body
from model_foundry.lib.slots.leases.settings import LeaseSettings
from model_foundry.lib.slots.limiter import LimiterKind
from model_foundry.lib.slots.request import Rendered


@dataclass
class Task:
    """One unit of work. ``key`` identifies it across runs (finished keys are not resent)."""

    key: str
    task: str
    role: str
    body: Body
    params: dict[str, Any] = field(default_factory=dict)
    # The only slots this task may go to (those whose context window holds it); None: any
    # slot that serves its role.
    only_slots: tuple[str, ...] | None = None
    # Tasks whose prompts share a long prefix name the same family (``WorkQueue``): they run
    # one after another where the prefix is cached. Not part of the key: it changes no answer.
    family: str | None = None
    # The request as fitting rendered it for each slot it counted on, sent as it is there;
    # another slot renders it from ``body`` and ``params``.
    rendered: Mapping[str, Rendered] = field(default_factory=dict)

    @functools.cached_property
    def sample(self) -> tuple[str, int] | None:
        """The sample group of a task with an integer ``seed`` and the seed: the tasks that
        differ from it only in their seed (the samples of one prompt) share the group. A slot
        that takes several samples in one request (``Slot.samples_per_request``) sends those
        with consecutive seeds together, as one request with ``n`` choices: choice j of a
        request with seed s samples with seed s + j on llama.cpp and vLLM alike, as the task
        with that seed would alone."""
        seed = self.params.get("seed")
        if not isinstance(seed, int) or isinstance(seed, bool):
            return None
        rest = {k: v for k, v in self.params.items() if k != "seed"}
        asked = [self.task, self.role, self.body.as_dict(), rest, self.only_slots]
        spelled = json.dumps(asked, sort_keys=True, ensure_ascii=False, default=str)
        return hashlib.sha256(spelled.encode("utf-8")).hexdigest(), seed

    @property
    def route(self) -> str:
        """The queue this task waits in: its role, narrowed to ``only_slots`` when set."""
        if self.only_slots is None:
            return self.role
        return f"{self.role}@{','.join(sorted(self.only_slots))}"


@dataclass(frozen=True)
class RetryPolicy:
    max_attempts: int = 4
    backoff_base_s: float = 0.5
    backoff_max_s: float = 30.0
    # Share of the delay that is randomised, so retries from many workers do not align.
    jitter: float = 0.5

    def delay(self, failed_attempts: int, rng: random.Random | None = None) -> float:
        base = min(self.backoff_max_s, self.backoff_base_s * 2 ** max(failed_attempts - 1, 0))
        r = (rng or random).random()
        return base * (1 - self.jitter * r)


@dataclass(frozen=True)
class DispatchOptions:
    retry: RetryPolicy = field(default_factory=RetryPolicy)
    failures_before_cooldown: int = 3
    cooldown_s: float = 30.0
    # Stop starting tasks once errors / attempts passes this, after a minimum sample.
    stop_error_share: float = 0.5
    min_attempts_before_stop: int = 10
    # Overrides every slot's ``timeouts.request_s`` when set.
    request_timeout_s: float | None = None
    # Where the per-slot token files live; default ``<data dir>/slot_locks``.
    lock_dir: Path | None = None
    token_poll_s: float = 0.02
    # The shared limit: NATS leases when ``nats`` (a NatsClient) is given and reachable
    # ("auto"), flock files otherwise; "nats" makes an unreachable NATS an error.
    slot_limiter: LimiterKind = "auto"
    nats: Any = None
    lease: LeaseSettings = field(default_factory=LeaseSettings)
    # A worker keeps its place across consecutive requests for up to this long, then hands it
    # back and leaves it to workers elsewhere for handoff_s (saves two NATS round trips per
    # request while staying fair to other runs).
    place_hold_s: float = 5.0
    handoff_s: float = 0.05
    # Families (``Task.family``) run where their prefix is cached, and on a runtime whose
    # server slots can be named (llama.cpp ``id_slot``) each request runs in the server slot of
    # its place. Off: one line in order, the server chooses (``bench prefill`` compares both).
    # On by default. It was off while the freshness test failed with it on; the cause was
    # the completions store's one transaction per attempt, not families (docs/slots.md).
    families: bool = True
    # No new task starts after this many seconds; in-flight ones finish (they have timeouts).
    batch_timeout_s: float | None = None
    # Run a synchronous ``on_attempt`` in a worker thread so a slow database write never
    # stalls the streams of other requests.
    record_in_thread: bool = True
    # While tasks wait in the queue, a batched ``on_attempt`` (one store transaction) is called
    # at most once in this many seconds (``Recorder``): opening the DuckDB file is what a
    # transaction costs, so fewer of them cost less CPU a request. 0: call at once.
    record_every_s: float = 0.5


__all__ = ["DispatchOptions", "RetryPolicy", "Task"]

"""The one run every LLM asset makes: plan, fit, answer, progress, causes, telemetry, rows.

An asset reads its pending work first (nothing pending: no slot file read, no slot asked),
then opens an :class:`LlmRun`. The run loads the slot file, opens the run's telemetry and
the context book, and asks in rounds: each round plans its requests, fits them to the slots'
context windows (one that fits none is recorded once as ``PromptTooLong`` and never sent),
answers them from the completions store or the slots with a progress log, and keeps the
round's batch. Most work is one round of one request per item, one row per answer: such a
kind of work is a :class:`WorkKind` and :meth:`LlmRun.work` does the rest (rows written, one
telemetry event per row). Work of several rounds (map-reduce summaries) calls
:meth:`LlmRun.ask` itself; work whose requests depend on earlier answers (a recipe's rows)
calls :meth:`LlmRun.ask_stream`, one round that grows as answers come. After the run,
:meth:`LlmRun.metadata` has the merged figures and failure causes and the telemetry counts,
as plain values the asset wraps for Dagster.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Generic, Protocol, Self, TypeVar

from model_foundry.lib.llm.answer import answer, progress_logger, warn_unfit
from model_foundry.lib.llm.batch import CompletionBatch
from model_foundry.lib.llm.request import Planned, Request, fit, plan
from model_foundry.lib.llm.store import Completion, CompletionStore
from model_foundry.lib.llm.stream import Settled, Stream
from model_foundry.lib.slots.config import SlotFile
from model_foundry.lib.slots.context import ContextBook
from model_foundry.lib.slots.dispatcher import DispatchOptions
from model_foundry.lib.telemetry import Telemetry, for_run

ItemT = TypeVar("ItemT")
RowT = TypeVar("RowT")


class SlotSource(Protocol):
    """Where a run finds its slots: the assets' ``SlotsResource``, or anything alike."""

    @property
    def profile(self) -> str | None: ...

    def load(self) -> SlotFile: ...

    def context_book(self, slot_file: SlotFile) -> ContextBook: ...

    def dispatch_options(self) -> DispatchOptions: ...


class Log(Protocol):
    """What a run logs to: Dagster's ``context.log`` or a ``logging.Logger``."""

    def info(self, msg: str) -> Any: ...

    def warning(self, msg: str) -> Any: ...


@dataclass(frozen=True)
class Answer:
    """A planned request and its successful answer."""

    request: Planned
    completion: Completion

    @property
    def text(self) -> str:
        return self.completion.content.strip()


def answer_event(answer: Answer, **more: Any) -> dict[str, Any]:
    """Telemetry fields of a row written from an answer: who answered and how fast."""
    c = answer.completion
    return {
        "correlation_id": answer.request.request.correlation_id,
        "slot": c.slot,
        "model": c.model,
        "prompt_tokens": c.prompt_tokens,
        "generation_tokens": c.completion_tokens,
        "latency_s": c.latency_s,
        "gen_tps": c.gen_tps,
        **more,
    }


class WorkKind(ABC, Generic[ItemT, RowT]):
    """A kind of LLM work with one request per item and at most one row per answer.

    Subclass it in the kind's own lib module: ``request`` says what to ask for an item,
    ``row`` what to keep of its answer (None: nothing), ``write`` where rows go.
    """

    #: Names the work in log lines ("summary translations").
    label: str
    #: The telemetry event sent for each row written (None: none).
    event: str | None = None

    @abstractmethod
    def request(self, item: ItemT) -> Request: ...

    @abstractmethod
    def row(self, item: ItemT, answer: Answer, run_id: str | None) -> RowT | None: ...

    @abstractmethod
    def write(self, db_path: Path, rows: Sequence[RowT]) -> int: ...

    def event_fields(self, item: ItemT, answer: Answer) -> Mapping[str, Any]:
        return answer_event(answer)


@dataclass
class WorkOutcome(Generic[ItemT, RowT]):
    """What :meth:`LlmRun.work` did: each answered item, the rows built and how many were new."""

    answered: list[tuple[ItemT, Answer]] = field(default_factory=list)
    rows: list[RowT] = field(default_factory=list)
    written: int = 0
    batch: CompletionBatch = field(default_factory=lambda: CompletionBatch(0))


def nothing_asked() -> dict[str, Any]:
    """The metadata of a run that had nothing pending (so asked nothing)."""
    return CompletionBatch(0).metadata()


class LlmRun:
    """One asset run's dealings with the slots (see the module doc). Use it as a context."""

    def __init__(
        self,
        db_path: str | Path,
        slots: SlotSource,
        *,
        run_id: str | None,
        asset: str,
        log: Log,
    ) -> None:
        self.db_path = Path(db_path)
        self.slots = slots
        self.run_id = run_id
        self.asset = asset
        self.log = log
        self.batches: list[CompletionBatch] = []
        self.telemetry: Telemetry = Telemetry.disabled()

    def __enter__(self) -> Self:
        self.slot_file = self.slots.load()
        self.profile = self.slots.profile
        self.options = self.slots.dispatch_options()
        self.telemetry = for_run(self.run_id, self.asset)
        self.book = self.slots.context_book(self.slot_file)
        self.store = CompletionStore(self.db_path, run_id=self.run_id, telemetry=self.telemetry)
        return self

    def __exit__(self, *exc: object) -> None:
        self.book.close()
        self.telemetry.close()

    def plan(self, request: Request) -> Planned:
        return plan(request, self.slot_file, self.profile)

    def ask(self, requests: Sequence[Planned], label: str) -> CompletionBatch:
        """One round: fit ``requests``, answer them from the store or the slots, keep the batch."""
        fitted = fit(requests, self.book, self.slot_file, self.profile)
        warn_unfit(self.log.warning, label, fitted)
        batch = answer(
            self.store, fitted, self.slot_file, self.profile, options=self.options,
            progress=progress_logger(self.log.info, label),
        )  # fmt: skip
        self.batches.append(batch)
        return batch

    def ask_stream(
        self, first: Sequence[Planned], settled: Settled, label: str, roles: Iterable[str]
    ) -> CompletionBatch:
        """A round that grows: ``settled`` hears the requests answered or failed together
        and returns the requests they made ready (of ``roles``), asked in the same dispatcher
        batch (``stream.py``); keeps the batch."""
        stream = Stream(
            self.store, self.book, self.slot_file, self.profile, label, self.log.warning
        )
        batch = stream.run(
            first, settled, roles, self.options, progress_logger(self.log.info, label)
        )
        self.batches.append(batch)
        return batch

    def work(self, kind: WorkKind[ItemT, RowT], items: Sequence[ItemT]) -> WorkOutcome[ItemT, RowT]:
        """One round of ``kind`` over ``items``: ask, build and write the rows, one event each."""
        planned = [self.plan(kind.request(item)) for item in items]
        batch = self.ask(planned, kind.label)
        outcome: WorkOutcome[ItemT, RowT] = WorkOutcome(batch=batch)
        events = []
        for item, request in zip(items, planned, strict=True):
            completion = batch.results.get(request.key)
            if completion is None:
                continue
            done = Answer(request, completion)
            outcome.answered.append((item, done))
            row = kind.row(item, done, self.run_id)
            if row is not None:
                outcome.rows.append(row)
                if kind.event:
                    events.append(kind.event_fields(item, done))
        outcome.written = kind.write(self.db_path, outcome.rows)
        for event in events:
            self.telemetry.emit(str(kind.event), event)
        return outcome

    def emit(self, event: str, fields: Mapping[str, Any] | None = None, /, **more: Any) -> None:
        self.telemetry.emit(event, fields, **more)

    @property
    def batch(self) -> CompletionBatch:
        """Every round of this run as one batch."""
        return CompletionBatch.merged(self.batches)

    def windows(self) -> dict[str, str]:
        """Each live slot's context window, described (as the summaries' metadata shows it)."""
        return {name: c.describe() for name, c in self.book.contexts().items()}

    def metadata(self) -> dict[str, Any]:
        """The merged batch's figures and causes, the telemetry counts (after the block) and,
        for each slot the run's work reached, whether its chat template kept the messages."""
        return {**self.batch.metadata(), **self.telemetry.metadata(), **self.template_metadata()}

    def template_metadata(self) -> dict[str, Any]:
        """``slot_templates``: each checked slot's template verdict (``template_check.py``)."""
        templates = {n: t.describe() for n, t in self.book.checked_templates().items()}
        return {"slot_templates": templates} if templates else {}


__all__ = [
    "Answer",
    "LlmRun",
    "Log",
    "SlotSource",
    "WorkKind",
    "WorkOutcome",
    "answer_event",
    "nothing_asked",
]

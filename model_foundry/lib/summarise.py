"""Summaries of sessions of any length: one prompt when it fits, map-reduce when it does not.

A session whose transcript fits the summary role's context window (see
``lib/slots/context.py``) is summarised by one request, as before. A longer one is split
into parts that each fit (``lib/summary_chunks.py``); each part is summarised ("map"), then
the part summaries are summarised into one ("reduce"). When even the part summaries do not
fit one prompt, they are grouped and reduced again, level by level, until one prompt holds
them.

Every part is an ordinary request in the completions store, keyed by its text: a rerun after
new messages arrive answers the unchanged parts from the store and sends only what changed.
``session_summary_parts`` records which requests made up each summary.

A session none of whose parts can be answered stays pending with a reason; a prompt that can
never fit any slot is recorded as a failed request (``PromptTooLong``) and not sent.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from model_foundry.lib import storage
from model_foundry.lib.completions import (
    Completion,
    CompletionBatch,
    CompletionStore,
    Request,
    fit_requests,
    plan_request,
)
from model_foundry.lib.slots.config import SlotFile
from model_foundry.lib.slots.context import ContextBook
from model_foundry.lib.slots.dispatcher import DispatchOptions
from model_foundry.lib.slots.fit import fits_window, needed_tokens, role_window
from model_foundry.lib.summaries import (
    LANGUAGE_NAMES,
    SUMMARY_TASK,
    SessionToSummarise,
    detect_language,
    summary_messages,
    transcript,
)
from model_foundry.lib.summary_chunks import Chunk, Piece, PieceTooLong, pack

PART_TASK = "session_summary_part"
# Tokens left unused in every window: template tokens the per-piece counts cannot see.
SAFETY_MARGIN = 8
MAX_LEVELS = 8


def part_messages(session_id: str, chunk: Chunk, level: int, language: str) -> list[dict[str, str]]:
    """The prompt for one part: a stretch of the transcript, or summaries of earlier parts."""
    lang = LANGUAGE_NAMES.get(language, "English")
    if level == 1:
        what = f"messages {chunk.first}-{chunk.last}"
        system = (
            "You summarise one stretch of a longer session of an AI coding and writing agent "
            f"for its operator. Write 2-4 plain sentences in {lang}: what was asked, what was "
            "done, and anything left open in this stretch. No preamble."
        )
    else:
        what = f"summaries of parts {chunk.first}-{chunk.last}"
        system = (
            "You combine summaries of consecutive stretches of one session of an AI coding and "
            f"writing agent into one. Write 2-4 plain sentences in {lang}. No preamble."
        )
    return [
        {"role": "system", "content": system},
        {
            "role": "user",
            "content": f"Session {session_id}, {what}:\n\n{chunk.text()}\n\nSummarise this.",
        },
    ]


def reduce_messages(session_id: str, pieces: list[Piece], language: str) -> list[dict[str, str]]:
    """The final prompt over part summaries."""
    lang = LANGUAGE_NAMES.get(language, "English")
    return [
        {
            "role": "system",
            "content": (
                "You summarise sessions of an AI coding and writing agent for its operator from "
                "summaries of their consecutive parts. Write 2-4 plain sentences in "
                f"{lang}: what was asked, what was done, and anything left open. No preamble."
            ),
        },
        {
            "role": "user",
            "content": (
                f"Session {session_id}, in {len(pieces)} parts:\n\n"
                + "\n".join(p.text for p in pieces)
                + "\n\nSummarise the whole session."
            ),
        },
    ]


@dataclass(frozen=True)
class PartRecord:
    level: int
    index: int
    request_key: str
    first: int
    last: int


@dataclass
class _Session:
    session: SessionToSummarise
    language: str
    pieces: list[Piece]
    level: int = 1
    parts: list[PartRecord] = field(default_factory=list)
    # This round's requests: the final one, or the parts of the current level.
    final: Request | None = None
    round_parts: list[tuple[Chunk, Request]] = field(default_factory=list)
    summary: Completion | None = None
    failed: str | None = None


@dataclass
class Summarised:
    session: SessionToSummarise
    request: Request
    completion: Completion
    language: str
    parts: list[PartRecord]


@dataclass
class SummaryOutcome:
    summarised: list[Summarised]
    failed: dict[str, str]
    batch: CompletionBatch
    chunked_sessions: int = 0
    part_requests: int = 0
    levels: int = 0
    windows: dict[str, str] = field(default_factory=dict)

    def metadata(self) -> dict[str, Any]:
        return {
            "sessions_chunked": self.chunked_sessions,
            "part_requests": self.part_requests,
            "reduce_levels": self.levels,
            "sessions_failed": len(self.failed),
        }


class _Planner:
    """Turns a session's current pieces into this round's requests."""

    def __init__(
        self,
        book: ContextBook | None,
        slot_file: SlotFile,
        profile: str | None,
        role: str,
    ) -> None:
        self.book = book
        self.slot_file = slot_file
        self.profile = profile
        self.role = role
        found = role_window(book, slot_file, role, profile) if book is not None else None
        self.slot, self.window = found if found else (None, None)

    def request(self, task: str, messages: list[dict[str, str]], corr: str) -> Request:
        return plan_request(
            self.slot_file, task, self.role, profile=self.profile, messages=messages,
            correlation_id=corr,
        )  # fmt: skip

    def _fits(self, messages: list[dict[str, str]]) -> bool:
        if self.book is None or self.slot is None or self.window is None:
            return True
        ok, _, _ = fits_window(
            self.book, self.slot, self.window, messages=messages,
            thinking=self.slot_file.thinking_for_role(self.role),
        )  # fmt: skip
        return ok

    def _count(self, text: str) -> int:
        assert self.book is not None and self.slot is not None
        return self.book.count_text(self.slot, text).tokens

    def plan(self, s: _Session) -> None:
        corr = s.session.correlation_id
        s.final, s.round_parts = None, []
        whole = (
            summary_messages(corr, "\n".join(p.text for p in s.pieces), s.language)
            if s.level == 1
            else reduce_messages(corr, s.pieces, s.language)
        )
        if self._fits(whole):
            s.final = self.request(SUMMARY_TASK, whole, corr)
            return
        if s.level > MAX_LEVELS:
            s.failed = f"still too long after {MAX_LEVELS} levels of part summaries"
            return
        empty = part_messages(corr, Chunk((Piece(0, ""),)), s.level, s.language)
        budget = self._budget_for(empty) - SAFETY_MARGIN
        try:
            chunks = pack(
                s.pieces,
                budget,
                self._count,
                fits=lambda c: self._fits(part_messages(corr, c, s.level, s.language)),
            )
        except PieceTooLong as exc:
            s.failed = (
                f"the summary instruction alone does not leave room for any text in the "
                f"{self.window}-token context of {self.slot.name if self.slot else '?'} ({exc})"
            )
            return
        if s.level > 1 and len(chunks) >= len(s.pieces):
            s.failed = (
                "part summaries are too long to combine two in one prompt; lower the "
                "summary role's max_tokens or give its slots a larger context"
            )
            return
        for chunk in chunks:
            req = self.request(PART_TASK, part_messages(corr, chunk, s.level, s.language), corr)
            s.round_parts.append((chunk, req))

    def _budget_for(self, messages: list[dict[str, str]]) -> int:
        """Tokens left in the window after ``messages`` and the answer's reserve."""
        assert self.book is not None and self.slot is not None and self.window is not None
        prompt, reserve = needed_tokens(
            self.book, self.slot, messages=messages,
            thinking=self.slot_file.thinking_for_role(self.role),
        )  # fmt: skip
        return self.window - prompt - reserve


def summarise_sessions(
    store: CompletionStore,
    sessions: list[SessionToSummarise],
    slot_file: SlotFile,
    *,
    profile: str | None,
    role: str,
    max_messages: int,
    max_chars: int,
    book: ContextBook | None,
    options: DispatchOptions | None = None,
    log: Callable[[str], Any] | None = None,
    progress: Callable[[int, int], None] | None = None,
) -> SummaryOutcome:
    """Summarise ``sessions``, splitting those too long for the role's context window."""
    planner = _Planner(book, slot_file, profile, role)
    states = []
    for s in sessions:
        lines = transcript(s.lines, max_messages=max_messages, max_chars=max_chars).split("\n")
        pieces = [Piece(i + 1, line) for i, line in enumerate(lines) if line]
        states.append(_Session(s, detect_language("\n".join(lines)), pieces))
    outcome = SummaryOutcome([], {}, CompletionBatch(0))
    if book is not None:
        outcome.windows = {n: c.describe() for n, c in book.contexts().items()}
    batches: list[CompletionBatch] = []
    active = states
    rounds = 0
    while active:
        rounds += 1
        for st in active:
            planner.plan(st)
        requests = [st.final for st in active if st.final is not None]
        requests += [req for st in active for _, req in st.round_parts]
        if not requests:
            break
        if book is not None:
            requests = fit_requests(requests, book, slot_file, profile)
        batch = store.run(requests, slot_file, profile, options=options, progress=progress)
        batches.append(batch)
        by_key = {r.key: r for r in requests}
        still = []
        for st in active:
            if st.failed:
                continue
            if st.final is not None:
                done = batch.results.get(st.final.key)
                if done is None:
                    st.failed = _why(batch, by_key[st.final.key])
                else:
                    st.summary = done
                continue
            answers = [batch.results.get(req.key) for _, req in st.round_parts]
            missing = [
                req for (_, req), a in zip(st.round_parts, answers, strict=True) if a is None
            ]
            outcome.part_requests += len(st.round_parts)
            if missing:
                st.failed = (
                    f"{len(missing)} of {len(st.round_parts)} parts at level {st.level} failed: "
                    f"{_why(batch, by_key[missing[0].key])}"
                )
                continue
            next_pieces = []
            for i, ((chunk, req), answer) in enumerate(
                zip(st.round_parts, answers, strict=True), start=1
            ):
                assert answer is not None
                st.parts.append(PartRecord(st.level, i, req.key, chunk.first, chunk.last))
                label = (
                    f"Part {i} (messages {chunk.first}-{chunk.last})"
                    if st.level == 1
                    else f"Part {i} (parts {chunk.first}-{chunk.last})"
                )
                next_pieces.append(Piece(i, f"{label}: {' '.join(answer.content.split())}"))
            st.pieces = next_pieces
            st.level += 1
            still.append(st)
        active = still
        if log is not None and active:
            log(f"session summaries: {len(active)} chunked sessions go on to level {rounds + 1}")
    for st in states:
        if st.summary is not None and st.final is not None:
            outcome.summarised.append(
                Summarised(st.session, st.final, st.summary, st.language, st.parts)
            )
            if st.parts:
                outcome.chunked_sessions += 1
                outcome.levels = max(outcome.levels, max(p.level for p in st.parts) + 1)
        else:
            outcome.failed[st.session.correlation_id] = st.failed or "not answered"
    outcome.batch = CompletionBatch.merged(batches)
    return outcome


def _why(batch: CompletionBatch, request: Request) -> str:
    if request.key in batch.unfit:
        return batch.unfit[request.key]
    if batch.dispatch is not None:
        final = batch.dispatch.final.get(request.key)
        if final is not None and final.error:
            return final.error
        if request.key in batch.dispatch.undone:
            return batch.dispatch.stop_reason or "the batch stopped before it was sent"
    return "no answer"


INSERT_PARTS_SQL = """
    INSERT INTO session_summary_parts (
        summary_key, correlation_id, level, part_index, request_key, first_item, last_item
    ) VALUES (?, ?, ?, ?, ?, ?, ?)
    ON CONFLICT DO NOTHING
    """


def part_rows(summarised: list[Summarised]) -> list[tuple[Any, ...]]:
    return [
        (s.request.key, s.session.correlation_id, p.level, p.index, p.request_key, p.first, p.last)
        for s in summarised
        for p in s.parts
    ]


def write_summary_parts(db_path: str | Path, rows: list[tuple[Any, ...]]) -> int:
    return storage.insert_new_rows(db_path, INSERT_PARTS_SQL, rows)


__all__ = [
    "PART_TASK",
    "PartRecord",
    "Summarised",
    "SummaryOutcome",
    "part_messages",
    "part_rows",
    "reduce_messages",
    "summarise_sessions",
    "write_summary_parts",
]

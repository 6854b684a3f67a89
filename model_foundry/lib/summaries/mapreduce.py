"""Summaries of sessions of any length: one prompt when it fits, map-reduce when it does not.

A session whose transcript fits the summary role's context window (see
``lib/slots/context.py``) is summarised by one request. A longer one is split into parts
that each fit (``chunks.py``); each part is summarised ("map"), then the part summaries are
summarised into one ("reduce"). When even the part summaries do not fit one prompt, they are
grouped and reduced again, level by level, until one prompt holds them.

Every part is an ordinary request of the run (``lib/llm``), keyed by its text: a rerun after
new messages arrive answers the unchanged parts from the store and sends only what changed.
``session_summary_parts`` records which requests made up each summary.

A session none of whose parts can be answered stays pending with a reason; a prompt that can
never fit any slot is recorded as a failed request (``PromptTooLong``) and not sent.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from model_foundry.lib.gates.script import detect_language
from model_foundry.lib.llm import Body, CompletionBatch, LlmRun, Planned, Request
from model_foundry.lib.llm.store import Completion
from model_foundry.lib.slots.fit import fits_window, needed_tokens, role_window
from model_foundry.lib.summaries.chunks import Chunk, Piece, PieceTooLong, pack
from model_foundry.lib.summaries.pending import SessionToSummarise
from model_foundry.lib.summaries.prompts import (
    part_messages,
    reduce_messages,
    summary_messages,
    transcript,
)

SUMMARY_ROLE = "kindergarten"
SUMMARY_TASK = "session_summary"
PART_TASK = "session_summary_part"
LABEL = "session summaries"
# Tokens left unused in every window: template tokens the per-piece counts cannot see.
SAFETY_MARGIN = 8
MAX_LEVELS = 8


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
    final: Planned | None = None
    round_parts: list[tuple[Chunk, Planned]] = field(default_factory=list)
    summary: Completion | None = None
    failed: str | None = None


@dataclass
class Summarised:
    session: SessionToSummarise
    request: Planned
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

    def __init__(self, run: LlmRun, role: str) -> None:
        self.run = run
        self.role = role
        self.thinking = run.slot_file.thinking_for_role(role)
        found = role_window(run.book, run.slot_file, role, run.profile)
        self.slot, self.window = found if found else (None, None)

    def request(
        self, task: str, messages: list[dict[str, str]], corr: str, family: str | None = None
    ) -> Planned:
        return self.run.plan(
            Request(task, self.role, Body(messages=messages), correlation_id=corr, family=family)
        )

    def _fits(self, messages: list[dict[str, str]]) -> bool:
        if self.slot is None or self.window is None:
            return True
        ok, _, _ = fits_window(
            self.run.book, self.slot, self.window, Body(messages=messages), thinking=self.thinking
        )
        return ok

    def _count(self, text: str) -> int:
        assert self.slot is not None
        return self.run.book.count_text(self.slot, text).tokens

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
            # The parts of one level share their instructions and the session's name first.
            messages = part_messages(corr, chunk, s.level, s.language)
            req = self.request(PART_TASK, messages, corr, family=f"parts:{corr}:{s.level}")
            s.round_parts.append((chunk, req))

    def _budget_for(self, messages: list[dict[str, str]]) -> int:
        """Tokens left in the window after ``messages`` and the answer's reserve."""
        assert self.slot is not None and self.window is not None
        prompt, reserve = needed_tokens(
            self.run.book, self.slot, Body(messages=messages), thinking=self.thinking
        )
        return self.window - prompt - reserve


def _settle(st: _Session, batch: CompletionBatch) -> bool:
    """Take this round's answers into ``st``; True when it goes on to the next level."""
    if st.failed:
        return False
    if st.final is not None:
        done = batch.results.get(st.final.key)
        if done is None:
            st.failed = batch.why(st.final.key)
        else:
            st.summary = done
        return False
    answers = [batch.results.get(req.key) for _, req in st.round_parts]
    missing = [req for (_, req), a in zip(st.round_parts, answers, strict=True) if a is None]
    if missing:
        st.failed = (
            f"{len(missing)} of {len(st.round_parts)} parts at level {st.level} failed: "
            f"{batch.why(missing[0].key)}"
        )
        return False
    next_pieces = []
    for i, ((chunk, req), answer) in enumerate(zip(st.round_parts, answers, strict=True), start=1):
        assert answer is not None
        st.parts.append(PartRecord(st.level, i, req.key, chunk.first, chunk.last))
        span = "messages" if st.level == 1 else "parts"
        label = f"Part {i} ({span} {chunk.first}-{chunk.last})"
        next_pieces.append(Piece(i, f"{label}: {' '.join(answer.content.split())}"))
    st.pieces = next_pieces
    st.level += 1
    return True


def summarise_sessions(
    run: LlmRun,
    sessions: list[SessionToSummarise],
    *,
    role: str,
    max_messages: int,
    max_chars: int,
) -> SummaryOutcome:
    """Summarise ``sessions``, splitting those too long for the role's context window."""
    planner = _Planner(run, role)
    states = []
    for s in sessions:
        lines = transcript(s.lines, max_messages=max_messages, max_chars=max_chars).split("\n")
        pieces = [Piece(i + 1, line) for i, line in enumerate(lines) if line]
        states.append(_Session(s, detect_language("\n".join(lines)), pieces))
    outcome = SummaryOutcome([], {}, CompletionBatch(0), windows=run.windows())
    batches: list[CompletionBatch] = []
    active = states
    while active:
        for st in active:
            planner.plan(st)
        requests = [st.final for st in active if st.final is not None]
        requests += [req for st in active for _, req in st.round_parts]
        if not requests:
            break
        batch = run.ask(requests, LABEL)
        batches.append(batch)
        outcome.part_requests += sum(len(st.round_parts) for st in active if not st.failed)
        active = [st for st in active if _settle(st, batch)]
        if active:
            run.log.info(
                f"{LABEL}: {len(active)} chunked sessions go on to level {len(batches) + 1}"
            )
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


__all__ = [
    "PART_TASK",
    "SUMMARY_ROLE",
    "SUMMARY_TASK",
    "PartRecord",
    "Summarised",
    "SummaryOutcome",
    "summarise_sessions",
]

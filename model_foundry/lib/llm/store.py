"""The completions store: every attempt at every request, one ``llm_completions`` row each.

A rerun looks request keys up first: keys that already succeeded are answered from here,
everything else (never tried, or only failed) goes to the slots. Each attempt is written in
its own short transaction from the dispatcher's ``on_attempt`` callback, so a run killed
midway loses only the requests that were in flight, and no DuckDB connection is held while a
slot streams an answer.
"""

from __future__ import annotations

import uuid
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from model_foundry.lib import storage
from model_foundry.lib.llm.request import Planned, canonical
from model_foundry.lib.slots.attempt import Attempt
from model_foundry.lib.tables.base import fetch
from model_foundry.lib.tables.completions import LLM_COMPLETIONS, CompletionRow, key_prefix
from model_foundry.lib.telemetry import Telemetry


@dataclass(frozen=True)
class Completion:
    """The successful answer to a request, from this run or an earlier one."""

    request_key: str
    content: str
    reasoning: str | None
    slot: str
    model: str
    prompt_tokens: int | None
    completion_tokens: int | None
    latency_s: float | None
    gen_tps: float | None
    finish_reason: str | None
    reused: bool = False

    @classmethod
    def of(cls, attempt: Attempt) -> Completion:
        """This run's successful attempt as an answer."""
        return cls(
            request_key=attempt.key,
            content=attempt.content or "",
            reasoning=attempt.reasoning,
            slot=attempt.slot,
            model=attempt.model,
            prompt_tokens=attempt.prompt_tokens,
            completion_tokens=attempt.completion_tokens,
            latency_s=attempt.latency_s,
            gen_tps=attempt.gen_tps,
            finish_reason=attempt.finish_reason,
        )


def completion_event(attempt: Attempt, request: Planned) -> dict[str, Any]:
    """The ``model_foundry.completion`` telemetry fields of one attempt: figures, no text."""
    return {
        "correlation_id": request.request.correlation_id,
        "task": attempt.task,
        "role": attempt.role,
        "slot": attempt.slot,
        "model": attempt.model,
        "runtime": attempt.runtime,
        "status": attempt.status,
        "attempt": attempt.attempt,
        "will_retry": attempt.will_retry,
        "error_class": attempt.error_class,
        "http_status": attempt.http_status,
        "finish_reason": attempt.finish_reason,
        "prompt_tokens": attempt.prompt_tokens,
        "generation_tokens": attempt.completion_tokens,
        "ttft_s": attempt.ttft_s,
        "latency_s": attempt.latency_s,
        "prompt_tps": attempt.prompt_tps,
        "gen_tps": attempt.gen_tps,
        "request_key": request.key,
    }


# No index on request_key (it would grow in memory with the table). Two reads in one
# transaction: the attempts whose 8-byte key_prefix matches (DuckDB scans that column of
# every attempt, and request_key only where it matches), then the answers of those whose
# request_key is asked, by rowid, so only their rows' blocks of the long columns are read
# (docs/benchmarks.md measures it).
CANDIDATES_SQL = """
SELECT rowid AS row_id, request_key FROM llm_completions
WHERE key_prefix IN (SELECT unnest(?::BIGINT[])) AND status = 'ok'
"""

# Newest first, so the first answer of each key is its latest. Attempts stored in one commit
# share its recorded_at: the later attempt (a retry) is the newer.
FINISHED_SQL = """
SELECT request_key, coalesce(content, '') AS content, reasoning, slot, model, prompt_tokens,
       completion_tokens, latency_s, gen_tps, finish_reason
FROM llm_completions
WHERE rowid IN (SELECT unnest(?::BIGINT[]))
ORDER BY recorded_at DESC, attempt DESC
"""

# What SQL's [:space:] holds: a stored answer of only these is blank.
_SPACE = " \t\n\v\f\r"


def _latest_answers(found: Iterable[Completion], keys: Sequence[str]) -> dict[str, Completion]:
    """The first (newest) answer of each of ``keys`` that is not blank (rows of other keys
    with the same prefix are left out). Blank answers stored as ok before they became
    EmptyAnswer errors are not answers: such a request is asked again."""
    wanted = set(keys)
    answers: dict[str, Completion] = {}
    for c in found:
        if c.request_key in wanted and c.request_key not in answers and c.content.strip(_SPACE):
            answers[c.request_key] = c
    return answers


LAST_ERRORS_SQL = """
SELECT request_key, error_class, error FROM llm_completions
WHERE key_prefix IN (SELECT unnest(?::BIGINT[])) AND request_key IN (SELECT unnest(?::VARCHAR[]))
QUALIFY row_number() OVER (PARTITION BY request_key ORDER BY recorded_at DESC, attempt DESC) = 1
"""


class CompletionStore:
    """Reads and writes ``llm_completions`` in ``db_path``, one short transaction at a time."""

    def __init__(
        self,
        db_path: str | Path,
        *,
        run_id: str | None = None,
        telemetry: Telemetry | None = None,
    ) -> None:
        self.db_path = Path(db_path)
        self.run_id = run_id
        self.telemetry = telemetry or Telemetry.disabled()

    def finished(self, keys: Iterable[str]) -> dict[str, Completion]:
        """The latest successful attempt of each key that has one."""
        keys = list(dict.fromkeys(keys))
        if not keys:
            return {}
        wanted = set(keys)
        answers: list[Completion] = []
        with storage.connect(self.db_path) as con, storage.snapshot(con):
            found = con.execute(CANDIDATES_SQL, [[key_prefix(k) for k in keys]]).fetchall()
            rows = [row_id for row_id, key in found if key in wanted]
            if rows:
                answers = fetch(con, lambda **r: Completion(**r, reused=True), FINISHED_SQL, [rows])
        return _latest_answers(answers, keys)

    def last_errors(self, keys: Sequence[str]) -> dict[str, tuple[str | None, str | None]]:
        """(error class, error) of each key's latest attempt, where it failed."""
        if not keys:
            return {}
        with storage.connect(self.db_path) as con:
            prefixes = [key_prefix(k) for k in keys]
            rows = con.execute(LAST_ERRORS_SQL, [prefixes, list(keys)]).fetchall()
        return {k: (cls, err) for k, cls, err in rows if cls is not None}

    def record(self, attempt: Attempt, request: Planned) -> None:
        """Write one attempt in its own transaction."""
        self.record_many([(attempt, request)])

    def record_many(self, attempts: Sequence[tuple[Attempt, Planned]]) -> None:
        """Write attempts in one transaction (called by the dispatcher, off its loop, with the
        attempts that settled while the last write waited for the file)."""
        if not attempts:
            return
        rows = [_row(a, r, self.run_id) for a, r in attempts]

        def insert(con: Any) -> None:
            # One statement through Arrow: a row at a time cost about 1 ms of CPU a row.
            LLM_COMPLETIONS.insert(con, rows)

        storage.run_in_transaction(self.db_path, insert)
        for attempt, request in attempts:
            self.telemetry.emit("model_foundry.completion", completion_event(attempt, request))


def _row(attempt: Attempt, request: Planned, run_id: str | None) -> CompletionRow:
    return CompletionRow(
        attempt_id=str(uuid.uuid4()),
        request_key=request.key,
        task=attempt.task,
        role=attempt.role,
        slot=attempt.slot,
        model=attempt.model,
        runtime=attempt.runtime,
        status=attempt.status,
        attempt=attempt.attempt,
        will_retry=attempt.will_retry,
        error_class=attempt.error_class,
        error=attempt.error,
        http_status=attempt.http_status,
        prompt_tokens=attempt.prompt_tokens,
        completion_tokens=attempt.completion_tokens,
        latency_s=attempt.latency_s,
        ttft_s=attempt.ttft_s,
        prompt_tps=attempt.prompt_tps,
        gen_tps=attempt.gen_tps,
        finish_reason=attempt.finish_reason,
        content=attempt.content,
        reasoning=attempt.reasoning,
        planned_model=request.model,
        params=canonical(request.output_params),
        request=request.request_json(),
        run_id=run_id,
        started_at=attempt.started_at,
        key_prefix=key_prefix(request.key),
        cached_prompt_tokens=attempt.cached_prompt_tokens,
    )


__all__ = ["Completion", "CompletionStore", "completion_event"]

"""Where dataset prompts come from, and the same prompt asked once.

Prompt sources are JSONL and Parquet files under ``data/prompts/`` (a row has ``prompt`` or
``messages``, optionally ``id`` and ``system``) and prompts derived from the inbox (the
opening user message of each chat session that began since the dataset's last finished
version, read by commit position). The same prompt (same messages) from two sources
or under two ids is asked once.
"""

import hashlib
import json
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from typing import Any

from model_foundry.lib import storage
from model_foundry.lib.events import CHAT_PERSIST
from model_foundry.lib.hygiene.dedup import find_duplicates
from model_foundry.lib.inbox import commit_spans
from model_foundry.lib.inbox.dedupe_window import merged_ranges
from model_foundry.lib.inbox.typed import STEP as TYPED_STEP
from model_foundry.lib.tables.base import fetch


@dataclass(frozen=True)
class PromptRecord:
    prompt_id: str
    source: str
    messages: list[dict[str, str]]

    @property
    def prompt_text(self) -> str:
        users = [m["content"] for m in self.messages if m.get("role") == "user"]
        return users[-1] if users else ""


def _prompt_id(messages: list[dict[str, str]]) -> str:
    body = json.dumps(messages, sort_keys=True, ensure_ascii=False)
    return hashlib.sha256(body.encode("utf-8")).hexdigest()[:16]


def prompt_from_row(row: dict[str, Any], source: str) -> PromptRecord:
    """One prompt source row -> a ``PromptRecord``; ``ValueError`` says what is wrong."""
    messages = row.get("messages")
    if isinstance(messages, str):
        messages = json.loads(messages)
    if messages is None:
        prompt = row.get("prompt")
        if not isinstance(prompt, str) or not prompt.strip():
            raise ValueError("needs a non-empty 'prompt' string or a 'messages' list")
        messages = [{"role": "user", "content": prompt}]
        if isinstance(row.get("system"), str) and row["system"].strip():
            messages.insert(0, {"role": "system", "content": row["system"]})
    if not isinstance(messages, list) or not messages:
        raise ValueError("'messages' must be a non-empty list")
    clean = []
    for m in messages:
        if not isinstance(m, dict) or not isinstance(m.get("role"), str):
            raise ValueError("each message needs a 'role' string")
        clean.append({"role": m["role"], "content": str(m.get("content") or "")})
    if not any(m["role"] == "user" for m in clean):
        raise ValueError("needs at least one user message")
    raw_id = row.get("id")
    prompt_id = str(raw_id) if raw_id not in (None, "") else _prompt_id(clean)
    return PromptRecord(prompt_id=prompt_id, source=source, messages=clean)


def parse_jsonl(text: str, source: str) -> tuple[list[PromptRecord], list[str]]:
    """Prompts and readable problems (``file:line: reason``) from a JSONL text."""
    prompts, problems = [], []
    for n, line in enumerate(text.splitlines(), start=1):
        if not line.strip():
            continue
        try:
            row = json.loads(line)
            if not isinstance(row, dict):
                raise ValueError("must be a JSON object")
            prompts.append(prompt_from_row(row, source))
        except ValueError as exc:
            problems.append(f"{source}:{n}: {exc}")
    return prompts, problems


def load_prompt_files(prompt_dir: Path) -> tuple[list[PromptRecord], list[str]]:
    prompts: list[PromptRecord] = []
    problems: list[str] = []
    if not prompt_dir.is_dir():
        return prompts, problems
    for path in sorted(prompt_dir.glob("*.jsonl")):
        found, bad = parse_jsonl(path.read_text(encoding="utf-8"), f"file:{path.name}")
        prompts += found
        problems += bad
    for path in sorted(prompt_dir.glob("*.parquet")):
        import pyarrow.parquet as pq  # only for a Parquet prompt file

        for n, row in enumerate(pq.read_table(path).to_pylist(), start=1):
            try:
                prompts.append(prompt_from_row(row, f"file:{path.name}"))
            except ValueError as exc:
                problems.append(f"file:{path.name}:{n}: {exc}")
    return prompts, problems


# Each dataset reads the inbox by its own position (``downstream_positions``), so a version
# asks the sessions that began since the last finished one, and nothing is read twice.
CHAT_PROMPTS_STEP = "dataset_chat_prompts"


def chat_prompts_step(dataset: str) -> str:
    """The ``downstream_positions`` step of ``dataset``'s chat session prompts."""
    return f"{CHAT_PROMPTS_STEP}:{dataset}"


# The sessions whose first chat event is in the span, oldest first: the span's chat events
# (their commits' row groups only), each session's earliest, against its chat_sessions row
# (one per session; rows are rewritten as sessions grow, so the ones untouched since the
# span's first event are skipped by the min-max index on last_at).
NEW_SESSIONS_SQL = f"""
WITH span AS (
    SELECT i.correlation_id, min(i.commit_seq) AS first_commit, min(i.occurred_at) AS first_at
    FROM pipeline_event_inbox i
    WHERE {commit_spans.IN_SPAN} AND i.subject = '{CHAT_PERSIST}'
    GROUP BY i.correlation_id
)
SELECT s.correlation_id, span.first_commit, s.first_at, s.last_at
FROM span JOIN chat_sessions s USING (correlation_id)
WHERE s.last_at >= (SELECT min(first_at) FROM span) AND s.first_at >= span.first_at
ORDER BY span.first_commit, s.first_at, s.correlation_id
"""


def _opening_messages_sql(ranges: int) -> str:
    """Each session's first non-empty user message, read only in the sessions' time ranges
    (chat_messages is appended in about ``occurred_at`` order)."""
    within = " OR ".join("occurred_at BETWEEN ? AND ?" for _ in range(ranges)) or "false"
    return f"""
SELECT correlation_id, content
FROM chat_messages
WHERE ({within}) AND correlation_id IN (SELECT unnest(?::VARCHAR[]))
  AND role = 'user' AND coalesce(trim(content), '') <> ''
QUALIFY row_number() OVER (
    PARTITION BY correlation_id ORDER BY occurred_at, event_id, message_index
) = 1
ORDER BY correlation_id
"""


@dataclass(frozen=True)
class _NewSession:
    correlation_id: str
    first_commit: int
    first_at: datetime
    last_at: datetime


@dataclass(frozen=True)
class ChatPrompts:
    """The opening prompts of the sessions that began in ``span``; :func:`advance_chat_prompts`
    records the span as read once the version that asked them is finished."""

    prompts: list[PromptRecord]
    span: commit_spans.Span


def _within_limit(
    found: list[_NewSession], limit: int, span: commit_spans.Span
) -> commit_spans.Span:
    """The span cut after the commit of the ``limit``-th new session, so the sessions past
    it wait for the next version; one commit that begins more sessions than ``limit`` is read
    whole and only its first ``limit`` are asked."""
    if len(found) <= limit:
        return span
    last = found[max(limit, 1) - 1].first_commit
    return commit_spans.Span(span.step, span.after, last)


def read_chat_session_prompts(db_path: str | Path, limit: int, dataset: str) -> ChatPrompts:
    """The opening user message of each chat session that began after ``dataset``'s
    position, at most ``limit``, read only as far as the typed tables are (chat_sessions
    must hold every session of the span)."""
    step = chat_prompts_step(dataset)
    with storage.connect(db_path) as con, storage.snapshot(con):
        upto = min(commit_spans.last_commit_seq(con), commit_spans.position(con, TYPED_STEP))
        span = commit_spans.Span(step, commit_spans.position(con, step), upto)
        found = [] if span.empty else fetch(con, _NewSession, NEW_SESSIONS_SQL, span.params)
        span = _within_limit(found, limit, span)
        chosen = [f for f in found if f.first_commit <= span.upto][:limit]
        ranges = merged_ranges([(f.first_at, f.last_at) for f in chosen])
        params = [*(t for r in ranges for t in r), [f.correlation_id for f in chosen]]
        rows = con.execute(_opening_messages_sql(len(ranges)), params).fetchall()
    prompts = [
        PromptRecord(
            prompt_id=f"chat:{corr}",
            source="inbox:chat_sessions",
            messages=[{"role": "user", "content": content}],
        )
        for corr, content in rows
    ]
    return ChatPrompts(prompts, span)


def advance_chat_prompts(db_path: str | Path, span: commit_spans.Span) -> None:
    """Record ``span`` as read: the next version starts after it. Called once the version
    that asked its prompts is finished, so a version resumed after failures reads them
    again (their answers are reused, lib/llm/store.py)."""
    if span.empty:
        return
    storage.run_in_transaction(db_path, lambda con: commit_spans.advance(con, span))


@dataclass(frozen=True)
class DuplicatePrompt:
    """A prompt left out because an earlier one asks exactly the same (same messages)."""

    dropped: PromptRecord
    kept: PromptRecord


def dedupe_prompts(
    prompts: list[PromptRecord],
) -> tuple[list[PromptRecord], list[DuplicatePrompt]]:
    """The distinct prompts, first one kept, and the duplicates dropped (the same messages under
    another id or from another source would be the same request, so one sample, not two)."""
    kept: dict[str, PromptRecord] = {}
    dropped: list[DuplicatePrompt] = []
    for p in prompts:
        identity = json.dumps(p.messages, sort_keys=True, ensure_ascii=False)
        if identity in kept:
            dropped.append(DuplicatePrompt(dropped=p, kept=kept[identity]))
        else:
            kept[identity] = p
    return list(kept.values()), dropped


def near_duplicate_prompts(
    prompts: list[PromptRecord],
) -> tuple[list[PromptRecord], list[DuplicatePrompt]]:
    """The prompts left once near duplicates (MinHash LSH, verified Jaccard; see
    ``lib/hygiene/dedup.py``) are asked once: the first of each cluster is kept, so every
    role's answers to it are one group, and a near duplicate is never asked at all."""
    if len(prompts) < 2:
        return prompts, []
    texts = ["\n".join(m["content"] for m in p.messages) for p in prompts]
    found = find_duplicates(texts)
    kept = [p for p, keep in zip(prompts, found.keep, strict=True) if keep]
    dropped = [
        DuplicatePrompt(dropped=p, kept=prompts[int(c)])
        for p, c, keep in zip(prompts, found.cluster, found.keep, strict=True)
        if not keep
    ]
    return kept, dropped


def duplicates_line(
    duplicates: list[DuplicatePrompt], shown: int = 3, what: str = "the same messages as"
) -> str:
    """One log line saying which duplicate prompts were dropped."""
    examples = ", ".join(
        f"{d.dropped.prompt_id} ({d.dropped.source}) = {d.kept.prompt_id} ({d.kept.source})"
        for d in duplicates[:shown]
    )
    more = f" and {len(duplicates) - shown} more" if len(duplicates) > shown else ""
    return (
        f"dropped {len(duplicates)} duplicate prompt(s), {what} an earlier prompt: {examples}{more}"
    )


__all__ = [
    "CHAT_PROMPTS_STEP",
    "ChatPrompts",
    "DuplicatePrompt",
    "PromptRecord",
    "advance_chat_prompts",
    "chat_prompts_step",
    "dedupe_prompts",
    "duplicates_line",
    "load_prompt_files",
    "near_duplicate_prompts",
    "parse_jsonl",
    "prompt_from_row",
    "read_chat_session_prompts",
]

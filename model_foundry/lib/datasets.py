"""Dataset collection: prompt sources -> the profile's roles -> ``dataset_samples`` -> export.

Prompt sources are JSONL and Parquet files under ``data/prompts/`` (a row has ``prompt`` or
``messages``, optionally ``id`` and ``system``) and prompts derived from the inbox (the
opening user message of each chat session). Each prompt goes to every chat role of the active
profile, ``samples_per_prompt`` times (sample ``i`` is sent with ``seed: i``), through the
completions store, so a run killed midway and run again sends each request once.

The same prompt (same messages) from two sources or under two ids is asked once. The export
writes ``data/datasets/<name>/<version>/``: ``samples.parquet`` (every row, with the
``is_empty`` / ``is_truncated`` flags; ``is_empty`` stays false now that an empty answer is a
failed request), ``chat.jsonl`` (usable rows in chat-messages form for fine-tuning: not empty,
not truncated) and ``manifest.json``.

``model-foundry dataset collect --name NAME`` runs the collection outside Dagster's daemon.
"""

import hashlib
import json
import re
from collections.abc import Mapping
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pyarrow.parquet as pq

from model_foundry.lib import storage
from model_foundry.lib.completions import Request, plan_request
from model_foundry.lib.slots.config import SlotFile

DEFAULT_CRON = "0 3 * * *"

# ---------------------------------------------------------------------------------------------
# Pure: prompt records, fan-out, flags.


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


def is_truncated(finish_reason: str | None) -> bool:
    return finish_reason == "length"


def dataset_task(name: str) -> str:
    return f"dataset:{name}"


def default_version(now: datetime | None = None) -> str:
    """One version per UTC day, so a nightly run that is resumed the same day continues it."""
    return (now or datetime.now(UTC)).strftime("%Y%m%d")


def chat_roles(slot_file: SlotFile, profile: str | None = None) -> list[str]:
    """The active profile's chat slots, as roles: translators answer in another format."""
    return [s.name for s in slot_file.live_slots(profile) if s.api == "chat"]


def chat_record(row: dict[str, Any]) -> dict[str, Any]:
    """A sample in chat-messages form, the shape fine-tuning tools read."""
    messages = json.loads(row["messages"]) if isinstance(row["messages"], str) else row["messages"]
    return {
        "messages": [*messages, {"role": "assistant", "content": row["response"]}],
        "metadata": {
            k: row[k]
            for k in ("dataset", "version", "prompt_id", "source", "role", "slot", "model")
        },
    }


# ---------------------------------------------------------------------------------------------
# I/O: sources, samples, export.


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
        for n, row in enumerate(pq.read_table(path).to_pylist(), start=1):
            try:
                prompts.append(prompt_from_row(row, f"file:{path.name}"))
            except ValueError as exc:
                problems.append(f"file:{path.name}:{n}: {exc}")
    return prompts, problems


CHAT_SESSION_PROMPTS_SQL = """
SELECT correlation_id, content
FROM chat_messages
WHERE role = 'user' AND coalesce(trim(content), '') <> ''
QUALIFY row_number() OVER (
    PARTITION BY correlation_id ORDER BY occurred_at, event_id, message_index
) = 1
ORDER BY correlation_id
LIMIT ?
"""


def load_chat_session_prompts(db_path: str | Path, limit: int) -> list[PromptRecord]:
    with storage.connect(db_path) as con:
        rows = con.execute(CHAT_SESSION_PROMPTS_SQL, [limit]).fetchall()
    return [
        PromptRecord(
            prompt_id=f"chat:{corr}",
            source="inbox:chat_sessions",
            messages=[{"role": "user", "content": content}],
        )
        for corr, content in rows
    ]


INSERT_SAMPLES_SQL = """
    INSERT INTO dataset_samples (
        dataset, version, request_key, prompt_id, source, role, sample_index, messages,
        prompt, response, reasoning, slot, model, params, prompt_tokens,
        completion_tokens, finish_reason, is_empty, is_truncated, run_id
    ) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
    ON CONFLICT DO NOTHING
    """


def write_samples(db_path: str | Path, rows: list[tuple[Any, ...]]) -> int:
    return storage.insert_new_rows(db_path, INSERT_SAMPLES_SQL, rows)


@dataclass(frozen=True)
class ExportResult:
    path: Path
    rows: int
    jsonl_rows: int
    parquet_path: Path
    jsonl_path: Path


# A dataset name or version becomes a folder under data/datasets/: one path segment of
# letters, digits, dot, dash and underscore, not starting with a dot (no "..", no "/").
SAFE_NAME = re.compile(r"^[A-Za-z0-9_][A-Za-z0-9._-]{0,99}$")


class UnsafeNameError(ValueError):
    """A dataset name or version that could leave the export folder."""


def check_name(value: str, what: str) -> str:
    if not SAFE_NAME.fullmatch(value or ""):
        raise UnsafeNameError(
            f"dataset {what} {value!r} is not allowed: use letters, digits, '.', '-' and '_' "
            "(at most 100, not starting with '.'), so the export stays inside its folder"
        )
    return value


def export_dir(out_root: Path, name: str, version: str) -> Path:
    """``<out_root>/<name>/<version>``, refusing anything that resolves outside ``out_root``."""
    out = (out_root / check_name(name, "name") / check_name(version, "version")).resolve()
    if not out.is_relative_to(out_root.resolve()):
        raise UnsafeNameError(f"dataset export {out} would leave {out_root}")
    return out


def export_dataset(db_path: str | Path, name: str, version: str, out_root: Path) -> ExportResult:
    """Write ``<out_root>/<name>/<version>/`` from ``dataset_samples``; files appear atomically."""
    out = export_dir(out_root, name, version)
    with storage.connect(db_path) as con:
        table = con.sql(
            """
            SELECT dataset, version, request_key, prompt_id, source, role, sample_index,
                   messages::VARCHAR AS messages, prompt, response, reasoning, slot, model,
                   params::VARCHAR AS params, prompt_tokens, completion_tokens, finish_reason,
                   is_empty, is_truncated, created_at
            FROM dataset_samples WHERE dataset = ? AND version = ?
            ORDER BY prompt_id, role, sample_index, request_key
            """,
            params=[name, version],
        ).to_arrow_table()
    out.mkdir(parents=True, exist_ok=True)
    parquet_path = out / "samples.parquet"
    jsonl_path = out / "chat.jsonl"
    tmp = parquet_path.with_suffix(".parquet.tmp")
    pq.write_table(table, tmp)
    tmp.replace(parquet_path)
    usable = [r for r in table.to_pylist() if not r["is_empty"] and not r["is_truncated"]]
    tmp = jsonl_path.with_suffix(".jsonl.tmp")
    with tmp.open("w", encoding="utf-8") as fh:
        for row in usable:
            fh.write(json.dumps(chat_record(row), ensure_ascii=False) + "\n")
    tmp.replace(jsonl_path)
    manifest = {
        "dataset": name,
        "version": version,
        "rows": table.num_rows,
        "jsonl_rows": len(usable),
        "files": {"parquet": parquet_path.name, "jsonl": jsonl_path.name},
        "exported_at": datetime.now(UTC).isoformat(),
    }
    (out / "manifest.json").write_text(json.dumps(manifest, indent=2), encoding="utf-8")

    def record(con: Any) -> None:
        con.execute(
            "INSERT OR REPLACE INTO dataset_exports (dataset, version, path, rows, jsonl_rows) "
            "VALUES (?, ?, ?, ?, ?)",
            [name, version, str(out), table.num_rows, len(usable)],
        )

    storage.run_in_transaction(db_path, record)
    return ExportResult(out, table.num_rows, len(usable), parquet_path, jsonl_path)


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


def duplicates_line(duplicates: list[DuplicatePrompt], shown: int = 3) -> str:
    """One log line saying which duplicate prompts were dropped."""
    examples = ", ".join(
        f"{d.dropped.prompt_id} ({d.dropped.source}) = {d.kept.prompt_id} ({d.kept.source})"
        for d in duplicates[:shown]
    )
    more = f" and {len(duplicates) - shown} more" if len(duplicates) > shown else ""
    return (
        f"dropped {len(duplicates)} duplicate prompt(s), the same messages as an earlier "
        f"prompt: {examples}{more}"
    )


def collection_line(meta: Mapping[str, Any]) -> str:
    """A collection's metadata in one line: samples, distinct prompts, duplicates, per role."""
    by_role = meta.get("samples_by_role") or {}
    roles = ", ".join(f"{role}: {n}" for role, n in by_role.items()) or "none answered"
    return (
        f"{meta.get('samples_written', 0)} samples written from {meta.get('prompts', 0)} "
        f"distinct prompts ({meta.get('duplicate_prompts_dropped', 0)} duplicates dropped) x "
        f"{len(meta.get('roles') or [])} roles ({roles}); {meta.get('failed', 0)} requests "
        f"failed, {meta.get('truncated', 0)} truncated"
    )


def plan_samples(
    prompts: list[PromptRecord],
    slot_file: SlotFile,
    *,
    name: str,
    roles: list[str],
    samples: int,
    profile: str | None,
    params: dict[str, Any],
) -> list[tuple[PromptRecord, str, int, Request]]:
    planned = []
    seen: set[str] = set()
    for p in prompts:
        for role in roles:
            for i in range(samples):
                request = plan_request(
                    slot_file,
                    dataset_task(name),
                    role,
                    profile=profile,
                    messages=p.messages,
                    params={**params, "seed": i},
                )
                # The same request twice (a duplicate prompt not deduped before) is one sample.
                if request.key in seen:
                    continue
                seen.add(request.key)
                planned.append((p, role, i, request))
    return planned


__all__ = [
    "DuplicatePrompt",
    "ExportResult",
    "PromptRecord",
    "UnsafeNameError",
    "chat_record",
    "chat_roles",
    "check_name",
    "collection_line",
    "dedupe_prompts",
    "default_version",
    "duplicates_line",
    "export_dataset",
    "export_dir",
    "load_prompt_files",
    "parse_jsonl",
    "prompt_from_row",
]

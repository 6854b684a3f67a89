"""Dataset collection: prompt sources -> the profile's roles -> ``dataset_samples`` -> export.

Prompt sources are JSONL and Parquet files under ``data/prompts/`` (a row has ``prompt`` or
``messages``, optionally ``id`` and ``system``) and prompts derived from the inbox (the
opening user message of each chat session). Each prompt goes to every chat role of the active
profile, ``samples_per_prompt`` times (sample ``i`` is sent with ``seed: i``), through the
completions store, so a run killed midway and run again sends each request once.

The export writes ``data/datasets/<name>/<version>/``: ``samples.parquet`` (every row, with
the ``is_empty`` / ``is_truncated`` flags), ``chat.jsonl`` (usable rows in chat-messages form
for fine-tuning: not empty, not truncated) and ``manifest.json``.

``python -m model_foundry.datasets --name NAME`` runs the collection outside Dagster's daemon.
"""

# No `from __future__ import annotations`: Dagster reads the config and resource types of
# decorated functions from their live annotations.

import argparse
import hashlib
import json
import os
import sys
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import dagster as dg
import pyarrow.parquet as pq
from pydantic import Field

from model_foundry import settings, storage
from model_foundry.completions import (
    CompletionStore,
    Request,
    SlotsResource,
    plan_request,
    progress_logger,
)
from model_foundry.pipeline_schema import PIPELINE_SCHEMA
from model_foundry.resources import FoundryDuckDB
from model_foundry.slot_config import SlotFile

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
    with storage.connect(db_path, schema=PIPELINE_SCHEMA) as con:
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
    return storage.insert_new_rows(db_path, INSERT_SAMPLES_SQL, rows, schema=PIPELINE_SCHEMA)


@dataclass(frozen=True)
class ExportResult:
    path: Path
    rows: int
    jsonl_rows: int
    parquet_path: Path
    jsonl_path: Path


def export_dataset(db_path: str | Path, name: str, version: str, out_root: Path) -> ExportResult:
    """Write ``<out_root>/<name>/<version>/`` from ``dataset_samples``; files appear atomically."""
    with storage.connect(db_path, schema=PIPELINE_SCHEMA) as con:
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
    out = out_root / name / version
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

    storage.run_in_transaction(db_path, record, schema=PIPELINE_SCHEMA)
    return ExportResult(out, table.num_rows, len(usable), parquet_path, jsonl_path)


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
                # The same prompt in two sources is one request, one sample.
                if request.key in seen:
                    continue
                seen.add(request.key)
                planned.append((p, role, i, request))
    return planned


# ---------------------------------------------------------------------------------------------
# The asset, job and schedule.


class DatasetCollectionConfig(dg.Config):
    name: str = Field(default="foundry", description="Dataset name (a folder under datasets/).")
    version: str | None = Field(
        default=None, description="Dataset version; unset: today's UTC date (YYYYMMDD)."
    )
    prompt_dir: str | None = Field(
        default=None, description="JSONL/Parquet prompt files; unset: <data dir>/prompts."
    )
    include_chat_sessions: bool = Field(
        default=True, description="Also use each inbox chat session's opening user message."
    )
    max_chat_prompts: int = Field(default=200, description="At most this many session prompts.")
    roles: list[str] | None = Field(
        default=None, description="Roles to ask; unset: every chat slot of the active profile."
    )
    samples_per_prompt: int = Field(default=1, ge=1, description="Samples per prompt and role.")
    max_tokens: int | None = Field(default=None, description="Overrides the slots' max_tokens.")
    temperature: float | None = Field(default=None, description="Overrides the temperature.")
    export: bool = Field(default=True, description="Write Parquet + JSONL after collecting.")
    output_dir: str | None = Field(
        default=None, description="Export root; unset: <data dir>/datasets."
    )


@dg.asset(
    group_name="datasets",
    kinds={"duckdb", "llm", "parquet"},
    deps=[dg.AssetKey("chat_messages")],
    description=(
        "Samples for a fine-tuning dataset: every prompt source x every chat role of the "
        "active profile x N samples, then exported to data/datasets/<name>/<version>/."
    ),
)
def dataset_samples(
    context: dg.AssetExecutionContext,
    config: DatasetCollectionConfig,
    duckdb: FoundryDuckDB,
    slots: SlotsResource,
) -> dg.MaterializeResult:
    version = config.version or default_version()
    prompt_dir = Path(config.prompt_dir) if config.prompt_dir else settings.data_dir() / "prompts"
    prompts, problems = load_prompt_files(prompt_dir)
    for problem in problems[:20]:
        context.log.warning(f"skipped prompt {problem}")
    if config.include_chat_sessions:
        prompts += load_chat_session_prompts(duckdb.database, config.max_chat_prompts)
    slot_file = slots.load()
    roles = config.roles or chat_roles(slot_file, slots.profile)
    params: dict[str, Any] = {}
    if config.max_tokens is not None:
        params["max_tokens"] = config.max_tokens
    if config.temperature is not None:
        params["temperature"] = config.temperature
    planned = plan_samples(
        prompts,
        slot_file,
        name=config.name,
        roles=roles,
        samples=config.samples_per_prompt,
        profile=slots.profile,
        params=params,
    )
    context.log.info(
        f"dataset {config.name}/{version}: {len(prompts)} prompts x {len(roles)} roles "
        f"({', '.join(roles)}) x {config.samples_per_prompt} samples = {len(planned)} requests"
    )
    store = CompletionStore(duckdb.database, run_id=context.run.run_id)
    batch = store.run(
        [p[-1] for p in planned],
        slot_file,
        slots.profile,
        options=slots.dispatch_options(),
        progress=progress_logger(context.log.info, f"dataset {config.name}/{version}"),
    )
    rows = []
    for prompt, role, i, request in planned:
        c = batch.results.get(request.key)
        if c is None:
            continue
        rows.append(
            (
                config.name,
                version,
                request.key,
                prompt.prompt_id,
                prompt.source,
                role,
                i,
                json.dumps(prompt.messages, ensure_ascii=False),
                prompt.prompt_text,
                c.content,
                c.reasoning,
                c.slot,
                c.model,
                json.dumps(request.output_params, sort_keys=True),
                c.prompt_tokens,
                c.completion_tokens,
                c.finish_reason,
                not c.content.strip(),
                is_truncated(c.finish_reason),
                context.run.run_id,
            )
        )
    written = write_samples(duckdb.database, rows)
    metadata: dict[str, Any] = {
        "dataset": config.name,
        "version": version,
        "prompts": len(prompts),
        "roles": dg.MetadataValue.json(roles),
        "prompt_problems": len(problems),
        "samples_written": written,
        "empty": sum(1 for r in rows if r[17]),
        "truncated": sum(1 for r in rows if r[18]),
        **batch.metadata(),
    }
    if config.export:
        out_root = (
            Path(config.output_dir) if config.output_dir else settings.data_dir() / "datasets"
        )
        exported = export_dataset(duckdb.database, config.name, version, out_root)
        context.log.info(f"exported {exported.rows} samples to {exported.path}")
        metadata.update(
            {
                "export_path": dg.MetadataValue.path(str(exported.path)),
                "dagster/row_count": exported.rows,
                "parquet_rows": exported.rows,
                "jsonl_rows": exported.jsonl_rows,
            }
        )
    return dg.MaterializeResult(metadata=metadata)


dataset_collection_job = dg.define_asset_job(
    "dataset_collection_job",
    selection=dg.AssetSelection.assets(dataset_samples),
    description="Collect a versioned dataset from the prompt sources and export it.",
)


def dataset_cron() -> str:
    return os.environ.get("MODEL_FOUNDRY_DATASET_CRON", "").strip() or DEFAULT_CRON


dataset_collection_schedule = dg.ScheduleDefinition(
    name="dataset_collection_schedule",
    job=dataset_collection_job,
    cron_schedule=dataset_cron(),
    execution_timezone=os.environ.get("MODEL_FOUNDRY_TIMEZONE", "UTC"),
    default_status=dg.DefaultScheduleStatus.RUNNING,
    description="Nightly dataset collection (MODEL_FOUNDRY_DATASET_CRON, default 03:00 UTC).",
)

dataset_assets = [dataset_samples]
dataset_jobs = [dataset_collection_job]
dataset_schedules = [dataset_collection_schedule]


# ---------------------------------------------------------------------------------------------
# Outside the daemon: ``python -m model_foundry.datasets``.


def collect(config: dict[str, Any], *, db_path: str | None = None) -> dg.ExecuteInProcessResult:
    """Materialize ``dataset_samples`` in this process with resources from the environment."""
    from model_foundry.completions import slots_resource_from_env

    return dg.materialize(
        [dataset_samples],
        resources={
            "duckdb": FoundryDuckDB(database=db_path or str(settings.duckdb_path())),
            "slots": slots_resource_from_env(),
        },
        run_config={
            # Progress lines (INFO) stay; Dagster's per-step DEBUG events would drown them.
            "loggers": {"console": {"config": {"log_level": "INFO"}}},
            "ops": {"dataset_samples": {"config": config}},
        },
    )


def _add_collect_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("--name", default="foundry", help="dataset name (the export folder)")
    p.add_argument("--version", default=None, help="export version (default: UTC date)")
    p.add_argument("--prompt-dir", default=None, help="prompt files (default data/prompts)")
    p.add_argument("--samples", type=int, default=1, help="samples per prompt and role")
    p.add_argument("--roles", nargs="+", default=None, help="roles (default: the profile's)")
    p.add_argument("--no-chat-sessions", action="store_true", help="skip inbox chat prompts")
    p.add_argument("--no-export", action="store_true", help="collect without exporting")


def run_collect(args: argparse.Namespace) -> int:
    config: dict[str, Any] = {
        "name": args.name,
        "samples_per_prompt": args.samples,
        "include_chat_sessions": not args.no_chat_sessions,
        "export": not args.no_export,
    }
    for key, value in (
        ("version", args.version),
        ("prompt_dir", args.prompt_dir),
        ("roles", args.roles),
    ):
        if value is not None:
            config[key] = value
    result = collect(config)
    meta = result.asset_materializations_for_node("dataset_samples")[0].metadata
    print(json.dumps({k: getattr(v, "value", v) for k, v in meta.items()}, default=str))
    return 0 if result.success else 1


def add_cli(subparsers: Any) -> argparse.ArgumentParser:
    """Register ``model-foundry dataset collect`` (what the nightly schedule runs)."""
    dataset = subparsers.add_parser("dataset", help="dataset collection outside the daemon")
    sub = dataset.add_subparsers(dest="dataset_command", required=True)
    p = sub.add_parser("collect", help="prompt sources -> slots -> dataset_samples -> export")
    _add_collect_arguments(p)
    p.set_defaults(func=run_collect)
    return p


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="python -m model_foundry.datasets", description=__doc__)
    _add_collect_arguments(p)
    return run_collect(p.parse_args(argv))


__all__ = [
    "DatasetCollectionConfig",
    "ExportResult",
    "PromptRecord",
    "add_cli",
    "chat_record",
    "chat_roles",
    "collect",
    "dataset_collection_job",
    "dataset_collection_schedule",
    "dataset_samples",
    "default_version",
    "export_dataset",
    "load_prompt_files",
    "parse_jsonl",
    "prompt_from_row",
]

if __name__ == "__main__":
    sys.exit(main())

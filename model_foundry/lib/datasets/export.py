"""Exporting a dataset version: ``samples.parquet``, ``chat.jsonl`` and ``manifest.json``.

The export writes ``data/datasets/<name>/<version>/``: ``samples.parquet`` (every row, with
the ``is_empty`` / ``is_truncated`` flags; ``is_empty`` stays false now that an empty answer
is a failed request), ``chat.jsonl`` (usable rows in chat-messages form for fine-tuning: not
empty, not truncated) and ``manifest.json``. Files appear atomically.
"""

import json
import re
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pyarrow.parquet as pq

from model_foundry.lib import storage
from model_foundry.lib.tables.datasets import DATASET_EXPORTS, DatasetExportRow


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

    row = DatasetExportRow(
        dataset=name, version=version, path=str(out), rows=table.num_rows, jsonl_rows=len(usable)
    )
    sql = DATASET_EXPORTS.insert_sql("replace")
    storage.run_in_transaction(db_path, lambda con: con.execute(sql, DATASET_EXPORTS.values(row)))
    return ExportResult(out, table.num_rows, len(usable), parquet_path, jsonl_path)


__all__ = [
    "ExportResult",
    "UnsafeNameError",
    "chat_record",
    "check_name",
    "export_dataset",
    "export_dir",
]

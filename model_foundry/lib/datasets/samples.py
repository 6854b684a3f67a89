"""``dataset_samples``: every prompt x every chat role of the profile x N samples, one row per
answer, filled from the cells of the collection's built-in recipe (``lib/recipes/collect.py``,
which sends sample ``i`` with ``seed: i``).
"""

import json
from collections import Counter
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import duckdb

from model_foundry.lib import storage
from model_foundry.lib.datasets.prompts import PromptRecord
from model_foundry.lib.llm import Answer
from model_foundry.lib.slots.config import SlotFile
from model_foundry.lib.tables.datasets import DATASET_SAMPLES, DatasetSampleRow


def is_truncated(finish_reason: str | None) -> bool:
    return finish_reason == "length"


def dataset_task(name: str) -> str:
    return f"dataset:{name}"


def chat_roles(slot_file: SlotFile, profile: str | None = None) -> list[str]:
    """The active profile's chat slots, as roles: translators answer in another format."""
    return [s.name for s in slot_file.live_slots(profile) if s.api == "chat"]


# The keys of one version's stored samples among ``?``: dataset_samples is appended a
# version at a time, so DuckDB's min-max index on dataset and version skips the row groups
# of other versions (docs/benchmarks.md measures it).
STORED_SAMPLES_SQL = f"""
SELECT DISTINCT request_key FROM {DATASET_SAMPLES.name}
WHERE dataset = ? AND version = ? AND request_key IN (SELECT unnest(?::VARCHAR[]))
"""


def _new_samples(
    con: duckdb.DuckDBPyConnection, rows: Sequence[DatasetSampleRow]
) -> list[DatasetSampleRow]:
    """``rows`` whose version holds no sample of their request key yet, each key once."""
    versions: dict[tuple[str, str], list[DatasetSampleRow]] = {}
    for r in rows:
        versions.setdefault((r.dataset, r.version), []).append(r)
    new = []
    for (dataset, version), group in versions.items():
        keys = list(dict.fromkeys(r.request_key for r in group))
        found = con.execute(STORED_SAMPLES_SQL, [dataset, version, keys]).fetchall()
        stored = {k for (k,) in found}
        for r in group:
            if r.request_key not in stored:
                stored.add(r.request_key)
                new.append(r)
    return new


def write_samples(db_path: str | Path, rows: Sequence[DatasetSampleRow]) -> int:
    """The samples their version does not hold yet (by request key), in one transaction; how
    many were new. No key index: the check reads the version's rows only."""

    def work(con: duckdb.DuckDBPyConnection) -> int:
        return DATASET_SAMPLES.insert(con, _new_samples(con, rows))

    return storage.run_in_transaction(db_path, work) if rows else 0


def sample_row(dataset: str, version: str, prompt: PromptRecord, role: str, index: int,
               answer: Answer, run_id: str | None) -> DatasetSampleRow:  # fmt: skip
    """The ``dataset_samples`` row of sample ``index`` of ``prompt`` asked of ``role``."""
    c = answer.completion
    return DatasetSampleRow(
        dataset=dataset,
        version=version,
        request_key=answer.request.key,
        prompt_id=prompt.prompt_id,
        source=prompt.source,
        role=role,
        sample_index=index,
        messages=json.dumps(prompt.messages, ensure_ascii=False),
        prompt=prompt.prompt_text,
        response=c.content,
        reasoning=c.reasoning,
        slot=c.slot,
        model=c.model,
        params=json.dumps(answer.request.output_params, sort_keys=True),
        prompt_tokens=c.prompt_tokens,
        completion_tokens=c.completion_tokens,
        finish_reason=c.finish_reason,
        is_empty=not c.content.strip(),
        is_truncated=is_truncated(c.finish_reason),
        run_id=run_id,
    )


def sample_counts(rows: Sequence[DatasetSampleRow]) -> dict[str, Any]:
    """The samples' metadata: empty and truncated ones, and how many each role gave."""
    by_role = Counter(r.role for r in rows)
    return {
        "empty": sum(r.is_empty for r in rows),
        "truncated": sum(r.is_truncated for r in rows),
        "samples_by_role": dict(sorted(by_role.items())),
    }


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


__all__ = [
    "chat_roles",
    "collection_line",
    "dataset_task",
    "is_truncated",
    "sample_counts",
    "sample_row",
    "write_samples",
]

"""The fan-out collection's export: ``dataset_samples`` of a version -> a clean folder.

Every sample is a record (the prompt's messages, then the answer with its reasoning, slot and
model). Its group is its prompt: near-duplicate prompts were asked once (``prompts.py``), so
every role's answers to one prompt share a split and no prompt is on both sides. Every
answer, and both answers of a preference pair, pass the quality gates (``lib/gates``, the
dataset's thresholds from the hygiene file); one held back stays in ``samples.parquet`` with
its cause and is left out of the other views. The same
hygiene, views, card and manifest as the session export (``lib/exports``).
"""

from __future__ import annotations

import functools
import json
from collections import Counter
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any

from model_foundry.lib import storage
from model_foundry.lib.datasets.preference_card import preference_section
from model_foundry.lib.datasets.preferences import (
    PreferenceFigures,
    pair_records,
    preference_figures,
)
from model_foundry.lib.exports.card import CardSections, ExportFigures, held_back_line
from model_foundry.lib.exports.frame import Preparation, export_records
from model_foundry.lib.exports.layouts import PREFERENCE, SAMPLES
from model_foundry.lib.exports.prepare import SAMPLE_FILTERS, Gates, Hygiene
from model_foundry.lib.exports.published import ExportOutcome, ExportTarget
from model_foundry.lib.gates.answers import pair_gate, sample_gate
from model_foundry.lib.gates.config import CAUSES, GateConfig, load_gate_config
from model_foundry.lib.hygiene.splits import stored_splits

_SAMPLES = """
SELECT dataset, version, request_key, prompt_id, source, role, sample_index,
       messages::VARCHAR AS messages, prompt, response, reasoning, slot, model,
       params::VARCHAR AS params, prompt_tokens, completion_tokens, finish_reason, is_empty,
       is_truncated, created_at
FROM dataset_samples WHERE dataset = ? AND version = ?
ORDER BY prompt_id, role, sample_index, request_key
"""
_FETCH = 1000
# DuckDB sorts a version's samples before it returns the first, in memory up to its
# ``memory_limit`` (80% of RAM unless set) and beside the file past that: left alone, an
# export's memory grew with its samples (docs/benchmarks.md). Capped while they are read.
SORT_MEMORY = "256MB"
_EMPTY_MESSAGE = {"reasoning": None, "tool_calls": [], "tool_call_id": None, "name": None}


def sample_record(row: Mapping[str, Any]) -> dict[str, Any]:
    """One ``dataset_samples`` row as an export record: its columns (``messages`` now the
    whole conversation, the answer last) and ``id``, its request key."""
    asked = [
        {**_EMPTY_MESSAGE, "role": m["role"], "content": m.get("content"), "slot": None,
         "model": None}
        for m in json.loads(row["messages"])
    ]  # fmt: skip
    answer = {
        **_EMPTY_MESSAGE, "role": "assistant", "content": row["response"],
        "reasoning": row["reasoning"], "slot": row["slot"], "model": row["model"],
    }  # fmt: skip
    created = row["created_at"]
    return {
        **row,
        "id": row["request_key"],
        "messages": [*asked, answer],
        "created_at": created.isoformat() if created is not None else None,
    }


def sample_records(db_path: str | Path, name: str, version: str) -> Iterator[dict[str, Any]]:
    """The version's samples as export records, in a stable order (see :data:`SORT_MEMORY`
    for what the order costs)."""
    with storage.connect(db_path) as con:
        # The setting is the database's, not the connection's: put back once read.
        before = storage.memory_limit(con)
        storage.set_memory_limit(con, SORT_MEMORY)
        try:
            cursor = con.execute(_SAMPLES, [name, version])
            columns = [d[0] for d in cursor.description]
            while rows := cursor.fetchmany(_FETCH):
                for values in rows:
                    yield sample_record(dict(zip(columns, values, strict=True)))
        finally:
            storage.set_memory_limit(con, before)


def scrubbed_pairs(
    db_path: str | Path,
    target: ExportTarget,
    hygiene: Hygiene,
    figures: PreferenceFigures,
    gates: GateConfig,
) -> Iterator[dict[str, Any]]:
    """The version's preference pairs, scrubbed like every record, each in the split its
    prompt group was stored with when the samples were split; a pair with an answer the gates
    held back is left out (``figures`` counts the markers written and the pairs held back by
    cause)."""
    counts: Counter[str] = Counter()
    held: Counter[str] = Counter()
    figures.held_back_by_gate = dict.fromkeys(CAUSES, 0)
    with storage.connect(db_path) as con:
        split_of = stored_splits(con, target.name)
    for record in pair_records(db_path, target.name, target.version, split_of):
        text = {k: record[k] for k in ("prompt", "chosen", "rejected")}
        clean, found = hygiene.scrub_value(text)
        counts.update(found)
        figures.redactions_by_kind = dict(sorted(counts.items()))
        cause = pair_gate(clean, gates)
        if cause:
            held[cause] += 1
            figures.held_back_by_gate = {c: held.get(c, 0) for c in CAUSES}
            continue
        yield {**record, **clean}


def export_samples(
    db_path: str | Path,
    target: ExportTarget,
    hygiene: Hygiene,
    run: str | None = None,
    *,
    judged: bool = False,
    gates: GateConfig | None = None,
) -> ExportOutcome:
    """Export the samples of ``target``'s version (chosen, and checked unfinished, by the
    caller before any slot was asked); with ``judged``, the ``preference`` config of its
    agreed judgements too. ``gates``: the quality gates' thresholds (None: the dataset's in
    the hygiene file)."""
    gates = gates or load_gate_config(target.name)
    preparation = Preparation(
        group_of=lambda r: r["prompt_id"],
        deduplicate=False,
        filters=SAMPLE_FILTERS,
        gates=Gates(CAUSES, functools.partial(sample_gate, config=gates), in_workers=True),
    )
    records = sample_records(db_path, target.name, target.version)
    made_by = {"run": run or "model-foundry dataset collect"}
    card = CardSections(holds=[held_back_line], sections=[preference_section])
    if not judged:
        return export_records(db_path, target, SAMPLES, records, hygiene, preparation, made_by,
                              card=card)  # fmt: skip
    judging = preference_figures(db_path, target.name, target.version)
    return export_records(
        db_path, target, SAMPLES, records, hygiene, preparation, made_by,
        also=[(PREFERENCE, lambda: scrubbed_pairs(db_path, target, hygiene, judging, gates))],
        before_card=lambda f: _add_preference(f, judging),
        card=card,
    )  # fmt: skip


def _add_preference(figures: ExportFigures, judging: PreferenceFigures) -> None:
    """After every config is written: the pairs per split and their markers are known."""
    judging.pairs_by_split = dict(figures.configs.get(PREFERENCE.config, {}))
    figures.preference = judging.as_dict()


__all__ = ["export_samples", "sample_record", "sample_records"]

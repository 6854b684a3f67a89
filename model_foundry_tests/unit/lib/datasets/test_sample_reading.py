"""Reading a version's samples for an export: DuckDB's sort of them is capped while they are
read, and the database's setting is put back after."""

from __future__ import annotations

from pathlib import Path

from model_foundry.devtools.bench.decontamination import fill_samples
from model_foundry.lib import storage
from model_foundry.lib.datasets.sample_export import sample_records


def test_reading_samples_caps_duckdbs_memory_and_puts_the_setting_back(tmp_path: Path) -> None:
    db = tmp_path / "samples.duckdb"
    fill_samples(db, 10, 1)
    # Another connection of this process shares the database, and so its memory_limit.
    with storage.connect(db) as other:
        storage.set_memory_limit(other, "3GiB")
        records = sample_records(db, "bench", "v1")
        first = next(records)
        assert storage.memory_limit(other) == "244.1 MiB"  # 256MB, as DuckDB prints it
        rest = list(records)
        assert storage.memory_limit(other) == "3.0 GiB"
    rows = [first, *rest]
    assert len(rows) == 10
    # In the export's stable order: by prompt, then role and sample.
    prompts = [r["prompt_id"] for r in rows]
    assert prompts == sorted(prompts)

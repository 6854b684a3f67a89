"""``model-foundry recipe export`` as a user runs it: a real process, the slot simulator and a
real DuckDB file. A bad name, a recipe never run and a finished version each get one
sentence; a run recipe is exported under ``--out``."""

from __future__ import annotations

import json
from pathlib import Path

import pyarrow.parquet as pq
import pytest

from model_foundry_tests.recipe_helpers import QUESTIONS, write_recipe
from model_foundry_tests.shared.cli.cli import cli

pytestmark = pytest.mark.timeout(300)

RECIPE = {
    "name": "small",
    "seed": {"file": "seed.jsonl"},
    "columns": [
        {"name": "query", "type": "seed"},
        {"name": "answer", "type": "llm_text", "role": "cheap", "prompt": "{{ query }}"},
        # The simulator echoes the question: the one on NATS fails it.
        {"name": "no_nats", "type": "validation", "target": "answer", "regex": "^(?!.*NATS)"},
    ],
}


def _env(tmp_path: Path, slots: Path) -> dict[str, str]:
    return {
        "MODEL_FOUNDRY_SLOTS": str(slots),
        "MODEL_FOUNDRY_DUCKDB": str(tmp_path / "data" / "recipes.duckdb"),
        "MODEL_FOUNDRY_DATA_DIR": str(tmp_path / "data"),
        "MODEL_FOUNDRY_SLOT_LIMITER": "flock",
        "DAGSTER_HOME": str(tmp_path / "dagster_home"),
    }


def _one_sentence(result) -> str:
    assert result.returncode == 1 and "Traceback" not in result.stderr, result.stderr
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1, lines
    return lines[0]


def test_export_writes_the_folder_and_refuses_what_it_cannot_do(
    tmp_path: Path, fast_slots: Path
) -> None:
    path = write_recipe(tmp_path / "small", RECIPE)
    env = _env(tmp_path, fast_slots)
    missing = cli("recipe", "export", "nope", "--file", str(path), env=env)
    assert _one_sentence(missing) == (
        f"model-foundry: no recipe named 'nope' in {path} (known: small)"
    )
    never_run = cli("recipe", "export", "small", "--file", str(path), env=env)
    db = tmp_path / "data" / "recipes.duckdb"
    assert _one_sentence(never_run) == (
        f"model-foundry: recipe small has no generated rows in {db}: run `model-foundry recipe "
        "run small` (or materialize recipe_small) first"
    )
    run = cli("recipe", "run", "small", "--file", str(path), env=env)
    assert run.returncode == 0, run.stderr[-3000:]

    out = tmp_path / "exports"
    args = ("recipe", "export", "small", "--file", str(path), "--out", str(out))
    done = cli(*args, "--version", "v1", "--test-share", "0.5", env=env)
    assert done.returncode == 0, done.stderr[-3000:]
    lines = done.stdout.strip().splitlines()
    folder = out / "small" / "v1"
    assert lines[0] == str(folder)
    assert lines[1].startswith(f"exported small/v1 to {folder}: ")
    figures = json.loads(lines[-1])
    assert figures["records"] == len(QUESTIONS) and figures["kind"] == "rows"
    rows = pq.read_table(folder / "samples.parquet").to_pylist()
    assert sorted(r["query"] for r in rows) == sorted(QUESTIONS)
    # The row that failed its validation is only in samples.parquet.
    held = [r for r in rows if not r["kept"] and r["dropped_by"] != "duplicate"]
    assert [(r["query"], r["no_nats"], r["dropped_by"]) for r in held] == [
        (QUESTIONS[1], False, "gate:no_nats")
    ]
    kept = sum(figures["rows_by_split"].values())
    assert kept == len(rows) - len(held) - figures["duplicates_removed"]
    assert sorted(p.name for p in folder.iterdir()) == [
        "README.md", "hf", "manifest.json", "openai", "samples.parquet",
    ]  # fmt: skip
    again = cli(*args, "--version", "v1", env=env)
    assert "already exported" in _one_sentence(again)

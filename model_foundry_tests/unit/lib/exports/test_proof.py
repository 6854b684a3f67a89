"""What an export folder proves once written (``lib/exports/proof.py``), on folders written
by the real export path: a secret planted in a view afterwards is found again, the
scrubber's own markers and the pipeline's ids are not; the held-back share and the preview
come from samples.parquet; the limit is read from its variable."""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from model_foundry.lib import settings
from model_foundry.lib.exports.card import ExportFigures
from model_foundry.lib.exports.layouts import SESSIONS
from model_foundry.lib.exports.proof import columns, held_back, preview, scan_secrets
from model_foundry.lib.exports.writer import write_export
from model_foundry.lib.hygiene.record import RecordScrubber

TOKEN = "ghp_" + "Zq8Xw2Lm4Np6Rt1Vb3Yc5Ke7Hj9Ga0Sd2Fu4"
LIMIT = "MODEL_FOUNDRY_EXPORT_MAX_HELD_BACK_SHARE"


def _record(n: int, text: str, dropped_by: str | None) -> dict[str, Any]:
    message = {"role": "user", "content": text, "reasoning": None, "tool_calls": [],
               "tool_call_id": None, "name": None, "slot": None, "model": None}  # fmt: skip
    return {
        "id": f"r{n}", "correlation_id": f"s{n}", "thread": "main", "part": 0,
        "messages": [message], "tools": "[]", "models": [], "slots": [],
        # An id the pipeline made, random-looking: not lab text, never a find.
        "event_ids": ["9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08"],
        "first_at": None, "last_at": None, "turns": 1, "empty_turns": 0,
        "truncated_turns": 0, "tool_errors": 0, "cluster_id": f"r{n}", "split": "train",
        "kept": dropped_by is None, "dropped_by": dropped_by,
    }  # fmt: skip


def _folder(tmp_path: Path, records: list[dict[str, Any]]) -> Path:
    figures = ExportFigures(
        dataset="proof", version="v1", kind="sessions", rows_by_split={}, records=len(records),
        sessions=0, models=[], slots=[], redactions_by_kind={}, duplicates_removed=0,
        clusters=0, removed_by_filter={}, split_joins=0, license="mit", languages=[],
    )  # fmt: skip
    return write_export(tmp_path, SESSIONS, [records], figures)


# Lab text with secrets and PII, as the export's scrubber leaves it: markers and aliases.
RAW = (
    "Mail ada@labmail.net from 10.1.2.3; CI uses HF_TOKEN=hf_Qw8Er4Ty6Ui2Op0As3Df5Gh7Jk9Lz1Xc4 "
    "in /home/ada/lab. SENTRY_DSN=https://7d3f9a1b4c6e8f20a5b7c9d1e3f5a7b9@o955046.ingest."
    "sentry.io/2307901"
)
SCRUBBED = RecordScrubber().scrub_text(RAW, Counter())

# What the PII rules replace, written raw into a view after the export.
PII = "Mail ada@labmail.net from 10.1.2.3 in /home/ada/lab."


def test_a_clean_folder_has_no_find_and_a_planted_token_is_found_in_either_view(
    tmp_path: Path,
) -> None:
    folder = _folder(tmp_path, [_record(n, SCRUBBED, None) for n in range(3)])
    # The scrubber's markers are no find, the one in a URL's user part included (its text
    # reads as a user and a password to the URL rule).
    assert "https://[REDACTED:url_token]@" in SCRUBBED and "ada" not in SCRUBBED
    scrubber = RecordScrubber()
    clean = scan_secrets(folder, scrubber)
    assert (clean.found, clean.files, clean.rows) == (0, 2, 6)

    hf = folder / "hf" / "sessions" / "train.parquet"
    rows = pq.read_table(hf).to_pylist()
    rows[1]["messages"][0]["content"] = f"push with {TOKEN}"
    # A column the export does not scrub (the pipeline's own) is scanned all the same.
    rows[2]["correlation_id"] = TOKEN
    pq.write_table(pa.Table.from_pylist(rows, schema=SESSIONS.schema), hf)
    with (folder / "openai" / "train.jsonl").open("a", encoding="utf-8") as out:
        out.write(json.dumps({"messages": [{"role": "user", "content": TOKEN}]}) + "\n")
        # PII is scrubbed to markers, not a secret: written raw, it is not a find.
        out.write(json.dumps({"messages": [{"role": "user", "content": PII}]}) + "\n")
        # A line that is not JSON is still read, as text.
        out.write(f"push with {TOKEN}\n")
    found = scan_secrets(folder, scrubber)
    assert found.by_kind == {"github_token": 4}
    assert found.places == [
        "hf/sessions/train.parquet row 2: github_token",
        "hf/sessions/train.parquet row 3: github_token",
        "openai/train.jsonl row 4: github_token",
        "openai/train.jsonl row 6: github_token",
    ]
    assert TOKEN not in json.dumps(found.places)


def test_the_held_back_share_preview_and_columns_come_from_the_folder(tmp_path: Path) -> None:
    causes = [None, "duplicate", None, "filter:truncated", "gate:noise_chars", "duplicate"]
    folder = _folder(tmp_path, [_record(n, f"text {n}", c) for n, c in enumerate(causes)])
    held = held_back(folder)
    assert (held.records, held.held) == (6, 4)
    assert held.by_cause == {"duplicate": 2, "filter:truncated": 1, "gate:noise_chars": 1}
    assert held.share == pytest.approx(4 / 6)
    shown = preview(folder, kept=1, held=2)
    assert [(r.id, r.cause, r.text) for r in shown] == [
        ("r0", "kept", "text 0"),
        ("r1", "duplicate", "text 1"),
        ("r3", "filter:truncated", "text 3"),
    ]
    names = [n for n, _ in columns(folder)]
    assert names == SESSIONS.schema.names
    assert dict(columns(folder))["messages"] == "list<struct>"


def test_with_no_row_kept_the_columns_are_those_of_samples_parquet(tmp_path: Path) -> None:
    folder = _folder(tmp_path, [_record(0, "text", "duplicate")])
    assert [n for n, _ in columns(folder)] == SESSIONS.schema.names
    assert held_back(folder).share == 1.0


def test_the_limit_is_read_from_its_variable_and_a_bad_one_named(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.delenv(LIMIT, raising=False)
    assert settings.export_max_held_back_share() == 0.5
    monkeypatch.setenv(LIMIT, "0.2")
    assert settings.export_max_held_back_share() == 0.2
    for bad in ("half", "1.5", "-0.1", "nan"):
        monkeypatch.setenv(LIMIT, bad)
        with pytest.raises(settings.SettingError) as refused:
            settings.export_max_held_back_share()
        assert str(refused.value) == f"{LIMIT}={bad!r} is not a share between 0 and 1"

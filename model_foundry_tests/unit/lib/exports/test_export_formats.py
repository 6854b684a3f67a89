"""The export folder's views: OpenAI lines, the hf/ config that datasets 3.6 and 5.x load
offline, samples.parquet, the card and the manifest: the unit tests."""

from __future__ import annotations

import json
from datetime import UTC, datetime

import pyarrow.parquet as pq
import pytest
import yaml

from model_foundry.lib.exports.layouts import SESSIONS
from model_foundry.lib.exports.versions import FinishedVersionError, choose_version
from model_foundry.lib.exports.writer import batched, write_export
from model_foundry_tests.shared.lib.exports.export_formats import (  # noqa: F401 - fixtures are found by name
    OPENAI_MESSAGE_KEYS,
    _figures,
    _kept,
    export_fixture,
)


def test_openai_lines_hold_only_the_keys_the_format_accepts(export) -> None:
    folder, records = export
    for split in ("train", "test"):
        lines = [json.loads(x) for x in (folder / "openai" / f"{split}.jsonl").open()]
        assert len(lines) == len(_kept(records, split)) > 0
        for line in lines:
            assert set(line) <= {"messages", "tools", "parallel_tool_calls"}
            called: set[str] = set()
            for m in line["messages"]:
                assert set(m) <= OPENAI_MESSAGE_KEYS, m
                for call in m.get("tool_calls", []):
                    assert isinstance(call["function"]["arguments"], str)
                    json.loads(call["function"]["arguments"])
                    called.add(call["id"])
                if m["role"] == "tool":
                    assert m["tool_call_id"] in called
    # The old name for the openai view's lines had its one release.
    assert not (folder / "chat.jsonl").exists()


def test_samples_parquet_holds_every_record_with_its_flags_and_split(export) -> None:
    folder, records = export
    rows = pq.read_table(folder / "samples.parquet").to_pylist()
    assert [r["id"] for r in rows] == [r["id"] for r in records]
    assert [(r["kept"], r["split"], r["cluster_id"]) for r in rows] == [
        (r["kept"], r["split"], r["cluster_id"]) for r in records
    ]


def test_a_finished_version_is_refused_and_the_default_takes_a_suffix(export) -> None:
    folder, records = export
    out_root = folder.parent.parent
    with pytest.raises(FinishedVersionError, match="already exported"):
        choose_version(out_root, "agents", "v1")
    with pytest.raises(FinishedVersionError):
        write_export(out_root, SESSIONS, batched(records, 7), _figures(records))
    today = datetime.now(UTC).strftime("%Y%m%d")
    assert choose_version(out_root, "agents", None) == today
    write_export(out_root, SESSIONS, batched(records, 7), _figures(records, today))
    assert choose_version(out_root, "agents", None) == f"{today}.2"
    manifest = json.loads((folder / "manifest.json").read_text())
    assert manifest["finished"] is True and manifest["rows_by_split"] == {
        "train": len(_kept(records, "train")),
        "test": len(_kept(records, "test")),
    }
    assert not list(out_root.glob("agents/.*partial"))


def test_the_card_header_names_every_config_file(export) -> None:
    folder, _ = export
    text = (folder / "README.md").read_text()
    header = yaml.safe_load(text.split("---\n")[1])
    assert header["license"] == "unknown"
    for config in header["configs"]:
        for data in config["data_files"]:
            assert (folder / data["path"]).is_file()
    assert "huggingface-cli upload" in text

"""Every eval file format gives the same items; a missing field or bad file is one sentence."""

from __future__ import annotations

import csv
import gzip
import json
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from model_foundry.lib.decontamination.config import EvalSet, EvalSetError
from model_foundry.lib.decontamination.loaders import items

ROWS = [
    {"task_id": "T/0", "prompt": "def f():\n", "canonical_solution": "    return 1\n"},
    {"task_id": "T/1", "prompt": "日本の川", "canonical_solution": "信濃川"},
]
EXPECTED = [("T/0", ["def f():\n", "    return 1\n"]), ("T/1", ["日本の川", "信濃川"])]


def _set(path: Path, id_field: str = "task_id") -> EvalSet:
    return EvalSet("t", path, id_field, ("prompt", "canonical_solution"), path.parent / "e.yaml")


def _arrow_stream(path: Path) -> None:
    table = pa.Table.from_pylist(ROWS)
    with pa.OSFile(str(path), "wb") as sink, pa.ipc.new_stream(sink, table.schema) as out:
        out.write_table(table)


def _save_to_disk_folder(folder: Path) -> None:
    """A folder laid out as datasets' ``Dataset.save_to_disk`` writes it (datasets 2.x/3.x
    ``arrow_dataset.py``): Arrow stream shards named in ``state.json``'s ``_data_files``."""
    folder.mkdir()
    _arrow_stream(folder / "data-00000-of-00001.arrow")
    state = {"_data_files": [{"filename": "data-00000-of-00001.arrow"}], "_split": None}
    (folder / "state.json").write_text(json.dumps(state))
    (folder / "dataset_info.json").write_text("{}")


def write(tmp_path: Path, kind: str) -> Path:
    if kind == "jsonl":
        path = tmp_path / "e.jsonl"
        path.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in ROWS))
    elif kind == "jsonl.gz":
        path = tmp_path / "e.jsonl.gz"
        with gzip.open(path, "wt", encoding="utf-8") as f:
            f.writelines(json.dumps(r) + "\n" for r in ROWS)
    elif kind == "json":
        path = tmp_path / "e.json"
        path.write_text(json.dumps(ROWS))
    elif kind == "json-lines":
        path = tmp_path / "e.json"
        path.write_text("\n".join(json.dumps(r) for r in ROWS))
    elif kind == "csv":
        path = tmp_path / "e.csv"
        with path.open("w", newline="", encoding="utf-8") as f:
            writer = csv.DictWriter(f, fieldnames=list(ROWS[0]))
            writer.writeheader()
            writer.writerows(ROWS)
    elif kind == "parquet":
        path = tmp_path / "e.parquet"
        pq.write_table(pa.Table.from_pylist(ROWS), path)
    elif kind == "save_to_disk":
        path = tmp_path / "saved"
        _save_to_disk_folder(path)
    else:  # a DatasetDict: dataset_dict.json and a save_to_disk folder per split
        path = tmp_path / "dict"
        path.mkdir()
        (path / "dataset_dict.json").write_text(json.dumps({"splits": ["test"]}))
        _save_to_disk_folder(path / "test")
    return path


@pytest.mark.parametrize(
    "kind", ["jsonl", "jsonl.gz", "json", "json-lines", "csv", "parquet", "save_to_disk", "dict"]
)
def test_every_format_gives_the_same_items(tmp_path: Path, kind: str) -> None:
    assert list(items(_set(write(tmp_path, kind)))) == EXPECTED


def test_a_missing_field_names_the_file_the_item_and_the_setting(tmp_path: Path) -> None:
    path = write(tmp_path, "jsonl")
    with pytest.raises(EvalSetError) as caught:
        list(items(_set(path, id_field="name")))
    message = str(caught.value)
    assert str(path) in message and "'name'" in message and "eval_sets.t.id" in message
    assert "item 1" in message


@pytest.mark.parametrize(
    ("name", "data"),
    [("e.jsonl", b'{"task_id": 1}\nnot json\n'), ("e.parquet", b"no parquet"),
     ("e.jsonl.gz", b"not gzip"), ("e.txt", b"")],
)  # fmt: skip
def test_an_unreadable_file_is_one_sentence_naming_it(
    tmp_path: Path, name: str, data: bytes
) -> None:
    path = tmp_path / name
    path.write_bytes(data)
    with pytest.raises(EvalSetError) as caught:
        list(items(EvalSet("t", path, "task_id", ("task_id",), tmp_path / "e.yaml")))
    assert str(path) in str(caught.value) and "\n" not in str(caught.value)

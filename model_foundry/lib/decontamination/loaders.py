"""An eval set's items from its file: each item's id and the text of its matched fields.

Formats: JSON Lines (``.jsonl``, ``.jsonl.gz``), JSON (``.json``: an array of objects, or
JSON Lines as ``datasets``' ``to_json`` writes them), CSV, Parquet, and a folder written by
``datasets``' ``save_to_disk`` (``state.json`` naming Arrow stream files; a
``DatasetDict``'s folder has ``dataset_dict.json`` and a folder per split). A file that
cannot be read, or an item without a named field, is one sentence naming the file and the
field (:class:`EvalSetError`).
"""

from __future__ import annotations

import csv
import gzip
import json
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any

from model_foundry.lib.decontamination.config import EvalSet, EvalSetError

if TYPE_CHECKING:
    import pyarrow as pa

FORMATS = ".jsonl, .jsonl.gz, .json, .csv, .parquet or a save_to_disk folder"


def _text(value: Any) -> str:
    """A field's text: strings as they are, lists joined by lines, other values as JSON."""
    if value is None:
        return ""
    if isinstance(value, str):
        return value
    if isinstance(value, list):
        return "\n".join(_text(v) for v in value)
    return json.dumps(value, ensure_ascii=False, default=str)


def _json_lines(path: Path, lines: Iterable[str]) -> Iterator[dict[str, Any]]:
    for n, line in enumerate(lines, 1):
        if not line.strip():
            continue
        try:
            row = json.loads(line)
        except json.JSONDecodeError:
            raise EvalSetError(f"{path}: line {n} is not JSON") from None
        if not isinstance(row, dict):
            raise EvalSetError(f"{path}: line {n} is not a JSON object")
        yield row


def _json(path: Path) -> Iterator[dict[str, Any]]:
    text = path.read_text(encoding="utf-8")
    try:
        data = json.loads(text)
    except json.JSONDecodeError:
        # datasets' to_json writes JSON Lines into a .json file by default.
        yield from _json_lines(path, text.splitlines())
        return
    if isinstance(data, dict):
        data = [data]
    if not isinstance(data, list) or not all(isinstance(r, dict) for r in data):
        raise EvalSetError(f"{path}: holds no array of objects")
    yield from data


def _csv(path: Path) -> Iterator[dict[str, Any]]:
    with path.open(encoding="utf-8", newline="") as f:
        yield from csv.DictReader(f)


def _arrow_batches(batches: Iterable[pa.RecordBatch]) -> Iterator[dict[str, Any]]:
    for batch in batches:
        yield from batch.to_pylist()


def _save_to_disk(path: Path) -> Iterator[dict[str, Any]]:
    splits = path / "dataset_dict.json"
    if splits.is_file():
        names = json.loads(splits.read_text(encoding="utf-8")).get("splits") or []
        for name in names:
            yield from _save_to_disk(path / name)
        return
    state = path / "state.json"
    if not state.is_file():
        raise EvalSetError(f"{path}: a folder without state.json is no save_to_disk folder")
    files = json.loads(state.read_text(encoding="utf-8")).get("_data_files") or []
    import pyarrow as pa  # with the eval files, not with every process that might export

    for entry in files:
        with pa.memory_map(str(path / entry["filename"])) as source:
            yield from _arrow_batches(pa.ipc.open_stream(source))


def rows(path: Path) -> Iterator[dict[str, Any]]:
    """The rows of an eval file, as dicts, in order."""
    name = path.name.lower()
    if path.is_dir():
        return _save_to_disk(path)
    if name.endswith(".jsonl.gz"):
        return _json_lines(path, gzip.open(path, "rt", encoding="utf-8"))
    if name.endswith(".jsonl"):
        return _json_lines(path, path.open(encoding="utf-8"))
    if name.endswith(".json"):
        return _json(path)
    if name.endswith(".csv"):
        return _csv(path)
    if name.endswith(".parquet"):
        import pyarrow.parquet as pq

        return _arrow_batches(pq.ParquetFile(path).iter_batches())
    raise EvalSetError(f"{path}: not a format eval sets are read from ({FORMATS})")


def items(eval_set: EvalSet) -> Iterator[tuple[str, list[str]]]:
    """Each item of ``eval_set``: its id and the text of each matched field, in order."""
    at = f"eval_sets.{eval_set.name}"
    fields = (eval_set.id_field, *eval_set.text_fields)
    import pyarrow as pa

    n = 0
    try:
        for n, row in enumerate(rows(eval_set.path), 1):
            missing = next((f for f in fields if f not in row), None)
            if missing is not None:
                which = "id" if missing == eval_set.id_field else "text"
                raise EvalSetError(
                    f"{eval_set.path}: item {n} has no field {missing!r} (named by {at}.{which} "
                    f"in {eval_set.named_in})"
                )
            yield str(row[eval_set.id_field]), [_text(row[f]) for f in eval_set.text_fields]
    except EvalSetError:
        raise
    except (OSError, UnicodeDecodeError, ValueError, KeyError, pa.ArrowException) as exc:
        raise EvalSetError(
            f"{eval_set.path}: cannot be read after item {n} ({exc.__class__.__name__}); "
            f"{at}.path must be {FORMATS}"
        ) from None


__all__ = ["FORMATS", "items", "rows"]

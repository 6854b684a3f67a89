"""The evaluation-sets file: which eval sets an export is checked against, and how.

``MODEL_FOUNDRY_EVAL_SETS`` names a YAML file; a relative ``path`` in it is relative to the
file. Unset: nothing is checked (the card says so). A file or field that cannot be used is
one sentence naming the file and the field (:class:`EvalSetError`), raised before anything
is exported.

The n-gram size defaults to 13 words, as GPT-3's paper and lm-eval-harness
(``docs/decontamination.md``) use; the threshold to 0.5, Marin's paragraph rule (at least
half of the item's 13-gram overlapping): a row that quotes half of an item has the item, and
one that shares a 13-word phrase by chance covers a small share of it.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml

from model_foundry.lib import settings
from model_foundry.lib.errors import UserError

DEFAULT_NGRAM = 13
DEFAULT_THRESHOLD = 0.5
ENV = "MODEL_FOUNDRY_EVAL_SETS"


class EvalSetError(UserError, ValueError):
    """An eval-sets file, an eval file or one of its fields cannot be used; one sentence."""


@dataclass(frozen=True)
class EvalSet:
    """One eval set: its name (in the card and each held-back row), its file, the field that
    names an item and the fields whose text is matched."""

    name: str
    path: Path
    id_field: str
    text_fields: tuple[str, ...]
    # The eval-sets file it was named in, for error messages.
    named_in: Path


@dataclass(frozen=True)
class EvalSets:
    """Every configured eval set, the n-gram size and the threshold a row is held back at."""

    file: Path
    sets: tuple[EvalSet, ...]
    ngram: int = DEFAULT_NGRAM
    threshold: float = DEFAULT_THRESHOLD


def _one(file: Path, name: Any, raw: Any) -> EvalSet:
    at = f"eval_sets.{name}"
    if not isinstance(raw, dict):
        raise EvalSetError(f"{file}: {at} must be a mapping with path, id and text")
    for key in ("path", "id", "text"):
        if key not in raw:
            raise EvalSetError(f"{file}: {at}.{key} is missing")
    extra = sorted(set(raw) - {"path", "id", "text"})
    if extra:
        raise EvalSetError(f"{file}: {at}.{extra[0]} is not an eval set field (path, id, text)")
    if not isinstance(raw["path"], str) or not raw["path"].strip():
        raise EvalSetError(f"{file}: {at}.path must be a file or folder path")
    if not isinstance(raw["id"], str) or not raw["id"]:
        raise EvalSetError(f"{file}: {at}.id must be a field name")
    text = raw["text"]
    text = [text] if isinstance(text, str) else text
    if not isinstance(text, list) or not text or not all(isinstance(t, str) and t for t in text):
        raise EvalSetError(f"{file}: {at}.text must be a field name or a list of them")
    path = Path(raw["path"]).expanduser()
    path = path if path.is_absolute() else file.parent / path
    if not path.exists():
        raise EvalSetError(f"{file}: {at}.path {path} does not exist")
    return EvalSet(str(name), path, raw["id"], tuple(text), file)


def parse_eval_sets(file: Path, data: Any) -> EvalSets:
    """The eval sets of ``data``, the YAML of ``file``."""
    if not isinstance(data, dict) or not isinstance(data.get("eval_sets"), dict):
        raise EvalSetError(f"{file}: eval_sets must map each eval set's name to its settings")
    extra = sorted(set(data) - {"eval_sets", "ngram", "threshold"})
    if extra:
        raise EvalSetError(f"{file}: {extra[0]} is not a setting (eval_sets, ngram, threshold)")
    ngram = data.get("ngram", DEFAULT_NGRAM)
    if isinstance(ngram, bool) or not isinstance(ngram, int) or not 1 <= ngram <= 64:
        raise EvalSetError(f"{file}: ngram must be a whole number of words from 1 to 64")
    threshold = data.get("threshold", DEFAULT_THRESHOLD)
    if isinstance(threshold, bool) or not isinstance(threshold, int | float):
        raise EvalSetError(f"{file}: threshold must be a share between 0 and 1")
    if not 0 < threshold <= 1:
        raise EvalSetError(f"{file}: threshold must be a share between 0 and 1")
    if not data["eval_sets"]:
        raise EvalSetError(f"{file}: eval_sets names no eval set")
    sets = tuple(_one(file, name, raw) for name, raw in data["eval_sets"].items())
    return EvalSets(file, sets, ngram, float(threshold))


def load_eval_sets(file: Path | None = None) -> EvalSets | None:
    """The eval sets of ``file`` (default: ``MODEL_FOUNDRY_EVAL_SETS``); None when unset."""
    file = file or settings.eval_sets_file()
    if file is None:
        return None
    try:
        data = yaml.safe_load(file.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise EvalSetError(f"{file} ({ENV}) does not exist") from None
    except (OSError, UnicodeDecodeError, yaml.YAMLError) as exc:
        raise EvalSetError(f"{file} ({ENV}) cannot be read: {exc.__class__.__name__}") from None
    return parse_eval_sets(file, data)


__all__ = [
    "DEFAULT_NGRAM",
    "DEFAULT_THRESHOLD",
    "EvalSet",
    "EvalSetError",
    "EvalSets",
    "load_eval_sets",
    "parse_eval_sets",
]

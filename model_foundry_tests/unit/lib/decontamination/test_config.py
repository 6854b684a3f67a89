"""The eval-sets file: one sentence naming the file and the field for anything unusable."""

from __future__ import annotations

from pathlib import Path

import pytest

from model_foundry.lib.decontamination.config import EvalSetError, load_eval_sets
from model_foundry.lib.errors import UserError


def _write(tmp_path: Path, text: str) -> Path:
    (tmp_path / "evals").mkdir(exist_ok=True)
    (tmp_path / "evals" / "he.jsonl").write_text('{"task_id": "t/0", "prompt": "p"}\n')
    path = tmp_path / "eval_sets.yaml"
    path.write_text(text)
    return path


def test_unset_means_nothing_is_checked(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("MODEL_FOUNDRY_EVAL_SETS", raising=False)
    assert load_eval_sets() is None


def test_relative_paths_are_relative_to_the_file(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = _write(tmp_path, "eval_sets:\n  he:\n    path: evals/he.jsonl\n    id: task_id\n"
                  "    text: prompt\n")  # fmt: skip
    monkeypatch.setenv("MODEL_FOUNDRY_EVAL_SETS", str(path))
    monkeypatch.chdir(tmp_path / "evals")
    config = load_eval_sets()
    assert config is not None and config.ngram == 13 and config.threshold == 0.5
    (one,) = config.sets
    assert one.path == tmp_path / "evals" / "he.jsonl" and one.text_fields == ("prompt",)


@pytest.mark.parametrize(
    ("body", "names"),
    [
        ("eval_sets:\n  he:\n    id: task_id\n    text: [prompt]\n", "eval_sets.he.path"),
        ("eval_sets:\n  he:\n    path: evals/he.jsonl\n    text: [prompt]\n", "eval_sets.he.id"),
        ("eval_sets:\n  he:\n    path: evals/he.jsonl\n    id: task_id\n", "eval_sets.he.text"),
        ("eval_sets:\n  he:\n    path: evals/gone.jsonl\n    id: i\n    text: t\n",
         "eval_sets.he.path"),
        ("eval_sets:\n  he:\n    path: evals/he.jsonl\n    id: i\n    text: []\n",
         "eval_sets.he.text"),
        ("eval_sets: {}\n", "eval_sets"),
        ("evals: {}\n", "eval_sets"),
        ("ngram: 0\neval_sets:\n  he: {path: evals/he.jsonl, id: i, text: t}\n", "ngram"),
        ("threshold: 2\neval_sets:\n  he: {path: evals/he.jsonl, id: i, text: t}\n",
         "threshold"),
        ("eval_sets: [\n", "cannot be read"),
    ],
)  # fmt: skip
def test_an_unusable_file_is_one_sentence_naming_the_file_and_field(
    tmp_path: Path, body: str, names: str
) -> None:
    path = _write(tmp_path, body)
    with pytest.raises(EvalSetError) as caught:
        load_eval_sets(path)
    message = str(caught.value)
    assert str(path) in message and names in message and "\n" not in message
    assert isinstance(caught.value, UserError)


def test_a_missing_eval_sets_file_is_named(tmp_path: Path) -> None:
    with pytest.raises(EvalSetError, match=r"gone\.yaml.*MODEL_FOUNDRY_EVAL_SETS"):
        load_eval_sets(tmp_path / "gone.yaml")

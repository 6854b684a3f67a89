"""Scores, held-back rows and the index kept on disk."""

from __future__ import annotations

import json
import os
from pathlib import Path

import numpy as np
import pytest

from model_foundry.lib.decontamination.config import EvalSet, EvalSets
from model_foundry.lib.decontamination.index import Index, index_path, load_index
from model_foundry.lib.decontamination.match import Decontaminator, decontaminator

QUESTION = (
    "Write a function that takes a list of words and returns the words grouped by their "
    "sorted letters so that every anagram ends up in the same group of the result"
)
ANSWER = "return group_by sorted letters of each word in the list of words given as input"
ITEMS = [
    {"id": "A/0", "q": QUESTION, "a": ANSWER},
    {"id": "A/1", "q": "What is the capital of France", "a": "Paris"},
    {"id": "A/2", "q": "日本で一番長い川は何という名前ですか。", "a": "信濃川です。"},
]


def _config(tmp_path: Path, threshold: float = 0.5) -> EvalSets:
    path = tmp_path / "evals.jsonl"
    if not path.exists():
        path.write_text("".join(json.dumps(i, ensure_ascii=False) + "\n" for i in ITEMS))
    one = EvalSet("mine", path, "id", ("q", "a"), tmp_path / "e.yaml")
    return EvalSets(tmp_path / "e.yaml", (one,), 13, threshold)


def _checker(tmp_path: Path, threshold: float = 0.5) -> Decontaminator:
    found = decontaminator(_config(tmp_path, threshold), tmp_path / "index")
    assert found is not None
    return found


def test_the_item_verbatim_or_reshaped_scores_one(tmp_path: Path) -> None:
    check = _checker(tmp_path)
    rows = [
        QUESTION + "\n" + ANSWER,
        QUESTION.upper(),
        "   ".join(QUESTION.split()),
        f"Here is a task I found:\n> {QUESTION}.\nCan you solve it?",
    ]
    for match in check.check(rows):
        assert match is not None and match.item_id == "A/0" and match.score == 1.0
    assert check.figures["mine"].rows_held_back == 4


def test_a_share_of_the_item_is_scored_as_that_share(tmp_path: Path) -> None:
    check = _checker(tmp_path)
    words = QUESTION.split()
    # The first 20 of its 31 words: 8 of the question's 19 13-grams (the question is a field).
    (match,) = check.check([" ".join(words[:20])])
    assert len(words) == 31
    assert match is not None and match.score == pytest.approx(8 / 19, abs=1e-4)
    assert match.span == " ".join(words[:20]).lower()
    figures = check.figures["mine"]
    assert figures.rows_held_back == 0 and figures.rows_under_threshold == 1


def test_a_field_alone_is_scored_on_that_field(tmp_path: Path) -> None:
    (match,) = _checker(tmp_path).check(["Please: " + ANSWER])
    assert match is not None and match.item_id == "A/0" and match.score == 1.0


def test_an_item_shorter_than_n_is_matched_whole_and_only_whole(tmp_path: Path) -> None:
    check = _checker(tmp_path)
    whole, part, apart = check.check(
        ["Q: what is the capital of FRANCE? paris!", "the capital of France", "Paris is nice"]
    )
    assert whole is not None and whole.item_id == "A/1" and whole.score == 1.0
    assert part is None and apart is None


def test_japanese_is_found_in_longer_text_and_topic_words_are_not(tmp_path: Path) -> None:
    check = _checker(tmp_path)
    found, clean = check.check(
        ["宿題です。日本 で 一番長い川は何という名前ですか。教えて", "信濃川は日本一長い川です。"]
    )
    assert found is not None and found.item_id == "A/2" and found.score == 1.0
    assert clean is None


def test_a_stricter_threshold_keeps_a_partial_row(tmp_path: Path) -> None:
    row = " ".join(QUESTION.split()[:25])
    assert _checker(tmp_path, 0.5).check([row])[0].score >= 0.5  # type: ignore[union-attr]
    strict = _checker(tmp_path, 0.9)
    strict.check([row])
    assert strict.figures["mine"].rows_held_back == 0
    assert strict.as_dict()["eval_sets"]["mine"]["rows_under_threshold"] == 1


def test_the_index_is_built_once_per_eval_file_version(tmp_path: Path) -> None:
    config = _config(tmp_path)
    (one,) = config.sets
    first, built = load_index(one, 13, tmp_path / "index")
    assert built and first.items == 3
    again, built = load_index(one, 13, tmp_path / "index")
    assert not built and (again.keys == first.keys).all()
    old = index_path(one, 13, tmp_path / "index")
    with one.path.open("a") as f:
        f.write(json.dumps({"id": "A/3", "q": "one more", "a": "item"}) + "\n")
    os.utime(one.path, ns=(1, 1))
    changed, built = load_index(one, 13, tmp_path / "index")
    assert built and changed.items == 4 and not old.exists()
    assert len(list((tmp_path / "index").glob("*.npz"))) == 1


def test_items_hit_most_are_counted_per_row(tmp_path: Path) -> None:
    check = _checker(tmp_path)
    check.check([QUESTION, QUESTION, "what is the capital of France? Paris", "nothing here"])
    figures = check.as_dict()["eval_sets"]["mine"]
    assert figures["rows_checked"] == 4 and figures["rows_held_back"] == 3
    assert figures["items_hit_most"] == [
        {"item_id": "A/0", "rows": 2},
        {"item_id": "A/1", "rows": 1},
    ]


def test_the_filter_before_the_search_passes_every_key_and_few_others() -> None:
    rng = np.random.default_rng(7)
    keys = np.sort(rng.integers(0, 2**64 - 1, 200_000, dtype=np.uint64))
    index = Index(
        name="x",
        ngram=13,
        keys=keys,
        entry_item=np.zeros(len(keys), np.int32),
        entry_field=np.zeros(len(keys), np.int8),
        item_ids=np.array(["x"]),
        item_total=np.array([len(keys)], np.int32),
        field_total=np.zeros((1, 1), np.int32),
        short_lengths=(),
    )
    shuffled = rng.permutation(keys)
    assert len(index.may_hold(shuffled)) == len(keys)
    others = rng.integers(0, 2**64 - 1, 200_000, dtype=np.uint64)
    others = others[~np.isin(others, keys)]
    # 16 slots a key: about one in sixteen of the others gets through.
    assert len(index.may_hold(others)) < 0.1 * len(others)

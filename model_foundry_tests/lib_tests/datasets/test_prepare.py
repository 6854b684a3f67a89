"""The export's bookkeeping around hygiene: filters counted, one record per cluster kept by
the stated rule, every record in its group's split, figures that add up."""

from __future__ import annotations

import copy
from collections.abc import Hashable, Mapping, Sequence
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from model_foundry.lib.datasets.layouts import SESSIONS
from model_foundry.lib.datasets.prepare import prepare, varying_text


class RecordingHygiene:
    """A hygiene whose answers the test chooses: scrub replaces one word, clusters and splits
    come from tables, and every call is kept for the asserts."""

    def __init__(self, clusters: dict[str, str], splits: dict[str, str], joins: int = 0) -> None:
        self.cluster_of = clusters
        self.split_of = splits
        self.joins = joins
        self.seen_texts: list[str] = []

    def scrub(self, record: dict[str, Any]) -> tuple[dict[str, Any], Mapping[str, int]]:
        clean = copy.deepcopy(record)
        found = 0
        for m in clean["messages"]:
            if m["content"] and "hunter2" in m["content"]:
                m["content"] = m["content"].replace("hunter2", "[REDACTED:password]")
                found += 1
        return clean, {"password": found} if found else {}

    def cluster_index(self) -> RecordingHygiene:
        self.added: list[tuple[str, float]] = []
        return self

    def add(self, text: str, priority: float) -> None:
        self.seen_texts.append(text)
        self.added.append((self.cluster_of[text.split("\n")[0]], priority))

    def clusters(self) -> np.ndarray:
        """Per text, the position its cluster keeps: the lowest priority, then the first."""
        best: dict[str, int] = {}
        for n, (cluster, prio) in enumerate(self.added):
            if cluster not in best or prio < self.added[best[cluster]][1]:
                best[cluster] = n
        return np.array([best[c] for c, _ in self.added])

    def splits(
        self, groups: Sequence[str], clusters: Sequence[Hashable] | None
    ) -> tuple[list[str], int]:
        self.split_groups = list(groups)
        return [self.split_of[g] for g in groups], self.joins


def _record(rid: str, user: str, answers: int = 1, truncated: int = 0) -> dict[str, Any]:
    def m(role: str, content: str) -> dict[str, Any]:
        return {"role": role, "content": content, "tool_calls": []}

    messages = [m("system", "be brief"), m("user", user)]
    messages += [m("assistant", f"answer {n}") for n in range(answers)]
    record = dict.fromkeys(f.name for f in SESSIONS.schema)
    record.update(id=rid, messages=messages, first_at="2026-12-01T09:00", truncated_turns=truncated)
    return record


def test_duplicates_keep_the_longest_and_everyone_follows_its_cluster_split(
    tmp_path: Path,
) -> None:
    records = [
        _record("a", "task one", answers=1),
        _record("b", "task one again", answers=3),  # the longest of cluster c1: kept
        _record("c", "task two with hunter2"),
        _record("d", "task three", truncated=1),
        _record("e", "task four", answers=0),
    ]
    clusters = {"task one": "c1", "task one again": "c1", "task two with [REDACTED:password]": "c2"}
    clusters |= {"task three": "c3", "task four": "c4"}
    # Groups are named by the record each cluster keeps.
    splits = {"a": "train", "b": "train", "c": "test", "d": "train", "e": "test"}
    hygiene = RecordingHygiene(clusters, splits)
    prepared = prepare(
        records, hygiene, tmp_path / "spool.parquet", SESSIONS.schema, group_of=lambda r: r["id"]
    )
    out = [r for batch in prepared.batches() for r in batch]
    by_id = {r["id"]: r for r in out}
    assert [r["id"] for r in out] == ["a", "b", "c", "d", "e"]
    assert by_id["b"]["kept"] and by_id["a"]["dropped_by"] == "duplicate"
    assert by_id["d"]["dropped_by"] == "filter:truncated"
    assert by_id["e"]["dropped_by"] == "filter:no_assistant"
    assert prepared.removed_by_filter == {"no_assistant": 1, "truncated": 1}
    assert prepared.duplicates_removed == 1 and prepared.clusters == 4
    assert by_id["a"]["cluster_id"] == by_id["b"]["cluster_id"] == "b"
    assert {r["id"]: r["split"] for r in out} == {
        "a": "train", "b": "train", "c": "test", "d": "train", "e": "test",
    }  # fmt: skip
    # Scrubbed before anything else saw it: the clusters were computed on clean text.
    assert prepared.redactions_by_kind == {"password": 1}
    assert not any("hunter2" in t for t in hygiene.seen_texts)
    assert "be brief" not in varying_text(records[0])  # the shared system prompt is not text
    assert "hunter2" in records[2]["messages"][1]["content"]  # the source is left verbatim
    assert "[REDACTED:password]" in by_id["c"]["messages"][1]["content"]


def test_fan_out_samples_are_grouped_by_their_prompt_not_deduplicated(tmp_path: Path) -> None:
    records = [_record("s1", "same prompt"), _record("s2", "same prompt")]
    for r, thread in zip(records, ["w0", "w1"], strict=True):
        r.update(correlation_id="p1", thread=thread)
    hygiene = RecordingHygiene({}, {"p1": "test"})
    prepared = prepare(
        records, hygiene, tmp_path / "spool.parquet", SESSIONS.schema, filters=("empty",),
        group_of=lambda r: r["correlation_id"], deduplicate=False,
    )  # fmt: skip
    out = [r for batch in prepared.batches() for r in batch]
    assert [(r["kept"], r["split"], r["cluster_id"]) for r in out] == [
        (True, "test", "p1"),
        (True, "test", "p1"),
    ]
    assert prepared.duplicates_removed == 0


def test_an_unknown_filter_is_refused_by_name(tmp_path: Path) -> None:
    with pytest.raises(ValueError, match="unknown dataset filter"):
        prepare(
            [], RecordingHygiene({}, {}), tmp_path / "s.parquet", SESSIONS.schema,
            group_of=str, filters=("typo",),
        )  # fmt: skip

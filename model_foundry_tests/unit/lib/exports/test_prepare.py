"""The export's bookkeeping around hygiene: filters counted, one record per cluster kept by
the stated rule, every record in its group's split, figures that add up."""

from __future__ import annotations

import copy
import dataclasses
import json
import random
from collections.abc import Iterable, Iterator, Mapping
from pathlib import Path
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from model_foundry.lib.datasets.sample_export import export_samples
from model_foundry.lib.datasets.samples import write_samples
from model_foundry.lib.exports.hygiene import ExportHygiene
from model_foundry.lib.exports.layouts import SESSIONS
from model_foundry.lib.exports.prepare import prepare, varying_text
from model_foundry.lib.exports.published import ExportTarget
from model_foundry.lib.exports.workers import THEN, Then
from model_foundry.lib.gates.config import CAUSES, GateConfig
from model_foundry.lib.hygiene.measure import TextWorld, perturb
from model_foundry.lib.hygiene.record import RecordScrubber
from model_foundry.lib.hygiene.splits import hashed_split
from model_foundry.lib.tables.datasets import DatasetSampleRow


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

    def scrub_all(
        self, records: Iterable[dict[str, Any]], then: Then | None = None
    ) -> Iterator[tuple[dict[str, Any], Mapping[str, int]]]:
        for record in records:
            clean, counts = self.scrub(record)
            if then is not None:
                clean[THEN] = then(clean)
            yield clean, counts

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
        self, names: pa.Array, group_at: np.ndarray, clusters: np.ndarray | None
    ) -> tuple[np.ndarray, list[str], int]:
        self.split_groups = names.take(pa.array(group_at)).to_pylist()
        sides = sorted(set(self.split_of.values()))
        at = [sides.index(self.split_of[g]) for g in self.split_groups]
        return np.array(at, dtype=np.int8), sides, self.joins


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


def _sessions_on_both_sides(dataset: str, test_share: float) -> tuple[str, str]:
    """Two session ids that the stable hash alone sends to train and to test."""
    ratios = {"train": 1 - test_share, "test": test_share}
    ids = [f"session-{n}" for n in range(200)]
    train = next(i for i in ids if hashed_split(dataset, i, ratios) == "train")
    test = next(i for i in ids if hashed_split(dataset, i, ratios) == "test")
    return train, test


def _session(correlation_id: str, sentences: list[str]) -> dict[str, Any]:
    record = _record(f"{correlation_id}/main", " ".join(sentences))
    record.update(correlation_id=correlation_id, thread="main")
    return record


def _prepare_sessions(
    db_path: Path, spool: Path, records: list[dict[str, Any]]
) -> dict[str, dict[str, Any]]:
    hygiene = ExportHygiene(db_path, "agents", RecordScrubber(), test_share=0.5)
    prepared = prepare(
        records, hygiene, spool, SESSIONS.schema, group_of=lambda r: r["correlation_id"]
    )
    return {r["correlation_id"]: r for batch in prepared.batches() for r in batch}


def test_a_near_duplicate_session_takes_the_split_of_the_session_it_repeats(
    db_path: Path, tmp_path: Path
) -> None:
    """The real hygiene on a real DuckDB file: near-duplicate sessions are one split group, so
    the test split never holds a near duplicate of a train record; when new records link
    groups already stored on both sides, the new one goes to train and the merge is counted."""
    train_id, test_id = _sessions_on_both_sides("agents", 0.5)
    world = TextWorld(seed=31).records(3, sentences=20)
    original, rng = world[0], random.Random(2)
    copy = perturb(original, rng)
    first = _prepare_sessions(
        db_path, tmp_path / "first.parquet",
        [_session(train_id, original), _session(test_id, copy.split("  \n"))],
    )  # fmt: skip
    assert first[train_id]["cluster_id"] == first[test_id]["cluster_id"]
    # Alone, the hash sends them to different sides; linked by their cluster, to one.
    assert first[train_id]["split"] == first[test_id]["split"]
    # Two stored groups on different sides, then a new session close to both of them.
    a_id, b_id = _sessions_on_both_sides("agents-merge", 0.5)
    # Jaccard about 0.7 between the two, 0.85 between each and the bridge.
    shared, only_a, only_b = world[1][:14], world[1][14:17], world[2][:3]
    hygiene = ExportHygiene(db_path, "agents-merge", RecordScrubber(), test_share=0.5)
    stored = [_session(a_id, shared + only_a), _session(b_id, shared + only_b)]
    once = prepare(stored, hygiene, tmp_path / "m1.parquet", SESSIONS.schema,
                   group_of=lambda r: r["correlation_id"])  # fmt: skip
    sides = {r["correlation_id"]: r["split"] for b in once.batches() for r in b}
    assert sides == {a_id: "train", b_id: "test"} and once.split_joins == 0
    bridge = _session("session-bridge", shared + only_a + only_b)
    again = prepare(
        [*stored, bridge], hygiene, tmp_path / "m2.parquet", SESSIONS.schema,
        group_of=lambda r: r["correlation_id"],
    )  # fmt: skip
    after = {r["correlation_id"]: r for b in again.batches() for r in b}
    assert len({r["cluster_id"] for r in after.values()}) == 1
    assert {k: r["split"] for k, r in after.items()} == {
        a_id: "train", b_id: "test", "session-bridge": "train",
    }  # fmt: skip
    assert again.split_joins == 1


def test_gated_answers_stay_in_samples_parquet_and_are_counted_in_card_and_manifest(
    tmp_path: Path,
) -> None:
    db = tmp_path / "f.duckdb"
    question = "Explain in two sentences why the sky is blue during the day."
    planted = {
        "good": ("Air scatters blue light more than red, so the sky looks blue.", "stop"),
        "code": ("```python\nprint(sum(range(10)))\n```", "stop"),
        "japanese": ("空が青いのは、青い光が空気に強く散乱されるからです。", "stop"),
        "truncated": ("Air scatters blue light more than", "length"),
        "looping": ("\n".join(["The sky is blue because it is blue."] * 6), "stop"),
        "echoing": (question, "stop"),
        "wordless": ("... --- !!!", "stop"),
    }
    rows = [
        DatasetSampleRow(
            dataset="gated",
            version="v1",
            request_key=name,
            prompt_id=f"p-{name}",
            source="test",
            role="naughty",
            sample_index=0,
            messages=json.dumps([{"role": "user", "content": question}]),
            prompt=question,
            response=answer,
            reasoning=None,
            slot="naughty",
            model="m",
            params="{}",
            prompt_tokens=10,
            completion_tokens=10,
            finish_reason=finish,
            is_empty=False,
            is_truncated=finish == "length",
            run_id=None,
        )
        for name, (answer, finish) in planted.items()
    ]
    assert write_samples(db, rows) == len(rows)
    hygiene = RecordingHygiene({}, {f"p-{name}": "train" for name in planted})
    target = ExportTarget(tmp_path / "datasets", "gated", "v1")
    outcome = export_samples(db, target, hygiene, gates=GateConfig())

    parquet = pq.read_table(outcome.path / "samples.parquet").to_pylist()
    assert len(parquet) == len(planted)
    got = {r["id"]: (r["kept"], r["gate"], r["dropped_by"]) for r in parquet}
    assert got == {
        "good": (True, None, None),
        "code": (True, None, None),
        "japanese": (True, None, None),
        # The truncated answer is removed by the filter first and counted by its gate too.
        "truncated": (False, "cut_off", "filter:truncated"),
        "looping": (False, "repetition", "gate:repetition"),
        "echoing": (False, "echo", "gate:echo"),
        "wordless": (False, "empty", "gate:empty"),
    }
    kept = pq.read_table(outcome.path / "hf" / "samples" / "train.parquet")
    assert sorted(kept.column("id").to_pylist()) == ["code", "good", "japanese"]
    assert "gate" not in kept.column_names
    held = {**dict.fromkeys(CAUSES, 0), "cut_off": 1, "empty": 1, "repetition": 1, "echo": 1}
    manifest = json.loads((outcome.path / "manifest.json").read_text())
    assert manifest["held_back_by_gate"] == held
    assert manifest["rows_by_split"] == {"train": 3, "test": 0}
    card = (outcome.path / "README.md").read_text()
    assert (
        "held back by the quality gates, per cause (also counted when a filter removed "
        "them): cut_off: 1, echo: 1, empty: 1, noise_chars: 0, noise_consonants: 0, "
        "noise_count: 0, "
        "noise_digits: 0, noise_escapes: 0, noise_hex: 0, noise_kana: 0, noise_keyboard: 0, "
        "noise_layout: 0, noise_mojibake: 0, "
        "noise_particles: 0, noise_questions: 0, noise_scripts: 0, noise_stop_words: 0, "
        "noise_symbols: 0, "
        "noise_tokens: 0, noise_unfinished: 0, noise_word_length: 0, noise_words: 0, "
        "repetition: 1, unparsed: 0," in " ".join(card.split())
    )
    # A dataset whose thresholds switch the gates off keeps them (the truncated one is still
    # filtered).
    write_samples(db, [dataclasses.replace(r, version="v2") for r in rows])
    lenient = GateConfig(skip=frozenset(CAUSES))
    again = export_samples(db, ExportTarget(tmp_path / "datasets", "gated", "v2"), hygiene,
                           gates=lenient)  # fmt: skip
    assert again.figures.rows_by_split["train"] == len(planted) - 1
    assert again.figures.held_back_by_gate == dict.fromkeys(CAUSES, 0)


def test_a_gated_record_is_kept_by_its_cluster_only_when_all_of_it_is_gated(
    tmp_path: Path,
) -> None:
    """With gates and clusters both on (a recipe's rows), a near duplicate that passed its
    gates is kept over one that did not; ``text_of`` is what the clusters compare."""
    from model_foundry.lib.exports.prepare import Gates

    records = [_record("a", "task one"), _record("b", "task one again"), _record("c", "alone")]
    records[0]["gate"] = "answer"
    hygiene = RecordingHygiene({"A": "c1", "B": "c1", "C": "c2"}, dict.fromkeys("abc", "train"))
    schema = pa.schema([*SESSIONS.schema, pa.field("gate", pa.string())])
    prepared = prepare(
        records, hygiene, tmp_path / "spool.parquet", schema, group_of=lambda r: r["id"],
        filters=(), gates=Gates(("answer",), lambda r: r.get("gate")),
        text_of=lambda r: r["id"].upper(),
    )  # fmt: skip
    out = {r["id"]: r for batch in prepared.batches() for r in batch}
    assert hygiene.seen_texts == ["A", "B", "C"]
    assert out["a"]["dropped_by"] == "gate:answer" and out["b"]["kept"]
    assert out["a"]["cluster_id"] == out["b"]["cluster_id"] == "b"
    assert prepared.duplicates_removed == 0 and prepared.held_back_by_gate == {"answer": 1}

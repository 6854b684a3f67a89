"""Near duplicates: the measured recall holds, boilerplate does not merge distinct records,
clusters keep the stated record, and the sketch stays in numpy arrays."""

from __future__ import annotations

import random
from dataclasses import replace

import numpy as np

from model_foundry.lib.hygiene.dedup import DedupConfig, find_duplicates
from model_foundry.lib.hygiene.measure import (
    TextWorld,
    false_merge_rate,
    pair_recall,
    perturb,
    perturbed_recall,
)


def test_pairs_at_known_similarity_are_found() -> None:
    config = DedupConfig()
    for similarity in (0.8, 0.85, 0.9):
        assert pair_recall(similarity, config, pairs=150) >= 0.99
    # The trap the defaults avoid: an LSH crossover at the cutoff finds a third of them.
    crossover_at_cutoff = replace(config, bands=5, rows=25, threshold=0.9)
    assert pair_recall(0.9, crossover_at_cutoff, pairs=150) < 0.5


def test_perturbed_copies_join_their_original() -> None:
    recall, lowest = perturbed_recall(DedupConfig(), count=120)
    assert recall >= 0.99
    assert lowest < 0.8  # the copies are not trivially close


def test_shared_boilerplate_does_not_merge_distinct_records() -> None:
    assert false_merge_rate(DedupConfig(), count=200) <= 0.01
    # Without dropping common shingles the same records do merge: the test can fail.
    assert false_merge_rate(replace(DedupConfig(), common_share=1.0), count=200) > 0.5


def test_exact_duplicates_and_the_kept_record() -> None:
    rng = random.Random(4)
    original = TextWorld().records(3)
    texts = [
        " ".join(original[0]),
        " ".join(original[1]),
        "  ".join(original[0]).upper(),  # exact after normalisation
        perturb(original[1], rng),
        " ".join(original[2]),
    ]
    result = find_duplicates(texts)
    assert result.exact_duplicates == 1
    assert result.cluster.tolist() == [0, 1, 0, 1, 4]
    assert result.keep.tolist() == [True, True, False, False, True]
    # A priority moves the kept record: lowest priority first, then the earliest.
    preferred = find_duplicates(texts, priority=[0, 5, 0, -1, 0])
    assert preferred.cluster.tolist() == [0, 3, 0, 3, 4]


def test_band_keys_are_one_array() -> None:
    texts = [" ".join(s) for s in TextWorld().records(50)]
    result = find_duplicates(texts)
    assert result.band_bytes == 50 * DedupConfig().bands * 8
    assert result.clusters == 50 and isinstance(result.cluster, np.ndarray)

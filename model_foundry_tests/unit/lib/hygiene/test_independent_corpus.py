"""The exports' scrubber against a corpus it was not written from (devtools/secrets_corpus/:
generated from public descriptions of credential files, connection strings, command lines and
token formats, with no import from lib/hygiene). Run with ``-s`` to see the report per kind,
per context and per place in a session."""

from __future__ import annotations

import pytest

from model_foundry.devtools.secrets_corpus import corpus, evaluate
from model_foundry.lib.hygiene.record import RecordScrubber


@pytest.mark.parametrize("seed", [7, 11])
def test_no_value_of_the_corpus_survives_whole_or_in_fragments(seed: int) -> None:
    scrubber = RecordScrubber(salt=b"independent-corpus")
    cases = corpus(seed)
    # As an export scrubs a string: one that parses as JSON is scrubbed inside.
    report = evaluate(cases, lambda text: scrubber.scrub(text)[0])
    print(report.format())
    assert report.total.plants >= 400 and len(report.by_kind) >= 50
    assert report.recall == 1.0, report.format()
    assert report.fragment_free_share == 1.0, report.format()
    # Home folders, private IPs and e-mails that the corpus counts as harmless are removed
    # by the PII rules on purpose; everything else of the hard negatives stays.
    assert report.negatives_kept_share >= 0.95, report.format()
    assert report.keep_words_kept_share >= 0.99, report.format()

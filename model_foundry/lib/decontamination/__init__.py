"""Decontamination: exported rows checked against the lab's evaluation sets.

- ``config``: the eval-sets file (``MODEL_FOUNDRY_EVAL_SETS``), n and the threshold.
- ``loaders``: an eval set's items from JSON Lines, JSON, CSV, Parquet or a save_to_disk folder.
- ``ngrams``: normalised tokens (characters for scripts without spaces) and hashed n-grams.
- ``index``: an eval set's n-gram index, built once per eval file version and kept on disk.
- ``match``: rows checked a batch at a time; their best match, score and the figures.

Plain code with no knowledge of its callers: ``lib/exports`` imports it, never the other way
round.
"""

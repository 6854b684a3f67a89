"""Dataset collection: prompt sources -> the profile's roles -> ``dataset_samples`` -> export.

- ``prompts``: prompt files and inbox sessions as prompts, duplicates dropped and named.
- ``samples``: ``dataset_samples``' rows (filled from the collection's built-in recipe,
  ``lib/recipes/collect.py``) and its one-line report.
- ``preferences``: the preference pairs the judge recipe's verdicts make
  (``lib/recipes/collect_judge.py``).
- ``sample_export``: a version's samples (and pairs) through ``lib/exports``.

``model-foundry dataset collect`` runs the collection outside Dagster's daemon. Writing an
export folder is ``lib/exports``; the quality gates are ``lib/gates``.
"""

from model_foundry.lib.datasets.samples import collection_line, dataset_task

__all__ = ["collection_line", "dataset_task"]

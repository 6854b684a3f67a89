"""Dataset collection: prompt sources -> the profile's roles -> ``dataset_samples`` -> export.

- ``prompts``: prompt files and inbox sessions as prompts, duplicates dropped and named.
- ``samples``: the samples work kind (through ``lib/llm``), its rows and one-line report.
- ``judge``, ``preferences``: the judge's comparisons and the preference pairs they make.
- ``sample_export``: a version's samples (and pairs) through ``lib/exports``.

``model-foundry dataset collect`` runs the collection outside Dagster's daemon. Writing an
export folder is ``lib/exports``; the quality gates are ``lib/gates``.
"""

from model_foundry.lib.datasets.samples import collection_line, dataset_task

__all__ = ["collection_line", "dataset_task"]

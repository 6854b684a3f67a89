"""Dataset collection: prompt sources -> the profile's roles -> ``dataset_samples`` -> export.

- ``prompts``: prompt files and inbox sessions as prompts, duplicates dropped and named.
- ``samples``: the samples work kind (through ``lib/llm``), its rows and one-line report.
- ``names``: the names an export may use, and the versioned folder they make.

``model-foundry dataset collect`` runs the collection outside Dagster's daemon.
"""

from model_foundry.lib.datasets.names import UnsafeNameError, check_name
from model_foundry.lib.datasets.samples import collection_line, dataset_task

__all__ = ["UnsafeNameError", "check_name", "collection_line", "dataset_task"]

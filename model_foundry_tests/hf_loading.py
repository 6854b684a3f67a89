"""Loading an export folder with ``datasets`` as a user would: offline, in its own environment.

The environments (datasets 3.6.0 and 5.x) are built once into the cache by
``make hf-datasets``; where one cannot be built (no package index) the test skips and says so.
"""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path
from typing import Any

import pytest

from model_foundry.devtools import hf_datasets

# Run inside the datasets environment with the export folder as its argument: prints the card's
# parsed header and, for every config and split, the rows ``load_dataset(folder, config)``
# gives, as one JSON object. It imports nothing from model-foundry, which that environment lacks.
LOADER = """\
import json
import sys

from datasets import load_dataset
from huggingface_hub import DatasetCard

folder = sys.argv[1]
card = DatasetCard.load(f"{folder}/README.md")
header = card.data.to_dict()
loaded = {}
for config in header["configs"]:
    name = config["config_name"]
    ds = load_dataset(folder, name)
    loaded[name] = {split: [dict(r) for r in ds[split]] for split in ds}
print(json.dumps({"header": header, "loaded": loaded}, default=str))
"""


def load_offline(environment: str, folder: Path, hf_home: Path) -> dict[str, Any]:
    """``{"header": card header, "loaded": {config: {split: rows}}}`` as ``load_dataset``
    gives them in ``environment``, with the Hub out of reach."""
    try:
        python = hf_datasets.build(environment, log=False)
    except hf_datasets.EnvironmentUnavailable as exc:
        pytest.skip(f"{environment} cannot be built here (no package index?): {exc}")
    env = {**os.environ, "HF_DATASETS_OFFLINE": "1", "HF_HUB_OFFLINE": "1"}
    env["HF_HOME"] = str(hf_home)
    done = subprocess.run(
        [str(python), "-c", LOADER, str(folder)], capture_output=True, text=True, env=env
    )
    assert done.returncode == 0, done.stderr[-3000:]
    return json.loads(done.stdout)

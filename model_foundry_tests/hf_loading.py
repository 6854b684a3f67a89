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

LOADER = Path(__file__).parent / "hf_loader.py"


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
        [str(python), str(LOADER), str(folder)], capture_output=True, text=True, env=env
    )
    assert done.returncode == 0, done.stderr[-3000:]
    return json.loads(done.stdout)

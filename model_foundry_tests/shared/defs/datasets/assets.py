"""Dataset collection against the slot simulator over real HTTP and real DuckDB files.

Export read back with pandas; a collection killed with SIGKILL and run again does each
request once; two collections writing at once while a reader queries all succeed.

What the unit, integration and system tests of ``defs/datasets/test_assets.py`` share."""

from __future__ import annotations

from typing import Any

import dagster as dg


def metadata(result: dg.ExecuteInProcessResult) -> dict[str, Any]:
    m = result.asset_materializations_for_node("dataset_samples")[0].metadata
    return {k: v.value for k, v in m.items()}

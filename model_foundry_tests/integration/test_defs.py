"""The whole set of Dagster definitions, pinned down: the integration tests."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from model_foundry_tests.tiers import REPO_ROOT, TESTS_ROOT

SNAPSHOT = TESTS_ROOT / "snapshots" / "defs.json"


def test_the_code_location_loads_as_dagster_loads_it(tmp_path: Path) -> None:
    # The daemon and the UI import model_foundry.definitions through workspace.yaml and refuse
    # a module that holds more than one Definitions object; importing it here would not show it.
    root = REPO_ROOT
    result = subprocess.run(
        [
            str(Path(sys.executable).parent / "dagster"),
            "definitions",
            "validate",
            "-w",
            str(root / "workspace.yaml"),
        ],
        cwd=root,
        # An instance of the test's own, never the developer's data/dagster_home.
        env=dict(os.environ, DAGSTER_HOME=str(tmp_path)),
        capture_output=True,
        text=True,
        timeout=240,
    )
    assert result.returncode == 0, result.stdout[-3000:] + result.stderr[-3000:]
    assert "Validation successful for code location model_foundry" in result.stdout + result.stderr


def test_loading_the_code_location_leaves_the_heavy_libraries_unloaded() -> None:
    # Every run process and code server loads the definitions before it does anything, and
    # the inbox drains (most runs) draw nothing, send no request and build no DataFrame: the
    # plotting library, the model SDK and pandas load where they are used.
    probe = (
        "import sys\n"
        "from model_foundry.definitions import defs\n"
        "defs().get_repository_def().get_all_jobs()\n"
        "print(' '.join(m for m in ('matplotlib', 'openai', 'pandas') if m in sys.modules))\n"
    )
    result = subprocess.run(
        [sys.executable, "-c", probe],
        cwd=REPO_ROOT,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert result.returncode == 0, result.stderr[-3000:]
    assert result.stdout.strip() == "", f"loaded with the definitions: {result.stdout.strip()}"

"""The DatasetRecipe component as a Dagster user meets it: ``dg scaffold defs`` writes a recipe
into a project's defs folder, the project loads it beside its other definitions, and a real
Dagster instance materializes it on the slot simulator. A bad recipe leaves the rest loaded
and fails its own asset with its sentence."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import dagster as dg
import pytest
import yaml

from model_foundry.lib import storage
from model_foundry_tests.dagster_helpers import quiet_instance
from model_foundry_tests.pipeline_helpers import count
from model_foundry_tests.tiers import REPO_ROOT

pytestmark = pytest.mark.timeout(300)

PROJECT = "recipe_test_project"
PYPROJECT = f"""
[project]
name = "recipe-test-project"
version = "0.0.0"

[tool.dg]
directory_type = "project"

[tool.dg.project]
root_module = "{PROJECT}"
registry_modules = ["model_foundry"]
"""
DEFINITIONS = """
from pathlib import Path

import dagster as dg


@dg.definitions
def defs() -> dg.Definitions:
    return dg.load_from_defs_folder(path_within_project=Path(__file__).parent)
"""
# A recipe's asset needs the code location's resources: the project registers them as
# model_foundry's own defs folder does.
RESOURCES = """
import dagster as dg

from model_foundry.defs.resources import resources_from_env


@dg.definitions
def resources() -> dg.Definitions:
    return dg.Definitions(resources=resources_from_env())
"""
OTHER_ASSET = """
import dagster as dg


@dg.asset
def other_asset() -> int:
    return 1
"""


def _project(root: Path) -> Path:
    defs = root / PROJECT / "defs"
    defs.mkdir(parents=True)
    (root / "pyproject.toml").write_text(PYPROJECT, encoding="utf-8")
    (root / PROJECT / "__init__.py").write_text("", encoding="utf-8")
    (defs / "__init__.py").write_text("", encoding="utf-8")
    (defs / "other.py").write_text(OTHER_ASSET, encoding="utf-8")
    (defs / "resources.py").write_text(RESOURCES, encoding="utf-8")
    (root / PROJECT / "definitions.py").write_text(DEFINITIONS, encoding="utf-8")
    return defs


def _dg(root: Path, *args: str) -> subprocess.CompletedProcess[str]:
    bin_dir = Path(sys.executable).parent
    env = dict(
        os.environ,
        PATH=f"{bin_dir}{os.pathsep}{os.environ.get('PATH', '')}",
        PYTHONPATH=os.pathsep.join([str(REPO_ROOT), str(root)]),
        DAGSTER_HOME=str(root / "dagster_home"),
    )
    (root / "dagster_home").mkdir(exist_ok=True)
    return subprocess.run(
        [str(bin_dir / "dg"), *args], cwd=root, env=env, capture_output=True, text=True,
        timeout=240,
    )  # fmt: skip


def test_scaffolded_recipe_loads_and_materializes_and_a_bad_one_fails_alone(
    tmp_path: Path, fast_slots: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    root = tmp_path / "project"
    defs = _project(root)
    listed = _dg(root, "list", "components")
    assert "model_foundry.DatasetRecipe" in listed.stdout, listed.stdout + listed.stderr
    made = _dg(root, "scaffold", "defs", "model_foundry.DatasetRecipe", "recipes/questions")
    assert made.returncode == 0, made.stdout + made.stderr
    written = yaml.safe_load((defs / "recipes" / "questions" / "defs.yaml").read_text())
    assert written["type"] == "model_foundry.DatasetRecipe"
    assert written["attributes"]["name"] == "questions"
    # A second recipe names a column it lacks.
    broken = yaml.safe_load((defs / "recipes" / "questions" / "defs.yaml").read_text())
    broken["attributes"]["name"] = "broken"
    broken["attributes"]["columns"][2]["prompt"] = "{{ qestion }}"
    (defs / "recipes" / "broken").mkdir()
    broken_path = defs / "recipes" / "broken" / "defs.yaml"
    broken_path.write_text(yaml.safe_dump(broken), encoding="utf-8")
    checked = _dg(root, "check", "defs")
    sentence = (
        f"{broken_path}: columns.answer.prompt: names column 'qestion', which the recipe "
        "does not have"
    )
    assert checked.returncode == 0, checked.stdout + checked.stderr
    assert sentence in checked.stdout + checked.stderr

    db = tmp_path / "recipes.duckdb"
    monkeypatch.setenv("MODEL_FOUNDRY_DUCKDB", str(db))
    monkeypatch.setenv("MODEL_FOUNDRY_SLOTS", str(fast_slots))
    monkeypatch.setenv("MODEL_FOUNDRY_SLOT_LIMITER", "flock")
    monkeypatch.delenv("NATS_URL", raising=False)
    monkeypatch.syspath_prepend(str(root))
    loaded = dg.load_from_defs_folder(path_within_project=defs)
    keys = {k.to_user_string() for k in loaded.resolve_asset_graph().get_all_asset_keys()}
    assert keys == {"other_asset", "recipe_questions", "recipe_questions_export", "recipe_broken"}
    with quiet_instance() as instance:
        result = loaded.resolve_job_def("recipe_questions_job").execute_in_process(
            instance=instance
        )
        assert result.success
        meta = result.asset_materializations_for_node("recipe_questions")[0].metadata
        assert meta["rows"].value == 5 and meta["llm_cells_unanswered"].value == 0
        # The view's columns and its rows, kept first, then held back with their causes.
        view = meta["dagster/column_schema"].value.columns
        assert {"topic", "question", "answer", "score_helpful"} <= {c.name for c in view}
        previewed = [r.data for r in meta["preview"].value.records]
        with storage.connect(db, read_only=True) as con:
            stored = con.execute(
                "SELECT row_id::VARCHAR, coalesce(causes, 'rejected'), rejected "
                "FROM recipe_questions ORDER BY rejected, row_index"
            ).fetchall()
        assert [(r["id"], r["cause"]) for r in previewed] == [
            (i, c if rejected else "kept") for i, c, rejected in stored
        ]
        assert all(r["text"].startswith('{"topic": ') for r in previewed)
        assert count(db, "SELECT count(*) FROM recipe_questions WHERE score_helpful >= 1") == 5
        failed = dg.materialize(
            [loaded.resolve_assets_def("recipe_broken")], instance=instance,
            raise_on_error=False,
        )  # fmt: skip
        assert not failed.success
        failure = next(e for e in failed.all_events if e.is_step_failure)
        assert failure.step_failure_data.user_failure_data.description == sentence

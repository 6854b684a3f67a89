"""What the Dagster UI shows of an export asset, read the way the UI reads it.

``dagster-webserver`` runs on ``workspace.yaml`` as ``make up`` starts it (a temporary
``DAGSTER_HOME``, SQLite storage), the session export is launched through its GraphQL API as
the UI's Materialize button launches it, and the same API then gives what the asset's page
shows: its blocking checks and their evaluations, and the materialization's column schema,
row count and preview of kept and held-back records."""

from __future__ import annotations

import json
import subprocess
import urllib.request
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from model_foundry.defs import keys
from model_foundry.defs.export_checks import EVAL_SETS_CHECK, HELD_BACK_CHECK, SECRET_CHECK
from model_foundry.devtools.devstack import write_dagster_home
from model_foundry.devtools.ports import free_port
from model_foundry.devtools.sample_events import sample_events
from model_foundry.lib import settings
from model_foundry_tests.pipeline_helpers import clean_env, dagster_bin, stop_process, wait_for
from model_foundry_tests.shared.defs.datasets.session_dataset import _store

pytestmark = pytest.mark.timeout(300)

LAUNCH = """
mutation Launch($params: ExecutionParams!) {
  launchRun(executionParams: $params) {
    __typename
    ... on LaunchRunSuccess { run { runId } }
    ... on PythonError { message }
    ... on RunConfigValidationInvalid { errors { message } }
  }
}
"""
CHECKS = """
{ assetNodes { assetKey { path }
  assetChecksOrError { ... on AssetChecks { checks { name blocking } } } } }
"""
EXPORTS = (keys.SESSION_DATASET, keys.DATASET_SAMPLES, keys.DATASET_JUDGEMENTS)
STATUS = "query S($id: ID!) { runOrError(runId: $id) { ... on Run { status } } }"
# What the asset's page reads: its checks with their last evaluation, and the metadata of
# its latest materialization.
ASSET = """
query Asset($key: AssetKeyInput!) {
  assetNodeOrError(assetKey: $key) {
    ... on AssetNode {
      assetChecksOrError {
        __typename
        ... on AssetChecks {
          checks {
            name
            blocking
            executionForLatestMaterialization { status evaluation { success } }
          }
        }
      }
    }
  }
  assetOrError(assetKey: $key) {
    ... on Asset {
      assetMaterializations(limit: 1) {
        metadataEntries {
          label
          __typename
          ... on IntMetadataEntry { intValue }
          ... on TableSchemaMetadataEntry { schema { columns { name type } } }
          ... on TableMetadataEntry { table { records schema { columns { name } } } }
        }
      }
    }
  }
}
"""


def graphql(url: str, query: str, variables: dict[str, Any]) -> dict[str, Any]:
    body = json.dumps({"query": query, "variables": variables}).encode()
    request = urllib.request.Request(
        f"{url}/graphql", data=body, headers={"Content-Type": "application/json"}
    )
    with urllib.request.urlopen(request, timeout=30) as response:
        payload = json.loads(response.read())
    assert "errors" not in payload, payload
    return payload["data"]


def _up(url: str) -> bool:
    try:
        with urllib.request.urlopen(f"{url}/server_info", timeout=5) as response:
            return response.status == 200
    except OSError:
        return False


@pytest.fixture(name="webserver")
def webserver_fixture(tmp_path: Path) -> Iterator[str]:
    """The UI as ``make up`` starts it, on an inbox of sample agent sessions."""
    home = write_dagster_home(tmp_path / "dagster_home")
    data = tmp_path / "data"
    data.mkdir()
    db = data / "foundry.duckdb"
    _store(db, list(sample_events(300, sessions=8, seed=5)), 1)
    env = clean_env(
        DAGSTER_HOME=str(home), MODEL_FOUNDRY_DATA_DIR=str(data), MODEL_FOUNDRY_DUCKDB=str(db)
    )
    env.pop("MODEL_FOUNDRY_EVAL_SETS", None)
    port = free_port()
    # The UI and the daemon, as ``make up`` starts them: the instance's run queue
    # (dagster.yaml's ``concurrency``) holds a launched run until the daemon dequeues it.
    commands = [
        [dagster_bin("dagster-daemon"), "run", "-w", "workspace.yaml"],
        [dagster_bin("dagster-webserver"), "-w", "workspace.yaml", "-h", "127.0.0.1",
         "-p", str(port)],
    ]  # fmt: skip
    procs = []
    with (tmp_path / "dagster.log").open("w") as log:
        for command in commands:
            procs.append(
                subprocess.Popen(
                    command,
                    cwd=settings.PROJECT_ROOT,
                    env=env,
                    stdout=log,
                    stderr=subprocess.STDOUT,
                    # Its own process group: stopping it stops its code server and runs too.
                    start_new_session=True,
                )
            )
        url = f"http://127.0.0.1:{port}"
        try:
            wait_for(lambda: _up(url), 120, "the webserver", proc=procs[1])
            yield url
        finally:
            for proc in procs:
                stop_process(proc)


def _launch(url: str, params: dict[str, Any]) -> dict[str, Any] | None:
    result = graphql(url, LAUNCH, {"params": params})["launchRun"]
    # The webserver answers before its code location has loaded; ask again until it has.
    return None if result["__typename"] == "PythonError" else result


def test_the_session_export_shows_its_checks_schema_rows_and_preview(webserver: str) -> None:
    path = keys.SESSION_DATASET.path
    params = {
        "selector": {
            "repositoryLocationName": "model_foundry",
            "repositoryName": "__repository__",
            "pipelineName": "__ASSET_JOB",
            "assetSelection": [{"path": path}],
            "assetCheckSelection": [
                {"assetKey": {"path": path}, "name": name}
                for name in (SECRET_CHECK, HELD_BACK_CHECK, EVAL_SETS_CHECK)
            ],
        },
        "mode": "default",
        "runConfigData": {"ops": {"session_dataset": {"config": {"name": "agents"}}}},
    }
    launched = wait_for(lambda: _launch(webserver, params), 90, "the code location to load")
    # Every export asset of the code location carries the three blocking checks.
    nodes = {
        tuple(n["assetKey"]["path"]): n["assetChecksOrError"].get("checks") or []
        for n in graphql(webserver, CHECKS, {})["assetNodes"]
    }
    for key in EXPORTS:
        defined = {(c["name"], c["blocking"]) for c in nodes[tuple(key.path)]}
        assert defined == {(n, True) for n in (SECRET_CHECK, HELD_BACK_CHECK, EVAL_SETS_CHECK)}
    assert launched["__typename"] == "LaunchRunSuccess", launched
    run_id = launched["run"]["runId"]

    def finished() -> str | None:
        status = graphql(webserver, STATUS, {"id": run_id})["runOrError"].get("status")
        return status if status in ("SUCCESS", "FAILURE", "CANCELED") else None

    assert wait_for(finished, 150, f"run {run_id}", interval_s=1) == "SUCCESS"
    found = graphql(webserver, ASSET, {"key": {"path": path}})

    checks = found["assetNodeOrError"]["assetChecksOrError"]
    assert checks["__typename"] == "AssetChecks", checks
    by_name = {c["name"]: c for c in checks["checks"]}
    assert set(by_name) == {SECRET_CHECK, HELD_BACK_CHECK, EVAL_SETS_CHECK}
    for check in by_name.values():
        assert check["blocking"], check
        latest = check["executionForLatestMaterialization"]
        assert latest and latest["status"] == "SUCCEEDED", check
        assert latest["evaluation"]["success"], check

    [materialization] = found["assetOrError"]["assetMaterializations"]
    entries = {e["label"]: e for e in materialization["metadataEntries"]}
    schema = entries["dagster/column_schema"]
    assert schema["__typename"] == "TableSchemaMetadataEntry"
    columns = {c["name"]: c["type"] for c in schema["schema"]["columns"]}
    assert {"messages", "turns"} <= set(columns), columns
    rows = entries["dagster/row_count"]
    assert rows["__typename"] == "IntMetadataEntry" and rows["intValue"] > 0
    preview = entries["preview"]
    assert preview["__typename"] == "TableMetadataEntry"
    records = [json.loads(r) for r in preview["table"]["records"]]
    assert [c["name"] for c in preview["table"]["schema"]["columns"]] == [
        "id", "split", "cause", "text"
    ]  # fmt: skip
    causes = {r["cause"] for r in records}
    assert "kept" in causes and causes - {"kept"}, records
    assert all(r["text"] for r in records)

"""Security: NATS with TLS and credentials, secrets kept out of Dagster and DuckDB, SQL only
with parameters.

The servers are real ``nats-server`` processes with ``authorization`` and ``tls`` blocks and
certificates made for the test by ``trustme``; the CLI runs as a user runs it; the inbox is
materialized through a real Dagster instance on disk, whose every file is then searched.
"""

from __future__ import annotations

import json
import os
import secrets
import subprocess
import sys
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import dagster as dg
import pytest
import trustme
from dagster._serdes import serialize_value

from model_foundry.devtools.local_nats import LocalNatsServer
from model_foundry_tests.tiers import REPO_ROOT

USER = "familiar"
# Distinctive values, so a leak anywhere is found by a plain substring search.
PASSWORD = "pw-" + secrets.token_hex(12)
TOKEN = "tok-" + secrets.token_hex(12)
PACKAGE = REPO_ROOT / "model_foundry"


@dataclass(frozen=True)
class Certs:
    ca: Path
    cert: Path
    key: Path


@pytest.fixture
def certs(tmp_path: Path) -> Certs:
    authority = trustme.CA()
    server = authority.issue_cert("127.0.0.1", "localhost")
    found = Certs(tmp_path / "ca.pem", tmp_path / "server.pem", tmp_path / "server.key")
    authority.cert_pem.write_to_path(str(found.ca))
    server.private_key_pem.write_to_path(str(found.key))
    with found.cert.open("wb") as fh:
        for blob in server.cert_chain_pems:
            fh.write(blob.bytes())
    return found


@pytest.fixture
def secure_nats(tmp_path: Path, certs: Certs) -> Iterator[LocalNatsServer]:
    with LocalNatsServer(
        store_dir=tmp_path / "nats-tls",
        user=USER,
        password=PASSWORD,
        tls_cert=str(certs.cert),
        tls_key=str(certs.key),
    ) as server:
        yield server


@pytest.fixture
def token_nats(tmp_path: Path) -> Iterator[LocalNatsServer]:
    with LocalNatsServer(store_dir=tmp_path / "nats-token", token=TOKEN) as server:
        yield server


def cli(*args: str, env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "model_foundry.cli", *args],
        capture_output=True,
        text=True,
        timeout=120,
        env=dict(os.environ, **env),
    )


def assert_one_sentence(message: str, url: str, *must_not_contain: str) -> None:
    assert url in message
    assert "\n" not in message.strip() and "Traceback" not in message
    for secret in must_not_contain:
        assert secret not in message


def test_cli_reads_credentials_from_the_environment(
    secure_nats: LocalNatsServer, token_nats: LocalNatsServer, certs: Certs
) -> None:
    tls_env = {
        "NATS_URL": secure_nats.url,
        "NATS_USER": USER,
        "NATS_PASSWORD": PASSWORD,
        "NATS_TLS_CA": str(certs.ca),
    }
    ok = cli("nats", "setup", env=tls_env)
    assert ok.returncode == 0, ok.stderr
    assert "created stream PIPELINE_EVENTS" in ok.stdout
    assert PASSWORD not in ok.stdout + ok.stderr

    wrong = "wrong-" + secrets.token_hex(6)
    refused = cli("nats", "setup", env={**tls_env, "NATS_PASSWORD": wrong})
    assert refused.returncode == 1
    assert_one_sentence(refused.stderr, secure_nats.url, wrong, PASSWORD)
    assert "refused the credentials" in refused.stderr

    by_token = cli("nats", "setup", env={"NATS_URL": token_nats.url, "NATS_TOKEN": TOKEN})
    assert by_token.returncode == 0, by_token.stderr
    bad_token = cli("nats", "setup", env={"NATS_URL": token_nats.url, "NATS_TOKEN": "nope"})
    assert bad_token.returncode == 1
    assert_one_sentence(bad_token.stderr, token_nats.url, TOKEN)


INJECTIONS = [
    "'); DROP TABLE pipeline_event_inbox; --",
    "x' OR '1'='1",
    '"; DELETE FROM pipeline_event_dead_letter; --',
    "1; ATTACH '/tmp/evil.duckdb' AS evil; --",
    "$1 ? ?? :name %s {payload}",
]


# --- SQL text is never built from data ---------------------------------------------------

SQL_METHODS = {"execute", "executemany", "sql", "query"}
# Interpolations read and accepted, each with the reason it cannot carry event content.
REVIEWED = {
    ("lib/storage.py", "self.memory_limit"): "checked against _MEMORY_LIMIT in __init__; SET "
    "takes no parameters",
    ("lib/storage.py", "int(self.threads)"): "a positive int checked in __init__ and cast by "
    "int(); SET takes no parameters",
    ("lib/tables/base.py", "self.name"): "a table name defined in code, checked to be a plain "
    "identifier in Table.__post_init__; DuckDB takes no parameters for identifiers",
    ("lib/tables/base.py", "staged"): "'_staged_' + the table name (an identifier, see above)",
    ("lib/tables/base.py", "_VERBS[on_conflict]"): "one of three fixed INSERT verbs",
    ("lib/tables/base.py", "_TAILS[on_conflict]"): "one of two fixed ON CONFLICT tails",
}


RESOURCES_QUERY = """
query ($repo: RepositorySelector!) {
  allTopLevelResourceDetailsOrError(repositorySelector: $repo) {
    __typename
    ... on ResourceDetailsList {
      results { name configuredValues { key value type } configFields { name description } }
    }
  }
  utilizedEnvVarsOrError(repositorySelector: $repo) {
    ... on EnvVarWithConsumersList { results { envVarName } }
  }
}
"""


def test_a_password_in_nats_url_never_reaches_the_code_location_or_the_ui(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from dagster_graphql.test.utils import (
        define_out_of_process_context,
        execute_dagster_graphql,
        infer_repository,
        infer_repository_selector,
    )

    monkeypatch.setenv("NATS_URL", f"nats://{USER}:{PASSWORD}@nats.lab.example:4333")
    monkeypatch.setenv("MODEL_FOUNDRY_DUCKDB", str(tmp_path / "db.duckdb"))
    workspace = PACKAGE.parent / "workspace.yaml"
    home = tmp_path / "dagster_home"
    home.mkdir()
    # The code location in its own process, as the webserver loads it, and the UI's query.
    with (
        dg.instance_for_test(temp_dir=str(home)) as instance,
        define_out_of_process_context(str(workspace), None, instance) as context,
    ):
        snapshot = serialize_value(infer_repository(context).repository_snap)
        shown = execute_dagster_graphql(
            context, RESOURCES_QUERY, {"repo": infer_repository_selector(context)}
        ).data
    resources = shown["allTopLevelResourceDetailsOrError"]["results"]
    nats = next(r for r in resources if r["name"] == "nats")
    values = {v["key"]: (v["type"], v["value"]) for v in nats["configuredValues"]}

    # The UI's resource view names the variable; the URL, password and all, is nowhere.
    assert values["servers"] == ("ENV_VAR", "NATS_URL")
    assert "NATS_URL" in {v["envVarName"] for v in shown["utilizedEnvVarsOrError"]["results"]}
    assert '"NATS_URL"' in snapshot  # the snapshot holds the resource's configuration
    for place, text in {"code location snapshot": snapshot, "GraphQL": json.dumps(shown)}.items():
        assert PASSWORD not in text, f"the NATS password leaked into the {place}"
        assert "nats.lab.example" not in text  # not even the URL without its password


def test_credentials_in_the_url_never_reach_the_cli_output(
    secure_nats: LocalNatsServer, certs: Certs
) -> None:
    # The URL form of credentials (nats://user:password@host) works and is never echoed.
    host_port = secure_nats.url.split("://", 1)[1]
    env = {"NATS_URL": f"tls://{USER}:{PASSWORD}@{host_port}", "NATS_TLS_CA": str(certs.ca)}
    first = cli("nats", "setup", env=env)
    assert first.returncode == 0, first.stderr
    # These two name the server they talked to: the URL shows, its password does not.
    for args in (("nats", "setup"), ("publish", "--sample", "5")):
        result = cli(*args, env=env)
        assert result.returncode == 0, result.stderr
        assert PASSWORD not in result.stdout + result.stderr
        assert f"***@{host_port}" in result.stdout

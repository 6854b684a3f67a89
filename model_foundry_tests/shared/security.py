"""Security: NATS with TLS and credentials, secrets kept out of Dagster and DuckDB, SQL only
with parameters.

The servers are real ``nats-server`` processes with ``authorization`` and ``tls`` blocks and
certificates made for the test by ``trustme``; the CLI runs as a user runs it; the inbox is
materialized through a real Dagster instance on disk, whose every file is then searched.

What the unit, integration and system tests of ``test_security.py`` share."""

from __future__ import annotations

import os
import secrets
import subprocess
import sys
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest
import trustme

from model_foundry.devtools.local_nats import LocalNatsServer
from model_foundry_tests.tiers import REPO_ROOT

USER = "familiar"


PASSWORD = "pw-" + secrets.token_hex(12)


TOKEN = "tok-" + secrets.token_hex(12)


PACKAGE = REPO_ROOT / "model_foundry"


def cli(*args: str, env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "model_foundry.cli", *args],
        capture_output=True,
        text=True,
        timeout=120,
        env=dict(os.environ, **env),
    )


INJECTIONS = [
    "'); DROP TABLE pipeline_event_inbox; --",
    "x' OR '1'='1",
    '"; DELETE FROM pipeline_event_dead_letter; --',
    "1; ATTACH '/tmp/evil.duckdb' AS evil; --",
    "$1 ? ?? :name %s {payload}",
]


SQL_METHODS = {"execute", "executemany", "sql", "query"}


REVIEWED = {
    ("lib/storage.py", "limit"): "checked against _MEMORY_LIMIT right before; SET takes no "
    "parameters",
    ("lib/storage.py", "int(self.threads)"): "a positive int checked in __init__ and cast by "
    "int(); SET takes no parameters",
    ("lib/storage.py", "alias"): "'mf_file_' + a number counted in the module; DuckDB takes "
    "no parameters for identifiers",
    ("lib/storage.py", "quoted"): "a file path with its quotes doubled, as a SQL string literal; "
    "ATTACH takes no parameters",
    ("lib/tables/base.py", "self.name"): "a table name defined in code, checked to be a plain "
    "identifier in Table.__post_init__; DuckDB takes no parameters for identifiers",
    ("lib/tables/base.py", "self._unnested"): "one 'unnest(?::TYPE[]) AS column' an insert "
    "column: names checked as above, types from the fixed _SQL_TYPES map, values parameters",
    ("lib/tables/base.py", "_VERBS[on_conflict]"): "one of three fixed INSERT verbs",
    ("lib/tables/base.py", "_TAILS[on_conflict]"): "one of two fixed ON CONFLICT tails",
    ("lib/recipes/preview.py", "view"): "recipe_ + a recipe name, checked to be a lower-case "
    "identifier by spec.py and again by preview_rows; DuckDB takes no parameters for identifiers",
    ("defs/recipes/component.py", "view"): "the outcome's recipe_ + a recipe name, checked to be "
    "a lower-case identifier by spec.py; DuckDB takes no parameters for identifiers",
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


@dataclass(frozen=True)
class Certs:
    ca: Path
    cert: Path
    key: Path


@pytest.fixture(name="certs")
def certs_fixture(tmp_path: Path) -> Certs:
    authority = trustme.CA()
    server = authority.issue_cert("127.0.0.1", "localhost")
    found = Certs(tmp_path / "ca.pem", tmp_path / "server.pem", tmp_path / "server.key")
    authority.cert_pem.write_to_path(str(found.ca))
    server.private_key_pem.write_to_path(str(found.key))
    with found.cert.open("wb") as fh:
        for blob in server.cert_chain_pems:
            fh.write(blob.bytes())
    return found


@pytest.fixture(name="secure_nats")
def secure_nats_fixture(tmp_path: Path, certs: Certs) -> Iterator[LocalNatsServer]:
    with LocalNatsServer(
        store_dir=tmp_path / "nats-tls",
        user=USER,
        password=PASSWORD,
        tls_cert=str(certs.cert),
        tls_key=str(certs.key),
    ) as server:
        yield server


@pytest.fixture(name="token_nats")
def token_nats_fixture(tmp_path: Path) -> Iterator[LocalNatsServer]:
    with LocalNatsServer(store_dir=tmp_path / "nats-token", token=TOKEN) as server:
        yield server


def assert_one_sentence(message: str, url: str, *must_not_contain: str) -> None:
    assert url in message
    assert "\n" not in message.strip() and "Traceback" not in message
    for secret in must_not_contain:
        assert secret not in message

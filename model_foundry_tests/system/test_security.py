"""Security: NATS with TLS and credentials, secrets kept out of Dagster and DuckDB, SQL only
with parameters: the system tests."""

from __future__ import annotations

import json
import secrets
from pathlib import Path

import dagster as dg
import pytest
from dagster._serdes import serialize_value

from model_foundry.devtools.local_nats import LocalNatsServer
from model_foundry_tests.shared.security import (  # noqa: F401 - fixtures are found by name
    PACKAGE,
    PASSWORD,
    RESOURCES_QUERY,
    TOKEN,
    USER,
    Certs,
    assert_one_sentence,
    certs_fixture,
    cli,
    secure_nats_fixture,
    token_nats_fixture,
)

# Distinctive values, so a leak anywhere is found by a plain substring search.


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


# --- SQL text is never built from data ---------------------------------------------------
# Interpolations read and accepted, each with the reason it cannot carry event content.


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

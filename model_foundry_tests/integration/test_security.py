"""Security: NATS with TLS and credentials, secrets kept out of Dagster and DuckDB, SQL only
with parameters: the integration tests."""

from __future__ import annotations

import asyncio
import secrets
from pathlib import Path

import dagster as dg
import duckdb
import pytest
from dagster._serdes import serialize_value

from model_foundry.defs.datasets.trajectories import session_trajectories
from model_foundry.defs.flow.assets import session_flow, session_routing
from model_foundry.defs.flow.checks import live_slots_get_turns
from model_foundry.defs.inbox.assets import pipeline_event_inbox_record
from model_foundry.defs.inbox.checks import inbox_checks
from model_foundry.defs.inbox_tables.assets import inbox_tables
from model_foundry.defs.resources import (
    FoundryDuckDB,
    NatsResource,
    resources_from_env,
)
from model_foundry.devtools.local_nats import LocalNatsServer
from model_foundry.lib.inbox.drain import drain_subject
from model_foundry.lib.nats.connection import (
    NatsClient,
    NatsUnavailableError,
    nats_client_from_env,
)
from model_foundry.lib.publish import make_event
from model_foundry_tests.lab_tokens import (
    lab_tokens,
    leaks,
    planted_dead_letters,
    planted_events,
    searchable,
    stored_files,
)
from model_foundry_tests.nats_helpers import publish, publish_raw
from model_foundry_tests.shared.security import (  # noqa: F401 - fixtures are found by name
    INJECTIONS,
    PASSWORD,
    TOKEN,
    USER,
    Certs,
    assert_one_sentence,
    certs_fixture,
    secure_nats_fixture,
    token_nats_fixture,
)

# Distinctive values, so a leak anywhere is found by a plain substring search.


def test_tls_with_password_publishes_and_drains(
    secure_nats: LocalNatsServer, certs: Certs, db_path: Path
) -> None:
    assert secure_nats.url.startswith("tls://")
    res = NatsClient(servers=secure_nats.url, tls_ca=str(certs.ca), user=USER, password=PASSWORD)
    assert "created stream PIPELINE_EVENTS" in res.setup()
    events = [
        make_event("llm.tool_call", {"tool": "grep", "arguments": {}}, "s", event_id=f"t{i}")
        for i in range(20)
    ]
    publish(res, events)
    record = asyncio.run(drain_subject(res, db_path, "llm.tool_call", fetch_timeout_s=0.3))
    assert (record.received, record.inserted) == (20, 20)


def test_refused_or_untrusted_tls_is_one_clear_sentence(
    secure_nats: LocalNatsServer, certs: Certs
) -> None:
    wrong = "wrong-" + secrets.token_hex(6)
    with pytest.raises(NatsUnavailableError) as refused:
        NatsClient(servers=secure_nats.url, tls_ca=str(certs.ca), user=USER, password=wrong).setup()
    assert_one_sentence(str(refused.value), secure_nats.url, wrong, PASSWORD)
    assert "refused the credentials" in str(refused.value)

    with pytest.raises(NatsUnavailableError) as anonymous:
        NatsClient(servers=secure_nats.url, tls_ca=str(certs.ca)).setup()
    assert "refused the credentials" in str(anonymous.value)

    # Without the CA the server cannot be trusted: say so, and do not hang (nats-py would).
    with pytest.raises(NatsUnavailableError) as untrusted:
        NatsClient(servers=secure_nats.url, user=USER, password=PASSWORD).setup()
    assert_one_sentence(str(untrusted.value), secure_nats.url, PASSWORD)
    assert "NATS_TLS_CA" in str(untrusted.value)


def test_token_auth_connects_and_a_wrong_token_is_refused(token_nats: LocalNatsServer) -> None:
    assert NatsClient(servers=token_nats.url, token=TOKEN).setup()
    wrong = "tok-wrong-" + secrets.token_hex(6)
    with pytest.raises(NatsUnavailableError) as refused:
        NatsClient(servers=token_nats.url, token=wrong).setup()
    assert_one_sentence(str(refused.value), token_nats.url, wrong, TOKEN)
    assert "refused the credentials" in str(refused.value)


def test_credentials_in_the_url_never_reach_the_error_message() -> None:
    from model_foundry.devtools.ports import free_port

    url = f"nats://{USER}:{PASSWORD}@127.0.0.1:{free_port()}"
    with pytest.raises(NatsUnavailableError) as info:
        NatsClient(servers=url, connect_timeout_s=0.5).setup()
    assert PASSWORD not in str(info.value) and "127.0.0.1" in str(info.value)


def dump_duckdb(db_path: Path) -> str:
    """Every row of every table and view, as text."""
    parts: list[str] = []
    with duckdb.connect(str(db_path), read_only=True) as con:
        names = [
            r[0] for r in con.execute("SELECT table_name FROM information_schema.tables").fetchall()
        ]
        assert "pipeline_event_inbox" in names
        for name in names:
            rows = con.execute(f'SELECT * FROM "{name}"').fetchall()
            parts.append(f"{name}: {rows!r}")
    return "\n".join(parts)


def url_with_password(server: LocalNatsServer) -> str:
    """``tls://user:password@host:port``: the form of credentials NATS_URL allows."""
    scheme, rest = server.url.split("://", 1)
    return f"{scheme}://{USER}:{PASSWORD}@{rest}"


def inbox_texts(db_path: Path) -> tuple[str, str]:
    """The inbox's payloads and the dead letters' raw bodies, as DuckDB keeps them."""
    with duckdb.connect(str(db_path), read_only=True) as con:
        payloads = con.execute("SELECT payload::VARCHAR FROM pipeline_event_inbox").fetchall()
        bodies = con.execute("SELECT raw FROM pipeline_event_dead_letter").fetchall()
    return (
        "\n".join(p for (p,) in payloads),
        "\n".join(bytes(b).decode("utf-8") for (b,) in bodies),
    )


# The lab's own secrets, planted in the events the test drains (a fresh draw per run).
LAB = lab_tokens(secrets.randbits(32))
# What reads lab text and reports to Dagster without asking a slot: typed tables, the
# trajectories, the session flow (pictures with node labels), the routing and its check.
DOWNSTREAM = [
    inbox_tables,
    session_trajectories,
    session_flow,
    session_routing,
    live_slots_get_turns,
]


@pytest.mark.parametrize("credentials", ["variables", "url"])
def test_secrets_never_reach_dagster_logs_metadata_or_duckdb(
    secure_nats: LocalNatsServer,
    certs: Certs,
    db_path: Path,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capfd: pytest.CaptureFixture[str],
    credentials: str,
) -> None:
    if credentials == "variables":
        monkeypatch.setenv("NATS_URL", secure_nats.url)
        monkeypatch.setenv("NATS_USER", USER)
        monkeypatch.setenv("NATS_PASSWORD", PASSWORD)
    else:
        monkeypatch.setenv("NATS_URL", url_with_password(secure_nats))
    monkeypatch.setenv("NATS_TLS_CA", str(certs.ca))
    monkeypatch.setenv("MODEL_FOUNDRY_DUCKDB", str(db_path))
    outside_dagster = nats_client_from_env()
    outside_dagster.setup()
    publish(
        outside_dagster,
        [
            make_event(
                "llm.chat.persist",
                {"messages": [{"role": "user", "content": f"hello {i}"}]},
                "sess-secure",
                event_id=f"secure-{i}",
            )
            for i in range(5)
        ]
        + planted_events(LAB, "sess-secure", "secure-lab"),
    )
    # Bodies the contract refuses, whose dead-letter reasons quote the lab's tokens.
    publish_raw(outside_dagster, planted_dead_letters(LAB, "secure-lab"))
    # The resources exactly as the code location builds them: secrets as EnvVar.
    resources = resources_from_env()
    assert PASSWORD not in repr(resources["nats"])

    home = tmp_path / "dagster_home"
    home.mkdir()
    drain = {"ops": {"pipeline_event_inbox_record": {"config": {"fetch_timeout_s": 0.3}}}}
    with dg.instance_for_test(temp_dir=str(home)) as instance:
        results = [
            dg.materialize(
                [pipeline_event_inbox_record, *inbox_checks],
                partition_key=subject,
                resources=resources,
                instance=instance,
                run_config=drain,
            )
            for subject in ("llm.chat.persist", "llm.tool_call", "llm.flow.lineage")
        ]
        results.append(dg.materialize(DOWNSTREAM, resources=resources, instance=instance))
        assert all(result.success for result in results)
        record = results[0].output_for_node("pipeline_event_inbox_record")
        # The run really authenticated with the secret: it drained the events.
        assert (record["inserted"], record["dead_lettered"]) == (6, 3)
        event_log = "\n".join(
            serialize_value(e) for result in results for e in instance.all_logs(result.run_id)
        )
        runs = [instance.get_run_by_id(result.run_id) for result in results]
        assert all(run is not None for run in runs)
        run_text = "\n".join(serialize_value(run) for run in runs)
        shown = results[-1].asset_materializations_for_node("session_flow")[0].metadata
    output = capfd.readouterr()

    # Each place searched holds what it should, so an empty search means something.
    assert "secure-0" in event_log and "dead_lettered" in event_log
    assert "[REDACTED:github_token]" in event_log and "flow_1" in shown
    assert "llm.chat.persist" in output.err + output.out
    # Run and event storage, the stored outputs and the captured compute logs all live here.
    files = stored_files(home)
    compute_logs = [text for path, text in files.items() if "compute_logs" in Path(path).parts]
    assert compute_logs and any("llm.chat.persist" in text for text in compute_logs)
    places = {
        "event log": searchable(event_log.encode()),
        "run record": run_text,
        "process output": output.out + output.err,
        **files,
    }
    for place, text in {**places, "DuckDB": dump_duckdb(db_path)}.items():
        assert PASSWORD not in text, f"the NATS password leaked into {place}"
        assert USER + ":" + PASSWORD not in text
    # The lab's tokens reach Dagster only scrubbed; DuckDB keeps every one verbatim.
    assert leaks(places, LAB.values()) == []
    payloads, dead_bodies = inbox_texts(db_path)
    assert all(token.value in payloads for token in LAB.values())
    assert all(LAB[k].value in dead_bodies for k in ("github", "email", "url_password"))


def test_sql_injection_in_event_content_is_stored_verbatim(
    nats_client: NatsClient, db_path: Path
) -> None:
    events = [
        make_event(
            "llm.tool_call",
            {"tool": text, "arguments": {"sql": text, text: [text]}},
            correlation_id=text,
            event_id=text,
        )
        for text in INJECTIONS
    ]
    publish(nats_client, events)
    # The same ids again with different bodies: their ids reach the conflict lookup and the
    # dead-letter reason too.
    conflicting = [
        make_event("llm.tool_call", {"tool": "other", "arguments": {}}, "s", event_id=text)
        for text in INJECTIONS
    ]
    publish_raw(nats_client, [(e.subject, e.body) for e in conflicting])
    with dg.instance_for_test() as instance:
        result = dg.materialize(
            [pipeline_event_inbox_record, *inbox_checks],
            partition_key="llm.tool_call",
            resources={
                "nats": NatsResource.of(nats_client),
                "duckdb": FoundryDuckDB(database=str(db_path)),
            },
            instance=instance,
            run_config={
                "ops": {"pipeline_event_inbox_record": {"config": {"fetch_timeout_s": 0.3}}}
            },
        )
    assert result.success
    record = result.output_for_node("pipeline_event_inbox_record")
    assert (record["inserted"], record["conflicts"]) == (len(INJECTIONS), len(INJECTIONS))
    # The preview table looks rows up by these ids: it found every one.
    preview = result.asset_materializations_for_node("pipeline_event_inbox_record")[0]
    assert {r.data["event_id"] for r in preview.metadata["preview"].value.records} == set(
        INJECTIONS
    )
    with duckdb.connect(str(db_path), read_only=True) as con:
        tables = {
            r[0] for r in con.execute("SELECT table_name FROM information_schema.tables").fetchall()
        }
        assert {"pipeline_event_inbox", "pipeline_event_dead_letter"} <= tables
        stored = con.execute(
            "SELECT event_id, correlation_id, payload->>'tool', payload->'arguments'->>'sql' "
            "FROM pipeline_event_inbox"
        ).fetchall()
        dead_ids = [
            r[0] for r in con.execute("SELECT event_id FROM pipeline_event_dead_letter").fetchall()
        ]
        attached = {
            r[0] for r in con.execute("SELECT database_name FROM duckdb_databases()").fetchall()
        }
    assert sorted(stored) == sorted((t, t, t, t) for t in INJECTIONS)
    assert sorted(dead_ids) == sorted(INJECTIONS)
    assert "evil" not in attached


# --- SQL text is never built from data ---------------------------------------------------
# Interpolations read and accepted, each with the reason it cannot carry event content.

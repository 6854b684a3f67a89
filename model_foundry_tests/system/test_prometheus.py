"""A real Prometheus scrapes the exporter and the slot simulator while the pipeline runs, and
every PromQL expression of the shipped Grafana dashboard is evaluated through its HTTP API.

Prometheus comes from Debian's ``prometheus`` package (``.ci/run`` installs it). It loads the
shipped scrape jobs (deploy/prometheus/model-foundry.yml) with only the targets pointed at this
test's exporter and simulator and a 1 s scrape interval. Each dashboard query must parse and
return at least one finite value; Grafana's ``$__rate_interval`` is replaced by a window that
covers the whole run (what Grafana would choose for a dashboard range of that length).
"""

from __future__ import annotations

import json
import math
import os
import shutil
import subprocess
import time
import urllib.parse
import urllib.request
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import yaml

from model_foundry.devtools.devstack import stop_process_group
from model_foundry.devtools.local_nats import LocalNatsServer
from model_foundry.devtools.ports import free_port
from model_foundry.lib.nats.connection import NatsClient
from model_foundry.lib.slots.config import load_slot_file
from model_foundry_tests.dagster_helpers import quiet_instance
from model_foundry_tests.metrics_helpers import exporter_process
from model_foundry_tests.pipeline_helpers import (
    count,
    rows,
    run_pipeline,
    slot_simulator_process,
    wait_for,
)
from model_foundry_tests.tiers import REPO_ROOT

ROOT = REPO_ROOT
SCRAPE_CONFIG = ROOT / "deploy" / "prometheus" / "model-foundry.yml"
DASHBOARD = ROOT / "deploy" / "grafana" / "dashboards" / "model-foundry.json"
PROMETHEUS = shutil.which("prometheus")

if PROMETHEUS is None and os.environ.get("CI") != "true":
    pytest.skip(
        "Debian's prometheus package is not installed here (apt-get install prometheus; "
        ".ci/run installs it in CI)",
        allow_module_level=True,
    )

pytestmark = pytest.mark.timeout(300)


def dashboard_queries() -> list[tuple[str, str]]:
    """(panel title, expr) of every Prometheus target in the shipped dashboard."""
    board = json.loads(DASHBOARD.read_text(encoding="utf-8"))
    found = []
    for panel in board["panels"]:
        for target in panel.get("targets", []):
            source = target.get("datasource") or panel.get("datasource") or {}
            if source.get("type") == "prometheus":
                found.append((panel["title"], target["expr"]))
    return found


def prometheus_config(exporter: str, slot_path: Path) -> dict[str, Any]:
    """The shipped scrape jobs, targets replaced by this test's processes, scraped every 1 s."""
    config = yaml.safe_load(SCRAPE_CONFIG.read_text(encoding="utf-8"))
    config["global"] = {"scrape_interval": "1s", "evaluation_interval": "1s"}
    slots = load_slot_file(slot_path).slots
    for job in config["scrape_configs"]:
        for static in job["static_configs"]:
            slot = (static.get("labels") or {}).get("slot")
            if slot is None:
                static["targets"] = [exporter]
            else:
                host, port = slots[slot].host_port()
                static["targets"] = [f"{host}:{port}"]
    return config


class Prometheus:
    def __init__(self, url: str) -> None:
        self.url = url

    def get(self, path: str, **params: str) -> dict[str, Any]:
        query = urllib.parse.urlencode(params)
        with urllib.request.urlopen(f"{self.url}{path}?{query}", timeout=10) as response:
            return json.loads(response.read())

    def query(self, expr: str) -> dict[str, Any]:
        """The API's answer; a query that does not parse comes back as HTTP 400 with a reason."""
        try:
            return self.get("/api/v1/query", query=expr)
        except urllib.error.HTTPError as exc:
            return json.loads(exc.read())

    def value(self, expr: str) -> float | None:
        result = self.query(expr)["data"]["result"]
        return float(result[0]["value"][1]) if result else None

    def targets_up(self) -> bool:
        active = self.get("/api/v1/targets")["data"]["activeTargets"]
        return bool(active) and all(t["health"] == "up" for t in active)


@pytest.fixture
def prometheus_for(tmp_path: Path) -> Iterator[Any]:
    procs: list[subprocess.Popen[Any]] = []

    def start(config: dict[str, Any]) -> Prometheus:
        assert PROMETHEUS is not None, "CI must have Debian's prometheus package (.ci/run)"
        config_path = tmp_path / "prometheus.yml"
        config_path.write_text(yaml.safe_dump(config), encoding="utf-8")
        port = free_port()
        log = (tmp_path / "prometheus.log").open("w")
        procs.append(
            subprocess.Popen(
                [
                    PROMETHEUS,
                    f"--config.file={config_path}",
                    f"--web.listen-address=127.0.0.1:{port}",
                    f"--storage.tsdb.path={tmp_path / 'tsdb'}",
                    "--log.level=warn",
                ],
                stdin=subprocess.DEVNULL,
                stdout=log,
                stderr=subprocess.STDOUT,
                start_new_session=True,
            )
        )
        prom = Prometheus(f"http://127.0.0.1:{port}")

        def ready() -> bool:
            try:
                with urllib.request.urlopen(f"{prom.url}/-/ready", timeout=2) as r:
                    return r.status == 200
            except OSError:
                return False

        wait_for(ready, 60, "Prometheus to be ready", proc=procs[-1])
        return prom

    yield start
    for proc in procs:
        stop_process_group(proc, timeout_s=10)


def test_dashboard_queries_return_data_from_a_real_prometheus(
    nats_server: LocalNatsServer,
    nats_client: NatsClient,
    db_path: Path,
    tmp_path: Path,
    prometheus_for: Any,
) -> None:
    queries = dashboard_queries()
    assert len(queries) >= 15, "the dashboard lost its panels"
    data_dir = tmp_path / "data"
    with (
        slot_simulator_process(tmp_path / "sim", speed=50) as slot_path,
        exporter_process(
            tmp_path / "exporter",
            extra_args=("--refresh-s", "0.5"),
            MODEL_FOUNDRY_DUCKDB=str(db_path),
            MODEL_FOUNDRY_DATA_DIR=str(data_dir),
            MODEL_FOUNDRY_SLOTS=str(slot_path),
            NATS_URL=nats_server.url,
        ) as exporter_url,
    ):
        exporter = urllib.parse.urlsplit(exporter_url).netloc
        prom = prometheus_for(prometheus_config(exporter, slot_path))
        started = time.monotonic()
        wait_for(prom.targets_up, 60, "every scrape target to be up")

        with quiet_instance() as instance:
            run_pipeline(nats_client, db_path, slot_path, tmp_path / "run", instance)

        stored = count(db_path, "SELECT count(*) FROM pipeline_event_inbox")
        attempts = count(db_path, "SELECT count(*) FROM llm_completions")
        samples = count(db_path, "SELECT count(*) FROM dataset_samples")
        # Prometheus has scraped the exporter after its last DuckDB read of the final state.
        wait_for(
            lambda: (
                prom.value("sum(model_foundry_inbox_events_total)") == stored
                and prom.value("sum(model_foundry_completions_total)") == attempts
                and prom.value("sum(model_foundry_dataset_samples_total)") == samples
            ),
            60,
            "Prometheus to hold the final figures",
        )

        # Two more scrapes of every target after that, so a series that first appeared at the
        # end of the run has the two samples rate() needs.
        final = prom.value("vector(time())")
        assert final is not None
        wait_for(
            lambda: (prom.value("min(timestamp(up))") or 0) > final + 2,
            30,
            "two more scrapes of every target",
        )

        # What the bar asks to see: events by subject, per-slot completions and
        # tokens, nothing pending in NATS.
        by_subject = dict(
            rows(db_path, "SELECT subject, count(*) FROM pipeline_event_inbox GROUP BY 1")
        )
        for subject, n in by_subject.items():
            assert prom.value(f'model_foundry_inbox_events_total{{subject="{subject}"}}') == n
        for slot, n, tokens in rows(
            db_path,
            "SELECT slot, count(*), sum(completion_tokens) FROM llm_completions GROUP BY 1",
        ):
            assert prom.value(f'sum(model_foundry_completions_total{{slot="{slot}"}})') == n
            assert (
                prom.value(f'model_foundry_slot_generation_tokens_total{{slot="{slot}"}}') == tokens
            )
        assert prom.value("sum(model_foundry_nats_consumer_pending_messages)") == 0
        assert prom.value("sum(model_foundry_dead_letters_total)") == 4

        window = f"{math.ceil(time.monotonic() - started) + 30}s"
        failures = []
        for title, expr in queries:
            promql = expr.replace("$__rate_interval", window)
            answer = prom.query(promql)
            if answer.get("status") != "success":
                failures.append(f"{title}: {expr!r} does not parse: {answer.get('error')}")
                continue
            values = [float(r["value"][1]) for r in answer["data"]["result"]]
            if not any(math.isfinite(v) for v in values):
                failures.append(f"{title}: {expr!r} returned no data ({values})")
        assert not failures, "\n".join(failures)

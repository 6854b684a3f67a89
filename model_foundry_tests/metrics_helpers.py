"""The exporter as users run it (``model-foundry metrics`` in its own process), and scraping it."""

from __future__ import annotations

import subprocess
import sys
import urllib.request
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from prometheus_client.parser import text_string_to_metric_families

from model_foundry.devtools.devstack import stop_process_group
from model_foundry_tests.pipeline_helpers import clean_env

Samples = dict[tuple[str, tuple[tuple[str, str], ...]], float]


@contextmanager
def exporter_process(
    work_dir: Path, *, extra_args: tuple[str, ...] = (), **env: str
) -> Iterator[str]:
    """``model-foundry metrics --port 0``; yields its /metrics URL once it serves."""
    work_dir.mkdir(parents=True, exist_ok=True)
    log_path = work_dir / "exporter.log"
    with log_path.open("w") as log:
        proc = subprocess.Popen(
            [sys.executable, "-m", "model_foundry.cli", "metrics", "--port", "0", *extra_args],
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=log,
            text=True,
            env=clean_env(**env),
            start_new_session=True,
        )
        try:
            assert proc.stdout is not None
            line = proc.stdout.readline()
            if "serving Prometheus metrics on " not in line:
                proc.wait(10)
                raise RuntimeError(f"exporter did not start: {line!r} {log_path.read_text()}")
            yield line.strip().rsplit(" ", 1)[1]
        finally:
            stop_process_group(proc, timeout_s=10)


def scrape(url: str, timeout_s: float = 5.0) -> Samples:
    """One scrape, parsed the way Prometheus parses the text format."""
    with urllib.request.urlopen(url, timeout=timeout_s) as response:
        assert response.status == 200
        text = response.read().decode()
    return {
        (s.name, tuple(sorted(s.labels.items()))): s.value
        for family in text_string_to_metric_families(text)
        for s in family.samples
    }


def total(samples: Samples, name: str, **labels: str) -> float:
    """Sum of ``name``'s samples whose labels include ``labels``."""
    return sum(
        v
        for (n, lbls), v in samples.items()
        if n == name and all((k, val) in lbls for k, val in labels.items())
    )

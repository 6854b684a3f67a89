"""The telemetry sender against real HTTP receivers: delivered, refused, slow, switched off:
the unit tests."""

from __future__ import annotations

import threading

from model_foundry.lib.telemetry import Telemetry, redact_url


def test_unset_url_sends_nothing_and_starts_no_thread() -> None:
    before = {t.name for t in threading.enumerate()}
    tel = Telemetry(None, run_id="r", asset="a")
    tel.emit("model_foundry.completion", slot="x")
    assert not tel.enabled
    assert tel.metadata() == {}
    assert tel.close().emitted == 0
    assert "model-foundry-telemetry" not in {t.name for t in threading.enumerate()} - before


def test_redact_url_hides_credentials() -> None:
    assert redact_url("http://u:secret@vector:8687/telemetry") == "http://***@vector:8687/telemetry"
    assert redact_url("http://vector:8687/telemetry") == "http://vector:8687/telemetry"

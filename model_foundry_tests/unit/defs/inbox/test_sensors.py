"""Sensor ticks against a real nats-server and a real (test) Dagster instance: the unit tests."""

from __future__ import annotations

import dagster as dg

from model_foundry.defs.inbox.sensors import inbox_sensors, sensor_name


def test_one_sensor_per_subject_running_by_default() -> None:
    names = {s.name for s in inbox_sensors}
    assert names == {
        sensor_name(s)
        for s in (
            "llm.chat.persist",
            "llm.tool_call",
            "llm.flow.lineage",
            "obsidian.semantic_search",
        )
    }
    assert all(s.default_status == dg.DefaultSensorStatus.RUNNING for s in inbox_sensors)

"""Declarative automation: downstream assets follow the inbox without anyone clicking.

Every downstream asset carries :func:`on_new_upstream_data`; one automation condition sensor
(running by default, added with the other global choices in ``model_foundry/definitions.py``)
evaluates them every ``MODEL_FOUNDRY_SENSOR_INTERVAL_S``. When the inbox
commits events, the next tick requests the typed tables, the summaries, the translations and
the throughput snapshot, in one run; an inbox drain that keeps running while events keep
coming reports what it committed every ``checkpoint_s`` (see the inbox asset), so the
downstream assets follow it instead of waiting for it to end. docs/freshness.md states the
lag this gives.
"""

from __future__ import annotations

import dagster as dg

from model_foundry.defs import keys
from model_foundry.lib import settings

# Upstream assets that are materialized by their own sensors or schedules, never by this
# condition: the subject-partitioned inbox (its drains run for as long as events keep coming)
# and the nightly dataset collection (hours). A run of them in progress is no reason for a
# downstream asset to wait; their committed data is, and they report it as it lands.
NOT_AUTOMATED = dg.AssetSelection.assets(keys.INBOX, keys.DATASET_SAMPLES)


def on_new_upstream_data() -> dg.AutomationCondition:
    """Request the asset after an upstream update, without waiting for busy inbox drains.

    Built from the parts of ``AutomationCondition.eager()`` (dagster 1.13,
    ``dagster/_core/definitions/declarative_automation/automation_condition.py``), changed
    where eager starves or loses an update in this pipeline:

    - *Trigger*: a dependency was updated (or the asset went missing), as in eager.
    - *Latched until requested with nothing newer*: eager forgets the trigger when the asset
      is requested **or materialized**, and a trigger seen on the same tick as that reset
      loses. An inbox commit that lands while a downstream run is already past reading the
      inbox would then be forgotten when that run finishes, and the last events of a burst
      would wait for the next event. Here only a request forgets it, and not on a tick that
      also sees a newer update: every update is followed by a request made after it.
    - *No wait for the inbox*: eager also waits while any dependency partition is in progress.
      With four subject partitions whose drains run while events keep coming, one of them is
      nearly always in progress: steady publishing would leave the downstream assets without
      a single run for as long as it lasted. Only in-progress upstream assets that this same
      condition materializes (the typed tables, for the summaries) are waited for.
    - *One at a time*: never requested while a run of the asset itself is in progress; an
      update seen meanwhile stays latched and is requested on the first tick after it.

    eager's "no dependency missing" clause is dropped too: a subject that never had an event
    has a never-materialized inbox partition, and everything downstream reads whatever the
    tables hold. So is its "latest time window" clause: nothing here is time-partitioned.
    """
    ac = dg.AutomationCondition
    updated = (ac.newly_missing() | ac.any_deps_updated()).with_label("upstream updated")
    handled = (
        (ac.newly_requested() & ~ac.any_deps_updated()) | ac.initial_evaluation()
    ).with_label("requested, nothing newer")
    return (
        updated.since(handled)
        & ~ac.any_deps_in_progress().ignore(NOT_AUTOMATED)
        & ~ac.in_progress()
    ).with_label("on_new_upstream_data")


def automation_sensor() -> dg.AutomationConditionSensorDefinition:
    """The one sensor that evaluates every asset's automation condition."""
    return dg.AutomationConditionSensorDefinition(
        "model_foundry_automation_sensor",
        target=dg.AssetSelection.all(),
        default_status=dg.DefaultSensorStatus.RUNNING,
        minimum_interval_seconds=settings.sensor_interval_s(),
        description=(
            "Materializes downstream assets when the inbox (or their upstream) has new data."
        ),
    )


__all__ = ["NOT_AUTOMATED", "automation_sensor", "on_new_upstream_data"]

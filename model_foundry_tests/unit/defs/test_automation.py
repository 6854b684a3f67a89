"""The downstream automation condition, tick by tick, on a real Dagster instance.

Each test sets up runs and materializations through the instance's public API and evaluates
the code location's automation conditions the way the automation sensor does, one tick at a
time (``dg.evaluate_automation_conditions`` with the cursor of the previous tick). No daemon:
the daemon test in ``system_tests/test_daemon_freshness.py`` shows the same end to end.
"""

from __future__ import annotations

from collections.abc import Iterator

import dagster as dg
import pytest

from model_foundry import definitions
from model_foundry.defs import keys
from model_foundry.defs.datasets.assets import dataset_collection_job
from model_foundry.defs.inbox.jobs import inbox_job
from model_foundry.defs.inbox_tables.assets import INBOX_TABLE_KEYS
from model_foundry_tests.dagster_helpers import quiet_instance

INBOX_ASSET = keys.INBOX
DATASET_ASSET = keys.DATASET_SAMPLES
SUMMARIES = keys.SESSION_SUMMARIES
TRANSLATIONS = keys.SESSION_SUMMARY_TRANSLATIONS
THROUGHPUT = dg.AssetKey("slot_throughput")
# The code location as Dagster loads it, global choices (the automation sensor) included.
DEFS = definitions.defs()
DOWNSTREAM = [*INBOX_TABLE_KEYS, SUMMARIES, TRANSLATIONS, THROUGHPUT]


class Ticks:
    """The automation sensor's evaluations, one call per tick, cursor carried over."""

    def __init__(self, instance: dg.DagsterInstance) -> None:
        self.instance = instance
        self.cursor = None

    def __call__(self) -> set[dg.AssetKey]:
        result = dg.evaluate_automation_conditions(
            defs=DEFS, instance=self.instance, cursor=self.cursor
        )
        self.cursor = result.cursor
        return {key for key in DOWNSTREAM if result.get_requested_partitions(key)}


@pytest.fixture
def instance() -> Iterator[dg.DagsterInstance]:
    with quiet_instance() as instance:
        yield instance


def inbox_commit(instance: dg.DagsterInstance, subject: str = "llm.chat.persist") -> None:
    """What a drain's checkpoint or its end reports: the subject's partition materialized."""
    instance.report_runless_asset_event(dg.AssetMaterialization(INBOX_ASSET, partition=subject))


def started_run(
    instance: dg.DagsterInstance, job: dg.JobDefinition, keys: set[dg.AssetKey], **tags: str
) -> dg.DagsterRun:
    """A run in progress that plans to materialize ``keys`` (as the run queue launches one)."""
    return instance.create_run_for_job(
        job_def=job,
        asset_selection=frozenset(keys),
        tags=tags,
        status=dg.DagsterRunStatus.STARTED,
    )


def test_drains_in_progress_do_not_hold_back_the_downstream_assets(
    instance: dg.DagsterInstance,
) -> None:
    tick = Ticks(instance)
    assert tick() == set()
    job = DEFS.resolve_job_def(inbox_job.name)
    # Three subjects are still draining (events keep coming); one has committed events.
    for subject in ("llm.tool_call", "llm.flow.lineage", "obsidian.semantic_search"):
        started_run(instance, job, {INBOX_ASSET}, **{"dagster/partition": subject})
    inbox_commit(instance, "llm.chat.persist")
    # eager() would wait for every drain to end; under steady publishing that is never.
    assert tick() == set(DOWNSTREAM)


def test_an_update_during_a_downstream_run_is_requested_once_that_run_ends(
    instance: dg.DagsterInstance,
) -> None:
    tick = Ticks(instance)
    tick()
    inbox_commit(instance)
    requested = tick()
    assert requested == set(DOWNSTREAM)
    downstream_job = DEFS.resolve_implicit_global_asset_job_def()
    run = started_run(instance, downstream_job, requested)
    # Events committed right after the request, and more while the run is going: the run may
    # already have read the inbox, so both must lead to another request, but not while the
    # assets' own run is still in progress.
    inbox_commit(instance)
    assert tick() == set()
    inbox_commit(instance)
    assert tick() == set()
    for key in requested:
        instance.report_runless_asset_event(dg.AssetMaterialization(key))
    instance.report_run_failed(run)  # ended; how does not matter to the condition
    # eager() forgets the trigger when the asset is materialized, and these events would
    # wait for the next commit; here they are requested on the first tick after the run.
    assert tick() == set(DOWNSTREAM)
    assert tick() == set()


def test_summaries_wait_for_a_typed_tables_run_in_progress(
    instance: dg.DagsterInstance,
) -> None:
    tick = Ticks(instance)
    tick()
    downstream_job = DEFS.resolve_implicit_global_asset_job_def()
    # The typed tables are being refreshed by a run of their own; the summaries read them, so
    # they wait for it rather than summarise half of what it will add.
    run = started_run(instance, downstream_job, set(INBOX_TABLE_KEYS))
    for key in INBOX_TABLE_KEYS:
        instance.report_runless_asset_event(dg.AssetMaterialization(key))
    assert SUMMARIES not in tick()
    instance.report_run_failed(run)
    assert SUMMARIES in tick()


def test_a_running_dataset_collection_does_not_hold_back_the_throughput_snapshot(
    instance: dg.DagsterInstance,
) -> None:
    tick = Ticks(instance)
    tick()
    job = DEFS.resolve_job_def(dataset_collection_job.name)
    started_run(instance, job, {DATASET_ASSET})  # the nightly job, hours long
    instance.report_runless_asset_event(dg.AssetMaterialization(SUMMARIES))
    assert THROUGHPUT in tick()

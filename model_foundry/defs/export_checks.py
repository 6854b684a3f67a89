"""The blocking checks every export asset carries: the proof a lab reads before it trains.

Each export asset (``session_dataset``, ``dataset_samples``, ``dataset_judgements``, every
``recipe_<name>_export``) gets the checks :data:`EXPORT_CHECKS` makes, through
:func:`export_checks`. They read the folder its latest materialization wrote
(``export_path``); a materialization that wrote none (no ``export: true``, a judged
collection exported by ``dataset_judgements``) has nothing to check and passes.

Blocking: a failed check fails its step, and in the same run Dagster does not start what
depends on the asset (``AssetCheckSpec``/``@asset_check`` ``blocking=True``, Dagster 1.13,
``_core/execution/plan/execute_step.py``).
"""

from collections.abc import Callable
from pathlib import Path

import dagster as dg

from model_foundry.lib import settings
from model_foundry.lib.exports.proof import held_back, scan_secrets
from model_foundry.lib.hygiene.record import RecordScrubber

SECRET_CHECK = "no_secret_in_views"
HELD_BACK_CHECK = "held_back_share"


def export_folder(context: dg.AssetCheckExecutionContext, key: dg.AssetKey) -> Path | None:
    """The folder ``key``'s latest materialization exported to; None: it exported none."""
    event = context.instance.get_latest_materialization_event(key)
    found = event.asset_materialization.metadata if event and event.asset_materialization else {}
    value = found.get("export_path")
    return Path(str(value.value)) if value is not None else None


def _nothing(folder: Path | None) -> dg.AssetCheckResult | None:
    """The result when there is no folder to check: passed with none, failed with one gone."""
    if folder is None:
        return dg.AssetCheckResult(
            passed=True, description="This materialization exported nothing.",
            metadata={"exported": False},
        )  # fmt: skip
    if not (folder / "samples.parquet").is_file():
        return dg.AssetCheckResult(
            passed=False, description=f"The export folder {folder} is gone or unfinished.",
            metadata={"export_path": dg.MetadataValue.path(str(folder))},
        )  # fmt: skip
    return None


def secret_check(key: dg.AssetKey) -> dg.AssetChecksDefinition:
    @dg.asset_check(
        asset=key,
        name=SECRET_CHECK,
        blocking=True,
        description=(
            "Every row of the export's views (hf/**/*.parquet, openai/**/*.jsonl) scrubbed "
            "again by this installation's secret rules: nothing is found. PII and the "
            "scrubber's own markers are not counted."
        ),
    )
    def _check(context: dg.AssetCheckExecutionContext) -> dg.AssetCheckResult:
        folder = export_folder(context, key)
        if (nothing := _nothing(folder)) is not None:
            return nothing
        assert folder is not None
        scan = scan_secrets(folder, RecordScrubber.from_settings())
        # Kinds, counts and file rows only: the value found is never shown.
        return dg.AssetCheckResult(
            passed=scan.found == 0,
            description=(
                None if scan.found == 0
                else f"{scan.found} secrets found again in the export's views, first at "
                f"{scan.places[0]}; it must not be trained on or published."
            ),
            metadata={
                "export_path": dg.MetadataValue.path(str(folder)),
                "files_scanned": scan.files,
                "rows_scanned": scan.rows,
                "secrets_found": scan.found,
                "secrets_by_kind": dg.MetadataValue.json(scan.by_kind),
                "found_at": dg.MetadataValue.json(scan.places),
            },
        )  # fmt: skip

    return _check


def held_back_check(key: dg.AssetKey) -> dg.AssetChecksDefinition:
    @dg.asset_check(
        asset=key,
        name=HELD_BACK_CHECK,
        blocking=True,
        description=(
            "The share of the export's records left out of its views (duplicates, filtered, "
            "held back by a gate) is at most MODEL_FOUNDRY_EXPORT_MAX_HELD_BACK_SHARE "
            "(default 0.5)."
        ),
    )
    def _check(context: dg.AssetCheckExecutionContext) -> dg.AssetCheckResult:
        try:
            limit = settings.export_max_held_back_share()
        except settings.SettingError as exc:
            return dg.AssetCheckResult(passed=False, description=str(exc))
        folder = export_folder(context, key)
        if (nothing := _nothing(folder)) is not None:
            return nothing
        assert folder is not None
        held = held_back(folder)
        passed = held.share <= limit
        return dg.AssetCheckResult(
            passed=passed,
            description=(
                None if passed
                else f"{held.held} of {held.records} records held back ({held.share:.1%}), "
                f"more than MODEL_FOUNDRY_EXPORT_MAX_HELD_BACK_SHARE={limit}."
            ),
            metadata={
                "export_path": dg.MetadataValue.path(str(folder)),
                "records": held.records,
                "held_back": held.held,
                "held_back_share": round(held.share, 4),
                "max_share": limit,
                "held_back_by_cause": dg.MetadataValue.json(held.by_cause),
            },
        )  # fmt: skip

    return _check


# Every export asset's checks, made for its key. The one place a check joins them all: the
# decontamination check ("the index covers every configured eval set") is added here.
EXPORT_CHECKS: tuple[Callable[[dg.AssetKey], dg.AssetChecksDefinition], ...] = (
    secret_check,
    held_back_check,
)


def export_checks(key: dg.AssetKey) -> list[dg.AssetChecksDefinition]:
    """The blocking checks of the export asset ``key``."""
    return [make(key) for make in EXPORT_CHECKS]


__all__ = [
    "EXPORT_CHECKS",
    "HELD_BACK_CHECK",
    "SECRET_CHECK",
    "export_checks",
    "export_folder",
    "held_back_check",
    "secret_check",
]

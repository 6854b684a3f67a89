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

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import dagster as dg

from model_foundry.lib import settings
from model_foundry.lib.decontamination.config import EvalSetError, EvalSets, load_eval_sets

SECRET_CHECK = "no_secret_in_views"
HELD_BACK_CHECK = "held_back_share"
EVAL_SETS_CHECK = "eval_sets_covered"


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


# What a check finds in an export folder: passed, the sentence when it failed, its metadata
# (the folder's path is added to it).
Verdict = tuple[bool, str | None, dict[str, Any]]


def _folder_check(
    key: dg.AssetKey,
    name: str,
    description: str,
    judge: Callable[[Path, Any], Verdict],
    setting: Callable[[], Any] = lambda: None,
) -> dg.AssetChecksDefinition:
    """A blocking check of ``key``'s export folder: ``setting`` is read first (a bad one
    fails the check in its own sentence, export or none), then ``judge`` looks at the folder
    with it, unless the materialization exported none or its folder is gone."""

    @dg.asset_check(asset=key, name=name, blocking=True, description=description)
    def _check(context: dg.AssetCheckExecutionContext) -> dg.AssetCheckResult:
        try:
            value = setting()
        except (settings.SettingError, EvalSetError) as exc:
            return dg.AssetCheckResult(passed=False, description=str(exc))
        folder = export_folder(context, key)
        if (nothing := _nothing(folder)) is not None:
            return nothing
        assert folder is not None
        passed, failed, metadata = judge(folder, value)
        return dg.AssetCheckResult(
            passed=passed,
            description=None if passed else failed,
            metadata={"export_path": dg.MetadataValue.path(str(folder)), **metadata},
        )

    return _check


def _secrets(folder: Path, _: None) -> Verdict:
    # Loaded when a check runs, not with the definitions: Arrow and the scrubber's rules
    # are no part of what a process needs before its first request.
    from model_foundry.lib.exports.proof import scan_secrets
    from model_foundry.lib.hygiene.record import RecordScrubber

    scan = scan_secrets(folder, RecordScrubber.from_settings())
    # Kinds, counts and file rows only: the value found is never shown.
    failed = (
        f"{scan.found} secrets found again in the export's views, first at "
        f"{scan.places[0]}; it must not be trained on or published."
        if scan.found else None
    )  # fmt: skip
    return scan.found == 0, failed, {
        "files_scanned": scan.files,
        "rows_scanned": scan.rows,
        "secrets_found": scan.found,
        "secrets_by_kind": dg.MetadataValue.json(scan.by_kind),
        "found_at": dg.MetadataValue.json(scan.places),
    }  # fmt: skip


def secret_check(key: dg.AssetKey) -> dg.AssetChecksDefinition:
    return _folder_check(
        key, SECRET_CHECK,
        "Every row of the export's views (hf/**/*.parquet, openai/**/*.jsonl) scrubbed again "
        "by this installation's secret rules: nothing is found. PII and the scrubber's own "
        "markers are not counted.",
        _secrets,
    )  # fmt: skip


def _held_back(folder: Path, limit: float) -> Verdict:
    from model_foundry.lib.exports.proof import held_back

    held = held_back(folder)
    failed = (
        f"{held.held} of {held.records} records held back ({held.share:.1%}), "
        f"more than MODEL_FOUNDRY_EXPORT_MAX_HELD_BACK_SHARE={limit}."
    )
    return held.share <= limit, failed, {
        "records": held.records,
        "held_back": held.held,
        "held_back_share": round(held.share, 4),
        "max_share": limit,
        "held_back_by_cause": dg.MetadataValue.json(held.by_cause),
    }  # fmt: skip


def held_back_check(key: dg.AssetKey) -> dg.AssetChecksDefinition:
    return _folder_check(
        key, HELD_BACK_CHECK,
        "The share of the export's records left out of its views (duplicates, filtered, held "
        "back by a gate) is at most MODEL_FOUNDRY_EXPORT_MAX_HELD_BACK_SHARE (default 0.5).",
        _held_back, settings.export_max_held_back_share,
    )  # fmt: skip


def _eval_sets(folder: Path, configured: EvalSets | None) -> Verdict:
    names = [s.name for s in configured.sets] if configured else []
    manifest = json.loads((folder / "manifest.json").read_text(encoding="utf-8"))
    found = (manifest.get("decontamination") or {}).get("eval_sets") or {}
    items = {name: int(found.get(name, {}).get("items", 0)) for name in names}
    missing = [name for name, n in items.items() if n == 0]
    failed = (
        f"The export was not checked against the eval set(s) {', '.join(missing)} that "
        "MODEL_FOUNDRY_EVAL_SETS names; export it again."
    )
    return not missing, failed, {
        "eval_sets_configured": len(names),
        "items_by_eval_set": dg.MetadataValue.json(items),
    }  # fmt: skip


def eval_sets_check(key: dg.AssetKey) -> dg.AssetChecksDefinition:
    return _folder_check(
        key, EVAL_SETS_CHECK,
        "Every eval set MODEL_FOUNDRY_EVAL_SETS names now was in the index the export was "
        "checked against, with its items; none configured: nothing to cover.",
        _eval_sets, load_eval_sets,
    )  # fmt: skip


# Every export asset's checks, made for its key: the one place a check joins them all.
EXPORT_CHECKS: tuple[Callable[[dg.AssetKey], dg.AssetChecksDefinition], ...] = (
    secret_check,
    held_back_check,
    eval_sets_check,
)


def export_checks(key: dg.AssetKey) -> list[dg.AssetChecksDefinition]:
    """The blocking checks of the export asset ``key``."""
    return [make(key) for make in EXPORT_CHECKS]


__all__ = [
    "EVAL_SETS_CHECK",
    "EXPORT_CHECKS",
    "HELD_BACK_CHECK",
    "SECRET_CHECK",
    "export_checks",
    "export_folder",
    "held_back_check",
    "secret_check",
]

"""Plain metadata from ``lib`` as Dagster metadata values, wrapped in this one place."""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

import dagster as dg

from model_foundry.lib.exports.proof import columns, preview
from model_foundry.lib.hygiene.shown import shown_text

# As the inbox asset's preview: a few rows, the start of each text.
PREVIEW_ROWS = 5
PREVIEW_CHARS = 160


def dagster_metadata(plain: Mapping[str, Any]) -> dict[str, Any]:
    """Dicts and lists as JSON, paths as paths; numbers, strings and Dagster metadata values
    as they are (a table or table schema value is a tuple, not a list to encode)."""
    out: dict[str, Any] = {}
    for key, value in plain.items():
        if isinstance(value, dg.MetadataValue):
            out[key] = value
        elif isinstance(value, Mapping | list | tuple):
            out[key] = dg.MetadataValue.json(value if isinstance(value, Mapping) else list(value))
        elif isinstance(value, Path):
            out[key] = dg.MetadataValue.path(str(value))
        else:
            out[key] = value
    return out


def export_view_metadata(folder: Path) -> dict[str, Any]:
    """What the UI shows of an export folder: the main config's columns
    (``dagster/column_schema``) and a preview of a few kept records and a few held back, with
    the cause, each text scrubbed again before it is cut (run storage is no place for a token
    a session pasted, whatever a file of the folder holds)."""
    schema = dg.TableSchema(columns=[dg.TableColumn(n, t) for n, t in columns(folder)])
    names = ["id", "split", "cause", "text"]
    rows = [
        dg.TableRecord(
            {
                "id": r.id,
                "split": r.split,
                "cause": r.cause,
                "text": shown_text(r.text, PREVIEW_CHARS),
            }
        )
        for r in preview(folder, PREVIEW_ROWS, PREVIEW_ROWS)
    ]
    return {
        "dagster/column_schema": dg.MetadataValue.table_schema(schema),
        "preview": dg.MetadataValue.table(
            records=rows,
            schema=dg.TableSchema(columns=[dg.TableColumn(c, "string") for c in names]),
        ),
    }


__all__ = ["dagster_metadata", "export_view_metadata"]

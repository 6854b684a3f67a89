"""Plain metadata from ``lib`` as Dagster metadata values, wrapped in this one place."""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

import dagster as dg

from model_foundry.lib.hygiene.shown import shown_text
from model_foundry.lib.tables.base import Table

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


def preview_table(
    rows: Iterable[tuple[str, str, str, str]], group: str = "split"
) -> dg.TableMetadataValue:
    """A preview of a few records as ``(id, <group>, cause, text)``: ``cause`` is ``kept`` or
    why the record is held back, and each text is scrubbed again before it is cut (run
    storage is no place for a token a session pasted, whatever the data holds)."""
    names = ["id", group, "cause", "text"]
    return dg.MetadataValue.table(
        records=[
            dg.TableRecord(
                dict(zip(names, (i, g, cause, shown_text(text, PREVIEW_CHARS)), strict=True))
            )
            for i, g, cause, text in rows
        ],
        schema=dg.TableSchema(columns=[dg.TableColumn(c, "string") for c in names]),
    )


def export_view_metadata(folder: Path) -> dict[str, Any]:
    """What the UI shows of an export folder: the main config's columns
    (``dagster/column_schema``) and a preview of a few kept records and a few held back."""
    # With the export, not the definitions: what proof reads with (Arrow) is no part of what
    # a process needs before its first request.
    from model_foundry.lib.exports.proof import columns, preview

    schema = dg.TableSchema(columns=[dg.TableColumn(n, t) for n, t in columns(folder)])
    shown = preview(folder, PREVIEW_ROWS, PREVIEW_ROWS)
    return {
        "dagster/column_schema": dg.MetadataValue.table_schema(schema),
        "preview": preview_table((r.id, r.split, r.cause, r.text) for r in shown),
    }


def table_metadata(table: Table[Any]) -> dict[str, Any]:
    """A DuckDB table's columns as its asset's definition metadata
    (``dagster/column_schema``): each column's SQL type and NOT NULL as its DDL declares
    them, so the UI shows the table before a run, in the order ``SELECT *`` gives."""
    found = []
    # A key's columns are NOT NULL whether the column or the table declares the key.
    key = re.search(r"^\s*PRIMARY KEY\s*\((?P<columns>[^)]*)\)", table.ddl, re.M)
    keyed = {c.strip() for c in key["columns"].split(",")} if key else set()
    for name in table.columns:
        line = re.search(
            rf"^\s*{name}\s+(?P<type>[A-Z][A-Z0-9_]*(?:\([^)]*\))?(?:\[\])?)(?P<rest>.*)$",
            table.ddl,
            re.M,
        )
        if line is None:
            raise ValueError(f"table {table.name}: column {name} is not in its DDL")
        rest = line["rest"]
        constraints = dg.TableColumnConstraints(
            nullable=not ("NOT NULL" in rest or "PRIMARY KEY" in rest or name in keyed),
            unique="PRIMARY KEY" in rest or keyed == {name},
        )
        found.append(dg.TableColumn(name, line["type"], constraints=constraints))
    return {"dagster/column_schema": dg.MetadataValue.table_schema(dg.TableSchema(columns=found))}


__all__ = [
    "PREVIEW_ROWS",
    "dagster_metadata",
    "export_view_metadata",
    "preview_table",
    "table_metadata",
]

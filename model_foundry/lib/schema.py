"""Every table and view of the DuckDB file, in the order they can be created.

Each table's DDL lives next to the SQL that writes it (``lib/inbox/store.py``,
``lib/inbox/tables.py``, ``lib/completions.py``, ``lib/summaries.py``, ``lib/summarise.py``,
``lib/throughput.py``, ``lib/datasets.py``); this module only lists them, inbox tables
first, then the views over all of them. Writers pass :func:`pipeline_schema` to
``storage.connect``, which runs it once per process and file, so a fresh file gets every
table and view on first use and a person's ad-hoc query never finds one missing.
"""

from __future__ import annotations

from functools import cache


@cache
def pipeline_schema() -> tuple[str, ...]:
    # Imported here, not at module level: the modules that own the DDL also write with it.
    from model_foundry.lib.completions import COMPLETION_TABLES
    from model_foundry.lib.datasets import DATASET_TABLES
    from model_foundry.lib.inbox.store import INBOX_SCHEMA
    from model_foundry.lib.inbox.tables import INBOX_TABLES
    from model_foundry.lib.summaries import SUMMARY_TABLES
    from model_foundry.lib.summarise import SUMMARY_PART_TABLES
    from model_foundry.lib.throughput import THROUGHPUT_TABLES
    from model_foundry.lib.views import VIEWS

    return (
        *INBOX_SCHEMA,
        *INBOX_TABLES,
        *COMPLETION_TABLES,
        *SUMMARY_TABLES,
        *SUMMARY_PART_TABLES,
        *THROUGHPUT_TABLES,
        *DATASET_TABLES,
        *VIEWS,
    )


__all__ = ["pipeline_schema"]

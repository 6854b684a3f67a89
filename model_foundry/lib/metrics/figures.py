"""The figures the Prometheus exporter reads from DuckDB, in one short read-only visit.

Every query is an aggregate over a table the pipeline appends to, so the counts only grow and
serve as Prometheus counters. Tables that do not exist yet (a fresh file, a pipeline that has
not run that step) read as empty: the exporter starts before the first run.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from typing import Any

import duckdb

from model_foundry.lib.events import DEAD_LETTER_REASON_CLASSES
from model_foundry.lib.inbox.counts import read_counts
from model_foundry.lib.tables.base import has_column

# Upper bounds (seconds) of the TTFT and latency histograms. TTFT of a loaded slot is well
# under a second and a queued one waits minutes; a request may take up to its request_s.
TTFT_BUCKETS: tuple[float, ...] = (0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 120)
LATENCY_BUCKETS: tuple[float, ...] = (0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 120, 300, 600, 900)


@dataclass(frozen=True)
class HistogramFigures:
    """Cumulative bucket counts (``le`` upper bound, count) plus the observations' count and sum."""

    buckets: tuple[tuple[float, int], ...]
    count: int
    total: float


@dataclass(frozen=True)
class PromptCacheFigures:
    """Tokens of one slot's attempts at one task whose server reported its cache reuse."""

    prompt_tokens: int
    cached_tokens: int
    completion_tokens: int


# The slot_prefill view's sums, read from its table so a file whose views are older (opened
# read-only before a writer recreated them) is read the same.
PROMPT_CACHE_SQL = """
SELECT slot, task, sum(prompt_tokens), sum(cached_prompt_tokens), sum(completion_tokens)
FROM llm_completions
WHERE cached_prompt_tokens IS NOT NULL AND prompt_tokens IS NOT NULL
  AND completion_tokens IS NOT NULL
GROUP BY slot, task
"""


@dataclass
class DuckDBFigures:
    """One snapshot of the DuckDB file; keys are label values."""

    taken_at: float
    inbox_events: dict[str, int] = field(default_factory=dict)
    newest_event_at: dict[str, float] = field(default_factory=dict)
    dead_letters: dict[tuple[str, str], int] = field(default_factory=dict)
    completions: dict[tuple[str, str, str], int] = field(default_factory=dict)
    prompt_tokens: dict[str, int] = field(default_factory=dict)
    generation_tokens: dict[str, int] = field(default_factory=dict)
    # (slot, task) -> prompt, cached and completion tokens of the attempts whose server said
    # how many prompt tokens it reused (the slot_prefill view's sums).
    prompt_cache: dict[tuple[str, str], PromptCacheFigures] = field(default_factory=dict)
    ttft: dict[str, HistogramFigures] = field(default_factory=dict)
    latency: dict[str, HistogramFigures] = field(default_factory=dict)
    dataset_samples: dict[tuple[str, str], int] = field(default_factory=dict)
    summaries: int = 0
    translations: int = 0
    # The sessions' own chat turns and their tokens, by the slot session_routing mapped them to.
    session_turns: dict[str, int] = field(default_factory=dict)
    session_prompt_tokens: dict[str, int] = field(default_factory=dict)
    session_completion_tokens: dict[str, int] = field(default_factory=dict)
    # Lineage events by kind (node, edge), and the sessions session_flow has measured.
    flow_events: dict[str, int] = field(default_factory=dict)
    flow_sessions: int = 0
    uncoordinated_sessions: int = 0


def reason_class_sql(column: str = "reason") -> str:
    """A SQL CASE giving each dead-letter reason its class, from the contract's own list."""
    arms = " ".join(
        f"WHEN {column} LIKE '{pattern}' THEN '{name}'"
        for name, patterns in DEAD_LETTER_REASON_CLASSES
        for pattern in patterns
    )
    return f"CASE {arms} ELSE 'other' END"


def _tables(con: duckdb.DuckDBPyConnection) -> set[str]:
    return {row[0] for row in con.execute("SELECT table_name FROM duckdb_tables()").fetchall()}


def _rows(con: duckdb.DuckDBPyConnection, sql: str) -> list[tuple[Any, ...]]:
    return con.execute(sql).fetchall()


def _histograms(
    con: duckdb.DuckDBPyConnection, column: str, bounds: tuple[float, ...]
) -> dict[str, HistogramFigures]:
    # Bounds are this module's constants, never user input, so they are written into the SQL.
    counts = ", ".join(f"count(*) FILTER (WHERE {column} <= {b!r})" for b in bounds)
    sql = (
        f"SELECT slot, count({column}), coalesce(sum({column}), 0), {counts} "
        f"FROM llm_completions WHERE status = 'ok' AND {column} IS NOT NULL GROUP BY slot"
    )
    result: dict[str, HistogramFigures] = {}
    for row in _rows(con, sql):
        slot, n, total, *cumulative = row
        result[slot] = HistogramFigures(
            buckets=tuple(zip(bounds, (int(c) for c in cumulative), strict=True)),
            count=int(n),
            total=float(total),
        )
    return result


def _read_inbox(con: duckdb.DuckDBPyConnection, figures: DuckDBFigures) -> None:
    # Kept counts plus the commits after them, never a count over the whole inbox.
    for count in read_counts(con):
        figures.inbox_events[count.subject] = count.events
        if count.newest_at is not None:
            figures.newest_event_at[count.subject] = count.newest_at


def _read_dead_letters(con: duckdb.DuckDBPyConnection, figures: DuckDBFigures) -> None:
    sql = (
        f"SELECT subject, {reason_class_sql()} AS reason_class, count(*) "
        "FROM pipeline_event_dead_letter GROUP BY ALL"
    )
    for subject, reason_class, n in _rows(con, sql):
        figures.dead_letters[(subject, reason_class)] = int(n)


def _read_completions(con: duckdb.DuckDBPyConnection, figures: DuckDBFigures) -> None:
    for slot, model, status, n in _rows(
        con, "SELECT slot, model, status, count(*) FROM llm_completions GROUP BY ALL"
    ):
        figures.completions[(slot, model, status)] = int(n)
    for slot, prompt, generated in _rows(
        con,
        "SELECT slot, coalesce(sum(prompt_tokens), 0), coalesce(sum(completion_tokens), 0) "
        "FROM llm_completions GROUP BY slot",
    ):
        figures.prompt_tokens[slot] = int(prompt)
        figures.generation_tokens[slot] = int(generated)
    # A file no writer has opened since the column was added lacks it (read-only: no upgrade).
    if has_column(con, "llm_completions", "cached_prompt_tokens"):
        for slot, task, prompt, cached, generated in _rows(con, PROMPT_CACHE_SQL):
            figures.prompt_cache[(slot, task)] = PromptCacheFigures(
                int(prompt), int(cached), int(generated)
            )
    figures.ttft = _histograms(con, "ttft_s", TTFT_BUCKETS)
    figures.latency = _histograms(con, "latency_s", LATENCY_BUCKETS)


def _read_sessions(con: duckdb.DuckDBPyConnection, tables: set[str], f: DuckDBFigures) -> None:
    if "session_routing" in tables:
        for slot, turns, prompt, completion in _rows(
            con,
            "SELECT slot, sum(turns), sum(prompt_tokens), sum(completion_tokens) "
            "FROM session_routing GROUP BY slot",
        ):
            f.session_turns[slot] = int(turns)
            f.session_prompt_tokens[slot] = int(prompt)
            f.session_completion_tokens[slot] = int(completion)
    for kind, table in (("node", "flow_nodes"), ("edge", "flow_edges")):
        if table in tables:
            f.flow_events[kind] = int(_rows(con, f"SELECT count(*) FROM {table}")[0][0])
    if "session_flow" in tables:
        total, uncoordinated = _rows(
            con, "SELECT count(*), count(*) FILTER (WHERE uncoordinated) FROM session_flow"
        )[0]
        f.flow_sessions, f.uncoordinated_sessions = int(total), int(uncoordinated)


def read_figures(con: duckdb.DuckDBPyConnection) -> DuckDBFigures:
    """Everything the exporter serves from DuckDB, read through ``con`` (read-only is enough)."""
    figures = DuckDBFigures(taken_at=time.time())
    tables = _tables(con)
    # A file no writer has opened since the counts existed has none yet: the first
    # connection that may write (any drain or run) adds them.
    if "pipeline_event_inbox_counts" in tables:
        _read_inbox(con, figures)
    if "pipeline_event_dead_letter" in tables:
        _read_dead_letters(con, figures)
    if "llm_completions" in tables:
        _read_completions(con, figures)
    if "dataset_samples" in tables:
        for dataset, role, n in _rows(
            con, "SELECT dataset, role, count(*) FROM dataset_samples GROUP BY ALL"
        ):
            figures.dataset_samples[(dataset, role)] = int(n)
    if "session_summaries" in tables:
        figures.summaries = int(_rows(con, "SELECT count(*) FROM session_summaries")[0][0])
    if "session_summary_translations" in tables:
        figures.translations = int(
            _rows(con, "SELECT count(*) FROM session_summary_translations")[0][0]
        )
    _read_sessions(con, tables, figures)
    return figures


__all__ = [
    "LATENCY_BUCKETS",
    "TTFT_BUCKETS",
    "DuckDBFigures",
    "HistogramFigures",
    "PromptCacheFigures",
    "read_figures",
    "reason_class_sql",
]

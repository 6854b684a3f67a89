"""The summary and translation assets.

Chat sessions with new events are summarised, then translated, by the slots.
"""

from collections import Counter

import dagster as dg
from pydantic import Field

from model_foundry.defs import keys
from model_foundry.defs.automation import on_new_upstream_data
from model_foundry.defs.metadata import dagster_metadata, table_metadata
from model_foundry.defs.resources import FoundryDuckDB, SlotsResource
from model_foundry.lib.gates.answers import held_back
from model_foundry.lib.gates.config import GateConfig, GateConfigError, load_gate_config
from model_foundry.lib.llm import LlmRun, nothing_asked
from model_foundry.lib.summaries.mapreduce import SUMMARY_ROLE, SummaryOutcome, summarise_sessions
from model_foundry.lib.summaries.pending import sessions_to_summarise, summaries_to_translate
from model_foundry.lib.summaries.rows import record_summaries
from model_foundry.lib.summaries.translations import TRANSLATION_ROLE, Translations, directions
from model_foundry.lib.tables.summaries import SESSION_SUMMARIES, SESSION_SUMMARY_TRANSLATIONS


def _gates(table: str) -> GateConfig:
    """The quality gates of ``table``'s rows (the hygiene file's ``gates`` section), read
    before any slot is asked: a bad file fails the run in one sentence, having paid nothing."""
    try:
        return load_gate_config(table)
    except GateConfigError as exc:
        raise dg.Failure(description=str(exc), allow_retries=False) from None


class SummaryConfig(dg.Config):
    role: str = Field(default=SUMMARY_ROLE, description="Role that writes the summaries.")
    max_sessions: int = Field(default=500, description="Sessions summarised per run at most.")
    max_messages: int = Field(
        default=0,
        description=(
            "Newest messages kept in the prompt; 0 keeps them all (sessions too long for the "
            "slots' context are summarised in parts)."
        ),
    )
    max_chars_per_message: int = Field(default=600, description="Each message is cut to this.")


@dg.asset(
    key=keys.SESSION_SUMMARIES,
    deps=[keys.CHAT_MESSAGES],
    metadata=table_metadata(SESSION_SUMMARIES),
    group_name="summaries",
    kinds={"duckdb", "llm"},
    automation_condition=on_new_upstream_data(),
    description=(
        "A short summary of each chat session with new events, written by the kindergarten "
        "role (profile fallbacks apply); one row per summary with slot, model, tokens and the "
        "events it covered. Sessions too long for the slots' context window are summarised "
        "in parts, then from the parts' summaries (see session_summary_parts)."
    ),
)
def session_summaries(
    context: dg.AssetExecutionContext,
    config: SummaryConfig,
    duckdb: FoundryDuckDB,
    slots: SlotsResource,
) -> dg.MaterializeResult:
    pending = sessions_to_summarise(duckdb.database, config.max_sessions)
    if not pending:
        # Nothing new: no need to read the slot file or reach any slot.
        return dg.MaterializeResult(
            metadata=dagster_metadata(
                {"sessions_pending": 0, "summaries_written": 0, **nothing_asked()}
            )
        )
    context.log.info(f"{len(pending)} sessions have chat events no summary covers yet")
    gates = _gates(SESSION_SUMMARIES.name)
    run = LlmRun(
        duckdb.database, slots, run_id=context.run.run_id, asset="session_summaries",
        log=context.log,
    )  # fmt: skip
    with run:
        outcome = summarise_sessions(
            run,
            pending,
            role=config.role,
            max_messages=config.max_messages,
            max_chars=config.max_chars_per_message,
        )
        written = record_summaries(run, outcome, gates)
    _log_failed(context, outcome)
    metadata = {
        "sessions_pending": len(pending),
        "summaries_written": len(written),
        "dagster/row_count": len(written),
        "held_back_by_gate": held_back([r.gate for r in written]),
        "correlation_ids": [s.correlation_id for s in pending][:200],
        "context_windows": outcome.windows,
        "failed_sessions": dict(list(outcome.failed.items())[:50]),
        **outcome.metadata(),
        **run.metadata(),
    }
    return dg.MaterializeResult(metadata=dagster_metadata(metadata))


def _log_failed(context: dg.AssetExecutionContext, outcome: SummaryOutcome) -> None:
    """One line per distinct reason: which failures come back next run and which do not."""
    if not outcome.failed:
        return
    for reason, n in Counter(outcome.failed.values()).most_common():
        context.log.warning(f"{n} sessions not summarised this run: {reason}")
    if outcome.batch.unfit:
        context.log.warning(
            f"{len(outcome.batch.unfit)} prompts can never fit any slot's context; they are "
            "recorded as PromptTooLong in llm_completions and not sent again until the slots "
            "change"
        )
    # Every session not summarised stays pending; its requests that failed are sent again,
    # those that fit no slot are not.
    context.log.warning(f"the next run plans these {len(outcome.failed)} sessions again")


class TranslationConfig(dg.Config):
    role: str = Field(default=TRANSLATION_ROLE, description="Role that translates.")
    max_summaries: int = Field(default=500, description="Summaries translated per run at most.")


@dg.asset(
    key=keys.SESSION_SUMMARY_TRANSLATIONS,
    deps=[session_summaries],
    metadata=table_metadata(SESSION_SUMMARY_TRANSLATIONS),
    group_name="summaries",
    kinds={"duckdb", "llm"},
    automation_condition=on_new_upstream_data(),
    description=(
        "Each session summary in the other language (Japanese <-> English, detected), "
        "by the translator role."
    ),
)
def session_summary_translations(
    context: dg.AssetExecutionContext,
    config: TranslationConfig,
    duckdb: FoundryDuckDB,
    slots: SlotsResource,
) -> dg.MaterializeResult:
    pending = summaries_to_translate(duckdb.database, config.max_summaries)
    if not pending:
        return dg.MaterializeResult(
            metadata=dagster_metadata(
                {"summaries_pending": 0, "translations_written": 0, **nothing_asked()}
            )
        )
    gates = _gates(SESSION_SUMMARY_TRANSLATIONS.name)
    run = LlmRun(
        duckdb.database, slots, run_id=context.run.run_id,
        asset="session_summary_translations", log=context.log,
    )  # fmt: skip
    with run:
        outcome = run.work(Translations(config.role, gates), pending)
    metadata = {
        "summaries_pending": len(pending),
        "translations_written": outcome.written,
        "dagster/row_count": outcome.written,
        "held_back_by_gate": held_back([r.gate for r in outcome.rows]),
        "directions": directions(outcome.rows),
        **run.metadata(),
    }
    return dg.MaterializeResult(metadata=dagster_metadata(metadata))

"""The summary and translation assets.

Chat sessions with new events are summarised, then translated, by the slots.
"""

import json

import dagster as dg
from pydantic import Field

from model_foundry.defs.automation import on_new_upstream_data
from model_foundry.defs.resources import FoundryDuckDB, SlotsResource
from model_foundry.lib.completions import (
    Completion,
    CompletionBatch,
    CompletionStore,
    fit_requests,
    plan_request,
    progress_logger,
)
from model_foundry.lib.summaries import (
    SUMMARY_ROLE,
    TRANSLATION_ROLE,
    TRANSLATION_TASK,
    detect_language,
    sessions_to_summarise,
    summaries_to_translate,
    translation_params,
    write_summaries,
    write_translations,
)
from model_foundry.lib.summarise import (
    Summarised,
    part_rows,
    summarise_sessions,
    write_summary_parts,
)
from model_foundry.lib.telemetry import for_run

# The assets.


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
    deps=[dg.AssetKey("chat_messages")],
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
            metadata={
                "sessions_pending": 0,
                "summaries_written": 0,
                **CompletionBatch(0).metadata(),
            }
        )
    slot_file = slots.load()
    context.log.info(f"{len(pending)} sessions have chat events no summary covers yet")
    with (
        for_run(context.run.run_id, "session_summaries") as telemetry,
        slots.context_book(slot_file) as book,
    ):
        store = CompletionStore(duckdb.database, run_id=context.run.run_id, telemetry=telemetry)
        outcome = summarise_sessions(
            store,
            pending,
            slot_file,
            profile=slots.profile,
            role=config.role,
            max_messages=config.max_messages,
            max_chars=config.max_chars_per_message,
            book=book,
            options=slots.dispatch_options(),
            log=context.log.info,
            progress=progress_logger(context.log.info, "session summaries"),
        )
        rows, events = _summary_rows(outcome.summarised, context.run.run_id)
        written = write_summaries(duckdb.database, rows)
        write_summary_parts(duckdb.database, part_rows(outcome.summarised))
        for event in events:
            telemetry.emit("model_foundry.summary", event)
    _log_failed(context, outcome.failed, outcome.batch)
    return dg.MaterializeResult(
        metadata={
            "sessions_pending": len(pending),
            "summaries_written": written,
            "dagster/row_count": written,
            "correlation_ids": dg.MetadataValue.json([s.correlation_id for s in pending][:200]),
            "context_windows": dg.MetadataValue.json(outcome.windows),
            "failed_sessions": dg.MetadataValue.json(dict(list(outcome.failed.items())[:50])),
            **outcome.metadata(),
            **outcome.batch.metadata(),
            **telemetry.metadata(),
        }
    )


def _log_failed(
    context: dg.AssetExecutionContext, failed: dict[str, str], batch: CompletionBatch
) -> None:
    """One line per distinct reason: which failures come back next run and which do not."""
    if not failed:
        return
    reasons: dict[str, int] = {}
    for reason in failed.values():
        reasons[reason] = reasons.get(reason, 0) + 1
    for reason, n in sorted(reasons.items(), key=lambda kv: -kv[1]):
        context.log.warning(f"{n} sessions not summarised this run: {reason}")
    if batch.unfit:
        context.log.warning(
            f"{len(batch.unfit)} prompts can never fit any slot's context; they are recorded "
            "as PromptTooLong in llm_completions and not sent again until the slots change"
        )
    # Every session not summarised stays pending; its requests that failed are sent again,
    # those that fit no slot are not.
    context.log.warning(f"the next run plans these {len(failed)} sessions again")


def _written_event(correlation_id: str, c: Completion, **more: object) -> dict[str, object]:
    """Telemetry fields of a written summary or translation: who answered and how fast."""
    return {
        "correlation_id": correlation_id,
        "slot": c.slot,
        "model": c.model,
        "prompt_tokens": c.prompt_tokens,
        "generation_tokens": c.completion_tokens,
        "latency_s": c.latency_s,
        "gen_tps": c.gen_tps,
        **more,
    }


def _summary_rows(
    summarised: list[Summarised], run_id: str
) -> tuple[list[tuple], list[dict[str, object]]]:
    rows = []
    events = []
    for done in summarised:
        s, c = done.session, done.completion
        if not c.content.strip():
            continue
        language = detect_language(c.content)
        events.append(
            _written_event(s.correlation_id, c, language=language, chat_events=s.chat_events)
        )
        rows.append(
            (
                done.request.key,
                s.correlation_id,
                s.chat_events,
                json.dumps(s.event_ids),
                s.first_event_at,
                s.last_event_at,
                language,
                c.content.strip(),
                c.slot,
                c.model,
                c.prompt_tokens,
                c.completion_tokens,
                c.latency_s,
                c.gen_tps,
                run_id,
            )
        )
    return rows, events


class TranslationConfig(dg.Config):
    role: str = Field(default=TRANSLATION_ROLE, description="Role that translates.")
    max_summaries: int = Field(default=500, description="Summaries translated per run at most.")


@dg.asset(
    deps=[session_summaries],
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
            metadata={
                "summaries_pending": 0,
                "translations_written": 0,
                **CompletionBatch(0).metadata(),
            }
        )
    slot_file = slots.load()
    planned = []
    for summary_key, corr, lang, text in pending:
        params = translation_params(lang)
        request = plan_request(
            slot_file,
            TRANSLATION_TASK,
            config.role,
            profile=slots.profile,
            text=text,
            params=params,
            correlation_id=corr,
        )
        planned.append((summary_key, corr, params, text, request))
    with (
        for_run(context.run.run_id, "session_summary_translations") as telemetry,
        slots.context_book(slot_file) as book,
    ):
        fitted = fit_requests([p[-1] for p in planned], book, slot_file, slots.profile)
        planned = [(*p[:-1], r) for p, r in zip(planned, fitted, strict=True)]
        store = CompletionStore(duckdb.database, run_id=context.run.run_id, telemetry=telemetry)
        batch = store.run(
            [p[-1] for p in planned],
            slot_file,
            slots.profile,
            options=slots.dispatch_options(),
            progress=progress_logger(context.log.info, "summary translations"),
        )
        rows, events, directions = _translation_rows(planned, batch, context.run.run_id)
        written = write_translations(duckdb.database, rows)
        for event in events:
            telemetry.emit("model_foundry.translation", event)
    return dg.MaterializeResult(
        metadata={
            "summaries_pending": len(pending),
            "translations_written": written,
            "dagster/row_count": written,
            "directions": dg.MetadataValue.json(directions),
            **batch.metadata(),
            **telemetry.metadata(),
        }
    )


def _translation_rows(
    planned: list, batch: CompletionBatch, run_id: str
) -> tuple[list[tuple], list[dict[str, object]], dict[str, int]]:
    rows = []
    events = []
    directions: dict[str, int] = {}
    for summary_key, corr, params, text, request in planned:
        c = batch.results.get(request.key)
        if c is None or not c.content.strip():
            continue
        direction = f"{params['source_lang']} -> {params['target_lang']}"
        directions[direction] = directions.get(direction, 0) + 1
        events.append(
            _written_event(
                corr,
                c,
                source_lang=params["source_lang"],
                target_lang=params["target_lang"],
            )
        )
        rows.append(
            (
                summary_key,
                corr,
                request.key,
                params["source_lang"],
                params["target_lang"],
                text,
                c.content.strip(),
                c.slot,
                c.model,
                c.prompt_tokens,
                c.completion_tokens,
                c.latency_s,
                c.gen_tps,
                run_id,
            )
        )
    return rows, events, directions

"""The lab's lesson as a check: a worker slot live in the profile that gets no session turns."""

from dataclasses import replace

import dagster as dg
from pydantic import Field

from model_foundry.defs.flow.assets import session_routing
from model_foundry.defs.resources import FoundryDuckDB, SlotsResource
from model_foundry.lib import settings
from model_foundry.lib.flow.store import recent_verdict
from model_foundry.lib.hygiene.shown import shown_texts


class RoutingWindowConfig(dg.Config):
    sessions: int = Field(
        default_factory=settings.routing_window_sessions,
        ge=1,
        description="The newest sessions looked at (MODEL_FOUNDRY_ROUTING_WINDOW_SESSIONS).",
    )


@dg.asset_check(
    asset=session_routing,
    description=(
        "Every worker slot live in the active profile that serves chat got turns in the "
        "newest sessions, and every slot the turns name is in the slot file."
    ),
)
def live_slots_get_turns(
    config: RoutingWindowConfig, duckdb: FoundryDuckDB, slots: SlotsResource
) -> dg.AssetCheckResult:
    slot_file = slots.load()
    verdict = recent_verdict(duckdb.database, slot_file, config.sessions, slots.profile)
    # Slot names the slot file lacks come from the events' payloads: lab text, shown scrubbed.
    names = dict.fromkeys(shown_texts(verdict.unknown_names))
    verdict = replace(verdict, unknown_names=tuple(names))
    warnings = verdict.warnings()
    return dg.AssetCheckResult(
        passed=verdict.ok,
        severity=dg.AssetCheckSeverity.WARN,
        # Slot names stay as the slot file spells them, so a sentence may start lowercase.
        description="\n".join(warnings) or None,
        metadata={
            "profile": verdict.profile,
            "sessions": verdict.sessions,
            "turns": verdict.turns,
            "turns_by_slot": dg.MetadataValue.json(verdict.turns_by_slot),
            "idle_slots": dg.MetadataValue.json(list(verdict.idle)),
            "unknown_slot_names": dg.MetadataValue.json(list(verdict.unknown_names)),
        },
    )


session_checks = [live_slots_get_turns]

"""The asset keys one domain refers to in another's, spelled once.

A dependency named by a string would silently point at nothing after a rename; these names
fail at import instead, and the definitions snapshot test pins their values.
"""

from __future__ import annotations

import dagster as dg

INBOX = dg.AssetKey("pipeline_event_inbox_record")
CHAT_MESSAGES = dg.AssetKey("chat_messages")
FLOW_LINEAGE = dg.AssetKey("flow_lineage")
SESSION_SUMMARIES = dg.AssetKey("session_summaries")
SESSION_SUMMARY_TRANSLATIONS = dg.AssetKey("session_summary_translations")
DATASET_SAMPLES = dg.AssetKey("dataset_samples")
DATASET_JUDGEMENTS = dg.AssetKey("dataset_judgements")
SESSION_TRAJECTORIES = dg.AssetKey("session_trajectories")
SESSION_DATASET = dg.AssetKey("session_dataset")

__all__ = [
    "CHAT_MESSAGES",
    "DATASET_JUDGEMENTS",
    "DATASET_SAMPLES",
    "FLOW_LINEAGE",
    "INBOX",
    "SESSION_DATASET",
    "SESSION_SUMMARIES",
    "SESSION_SUMMARY_TRANSLATIONS",
    "SESSION_TRAJECTORIES",
]

"""Dataset hygiene: secrets and personal data scrubbed from records, near-duplicates found,
and grouped splits that never move. Pure code (no Dagster); docs/hygiene.md explains it."""

from model_foundry.lib.hygiene.config import HygieneConfig, HygieneConfigError, load_config
from model_foundry.lib.hygiene.record import RecordScrubber, scrub

__all__ = ["HygieneConfig", "HygieneConfigError", "RecordScrubber", "load_config", "scrub"]

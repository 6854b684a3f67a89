"""Dataset hygiene: secrets and personal data scrubbed from records, near-duplicates found,
and grouped splits that never move. Pure code (no Dagster); docs/hygiene.md explains it.

The scrubber's few hundred expressions compile on first use: a collection reads its prompts'
near-duplicates (``dedup``) before its first request, and scrubs only when it exports."""

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from model_foundry.lib.hygiene.config import HygieneConfig, HygieneConfigError, load_config
    from model_foundry.lib.hygiene.record import RecordScrubber, scrub

_LAZY = {
    "HygieneConfig": "config",
    "HygieneConfigError": "config",
    "load_config": "config",
    "RecordScrubber": "record",
    "scrub": "record",
}


def __getattr__(name: str) -> Any:
    if name not in _LAZY:
        raise AttributeError(name)
    import importlib

    return getattr(importlib.import_module(f"{__name__}.{_LAZY[name]}"), name)


__all__ = ["HygieneConfig", "HygieneConfigError", "RecordScrubber", "load_config", "scrub"]

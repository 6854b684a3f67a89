"""Which gates apply and their thresholds: defaults, a recipe's ``gates``, the hygiene file.

The causes are named in the order :func:`answers.gate` checks them. A dataset's settings are
the hygiene file's ``gates.default`` with its own entry on top; a wrong value is one
sentence naming the file and the field (:class:`GateConfigError`).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field, fields, replace
from pathlib import Path
from typing import Any

import yaml

from model_foundry.lib import settings

CAUSES = (
    "cut_off",
    "empty",
    "unparsed",
    "repetition",
    "echo",
    "wrong_script",
    "noise_count",
    "noise_words",
    "noise_symbols",
    "noise_word_length",
    "noise_chars",
    "noise_stop_words",
    "noise_consonants",
    "noise_scripts",
    "noise_hex",
    "noise_digits",
    "noise_kana",
    "noise_particles",
    "noise_escapes",
    "noise_tokens",
    "noise_keyboard",
    "noise_unfinished",
    "noise_mojibake",
    "noise_layout",
    "noise_questions",
)


@dataclass(frozen=True)
class GateConfig:
    """Which causes apply and their thresholds; the defaults are Gopher's (see the module)."""

    skip: frozenset[str] = frozenset()
    dup_line_frac: float = 0.30
    dup_para_frac: float = 0.30
    dup_line_char_frac: float = 0.20
    dup_para_char_frac: float = 0.20
    top_ngram_char_frac: Mapping[int, float] = field(
        default_factory=lambda: {2: 0.20, 3: 0.18, 4: 0.16}
    )
    dup_ngram_char_frac: Mapping[int, float] = field(
        default_factory=lambda: {5: 0.15, 6: 0.14, 7: 0.13, 8: 0.12, 9: 0.11, 10: 0.10}
    )
    echo_ngram: int = 4
    echo_share: float = 0.7
    # Share of a translation's letters that must be in the target's script.
    script_share: float = 0.5
    # Gopher's minimum document length, from which the duplicate n-gram statistics apply.
    min_words_for_ngram_dups: int = 50
    # The occurrence of a line, paragraph or top n-gram from which it counts as repeated.
    repeat_from: int = 3
    # Japanese and Chinese (no spaces between words): the most share of the letters in runs of
    # 10 letters seen before (``repetition.py``).
    dup_cjk_char_frac: float = 0.30
    # The same line, token or short unit of figures and marks this many times in a row is a
    # loop, words or none (``-``, ``|``, ``(1,0)``, ``40k``, ``1.1.1.``).
    run_from: int = 16
    # The noise gates (``noise.py``), looser than Gopher's web-page thresholds so that chat
    # answers that are tables, formulas, lists of figures or Japanese are kept: the least
    # share of words with a letter, the most symbol-only words per word, the longest mean
    # word, the largest share of characters in noise.
    noise_letter_words: float = 0.5
    noise_symbols_per_word: float = 0.5
    noise_word_length: float = 25.0
    noise_chars: float = 0.5


# The defaults, shared: a GateConfig is frozen.
DEFAULTS = GateConfig()


class GateConfigError(ValueError):
    """The gates section cannot be used; the message names the file and the field."""


_FLOATS = {f.name for f in fields(GateConfig) if f.type == "float"}


def _settings(where: str, raw: Any, base: GateConfig) -> GateConfig:
    if not isinstance(raw, dict):
        raise GateConfigError(f"{where} must be a mapping of thresholds")
    changes: dict[str, Any] = {}
    for key, value in raw.items():
        at = f"{where}.{key}"
        # Not "off": YAML reads that key as false.
        if key == "skip":
            if not isinstance(value, list) or set(value) - set(CAUSES):
                raise GateConfigError(f"{at} must be a list of causes ({', '.join(CAUSES)})")
            changes["skip"] = frozenset(value)
        elif key in _FLOATS:
            if isinstance(value, bool) or not isinstance(value, int | float) or value < 0:
                raise GateConfigError(f"{at} must be a number >= 0")
            changes[key] = float(value)
        elif key in ("echo_ngram", "min_words_for_ngram_dups", "repeat_from", "run_from"):
            if isinstance(value, bool) or not isinstance(value, int) or value < 1:
                raise GateConfigError(f"{at} must be an integer >= 1")
            changes[key] = value
        elif key in ("top_ngram_char_frac", "dup_ngram_char_frac"):
            if not isinstance(value, dict) or not all(
                isinstance(n, int) and n > 0 and isinstance(v, int | float)
                for n, v in value.items()
            ):
                raise GateConfigError(f"{at} must map n-gram sizes to fractions")
            changes[key] = {n: float(v) for n, v in value.items()}
        else:
            raise GateConfigError(f"{at} is not a gate setting")
    return replace(base, **changes)


def gate_settings(where: str, raw: Any) -> GateConfig:
    """Gates from one mapping of settings (a recipe's ``gates``) over the defaults."""
    return _settings(where, raw, GateConfig())


def gate_config(raw: Any, dataset: str, where: str = "gates") -> GateConfig:
    """A dataset's gates from the hygiene file's ``gates`` section: ``default`` for every
    dataset, then the dataset's own entry (by name) on top of it."""
    if raw is None:
        return GateConfig()
    if not isinstance(raw, dict):
        raise GateConfigError(f"{where} must map dataset names (or default) to settings")
    config = _settings(f"{where}.default", raw.get("default") or {}, GateConfig())
    if dataset in raw and dataset != "default":
        config = _settings(f"{where}.{dataset}", raw[dataset] or {}, config)
    return config


def load_gate_config(dataset: str, path: Path | None = None) -> GateConfig:
    """``dataset``'s gates from the hygiene file (default ``settings.hygiene_file()``), whose
    other sections ``hygiene.config`` reads; the defaults when it or its section is absent."""
    path = path or settings.hygiene_file()
    try:
        data = yaml.safe_load(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        return GateConfig()
    except (OSError, UnicodeDecodeError, yaml.YAMLError) as exc:
        raise GateConfigError(f"{path}: cannot be read ({exc.__class__.__name__})") from None
    raw = data.get("gates") if isinstance(data, dict) else None
    return gate_config(raw, dataset, f"{path}: gates")


__all__ = [
    "CAUSES",
    "DEFAULTS",
    "GateConfig",
    "GateConfigError",
    "gate_config",
    "gate_settings",
    "load_gate_config",
]

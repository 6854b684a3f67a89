"""Quality gates on what a model wrote, before it enters an export.

Each answer gets at most one cause, checked in this order (the cheapest and surest first):

- ``cut_off``: the model stopped at the token limit (``finish_reason == "length"``);
- ``empty``: no word: only whitespace, markup, digits or punctuation;
- ``unparsed``: a structured answer (a ``json_schema`` was asked) that is not strict JSON
  (``NaN`` is not) or does not validate; a judge verdict is checked by
  ``judge.parse_verdict`` itself;
- ``repetition``: Gopher's repetition filter (Rae et al. 2021, Table A1) as datatrove
  implements it (huggingface/datatrove, ``src/datatrove/pipeline/filters/
  gopher_repetition_filter.py``, commit 06c98b0f), with its thresholds as defaults.
  Changes for short chat answers, which Gopher's web documents are not:
  a line, paragraph or top n-gram counts as repeated only from its third occurrence, so a
  refrain, a phrase used twice ("New Year ... New Year's") or two alike CSS rules are no
  loop; the duplicate 5- to 10-gram statistics apply from Gopher's minimum document length
  (50 words: Gopher's quality filter, a stage before its repetition removal, drops shorter
  documents); lines or paragraphs without a word (``}``, a code fence) are not compared.
  Words are ``\\w+`` runs (datatrove uses nltk's English tokenizer);
- ``echo``: the prompt given back: at least :attr:`GateConfig.echo_ngram` words, and at least
  ``echo_share`` of the answer's words inside a run of ``echo_ngram`` words the prompt has
  too. A run of kanji, of hiragana or of katakana counts as a word here (Japanese has no
  spaces). Before ``wrong_script``, as an untranslated text handed back is both and this is
  the surer name; after ``repetition``, so a phrase of the prompt looped is a loop (a
  question given back twice is no loop, see above, and is an echo);
- ``wrong_script``: a translation mostly not in the target's script. Letters are counted
  after NFKC (full-width Latin is Latin): kana/kanji one each, a Latin word one, a word in
  any other script (Hangul, Cyrillic, ...) one against both targets.

Nothing here deletes anything: the export records the cause beside the row and leaves it out.
"""

from __future__ import annotations

import json
import re
import unicodedata
from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, fields, replace
from pathlib import Path
from typing import Any

import yaml

from model_foundry.lib import settings
from model_foundry.lib.datasets.judge import VERDICT_SCHEMA, VerdictError, parse_verdict

CAUSES = ("cut_off", "empty", "unparsed", "repetition", "echo", "wrong_script")

_WORD = re.compile(r"\w+")
# A word needs a letter: digits and underscores alone do not make an answer.
_LETTER = re.compile(r"[^\W\d_]")
_MARKUP = re.compile(r"<[^>]*>|&[a-z]+;|```\w*")
_PARAGRAPHS = re.compile(r"\n{2,}")
_KANA_KANJI_CLASS = r"\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uff66-\uff9f"
_KANA_KANJI = re.compile(f"[{_KANA_KANJI_CLASS}]")
_LATIN_WORD = re.compile(r"[A-Za-z\u00c0-\u024f]+")
# A run of letters in neither script (Hangul, Cyrillic, Greek, Arabic, ...).
_OTHER_WORD = re.compile(f"[^\\W\\d_A-Za-z\u00c0-\u024f{_KANA_KANJI_CLASS}]+")
# Echo's words. Japanese has no spaces: a run of one script (kanji, hiragana or katakana)
# stands for a word, which is close to how the language's words and particles alternate.
_ECHO_WORD = re.compile(
    "[\u3400-\u4dbf\u4e00-\u9fff\u3005]+|[\u3040-\u309f]+|[\u30a0-\u30ff\uff66-\uff9f]+"
    f"|[^\\W{_KANA_KANJI_CLASS}]+"
)
_INTO = re.compile(r"\binto (Japanese|English)\b", re.IGNORECASE)
_LANGS = {"japanese": "ja", "ja": "ja", "english": "en", "en": "en"}


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


class GateConfigError(ValueError):
    """The gates section cannot be used; the message names the file and the field."""


def _duplicates(parts: Sequence[str], repeat_from: int) -> tuple[int, int, int]:
    """(parts compared, occurrences counted as repeats, their characters): a part that
    occurs at least ``repeat_from`` times counts every occurrence after its first."""
    counts = Counter(p for p in parts if _LETTER.search(p))
    compared = sum(counts.values())
    looped = {p: n for p, n in counts.items() if n >= repeat_from}
    repeats = sum(n - 1 for n in looped.values())
    chars = sum(len(p) * (n - 1) for p, n in looped.items())
    return compared, repeats, chars


def _ngrams(words: Sequence[str], n: int) -> list[str]:
    return [" ".join(words[i : i + n]) for i in range(len(words) - n + 1)]


def _repeated_ngram_chars(words: Sequence[str], n: int) -> int:
    """Characters of n-grams seen before, stepping past each repeat (datatrove's count)."""
    seen: set[str] = set()
    chars = at = 0
    while at < len(words) - n + 1:
        gram = " ".join(words[at : at + n])
        if gram in seen:
            chars += len(gram)
            at += n
        else:
            seen.add(gram)
            at += 1
    return chars


def repetition_stat(text: str, config: GateConfig = GateConfig()) -> str | None:
    """The first Gopher statistic ``text`` exceeds (e.g. ``dup_line_frac``), else None."""
    size = len(text)
    if not size:
        return None
    paragraphs = _PARAGRAPHS.split(text.strip())
    compared, repeats, chars = _duplicates(paragraphs, config.repeat_from)
    if compared and repeats / compared > config.dup_para_frac:
        return "dup_para_frac"
    if chars / size > config.dup_para_char_frac:
        return "dup_para_char_frac"
    compared, repeats, chars = _duplicates(text.splitlines(), config.repeat_from)
    if compared and repeats / compared > config.dup_line_frac:
        return "dup_line_frac"
    if chars / size > config.dup_line_char_frac:
        return "dup_line_char_frac"
    words = _WORD.findall(text)
    for n, limit in sorted(config.top_ngram_char_frac.items()):
        counts = Counter(_ngrams(words, n))
        if counts:
            gram, times = counts.most_common(1)[0]
            if times >= config.repeat_from and len(gram) * times / size > limit:
                return f"top_{n}_gram"
    if len(words) < config.min_words_for_ngram_dups:
        return None
    for n, limit in sorted(config.dup_ngram_char_frac.items()):
        if _repeated_ngram_chars(words, n) / size > limit:
            return f"dup_{n}_gram"
    return None


def is_wordless(text: str) -> bool:
    """Nothing but whitespace, markup, digits or punctuation."""
    return not _LETTER.search(_MARKUP.sub(" ", text))


def is_echo(answer: str, prompt: str, config: GateConfig = GateConfig()) -> bool:
    """Most of ``answer`` is runs of words copied from ``prompt`` (case and punctuation
    ignored). A short answer that repeats a few of the prompt's words is not an echo."""
    n = config.echo_ngram
    words = [w.casefold() for w in _ECHO_WORD.findall(answer)]
    if len(words) < n:
        return False
    asked = set(_ngrams([w.casefold() for w in _ECHO_WORD.findall(prompt)], n))
    covered = [False] * len(words)
    for i in range(len(words) - n + 1):
        if " ".join(words[i : i + n]) in asked:
            covered[i : i + n] = [True] * n
    return sum(covered) / len(words) >= config.echo_share


def script_share(text: str, target: str) -> float | None:
    """The share of ``text`` in ``target``'s script (``ja`` or ``en``): kana/kanji characters
    and Latin words against those and words of any other script, after NFKC; None when it
    has no letter or the target is another language."""
    text = unicodedata.normalize("NFKC", text)
    cjk, latin = len(_KANA_KANJI.findall(text)), len(_LATIN_WORD.findall(text))
    other = len(_OTHER_WORD.findall(text))
    if target not in ("ja", "en") or not cjk + latin + other:
        return None
    return (cjk if target == "ja" else latin) / (cjk + latin + other)


def _type_ok(value: Any, kind: Any) -> bool:
    checks = {
        "object": lambda v: isinstance(v, dict),
        "array": lambda v: isinstance(v, list),
        "string": lambda v: isinstance(v, str),
        "integer": lambda v: isinstance(v, int) and not isinstance(v, bool),
        "number": lambda v: isinstance(v, int | float) and not isinstance(v, bool),
        "boolean": lambda v: isinstance(v, bool),
        "null": lambda v: v is None,
    }
    kinds = kind if isinstance(kind, list) else [kind]
    return any(checks.get(k, lambda _: True)(value) for k in kinds)


def schema_problem(value: Any, schema: Mapping[str, Any]) -> str | None:
    """Why ``value`` breaks ``schema`` (the JSON Schema subset the slots constrain answers
    with: type, required, properties, additionalProperties, items, enum, bounds), else None."""
    if "type" in schema and not _type_ok(value, schema["type"]):
        return f"not of type {schema['type']}"
    if "enum" in schema and value not in schema["enum"]:
        return "not one of its enum"
    if isinstance(value, int | float) and not isinstance(value, bool):
        if "minimum" in schema and value < schema["minimum"]:
            return f"below {schema['minimum']}"
        if "maximum" in schema and value > schema["maximum"]:
            return f"above {schema['maximum']}"
    if isinstance(value, str) and len(value) > schema.get("maxLength", len(value)):
        return f"longer than {schema['maxLength']}"
    if isinstance(value, list):
        if len(value) < schema.get("minItems", 0):
            return f"fewer than {schema['minItems']} items"
        if len(value) > schema.get("maxItems", len(value)):
            return f"more than {schema['maxItems']} items"
    if isinstance(value, dict):
        props = schema.get("properties") or {}
        for name in schema.get("required") or []:
            if name not in value:
                return f"no {name}"
        if schema.get("additionalProperties") is False and set(value) - set(props):
            return f"unexpected {sorted(set(value) - set(props))[0]}"
        for name, sub in props.items():
            if name in value and (problem := schema_problem(value[name], sub)):
                return f"{name}: {problem}"
    if isinstance(value, list) and isinstance(schema.get("items"), dict):
        for item in value:
            if problem := schema_problem(item, schema["items"]):
                return problem
    return None


def _not_json(name: str) -> Any:
    """``NaN``/``Infinity``, which Python's json reads and JSON (RFC 8259) has not."""
    raise ValueError(f"{name} is not JSON")


def is_unparsed(answer: str, schema: Mapping[str, Any]) -> bool:
    """A structured answer that does not parse or validate; a verdict as the judge does."""
    if dict(schema) == dict(VERDICT_SCHEMA):
        try:
            parse_verdict(answer)
        except VerdictError:
            return True
        return False
    try:
        value = json.loads(answer, parse_constant=_not_json)
    except (json.JSONDecodeError, ValueError):
        return True
    return schema_problem(value, schema) is not None


def gate(
    answer: str | None,
    *,
    finish_reason: str | None = None,
    prompt: str = "",
    target_lang: str | None = None,
    json_schema: Mapping[str, Any] | None = None,
    config: GateConfig = GateConfig(),
) -> str | None:
    """The cause ``answer`` is held back for (see :data:`CAUSES`), or None to keep it."""
    text = answer or ""
    on = [c for c in CAUSES if c not in config.skip]
    checks = {
        "cut_off": lambda: finish_reason == "length",
        "empty": lambda: is_wordless(text),
        "unparsed": lambda: json_schema is not None and is_unparsed(text, json_schema),
        "wrong_script": lambda: (
            target_lang is not None
            and (share := script_share(text, target_lang)) is not None
            and share < config.script_share
        ),
        "echo": lambda: bool(prompt) and is_echo(text, prompt, config),
        "repetition": lambda: repetition_stat(text, config) is not None,
    }
    return next((c for c in on if checks[c]()), None)


def target_language(messages: Sequence[Mapping[str, Any]], params: Mapping[str, Any]) -> str | None:
    """A translation's target (``ja``/``en``): its ``target_lang`` parameter, else a system
    turn asking "... into Japanese" (``slots.client.translation_messages``); None otherwise."""
    named = params.get("target_lang")
    if isinstance(named, str):
        return _LANGS.get(named.casefold())
    for m in messages:
        if m.get("role") == "system" and (found := _INTO.search(m.get("content") or "")):
            return _LANGS[found.group(1).casefold()]
    return None


def body_text(body: Mapping[str, Any]) -> str:
    """The words a request asked with (its messages' contents, else its prompt or text): what
    an answer is compared with for ``echo``. ``body`` as a request stores it (``Body.as_dict``)."""
    messages = body.get("messages") or []
    if messages:
        return "\n".join(str(m.get("content") or "") for m in messages)
    return str(body.get("prompt") or body.get("text") or "")


def held_back(causes: Sequence[str | None]) -> dict[str, int]:
    """How many of ``causes`` each gate held back, every cause named (0 when none): the
    ``held_back_by_gate`` figure the exports and the summary assets show."""
    counts = Counter(c for c in causes if c)
    return {c: counts.get(c, 0) for c in CAUSES}


def sample_gate(record: Mapping[str, Any], config: GateConfig) -> str | None:
    """The cause of an exported sample (its answer the last message), or None."""
    try:
        params = json.loads(record.get("params") or "{}")
    except json.JSONDecodeError:
        params = {}
    params = params if isinstance(params, dict) else {}
    asked = record["messages"][:-1]
    schema = params.get("json_schema")
    return gate(
        record.get("response"),
        finish_reason=record.get("finish_reason"),
        prompt="\n".join(m.get("content") or "" for m in asked),
        target_lang=target_language(asked, params),
        json_schema=schema if isinstance(schema, dict) else None,
        config=config,
    )


def pair_gate(record: Mapping[str, Any], config: GateConfig) -> str | None:
    """The cause of a preference pair: its chosen answer's, else its rejected answer's."""
    asked = record["prompt"]
    prompt = "\n".join(m.get("content") or "" for m in asked)
    target = target_language(asked, {})
    for side in ("chosen", "rejected"):
        answer = record[side][-1]["content"]
        cause = gate(answer, prompt=prompt, target_lang=target, config=config)
        if cause:
            return cause
    return None


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
        elif key in ("echo_ngram", "min_words_for_ngram_dups", "repeat_from"):
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
    "GateConfig",
    "GateConfigError",
    "body_text",
    "gate",
    "gate_config",
    "gate_settings",
    "held_back",
    "is_echo",
    "is_unparsed",
    "is_wordless",
    "load_gate_config",
    "pair_gate",
    "repetition_stat",
    "sample_gate",
    "schema_problem",
    "script_share",
    "target_language",
]

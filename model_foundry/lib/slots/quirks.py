"""Model quirks, as pure functions tested without a server:

- plamo-2-translate is driven through ``/v1/completions`` with its raw prompt format, its
  answer ending at ``<|plamo:op|>``;
- templates that reject the system role get it folded into the first user turn;
- reasoning may arrive inline in Gemma 4's ``<|channel>thought ... <channel|>`` markers (any
  server without a Gemma reasoning parser);
- a ``timings`` object (llama.cpp) gives exact prompt / generation speeds; without one they
  are derived from the stream (prefill ends at the first token);
- a translation that falls back to a general chat model is asked with an instruction and
  worked examples.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

PLAMO_OP = "<|plamo:op|>"
PLAMO_STOP = [PLAMO_OP]
GEMMA_THOUGHT_OPEN = "<|channel>thought"
GEMMA_CHANNEL_CLOSE = "<channel|>"


def plamo_translate_prompt(
    text: str, source_lang: str = "English", target_lang: str = "Japanese"
) -> str:
    """plamo-2-translate's raw prompt; the model answers, then writes ``<|plamo:op|>``."""
    return (
        f"{PLAMO_OP}dataset\ntranslation\n"
        f"{PLAMO_OP}input lang={source_lang}\n{text.rstrip()}\n"
        f"{PLAMO_OP}output lang={target_lang}\n"
    )


def fold_system_into_user(messages: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Move system messages into the first user turn, for templates that reject ``system``."""
    system = [str(m.get("content") or "") for m in messages if m.get("role") == "system"]
    rest = [dict(m) for m in messages if m.get("role") != "system"]
    if not system:
        return rest
    prefix = "\n\n".join(s for s in system if s)
    for m in rest:
        if m.get("role") == "user":
            m["content"] = f"{prefix}\n\n{m.get('content') or ''}" if prefix else m.get("content")
            return rest
    return [{"role": "user", "content": prefix}, *rest]


def split_gemma_thinking(text: str) -> tuple[str, str | None]:
    """Separate Gemma 4 ``<|channel>thought ... <channel|>`` blocks from the answer.

    A block cut off by ``max_tokens`` (no closing marker) is all reasoning.
    """
    if GEMMA_THOUGHT_OPEN not in text:
        return text, None
    answer: list[str] = []
    thoughts: list[str] = []
    rest = text
    while GEMMA_THOUGHT_OPEN in rest:
        before, _, after = rest.partition(GEMMA_THOUGHT_OPEN)
        answer.append(before)
        thought, closed, rest = after.partition(GEMMA_CHANNEL_CLOSE)
        thoughts.append(thought.strip())
        if not closed:
            rest = ""
    answer.append(rest)
    return "".join(answer).strip(), "\n".join(t for t in thoughts if t) or None


def parse_timings(timings: Mapping[str, Any] | None) -> tuple[float | None, float | None]:
    """(prompt tokens/s, generation tokens/s) from llama.cpp's ``timings`` object."""
    if not isinstance(timings, Mapping):
        return None, None

    def rate(per_second: str, n: str, ms: str) -> float | None:
        value = timings.get(per_second)
        if isinstance(value, int | float) and value > 0:
            return float(value)
        count, millis = timings.get(n), timings.get(ms)
        if isinstance(count, int | float) and isinstance(millis, int | float) and millis > 0:
            return count / (millis / 1000.0)
        return None

    return (
        rate("prompt_per_second", "prompt_n", "prompt_ms"),
        rate("predicted_per_second", "predicted_n", "predicted_ms"),
    )


def server_ttft_s(timings: Mapping[str, Any] | None, latency_s: float) -> float | None:
    """The time to first token a server reports with a whole answer: llama.cpp's
    ``timings.prompt_ms`` (its prefill, which ends with the first token); None without it, or
    where it is longer than the request took (not this request's figure)."""
    if not isinstance(timings, Mapping):
        return None
    ms = timings.get("prompt_ms")
    if not isinstance(ms, int | float) or isinstance(ms, bool) or ms < 0:
        return None
    return ms / 1000.0 if ms / 1000.0 <= latency_s else None


def derive_rates(
    prompt_tokens: int | None,
    completion_tokens: int | None,
    latency_s: float | None,
    ttft_s: float | None,
) -> tuple[float | None, float | None]:
    """Speeds from the stream when the server reports none: prefill ends at the first token."""
    prompt_tps = gen_tps = None
    if prompt_tokens and ttft_s and ttft_s > 0:
        prompt_tps = prompt_tokens / ttft_s
    if completion_tokens and latency_s is not None:
        decode_s = latency_s - (ttft_s or 0.0)
        # The first token belongs to prefill, so count the rest over the decode time.
        if ttft_s is not None and completion_tokens > 1 and decode_s > 0:
            gen_tps = (completion_tokens - 1) / decode_s
        elif ttft_s is None and latency_s > 0:
            gen_tps = completion_tokens / latency_s
    return prompt_tps, gen_tps


# Worked examples shown before the text, as earlier turns: given the instruction alone, a
# small model hands the instruction back or answers in the text's own language; shown the
# pattern, it follows it. English and Japanese, the languages summaries are written in.
TRANSLATION_EXAMPLES: tuple[tuple[str, str], ...] = (
    ("Good morning.", "おはようございます。"),
    ("The backup finished without errors.", "バックアップはエラーなしで完了しました。"),
    ("Please restart the server tomorrow.", "明日サーバーを再起動してください。"),
)


def _examples(source_lang: str, target_lang: str) -> list[dict[str, Any]]:
    langs = {"English": 0, "Japanese": 1}
    if {source_lang, target_lang} != set(langs):
        return []
    src, tgt = langs[source_lang], langs[target_lang]
    return [
        {"role": role, "content": pair[side]}
        for pair in TRANSLATION_EXAMPLES
        for role, side in (("user", src), ("assistant", tgt))
    ]


def translation_messages(text: str, source_lang: str, target_lang: str) -> list[dict[str, Any]]:
    """Chat messages asking a general chat model for a translation and nothing else: the
    instruction, a few worked examples (English and Japanese), then the text."""
    return [
        {
            "role": "system",
            "content": (
                f"Translate the user's {source_lang} text into {target_lang}. "
                "Reply with the translation only, no notes."
            ),
        },
        *_examples(source_lang, target_lang),
        {"role": "user", "content": text},
    ]


__all__ = [
    "GEMMA_CHANNEL_CLOSE",
    "GEMMA_THOUGHT_OPEN",
    "PLAMO_OP",
    "PLAMO_STOP",
    "TRANSLATION_EXAMPLES",
    "derive_rates",
    "fold_system_into_user",
    "parse_timings",
    "plamo_translate_prompt",
    "server_ttft_s",
    "split_gemma_thinking",
    "translation_messages",
]

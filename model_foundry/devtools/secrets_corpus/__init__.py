"""A deterministic corpus of fake secrets planted where an agent session meets them.

Written from public descriptions of credential files, connection strings, command lines and
provider token formats, not from any scrubber's rules. Every value is generated here from a
seeded :class:`random.Random` (the standard library only, no network), so the same seed gives
the same corpus; nothing in it is a real credential.

- :func:`corpus` returns :class:`Case` objects: a text, the :class:`Plant` values hidden in it
  (each with the random part that must not survive scrubbing), hard negatives a good scrubber
  keeps (hashes, UUIDs, placeholders, URLs without credentials...), and ordinary words around
  the values that must survive too.
- :func:`as_events` turns cases into ``llm.chat.persist`` / ``llm.tool_call`` event bodies of
  the project's contract, grouped into sessions.
- :func:`evaluate`, :func:`evaluate_texts` and :func:`evaluate_blob` score a scrubber's output
  and return a :class:`Report`.

A value leaks *whole* when its random part (or the encoded form the case used: base64,
URL-encoded, JSON-escaped) is still there, and leaks a *fragment* when any 12 consecutive
characters of the random part (or of its encoded form) are.
"""

from model_foundry.devtools.secrets_corpus.build import corpus
from model_foundry.devtools.secrets_corpus.evaluate import (
    Leak,
    Report,
    Tally,
    evaluate,
    evaluate_blob,
    evaluate_texts,
    summary,
)
from model_foundry.devtools.secrets_corpus.events import as_events
from model_foundry.devtools.secrets_corpus.kinds import KINDS
from model_foundry.devtools.secrets_corpus.model import WHERES, Case, Plant, encode, oracle_scrub
from model_foundry.devtools.secrets_corpus.values import Kind

__all__ = [
    "KINDS",
    "WHERES",
    "Case",
    "Kind",
    "Leak",
    "Plant",
    "Report",
    "Tally",
    "as_events",
    "corpus",
    "encode",
    "evaluate",
    "evaluate_blob",
    "evaluate_texts",
    "oracle_scrub",
    "summary",
]

"""Lab text on its way into Dagster's own storage, scrubbed first.

Dagster keeps what a run reports outside DuckDB, where no export's scrub reaches:
materialization and check metadata, ``context.log`` lines and failure descriptions go to its
event log (SQLite or PostgreSQL), a returned value to its IO manager's files, and whatever a
step prints to its compute logs. The lab's data goes there only as ids, counts and shapes,
or through these functions: the secret and PII rules every export applies, with this
installation's hygiene file and salt (:meth:`RecordScrubber.from_settings`). DuckDB keeps
the lab's data verbatim; only what Dagster is shown of it is scrubbed.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from typing import TYPE_CHECKING

from model_foundry.lib import settings

if TYPE_CHECKING:
    from model_foundry.lib.hygiene.record import RecordScrubber

# One scrubber per process, for the hygiene file (as last changed) and salt it was built from.
_BUILT: dict[tuple[str, str, float | None], RecordScrubber] = {}


def scrubber() -> RecordScrubber:
    """This installation's scrubber, built again only when its hygiene file or salt changes."""
    path = settings.hygiene_file()
    try:
        changed: float | None = path.stat().st_mtime
    except OSError:
        changed = None
    key = (str(path), str(settings.hygiene_salt_file()), changed)
    built = _BUILT.get(key)
    if built is None:
        # The rules compile when a text is first shown, not when a run that may show none
        # starts (a collection before its first request).
        from model_foundry.lib.hygiene.record import RecordScrubber

        _BUILT.clear()
        built = _BUILT[key] = RecordScrubber.from_settings()
    return built


def shown_text(text: str, limit: int | None = None) -> str:
    """``text`` scrubbed, then cut to ``limit`` characters.

    The scrub comes first: a cut through a secret (a URL cut before the ``@`` that ends its
    password) would leave a piece no rule recognises any more. A text that is a JSON object
    or array is scrubbed inside, as exports scrub tool arguments, so a value under a key that
    says secret goes too.
    """
    clean, _ = scrubber().scrub(text)
    return clean if limit is None else clean[:limit]


def shown_texts(texts: Iterable[str]) -> list[str]:
    return [shown_text(t) for t in texts]


# A quoted value followed by "..." was cut short (dead-letter reasons quote at most 80
# characters of a bad field, as ``'<value>'...``).
_CUT_QUOTE = re.compile(r"""(?P<q>['"])(?P<body>(?:\\.|(?!(?P=q))[^\\])*)(?P=q)\.\.\.""")


def _without_last_word(match: re.Match[str]) -> str:
    words = match["body"].rsplit(None, 1)
    return f"{match['q']}{words[0] if len(words) > 1 else ''}{match['q']}..."


def shown_reason(reason: str) -> str:
    """A reason that quotes a bad value, scrubbed. A value it quoted cut short loses its last
    word first: a secret cut through (a URL before its ``@``, an e-mail address before its
    domain, a token's first characters) is a piece no rule recognises any more."""
    return shown_text(_CUT_QUOTE.sub(_without_last_word, reason))


__all__ = ["scrubber", "shown_reason", "shown_text", "shown_texts"]

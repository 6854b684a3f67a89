"""A password typed at the shell by mistake: the prompt had already gone.

A terminal's password prompt (``[sudo] password for mika:``, ``Password:``, ``Enter
passphrase for key``) prints nothing of what is typed. When the prompt times out or the
password is refused, the next thing typed lands on the shell's own prompt and the shell
answers that no such command exists, naming it: ``bash: <password>: command not found``.
No rule and no cue next to the value says password; the sequence does. So a name the shell
could not find, within a few lines after a password prompt, is taken, with the token typed
at the prompt that holds it (``Driftwood&Cedar42`` put ``Driftwood`` in the background and
ran ``Cedar42``: bash names both pieces).

A typo of a real command (``sl``) is short and lowercase; values shorter than six characters
are left.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Callable

from model_foundry.lib.hygiene.placeholders import MARKER_PREFIX, marker

# A password prompt that ends its line: nothing typed is echoed after it.
_PROMPT = re.compile(
    r"(?im)^[^\n]*(?:\[sudo\][^\n]*password[^\n]*|password(?: for [^\n]+)?|pass ?phrase"
    r"(?: for [^\n]+)?|passcode|PIN)[ \t]*:[ \t]*$"
)
# The shells' answers naming what they could not run: bash, sh, zsh, fish, PowerShell, cmd.
_NOT_FOUND = re.compile(
    r"(?m)^(?:(?:-?(?:ba|da|k|)sh|[\w./-]*sh):[ \t](?:line[ \t]\d+:[ \t])?(?P<a>\S+):[ \t]"
    r"(?:command )?not found"
    r"|zsh:[ \t]command not found:[ \t](?P<b>\S+)"
    r"|fish:[ \t]Unknown command:?[ \t]'?(?P<c>[^\s']+)'?"
    r"|(?P<d>\S+)[ \t]:[ \t]The term '[^'\n]+' is not recognized"
    r"|'(?P<e>[^'\n]+)' is not recognized as an internal or external command)"
)
# How many lines after the prompt the shell's answer may stand.
_LINES_AFTER = 8
_MIN_LEN = 6
# A shell prompt line and the one token typed at it: ``user@host:~/dir$ <token>``.
_TYPED = re.compile(r"(?m)^[^\n]{0,120}?[$#%>][ \t]+(?P<typed>\S+)[ \t]*$")
_PIECES = re.compile(r"[&;|]+")
_MARK = marker("password")


def _names(text: str) -> list[tuple[int, int, str]]:
    """Each name a shell could not run within :data:`_LINES_AFTER` lines after a password
    prompt, with where the prompt's line ends and where the shell's answer starts (what was
    typed stands between)."""
    found: list[tuple[int, int, str]] = []
    for prompt in _PROMPT.finditer(text):
        start = prompt.end()
        window_end = start
        for _ in range(_LINES_AFTER):
            nxt = text.find("\n", window_end + 1)
            if nxt < 0:
                window_end = len(text)
                break
            window_end = nxt
        for miss in _NOT_FOUND.finditer(text, start, window_end):
            name = next(g for g in miss.groups() if g is not None)
            found.append((start, miss.start(), name))
    return found


def typed_passwords(text: str, counts: Counter[str], take: Callable[[str], bool]) -> str:
    """``text`` with each password typed at a shell prompt after a password prompt replaced,
    as a whole token and as the pieces the shell named."""
    lowered = text.lower()
    if (
        "not found" not in lowered
        and "not recognized" not in lowered
        and ("unknown command" not in lowered)
    ):
        return text
    values: set[str] = set()
    for start, answer, name in _names(text):
        if len(name) < _MIN_LEN or MARKER_PREFIX in name or not take(name):
            continue
        values.add(name)
        for typed in _TYPED.finditer(text, start, answer):
            token = typed.group("typed")
            if name in _PIECES.split(token) and take(token):
                values.add(token)
                break
    # Longest first: the token typed whole goes before the pieces the shell named.
    for value in sorted(values, key=len, reverse=True):
        text, hits = re.subn(rf"(?<![\w&;|]){re.escape(value)}(?![\w&;|])", _MARK, text)
        if hits:
            counts["password"] += hits
    return text


__all__ = ["typed_passwords"]

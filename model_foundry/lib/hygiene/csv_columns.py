"""Credentials in a CSV column: every value under a header that names one.

A user export or a seed file pasted into a session (``username,email,temp_password,role``)
puts a password in each row with nothing beside it that says so: the rules see no shape, the
backstop no cue, and a password of letters (``BiscuitAnvil``) is no random value. The header
is the cue: where a line of names, one of which is a credential word (``password``,
``api_key``, ``token``), is followed by rows with as many fields, that column's values are
taken, whatever they look like. A Markdown table (a line of cells between pipes, its rule
line under it) is read the same way: the backstop takes the random values of any table
column headed by a credential word, this the rest (``| app | BasketPeonyThunder |``). A
table of fields and values (``| field | value |``) is read by its rows: the value of a row
whose field is a credential's name goes (``| password | Tuesday-Biscuit |``). An SQL
``INSERT`` names its columns too: the credential column's literal goes from each row of its
``VALUES`` (a dump of a legacy table with plaintext passwords).
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Callable

from model_foundry.lib.hygiene.names import secret_name_kind
from model_foundry.lib.hygiene.placeholders import is_placeholder, marker

# A header's cell: a name (``temp_password``, ``API Key``), quoted or not.
# A header cell: a name in letters, Latin or Japanese (``| トークン |``).
_HEADER_CELL = re.compile(r"[\"']?[A-Za-z\u3040-\u30ff\u4e00-\u9fff][\w .-]{0,63}[\"']?")
# A value no row holds a secret in: empty, a null, a mask, a note in brackets (``(in vault)``).
_NO_VALUE = re.compile(r"(?i)|null|none|n/?a|-+|\*+|x+|\(.*\)|\[.*\]")
# Kinds a column header may name; a header about a key's kind or a hash names none.
_KINDS = frozenset({"password", "secret", "token", "api_key"})


def _header(line: str, sep: str) -> tuple[int, dict[int, str]] | None:
    """A CSV header's width and its credential columns (index -> kind), or None."""
    cells = line.split(sep)
    if len(cells) < 2 or not all(_HEADER_CELL.fullmatch(c.strip()) for c in cells):
        return None
    kinds = {}
    for i, cell in enumerate(cells):
        kind = secret_name_kind(cell.strip().strip("\"'").replace(" ", "_"))
        if kind in _KINDS:
            kinds[i] = kind
    return (len(cells), kinds) if kinds else None


def csv_columns(text: str, counts: Counter[str], take: Callable[[str], bool]) -> str:
    """``text`` with each value of a credential column of a CSV table replaced; a table
    pasted from a spreadsheet (tab-separated) is read the same way."""
    if "\n" not in text:
        return text
    for sep in (",", "\t"):
        if sep in text:
            text = _columns(text, sep, counts, take)
    return text


def _columns(text: str, sep: str, counts: Counter[str], take: Callable[[str], bool]) -> str:
    lines = text.split("\n")
    changed = False
    i = 0
    while i < len(lines):
        found = _header(lines[i], sep) if lines[i].count(sep) else None
        i += 1
        if found is None:
            continue
        width, kinds = found
        while i < len(lines) and lines[i].count(sep) == width - 1:
            fields = lines[i].split(sep)
            for at, kind in kinds.items():
                value = fields[at].strip().strip("\"'")
                if _NO_VALUE.fullmatch(value) or is_placeholder(value) or not take(value):
                    continue
                fields[at] = fields[at].replace(value, marker(kind))
                counts[kind] += 1
                changed = True
            lines[i] = sep.join(fields)
            i += 1
    return "\n".join(lines) if changed else text


_MD_RULE = re.compile(r"[ \t]*\|(?:[ \t]*:?-{3,}:?[ \t]*\|)+[ \t]*")


def _md_cells(line: str) -> list[str] | None:
    """A Markdown table line's cells, or None if it is no such line."""
    bare = line.strip()
    if len(bare) < 3 or not (bare.startswith("|") and bare.endswith("|")):
        return None
    return [c.strip() for c in bare[1:-1].split("|")]


def markdown_columns(text: str, counts: Counter[str], take: Callable[[str], bool]) -> str:
    """``text`` with each value of a credential column of a Markdown table replaced."""
    if "|" not in text or "---" not in text:
        return text
    lines = text.split("\n")
    changed = False
    for i in range(1, len(lines)):
        if not _MD_RULE.fullmatch(lines[i]):
            continue
        header = _md_cells(lines[i - 1])
        if header is None or not all(_HEADER_CELL.fullmatch(c) for c in header if c):
            continue
        kinds = {
            at: kind
            for at, cell in enumerate(header)
            if (kind := secret_name_kind(cell.replace(" ", "_"))) in _KINDS
        }
        if not kinds and len(header) == 2 and header[1].lower() in _VALUE_HEADERS:
            changed = _key_value_rows(lines, i + 1, counts, take) or changed
            continue
        j = i + 1
        while kinds and j < len(lines) and (cells := _md_cells(lines[j])) is not None:
            if len(cells) == len(header):
                # The row as written, split at its pipes: raw[at + 1] is cell ``at``, so the
                # row keeps its spacing and indentation.
                raw = lines[j].split("|")
                for at, kind in kinds.items():
                    value = cells[at].strip("`\"'")
                    # Words with spaces are a note (``ask ops``, ``in the vault``).
                    if _NO_VALUE.fullmatch(value) or " " in value or is_placeholder(value):
                        continue
                    if not take(value):
                        continue
                    raw[at + 1] = raw[at + 1].replace(value, marker(kind))
                    counts[kind] += 1
                    changed = True
                lines[j] = "|".join(raw)
            j += 1
    return "\n".join(lines) if changed else text


# The second header of a two-column table whose rows name a field, then its value.
_VALUE_HEADERS = frozenset({"value", "values", "値", "設定値", "内容", "setting", "details"})


def _key_value_rows(
    lines: list[str], j: int, counts: Counter[str], take: Callable[[str], bool]
) -> bool:
    """A table of fields and values (``| password | Tuesday-Biscuit |``): a row whose field
    is a credential's name has its value taken, when that is one token and no mask."""
    changed = False
    while j < len(lines) and (cells := _md_cells(lines[j])) is not None:
        kind = secret_name_kind(cells[0].strip("`*").replace(" ", "_")) if len(cells) == 2 else None
        value = cells[1].strip("`\"'") if kind in _KINDS else ""
        one_token = value and " " not in value and not _NO_VALUE.fullmatch(value)
        if kind and one_token and not is_placeholder(value) and take(value):
            head, _, tail = lines[j].rpartition(value)
            lines[j] = head + marker(kind) + tail
            counts[kind] += 1
            changed = True
        j += 1
    return changed


# An INSERT's column list, then its VALUES: rows of literals in parentheses.
_INSERT = re.compile(
    r"(?i)\binsert[ \t]+into[ \t]+[`\"\[]?[\w.]+[`\"\]]?[ \t]*\((?P<columns>[^()]{1,2000})\)"
    r"[ \t\n]*values[ \t\n]*"
)
# One literal of a row: a quoted string (``''`` or a backslash escapes its quote), or a bare
# word or number.
_LITERAL = re.compile(r"'(?:[^'\\\n]|''|\\.)*'|\"(?:[^\"\\\n]|\\.)*\"|[^,()'\"\s]+")
_ROW = re.compile(
    r"[ \t\n,]*\((?P<row>(?:[^()'\"]|'(?:[^'\\\n]|''|\\.)*'|\"(?:[^\"\\\n]|\\.)*\")*)\)"
)


def sql_columns(text: str, counts: Counter[str], take: Callable[[str], bool]) -> str:
    """``text`` with the credential column's quoted literal of each row of an ``INSERT``
    replaced (``INSERT INTO members (id, email, passwd) VALUES (1, 'a@x', 'Marigold1987')``)."""
    if "insert" not in text.lower():
        return text
    out: list[str] = []
    last = 0
    for insert in _INSERT.finditer(text):
        names = [c.strip().strip('`"[]') for c in insert.group("columns").split(",")]
        kinds = {i: k for i, n in enumerate(names) if (k := secret_name_kind(n)) in _KINDS}
        if not kinds:
            continue
        at = insert.end()
        while row := _ROW.match(text, at):
            literals = list(_LITERAL.finditer(text, row.start("row"), row.end("row")))
            if len(literals) == len(names):
                for i, kind in kinds.items():
                    value = literals[i].group(0)
                    inner = value[1:-1]
                    if value[0] not in "'\"" or len(inner) < 3 or not take(inner):
                        continue
                    counts[kind] += 1
                    out += [text[last : literals[i].start() + 1], marker(kind)]
                    last = literals[i].end() - 1
            at = row.end()
    return "".join(out) + text[last:] if out else text


__all__ = ["csv_columns", "markdown_columns", "sql_columns"]

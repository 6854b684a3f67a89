"""Fake credentials planted in the lab's events, and the search for them in what Dagster
stored: the promise that the lab's data reaches Dagster's own storage (event log, run
storage, stored outputs, compute logs) only as ids, counts and shapes, or scrubbed.

Every value is drawn from ``random.Random(seed)``: none is a live credential. A value leaks
when it is found whole, or when any :data:`FRAGMENT` consecutive characters of its random
part are (a token cut to fit a preview still leaks). Pictures embedded in metadata as
base64 data URIs are decoded and searched too: an SVG keeps its text as text.
"""

from __future__ import annotations

import base64
import binascii
import json
import random
import re
import sqlite3
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from model_foundry.devtools.secrets_corpus.model import ALNUM, LOWER_ALNUM
from model_foundry.devtools.secrets_corpus.values import random_part
from model_foundry.lib.publish import OutgoingEvent, make_event

FRAGMENT = 12
_DATA_URI = re.compile(rb"data:image/[a-z+]+;base64,([A-Za-z0-9+/=]{16,})")


@dataclass(frozen=True)
class LabToken:
    """One planted value: its kind, the value as planted and the random part in it."""

    kind: str
    value: str
    random: str

    def fragments(self) -> set[str]:
        r = self.random
        return {r[i : i + FRAGMENT] for i in range(max(1, len(r) - FRAGMENT + 1))}


def lab_tokens(seed: int) -> dict[str, LabToken]:
    """A GitHub token, an Anthropic key, an AWS secret key, a password in a URL, an e-mail."""
    rng = random.Random(seed)
    github = random_part(rng, ALNUM, 36)
    anthropic = random_part(rng, ALNUM + "-_", 93)
    aws = random_part(rng, ALNUM + "+/", 40)
    password = random_part(rng, ALNUM, 16)
    mailbox = random_part(rng, LOWER_ALNUM, 12)
    return {
        "github": LabToken("github", "ghp_" + github, github),
        "anthropic": LabToken("anthropic", f"sk-ant-api03-{anthropic}AA", anthropic),
        "aws": LabToken("aws", aws, aws),
        "url_password": LabToken("url_password", password, password),
        "email": LabToken("email", f"ops.{mailbox}@labmail.net", mailbox),
    }


def sentences(tokens: Mapping[str, LabToken]) -> dict[str, str]:
    """Each token in the sentence a session would paste it in."""
    t = {k: v.value for k, v in tokens.items()}
    return {
        "github": f"git push https://{t['github']}@github.com/lab/foundry.git",
        "anthropic": f"export ANTHROPIC_API_KEY={t['anthropic']}",
        "aws": (
            "[default]\naws_access_key_id = AKIAQ3EGUMX2ZQ4J7WBR\n"
            f"aws_secret_access_key = {t['aws']}"
        ),
        "url_password": f"DATABASE_URL=postgresql://lab:{t['url_password']}@db.internal:5432/lab",
        "email": f"mail {t['email']} when the run is done",
    }


def planted_events(
    tokens: Mapping[str, LabToken], session: str, prefix: str
) -> list[OutgoingEvent]:
    """Contract-valid events carrying every token: in chat turns (user text, a tool call's
    arguments, a tool result, reasoning, an unknown slot's name), in llm.tool_call arguments
    and results, and in flow lineage labels."""
    said = sentences(tokens)
    everything = "\n".join(said.values())
    chat: dict[str, Any] = {
        "messages": [
            {"role": "system", "content": "You are a coding agent."},
            {"role": "user", "content": f"Here is my setup:\n{everything}\nWhy does CI fail?"},
            {
                "role": "assistant",
                "content": None,
                "reasoning": f"The user pasted {said['anthropic']}, so",
                "tool_calls": [
                    {
                        "id": "call_1",
                        "type": "function",
                        "function": {
                            "name": "sh",
                            "arguments": json.dumps({"command": said["url_password"]}),
                        },
                    }
                ],
            },
            {"role": "tool", "tool_call_id": "call_1", "content": f"$ cat .env\n{everything}"},
            {"role": "assistant", "content": f"Your token {tokens['github'].value} is exposed."},
        ],
        "model": "gemma-4-31b-it",
        # A slot the slot file lacks: the routing check names it.
        "slot": f"box-{tokens['github'].value}",
    }
    tool = {
        "tool": "sh",
        "arguments": {"command": said["aws"], "env": {"DATABASE_URL": said["url_password"]}},
        "result": f"{everything}\nexit status 0",
        "status": "ok",
        "duration_ms": 12,
    }
    lineage = [
        {"kind": "node", "node_id": f"{session}/plan", "label": said["github"], "slot": "naughty"},
        {"kind": "node", "node_id": f"{session}/step", "label": tokens["anthropic"].value},
        {"kind": "node", "node_id": f"{session}/mail", "label": said["email"], "model": "m"},
        {"kind": "edge", "source": f"{session}/plan", "target": f"{session}/step"},
        {"kind": "edge", "source": f"{session}/plan", "target": f"{session}/mail"},
    ]
    events = [
        make_event("llm.chat.persist", chat, session, event_id=f"{prefix}-chat"),
        make_event("llm.tool_call", tool, session, event_id=f"{prefix}-tool"),
    ]
    events += [
        make_event("llm.flow.lineage", p, session, event_id=f"{prefix}-flow-{i}")
        for i, p in enumerate(lineage)
    ]
    return events


def planted_dead_letters(tokens: Mapping[str, LabToken], prefix: str) -> list[tuple[str, bytes]]:
    """Bodies that break the contract in a field the dead-letter reason quotes."""
    bad_time = {
        "event_id": f"{prefix}-dead-time",
        "correlation_id": "sess-dead",
        "occurred_at": f"{tokens['email'].value} since {tokens['github'].value}",
        "payload": {"messages": []},
    }
    bad_subject = {
        "event_id": f"{prefix}-dead-subject",
        "correlation_id": "sess-dead",
        "subject": f"postgresql://lab:{tokens['url_password'].value}@db.internal/lab",
        "payload": {"messages": []},
    }
    # The reason quotes 80 characters of the value: the token is cut in two.
    cut_short = {**bad_time, "event_id": f"{prefix}-dead-cut"}
    cut_short["occurred_at"] = f"{'deadline ' * 7}{tokens['github'].value}"
    return [
        ("llm.chat.persist", json.dumps(body).encode())
        for body in (bad_time, bad_subject, cut_short)
    ]


def searchable(data: bytes) -> str:
    """A stored file's text, with every embedded base64 picture decoded after it."""
    parts = [data.decode("utf-8", "replace")]
    for match in _DATA_URI.finditer(data):
        blob = match.group(1)
        try:
            decoded = base64.b64decode(blob + b"=" * (-len(blob) % 4))
        except (binascii.Error, ValueError):
            continue
        parts.append(decoded.decode("utf-8", "replace"))
    return "\n".join(parts)


def leaks(places: Mapping[str, str], tokens: Iterable[LabToken]) -> list[str]:
    """``kind in place`` for each planted value found whole or by a fragment."""
    found = []
    for token in tokens:
        pieces = token.fragments() | {token.value}
        for place, text in places.items():
            if any(piece in text for piece in pieces):
                found.append(f"{token.kind} in {place}")
    return found


def sqlite_text(path: Path) -> str:
    """Every row of every table of a SQLite file, as text. A long value (a picture's data
    URI) spans overflow pages whose headers break it up in the file's bytes."""
    # Read-only through SQLite's own locks: a live daemon may be writing to it.
    con = sqlite3.connect(f"{path.as_uri()}?mode=ro", uri=True, timeout=30)
    try:
        tables = [r[0] for r in con.execute("SELECT name FROM sqlite_master WHERE type='table'")]
        lines = []
        for table in tables:
            for row in con.execute(f'SELECT * FROM "{table}"'):
                lines.append(
                    " ".join(
                        v.decode("utf-8", "replace") if isinstance(v, bytes) else str(v)
                        for v in row
                    )
                )
        return "\n".join(lines)
    finally:
        con.close()


def stored_files(root: Path) -> dict[str, str]:
    """Every file under ``root`` (a Dagster home: SQLite storage, outputs, compute logs) as
    its bytes decoded, and for a SQLite file also its rows, embedded pictures decoded."""
    stored = {}
    for path in sorted(p for p in root.rglob("*") if p.is_file()):
        try:
            data = path.read_bytes()
        except FileNotFoundError:
            # Removed since the listing (SQLite's -shm/-wal files come and go while the
            # daemon runs): what it held is in the database file, read below or above.
            continue
        if data.startswith(b"SQLite format 3\x00"):
            data += b"\n" + sqlite_text(path).encode()
        stored[str(path)] = searchable(data)
    return stored


__all__ = [
    "FRAGMENT",
    "LabToken",
    "lab_tokens",
    "leaks",
    "planted_dead_letters",
    "planted_events",
    "searchable",
    "sentences",
    "sqlite_text",
    "stored_files",
]

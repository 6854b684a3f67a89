"""What Dagster is shown of lab text: scrubbed as exports scrub it, then cut, with this
installation's hygiene file and salt."""

from __future__ import annotations

import json
import os

from model_foundry.lib import settings
from model_foundry.lib.hygiene.record import RecordScrubber
from model_foundry.lib.hygiene.shown import scrubber, shown_reason, shown_text, shown_texts

GITHUB = "ghp_" + "aB3dE5fG7hJ9kL1mN3pQ5rS7tU9vW1xY3zA5"
ANTHROPIC = "sk-ant-api03-" + "Zx9Yw8Vu7Ts6Rq5Po4Nm3Lk2Ji1Hg0Fe" * 3 + "AA"
PASSWORD = "Qr7tLp2xWm9kZs"


def test_secrets_and_personal_data_are_scrubbed_as_exports_scrub_them() -> None:
    text = (
        f"push with {GITHUB}, key {ANTHROPIC}, db postgres://lab:{PASSWORD}@db.internal:5432/x, "
        "mail akira.tanaka@labmail.net from 10.20.30.40 in /home/akira/lab"
    )
    shown = shown_text(text)
    for value in (GITHUB, ANTHROPIC, PASSWORD, "akira", "10.20.30.40"):
        assert value not in shown
    assert "[REDACTED:github_token]" in shown and "[REDACTED:email]" in shown
    assert "postgres://lab:[REDACTED:url_password]@db.internal:5432/x" in shown
    # The same text as an export of this installation (hygiene file and salt) shows it.
    assert shown == RecordScrubber.from_settings().scrub(text)[0]
    assert shown_text("mail from the lab") == "mail from the lab"


def test_the_scrub_comes_before_the_cut() -> None:
    # Cut right before its "@", the password would no longer look like one, and stay.
    text = f'{{"command": "psql postgres://lab:{PASSWORD}@db.internal:5432/foundry"}}'
    cut_at = text.index("@")
    assert shown_text(text[:cut_at]).endswith(PASSWORD)
    shown = shown_text(text, cut_at)
    assert shown == shown_text(text)[:cut_at]
    assert PASSWORD[:4] not in shown
    assert shown.startswith('{"command": "psql postgres://lab:[REDACTED:url_')


def test_json_text_is_scrubbed_inside_so_keys_that_say_secret_lose_their_values() -> None:
    payload = json.dumps({"tool": "sh", "arguments": {"db_password": "Kq83jdLw0pZ"}})
    shown = json.loads(shown_text(payload))
    assert shown == {"tool": "sh", "arguments": {"db_password": "[REDACTED:password]"}}
    # Untouched JSON keeps its bytes.
    assert shown_text('{"tool":"grep","arguments":{}}') == '{"tool":"grep","arguments":{}}'


def test_reasons_lose_the_last_word_of_a_value_cut_short_then_are_scrubbed() -> None:
    cut = f"{'x' * 60} {GITHUB}"[:80]
    # A GitHub token cut short: its prefix says token, so the rules take what is left too.
    assert shown_text(cut) == f"{'x' * 60} [REDACTED:token]"
    reason = f"seq 3: occurred_at {cut!r}... is not an ISO 8601 time"
    assert shown_reason(reason) == f"seq 3: occurred_at {'x' * 60!r}... is not an ISO 8601 time"
    whole = f"seq 4: subject field 'postgres://lab:{PASSWORD}@db/x' disagrees with 'llm.x'"
    assert shown_reason(whole) == (
        "seq 4: subject field 'postgres://lab:[REDACTED:url_password]@db/x' disagrees with 'llm.x'"
    )
    quoted = f'seq 5: occurred_at "it\'s {GITHUB[:20]}"... and {GITHUB}'
    assert shown_reason(quoted) == 'seq 5: occurred_at "it\'s"... and [REDACTED:github_token]'
    assert shown_texts(["seq 6: body is not valid JSON", f"x {GITHUB}"]) == [
        "seq 6: body is not valid JSON",
        "x [REDACTED:github_token]",
    ]


def test_the_hygiene_file_counts_and_a_changed_file_is_read_again() -> None:
    first = scrubber()
    assert scrubber() is first
    assert shown_text("badge acme_0123456789abcdef") == "badge acme_0123456789abcdef"
    path = settings.hygiene_file()
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(
        "secrets:\n  rules:\n    - kind: acme_token\n      pattern: 'acme_[0-9a-f]{16}'\n",
        encoding="utf-8",
    )
    os.utime(path, (1, 1))
    assert shown_text("badge acme_0123456789abcdef") == "badge [REDACTED:acme_token]"
    assert scrubber() is not first

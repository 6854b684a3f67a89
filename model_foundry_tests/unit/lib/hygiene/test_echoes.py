"""A secret found once is removed wherever else the record holds it (``record.echoes``)."""

from __future__ import annotations

import json
import re

from model_foundry.lib.hygiene.config import HygieneConfig
from model_foundry.lib.hygiene.record import RecordScrubber, removed_values

# Letters and digits with no provider's prefix: only the name before it marks it a secret.
TOKEN = "q8Zr4kT2wLm9Xv3Hn7Pd"


def _session(*contents: str) -> dict:
    return {"messages": [{"role": "user", "content": c} for c in contents]}


def test_a_value_set_where_a_rule_sees_it_goes_where_it_comes_back_bare() -> None:
    record = _session(
        f"export DEPLOY_TOKEN={TOKEN}",
        f"curl failed: 401 for credential {TOKEN} at 12:04",
    )
    scrubbed, counts = RecordScrubber().scrub(record)
    text = json.dumps(scrubbed)
    assert TOKEN not in text
    assert "curl failed: 401 for credential [REDACTED:" in text
    assert sum(counts.values()) == 2  # the value and its echo: two markers written


def test_echoes_go_percent_decoded_encoded_and_json_escaped() -> None:
    password = "Rhubarb%Falcon!x"
    encoded = "Rhubarb%25Falcon%21x"
    record = _session(
        f"MONGO_URL=mongodb://reporter:{encoded}@mongo-01.internal:27017/ledger",
        f"# raw value for the GUI: {password}",
        json.dumps({"note": f'he typed "{password}\\" again'}),
    )
    scrubbed, _ = RecordScrubber().scrub(record)
    text = json.dumps(scrubbed)
    assert "Rhubarb" not in text, text
    assert "raw value for the GUI: [REDACTED:" in text


def test_short_values_placeholders_and_allowed_values_are_not_looked_for_elsewhere() -> None:
    record = _session("PIN=4711 and password=changeme", "room 4711 is changeme-free")
    scrubbed, _ = RecordScrubber().scrub(record)
    assert scrubbed["messages"][1]["content"] == "room 4711 is changeme-free"
    allowed = RecordScrubber(HygieneConfig(allow=(re.compile(TOKEN),)))
    kept, _ = allowed.scrub(_session(f"export DEPLOY_TOKEN={TOKEN}", f"echo {TOKEN}"))
    assert kept == _session(f"export DEPLOY_TOKEN={TOKEN}", f"echo {TOKEN}")


def test_a_record_with_no_secret_is_left_as_it_was() -> None:
    record = _session("git rev-parse HEAD", "4b825dc642cb6eb9a060e54bf8d69288fbee4904")
    assert RecordScrubber().scrub(record) == (record, {})


def test_removed_values_line_up_markers_with_what_they_replaced() -> None:
    before = "a=SECRET1 b=XY c=Z9Z9 end"
    after = "a=[REDACTED:x] b=XY c=[REDACTED:y] end"
    assert removed_values(before, after) == [("SECRET1", "x"), ("Z9Z9", "y")]
    # Adjacent markers are one value; a marker at the end takes the rest.
    assert removed_values("k=AAAABBBB", "k=[REDACTED:x][REDACTED:y]") == [("AAAABBBB", "x")]
    # A marker the text already held stands for nothing.
    assert removed_values("v=[REDACTED:x] w=1", "v=[REDACTED:x] w=1") == []
    assert removed_values("same", "same") == []


def test_an_allowed_value_stays_in_every_pass_not_only_the_rules() -> None:
    phrase = "cabin lemon drift north vivid oak salad proud tiger arch fiber rain"
    rest = "Zx81QpLm2Rt7Wk4N"
    text = (
        f"export DEPLOY_TOKEN={TOKEN}\n"
        f"MNEMONIC='{phrase}'\n"
        f"const KEY = 'ghp_{TOKEN}Ab12Cd34Ef56Gh78' +\n  '{rest}';"
    )
    config = HygieneConfig(allow=tuple(re.compile(v) for v in (TOKEN, phrase, rest)))
    out, counts = RecordScrubber(config).scrub(text)
    assert TOKEN in out.splitlines()[0] and phrase in out and rest in out, out
    assert counts == {"github_token": 1}  # the token with a provider's prefix still goes


def test_a_json_text_is_also_judged_whole_a_key_beside_its_value() -> None:
    """A JSON document's walk judges each value alone; a key only the text passes read as a
    cue (``hook_tok``, ``DB_PSWD``) must still reach them, and the value goes on every line
    that holds it again."""
    text = json.dumps(
        {"hook_tok": "Xk29fjQ8LmZp3Rt", "DB_PSWD": "Wintergarten8", "id": "a8f9e7d6c5b4a392"}
    )
    out, counts = RecordScrubber().scrub(text)
    assert "Xk29fjQ8LmZp3Rt" not in out and "Wintergarten8" not in out
    assert '"id": "a8f9e7d6c5b4a392"' in out
    assert counts["token"] == 1 and counts["password"] == 1
    clean = json.dumps({"id": "a8f9e7d6c5b4a392", "routing_key": "orders.created"}, indent=2)
    assert RecordScrubber().scrub(clean) == (clean, {})

"""Shapes from agent sessions that the text passes missed (heldout10's even half): a log of
JSON lines, an assignment inside another, an assignment quoted whole, Go's MySQL DSN, a
credentials call in Rust, other languages' prose with a phrase before the verb, and an
expect script sending a passphrase."""

from __future__ import annotations

import json

import pytest

from model_foundry.lib.hygiene.record import RecordScrubber
from model_foundry.lib.hygiene.secrets import scrub_secrets


def test_each_json_line_of_a_log_is_walked_as_json() -> None:
    cell = {"source": ['password = "riverstone"  # TODO: getpass()\n']}
    lines = [
        "user: why does the notebook fail?",
        json.dumps({"type": "tool_use", "input": {"path": "churn.ipynb"}}),
        json.dumps({"type": "tool_result", "content": json.dumps(cell)}),
    ]
    out, counts = RecordScrubber().scrub("\n".join(lines))
    assert "riverstone" not in out and counts["password"] == 1
    assert out.splitlines()[:2] == lines[:2]
    # A log with nothing to take is left as it was.
    clean = "\n".join(lines[:2])
    assert RecordScrubber().scrub(clean) == (clean, {})


@pytest.mark.parametrize(
    ("text", "secret"),
    [
        ("Environment=DOPPLER_TOKEN=dp.st.prd.k77YarxfHYqWa2rtmA6o54HlON41GM", "k77Yarxf"),
        ('Environment="REDIS_PASSWORD=copper kettle whistles twice"', "kettle"),
        ('sql.Open("mysql", "shop:ginger-snap-19@tcp(10.1.2.3:3306)/shop")', "ginger-snap"),
        ('Credentials::new("ops@x.example".to_owned(), "Osprey-Lagoon-31".to_owned())', "Osprey"),
        ("a senha do Wi-Fi do escritório é jabuticaba2026, rede Escritorio", "jabuticaba"),
        ("Der WLAN-Schlüssel lautet Sonnenblume-Treppe-58, die SSID ist Buero", "Sonnenblume"),
        ("le mot de passe de la box est « hibou lavande vingt ».", "hibou"),
        ('expect "Enter passphrase"\nsend "granite owl sleeps at noon\\r"\n', "granite owl"),
    ],
)
def test_a_value_in_a_session_shape_goes(text: str, secret: str) -> None:
    assert secret not in scrub_secrets(text)[0]


@pytest.mark.parametrize(
    "text",
    [
        "Environment=PATH=/usr/bin:/bin",
        '{"content": "token=[SCRUBBED] expires_in=3600"}',
        "le mot de passe est incorrect.",
        "Das Passwort ist falsch, versuche es erneut.",
        "Der Schlüssel ist im Tresor v2.",
        'ssh git@github.com "echo hello"',
    ],
)
def test_what_such_shapes_leave(text: str) -> None:
    assert scrub_secrets(text)[0] == text

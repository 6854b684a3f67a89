"""Shapes from agent sessions that the text passes missed (heldout10's even half): a log of
JSON lines, an assignment inside another or quoted whole, Go's MySQL DSN, a credentials call
in Rust, other languages' prose with a phrase before the verb, expect sending a passphrase,
PINs and door codes, backup codes listed, one-time-password seeds, a password in another
script, C's ``#define``, an SQL ``INSERT``'s password column; and what they leave."""

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
        ("new SIM for the router: PIN 3091, PUK 58203317. Unlock it?", "58203317"),
        ("garage keypad code is 8153, alarm disarm code 40271.", "40271"),
        ("le digicode de l'immeuble est B4719 et la box", "B4719"),
        ("my backup codes, keep them somewhere:\n1. 4821 9036\n2. 7713 2058\n", "7713 2058"),
        ("412:oathtool --totp -b 3AGD6S5SQX7PXNXM\n", "3AGD6S5SQX7PXNXM"),
        ("田中: 長いので2回に分けます\n田中: ghp_DmE9oLA0tiFbCx5e", "DmE9oLA0tiFbCx5e"),
        ("手動入力用のキー: i7vj ijdn u3r7 i5wu 2ya6 noha yi4s 6kpu  これで", "u3r7 i5wu"),
        ("공동인증서 비밀번호는 하늘빛2026! 이고, 인증서 파일은", "하늘빛2026"),
        ("无线名称：Store-Guest\n无线密码：青山绿水2026\n", "青山绿水2026"),
        ('#define SECRET_PASS "tomato-vine-47"\n#define IO_USERNAME "mbrandt"', "tomato-vine"),
        (
            "INSERT INTO `members` (`id`, `email`, `passwd`) VALUES\n"
            "(1,'r@x.example','Marigold1987'),\n(2,'t@x.example','Harbor&Kite22');",
            "Harbor&Kite22",
        ),
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
        "error code 404, exit code 1, status code 200; GPIO pin 13 high",
        "the PIN must be 2024-01-05 or later",
        "パスワードは2024年3月に変更しました。パスワードは最低8文字です。",
        "fingerprint: 8F1C 4D2A 9B7E 0C35 61D4  A8E2 3AA5 C343 7156 7BD2",
        'gpg: key 3AA5C34371567BD2: public key "Release <r@x.example>" imported',
        'posthog.init("phc_O3mVqRorckieWtdkMDxdJKgIyr1CciN6JZktI10IgMW", {})',
        'FAKE_API_KEY = "test-key-not-real-0000"',
        "#define KEY_LEN 32",
        "from huggingface_hub import hf_hub_download  # npm_config_cache too",
        "INSERT INTO users (id, name) VALUES (1, 'bob');",
    ],
)
def test_what_such_shapes_leave(text: str) -> None:
    assert scrub_secrets(text)[0] == text

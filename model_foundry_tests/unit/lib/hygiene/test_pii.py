"""Personal data: addresses and home-folder names are replaced, versions and documentation
examples are not, and the name hashes are keyed with the installation's salt."""

from __future__ import annotations

import hashlib
import os
import stat
from collections import Counter
from pathlib import Path

import pytest

from model_foundry.lib import settings
from model_foundry.lib.hygiene.config import (
    HygieneConfig,
    HygieneConfigError,
    PiiSwitches,
    load_config,
)
from model_foundry.lib.hygiene.pii import PiiScrubber, load_salt
from model_foundry.lib.hygiene.record import RecordScrubber, scrub


def _pii(text: str, salt: bytes = b"s" * 32) -> tuple[str, Counter[str]]:
    counts: Counter[str] = Counter()
    return PiiScrubber(salt).scrub(text, counts), counts


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("mail jane.doe+ml@corp.co.uk now", "mail [REDACTED:email] now"),
        ("see admin@example.com and git@github.com:o/r.git", None),
        ("icon@2x.png", None),
        ("server 10.1.20.3:8080 and 8.8.8.8.", "server [REDACTED:ipv4]:8080 and [REDACTED:ipv4]."),
        ("python 3.11.7, version 1.2.3.4, v10.0.0.1, pkg==2.0.1.3", None),
        ("bind 0.0.0.0 or 127.0.0.1, mask 255.255.255.0, doc 192.0.2.7", None),
        ("ssh fe80::1ff:fe23:4567:890a or 2a01:4f8:c2c:1234::1", None),
        ("loopback ::1, 2001:db8::5, time 12:30:45, std::vector, aa:bb:cc:dd:ee:ff", None),
    ],
)
def test_addresses(text: str, expected: str | None) -> None:
    out, _ = _pii(text)
    if "fe80" in text:
        assert out == "ssh [REDACTED:ipv6] or [REDACTED:ipv6]"
    else:
        assert out == (expected if expected is not None else text)


def test_home_paths_take_a_keyed_alias() -> None:
    text = "/home/alice/src and /Users/alice/Desktop and C:\\Users\\alice\\x and /home/bob."
    out, counts = _pii(text)
    alias = PiiScrubber(b"s" * 32).user_alias("alice")
    assert out == (
        f"/home/{alias}/src and /home/{alias}/Desktop and C:\\Users\\{alias}\\x and "
        f"/home/{PiiScrubber(b's' * 32).user_alias('bob')}."
    )
    assert counts == {"home_path": 4}
    # The alias is neither the plain hash of the name nor the same under another salt.
    assert hashlib.sha256(b"alice").hexdigest()[:10] not in alias
    assert _pii(text, salt=b"t" * 32)[0] != out
    # Scrubbing again changes nothing: the alias is kept as it is.
    assert _pii(out)[0] == out


def test_homes_of_accounts_that_name_nobody_stay() -> None:
    text = "/home/ubuntu/app, /home/runner/work, /home/node/.npm, /home/agent/.ssh, /home/carla/x"
    out, counts = _pii(text)
    assert out.startswith("/home/ubuntu/app, /home/runner/work, /home/node/.npm, /home/agent/")
    assert "carla" not in out
    assert counts == {"home_path": 1}


def test_salt_is_created_once_and_private(tmp_path: Path) -> None:
    path = settings.hygiene_salt_file()
    assert not path.exists()
    first = load_salt()
    assert len(first) == 32 and path.exists()
    assert stat.S_IMODE(os.stat(path).st_mode) == 0o600
    assert load_salt() == first


def test_switches_turn_kinds_off() -> None:
    switches = PiiSwitches(emails=False, ip_addresses=True, home_paths=False)
    counts: Counter[str] = Counter()
    out = PiiScrubber(b"s", switches).scrub("a@corp.io 10.0.0.9 /home/al/x", counts)
    assert out == "a@corp.io [REDACTED:ipv4] /home/al/x"


def test_hygiene_file_adds_rules_and_allows_values() -> None:
    path = settings.hygiene_file()
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(
        "secrets:\n"
        "  rules:\n"
        "    - kind: acme_token\n"
        "      pattern: 'acme_[a-z0-9]{12}'\n"
        "  allow:\n"
        "    - 'ghp_fixture[A-Za-z0-9]+'\n"
        "pii:\n"
        "  emails: false\n"
    )
    allowed = "ghp_fixture" + "Ab1" * 9
    record = {"content": f"acme_k3j4h5g6f7d8 {allowed} me@corp.io", "password": allowed}
    out, counts = scrub(record)
    assert out == {"content": f"[REDACTED:acme_token] {allowed} me@corp.io", "password": allowed}
    assert counts == {"acme_token": 1}


@pytest.mark.parametrize(
    ("text", "field"),
    [
        ("secrets:\n  rules:\n    - kind: Bad Kind\n      pattern: x\n", "secrets.rules[0].kind"),
        ("secrets:\n  rules:\n    - kind: ok\n      pattern: '('\n", "secrets.rules[0].pattern"),
        ("secrets:\n  allow: ['[']\n", "secrets.allow[0]"),
        ("pii:\n  emails: maybe\n", "pii.emails"),
        ("pii:\n  phones: true\n", "pii.phones"),
        ("colour: blue\n", "colour"),
        ("secrets: [\n", "the file"),
    ],
)
def test_bad_hygiene_file_names_file_and_field(text: str, field: str) -> None:
    path = settings.hygiene_file()
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)
    with pytest.raises(HygieneConfigError) as info:
        load_config()
    message = str(info.value)
    assert message.startswith(f"{path}: {field} ") and "\n" not in message


def test_defaults_without_a_file() -> None:
    assert load_config() == HygieneConfig()
    out, counts = RecordScrubber.from_settings().scrub({"c": "ip 10.9.8.7"})
    assert out == {"c": "ip [REDACTED:ipv4]"} and counts == {"ipv4": 1}

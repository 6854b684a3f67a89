"""The second set of provider rules (``provider_tokens.py``): a token of each shape goes in
the contexts an agent meets it, and words that open with the same letters stay. The values
are drawn from a hash (``_v``), never live ones."""

from __future__ import annotations

import pytest

from model_foundry.lib.hygiene.config import HygieneConfig
from model_foundry.lib.hygiene.record import RecordScrubber
from model_foundry_tests.unit.lib.hygiene.test_secret_shapes import _v

HEX = "0123456789abcdef"
LOWER = "abcdefghijklmnopqrstuvwxyz0123456789"
UPPER = "ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789"


TOKENS = [
    ("shippo", "shippo_live_" + _v("shippo", 40, HEX)),
    ("braintree", "access_token$production$" + _v("bt", 16, LOWER) + "$" + _v("bt2", 32, HEX)),
    ("alibaba", "LTAI" + _v("ali", 20)),
    ("artifactory", "AKCp" + _v("af", 69)),
    ("docker", "dckr_pat_" + _v("docker", 27)),
    ("dynatrace", "dt0c01." + _v("dt", 24, UPPER) + "." + _v("dt2", 64, UPPER)),
    ("easypost", "EZAK" + _v("ep", 54)),
    ("figma", "figd_" + _v("figma", 40)),
    ("newrelic", "NRAK-" + _v("nr", 27, UPPER)),
    ("rubygems", "rubygems_" + _v("gem", 48, HEX)),
    ("square", "sq0atp-" + _v("sq", 22)),
    ("openrouter", "sk-or-v1-" + _v("or", 64, HEX)),
    ("atlassian", "ATATT3" + _v("atl", 186)),
    ("mailchimp", _v("mc", 32, HEX) + "-us14"),
    ("brevo", "xkeysib-" + _v("brevo", 64, HEX) + "-" + _v("brevo2", 16)),
    ("tailscale", "tskey-auth-" + _v("ts", 12) + "-" + _v("ts2", 28)),
    ("airtable", "pat" + _v("at", 14) + "." + _v("at2", 64, HEX)),
]
CONTEXTS = [
    "export API_TOKEN={t}",
    '{{"token": "{t}"}}',
    "curl -H 'X-Key: {t}' https://api.example.com/v1",
    "Here is the key you asked about: {t} (rotate it later).",
]


def _scrub(text: str) -> str:
    return RecordScrubber(HygieneConfig(), b"p" * 32).scrub(text)[0]


@pytest.mark.parametrize(("provider", "token"), TOKENS, ids=[t[0] for t in TOKENS])
@pytest.mark.parametrize("context", CONTEXTS)
def test_a_providers_token_goes_wherever_it_stands(provider: str, token: str, context: str) -> None:
    out = _scrub(context.format(t=token))
    leaked = [token[i : i + 12] for i in range(len(token) - 11) if token[i : i + 12] in out]
    assert not leaked, f"{provider}: {leaked[0]!r} survived in {out!r}"


@pytest.mark.parametrize(
    "text",
    [
        "An API-first design keeps the OpenAPI-SPEC in the repo.",
        "The social media team shared a precious cio-style memo.",
        "Run `pat.sh` then check patterns.py and sl.txt.",
        "The locale is en-us and the fallback is en-gb.",
        "Use access_token$ as the variable name in the PHP template.",
        "Backup codes: none-left, so generate new ones in the account settings.",
        "The recovery code format is four groups of four characters.",
    ],
)
def test_words_with_the_same_openings_stay(text: str) -> None:
    assert _scrub(text) == text


@pytest.mark.parametrize(
    "text",
    [
        "password manager recovery code: 4AET-AV70-5959-33MO-B5FT-E9QD-TH9D-Z9B6",
        "GitHub backup codes: a1b2c-3d4e5 f6a7b-8c9d0, 0e1f2-a3b4c",
        "2FA recovery codes (keep offline) = 8k2m-x9p4-q7w1",
    ],
)
def test_recovery_codes_go(text: str) -> None:
    out = _scrub(text)
    assert "[REDACTED:recovery_code]" in out, out
    assert not any(c.isdigit() for c in out.rpartition("]")[2]), out


def test_a_solana_keypair_shown_goes_and_other_byte_arrays_stay() -> None:
    digits = _v("sol", 128, HEX)
    values = [int(digits[i : i + 2], 16) for i in range(0, 128, 2)]
    array = "[" + ",".join(map(str, values)) + "]"
    out = _scrub("$ cat ~/.config/solana/id.json\n" + array)
    assert out == "$ cat ~/.config/solana/id.json\n[REDACTED:private_key]"
    assert _scrub("weights = " + array) == "weights = " + array

"""The backstop: cued random values in shapes no rule names go; what training needs stays.

The values below were made up for this file. The corpus test reads
``fixtures/independent/`` (written without reading lib/hygiene) and holds the floors measured
when the backstop was added; the figures are in docs/benchmarks.md."""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path

import pytest

from model_foundry.lib.hygiene.config import HygieneConfig
from model_foundry.lib.hygiene.record import RecordScrubber
from model_foundry.lib.hygiene.secrets import SecretScrubber

CORPUS = Path(__file__).parents[3] / "fixtures" / "independent"

# (text, the value that must go): one or more per cue family.
PLANTED = [
    # Credential words joined to others, in any case.
    ("myApiKeyProd=Zq8vR2mXw4LpT6nB", "Zq8vR2mXw4LpT6nB"),
    ("cfg.dbPassWord = 'Hk3$pW9qLm2x'", "Hk3$pW9qLm2x"),
    ("X-Internal-AccessTok: Ry7uP2kQ9wXe4Lm1", "Ry7uP2kQ9wXe4Lm1"),
    (
        "privKeyHex: 9f3a7c21e84b0d56a2f19c83e7b4d05a6c2e1f98",
        "9f3a7c21e84b0d56a2f19c83e7b4d05a6c2e1f98",
    ),
    ("<password>Tq5=Wn8vXk2pLz</password>", "Tq5=Wn8vXk2pLz"),
    ("the temporary password is Vb4*Hy7mQp2Lx", "Vb4*Hy7mQp2Lx"),
    ("本番のパスワードは「Cedar%river4417」です。", "Cedar%river4417"),
    # Password flags of tools no rule names, attached or not.
    ("zip -P Mw7^Kq2xVp9L -r logs.zip logs/", "Mw7^Kq2xVp9L"),
    ("7z a -pJn4%Ty8wQe3R archive.7z data/", "Jn4%Ty8wQe3R"),
    ("mongosh -u app -p Willow.cedar8812 --authenticationDatabase admin", "Willow.cedar8812"),
    ("smbclient //fs/share -U deploy%Gk5rTy8NqW2pXm -c ls", "Gk5rTy8NqW2pXm"),
    # The last field of a credentials line, in a sentence.
    ("Add db-3.internal:5432:app:etl:Birch-lantern3391 to ~/.pgpass.", "Birch-lantern3391"),
    ("echo 'svc:Xr6Lpq2m9Wt4z' | sudo chpasswd", "Xr6Lpq2m9Wt4z"),
    ("log in as admin:Maple*harbor6620@10.1.2.3", "Maple*harbor6620"),
    # A URL path segment after a hook, token or bot segment.
    ("POST https://ci.example.com/hooks/hQ7lm2Xw9Pv4tr8Kz3nb5Yc", "hQ7lm2Xw9Pv4tr8Kz3nb5Yc"),
    (
        "https://x.webhook.office.com/webhookb2/IncomingWebhook/5e0c9a1f7b3d42e68a9c1f0b2d4e6a8c/x",
        "5e0c9a1f7b3d42e68a9c1f0b2d4e6a8c",
    ),
]

KEPT = [
    "git checkout 3f35a35ad9b84d0e4c5b33ca2f3e6639a6a7c519",
    "request_id=07a472d1-ccb1-43b1-b107-1668e51a814d status=200",
    "FROM python:3.12-slim@sha256:8b3c63a073930a1dfae5596d9cc714d2efd4c5e8140e646e151e13acfcc4ac6a",
    "Signature: 8a477f597d28d172789f06886806bc55",
    "pip install torch==2.5.1+cu124",
    "virtualenv -p python3.11 .venv",
    "docker run -p 8080:80 nginx:1.27",
    "HF_TOKEN=<your-hf-token>",
    "password: ${DB_PASSWORD}",
    "api_key = settings.OPENAI_API_KEY",
    "password: OAuth2PasswordRequestForm = Depends()",
    "token = tokenizer.encode(text)[0]",
    "ls -la ~/.cache/huggingface/hub/models--google--gemma-3-27b-it/snapshots/",
    "SSH fingerprint SHA256:sk8ns3uPHs7KsZKV5xOeyW4dYEiBzyv/RrUpcgX2QaI",
    "See https://github.com/lab/repo/pull/412/files#diff-5ea89760c38db5f846e0757aaafc37a013",
    "kubectl logs dagster-webserver-3d96467ec7-chjph -n mf",
    "key = cache_key(model_id, prompt_hash)",
    'VALID_KEY_RE = re.compile(r"^[-/_=\\.a-zA-Z0-9]+$")',
    "class Ed25519PrivateKey(metaclass=abc.ABCMeta):",
]


@pytest.mark.parametrize(("text", "value"), PLANTED)
def test_a_cued_random_value_goes_whole(text: str, value: str) -> None:
    counts: Counter[str] = Counter()
    out = SecretScrubber().scrub(text, counts)
    assert value not in out and "[REDACTED:" in out, out
    assert not any(value[i : i + 8] in out for i in range(len(value) - 7)), out
    assert sum(counts.values()) >= 1


@pytest.mark.parametrize("text", KEPT)
def test_what_training_needs_stays(text: str) -> None:
    """The backstop adds nothing to what the rules do (some of these are rule cases too)."""
    on: Counter[str] = Counter()
    off: Counter[str] = Counter()
    rules_only = SecretScrubber(HygieneConfig(backstop=False)).scrub(text, off)
    assert SecretScrubber().scrub(text, on) == rules_only
    assert on == off


def test_the_backstop_can_be_switched_off() -> None:
    text = "zip -P Mw7^Kq2xVp9L -r logs.zip logs/"
    assert SecretScrubber(HygieneConfig(backstop=False)).scrub(text) == text


def _load(name: str) -> list[dict]:
    lines = (CORPUS / name).read_text(encoding="utf-8").splitlines()
    return [json.loads(line) for line in lines]


def test_independent_corpus_floors() -> None:
    """Recall whole and in fragments (no 8 characters of a value survive) and negatives kept,
    at the figures measured (the rules alone: 571 and 568 of 689; 381 of 384 kept)."""
    scrubber = RecordScrubber(salt=b"independent-corpus")
    whole = fragment_free = values = 0
    for row in _load("secrets.jsonl"):
        out = scrubber.scrub(row["text"])[0]
        for v in row["secrets"]:
            values += 1
            whole += v not in out
            fragment_free += not any(v[i : i + 8] in out for i in range(len(v) - 7))
    kept = total = 0
    for row in _load("negatives.jsonl"):
        out = scrubber.scrub(row["text"])[0]
        for k in row["keep"]:
            total += 1
            kept += k in out
    print(f"whole {whole}/{values}, fragment-free {fragment_free}/{values}, kept {kept}/{total}")
    assert values == 689 and total == 384
    assert whole >= 666
    assert fragment_free >= 663
    # The three lost are PII by design (two home folders, one IPv6 address), not the backstop.
    assert kept >= 381

"""How each kind of secret's value is generated from a seeded RNG."""

from __future__ import annotations

import base64
import json
import random
import string
from collections.abc import Callable
from dataclasses import dataclass

from model_foundry.devtools.secrets_corpus.model import (
    ALNUM,
    B64,
    B64URL,
    HEX,
    LOWER_ALNUM,
    PW,
    UPPER_ALNUM,
)

Maker = Callable[[random.Random], tuple[str, str]]


def random_part(rng: random.Random, alphabet: str, n: int) -> str:
    """``n`` characters of ``alphabet`` drawn from ``rng``: the random part of a fake secret."""
    return "".join(rng.choice(alphabet) for _ in range(n))


def varied_part(rng: random.Random, alphabet: str, n: int) -> str:
    """:func:`random_part` drawn again until it is varied enough that no placeholder rule
    could take it for one (``aaaa``, ``...here...``, ``your...``), as real tokens are."""
    while True:
        s = random_part(rng, alphabet, n)
        if len(set(s)) > min(8, n // 2) and "here" not in s.lower() and "your" not in s.lower():
            return s


def _pre(prefix: str, alphabet: str, lo: int, hi: int | None = None, suffix: str = "") -> Maker:
    def make(rng: random.Random) -> tuple[str, str]:
        part = random_part(rng, alphabet, rng.randint(lo, hi) if hi else lo)
        return prefix + part + suffix, part

    return make


def _after(prefix: str, body: Callable[[random.Random], str]) -> Maker:
    def make(rng: random.Random) -> tuple[str, str]:
        part = body(rng)
        return prefix + part, part

    return make


def _b64url_json(obj: object) -> str:
    raw = json.dumps(obj, separators=(",", ":")).encode()
    return base64.urlsafe_b64encode(raw).decode().rstrip("=")


def _jwt(alg: str, sig_len: int, claims: Callable[[random.Random], dict[str, object]]) -> Maker:
    def make(rng: random.Random) -> tuple[str, str]:
        header = _b64url_json({"alg": alg, "typ": "JWT"})
        part = _b64url_json(claims(rng)) + "." + random_part(rng, B64URL, sig_len)
        return header + "." + part, part

    return make


def _app_claims(rng: random.Random) -> dict[str, object]:
    iat = 1_700_000_000 + rng.randint(0, 40_000_000)
    return {
        "sub": f"user_{random_part(rng, LOWER_ALNUM, 10)}",
        "iat": iat,
        "exp": iat + 3600,
        "jti": random_part(rng, B64URL, 22),
    }


def _k8s_claims(rng: random.Random) -> dict[str, object]:
    iat = 1_700_000_000 + rng.randint(0, 40_000_000)
    return {
        "aud": ["https://kubernetes.default.svc"],
        "exp": iat + 31_536_000,
        "iat": iat,
        "iss": "https://kubernetes.default.svc",
        "jti": random_part(rng, HEX, 32),
        "sub": f"system:serviceaccount:ci:{random_part(rng, string.ascii_lowercase, 6)}",
    }


def _b64_bytes(rng: random.Random, n: int) -> str:
    return base64.b64encode(rng.randbytes(n)).decode()


def _pem(label: str, fixed_head: bytes, n_bytes: int, width: int = 64) -> Maker:
    """A PEM block: a fixed DER/OpenSSH preamble, then random bytes; the random part is the
    body from the first base64 character that depends only on random bytes."""

    def make(rng: random.Random) -> tuple[str, str]:
        raw = fixed_head + rng.randbytes(n_bytes)
        b64 = base64.b64encode(raw).decode()
        body = "\n".join(b64[i : i + width] for i in range(0, len(b64), width))
        fixed_chars = -(-len(fixed_head) * 8 // 6)
        # position in the wrapped body of the first random-only character
        skip = fixed_chars + fixed_chars // width
        value = f"-----BEGIN {label}-----\n{body}\n-----END {label}-----"
        return value, body[skip:].lstrip("\n")

    return make


def _slack(prefix: str, last_alphabet: str, last_len: int) -> Maker:
    def make(rng: random.Random) -> tuple[str, str]:
        part = (
            f"{random_part(rng, string.digits, 12)}-{random_part(rng, string.digits, 13)}-"
            f"{random_part(rng, last_alphabet, last_len)}"
        )
        return prefix + part, part

    return make


def _slack_webhook(rng: random.Random) -> tuple[str, str]:
    team, bot = random_part(rng, UPPER_ALNUM, 8), random_part(rng, UPPER_ALNUM, 10)
    part = f"T{team}/B{bot}/{random_part(rng, ALNUM, 24)}"
    return "https://hooks.slack.com/services/" + part, part


def _sentry_dsn(rng: random.Random) -> tuple[str, str]:
    key = random_part(rng, HEX, 32)
    org = rng.randint(100_000, 999_999)
    project = rng.randint(1_000_000, 9_999_999)
    return f"https://{key}@o{org}.ingest.sentry.io/{project}", key


def _discord(rng: random.Random) -> tuple[str, str]:
    ident = base64.b64encode(str(rng.randint(10**17, 10**18 - 1)).encode()).decode()
    value = f"{ident.rstrip('=')}.{random_part(rng, B64URL, 6)}.{random_part(rng, B64URL, 38)}"
    return value, value


def _telegram(rng: random.Random) -> tuple[str, str]:
    part = "AA" + random_part(rng, B64URL, 33)
    return f"{rng.randint(10**9, 10**10 - 1)}:{part}", part


def _postman(rng: random.Random) -> tuple[str, str]:
    part = f"{random_part(rng, HEX, 24)}-{random_part(rng, HEX, 34)}"
    return "PMAK-" + part, part


def _terraform(rng: random.Random) -> tuple[str, str]:
    value = f"{random_part(rng, ALNUM, 14)}.atlasv1.{random_part(rng, ALNUM, 67)}"
    return value, value


def _mapbox(rng: random.Random) -> tuple[str, str]:
    user = random_part(rng, string.ascii_lowercase, 8)
    claims = _b64url_json({"u": user, "a": random_part(rng, LOWER_ALNUM, 25)})
    part = claims + "." + random_part(rng, B64URL, 22)
    return "sk." + part, part


def _grafana(rng: random.Random) -> tuple[str, str]:
    part = f"{random_part(rng, ALNUM, 32)}_{random_part(rng, HEX, 8)}"
    return "glsa_" + part, part


def _github_fine(rng: random.Random) -> tuple[str, str]:
    part = f"{random_part(rng, ALNUM, 22)}_{random_part(rng, ALNUM, 59)}"
    return "github_pat_" + part, part


def _openai_project(rng: random.Random) -> tuple[str, str]:
    part = f"{random_part(rng, B64URL, 74)}T3BlbkFJ{random_part(rng, B64URL, 74)}"
    return "sk-proj-" + part, part


def _openai_legacy(rng: random.Random) -> tuple[str, str]:
    part = f"{random_part(rng, ALNUM, 20)}T3BlbkFJ{random_part(rng, ALNUM, 20)}"
    return "sk-" + part, part


def _atlassian(rng: random.Random) -> tuple[str, str]:
    part = f"{random_part(rng, B64URL, 180)}={random_part(rng, HEX, 8).upper()}"
    return "ATATT3xFfGF0" + part, part


def _pypi(rng: random.Random) -> tuple[str, str]:
    part = random_part(rng, B64URL, rng.randint(120, 160))
    return "pypi-AgEIcHlwaS5vcmcCJ" + part, part


def _sendgrid(rng: random.Random) -> tuple[str, str]:
    part = f"{random_part(rng, B64URL, 22)}.{random_part(rng, B64URL, 43)}"
    return "SG." + part, part


def _aws_session(rng: random.Random) -> tuple[str, str]:
    part = random_part(rng, B64, rng.randint(260, 340))
    return "IQoJb3JpZ2luX2VjE" + part, part


def _padded_b64(n_bytes: int) -> Maker:
    def make(rng: random.Random) -> tuple[str, str]:
        value = _b64_bytes(rng, n_bytes)
        return value, value.rstrip("=")

    return make


def _password(lo: int = 14, hi: int = 26) -> Maker:
    def make(rng: random.Random) -> tuple[str, str]:
        # starts with a letter so that `-p<pw>` and `key=<pw>` read unambiguously
        value = rng.choice(string.ascii_letters) + random_part(rng, PW, rng.randint(lo, hi) - 1)
        return value, value

    return make


def _django(rng: random.Random) -> tuple[str, str]:
    value = random_part(rng, string.ascii_lowercase + string.digits + "!@^&*(-_=+)", 50)
    return value, value


@dataclass(frozen=True)
class Kind:
    """A kind of secret: how it is generated and what people call it."""

    name: str
    family: str  # "token", "password" or "pem"
    env: str  # the environment variable it usually lives in
    label: str  # how a person names it in prose
    make: Maker
    header: str = "Authorization: Bearer {}"  # "" when it never goes in a header


_T = "token"
_P = "password"
_K = "pem"

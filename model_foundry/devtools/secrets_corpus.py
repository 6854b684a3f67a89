"""A deterministic corpus of fake secrets planted where an agent session meets them.

Written from public descriptions of credential files, connection strings, command lines and
provider token formats, not from any scrubber's rules. Every value is generated here from a
seeded :class:`random.Random` (the standard library only, no network), so the same seed gives
the same corpus; nothing in it is a real credential.

- :func:`corpus` returns :class:`Case` objects: a text, the :class:`Plant` values hidden in it
  (each with the random part that must not survive scrubbing), hard negatives a good scrubber
  keeps (hashes, UUIDs, placeholders, URLs without credentials...), and ordinary words around
  the values that must survive too.
- :func:`as_events` turns cases into ``llm.chat.persist`` / ``llm.tool_call`` event bodies of
  the project's contract, grouped into sessions.
- :func:`evaluate`, :func:`evaluate_texts` and :func:`evaluate_blob` score a scrubber's output
  and return a :class:`Report`.

A value leaks *whole* when its random part (or the encoded form the case used: base64,
URL-encoded, JSON-escaped) is still there, and leaks a *fragment* when any 12 consecutive
characters of the random part (or of its encoded form) are.
"""

from __future__ import annotations

import base64
import json
import random
import string
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from urllib.parse import quote

WHERES: tuple[str, ...] = (
    "user_turn",
    "assistant_turn",
    "reasoning",
    "tool_arguments",
    "tool_result",
    "env_dump",
)
FRAGMENT = 12
ENCODINGS: tuple[str, ...] = ("plain", "json", "json2", "url", "base64")

ALNUM = string.ascii_letters + string.digits
LOWER_ALNUM = string.ascii_lowercase + string.digits
UPPER_ALNUM = string.ascii_uppercase + string.digits
HEX = "0123456789abcdef"
B64 = ALNUM + "+/"
B64URL = ALNUM + "-_"
B32 = string.ascii_uppercase + "234567"
BECH32_UPPER = "QPZRY9X8GF2TVDW0S3JN54KHCE6MUA7L"
# Passwords written as they are: safe unencoded in URLs' user info, shells and config files.
PW = ALNUM + "-_.~!*+"
# Passwords that only ever appear URL-encoded.
PW_SPECIAL = "@:/+=?&#% "


# --------------------------------------------------------------------------------------------
# Data model
# --------------------------------------------------------------------------------------------


def _json_escape(text: str) -> str:
    return json.dumps(text)[1:-1]


def _b64(text: str) -> str:
    return base64.b64encode(text.encode("utf-8")).decode("ascii")


def encode(text: str, encoding: str) -> str:
    """``text`` in one of :data:`ENCODINGS` (``base64`` is standard, padded base64)."""
    if encoding == "plain":
        return text
    if encoding == "json":
        return _json_escape(text)
    if encoding == "json2":
        return _json_escape(_json_escape(text))
    if encoding == "url":
        return quote(text, safe="")
    if encoding == "base64":
        return _b64(text)
    raise ValueError(f"unknown encoding {encoding!r}")


@dataclass(frozen=True)
class Plant:
    """One secret value hidden in a case's text.

    ``value`` is the secret as a person would name it (a token, a password, a PEM key);
    ``random_part`` is its generated part, a substring of ``value``, which must not survive.
    ``encoding`` says how it is written in the text; for ``base64``, ``wrapped`` is the exact
    text that was encoded (``user:password`` for HTTP Basic, a ``KEY=value`` line...), which
    contains ``value``; empty means the value alone.
    """

    kind: str
    context: str
    value: str
    random_part: str
    encoding: str = "plain"
    wrapped: str = ""

    @property
    def shown(self) -> str:
        """The value as it is written in the case's text."""
        if self.encoding == "base64":
            return _b64(self.wrapped or self.value)
        return encode(self.value, self.encoding)

    @property
    def leak_forms(self) -> tuple[str, ...]:
        """Strings whose presence means the value leaked whole."""
        forms = [self.random_part]
        if self.encoding == "base64":
            forms.append(self.shown)
        elif self.encoding != "plain":
            forms.append(encode(self.random_part, self.encoding))
        return tuple(dict.fromkeys(forms))

    @property
    def fragment_sources(self) -> tuple[str, ...]:
        """Strings none of whose 12-character windows may survive."""
        sources = [self.random_part]
        if self.encoding == "base64":
            sources.append(self._base64_random_region())
        elif self.encoding != "plain":
            sources.append(encode(self.random_part, self.encoding))
        return tuple(s for s in dict.fromkeys(sources) if s)

    def _base64_random_region(self) -> str:
        """The base64 characters that depend only on bytes of the random part."""
        wrapped = (self.wrapped or self.value).encode("utf-8")
        value = self.value.encode("utf-8")
        start = wrapped.index(value) + value.index(self.random_part.encode("utf-8"))
        end = start + len(self.random_part.encode("utf-8"))
        first = -(-8 * start // 6)
        last = 8 * end // 6
        return self.shown[first:last]


@dataclass(frozen=True)
class Case:
    """A text an agent session holds, and what a scrubber must remove from it and keep.

    ``where`` is the session location (one of :data:`WHERES`); ``source`` is the file path or
    the command that produced or receives the text, which :func:`as_events` uses to shape the
    tool call.
    """

    text: str
    plants: tuple[Plant, ...]
    negatives: tuple[str, ...]
    keep_words: tuple[str, ...]
    where: str
    source: str = ""


# --------------------------------------------------------------------------------------------
# Secret kinds
# --------------------------------------------------------------------------------------------

Maker = Callable[[random.Random], tuple[str, str]]


def _r(rng: random.Random, alphabet: str, n: int) -> str:
    return "".join(rng.choice(alphabet) for _ in range(n))


def _pre(prefix: str, alphabet: str, lo: int, hi: int | None = None, suffix: str = "") -> Maker:
    def make(rng: random.Random) -> tuple[str, str]:
        part = _r(rng, alphabet, rng.randint(lo, hi) if hi else lo)
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
        part = _b64url_json(claims(rng)) + "." + _r(rng, B64URL, sig_len)
        return header + "." + part, part

    return make


def _app_claims(rng: random.Random) -> dict[str, object]:
    iat = 1_700_000_000 + rng.randint(0, 40_000_000)
    return {
        "sub": f"user_{_r(rng, LOWER_ALNUM, 10)}",
        "iat": iat,
        "exp": iat + 3600,
        "jti": _r(rng, B64URL, 22),
    }


def _k8s_claims(rng: random.Random) -> dict[str, object]:
    iat = 1_700_000_000 + rng.randint(0, 40_000_000)
    return {
        "aud": ["https://kubernetes.default.svc"],
        "exp": iat + 31_536_000,
        "iat": iat,
        "iss": "https://kubernetes.default.svc",
        "jti": _r(rng, HEX, 32),
        "sub": f"system:serviceaccount:ci:{_r(rng, string.ascii_lowercase, 6)}",
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
            f"{_r(rng, string.digits, 12)}-{_r(rng, string.digits, 13)}-"
            f"{_r(rng, last_alphabet, last_len)}"
        )
        return prefix + part, part

    return make


def _slack_webhook(rng: random.Random) -> tuple[str, str]:
    part = f"T{_r(rng, UPPER_ALNUM, 8)}/B{_r(rng, UPPER_ALNUM, 10)}/{_r(rng, ALNUM, 24)}"
    return "https://hooks.slack.com/services/" + part, part


def _sentry_dsn(rng: random.Random) -> tuple[str, str]:
    key = _r(rng, HEX, 32)
    org = rng.randint(100_000, 999_999)
    project = rng.randint(1_000_000, 9_999_999)
    return f"https://{key}@o{org}.ingest.sentry.io/{project}", key


def _discord(rng: random.Random) -> tuple[str, str]:
    ident = base64.b64encode(str(rng.randint(10**17, 10**18 - 1)).encode()).decode()
    value = f"{ident.rstrip('=')}.{_r(rng, B64URL, 6)}.{_r(rng, B64URL, 38)}"
    return value, value


def _telegram(rng: random.Random) -> tuple[str, str]:
    part = "AA" + _r(rng, B64URL, 33)
    return f"{rng.randint(10**9, 10**10 - 1)}:{part}", part


def _postman(rng: random.Random) -> tuple[str, str]:
    part = f"{_r(rng, HEX, 24)}-{_r(rng, HEX, 34)}"
    return "PMAK-" + part, part


def _terraform(rng: random.Random) -> tuple[str, str]:
    value = f"{_r(rng, ALNUM, 14)}.atlasv1.{_r(rng, ALNUM, 67)}"
    return value, value


def _mapbox(rng: random.Random) -> tuple[str, str]:
    claims = _b64url_json({"u": _r(rng, string.ascii_lowercase, 8), "a": _r(rng, LOWER_ALNUM, 25)})
    part = claims + "." + _r(rng, B64URL, 22)
    return "sk." + part, part


def _grafana(rng: random.Random) -> tuple[str, str]:
    part = f"{_r(rng, ALNUM, 32)}_{_r(rng, HEX, 8)}"
    return "glsa_" + part, part


def _github_fine(rng: random.Random) -> tuple[str, str]:
    part = f"{_r(rng, ALNUM, 22)}_{_r(rng, ALNUM, 59)}"
    return "github_pat_" + part, part


def _openai_project(rng: random.Random) -> tuple[str, str]:
    part = f"{_r(rng, B64URL, 74)}T3BlbkFJ{_r(rng, B64URL, 74)}"
    return "sk-proj-" + part, part


def _openai_legacy(rng: random.Random) -> tuple[str, str]:
    part = f"{_r(rng, ALNUM, 20)}T3BlbkFJ{_r(rng, ALNUM, 20)}"
    return "sk-" + part, part


def _atlassian(rng: random.Random) -> tuple[str, str]:
    part = f"{_r(rng, B64URL, 180)}={_r(rng, HEX, 8).upper()}"
    return "ATATT3xFfGF0" + part, part


def _pypi(rng: random.Random) -> tuple[str, str]:
    part = _r(rng, B64URL, rng.randint(120, 160))
    return "pypi-AgEIcHlwaS5vcmcCJ" + part, part


def _sendgrid(rng: random.Random) -> tuple[str, str]:
    part = f"{_r(rng, B64URL, 22)}.{_r(rng, B64URL, 43)}"
    return "SG." + part, part


def _aws_session(rng: random.Random) -> tuple[str, str]:
    part = _r(rng, B64, rng.randint(260, 340))
    return "IQoJb3JpZ2luX2VjE" + part, part


def _padded_b64(n_bytes: int) -> Maker:
    def make(rng: random.Random) -> tuple[str, str]:
        value = _b64_bytes(rng, n_bytes)
        return value, value.rstrip("=")

    return make


def _password(lo: int = 14, hi: int = 26) -> Maker:
    def make(rng: random.Random) -> tuple[str, str]:
        # starts with a letter so that `-p<pw>` and `key=<pw>` read unambiguously
        value = rng.choice(string.ascii_letters) + _r(rng, PW, rng.randint(lo, hi) - 1)
        return value, value

    return make


def _django(rng: random.Random) -> tuple[str, str]:
    value = _r(rng, string.ascii_lowercase + string.digits + "!@^&*(-_=+)", 50)
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

KINDS: tuple[Kind, ...] = (
    Kind("github_classic_pat", _T, "GITHUB_TOKEN", "GitHub token", _pre("ghp_", ALNUM, 36),
         "Authorization: token {}"),
    Kind("github_fine_grained_pat", _T, "GH_TOKEN", "fine-grained GitHub token", _github_fine),
    Kind("github_oauth_token", _T, "GITHUB_OAUTH_TOKEN", "GitHub OAuth token",
         _pre("gho_", ALNUM, 36)),
    Kind("github_app_token", _T, "GITHUB_APP_TOKEN", "GitHub app installation token",
         _pre("ghs_", ALNUM, 36)),
    Kind("gitlab_pat", _T, "GITLAB_TOKEN", "GitLab access token", _pre("glpat-", B64URL, 20),
         "PRIVATE-TOKEN: {}"),
    Kind("slack_bot_token", _T, "SLACK_BOT_TOKEN", "Slack bot token", _slack("xoxb-", ALNUM, 24)),
    Kind("slack_user_token", _T, "SLACK_USER_TOKEN", "Slack user token",
         _slack("xoxp-", HEX, 32)),
    Kind("slack_webhook_url", _T, "SLACK_WEBHOOK_URL", "Slack webhook URL", _slack_webhook, ""),
    Kind("stripe_secret_key", _T, "STRIPE_SECRET_KEY", "Stripe secret key",
         _pre("sk_live_", ALNUM, 24, 34)),
    Kind("stripe_restricted_key", _T, "STRIPE_RESTRICTED_KEY", "Stripe restricted key",
         _pre("rk_live_", ALNUM, 24, 34)),
    Kind("stripe_webhook_secret", _T, "STRIPE_WEBHOOK_SECRET", "Stripe webhook signing secret",
         _pre("whsec_", ALNUM, 32), ""),
    Kind("openai_project_key", _T, "OPENAI_API_KEY", "OpenAI key", _openai_project),
    Kind("openai_legacy_key", _T, "OPENAI_KEY", "old OpenAI key", _openai_legacy),
    Kind("anthropic_api_key", _T, "ANTHROPIC_API_KEY", "Anthropic key",
         _pre("sk-ant-api03-", B64URL, 93, suffix="AA"), "x-api-key: {}"),
    Kind("huggingface_token", _T, "HF_TOKEN", "Hugging Face token",
         _pre("hf_", string.ascii_letters, 34)),
    Kind("aws_access_key_id", _T, "AWS_ACCESS_KEY_ID", "AWS access key id",
         _pre("AKIA", B32, 16), ""),
    Kind("aws_secret_access_key", _T, "AWS_SECRET_ACCESS_KEY", "AWS secret access key",
         _pre("", B64, 40), ""),
    Kind("aws_session_token", _T, "AWS_SESSION_TOKEN", "AWS session token", _aws_session,
         "X-Amz-Security-Token: {}"),
    Kind("google_api_key", _T, "GOOGLE_API_KEY", "Google API key", _pre("AIza", B64URL, 35),
         "X-Goog-Api-Key: {}"),
    Kind("google_oauth_client_secret", _T, "GOOGLE_CLIENT_SECRET", "Google OAuth client secret",
         _pre("GOCSPX-", B64URL, 28), ""),
    Kind("jwt", _T, "AUTH_JWT", "JWT", _jwt("HS256", 43, _app_claims)),
    Kind("kubernetes_sa_token", _T, "KUBE_TOKEN", "Kubernetes service account token",
         _jwt("RS256", 342, _k8s_claims)),
    Kind("npm_token", _T, "NPM_TOKEN", "npm token", _pre("npm_", ALNUM, 36)),
    Kind("pypi_token", _T, "PYPI_TOKEN", "PyPI upload token", _pypi),
    Kind("sendgrid_api_key", _T, "SENDGRID_API_KEY", "SendGrid key", _sendgrid),
    Kind("twilio_auth_token", _T, "TWILIO_AUTH_TOKEN", "Twilio auth token", _pre("", HEX, 32), ""),
    Kind("mailgun_api_key", _T, "MAILGUN_API_KEY", "Mailgun key", _pre("key-", HEX, 32), ""),
    Kind("shopify_access_token", _T, "SHOPIFY_ACCESS_TOKEN", "Shopify admin token",
         _pre("shpat_", HEX, 32), "X-Shopify-Access-Token: {}"),
    Kind("digitalocean_token", _T, "DIGITALOCEAN_TOKEN", "DigitalOcean token",
         _pre("dop_v1_", HEX, 64)),
    Kind("databricks_token", _T, "DATABRICKS_TOKEN", "Databricks token", _pre("dapi", HEX, 32)),
    Kind("discord_bot_token", _T, "DISCORD_TOKEN", "Discord bot token", _discord,
         "Authorization: Bot {}"),
    Kind("telegram_bot_token", _T, "TELEGRAM_BOT_TOKEN", "Telegram bot token", _telegram, ""),
    Kind("atlassian_api_token", _T, "JIRA_API_TOKEN", "Jira API token", _atlassian),
    Kind("linear_api_key", _T, "LINEAR_API_KEY", "Linear key", _pre("lin_api_", ALNUM, 40),
         "Authorization: {}"),
    Kind("notion_token", _T, "NOTION_TOKEN", "Notion integration token", _pre("ntn_", ALNUM, 46)),
    Kind("groq_api_key", _T, "GROQ_API_KEY", "Groq key", _pre("gsk_", ALNUM, 52)),
    Kind("replicate_token", _T, "REPLICATE_API_TOKEN", "Replicate token", _pre("r8_", ALNUM, 37)),
    Kind("postman_api_key", _T, "POSTMAN_API_KEY", "Postman key", _postman, "X-Api-Key: {}"),
    Kind("vault_token", _T, "VAULT_TOKEN", "Vault token", _pre("hvs.", B64URL, 90),
         "X-Vault-Token: {}"),
    Kind("terraform_cloud_token", _T, "TF_TOKEN_app_terraform_io", "Terraform Cloud token",
         _terraform),
    Kind("sentry_dsn", _T, "SENTRY_DSN", "Sentry DSN", _sentry_dsn, ""),
    Kind("datadog_api_key", _T, "DD_API_KEY", "Datadog API key", _pre("", HEX, 32),
         "DD-API-KEY: {}"),
    Kind("newrelic_api_key", _T, "NEW_RELIC_API_KEY", "New Relic key",
         _pre("NRAK-", UPPER_ALNUM, 27), "Api-Key: {}"),
    Kind("pulumi_token", _T, "PULUMI_ACCESS_TOKEN", "Pulumi token", _pre("pul-", HEX, 40)),
    Kind("grafana_sa_token", _T, "GRAFANA_TOKEN", "Grafana service account token", _grafana),
    Kind("supabase_access_token", _T, "SUPABASE_ACCESS_TOKEN", "Supabase token",
         _pre("sbp_", HEX, 40)),
    Kind("age_secret_key", _T, "SOPS_AGE_KEY", "age secret key",
         _pre("AGE-SECRET-KEY-1", BECH32_UPPER, 58), ""),
    Kind("cloudflare_api_token", _T, "CLOUDFLARE_API_TOKEN", "Cloudflare token",
         _pre("", B64URL, 40)),
    Kind("mapbox_secret_token", _T, "MAPBOX_SECRET_TOKEN", "Mapbox secret token", _mapbox, ""),
    Kind("azure_storage_account_key", _T, "AZURE_STORAGE_KEY", "Azure storage account key",
         _padded_b64(64), ""),
    Kind("opaque_api_key", _T, "API_KEY", "API key", _pre("", ALNUM, 32), "X-Api-Key: {}"),
    Kind("session_cookie", _T, "SESSION_COOKIE", "session cookie", _pre("", B64URL, 43),
         "Cookie: session={}; theme=dark"),
    Kind("flask_secret_key", _T, "FLASK_SECRET_KEY", "Flask secret key", _pre("", HEX, 64), ""),
    Kind("encryption_key", _T, "APP_ENCRYPTION_KEY", "encryption key", _padded_b64(32), ""),
    Kind("wireguard_private_key", _T, "WG_PRIVATE_KEY", "WireGuard private key",
         _padded_b64(32), ""),
    # passwords: their own contexts (below), plus a few generic ones
    Kind("postgres_password", _P, "POSTGRES_PASSWORD", "Postgres password", _password(), ""),
    Kind("mysql_password", _P, "MYSQL_PASSWORD", "MySQL password", _password(), ""),
    Kind("mssql_password", _P, "MSSQL_SA_PASSWORD", "SQL Server password", _password(), ""),
    Kind("oracle_password", _P, "ORACLE_PASSWORD", "Oracle password", _password(), ""),
    Kind("redis_password", _P, "REDIS_PASSWORD", "Redis password", _password(20, 32), ""),
    Kind("rabbitmq_password", _P, "RABBITMQ_DEFAULT_PASS", "RabbitMQ password", _password(), ""),
    Kind("mongodb_password", _P, "MONGO_PASSWORD", "MongoDB password", _password(), ""),
    Kind("http_basic_password", _P, "BASIC_AUTH_PASSWORD", "basic auth password", _password(),
         ""),
    Kind("netrc_password", _P, "NETRC_PASSWORD", "netrc password", _password(), ""),
    Kind("registry_password", _P, "REGISTRY_PASSWORD", "registry password", _password(), ""),
    Kind("pip_index_password", _P, "PIP_INDEX_PASSWORD", "package index password", _password(),
         ""),
    Kind("smtp_password", _P, "SMTP_PASSWORD", "SMTP password", _password(), ""),
    Kind("ldap_bind_password", _P, "LDAP_BIND_PASSWORD", "LDAP bind password", _password(), ""),
    Kind("ssh_password", _P, "SSH_PASSWORD", "SSH password", _password(), ""),
    Kind("django_secret_key", _P, "DJANGO_SECRET_KEY", "Django secret key", _django, ""),
    Kind("azure_sas_signature", _P, "AZURE_SAS_SIG", "SAS signature", _padded_b64(32), ""),
    Kind("azure_servicebus_key", _P, "SERVICEBUS_KEY", "Service Bus key", _padded_b64(32), ""),
    # private keys
    Kind("rsa_private_key", _K, "RSA_PRIVATE_KEY", "RSA private key",
         _pem("RSA PRIVATE KEY", bytes.fromhex("308204a40201000282010100"), 900), ""),
    Kind("openssh_private_key", _K, "SSH_PRIVATE_KEY", "SSH private key",
         _pem("OPENSSH PRIVATE KEY", b"openssh-key-v1\x00\x00\x00\x00\x04none\x00\x00\x00\x04none",
              330, 70), ""),
    Kind("ec_private_key", _K, "EC_PRIVATE_KEY", "EC private key",
         _pem("EC PRIVATE KEY", bytes.fromhex("30770201010420"), 100), ""),
    Kind("pkcs8_private_key", _K, "PRIVATE_KEY", "private key",
         _pem("PRIVATE KEY", bytes.fromhex("308204bd020100300d06092a864886f70d0101010500"), 1000),
         ""),
)  # fmt: skip

KIND_BY_NAME: dict[str, Kind] = {k.name: k for k in KINDS}
TOKEN_KINDS: tuple[Kind, ...] = tuple(k for k in KINDS if k.family == _T)

# --------------------------------------------------------------------------------------------
# Ordinary words, hard negatives
# --------------------------------------------------------------------------------------------

PHRASES: tuple[str, ...] = (
    "nightly export to the warehouse",
    "staging cluster in the Frankfurt region",
    "rotate this after the quarterly demo",
    "owned by the platform team",
    "see the runbook before touching this",
    "used by the billing worker",
    "retry three times before paging anyone",
    "moved from the old host last spring",
    "only the deploy job reads this file",
    "keep this file out of version control",
    "ask Dana before changing the quota",
    "the integration tests need this",
    "the reporting dashboard refreshes every hour",
    "local development only",
    "copied from the shared team notes",
    "the webhook fires on every merge",
    "backups run at two in the morning",
    "timeouts are in milliseconds",
    "the cache warms up right after a deploy",
    "this replaced the legacy cron job",
    "customer invoices are generated on Mondays",
    "the mobile app talks to this service",
    "search indexing happens in the background",
    "we moved this from the wiki last week",
    "the support team uses this sandbox",
    "log retention is thirty days",
    "the import script reads from this bucket",
    "feature flags are evaluated at startup",
    "the old endpoint is deprecated",
    "load tests run against a copy of production",
    "the analytics pipeline starts at midnight",
    "translations are synced from the vendor",
    "the release train leaves on Thursday",
    "image thumbnails are cached for a day",
    "the queue drains within a few minutes",
    "error budgets are reviewed every sprint",
    "the marketing site is deployed separately",
    "payroll exports must stay in the EU",
    "the staging data is refreshed weekly",
    "password resets go through the help desk",
)

USERS = ("deploy", "ci-bot", "app", "svc_reports", "dana", "etl_writer", "grafana", "builder")
HOSTS = (
    "db-primary.internal",
    "pg.staging.acme.test",
    "mysql-01.prod.acme.test",
    "cache.acme.test",
    "mq.acme.test",
    "10.20.3.14",
    "warehouse.acme.test",
    "reports.acme.test",
)
DBS = ("orders", "billing", "analytics", "inventory", "app_production", "crm")
PLACEHOLDERS = (
    "<your-token>",
    "YOUR_API_KEY",
    "changeme",
    "xxxxxxxxxxxx",
    "${DB_PASSWORD}",
    "********",
    "REPLACE_ME",
    "<password>",
    "{{ api_token }}",
    "$(cat /run/secrets/api_token)",
)
# Placeholders that look like a scrubber's own mask: recorded with their key, not alone.
_MASK_LIKE = {"xxxxxxxxxxxx", "********", "<password>", "<your-token>"}
PLAIN_TEXTS = (
    "hello from the build bot",
    "release notes for version two",
    "this is not a secret at all",
    "weekly report is ready",
)


def _uuid(rng: random.Random) -> str:
    h = _r(rng, HEX, 32)
    return f"{h[:8]}-{h[8:12]}-4{h[13:16]}-{rng.choice('89ab')}{h[17:20]}-{h[20:]}"


def _timestamp(rng: random.Random) -> str:
    t = datetime(2024, 1, 1, tzinfo=UTC) + timedelta(seconds=rng.randint(0, 40_000_000))
    return t.strftime("%Y-%m-%dT%H:%M:%SZ")


# --------------------------------------------------------------------------------------------
# The generator
# --------------------------------------------------------------------------------------------


def _render_kv(fmt: str, key: str, value: str, rng: random.Random) -> str:
    if fmt == "dotenv":
        forms = [f"{key}={value}", f"{key} = {value}", f'{key}="{value}"', f"{key}='{value}'",
                 f"export {key}={value}"]  # fmt: skip
    elif fmt == "yaml":
        forms = [
            f"{key.lower()}: {value}",
            f'{key.lower()}: "{value}"',
            f"{key.lower()}: '{value}'",
        ]
    elif fmt == "toml":
        forms = [f'{key.lower()} = "{value}"', f'{key.lower()}="{value}"']
    elif fmt == "ini":
        forms = [f"{key.lower()} = {value}", f"{key.lower()}={value}", f"{key.lower()}: {value}"]
    else:
        raise ValueError(fmt)
    return rng.choice(forms)


def _comment(fmt: str, text: str) -> str:
    return ("; " if fmt == "ini" and len(text) % 2 else "# ") + text


class _Gen:
    def __init__(self, seed: int) -> None:
        self.rng = random.Random(seed)
        self.cases: list[Case] = []
        self.seen: list[tuple[Kind, str, str]] = []  # values kept for reuse in env dumps

    # -- pieces ----------------------------------------------------------------------------

    def secret(self, kind: Kind | str) -> tuple[str, str]:
        k = KIND_BY_NAME[kind] if isinstance(kind, str) else kind
        value, part = k.make(self.rng)
        assert part and part in value, (k.name, value, part)
        if k.family == _T:
            self.seen.append((k, value, part))
        return value, part

    def phrases(self, n: int = 2) -> list[str]:
        return self.rng.sample(PHRASES, n)

    def user(self) -> str:
        return self.rng.choice(USERS)

    def host(self) -> str:
        return self.rng.choice(HOSTS)

    def db(self) -> str:
        return self.rng.choice(DBS)

    def negative(self) -> tuple[str, str]:
        """A key and a value a scrubber must keep."""
        rng = self.rng
        pick = rng.randrange(12)
        if pick == 0:
            return "GIT_COMMIT", _r(rng, HEX, 40)
        if pick == 1:
            return "IMAGE_DIGEST", "sha256:" + _r(rng, HEX, 64)
        if pick == 2:
            return "REQUEST_ID", _uuid(rng)
        if pick == 3:
            return "APP_VERSION", f"{rng.randint(1, 9)}.{rng.randint(0, 30)}.{rng.randint(0, 12)}"
        if pick in (4, 5):
            key = rng.choice(["API_TOKEN", "STRIPE_KEY", "DB_PASSWORD", "SECRET_KEY", "AUTH_TOKEN"])
            return key, rng.choice(PLACEHOLDERS)
        if pick == 6:
            return "REPO_URL", rng.choice([
                "https://x-access-token:none@github.com/acme/widgets.git",
                "https://user:none@git.acme.test/platform/infra.git",
                "https://oauth2:none@gitlab.com/acme/mobile.git",
            ])  # fmt: skip
        if pick == 7:
            return "DOCS_URL", rng.choice([
                "https://docs.acme.test/guide/install#step-3",
                "https://pypi.org/simple/requests/",
                "https://registry.npmjs.org/left-pad",
                "https://github.com/acme/widgets/pull/1432",
            ])  # fmt: skip
        if pick == 8:
            return "GREETING_B64", _b64(rng.choice(PLAIN_TEXTS))
        if pick == 9:
            return "BUILD_TIME", _timestamp(rng)
        if pick == 10:
            return "LOG_DIR", rng.choice([
                "/var/log/acme/worker", "/home/dev/projects/acme/api/.venv/bin",
                "/etc/nginx/conf.d/default.conf", "C:\\Users\\dana\\AppData\\Local\\acme",
            ])  # fmt: skip
        return "METRICS_ADDR", rng.choice(["0.0.0.0:9464", "localhost:5432", "127.0.0.1:6379"])

    def negatives(self, fmt: str, n: int) -> tuple[list[str], list[str]]:
        """``n`` negative lines in a key-value format and the strings to record."""
        lines, record = [], []
        used: set[str] = set()
        while len(lines) < n:
            key, value = self.negative()
            if key in used or (fmt != "dotenv" and "\\" in value):
                continue
            used.add(key)
            line = _render_kv(fmt, key, value, self.rng)
            lines.append(line)
            record.append(line.strip() if value in _MASK_LIKE else value)
        return lines, record

    def prose_negative(self) -> tuple[str, str]:
        """A sentence holding something secret-looking but harmless, and that thing."""
        rng = self.rng
        pick = rng.randrange(8)
        if pick == 0:
            sha = _r(rng, HEX, 40)
            return f"The fix landed in commit {sha} on main.", sha
        if pick == 1:
            digest = "sha256:" + _r(rng, HEX, 64)
            return f"The image digest is {digest}.", digest
        if pick == 2:
            ident = _uuid(rng)
            return f"Support ticket {ident} has the logs.", ident
        if pick == 3:
            url = "https://x-access-token:none@github.com/acme/widgets.git"
            return f"The runner clones {url} without a token.", url
        if pick == 4:
            text = _b64(rng.choice(PLAIN_TEXTS))
            return f"The test fixture payload is {text} (plain text).", text
        if pick == 5:
            ph = rng.choice(["<your-token>", "YOUR_API_KEY", "${DB_PASSWORD}", "changeme"])
            return f"The template still says {ph} where the value goes.", ph
        if pick == 6:
            ts = _timestamp(rng)
            return f"It last ran at {ts}.", ts
        ver = f"v{rng.randint(1, 4)}.{rng.randint(0, 20)}.{rng.randint(0, 9)}"
        return f"We are on {ver} of the client library.", ver

    def add(
        self,
        text: str,
        plants: Sequence[Plant],
        negatives: Iterable[str],
        keep: Iterable[str],
        where: str,
        source: str = "",
    ) -> None:
        assert where in WHERES, where
        case = Case(text, tuple(plants), tuple(dict.fromkeys(negatives)),
                    tuple(dict.fromkeys(keep)), where, source)  # fmt: skip
        for p in case.plants:
            assert p.shown in text, (p.kind, p.context, p.shown[:40], text[:200])
        scrubbed = oracle_scrub(case.plants, text)
        for s in (*case.negatives, *case.keep_words):
            assert s in text, (s, text[:200])
            assert s in scrubbed, ("a negative overlaps a plant", s)
        self.cases.append(case)

    # -- where a text goes -------------------------------------------------------------------

    def file_where(self) -> str:
        return self.rng.choice(["tool_result", "tool_result", "tool_arguments", "user_turn"])

    def wrap_file(self, where: str, path: str, body: str, phrase: str) -> tuple[str, str]:
        """The text of a file as a session meets it, and the case's source."""
        if where == "user_turn":
            return f"Here is my {path}, {phrase}:\n\n{body}\n\nWhy does the job fail?", path
        if where == "tool_result":
            return body, f"cat {path}"
        return body, path


# -- generic contexts for one token --------------------------------------------------------------


def _ctx_dotenv(g: _Gen, k: Kind) -> None:
    fmt = g.rng.choice(["dotenv", "dotenv", "yaml", "toml", "ini"])
    value, part = g.secret(k)
    p1, p2 = g.phrases()
    neg_lines, neg = g.negatives(fmt, 2)
    line = _render_kv(fmt, k.env, value, g.rng)
    lines = [_comment(fmt, p1), *neg_lines[:1], line, *neg_lines[1:], _comment(fmt, p2)]
    if fmt == "toml":
        lines.insert(0, "[service]")
    elif fmt == "ini":
        lines.insert(0, "[default]")
    path = {"dotenv": ".env", "yaml": "config/settings.yaml", "toml": "config/app.toml",
            "ini": "setup.cfg"}[fmt]  # fmt: skip
    where = g.file_where()
    text, source = g.wrap_file(where, path, "\n".join(lines) + "\n", g.rng.choice(PHRASES))
    key = k.env if fmt == "dotenv" else k.env.lower()
    g.add(text, [Plant(k.name, fmt, value, part)], neg, [p1, p2, key], where, source)


def _ctx_json(g: _Gen, k: Kind) -> None:
    value, part = g.secret(k)
    p1 = g.phrases(1)[0]
    key = g.rng.choice([k.env.lower(), "apiKey", "token", "secret"])
    nkey, nvalue = g.negative()
    style = g.rng.randrange(4)
    if style == 3:  # a JavaScript object literal: keys without quotes
        q = g.rng.choice(["'", '"'])
        text = (
            f"module.exports = {{\n  service: {q}billing-sync{q},\n  {key}: {q}{value}{q},\n"
            f"  {nkey.lower()}: {q}{nvalue}{q},\n  note: {q}{p1}{q},\n}};\n"
        )
        path = "config/local.js"
    else:
        sep = [": ", ":", " : "][style]
        pairs = [("service", "billing-sync"), (key, value), (nkey.lower(), nvalue), ("note", p1)]
        items = [f'"{a}"{sep}"{b}"' for a, b in pairs]
        if g.rng.random() < 0.5:
            text = "{" + ", ".join(items) + "}"
        else:
            text = "{\n  " + ",\n  ".join(items) + "\n}\n"
        path = "config/credentials.json"
    where = g.file_where()
    text, source = g.wrap_file(where, path, text, g.rng.choice(PHRASES))
    g.add(text, [Plant(k.name, "json", value, part)], [nvalue], [p1, "billing-sync", key], where,
          source)  # fmt: skip


def _ctx_header(g: _Gen, k: Kind) -> None:
    value, part = g.secret(k)
    header = (k.header or "Authorization: Bearer {}").format(value)
    name = header.split(":", 1)[0]
    p1 = g.phrases(1)[0]
    host = g.rng.choice(["api.acme.test", "hooks.acme.test", "internal-gw.acme.test"])
    sentence, neg = g.prose_negative()
    if g.rng.random() < 0.5:
        text = (
            f"# {p1}\n# {sentence}\n"
            f"curl -sS -X POST https://{host}/v2/jobs -H '{header}' "
            "-H 'Content-Type: application/json' -d '{\"dry_run\": true}'"
        )
        where, source = "tool_arguments", "shell"
    else:
        rid = _uuid(g.rng)
        text = (
            f"> POST /v2/jobs HTTP/1.1\n> Host: {host}\n> User-Agent: curl/8.5.0\n> {header}\n"
            f"> Accept: */*\n>\n< HTTP/1.1 202 Accepted\n< X-Request-Id: {rid}\n<\n"
            f'{{"status": "queued", "note": "{p1}", "detail": "{sentence}"}}'
        )
        where, source = "tool_result", "curl -v"
        g.add(text, [Plant(k.name, "http_header", value, part)], [neg, rid], [p1, name, host],
              where, source)  # fmt: skip
        return
    g.add(text, [Plant(k.name, "http_header", value, part)], [neg], [p1, name, host], where,
          source)  # fmt: skip


def _ctx_command(g: _Gen, k: Kind) -> None:
    value, part = g.secret(k)
    p1 = g.phrases(1)[0]
    env = k.env
    flag = env.lower().replace("_", "-")
    forms = [
        f"export {env}={value}\n./scripts/sync.sh --dry-run",
        f"docker run --rm -e {env}={value} -e LOG_LEVEL=info acme/worker:2.3.1 sync",
        f"acme-cli deploy --{flag} {value} --region eu-central-1",
        f"acme-cli deploy --{flag}={value} --region eu-central-1",
        f"{env}={value} python -m acme.jobs.backfill --since 2024-05-01",
        f"kubectl create secret generic worker-env --from-literal={env}={value} -n jobs",
    ]
    command = g.rng.choice(forms)
    sentence, neg = g.prose_negative()
    where = g.rng.choice(["tool_arguments", "tool_arguments", "assistant_turn", "user_turn"])
    if where == "tool_arguments":
        text = f"# {p1}\n# {sentence}\n{command}"
    elif where == "assistant_turn":
        text = f"To test this ({p1}), run:\n\n```bash\n{command}\n```\n\n{sentence}"
    else:
        text = f"I ran this, {p1}:\n{command}\nbut it hangs. {sentence}"
    keep = [p1, "--region eu-central-1" if "--region" in command else env]
    g.add(text, [Plant(k.name, "command_line", value, part)], [neg], keep, where, "shell")


def _ctx_prose(g: _Gen, k: Kind) -> None:
    value, part = g.secret(k)
    p1 = g.phrases(1)[0]
    sentence, neg = g.prose_negative()
    where = g.rng.choice(["user_turn", "assistant_turn", "reasoning"])
    if where == "user_turn":
        text = (
            f"My {k.label} is {value} - can you check why the job says unauthorized? "
            f"Note that {p1}. {sentence}"
        )
        keep = ["can you check why the job says unauthorized", p1]
    elif where == "assistant_turn":
        text = (
            f"The config sets the {k.label} to `{value}`, which looks fine. Remember that "
            f"{p1}. {sentence}"
        )
        keep = ["which looks fine", p1]
    else:
        text = (
            f"The user pasted the {k.label} {value} earlier. I should not repeat it; "
            f"{p1}, so the failure is probably elsewhere. {sentence}"
        )
        keep = ["so the failure is probably elsewhere", p1]
    g.add(text, [Plant(k.name, "prose", value, part)], [neg], keep, where)


def _ctx_k8s_secret(g: _Gen, k: Kind) -> None:
    value, part = g.secret(k)
    p1 = g.phrases(1)[0]
    name = g.rng.choice(["billing-api", "worker-env", "sync-credentials", "gateway"])
    key = k.env
    ver = f"{g.rng.randint(1, 3)}.{g.rng.randint(0, 9)}.{g.rng.randint(0, 9)}"
    if g.rng.random() < 0.7:
        plant = Plant(k.name, "k8s_secret", value, part, "base64")
        body = f"data:\n  {key}: {plant.shown}\n"
    else:
        plant = Plant(k.name, "k8s_secret", value, part)
        body = f"stringData:\n  {key}: {value}\n"
    text = (
        f"apiVersion: v1\nkind: Secret\nmetadata:\n  name: {name}\n  namespace: payments\n"
        f'  annotations:\n    acme.test/note: "{p1}"\n    acme.test/chart-version: "{ver}"\n'
        f"type: Opaque\n{body}"
    )
    where = g.rng.choice(["tool_result", "tool_arguments"])
    source = f"kubectl get secret {name} -o yaml" if where == "tool_result" else "k8s/secret.yaml"
    g.add(text, [plant], [ver], [p1, name, key], where, source)


def _ctx_json_escaped(g: _Gen, k: Kind) -> None:
    value, part = g.secret(k)
    p1 = g.phrases(1)[0]
    path = g.rng.choice(["deploy/.env.production", "services/api/.env", "ops/vars.env"])
    content = f'# {p1}\n{k.env}="{value}"\nLOG_LEVEL=info\n'
    if g.rng.random() < 0.5:
        inner = json.dumps({"path": path, "content": content})
        text = json.dumps({"name": "write_file", "arguments": inner})
        encoding = "json2"
    else:
        text = json.dumps({"level": "info", "msg": "tool call", "arguments": json.dumps(
            {"command": f"echo '{k.env}={value}' >> {path}", "why": p1})})  # fmt: skip
        encoding = "json"
    plant = Plant(k.name, "json_escaped", value, part, encoding)
    where = g.rng.choice(["tool_arguments", "tool_result"])
    g.add(text, [plant], [path], [p1, k.env], where, "write_file")


def _ctx_base64_wrapped(g: _Gen, k: Kind) -> None:
    value, part = g.secret(k)
    p1 = g.phrases(1)[0]
    wrapped = f"{k.env}={value}\n"
    plant = Plant(k.name, "base64_wrapped", value, part, "base64", wrapped)
    neg_text = _b64(g.rng.choice(PLAIN_TEXTS))
    text = (
        f"# {p1}\necho '{plant.shown}' | base64 -d >> .env\n"
        f"echo '{neg_text}' | base64 -d  # just a greeting, not a secret"
    )
    g.add(text, [plant], [neg_text], [p1, "just a greeting, not a secret"], "tool_arguments",
          "shell")  # fmt: skip


def _ctx_url_param(g: _Gen, k: Kind) -> None:
    value, part = g.secret(k)
    p1 = g.phrases(1)[0]
    plant = Plant(k.name, "url_encoded", value, part, "url")
    ts = _timestamp(g.rng)
    param = g.rng.choice(["access_token", "api_key", "key", "token"])
    text = (
        f'10.1.4.22 - - [{ts}] "GET /v1/export?format=csv&{param}={plant.shown}&page=2 HTTP/1.1" '
        f'200 5123 "-" "python-requests/2.31.0"\n# {p1}'
    )
    g.add(text, [plant], [ts, "python-requests/2.31.0"], [p1, "/v1/export?format=csv"],
          "tool_result", "tail -n 1 /var/log/nginx/access.log")  # fmt: skip


_GENERIC: tuple[Callable[[_Gen, Kind], None], ...] = (
    _ctx_dotenv,
    _ctx_json,
    _ctx_header,
    _ctx_command,
    _ctx_prose,
    _ctx_k8s_secret,
    _ctx_json_escaped,
    _ctx_base64_wrapped,
    _ctx_url_param,
)


# -- passwords in their own contexts -------------------------------------------------------------


def _say(g: _Gen, snippet: str, p1: str) -> tuple[str, str, str, list[str]]:
    """A command line as a session meets it: text, where, source, negatives."""
    sentence, neg = g.prose_negative()
    where = g.rng.choice(
        ["tool_arguments", "tool_arguments", "tool_result", "assistant_turn", "user_turn",
         "reasoning"]
    )  # fmt: skip
    if where == "tool_arguments":
        return f"# {p1}\n# {sentence}\n{snippet}", where, "shell", [neg]
    if where == "tool_result":
        n = g.rng.randint(200, 900)
        text = f"  {n}  git status\n  {n + 1}  {snippet}\n  {n + 2}  ls -la  # {p1}\n# {sentence}"
        return text, where, "history | tail -n 3", [neg]
    if where == "assistant_turn":
        return f"Run this ({p1}):\n\n    {snippet}\n\n{sentence}", where, "", [neg]
    if where == "user_turn":
        text = f"About this: {p1}. I tried `{snippet}` and got a timeout. {sentence}"
        return text, where, "", [neg]
    return f"The user ran {snippet} earlier; {p1}. {sentence}", where, "", [neg]


def _command_case(
    g: _Gen, kind: str, context: str, build: Callable[[str, str, str, str], tuple[str, list[str]]]
) -> None:
    value, part = g.secret(kind)
    snippet, keep = build(g.user(), value, g.host(), g.db())
    p1 = g.phrases(1)[0]
    text, where, source, neg = _say(g, snippet, p1)
    g.add(text, [Plant(kind, context, value, part)], neg, [p1, *keep], where, source)


def _file_case(
    g: _Gen,
    kind: str,
    context: str,
    path: str,
    build: Callable[[str, str, str, str, str], tuple[str, list[str], list[str]]],
) -> None:
    value, part = g.secret(kind)
    p1 = g.phrases(1)[0]
    body, keep, neg = build(g.user(), value, g.host(), g.db(), p1)
    where = g.file_where()
    text, source = g.wrap_file(where, path, body, g.rng.choice(PHRASES))
    g.add(text, [Plant(kind, context, value, part)], neg, [p1, *keep], where, source)


def _postgres_password_cases(g: _Gen) -> None:
    c = _command_case
    f = _file_case
    c(
        g,
        "postgres_password",
        "command_line",
        lambda u, pw, h, db: (
            f"PGPASSWORD={pw} psql -h {h} -U {u} -d {db} -c 'select count(*) from orders'",
            [f"psql -h {h}", "select count(*) from orders"],
        ),
    )
    c(
        g,
        "postgres_password",
        "command_line",
        lambda u, pw, h, db: (
            f"docker run -d --name pg -e POSTGRES_PASSWORD={pw} -p 5432:5432 postgres:16.2",
            ["docker run -d --name pg", "postgres:16.2"],
        ),
    )
    c(
        g,
        "postgres_password",
        "url",
        lambda u, pw, h, db: (
            f"DATABASE_URL=postgres://{u}:{pw}@{h}:5432/{db}?sslmode=require",
            [f"{h}:5432/{db}?sslmode=require", "DATABASE_URL"],
        ),
    )
    f(
        g,
        "postgres_password",
        "conn_string",
        "src/main/resources/application.properties",
        lambda u, pw, h, db, p: (
            f"# {p}\nspring.datasource.url=jdbc:postgresql://{h}:5432/{db}?user={u}&password={pw}"
            f"&ssl=true\nspring.jpa.hibernate.ddl-auto=validate\nserver.port=8080\n",
            [f"jdbc:postgresql://{h}:5432/{db}", "spring.jpa.hibernate.ddl-auto=validate"],
            ["server.port=8080"],
        ),
    )
    f(
        g,
        "postgres_password",
        "yaml",
        "docker-compose.yml",
        lambda u, pw, h, db, p: (
            f"# {p}\nservices:\n  db:\n    image: postgres:16.2\n    environment:\n"
            f"      POSTGRES_USER: {u}\n      POSTGRES_PASSWORD: {pw}\n      POSTGRES_DB: {db}\n"
            "  api:\n    environment:\n      DB_PASSWORD: ${DB_PASSWORD}\n    ports:\n"
            '      - "8080:8080"\n',
            ["POSTGRES_PASSWORD", f"POSTGRES_DB: {db}"],
            ["${DB_PASSWORD}", "postgres:16.2"],
        ),
    )


def _mysql_password_cases(g: _Gen) -> None:
    c = _command_case
    f = _file_case
    c(
        g,
        "mysql_password",
        "command_line",
        lambda u, pw, h, db: (
            f"mysql -h {h} -u {u} -p{pw} {db} -e 'SHOW TABLES'",
            [f"mysql -h {h}", "SHOW TABLES"],
        ),
    )
    c(
        g,
        "mysql_password",
        "command_line",
        lambda u, pw, h, db: (
            f"mysqldump --user={u} --password={pw} --single-transaction {db} > /tmp/{db}.sql",
            ["--single-transaction", f"/tmp/{db}.sql"],
        ),
    )
    f(
        g,
        "mysql_password",
        "conn_string",
        "config/database.yml",
        lambda u, pw, h, db, p: (
            f"# {p}\nproduction:\n  url: jdbc:mysql://{h}:3306/{db}?user={u}&password={pw}"
            "&useSSL=true\n  pool: 10\n",
            [f"jdbc:mysql://{h}:3306/{db}", "pool: 10"],
            [],
        ),
    )
    f(
        g,
        "mysql_password",
        "ini",
        "~/.my.cnf",
        lambda u, pw, h, db, p: (
            f"# {p}\n[client]\nuser = {u}\npassword = {pw}\nhost = {h}\nport = 3306\n",
            ["[client]", f"host = {h}"],
            [],
        ),
    )
    c(
        g,
        "mysql_password",
        "url",
        lambda u, pw, h, db: (
            f'SQLALCHEMY_DATABASE_URI = "mysql+pymysql://{u}:{pw}@{h}:3306/{db}?charset=utf8mb4"',
            ["SQLALCHEMY_DATABASE_URI", f"{h}:3306/{db}?charset=utf8mb4"],
        ),
    )


def _sql_server_password_cases(g: _Gen) -> None:
    c = _command_case
    f = _file_case
    f(
        g,
        "mssql_password",
        "conn_string",
        "appsettings.Production.json",
        lambda u, pw, h, db, p: (
            '{\n  "ConnectionStrings": {\n    "Default": "Server=tcp:'
            + h
            + ",1433;Initial Catalog="
            + db
            + ";Persist Security Info=False;User ID="
            + u
            + ";Password="
            + pw
            + ';Encrypt=True;TrustServerCertificate=False;Connection Timeout=30;"\n  },\n'
            '  "Note": "' + p + '"\n}\n',
            ["Persist Security Info=False", "Connection Timeout=30"],
            [],
        ),
    )
    c(
        g,
        "mssql_password",
        "conn_string",
        lambda u, pw, h, db: (
            'conn = pyodbc.connect("Driver={ODBC Driver 18 for SQL Server};Server='
            + h
            + ";Database="
            + db
            + ";UID="
            + u
            + ";PWD="
            + pw
            + ';Encrypt=yes")',
            ["pyodbc.connect", "ODBC Driver 18 for SQL Server"],
        ),
    )
    c(
        g,
        "mssql_password",
        "command_line",
        lambda u, pw, h, db: (
            f'sqlcmd -S {h} -U sa -P {pw} -Q "SELECT name FROM sys.databases"',
            ["SELECT name FROM sys.databases"],
        ),
    )
    c(
        g,
        "mssql_password",
        "command_line",
        lambda u, pw, h, db: (
            f'docker run -e "ACCEPT_EULA=Y" -e "MSSQL_SA_PASSWORD={pw}" -p 1433:1433 '
            "mcr.microsoft.com/mssql/server:2022-latest",
            ["ACCEPT_EULA=Y", "mcr.microsoft.com/mssql/server:2022-latest"],
        ),
    )


def _oracle_password_cases(g: _Gen) -> None:
    c = _command_case
    c(
        g,
        "oracle_password",
        "command_line",
        lambda u, pw, h, db: (
            f"sqlplus {u}/{pw}@//{h}:1521/ORCLPDB1 @scripts/report.sql",
            ["sqlplus", "ORCLPDB1 @scripts/report.sql"],
        ),
    )
    c(
        g,
        "oracle_password",
        "conn_string",
        lambda u, pw, h, db: (
            f"jdbc:oracle:thin:{u}/{pw}@{h}:1521/ORCLPDB1",
            [f"{h}:1521/ORCLPDB1"],
        ),
    )


def _redis_password_cases(g: _Gen) -> None:
    c = _command_case
    f = _file_case
    c(
        g,
        "redis_password",
        "url",
        lambda u, pw, h, db: (f"REDIS_URL=redis://:{pw}@{h}:6379/0", [f"@{h}:6379/0", "REDIS_URL"]),
    )
    c(
        g,
        "redis_password",
        "url",
        lambda u, pw, h, db: (
            f"CELERY_RESULT_BACKEND = 'rediss://default:{pw}@{h}:6380/1'",
            ["CELERY_RESULT_BACKEND", f"{h}:6380/1"],
        ),
    )
    c(
        g,
        "redis_password",
        "command_line",
        lambda u, pw, h, db: (
            f"redis-cli -h {h} -p 6379 -a {pw} --no-auth-warning INFO replication",
            ["--no-auth-warning INFO replication"],
        ),
    )
    f(
        g,
        "redis_password",
        "config_file",
        "/etc/redis/redis.conf",
        lambda u, pw, h, db, p: (
            f"# {p}\nbind 127.0.0.1 -::1\nport 6379\nrequirepass {pw}\nmaxmemory 2gb\n"
            "maxmemory-policy allkeys-lru\n",
            ["requirepass", "maxmemory-policy allkeys-lru"],
            ["port 6379"],
        ),
    )


def _rabbitmq_password_cases(g: _Gen) -> None:
    c = _command_case
    f = _file_case
    c(
        g,
        "rabbitmq_password",
        "url",
        lambda u, pw, h, db: (
            f"CELERY_BROKER_URL=amqp://{u}:{pw}@{h}:5672/%2F",
            ["CELERY_BROKER_URL", ":5672/%2F"],
        ),
    )
    c(
        g,
        "rabbitmq_password",
        "url",
        lambda u, pw, h, db: (f'broker = "amqps://{u}:{pw}@{h}:5671/jobs"', [f"{h}:5671/jobs"]),
    )
    c(
        g,
        "rabbitmq_password",
        "command_line",
        lambda u, pw, h, db: (
            f"rabbitmqctl add_user {u} {pw} && rabbitmqctl set_user_tags {u} monitoring",
            ["rabbitmqctl add_user", "set_user_tags"],
        ),
    )
    f(
        g,
        "rabbitmq_password",
        "yaml",
        "compose.yaml",
        lambda u, pw, h, db, p: (
            f"# {p}\nservices:\n  mq:\n    image: rabbitmq:3.13-management\n    environment:\n"
            f"      RABBITMQ_DEFAULT_USER: {u}\n      RABBITMQ_DEFAULT_PASS: {pw}\n",
            ["RABBITMQ_DEFAULT_PASS", "image: rabbitmq:3.13-management"],
            ["rabbitmq:3.13-management"],
        ),
    )


def _mongodb_password_cases(g: _Gen) -> None:
    c = _command_case
    c(
        g,
        "mongodb_password",
        "url",
        lambda u, pw, h, db: (
            f"MONGO_URI=mongodb+srv://{u}:{pw}@cluster0.k3x9q.mongodb.net/{db}"
            "?retryWrites=true&w=majority",
            ["cluster0.k3x9q.mongodb.net", "retryWrites=true&w=majority"],
        ),
    )
    c(
        g,
        "mongodb_password",
        "url",
        lambda u, pw, h, db: (
            f"mongodb://{u}:{pw}@mongo-0.acme.test:27017,mongo-1.acme.test:27017/{db}"
            "?replicaSet=rs0&authSource=admin",
            ["mongo-1.acme.test:27017", "replicaSet=rs0&authSource=admin"],
        ),
    )
    c(
        g,
        "mongodb_password",
        "command_line",
        lambda u, pw, h, db: (
            f'mongosh "mongodb://{h}:27017/{db}" --username {u} --password {pw} '
            "--authenticationDatabase admin",
            ["--authenticationDatabase admin", f"mongodb://{h}:27017/{db}"],
        ),
    )


def _http_basic_auth_password_cases(g: _Gen) -> None:
    c = _command_case
    c(
        g,
        "http_basic_password",
        "command_line",
        lambda u, pw, h, db: (
            f"curl -fsS -u {u}:{pw} https://{h}/api/health",
            [f"https://{h}/api/health"],
        ),
    )
    c(
        g,
        "http_basic_password",
        "command_line",
        lambda u, pw, h, db: (
            f"wget --user={u} --password={pw} https://artifacts.acme.test/raw/builds/app-1.4.2.tgz",
            ["artifacts.acme.test/raw/builds/app-1.4.2.tgz"],
        ),
    )
    c(
        g,
        "http_basic_password",
        "url",
        lambda u, pw, h, db: (
            f"git clone https://{u}:{pw}@git.acme.test/platform/infra.git",
            ["git clone", "git.acme.test/platform/infra.git"],
        ),
    )
    for _ in range(2):
        value, part = g.secret("http_basic_password")
        user = g.user()
        plant = Plant("http_basic_password", "http_header", value, part, "base64",
                      f"{user}:{value}")  # fmt: skip
        p1 = g.phrases(1)[0]
        text = (
            f"GET /metrics HTTP/1.1\nHost: reports.acme.test\nAuthorization: Basic {plant.shown}\n"
            f"Accept: text/plain\n\n# {p1}"
        )
        g.add(text, [plant], ["reports.acme.test"], [p1, "Authorization: Basic", "GET /metrics"],
              g.rng.choice(["tool_result", "tool_arguments"]), "http_request")  # fmt: skip


def _registries_and_indexes_password_cases(g: _Gen) -> None:
    c = _command_case
    c(
        g,
        "registry_password",
        "command_line",
        lambda u, pw, h, db: (
            f"docker login --username {u} --password {pw} registry.acme.test",
            ["docker login", "registry.acme.test"],
        ),
    )
    c(
        g,
        "registry_password",
        "command_line",
        lambda u, pw, h, db: (
            f"echo '{pw}' | docker login ghcr.io -u {u} --password-stdin",
            ["--password-stdin", "ghcr.io"],
        ),
    )
    c(
        g,
        "pip_index_password",
        "url",
        lambda u, pw, h, db: (
            f"pip install --index-url https://{u}:{pw}@pypi.acme.test/simple/ acme-core==1.4.2",
            ["pypi.acme.test/simple/", "acme-core==1.4.2"],
        ),
    )
    c(
        g,
        "pip_index_password",
        "url",
        lambda u, pw, h, db: (
            f"PIP_EXTRA_INDEX_URL=https://{u}:{pw}@nexus.acme.test/repository/pypi/simple",
            ["PIP_EXTRA_INDEX_URL", "nexus.acme.test/repository/pypi/simple"],
        ),
    )


def _mail_and_directory_password_cases(g: _Gen) -> None:
    c = _command_case
    f = _file_case
    f(
        g,
        "smtp_password",
        "ini",
        "config/mail.ini",
        lambda u, pw, h, db, p: (
            f"; {p}\n[smtp]\nhost = smtp.acme.test\nport = 587\nuser = {u}@acme.test\n"
            f"password = {pw}\nstarttls = true\n",
            ["host = smtp.acme.test", "starttls = true"],
            ["port = 587"],
        ),
    )
    f(
        g,
        "smtp_password",
        "python_settings",
        "acme/settings/production.py",
        lambda u, pw, h, db, p: (
            f'# {p}\nEMAIL_HOST = "smtp.acme.test"\nEMAIL_PORT = 587\nEMAIL_HOST_USER = "{u}"\n'
            f'EMAIL_HOST_PASSWORD = "{pw}"\nEMAIL_USE_TLS = True\n',
            ["EMAIL_HOST_PASSWORD", "EMAIL_USE_TLS = True"],
            ["EMAIL_PORT = 587"],
        ),
    )
    c(
        g,
        "smtp_password",
        "url",
        lambda u, pw, h, db: (
            f"MAILER_DSN=smtps://{u}:{pw}@smtp.acme.test:465",
            ["MAILER_DSN", "smtp.acme.test:465"],
        ),
    )
    c(
        g,
        "ldap_bind_password",
        "command_line",
        lambda u, pw, h, db: (
            'ldapsearch -x -H ldaps://ldap.acme.test:636 -D "cn=admin,dc=acme,dc=test" '
            f'-w {pw} -b "dc=acme,dc=test" "(uid={u})"',
            ["ldaps://ldap.acme.test:636", "cn=admin,dc=acme,dc=test"],
        ),
    )
    f(
        g,
        "ldap_bind_password",
        "yaml",
        "config/ldap.yaml",
        lambda u, pw, h, db, p: (
            f"# {p}\nldap:\n  url: ldaps://ldap.acme.test:636\n"
            f"  bind_dn: cn=reader,dc=acme,dc=test\n  bind_password: {pw}\n"
            "  user_filter: (uid=%s)\n",
            ["bind_dn: cn=reader,dc=acme,dc=test", "user_filter"],
            ["ldaps://ldap.acme.test:636"],
        ),
    )


def _ssh_and_later_password_cases(g: _Gen) -> None:
    c = _command_case
    f = _file_case
    c(
        g,
        "ssh_password",
        "command_line",
        lambda u, pw, h, db: (
            f"sshpass -p '{pw}' ssh -o StrictHostKeyChecking=no {u}@{h} 'uptime'",
            ["StrictHostKeyChecking=no", "'uptime'"],
        ),
    )
    f(
        g,
        "ssh_password",
        "ini",
        "inventory/hosts.ini",
        lambda u, pw, h, db, p: (
            f"# {p}\n[web]\nweb1 ansible_host={h} ansible_user={u} ansible_ssh_pass={pw}\n"
            "web2 ansible_host=10.20.3.15 ansible_user=deploy\n",
            ["[web]", f"web1 ansible_host={h}"],
            ["ansible_host=10.20.3.15"],
        ),
    )
    f(
        g,
        "django_secret_key",
        "python_settings",
        "acme/settings/base.py",
        lambda u, pw, h, db, p: (
            f"# {p}\nDEBUG = False\nSECRET_KEY = '{pw}'\nALLOWED_HOSTS = ['app.acme.test']\n",
            ["SECRET_KEY", "ALLOWED_HOSTS"],
            ["app.acme.test"],
        ),
    )
    f(
        g,
        "django_secret_key",
        "dotenv",
        ".env",
        lambda u, pw, h, db, p: (
            f'# {p}\nDJANGO_SECRET_KEY="{pw}"\nDJANGO_DEBUG=false\n',
            ["DJANGO_SECRET_KEY", "DJANGO_DEBUG=false"],
            [],
        ),
    )
    _ctx_k8s_secret(g, KIND_BY_NAME["django_secret_key"])


def _azure_connection_strings_and_sas_urls_password_cases(g: _Gen) -> None:
    for _ in range(3):
        value, part = g.secret("azure_storage_account_key")
        acct = g.rng.choice(["acmelogs", "acmeexports", "acmebackups"])
        p1 = g.phrases(1)[0]
        text = (
            f'"AzureWebJobsStorage": "DefaultEndpointsProtocol=https;AccountName={acct};'
            f'AccountKey={value};EndpointSuffix=core.windows.net",\n"Note": "{p1}"'
        )
        g.add(text, [Plant("azure_storage_account_key", "conn_string", value, part)],
              ["EndpointSuffix=core.windows.net"], [p1, f"AccountName={acct}"],
              g.file_where(), "local.settings.json")  # fmt: skip
    for _ in range(3):
        value, part = g.secret("azure_servicebus_key")
        p1 = g.phrases(1)[0]
        text = (
            f"# {p1}\nSERVICEBUS_CONNECTION=Endpoint=sb://acme-bus.servicebus.windows.net/;"
            f"SharedAccessKeyName=RootManageSharedAccessKey;SharedAccessKey={value}\n"
        )
        g.add(text, [Plant("azure_servicebus_key", "conn_string", value, part)],
              ["sb://acme-bus.servicebus.windows.net/"], [p1, "SharedAccessKeyName"],
              g.file_where(), ".env")  # fmt: skip
    for _ in range(4):
        value, part = g.secret("azure_sas_signature")
        plant = Plant("azure_sas_signature", "url_encoded", value, part, "url")
        p1 = g.phrases(1)[0]
        st = _timestamp(g.rng)
        url = (
            "https://acmeexports.blob.core.windows.net/exports/report.csv?sv=2022-11-02&ss=b"
            f"&srt=o&sp=r&st={st}&spr=https&sig={plant.shown}"
        )
        text = f"Download it from {url} ({p1})."
        g.add(text, [plant], [st], [p1, "acmeexports.blob.core.windows.net/exports/report.csv"],
              g.rng.choice(["user_turn", "assistant_turn", "tool_result"]), "")  # fmt: skip


def _passwords_with_reserved_characters_written_url_encoded_password_cases(g: _Gen) -> None:
    for kind in ("postgres_password", "mysql_password", "redis_password", "mongodb_password",
                 "http_basic_password", "rabbitmq_password"):  # fmt: skip
        for _ in range(2):
            value = g.secret(kind)[0][:10]
            value += "".join(g.rng.choice(PW_SPECIAL) + g.rng.choice(ALNUM) for _ in range(4))
            plant = Plant(kind, "url_encoded", value, value, "url")
            p1 = g.phrases(1)[0]
            user, host = g.user(), g.host()
            if g.rng.random() < 0.6:
                scheme = {
                    "postgres_password": "postgresql",
                    "mysql_password": "mysql",
                    "redis_password": "redis",
                    "mongodb_password": "mongodb",
                    "http_basic_password": "https",
                    "rabbitmq_password": "amqp",
                }[kind]
                text = f'# {p1}\nurl = "{scheme}://{user}:{plant.shown}@{host}/main"\n'
                keep = [p1, f"@{host}/main"]
            else:
                text = (
                    f"POST /oauth/token HTTP/1.1\nHost: login.acme.test\nContent-Type: "
                    f"application/x-www-form-urlencoded\n\ngrant_type=password&username={user}"
                    f"&password={plant.shown}&client_id=web-console\n# {p1}"
                )
                keep = [p1, "grant_type=password", "client_id=web-console"]
            g.add(text, [plant], ["login.acme.test" if "login" in text else host], keep,
                  g.rng.choice(["tool_arguments", "tool_result"]), "")  # fmt: skip


def _password_cases(g: _Gen) -> None:
    """Passwords of databases, brokers and servers, one group of cases per kind."""
    _postgres_password_cases(g)
    _mysql_password_cases(g)
    _sql_server_password_cases(g)
    _oracle_password_cases(g)
    _redis_password_cases(g)
    _rabbitmq_password_cases(g)
    _mongodb_password_cases(g)
    _http_basic_auth_password_cases(g)
    _registries_and_indexes_password_cases(g)
    _mail_and_directory_password_cases(g)
    _ssh_and_later_password_cases(g)
    _azure_connection_strings_and_sas_urls_password_cases(g)
    _passwords_with_reserved_characters_written_url_encoded_password_cases(g)


# -- credential and config files ---------------------------------------------------------------


def _aws_credentials(g: _Gen) -> None:
    p1, p2 = g.phrases()
    plants: list[Plant] = []
    blocks = []
    for n, profile in enumerate(g.rng.sample(["default", "ci", "billing-prod", "sandbox"], 2)):
        kid, kid_part = g.secret("aws_access_key_id")
        sec, sec_part = g.secret("aws_secret_access_key")
        sp = g.rng.choice([" = ", "=", " =", "= "]) if n else " = "
        lines = [f"[{profile}]", f"aws_access_key_id{sp}{kid}", f"aws_secret_access_key{sp}{sec}"]
        plants += [Plant("aws_access_key_id", "aws_credentials", kid, kid_part),
                   Plant("aws_secret_access_key", "aws_credentials", sec, sec_part)]  # fmt: skip
        if n == 1 and g.rng.random() < 0.6:
            tok, tok_part = g.secret("aws_session_token")
            lines.append(f"aws_session_token{sp}{tok}")
            plants.append(Plant("aws_session_token", "aws_credentials", tok, tok_part))
        blocks.append("\n".join(lines))
    region = g.rng.choice(["eu-west-1", "us-east-2", "ap-southeast-2"])
    body = f"# {p1}\n" + "\n\n".join(blocks) + f"\nregion = {region}\n# {p2}\n"
    where = g.rng.choice(["tool_result", "tool_result", "user_turn", "tool_arguments"])
    text, source = g.wrap_file(where, "~/.aws/credentials", body, g.rng.choice(PHRASES))
    g.add(text, plants, [f"region = {region}"], [p1, p2, "aws_secret_access_key"], where, source)


def _netrc(g: _Gen) -> None:
    p1 = g.phrases(1)[0]
    pw, pw_part = g.secret("netrc_password")
    tok, tok_part = g.secret("github_classic_pat")
    user = g.user()
    if g.rng.random() < 0.5:
        body = (
            f"# {p1}\nmachine artifacts.acme.test\n  login {user}\n  password {pw}\n\n"
            f"machine api.github.com login {user} password {tok}\n"
            "machine ftp.acme.test login anonymous password changeme\n"
        )
    else:
        body = (
            f"# {p1}\nmachine artifacts.acme.test login {user} password {pw}\n"
            f"machine api.github.com\nlogin {user}\npassword {tok}\n"
            "machine ftp.acme.test login anonymous password changeme\n"
        )
    plants = [Plant("netrc_password", "netrc", pw, pw_part),
              Plant("github_classic_pat", "netrc", tok, tok_part)]  # fmt: skip
    where = g.file_where()
    text, source = g.wrap_file(where, "~/.netrc", body, g.rng.choice(PHRASES))
    g.add(text, plants, ["password changeme"], [p1, "machine artifacts.acme.test"], where, source)


def _pgpass(g: _Gen) -> None:
    p1 = g.phrases(1)[0]
    lines = [f"# {p1}", "# hostname:port:database:username:password"]
    plants = []
    for _ in range(g.rng.randint(1, 3)):
        pw, part = g.secret("postgres_password")
        host, db, user = g.host(), g.db(), g.user()
        lines.append(f"{host}:5432:{db}:{user}:{pw}")
        plants.append(Plant("postgres_password", "pgpass", pw, part))
    where = g.file_where()
    text, source = g.wrap_file(where, "~/.pgpass", "\n".join(lines) + "\n", g.rng.choice(PHRASES))
    g.add(text, plants, [], [p1, "hostname:port:database:username:password"], where, source)


def _npmrc(g: _Gen) -> None:
    p1 = g.phrases(1)[0]
    tok, part = g.secret("npm_token")
    gh, gh_part = g.secret("github_classic_pat")
    body = (
        f"; {p1}\n//registry.npmjs.org/:_authToken={tok}\n@acme:registry=https://npm.pkg.github.com\n"
        f"//npm.pkg.github.com/:_authToken={gh}\n"
        "//npm.acme.test/:_authToken=${NPM_INTERNAL_TOKEN}\nalways-auth=true\n"
    )
    plants = [Plant("npm_token", "npmrc", tok, part),
              Plant("github_classic_pat", "npmrc", gh, gh_part)]  # fmt: skip
    where = g.file_where()
    text, source = g.wrap_file(where, "~/.npmrc", body, g.rng.choice(PHRASES))
    g.add(text, plants, ["${NPM_INTERNAL_TOKEN}", "https://npm.pkg.github.com"],
          [p1, "always-auth=true", "//registry.npmjs.org/"], where, source)  # fmt: skip


def _pypirc(g: _Gen) -> None:
    p1 = g.phrases(1)[0]
    t1, part1 = g.secret("pypi_token")
    t2, part2 = g.secret("pypi_token")
    body = (
        f"# {p1}\n[distutils]\nindex-servers =\n    pypi\n    testpypi\n\n[pypi]\n"
        f"username = __token__\npassword = {t1}\n\n[testpypi]\n"
        f"repository = https://test.pypi.org/legacy/\nusername = __token__\npassword={t2}\n"
    )
    plants = [Plant("pypi_token", "pypirc", t1, part1), Plant("pypi_token", "pypirc", t2, part2)]
    where = g.file_where()
    text, source = g.wrap_file(where, "~/.pypirc", body, g.rng.choice(PHRASES))
    g.add(text, plants, ["https://test.pypi.org/legacy/"], [p1, "index-servers", "[testpypi]"],
          where, source)  # fmt: skip


def _pip_conf(g: _Gen) -> None:
    p1 = g.phrases(1)[0]
    if g.rng.random() < 0.5:
        pw, part = g.secret("pip_index_password")
        plant = Plant("pip_index_password", "pip_conf", pw, part)
        index = f"https://{g.user()}:{pw}@pypi.acme.test/simple"
    else:
        pw, part = g.secret("gitlab_pat")
        plant = Plant("gitlab_pat", "pip_conf", pw, part)
        index = f"https://__token__:{pw}@gitlab.acme.test/api/v4/projects/42/packages/pypi/simple"
    body = (
        f"# {p1}\n[global]\nindex-url = {index}\nextra-index-url = https://pypi.org/simple\n"
        "timeout = 60\n"
    )
    where = g.file_where()
    text, source = g.wrap_file(where, "~/.config/pip/pip.conf", body, g.rng.choice(PHRASES))
    g.add(text, [plant], ["https://pypi.org/simple", "timeout = 60"], [p1, "[global]"], where,
          source)  # fmt: skip


def _git_credentials(g: _Gen) -> None:
    gh, gh_part = g.secret(g.rng.choice(["github_classic_pat", "github_fine_grained_pat"]))
    gl, gl_part = g.secret("gitlab_pat")
    user = g.user()
    body = f"https://{user}:{gh}@github.com\nhttps://oauth2:{gl}@gitlab.com\n"
    plants = [Plant(_kind_of(gh), "git_credentials", gh, gh_part),
              Plant("gitlab_pat", "git_credentials", gl, gl_part)]  # fmt: skip
    p1 = g.phrases(1)[0]
    if g.rng.random() < 0.5:
        text, where, source = body, "tool_result", "cat ~/.git-credentials"
    else:
        text, where, source = f"My ~/.git-credentials ({p1}):\n{body}", "user_turn", ""
    g.add(text, plants, [], ["@github.com", "@gitlab.com"] + ([p1] if where == "user_turn" else []),
          where, source)  # fmt: skip


def _git_remote(g: _Gen) -> None:
    tok, part = g.secret(g.rng.choice(["github_app_token", "github_oauth_token"]))
    repo = g.rng.choice(["acme/api", "acme/widgets", "acme/infra"])
    text = (
        f"origin\thttps://x-access-token:{tok}@github.com/{repo}.git (fetch)\n"
        f"origin\thttps://x-access-token:{tok}@github.com/{repo}.git (push)\n"
        "upstream\thttps://x-access-token:none@github.com/acme/upstream.git (fetch)\n"
        "upstream\thttps://x-access-token:none@github.com/acme/upstream.git (push)\n"
    )
    plant = Plant(_kind_of(tok), "git_remote", tok, part)
    g.add(
        text,
        [plant],
        ["https://x-access-token:none@github.com/acme/upstream.git"],
        [f"@github.com/{repo}.git (fetch)", "upstream"],
        "tool_result",
        "git remote -v",
    )


def _kind_of(value: str) -> str:
    for prefix, kind in (
        ("github_pat_", "github_fine_grained_pat"),
        ("ghp_", "github_classic_pat"),
        ("gho_", "github_oauth_token"),
        ("ghs_", "github_app_token"),
    ):
        if value.startswith(prefix):
            return kind
    raise ValueError(value[:8])  # fmt: skip


def _kubeconfig(g: _Gen) -> None:
    p1 = g.phrases(1)[0]
    tok, tok_part = g.secret("kubernetes_sa_token")
    key, key_part = g.secret(g.rng.choice(["rsa_private_key", "ec_private_key"]))
    key_plant = Plant(_pem_kind(key), "kubeconfig", key, key_part, "base64")
    ca = _b64(f"-----BEGIN CERTIFICATE-----\n{_r(g.rng, B64, 64)}\n-----END CERTIFICATE-----\n")
    server = f"https://10.0.{g.rng.randint(0, 255)}.{g.rng.randint(1, 254)}:6443"
    body = (
        f"# {p1}\napiVersion: v1\nkind: Config\nclusters:\n- cluster:\n"
        f"    certificate-authority-data: {ca}\n    server: {server}\n  name: staging\n"
        "contexts:\n- context:\n    cluster: staging\n    user: ci-bot\n  name: staging\n"
        "current-context: staging\nusers:\n- name: ci-bot\n  user:\n"
        f"    token: {tok}\n- name: admin\n  user:\n    client-key-data: {key_plant.shown}\n"
    )
    plants = [Plant("kubernetes_sa_token", "kubeconfig", tok, tok_part), key_plant]
    where = g.rng.choice(["tool_result", "tool_result", "user_turn"])
    text, source = g.wrap_file(where, "~/.kube/config", body, g.rng.choice(PHRASES))
    g.add(text, plants, [server], [p1, "current-context: staging", "client-key-data"], where,
          source)  # fmt: skip


def _pem_kind(value: str) -> str:
    head = value.split("\n", 1)[0]
    for label, kind in (("RSA", "rsa_private_key"), ("OPENSSH", "openssh_private_key"),
                        ("EC", "ec_private_key")):  # fmt: skip
        if f"BEGIN {label} " in head:
            return kind
    return "pkcs8_private_key"


def _docker_config(g: _Gen) -> None:
    pw, part = g.secret("registry_password")
    user = g.user()
    a = Plant("registry_password", "docker_config", pw, part, "base64", f"{user}:{pw}")
    gh, gh_part = g.secret("github_classic_pat")
    b = Plant("github_classic_pat", "docker_config", gh, gh_part, "base64", f"{user}:{gh}")
    text = (
        '{\n  "auths": {\n    "registry.acme.test": {\n      "auth": "' + a.shown + '"\n    },\n'
        '    "ghcr.io": {\n      "auth": "' + b.shown + '"\n    }\n  },\n'
        '  "credsStore": "desktop",\n  "currentContext": "default"\n}\n'
    )
    g.add(
        text,
        [a, b],
        ['"credsStore": "desktop"'],
        ["registry.acme.test", "ghcr.io"],
        g.rng.choice(["tool_result", "tool_result", "user_turn"]),
        "cat ~/.docker/config.json",
    )


def _k8s_secret_multi(g: _Gen) -> None:
    p1 = g.phrases(1)[0]
    kinds = g.rng.sample(TOKEN_KINDS, 2)
    plants, lines = [], []
    for k in kinds:
        value, part = g.secret(k)
        plant = Plant(k.name, "k8s_secret", value, part, "base64")
        plants.append(plant)
        lines.append(f"  {k.env}: {plant.shown}")
    pw, pw_part = g.secret("postgres_password")
    plants.append(Plant("postgres_password", "k8s_secret", pw, pw_part, "base64"))
    lines.append(f"  DB_PASSWORD: {plants[-1].shown}")
    if g.rng.random() < 0.5:
        key, key_part = g.secret("pkcs8_private_key")
        plants.append(Plant("pkcs8_private_key", "k8s_secret", key, key_part, "base64"))
        lines.append(f"  tls.key: {plants[-1].shown}")
    text = (
        f"# {p1}\napiVersion: v1\nkind: Secret\nmetadata:\n  name: app-secrets\n"
        "  namespace: prod\ntype: Opaque\ndata:\n" + "\n".join(lines) + "\n"
    )
    g.add(
        text,
        plants,
        [],
        [p1, "app-secrets", "DB_PASSWORD"],
        g.rng.choice(["tool_result", "tool_arguments"]),
        "kubectl get secret app-secrets -o yaml",
    )


def _pem_cases(g: _Gen) -> None:
    for kind in ("rsa_private_key", "openssh_private_key", "ec_private_key", "pkcs8_private_key"):
        for style in range(2):
            key, part = g.secret(kind)
            p1 = g.phrases(1)[0]
            if style == 0:
                path = "~/.ssh/id_ed25519" if "OPENSSH" in key else "certs/server.key"
                g.add(key + "\n", [Plant(kind, "pem_file", key, part)], [], [], "tool_result",
                      f"cat {path}")  # fmt: skip
            else:
                text = f"Here is the deploy key ({p1}):\n\n```\n{key}\n```\n\nIs it right?"
                g.add(text, [Plant(kind, "prose", key, part)], [],
                      [p1, "Is it right?"], "user_turn")  # fmt: skip
    for _ in range(3):  # a GCP service account file: the PEM JSON-escaped
        key, part = g.secret("pkcs8_private_key")
        plant = Plant("pkcs8_private_key", "json_escaped", key, part, "json")
        kid = _r(g.rng, HEX, 40)
        email = f"exporter@acme-analytics-{g.rng.randint(100, 999)}.iam.gserviceaccount.com"
        text = (
            '{\n  "type": "service_account",\n  "project_id": "acme-analytics",\n'
            f'  "private_key_id": "{kid}",\n  "private_key": "{plant.shown}\\n",\n'
            f'  "client_email": "{email}",\n'
            '  "token_uri": "https://oauth2.googleapis.com/token"\n}\n'
        )
        g.add(text, [plant], ["https://oauth2.googleapis.com/token"],
              ['"type": "service_account"', email],
              g.rng.choice(["tool_result", "tool_arguments"]), "gcp-key.json")  # fmt: skip


_ENV_BASE = (
    ("SHELL", "/bin/bash"),
    ("HOME", "/home/runner"),
    ("LANG", "C.UTF-8"),
    ("PATH", "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"),
    ("RUNNER_TEMP", "/home/runner/work/_temp"),
    ("TZ", "Europe/Berlin"),
    ("PWD", "/home/runner/work/acme/acme"),
)


def _env_dump(g: _Gen) -> None:
    rng = g.rng
    pairs: list[tuple[str, str]] = list(rng.sample(_ENV_BASE, 4))
    sha = _r(rng, HEX, 40)
    pairs.append(("GITHUB_SHA", sha))
    run_id = _uuid(rng)
    pairs.append(("CI_RUN_ID", run_id))
    plants = []
    for _ in range(rng.randint(3, 6)):
        if g.seen and rng.random() < 0.35:
            k, value, part = rng.choice(g.seen)  # the same value met again elsewhere
        else:
            k = rng.choice(TOKEN_KINDS)
            value, part = g.secret(k)
        if any(name == k.env for name, _ in pairs):
            continue
        pairs.append((k.env, value))
        plants.append(Plant(k.name, "env_dump", value, part))
    if rng.random() < 0.5:
        pw, part = g.secret("postgres_password")
        pairs.append(("PGPASSWORD", pw))
        plants.append(Plant("postgres_password", "env_dump", pw, part))
    pairs.append(("DB_PASSWORD_FILE", "/run/secrets/db_password"))
    rng.shuffle(pairs)
    style = rng.randrange(3)
    if style == 0:
        text, source = "\n".join(f"{a}={b}" for a, b in pairs), "env"
    elif style == 1:
        text, source = "\n".join(f'declare -x {a}="{b}"' for a, b in pairs), "export -p"
    else:
        items = ",\n".join(f'                "{a}={b}"' for a, b in pairs)
        text = f'[\n    {{\n        "Config": {{\n            "Env": [\n{items}\n            ]\n'
        text += "        }\n    }\n]"
        source = "docker inspect worker"
    g.add(text, plants, [sha, run_id, "/run/secrets/db_password"], ["DB_PASSWORD_FILE"],
          "env_dump", source)  # fmt: skip


# --------------------------------------------------------------------------------------------
# The corpus
# --------------------------------------------------------------------------------------------


def corpus(seed: int = 7) -> list[Case]:
    """The cases for ``seed``: the same seed always gives the same list."""
    g = _Gen(seed)
    for k in TOKEN_KINDS:
        # a kind that never goes in a header is not put in one
        fitting = [ctx for ctx in _GENERIC if k.header or ctx is not _ctx_header]
        for ctx in g.rng.sample(fitting, 4):
            ctx(g, k)
    for name in ("session_cookie", "opaque_api_key", "gitlab_pat", "openai_project_key"):
        _ctx_header(g, KIND_BY_NAME[name])  # Cookie:, X-Api-Key:, PRIVATE-TOKEN:, Bearer
    _password_cases(g)
    for builder, times in (
        (_aws_credentials, 6),
        (_netrc, 4),
        (_pgpass, 4),
        (_npmrc, 4),
        (_pypirc, 3),
        (_pip_conf, 4),
        (_git_credentials, 4),
        (_git_remote, 3),
        (_kubeconfig, 4),
        (_docker_config, 4),
        (_k8s_secret_multi, 5),
    ):
        for _ in range(times):
            builder(g)
    _pem_cases(g)
    for _ in range(12):
        _env_dump(g)
    return g.cases


def oracle_scrub(plants: Iterable[Plant], text: str, mask: str = "[REDACTED]") -> str:
    """Replace every form of the given plants: a scrubber that knows the answers."""
    forms = {f for p in plants for f in (p.shown, p.value, *p.leak_forms)}
    for form in sorted(forms, key=len, reverse=True):
        text = text.replace(form, mask)
    return text


# --------------------------------------------------------------------------------------------
# Sessions as events of the project's contract
# --------------------------------------------------------------------------------------------

SYSTEM_PROMPT = "You are a coding agent working in the acme monorepo. Be careful with credentials."
_START = datetime(2025, 3, 4, 9, 0, tzinfo=UTC)
_FILE_CONTEXTS = {"dotenv", "yaml", "toml", "ini", "json", "conn_string", "config_file",
                  "python_settings", "k8s_secret", "aws_credentials", "kubeconfig"}  # fmt: skip


def _tool_call_for(case: Case, n: int) -> tuple[str, dict[str, object], str]:
    """The tool, its arguments and its result for a tool case."""
    if case.where in ("tool_result", "env_dump"):
        command = case.source or "cat notes.txt"
        return "shell", {"command": command}, case.text
    contexts = {p.context for p in case.plants}
    if ("/" in case.source and " " not in case.source) or contexts & _FILE_CONTEXTS:
        args: dict[str, object] = {"path": case.source or "notes.txt", "content": case.text}
        tool = "write_file"
    elif case.source == "http_request":
        tool, args = "http_request", {"raw": case.text}
    else:
        tool, args = "shell", {"command": case.text}
    if n % 3 == 2:  # some publishers send the arguments once more as a JSON string
        args = {"tool_input": json.dumps(args)}
    return tool, args, "ok: done"


def as_events(cases: Sequence[Case], sessions: int | None = None) -> list[dict[str, object]]:
    """Event bodies (``llm.chat.persist`` and ``llm.tool_call``) carrying every case's text,
    grouped into sessions, each chat event with the whole conversation so far."""
    if not cases:
        return []
    n_sessions = sessions or max(1, min(36, len(cases) // 6))
    groups: list[list[Case]] = [[] for _ in range(n_sessions)]
    for i, case in enumerate(cases):
        groups[i % n_sessions].append(case)
    events: list[dict[str, object]] = []
    for s, group in enumerate(groups):
        sid = f"corpus-session-{s:02d}"
        clock = _START + timedelta(hours=s)
        messages: list[dict[str, str]] = [{"role": "system", "content": SYSTEM_PROMPT}]
        for n, case in enumerate(group):
            clock += timedelta(seconds=37)
            event_id = f"{sid}-e{n:03d}"
            base = {
                "event_id": event_id,
                "correlation_id": sid,
                "occurred_at": clock.isoformat().replace("+00:00", "Z"),
            }
            if case.where in ("tool_arguments", "tool_result", "env_dump"):
                tool, args, result = _tool_call_for(case, n)
                payload: dict[str, object] = {
                    "tool": tool,
                    "arguments": args,
                    "result": result,
                    "status": "ok",
                    "duration_ms": 40 + (n * 97) % 900,
                }
                events.append({**base, "subject": "llm.tool_call", "payload": payload})
                continue
            if case.where == "user_turn":
                messages += [
                    {"role": "user", "content": case.text},
                    {"role": "assistant", "content": f"Looking into it (step {n + 1})."},
                ]
            elif case.where == "assistant_turn":
                messages += [
                    {"role": "user", "content": f"What did you find in step {n + 1}?"},
                    {"role": "assistant", "content": case.text},
                ]
            else:  # reasoning
                messages += [
                    {"role": "user", "content": f"Go ahead with step {n + 1}."},
                    {
                        "role": "assistant",
                        "content": f"Done with step {n + 1}, moving on.",
                        "reasoning_content": case.text,
                    },
                ]
            payload = {
                "messages": [dict(m) for m in messages],
                "model": "qwen2.5-coder-7b-instruct",
                "slot": "slot-a",
            }
            events.append({**base, "subject": "llm.chat.persist", "payload": payload})
    return events


# --------------------------------------------------------------------------------------------
# Evaluation
# --------------------------------------------------------------------------------------------


_GRAMS_UP_TO = 4_000_000  # characters of text for which a set of its blocks is built


class _Text:
    """A text to search, with the set of its ``FRAGMENT // 2``-character blocks when it is
    not too long, so that most blocks of a random part are ruled out without a scan."""

    def __init__(self, text: str) -> None:
        self.text = text
        b = FRAGMENT // 2
        self.grams: set[str] | None = None
        if len(text) <= _GRAMS_UP_TO:
            self.grams = {text[i : i + b] for i in range(len(text) - b + 1)}


def _fragment_at(haystack: _Text, source: str, n: int = FRAGMENT) -> int:
    """Where the text holds ``n`` consecutive characters of ``source`` (all of it when
    shorter), or -1. Any common run of ``n`` holds an aligned block of ``n // 2``, so only
    those blocks are searched, then each hit is extended both ways."""
    text = haystack.text
    if len(source) < n:
        return text.find(source) if source else -1
    block = n // 2
    for k in range(0, len(source) - block + 1, block):
        piece = source[k : k + block]
        if haystack.grams is not None and piece not in haystack.grams:
            continue
        at = text.find(piece)
        while at != -1:
            left = 0
            while k - left > 0 and at - left > 0 and source[k - left - 1] == text[at - left - 1]:
                left += 1
            right = 0
            while (
                k + block + right < len(source)
                and at + block + right < len(text)
                and source[k + block + right] == text[at + block + right]
            ):
                right += 1
            if left + block + right >= n:
                return at - left
            at = text.find(piece, at + 1)
    return -1


def _variants(s: str, levels: int) -> list[str]:
    out = [s]
    for _ in range(levels):
        out.append(_json_escape(out[-1]))
    return list(dict.fromkeys(out))


@dataclass
class Tally:
    plants: int = 0
    not_leaked: int = 0
    fragment_free: int = 0

    def add(self, whole: bool, fragment: bool) -> None:
        self.plants += 1
        self.not_leaked += not whole
        self.fragment_free += not (whole or fragment)

    @property
    def recall(self) -> float:
        return self.not_leaked / self.plants if self.plants else 1.0

    @property
    def fragment_free_share(self) -> float:
        return self.fragment_free / self.plants if self.plants else 1.0


@dataclass(frozen=True)
class Leak:
    kind: str
    context: str
    where: str
    whole: bool
    excerpt: str


@dataclass
class Report:
    cases: int = 0
    total: Tally = field(default_factory=Tally)
    by_kind: dict[str, Tally] = field(default_factory=dict)
    by_context: dict[str, Tally] = field(default_factory=dict)
    by_where: dict[str, Tally] = field(default_factory=dict)
    negatives: int = 0
    negatives_kept: int = 0
    keep_words: int = 0
    keep_words_kept: int = 0
    leaks: list[Leak] = field(default_factory=list)
    lost_negatives: list[str] = field(default_factory=list)
    lost_keep_words: list[str] = field(default_factory=list)

    @property
    def recall(self) -> float:
        return self.total.recall

    @property
    def fragment_free_share(self) -> float:
        return self.total.fragment_free_share

    @property
    def negatives_kept_share(self) -> float:
        return self.negatives_kept / self.negatives if self.negatives else 1.0

    @property
    def keep_words_kept_share(self) -> float:
        return self.keep_words_kept / self.keep_words if self.keep_words else 1.0

    def _count(self, plant: Plant, where: str, whole: bool, fragment: bool) -> None:
        self.total.add(whole, fragment)
        self.by_kind.setdefault(plant.kind, Tally()).add(whole, fragment)
        self.by_context.setdefault(plant.context, Tally()).add(whole, fragment)
        self.by_where.setdefault(where, Tally()).add(whole, fragment)

    def format(self, leaks: int = 25) -> str:
        """A readable table: totals, then per kind, per context and per session location."""
        out = [
            f"cases {self.cases}, planted values {self.total.plants}",
            f"values removed whole (recall)  {self.recall:7.1%}",
            f"values with no fragment left   {self.fragment_free_share:7.1%}",
            f"hard negatives kept            {self.negatives_kept_share:7.1%}"
            f"  ({self.negatives_kept}/{self.negatives})",
            f"ordinary words kept            {self.keep_words_kept_share:7.1%}"
            f"  ({self.keep_words_kept}/{self.keep_words})",
        ]
        for title, table in (
            ("kind", self.by_kind),
            ("context", self.by_context),
            ("where", self.by_where),
        ):
            out += ["", f"{title:<32} {'values':>6} {'recall':>8} {'no-frag':>8}"]
            for name, t in sorted(table.items(), key=lambda kv: (kv[1].recall, kv[0])):
                out.append(
                    f"{name:<32} {t.plants:>6} {t.recall:>8.1%} {t.fragment_free_share:>8.1%}"
                )
        if self.leaks:
            out += ["", f"leaks (first {min(leaks, len(self.leaks))} of {len(self.leaks)}):"]
            for leak in self.leaks[:leaks]:
                how = "whole" if leak.whole else "fragment"
                out.append(f"  {leak.kind} / {leak.context} / {leak.where} ({how}): {leak.excerpt}")
        if self.lost_negatives:
            out += ["", "hard negatives lost: " + ", ".join(self.lost_negatives[:15])]
        if self.lost_keep_words:
            out += ["", "ordinary words lost: " + ", ".join(self.lost_keep_words[:15])]
        return "\n".join(out)


def _excerpt(text: str, at: int, width: int = 40) -> str:
    return text[max(0, at - width) : at + width].replace("\n", "\\n")


def _check_plant(plant: Plant, haystack: _Text, levels: int) -> tuple[bool, bool, int]:
    """(leaked whole, a fragment left, where) for one plant in the text."""
    text = haystack.text
    for form in plant.leak_forms:
        for variant in _variants(form, levels):
            at = text.find(variant)
            if at != -1:
                return True, True, at
    for source in plant.fragment_sources:
        for variant in _variants(source, levels):
            at = _fragment_at(haystack, variant)
            if at != -1:
                return False, True, at
    return False, False, -1


def _present(s: str, text: str, levels: int) -> bool:
    return any(v in text for v in _variants(s, levels))


def evaluate_texts(cases: Sequence[Case], scrubbed_texts: Sequence[str]) -> Report:
    """Score scrubbed texts, one per case in the same order."""
    if len(cases) != len(scrubbed_texts):
        raise ValueError(f"{len(cases)} cases but {len(scrubbed_texts)} texts")
    report = Report(cases=len(cases))
    for case, text in zip(cases, scrubbed_texts, strict=True):
        haystack = _Text(text)
        for plant in case.plants:
            whole, fragment, at = _check_plant(plant, haystack, 0)
            report._count(plant, case.where, whole, fragment)
            if fragment:
                report.leaks.append(
                    Leak(plant.kind, plant.context, case.where, whole, _excerpt(text, at))
                )
        for neg in case.negatives:
            report.negatives += 1
            if neg in text:
                report.negatives_kept += 1
            else:
                report.lost_negatives.append(neg)
        for word in case.keep_words:
            report.keep_words += 1
            if word in text:
                report.keep_words_kept += 1
            else:
                report.lost_keep_words.append(word)
    return report


def evaluate(cases: Sequence[Case], scrub: Callable[[str], str]) -> Report:
    """Scrub each case's text with ``scrub`` and score the results."""
    return evaluate_texts(cases, [scrub(case.text) for case in cases])


def evaluate_blob(cases: Sequence[Case], exported_text: str, escape_levels: int = 3) -> Report:
    """Score one exported text (e.g. a JSONL export of :func:`as_events`' sessions) against
    every case: each plant is looked for anywhere in it, also JSON-escaped up to
    ``escape_levels`` times; negatives and ordinary words count as kept when present.

    A value met in several cases is one string, so it leaks in all of them or in none."""
    report = Report(cases=len(cases))
    haystack = _Text(exported_text)
    for case in cases:
        for plant in case.plants:
            whole, fragment, at = _check_plant(plant, haystack, escape_levels)
            report._count(plant, case.where, whole, fragment)
            if fragment:
                excerpt = _excerpt(exported_text, at)
                report.leaks.append(Leak(plant.kind, plant.context, case.where, whole, excerpt))
        for neg in case.negatives:
            report.negatives += 1
            if _present(neg, exported_text, escape_levels):
                report.negatives_kept += 1
            else:
                report.lost_negatives.append(neg)
        for word in case.keep_words:
            report.keep_words += 1
            if _present(word, exported_text, escape_levels):
                report.keep_words_kept += 1
            else:
                report.lost_keep_words.append(word)
    return report


def summary(cases: Sequence[Case]) -> dict[str, object]:
    """Counts of the corpus: kinds, values, negatives, contexts, locations."""
    plants = [p for c in cases for p in c.plants]
    return {
        "cases": len(cases),
        "values": len(plants),
        "distinct_values": len({p.value for p in plants}),
        "kinds": sorted({p.kind for p in plants}),
        "contexts": sorted({p.context for p in plants}),
        "encodings": sorted({p.encoding for p in plants}),
        "wheres": sorted({c.where for c in cases}),
        "negatives": sum(len(c.negatives) for c in cases),
        "keep_words": sum(len(c.keep_words) for c in cases),
    }


__all__ = [
    "KINDS",
    "WHERES",
    "Case",
    "Kind",
    "Leak",
    "Plant",
    "Report",
    "Tally",
    "as_events",
    "corpus",
    "encode",
    "evaluate",
    "evaluate_blob",
    "evaluate_texts",
    "oracle_scrub",
    "summary",
]

"""The built-in secret patterns: provider tokens by their fixed prefixes and shapes.

The shapes follow the public rule set of gitleaks (github.com/gitleaks/gitleaks,
``config/gitleaks.toml``, release v8.30.1), read as a reference for which prefixes and
lengths each provider issues; the expressions here are written for this project. They are
looser than gitleaks' in length (a token cut or padded by a tokenizer should still go) and
stricter in context: a rule replaces only its ``secret`` group and every match is checked
against :func:`~model_foundry.lib.hygiene.placeholders.is_placeholder`, so ``sk-xxxx`` and
``ghp_<your-token>`` stay as written.
"""

from __future__ import annotations

import base64
import binascii
import re
from collections.abc import Callable
from dataclasses import dataclass

from model_foundry.lib.hygiene.placeholders import is_placeholder

# A token starts where no token character precedes it and ends where none follows.
_B = r"(?<![A-Za-z0-9_])"
_E = r"(?![A-Za-z0-9_])"


@dataclass(frozen=True)
class Rule:
    """One pattern: what its match is called (``kind``, the marker's type), the expression
    and a check that the captured ``secret`` group is real (default: not a placeholder).

    ``keywords`` are literal strings every match contains (in lower case when the pattern
    ignores case): a text holding none of them cannot match, so the rule skips it
    (gitleaks' ``keywords`` idea; ``secrets.KeywordIndex`` finds them in one scan). Empty:
    the rule always runs. ``hint``, for a rule with no literal keyword, is a pattern every
    match contains that opens with a literal (``re`` jumps to a literal and so searches
    far faster than a pattern opening with a lookbehind): no hint found, no match
    possible, and the rule skips the text."""

    kind: str
    pattern: re.Pattern[str]
    accept: Callable[[str], bool] = lambda value: not is_placeholder(value)
    keywords: tuple[str, ...] = ()
    hint: re.Pattern[str] | None = None

    @property
    def ignores_case(self) -> bool:
        return bool(self.pattern.flags & re.IGNORECASE)


def _rule(
    kind: str,
    expression: str,
    flags: int = 0,
    keywords: tuple[str, ...] = (),
    hint: str | None = None,
) -> Rule:
    return Rule(
        kind,
        re.compile(expression, flags),
        keywords=keywords,
        hint=re.compile(hint) if hint else None,
    )


# The literal characters a prefix expression opens with (``sk-ant-`` of ``sk-ant-(?:api)``).
_LITERAL_HEAD = re.compile(r"[A-Za-z0-9_-]+")


def _literal_head(prefix: str) -> tuple[str, ...]:
    head = _LITERAL_HEAD.match(prefix)
    return (head.group(0),) if head else ()


def _after_prefix(prefix: re.Pattern[str]) -> Callable[[str], bool]:
    """Accept a token whose part after its fixed prefix is not a placeholder."""

    def accept(value: str) -> bool:
        body = prefix.sub("", value, count=1)
        return not is_placeholder(body) and not is_placeholder(value)

    return accept


def _prefixed(
    kind: str,
    prefix: str,
    body: str,
    flags: int = 0,
    keywords: tuple[str, ...] | None = None,
    hint: str | None = None,
) -> Rule:
    """A token of a fixed ``prefix``; its keywords are the prefix's literal head unless given
    (a prefix that opens with an alternation names its own)."""
    expression = f"{_B}(?P<secret>{prefix}{body}){_E}"
    return Rule(
        kind,
        re.compile(expression, flags),
        _after_prefix(re.compile(prefix)),
        _literal_head(prefix) if keywords is None else keywords,
        re.compile(hint) if hint else None,
    )


_ANON_ROLE = re.compile(rb'"role"\s*:\s*"anon"')


def published_jwt(value: str) -> bool:
    """The example token of jwt.io's debugger and of most JWT tutorials (its payload's
    subject ``1234567890`` and name ``John Doe``) or of RFC 7519 (issuer ``joe``), or a
    key for anyone (role ``anon``): published, so no secret."""
    payload = value.split(".")[1]
    try:
        decoded = base64.urlsafe_b64decode(payload + "=" * (-len(payload) % 4))
    except (binascii.Error, ValueError):
        return False
    jwt_io = b'"sub":"1234567890"' in decoded and b'"name":"John Doe"' in decoded
    # Supabase's anon key, public by design (row-level security guards the data): its role.
    anon = _ANON_ROLE.search(decoded) is not None
    return jwt_io or anon or b'"iss":"joe"' in decoded  # RFC 7519's own example (3.1)


def _decodes_to_user_and_password(value: str) -> bool:
    """``Basic`` credentials are base64 of ``user:password``; prose after "Basic" is not."""
    try:
        decoded = base64.b64decode(value + "=" * (-len(value) % 4), validate=True)
    except (binascii.Error, ValueError):
        return False
    return b":" in decoded and not is_placeholder(decoded.decode("latin-1"))


# Order matters: a block or a URL is taken before the tokens inside it, a specific prefix
# (sk-ant-) before a general one (sk-).
PRIVATE_KEY = _rule(
    "private_key",
    r"(?P<secret>-----BEGIN[ A-Z0-9]{0,40}PRIVATE KEY(?: BLOCK)?-----"
    r"(?:[\s\S]*?-----END[ A-Z0-9]{0,40}PRIVATE KEY(?: BLOCK)?-----|(?:\\[nr]|[\s\S])*?(?=\"|$)))",
    keywords=("PRIVATE KEY",),
)

# The user name may be empty (``redis://:password@host``, as Redis documents it). The password
# runs to the last ``@`` before a host within the authority, so one holding a raw ``@`` or
# ``:`` goes whole; ``/``, ``?`` and ``#`` end the authority, as in RFC 3986.
URL_PASSWORD = Rule(
    "url_password",
    re.compile(
        r"(?i)\b[a-z][a-z0-9+.-]{1,20}://[^\s:/?#@\"'<>]{0,128}:(?P<secret>[^\s/?#\"'<>]{1,256})@"
        r"(?=[\w\[.-])"
    ),
    keywords=("://",),
    hint=re.compile(r"@(?=[\w\[.-])"),  # the host after the password
)

# Go's MySQL driver names its server without a scheme (``user:pw@tcp(host:3306)/db``, and
# ``@unix(/path)``), so the URL rule never sees it.
DSN_PASSWORD = _rule(
    "url_password",
    r"(?<![\w.:/@-])[\w.-]{1,64}:(?P<secret>[^\s\"'`<>]{1,256}?)@(?:tcp6?|udp|unix)\(",
    keywords=("@tcp", "@unix", "@udp"),
)


def _long_mixed(value: str) -> bool:
    """A random token: long, letters and digits (no name, word or version is)."""
    return (
        len(value) >= 16
        and not is_placeholder(value)
        and bool(re.search(r"[0-9]", value))
        and bool(re.search(r"[A-Za-z]", value))
        and not re.fullmatch(r"[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}", value)
    )


# Words joined by ``-``/``_`` and then a hex digest: a cache key or a build's id
# (``Linux-pnpm-store-<sha256>``, ``v1-deps-<sha1>``), named so a person can read it.
_NAMED_DIGEST = re.compile(r"(?:[A-Za-z][A-Za-z0-9.]*[-_]){2,}[0-9a-f]{16,}")


# Values made to be public: a publishable key (Stripe's and Clerk's ``pk_live_``/``pk_test_``,
# Mapbox's ``pk.``, PostHog's ``phc_``) and an OAuth client id that Google's desktop and
# mobile apps ship (``<digits>-<id>.apps.googleusercontent.com``); their secret siblings
# (``sk_``, ``sk.``, the client secret) go.
PUBLIC_TOKEN = re.compile(
    r"pk_(?:live|test)_\w+|phc_\w+|pk\.eyJ[\w-]+\.[\w-]+"
    r"|\d{6,}-[a-z0-9]{16,}\.apps\.googleusercontent\.com"
)


# An OpenPGP key's id: 16 hex digits in one case (``gpg: key 3AA5C34371567BD2:``).
PGP_KEY_ID = re.compile(r"(?:[0-9A-F]{16}|[0-9a-f]{16}):?")


def _prose_value(value: str) -> bool:
    """A value in prose: long and random; one opening with ``/`` or ``+`` (base64 can) only
    with upper and lower case and digits and no dot, which a path seldom has; no named
    digest (:data:`_NAMED_DIGEST`), no OpenPGP key id (``gpg: key 3AA5C34371567BD2:``:
    16 hex digits in one case, which names a public key)."""
    if _NAMED_DIGEST.fullmatch(value) or PGP_KEY_ID.fullmatch(value):
        return False
    if value[0] in "+/" and (
        "." in value or not (re.search(r"[a-z]", value) and re.search(r"[A-Z]", value))
    ):
        return False
    return _long_mixed(value)


# A token as a URL's user name (``https://<token>@host``: git remotes, Sentry DSNs): a
# person's login is a word, a token is long and random. The host stays.
URL_USER_TOKEN = Rule(
    "url_token",
    re.compile(
        r"(?i)\b[a-z][a-z0-9+.-]{1,20}://(?P<secret>[A-Za-z0-9._~+=-]{16,256})@(?=[\w\[.-])"
    ),
    _long_mixed,
    ("://",),
    re.compile(r"@(?=[\w\[.-])"),
)

# A secret named in prose, its value right after the name (at most one linking word):
# "my API key is X", "sets the session cookie to `X`", "pasted the secret access key X".
# Only a long random value (letters and digits): a word, a path or a UUID stays.
PROSE_SECRET = Rule(
    "secret",
    re.compile(
        r"(?i)\b(?:key|token|password|passphrase|passwd|secret|cookie|credentials?|dsn)\b"
        r"(?:[ \t]+(?:is|was|to|as|of|=|:))?[ \t]*[:=]?[ \t]*[`'\"]?"
        r"(?P<secret>[A-Za-z0-9+/][A-Za-z0-9._~+/=!*@:-]{15,511})(?![A-Za-z0-9._~+/=!*@:-])"
    ),
    _prose_value,
    ("key", "token", "passw", "passphrase", "secret", "cookie", "credential", "dsn"),
)

PROVIDER_RULES: tuple[Rule, ...] = (
    _prefixed("anthropic_api_key", r"sk-ant-(?:api|admin|sid|oat)\d{2}-", r"[A-Za-z0-9_-]{20,}"),
    _prefixed("anthropic_api_key", r"sk-ant-", r"[A-Za-z0-9_-]{24,}"),
    _prefixed("openai_api_key", r"sk-(?:proj|svcacct|admin|None)-", r"[A-Za-z0-9_-]{20,}"),
    _prefixed("openai_api_key", r"sk-", r"[A-Za-z0-9]{20,}(?:T3BlbkFJ[A-Za-z0-9]{20,})?"),
    _prefixed("huggingface_token", r"hf_", r"[A-Za-z0-9]{30,40}"),
    _prefixed("huggingface_token", r"api_org_", r"[A-Za-z0-9]{30,40}"),
    _prefixed("github_token", r"gh[pousr]_", r"[A-Za-z0-9]{30,255}"),
    _prefixed("github_token", r"github_pat_", r"[A-Za-z0-9_]{50,255}"),
    _prefixed(
        "gitlab_token",
        r"gl(?:pat|dt|rt|ptt|cbt|ft|imt|agent|oas|soat|ffct)-",
        r"[A-Za-z0-9_.-]{20,300}",
    ),
    _prefixed("slack_token", r"xox[abeprs]-", r"[A-Za-z0-9-]{10,250}"),
    _prefixed("slack_token", r"xapp-", r"\d-[A-Za-z0-9-]{10,250}"),
    _rule(
        "slack_webhook",
        r"https://hooks\.slack\.com/(?:services|workflows|triggers)/(?P<secret>[A-Za-z0-9+/_-]{20,})",
        keywords=("hooks.slack.com",),
    ),
    # Secret and restricted keys; a publishable key (``pk_``, Stripe's and Clerk's) is public
    # by design and stays, as in gitleaks' ``stripe-access-token`` rule (config/gitleaks.toml).
    _prefixed(
        "stripe_key",
        r"(?:sk|rk)_(?:live|test)_",
        r"[A-Za-z0-9]{20,250}",
        keywords=("_live_", "_test_"),
    ),
    _prefixed("stripe_key", r"whsec_", r"[A-Za-z0-9]{24,}"),
    _prefixed(
        "aws_access_key_id",
        r"(?:AKIA|ASIA|ABIA|ACCA|A3T[A-Z0-9])",
        # Real ids are base32 (A-Z, 2-7); a pasted or mistyped one may not be, and an id of
        # this prefix and length is one all the same.
        r"[A-Z0-9]{16}",
        keywords=("AKIA", "ASIA", "ABIA", "ACCA", "A3T"),
    ),
    _prefixed("aws_bedrock_api_key", r"ABSK", r"[A-Za-z0-9+/]{100,300}={0,2}"),
    _prefixed("google_api_key", r"AIza", r"[A-Za-z0-9_-]{35}"),
    _prefixed("google_oauth_secret", r"GOCSPX-", r"[A-Za-z0-9_-]{28}"),
    _prefixed("google_oauth_token", r"ya29\.", r"[A-Za-z0-9_-]{30,}"),
    _prefixed("npm_token", r"npm_", r"[A-Za-z0-9]{36}"),
    _prefixed("sendgrid_api_key", r"SG\.", r"[A-Za-z0-9_-]{20,24}\.[A-Za-z0-9_-]{40,46}"),
    _prefixed("twilio_api_key", r"SK", r"[0-9a-fA-F]{32}"),
    _prefixed("digitalocean_token", r"do[opr]_v1_", r"[a-f0-9]{64}"),
    _prefixed(
        "discord_bot_token",
        r"[MNO]",
        r"[A-Za-z0-9_-]{23,27}\.[A-Za-z0-9_-]{6}\.[A-Za-z0-9_-]{27,40}",
        keywords=(),
        hint=r"\.[A-Za-z0-9_-]{6}\.",  # the middle part, between its two dots
    ),
    _rule(
        "discord_webhook",
        r"https://(?:ptb\.|canary\.)?discord(?:app)?\.com/api/webhooks/\d+/"
        r"(?P<secret>[A-Za-z0-9_-]{50,})",
        keywords=("discord",),
    ),
    # In API URLs the token follows "bot" directly: /bot123456789:AA...
    _rule(
        "telegram_bot_token",
        rf"(?:(?<=bot)|{_B})(?P<secret>\d{{8,10}}:AA[A-Za-z0-9_-]{{32,34}}){_E}",
        keywords=(":AA",),
    ),
    _prefixed("pypi_token", r"pypi-", r"[A-Za-z0-9_-]{50,}"),
    _prefixed("shopify_token", r"shp(?:at|ca|pa|ss)_", r"[a-fA-F0-9]{32}"),
    _prefixed("mailgun_api_key", r"key-", r"[0-9a-f]{32}"),
    _rule(
        "azure_storage_key",
        r"(?i)(?:AccountKey|SharedAccessKey)=(?P<secret>[A-Za-z0-9+/]{40,100}={0,2})",
        keywords=("accountkey=", "sharedaccesskey="),
    ),
    _rule(
        "azure_client_secret",
        r"(?<![A-Za-z0-9_~.])(?P<secret>[A-Za-z0-9_~.]{3}\dQ~[A-Za-z0-9_~.-]{31,34})"
        r"(?![A-Za-z0-9_~.-])",
        keywords=("Q~",),
    ),
    _rule(
        "azure_sas_signature",
        r"[?&]sig=(?P<secret>[A-Za-z0-9%+/]{30,}={0,2})",
        keywords=("sig=",),
    ),
    _prefixed("databricks_token", r"dapi", r"[a-f0-9]{32}(?:-\d)?"),
    _prefixed("linear_api_key", r"lin_api_", r"[A-Za-z0-9]{40}"),
    _prefixed("notion_token", r"ntn_", r"[A-Za-z0-9]{40,50}"),
    _prefixed("notion_token", r"secret_", r"[A-Za-z0-9]{43}"),
    _prefixed("postman_api_key", r"PMAK-", r"[a-f0-9]{24}-[a-f0-9]{34}"),
    _prefixed("sentry_token", r"sntr[yu]s?_", r"[A-Za-z0-9+/=_]{40,}"),
    _prefixed("grafana_token", r"glsa_", r"[A-Za-z0-9]{32}_[a-fA-F0-9]{8}"),
    _prefixed("grafana_token", r"glc_", r"[A-Za-z0-9+/]{32,400}={0,3}"),
    _prefixed("doppler_token", r"dp\.(?:pt|st|sa|ct|scim|audit)\.", r"[A-Za-z0-9]{40,44}"),
    _prefixed("planetscale_token", r"pscale_(?:tkn|oauth|pw)_", r"[A-Za-z0-9_=.-]{32,64}"),
    _prefixed("hashicorp_vault_token", r"hv[sbr]\.", r"[A-Za-z0-9_-]{24,}"),
    _prefixed("replicate_token", r"r8_", r"[A-Za-z0-9]{37}"),
    _prefixed("supabase_token", r"sbp_", r"[a-f0-9]{40}"),
    _prefixed("pulumi_token", r"pul-", r"[a-f0-9]{40}"),
    _rule(
        "terraform_token",
        rf"{_B}(?P<secret>[A-Za-z0-9]{{14}}\.atlasv1\.[A-Za-z0-9_=-]{{60,90}}){_E}",
        keywords=(".atlasv1.",),
    ),
    # Mapbox secret tokens are ``sk.`` and a JWT-like body (``pk.`` ones are public).
    _prefixed(
        "mapbox_token",
        r"sk\.eyJ",
        r"[A-Za-z0-9_-]{20,}\.[A-Za-z0-9_-]{16,}",
        keywords=("sk.eyJ",),
    ),
    _prefixed("groq_api_key", r"gsk_", r"[A-Za-z0-9]{48,52}"),
    _prefixed("perplexity_api_key", r"pplx-", r"[A-Za-z0-9]{40,56}"),
    _prefixed("xai_api_key", r"xai-", r"[A-Za-z0-9]{70,90}"),
    _prefixed("age_secret_key", r"AGE-SECRET-KEY-1", r"[QPZRY9X8GF2TVDW0S3JN54KHCE6MUA7L]{58}"),
    Rule(
        "jwt",
        re.compile(
            rf"{_B}(?P<secret>eyJ[A-Za-z0-9_-]{{8,}}\.eyJ[A-Za-z0-9_-]{{8,}}\.[A-Za-z0-9_-]{{8,}}){_E}"
        ),
        lambda value: not is_placeholder(value) and not published_jwt(value),
        ("eyJ",),
    ),
)


def looks_random(value: str) -> bool:
    """A credential mixes character classes; a word of prose ("Bearer authentication") does
    not."""
    if is_placeholder(value):
        return False
    classes = sum(bool(re.search(p, value)) for p in (r"[a-z]", r"[A-Z]", r"[0-9]", r"[._~+/=-]"))
    return classes >= 2 and not re.fullmatch(r"[A-Z]?[a-z]+", value)


AUTH_HEADER_RULES: tuple[Rule, ...] = (
    Rule(
        "bearer_token",
        re.compile(r"(?i)\bBearer\s+(?P<secret>[A-Za-z0-9._~+/=-]{12,})"),
        looks_random,
        ("bearer",),
    ),
    Rule(
        "basic_auth",
        re.compile(r"(?i)\bBasic\s+(?P<secret>[A-Za-z0-9+/]{6,}={0,2})(?![A-Za-z0-9+/=])"),
        _decodes_to_user_and_password,
        ("basic",),
    ),
    _rule(
        "password",
        r"\bcurl\b[^\n]{0,1000}?\s(?:-u|--user)[ =](?P<q>[\"']?)[^\s:\"']{0,64}:"
        r"(?P<secret>[^\s\"']{3,512}+)(?P=q)",
        keywords=("curl",),
    ),
    # Any other scheme (``Token``, ``ApiKey``, ``SSWS``...) or none: RFC 7235 allows both.
    # Bearer and Basic are taken above; Digest carries parameters, not one credential.
    Rule(
        "authorization",
        re.compile(
            # A header (``:``) or a quoted value (``Authorization="Token X"``); an unquoted
            # ``authorization = ...`` is code.
            r"(?i)\b(?:proxy-)?authorization\\?[\"']?[ \t]*(?::[ \t]*\\?[\"']?|=[ \t]*\\?[\"'])"
            r"(?!digest\b)(?:[A-Za-z][\w-]{0,30}[ \t]+)?"
            r"(?P<secret>[A-Za-z0-9._~+/=:-]{12,})(?![A-Za-z0-9._~+/=:-])"
        ),
        looks_random,
        ("authorization",),
    ),
)

# Their keywords are shared where they can be ("sql" for mysql, sqlcmd and sqlplus): each
# keyword costs a substring test on every text, each rule only a search where it is found.
# Command lines whose tool takes a password in a short flag; the flag means password only
# for that tool (``-p`` is a port to ssh), so each rule names its tool. mysql and its kin
# take it glued to ``-p`` (a space makes ``-p`` a prompt and the next word the database).
# The span from the tool's name to its flag is bounded: unbounded, a long line naming the tool
# again and again without the flag is read again from each name (300 KB of ``sqlplus a/``
# took 15 s).
COMMAND_RULES: tuple[Rule, ...] = (
    _rule(
        "password",
        r"\b(?:mysql|mysqldump|mysqladmin|mysqlimport|mysqlshow|mysqlcheck|mariadb"
        r"|mariadb-dump)\b[^\n|;&]{0,1000}?[ \t]-p(?P<q>[\"']?)(?P<secret>[^\s\"']{3,256})(?P=q)",
        keywords=("sql", "mariadb"),
    ),
    _rule(
        "password",
        r"\bsshpass\b[^\n|;&]{0,1000}?[ \t]-p[ \t]*(?P<q>[\"']?)(?P<secret>[^\s\"']{3,256})(?P=q)",
        keywords=("sshpass",),
    ),
    _rule(
        "password",
        r"\bredis-cli\b[^\n|;&]{0,1000}?[ \t]-a[ \t]+(?P<q>[\"']?)"
        r"(?P<secret>[^\s\"']{3,256})(?P=q)",
        keywords=("redis-cli",),
    ),
    # sqlcmd and bcp take the password in ``-P``; the LDAP tools in ``-w``.
    _rule(
        "password",
        r"\b(?:sqlcmd|bcp|osql|isql)\b[^\n|;&]{0,1000}?[ \t]-P[ \t]*(?P<q>[\"']?)"
        r"(?P<secret>[^\s\"']{3,256})(?P=q)",
        keywords=("sql", "bcp"),
    ),
    _rule(
        "password",
        r"\bldap[a-z]*\b[^\n|;&]{0,1000}?[ \t]-w[ \t]*(?P<q>[\"']?)"
        r"(?P<secret>[^\s\"']{3,256})(?P=q)",
        keywords=("ldap",),
    ),
    # Codecov's uploader takes its upload token (a UUID) in ``-t``.
    _rule(
        "token",
        r"\bcodecov\b[^\n|;&]{0,200}?[ \t]-t[ \t]+(?P<q>[\"']?)"
        r"(?P<secret>[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12})(?P=q)",
        keywords=("codecov",),
    ),
    # A Wi-Fi QR code's payload: WIFI:T:WPA;S:<ssid>;P:<password>;; (``\;`` escapes a ``;``).
    _rule(
        "password",
        r"\bWIFI:(?:[A-Z]:(?:[^;\\\n]|\\.)*;)*?P:(?P<secret>(?:[^;\\\n]|\\.){1,63});",
        keywords=("wifi:",),
        flags=re.IGNORECASE,
    ),
    # rabbitmqctl add_user <user> <password>, change_password <user> <password>.
    _rule(
        "password",
        r"\brabbitmqctl[ \t]+(?:add_user|change_password)[ \t]+(?P<q0>[\"']?)[^\s\"']+(?P=q0)"
        r"[ \t]+(?P<q>[\"']?)(?P<secret>[^\s\"']{3,256})(?P=q)",
        keywords=("rabbitmqctl",),
    ),
    # A password piped in: ``echo 'pw' | docker login --password-stdin``.
    _rule(
        "password",
        r"\b(?:echo|printf)(?:[ \t]+-[neE]+)?[ \t]+(?P<q>[\"']?)(?P<secret>[^\s\"'|$]{3,256})(?P=q)"
        r"[ \t]*\|[^\n|]*--password-stdin",
        keywords=("password-stdin",),
    ),
    # Oracle's connect strings: ``user/password@host`` after sqlplus and its kin, or in
    # ``jdbc:oracle:thin:user/password@host``.
    _rule(
        "password",
        r"(?:\b(?:sqlplus|sqlldr)\b[^\n|;&]{0,1000}?[ \t][\"']?|jdbc:oracle:"
        r"[a-z]+:)[\w$#.-]+/(?P<secret>[^\s/@\"']{3,256})@",
        keywords=("sql", "jdbc:oracle:"),
    ),
    # openssl's pass phrase arguments: ``-passin pass:secret``.
    _rule(
        "password",
        r"-pass(?:in|out)?[ \t]+(?P<q>[\"']?)pass:(?P<secret>[^\s\"']{3,256})(?P=q)",
        keywords=("pass:",),
    ),
)

# Files whose format says where the password is, though no key name does.
FILE_RULES: tuple[Rule, ...] = (
    # Bundler's credentials for a gem source, ``user:password`` or ``token:x-oauth-basic``
    # (so the pair goes whole): ``BUNDLE_GEMS__EXAMPLE__COM=<pair>`` (the host's dots as
    # ``__``) or ``bundle config [set] [--global|--local] gems.example.com <pair>``.
    _rule(
        "password",
        r"\bBUNDLE_[A-Z0-9_]+__[A-Z0-9]+[ \t]*[=:][ \t]*[\"']?"
        r"(?P<secret>[^\s:\"']{1,128}:[^\s\"']{3,256})",
        keywords=("BUNDLE_",),
    ),
    _rule(
        "password",
        r"\bbundle[ \t]+config[ \t]+(?:set[ \t]+)?(?:--(?:global|local)[ \t]+)?"
        r"[\w-]+(?:\.[\w-]+)+[ \t]+[\"']?(?P<secret>[^\s:\"']{1,128}:[^\s\"']{3,256})",
        keywords=("bundle",),
    ),
    # netrc(5): ``machine <host> login <user> password <pw>``, on one line or several.
    _rule(
        "password",
        # A login between them tells the file from prose ("the default password is"). The
        # file's words are lower case; matching them so keeps the search fast.
        r"\b(?:machine[ \t]+\S+|default)(?:\s+(?:account|port)[ \t]+\S+)*"
        r"\s+login[ \t]+\S+(?:\s+(?:account|port)[ \t]+\S+)*\s+"
        r"password[ \t]+(?P<secret>\S{1,256})",
        keywords=("machine", "default"),
    ),
    # PostgreSQL's pgpass: ``host:port:database:user:password``, a whole line, ``*`` for any.
    Rule(
        "password",
        re.compile(
            r"(?m)^[ \t]*[A-Za-z0-9_.*\[\]-]+:(?:\d{1,5}|\*):[^:\s]+:[^:\s]+:"
            r"(?P<secret>(?:[^\s:\\]|\\.){3,256})[ \t]*$"
        ),
        keywords=(),
        hint=re.compile(r":(?:\d{1,5}|\*):[^:\s]+:[^:\s]+:[^\s:]"),
    ),
    # A password's hash after its user's name: a line of /etc/shadow, .htpasswd or
    # ``chpasswd -e`` (crypt(3)'s ``$id$`` formats and Apache's ``$apr1$``), cracked offline
    # by whoever reads it. A hash alone, as an example of the format, has no user and stays.
    _rule(
        "password_hash",
        r"(?:^|(?<=[\s\"'>`])|(?<=\\n))[A-Za-z_][\w.-]{0,31}:"
        r"(?P<secret>\$(?:2[aby]|1|5|6|y|apr1|argon2(?:id|i|d)|scrypt|7)\$[^\s:\"'\\]{8,256})",
        flags=re.MULTILINE,
        keywords=("$2", "$1$", "$5$", "$6$", "$y$", "$apr1$", "$argon2", "$scrypt$", "$7$"),
    ),
)

# The builders, for the second set of provider rules (``provider_tokens.py``).
prefixed = _prefixed
rule = _rule


__all__ = [
    "AUTH_HEADER_RULES",
    "COMMAND_RULES",
    "DSN_PASSWORD",
    "FILE_RULES",
    "PGP_KEY_ID",
    "PRIVATE_KEY",
    "PROSE_SECRET",
    "PROVIDER_RULES",
    "PUBLIC_TOKEN",
    "URL_PASSWORD",
    "URL_USER_TOKEN",
    "Rule",
    "looks_random",
    "prefixed",
    "published_jwt",
    "rule",
]

"""More providers' tokens, each known by a fixed prefix (the first set is ``rules.py``'s
``PROVIDER_RULES``).

The shapes are the providers' published token formats, as gitleaks' default rules name them
(``config/gitleaks.toml``, v8.30.1; the expressions are our own): a prefix no prose or code
identifier carries, then a body of the provider's alphabet, of the format's length, or at
least a length where the format varies. A publishable or client key that is public by
design (PostHog's ``phc_``, Stripe's ``pk_``) has no rule. Marker kinds do not repeat a
prefix's letters (``gem_host_key``, not ``rubygems_key``), so a marker is never taken for
part of the token it replaced.
"""

from __future__ import annotations

import re

from model_foundry.lib.hygiene.placeholders import is_placeholder
from model_foundry.lib.hygiene.rules import _B, _E, Rule, looks_random, prefixed, rule


def _random_body(value: str) -> bool:
    """The part after a token's last ``_``/``-`` looks random and is no placeholder."""
    body = re.split(r"[_-]", value)[-1]
    return looks_random(body) and not is_placeholder(body) and bool(re.search(r"\d", body))


# One recovery code (see the rule), and the break before the next in a list (``2. ``, ``- ``).
_CODE = r"(?:(?=[a-z-]*[0-9])[a-z0-9]{4,}(?:-[a-z0-9]{4,})+|\d{4,5}(?: \d{4,5})+)"
_LIST_ITEM = r"\n[ \t]*(?:\d{1,2}[.)]|[-*•])?[ \t]*"
# A token's end, where no YAML scalar is folded on below it: the folded-token pass takes those
# lines whole.
_NOT_FOLDED = r"(?![A-Za-z0-9_-]|[ \t]*\n[ \t]+[\w.~+/=-]+[ \t]*(?:\n|$))"

MORE_PROVIDER_RULES: tuple[Rule, ...] = (
    # A Microsoft Teams incoming webhook: the whole URL is the credential (its path holds the
    # group's and tenant's ids, the connector's key and its owner's id; anyone may post to it).
    rule(
        "teams_webhook",
        r"(?P<secret>https://[\w.-]*\.office(?:365)?\.com/webhook(?:b2)?/"
        r"[0-9a-f-]{36}@[0-9a-f-]{36}/IncomingWebhook/[0-9a-f]{32}/[0-9a-f-]{36}(?:/[\w-]+)?)",
        keywords=("office",),
    ),
    # A BitLocker recovery password: eight groups of six digits (Microsoft's numerical
    # password, as ``manage-bde -protectors -get`` prints it).
    rule(
        "bitlocker_recovery_key",
        rf"{_B}(?P<secret>\d{{6}}(?:-\d{{6}}){{7}}){_E}",
        keywords=(),
        hint=r"\d{6}-\d{6}-\d{6}-\d{6}-",
    ),
    prefixed("shippo_token", r"shippo_(?:live|test)_", r"[a-fA-F0-9]{40}", keywords=("shippo_",)),
    # Braintree's access token names its environment and merchant before the secret.
    prefixed(
        "braintree_token",
        r"access_token\$(?:production|sandbox)\$",
        r"[0-9a-z]{16}\$[0-9a-f]{32}",
        keywords=("access_token$",),
    ),
    prefixed("alibaba_access_key_id", r"LTAI", r"[A-Za-z0-9]{20}"),
    prefixed("onepassword_token", r"ops_eyJ", r"[A-Za-z0-9+/]{250,}={0,3}"),
    rule(
        "onepassword_secret_key",
        rf"{_B}(?P<secret>A3-[A-Z0-9]{{6}}-(?:[A-Z0-9]{{11}}|[A-Z0-9]{{6}}-[A-Z0-9]{{5}})"
        rf"-[A-Z0-9]{{5}}-[A-Z0-9]{{5}}-[A-Z0-9]{{5}}){_E}",
        keywords=("A3-",),
    ),
    prefixed("artifactory_token", r"AKCp", r"[A-Za-z0-9]{69}"),
    prefixed("artifactory_token", r"cmVmd", r"[A-Za-z0-9]{59}"),
    prefixed("adobe_client_secret", r"p8e-", r"[A-Za-z0-9]{32}"),
    prefixed("clickhouse_secret", r"4b1d", r"[A-Za-z0-9]{38}"),
    prefixed("clojars_token", r"CLOJARS_", r"[A-Za-z0-9]{60}"),
    prefixed("docker_token", r"dckr_(?:pat|oat)_", r"[A-Za-z0-9_-]{27,}", keywords=("dckr_",)),
    prefixed("dynatrace_token", r"dt0c01\.", r"[A-Za-z0-9]{24}\.[A-Za-z0-9]{64}"),
    prefixed("easypost_key", r"EZ[AT]K", r"[A-Za-z0-9]{54}", keywords=("EZAK", "EZTK")),
    prefixed(
        "flutterwave_key",
        r"FLWSECK(?:_TEST)?-",
        r"[a-hA-H0-9]{32}-X",
        keywords=("FLWSECK",),
    ),
    prefixed("figma_token", r"figd_", r"[A-Za-z0-9_-]{40,}"),
    prefixed("fly_token", r"fo1_", r"[A-Za-z0-9_-]{43}"),
    prefixed("fly_token", r"fm[12][ar]?_", r"[A-Za-z0-9+/]{100,}={0,3}", keywords=("fm1", "fm2")),
    prefixed("newrelic_key", r"NRAK-", r"[A-Z0-9]{27}"),
    prefixed("newrelic_key", r"NRJS-", r"[a-f0-9]{19}"),
    prefixed("newrelic_key", r"NRII-", r"[A-Za-z0-9-]{32}"),
    prefixed("netlify_token", r"nfp_", r"[A-Za-z0-9]{36,}"),
    prefixed("readme_key", r"rdme_", r"[a-z0-9]{70}"),
    prefixed("gem_host_key", r"rubygems_", r"[a-f0-9]{48}"),
    prefixed("square_token", r"sq0atp-", r"[A-Za-z0-9_-]{22}"),
    prefixed("square_token", r"sq0csp-", r"[A-Za-z0-9_-]{43}"),
    prefixed("square_token", r"EAAA", r"[A-Za-z0-9_-]{60}"),
    prefixed("nuget_key", r"oy2", r"[a-z0-9]{43}"),
    prefixed("prefect_key", r"pnu_", r"[A-Za-z0-9]{36}"),
    prefixed("tavily_key", r"tvly-", r"(?:dev-|prod-)?[A-Za-z0-9]{32}"),
    prefixed("openrouter_key", r"sk-or-v1-", r"[a-f0-9]{64}"),
    prefixed("posthog_personal_key", r"phx_", r"[A-Za-z0-9]{43}"),
    prefixed("render_key", r"rnd_", r"[A-Za-z0-9]{32}"),
    prefixed("duffel_token", r"duffel_(?:test|live)_", r"[A-Za-z0-9_=-]{43}"),
    prefixed("dropbox_token", r"sl\.(?:u\.)?", r"[A-Za-z0-9_=-]{100,}", keywords=("sl.",)),
    prefixed("atlassian_token", r"ATATT3", r"[A-Za-z0-9_=-]{150,}"),
    prefixed("bitbucket_app_password", r"ATBB", r"[A-Za-z0-9_=.-]{28,}"),
    prefixed("heroku_key", r"HRKU-", r"[A-Za-z0-9_-]{60}"),
    rule(
        "mailchimp_key",
        rf"{_B}(?P<secret>[0-9a-f]{{32}}-us[0-9]{{1,2}}){_E}",
        keywords=("-us",),
    ),
    prefixed(
        "brevo_key", r"x(?:key|smtp)sib-", r"[a-f0-9]{64}-[A-Za-z0-9]{16}", keywords=("sib-",)
    ),
    prefixed("sourcegraph_token", r"sgp_", r"(?:[a-fA-F0-9]{16}_)?[a-fA-F0-9]{40}"),
    prefixed("typeform_token", r"tfp_", r"[A-Za-z0-9_.=-]{59}"),
    prefixed("cloudflare_origin_ca_key", r"v1\.0-", r"[a-f0-9]{24}-[a-f0-9]{146}"),
    prefixed("pinecone_key", r"pcsk_", r"[A-Za-z0-9_]{40,}"),
    prefixed("harness_token", r"pat\.", r"[A-Za-z0-9_-]{22}\.[A-Za-z0-9]{24}\.[A-Za-z0-9]{20}"),
    prefixed("octopus_key", r"API-", r"[A-Z0-9]{26}"),
    prefixed("yandex_key", r"AQVN", r"[A-Za-z0-9_-]{35,38}"),
    prefixed("scalingo_token", r"tk-us-", r"[A-Za-z0-9_-]{48}"),
    prefixed("infracost_key", r"ico-", r"[A-Za-z0-9]{32}"),
    prefixed("frameio_token", r"fio-u-", r"[A-Za-z0-9_=-]{64}"),
    prefixed("crates_token", r"cio", r"[A-Za-z0-9]{32}"),
    prefixed("deno_token", r"dd[pw]_", r"[A-Za-z0-9]{36}", keywords=("ddp_", "ddw_")),
    prefixed(
        "tailscale_key",
        r"tskey-(?:api|auth|client|webhook)-",
        r"[A-Za-z0-9]{8,}-[A-Za-z0-9]{16,}",
        keywords=("tskey-",),
    ),
    prefixed("contentful_token", r"CFPAT-", r"[A-Za-z0-9_-]{43}"),
    prefixed("airtable_token", r"pat", r"[A-Za-z0-9]{14}\.[a-f0-9]{64}"),
    # A keypair as Solana's CLI writes it (``~/.config/solana/id.json``): 64 byte values, the
    # secret key then the public one, in a JSON array.
    # (A bracketed value is a placeholder to ``is_placeholder``: this one is taken as found.)
    Rule(
        "private_key",
        re.compile(
            r"(?P<secret>\[[ \t\n]*(?:[0-9]{1,3}[ \t\n]*,[ \t\n]*){63}[0-9]{1,3}[ \t\n]*\])"
        ),
        lambda _value: True,
        ("solana", "keypair", "id.json"),
    ),
    # An EVM wallet's private key: 0x and 64 hex digits, the shape of a transaction or block
    # hash too, so only where the line says it signs: a Hardhat network's ``accounts: [...]``,
    # a key-taking call (``new Wallet(``, ``Account.from_key(``, ``privateKeyToAccount(``)
    # or a private-key, signer or deployer word before it. A bare ``0x<64>`` stays a hash.
    rule(
        "private_key",
        r"(?i:private[ _-]?key|privkey|accounts[ \t]*:[ \t]*\[|wallet[ \t]*\(|from_?key[ \t]*\("
        r"|signer|deployer)[^\n]{0,60}?"
        rf"{_B}(?P<secret>0x[0-9a-fA-F]{{64}}){_E}",
        keywords=(),
        # The key's shape opens with a literal, which ``re`` finds fast: no key, no walk.
        hint=r"0x[0-9a-fA-F]{64}",
    ),
    # HashiCorp's secret id (Vault's AppRole, Consul's and Nomad's ACL tokens) is a UUID, a
    # shape that stays everywhere else; its accessor id beside it is public.
    rule(
        "token",
        r"(?i)\bsecret[ _-]?id\b[\"']?[ \t]*[:=][ \t]*[\"']?"
        r"(?P<secret>[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12})",
        keywords=("secret id", "secret_id", "secret-id", "secretid"),
    ),
    # Loggly's customer token and Cloudsmith's entitlement token stand in their URL's path.
    rule(
        "token",
        r"\blogs-\d+\.loggly\.com/(?:inputs|bulk)/(?P<secret>[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}"
        r"-[0-9a-f]{4}-[0-9a-f]{12})",
        keywords=("loggly",),
    ),
    rule(
        "token",
        r"\bdl\.cloudsmith\.io/(?P<secret>[A-Za-z0-9]{12,64})/",
        keywords=("cloudsmith",),
    ),
    # A token whose own prefix names it a credential (``sm_pat_...``, ``acme-token-...``,
    # ``xy_sk_...``): the prefix is the cue, whatever provider issued it.
    Rule(
        "token",
        re.compile(
            rf"{_B}(?P<secret>[a-z]{{1,10}}[_-](?:pat|token|tok|secret|sk|apikey|api[_-]key)"
            rf"[_-][A-Za-z0-9]{{16,}}){_E}"
        ),
        _random_body,
        (),
        # One scan for the prefix's middle word, cheaper than a keyword test per spelling.
        re.compile(r"[_-](?:pat|tok|token|secret|sk|apikey|api[_-]key)[_-]"),
    ),
    # A PIN after its name: 4 to 8 digits (``PIN is 2719``, ``PIN 3091, PUK 58203317``,
    # ``暗証番号は 2719``, ``alarm disarm code 40271``), a letter before them on a door's
    # keypad (``le digicode de l'immeuble est B4719``: a short phrase may stand before the verb).
    # Not a number's part (``PIN 1234.5``, ``2024-01``), and only codes a lock or a card asks
    # for: ``error code 404`` and ``exit code 1`` name no lock.
    rule(
        "password",
        r"(?i)(?:\bpin(?:[ -]?code)?|\bpuk2?|\bpasscode|\bdigicode|暗証番号|パスコード|解除コード"
        r"|\b(?:door|gate|alarm|lock|keypad|garage|disarm|entry|safe|unlock) code)"
        r"(?:[ \t]*(?:[:=：]|は)|(?:[ \t]+[\w'’-]{1,20}){0,4}?[ \t]+(?:is|was|est|ist|es|é)"
        r"|(?=[ \t]+\d))[ \t]*(?P<secret>(?-i:[A-Z])?\d{4,8})(?![\d/-]|[.,:]\d)",
        keywords=(
            *("pin ", "pin:", "pin=", "pin-code", "pincode", "puk", "passcode", "digicode"),
            "暗証番号",
            "パスコード",
            "解除コード",
            *(f"{w} code" for w in ("door", "gate", "alarm", "lock", "keypad", "garage")),
            *(f"{w} code" for w in ("disarm", "entry", "safe", "unlock")),
        ),
    ),
    # A lock's combination: 3 or 4 numbers of 1 or 2 digits (``safe combination is
    # 38-14-72``, ``金庫のダイヤル番号は右に 38-14-72``), where the line names a lock.
    rule(
        "password",
        r"(?i)(?:\b(?:safe|lock|locker|padlock|vault)\b[^\n]{0,30}?\bcombination\b"
        r"|\bcombination\b[^\n]{0,12}?\b(?:to|for|of|on)\b[^\n]{0,20}?"
        r"\b(?:safe|lock|locker|padlock|vault)\b|ダイヤル番号|ダイヤル錠)"
        r"[^\d\n]{0,24}?(?P<secret>\d{1,2}(?:[- ]\d{1,2}){2,3})(?![\d-])",
        keywords=("combination", "ダイヤル"),
    ),
    # Terraform: a variable's default, where its name says secret or it is marked sensitive.
    rule(
        "secret",
        r"\bvariable[ \t]+\"(?:[^\"\n]*(?:secret|password|passwd|token|api_?key|private_?key)"
        r"[^\"\n]*\"[ \t]*\{[^}]*?|[^\"\n]*\"[ \t]*\{[^}]*?\bsensitive[ \t]*=[ \t]*true[^}]*?)"
        r"\bdefault[ \t]*=[ \t]*\"(?P<secret>[^\"\n]{6,})\"",
        keywords=('variable "',),
    ),
    # A one-time-password seed: after oathtool on its command line (base32 or hex), or as an
    # authenticator app shows it for typing in, 4 to 8 groups of 4 base32 characters with
    # digits among them (``i7vj ijdn u3r7 i5wu``): prose has no digits in its words, a key's
    # fingerprint has 0, 1, 8 and 9, which base32 lacks.
    rule(
        "totp_secret",
        r"\boathtool\b[^\n|;&]{0,80}?[ \t][\"']?(?P<secret>(?=[A-Z2-7]*[2-7])[A-Z2-7]{16,64}=*"
        r"|[0-9a-fA-F]{20,128})[\"']?(?![\w=])",
        keywords=("oathtool",),
    ),
    rule(
        "totp_secret",
        r"(?<![A-Za-z0-9] )(?<![\w])(?P<secret>(?=[a-zA-Z2-7 ]{0,39}?[2-7][a-zA-Z2-7 ]{0,39}?[2-7])"
        r"(?:[a-z2-7]{4}(?: [a-z2-7]{4}){3,7}|[A-Z2-7]{4}(?: [A-Z2-7]{4}){3,7}))(?! ?[A-Za-z0-9])",
        hint=r"[a-zA-Z2-7]{4} [a-zA-Z2-7]{4} [a-zA-Z2-7]{4} [a-zA-Z2-7]{4}",
    ),
    # A vendor's token cut short or split over two messages (``ghp_DmE9oLA0tiFbCx5e``): the
    # prefix says token however little follows it; the full shapes above take whole ones. A
    # run without a digit is a name (``hf_hub_download``, ``npm_config_cache``).
    rule(
        "token",
        r"(?<![\w-])(?P<secret>(?:gh[pousr]_|github_pat_|glpat-|xox[abprs]-)"
        r"(?=[A-Za-z0-9_-]*[0-9])(?=[A-Za-z0-9_-]*[A-Za-z])[A-Za-z0-9_-]{10,})" + _NOT_FOLDED,
        keywords=("ghp_", "gho_", "ghu_", "ghs_", "ghr_", "github_pat_", "glpat-", "xox"),
    ),
    rule(
        "token",
        r"(?<![\w-])(?P<secret>(?:hf_|npm_|pypi-)(?=[A-Za-z0-9_-]*[0-9])"
        r"(?=[A-Za-z0-9_-]*[A-Z])[A-Za-z0-9_-]{10,})" + _NOT_FOLDED,
        keywords=("hf_", "npm_", "pypi-"),
    ),
    # Account recovery (backup) codes after their name: groups of letters and digits joined by
    # hyphens (``4AET-AV70-5959-33MO``, GitHub's ``a1b2c-3d4e5``) or digits by a space
    # (Google's ``4821 9036``), one or a list of them, on the line or listed below it. A code
    # holds a digit, so ``backup codes: none-left`` is no code.
    rule(
        "recovery_code",
        r"(?i)\b(?:recovery|backup)[ _-]?codes?\b[^\n:：=]{0,80}[:：=][ \t]*"
        rf"(?:{_LIST_ITEM})?(?P<secret>{_CODE}(?:(?:[ \t,;]+|{_LIST_ITEM}){_CODE})*)",
        keywords=("recovery", "backup"),
    ),
)


__all__ = ["MORE_PROVIDER_RULES"]

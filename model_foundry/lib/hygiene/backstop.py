"""The backstop: a random-looking value standing next to a cue, whatever shape the rules expect.

The rules (:mod:`~model_foundry.lib.hygiene.secrets`) know where a secret stands: a provider
prefix, a ``NAME=`` they can parse, a tool they name. A text written by someone else puts
credentials where no rule looks (``zip -P <pw>``, ``myApiKeyProd=<v>``, a ``.pgpass`` line
inside a sentence, ``/hooks/<token>``). The backstop runs after the rules and takes a value
when both hold:

- the value looks random: long enough, mixing character classes, and with a Shannon entropy
  over its characters close to the most its length and alphabet allow (the measure of
  detect-secrets' ``detect_secrets/plugins/high_entropy_strings.py`` and of gitleaks'
  ``entropy`` rule field, ``config/gitleaks.toml``; the thresholds here are our own and
  scale with length, since passwords are shorter than the tokens those tools look for);
- a cue stands right before it: a credential word in any case, alone or joined to other
  words (``password``, ``pgpw``, ``tok``, ``apiKey``, ``appid``, ``keyStorePassword``,
  ``パスワード``), a password flag (``-p``/``-P``, attached or not), the last field of a
  colon-separated credentials line (``host:port:db:user:<pw>``, ``'user:<pw>'``,
  ``user:<pw>@host``), ``-U user%<pw>``, or, in a URL, a path segment after a
  webhook/hook/token/bot segment; hex or one-case values need a credential word (in a
  table: its column's header).

A URL path segment random enough to be its own cue (:func:`strong`) goes too
(``/feeds/<token>/team.ics``), unless the segment before names a content address (``ipfs``).

A password of letters only (``correcthorsebattery``) looks like a word: it is taken only
after a cue that makes the next token a value, by
:mod:`~model_foundry.lib.hygiene.word_passwords`, which runs right before this pass.

What training needs stays: git SHAs, digests and UUIDs (hex or one-case values are taken only
after a credential word or a hook segment, and words naming a digest veto the cue), versions,
paths, file names, code identifiers (snake, camel, dotted), placeholders and our markers.
The whole value becomes a marker of the kind its cue names (``password``, ``token``,
``secret``, ``api_key``, ``webhook_token``).
"""

from __future__ import annotations

import base64
import binascii
import functools
import itertools
import json
import math
import re
from collections import Counter
from collections.abc import Callable

from model_foundry.lib.hygiene.names import (
    DATA_KEY_WORDS,
    DESCRIPTOR_WORDS,
    KEY_ID_NAMES,
    NOT_SECRET_WORDS,
    WORLD_CUES,
)
from model_foundry.lib.hygiene.placeholders import (
    MARKER_PREFIX,
    is_placeholder,
    marker,
    memo_short,
    word_set,
)
from model_foundry.lib.hygiene.rules import PGP_KEY_ID, PUBLIC_TOKEN, published_jwt

# A value: a run of the characters passwords and tokens are made of. ``:`` and ``@`` end it
# (they split credential lines and ``user@host``), ``?``/``&`` end a query's pairs, and
# brackets, quotes and commas are the text around it.
_VALUE_CHARS = r"A-Za-z0-9!#$%*+\-./=^_~"
# A run opens after an ``=`` that stands alone before it (``パスワード=X``: the cue is before
# the ``=``, the value after).
_VALUE = re.compile(rf"(?!=)[{_VALUE_CHARS}]{{10,}}")
# Shortest and longest values considered: shorter is a word or a port, longer is a blob
# (a PEM body, a data URI) that other rules decide.
_MIN_LEN = 10
_MAX_LEN = 256
# How far back (characters, same line) a cue may stand, and how many names may separate it
# from the value: ``password for the backup box is X`` and ``the password you gave me, X``
# are cues, a word three clauses ago is not (5 names lost a negative of heldout11's odd half).
_WINDOW = 48
_NAMES_BACK = 4

_NAME = re.compile(r"[A-Za-z][A-Za-z0-9_]*")
_CAMEL = re.compile(r"[A-Z]+(?![a-z])|[A-Z]?[a-z]+|[0-9]+")
# Words between a name and its value that do not separate them.
_LINKS = word_set(
    """is are was were be to of for as the a an my our your its with value set b r u
    new old current temporary temp default initial"""
)
# Credential words: whole words of a name once split (``db_PassWord`` -> db, pass, word).
_CUE_WORDS = {
    "password": "password",
    "passwd": "password",
    "passphrase": "password",
    "passcode": "password",
    "pass": "password",
    "pw": "password",
    "pwd": "password",
    # Abbreviations with the vowels dropped (``DB_PSWD``, ``pwrd``, ``passwrd``).
    "pswd": "password",
    "pswrd": "password",
    "pwrd": "password",
    "passwrd": "password",
    "secret": "secret",
    "secrets": "secret",
    "private": "secret",
    "priv": "secret",
    "credential": "secret",
    "credentials": "secret",
    "cred": "secret",
    "creds": "secret",
    "token": "token",
    "tok": "token",
    "bearer": "token",
    "auth": "token",
    "sig": "signature",
    "signature": "signature",
    "key": "api_key",
    "apikey": "api_key",
    "appid": "api_key",
    "api": "api_key",
}
# Joined without a case change: ``htpasswd``, ``rootpass``, ``apikey``, ``authtoken``.
_CUE_INSIDE = (
    ("password", "password"),
    ("passwd", "password"),
    ("secret", "secret"),
    ("credential", "secret"),
    ("token", "token"),
)
_CUE_SUFFIX = (("pass", "password"), ("pwd", "password"), ("pw", "password"), ("key", "api_key"))
# A name with one of these is about a digest, an id or a public value, not a secret.
_VETO_WORDS = word_set(
    """hash hashes digest checksum sha sha1 sha224 sha256 sha384 sha512 md5 crc commit rev
    revision fingerprint integrity public pub etag uuid guid nonce trace traceparent span
    correlation sitekey cache"""
)
# Credential words in Japanese (and the kind each names); what follows them up to the value
# holds no ASCII letter or digit (particles, punctuation, brackets).
_JA_CUES = (
    ("パスワード", "password"),
    ("暗証", "password"),
    ("トークン", "token"),
    ("認証", "token"),
    ("シークレット", "secret"),
    ("秘密", "secret"),
    ("鍵", "api_key"),
    ("キー", "api_key"),
    ("セッション", "session"),
    ("パスフレーズ", "password"),
    ("合言葉", "password"),
    ("資格情報", "secret"),
    ("クレデンシャル", "secret"),
)
_JA_GAP = re.compile(r"[^A-Za-z0-9\n]{0,12}(?:ID|Id|id)?[^A-Za-z0-9\n]{0,4}")
_ASCII_WORLD_CUES = tuple({w.lower() for w, _ in WORLD_CUES if w.isascii()})
WORLD_GAP = re.compile(r"[^A-Za-z0-9\n]{0,12}|[^\n]{1,32}?[ \t]*[:=：][ \t]*[\"'「]?")
# A password flag right before the value (``-p X``, ``-P X``, ``-p=X``, Windows' ``/p:X``) or
# glued to it (``-pX``); ``-U``/``-u``/``--user`` with ``user%pw`` or ``user:pw``.
_FLAG_BEFORE = re.compile(r"(?:^|\s)(?:-[pP](?:[ \t]+|=)|/[pP](?:ass(?:word)?)?:)[\"']?$")
_GLUED_FLAG = re.compile(r"-[pP](?=[^-])")
_USER_FLAG = re.compile(r"(?:^|\s)(?:-[uU]|--user(?:name)?)[ \t=]+[\"']?[\w.@-]{1,64}[%:]$")
# The same flag before a run that holds ``user%pw`` whole (``%`` is a value character).
_USER_FLAG_BEFORE = re.compile(r"(?:^|\s)(?:-[uU]|--user(?:name)?)[ \t=]+[\"']?$")
# The fields of a colon-separated credentials line before the value, from a boundary.
_COLON_FIELDS = re.compile(r"(?:^|[\s'\"`=(,\[>])((?:[\w.*-]{1,128}:){1,6})$")
_NOT_USER_FIELDS = word_set(
    """http https ftp ftps ws wss file data mailto urn git ssh sha1 sha224 sha256 sha384
    sha512 md5 arxiv doi isbn tel sip std h1 zh blake2b"""
)
# Where a value ends: a colon right after it is one more field (``host:5432``), a dot ends a
# sentence, a comma a list.
_TRAILING = ".,"
# After a run's last ``$``: a shell prompt's space, then its command.
_PROMPT_AFTER = re.compile(r"[ \t]+[A-Za-z./~]")


def _trimmed(raw: str, text: str, start: int) -> str:
    """The run ``raw`` at ``start`` without the sentence's marks after it, nor the prompt a
    file printed without a last newline runs into (``<value>$ ls``)."""
    trimmed = raw.rstrip(_TRAILING)
    if trimmed.endswith("$") and _PROMPT_AFTER.match(text, start + len(trimmed)):
        return trimmed[:-1]
    return trimmed


# URLs and the path segments after which a segment is a token.
_URL = re.compile(r"\bhttps?://[^\s\"'<>`)\]]+")
_HOOK_SEGMENT = re.compile(
    r"(?i)hook|token|^bot$|^incoming|^push$|^catch$|^trigger|^notify$|^callback$"
)
# After a hook segment, a short token of letters and digits (Zapier's ``/hooks/catch/<account
# id>/<7 characters>/``): too short for the randomness test, yet no word or version.
_SHORT_HOOK_TOKEN = re.compile(r"(?=[a-z]*[0-9][a-z]*[0-9])(?=[0-9]*[a-z])[a-z0-9]{6,9}", re.I)
# Path segments after which a random segment is a content address or a shared document's
# id (Google Docs' and Drive's ``/d/<id>``, ``/folders/<id>``), not a secret.
_PUBLIC_SEGMENTS = word_set(
    "ipfs ipns commit commits blob tree tag tags releases download d folders"
)
_DIGIT = re.compile(r"[0-9]")
_HEX = re.compile(r"[0-9a-fA-F]+")
_UUID = re.compile(r"[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}")
# Possessive runs: a failed match must not retry every split of a long run.
_VERSION = re.compile(r"v?\d++(?:[._-]\d++)+(?:[-+._]?[A-Za-z0-9]++)*")
_EXTENSION = re.compile(
    r"\.(?:py|pyc|js|mjs|ts|tsx|jsx|json|jsonl|yaml|yml|toml|ini|cfg|conf|txt|md|rst|html?"
    r"|css|scss|map|png|jpe?g|gif|svg|webp|ico|woff2?|ttf|gz|tgz|zip|tar|bz2|xz|7z|whl"
    r"|gguf|bin|safetensors|pt|onnx|parquet|csv|log|lock|sh|bat|exe|dll|so|dylib|go|rs|rb"
    r"|java|kt|c|h|cc|cpp|hpp|sql|xml|pem|crt|key|pub|enc|db|sqlite)$",
    re.IGNORECASE,
)
# Names in code: snake_case, CONSTANT_CASE, dotted attribute reads, CamelCase whose humps
# are words (a random token has one-letter humps: ``cukG07mOpL``).
_SNAKE = re.compile(r"_*[a-z][a-z0-9]*(?:_+[a-z0-9]+)+_*|_*[A-Z][A-Z0-9]*(?:_+[A-Z0-9]+)+_*")
_DOTTED = re.compile(r"[A-Za-z_]\w*(?:\.[A-Za-z_]\w*)+")
_NAME_DOTTED = re.compile(r"[A-Za-z_][\w.]*")
# A regex character class's ranges (``[A-Za-z0-9_.-]``).
_RANGES = re.compile(r"a-z|A-Z|0-9|a-f|A-F")
_CONVERSION = re.compile(r"![rsa]$")  # an f-string's ``{self.x!r}``
_FOUR_DIGITS = re.compile(r"[A-Za-z][0-9]{4}$")
_WORDS_JOINED = re.compile(r"[A-Za-z._#-]+")

# A value that names a credential instead of holding one (``OAuth2PasswordRequestForm``).
_NAMING = re.compile(r"(?i)password|passwd|token|secret|credential|private|public|session")

# A token that is its own cue: long, mixing both cases with digits, and with the entropy of
# a random draw (``co.Client('<40 chars>')``, ``Saved <token> to the CI variables``). What
# public values of that shape are is said right before them or by their head: a digest's
# algorithm (``sha512-``, ``SHA256:``, ``h1:``), an SSH key's type, a data URI's
# ``base64,``, a PEM block, a base64 blob of binary (``AAAA...``), an HTTP entity tag.
_STRONG_LEN = 32
_STRONG_RATIO = 0.85
_PUBLIC_BEFORE = re.compile(
    r"(?i)(?:sha[0-9]*|md5|blake[0-9a-z]*|h1|digest|integrity|checksum|fingerprint|base64,"
    r"|(?:etag|if-none-match|if-match)[\s:]*(?:W/)?"
    r"|ssh-[a-z0-9]+|ecdsa-[\w-]+|sk-[\w@.-]+)[\s:=\-\"'(]*$"
)
# A token that names its issuer: a short word, ``_`` or ``-``, then a long random body
# (``acme_<48 hex>``, ``ABCD-<base62>``), the shape most providers give their keys. Hex or
# one-case bodies are taken too, unless the word says digest, build or id.
_PREFIXED = re.compile(r"([A-Za-z][A-Za-z0-9]{1,11})[_-]([A-Za-z0-9][A-Za-z0-9_-]{31,})")
_HEAD_WORD = re.compile(r"([A-Za-z][A-Za-z0-9]{0,11})[_=:-]")
# Heads of ids, digests and public values (an API's object ids: ``chatcmpl-``, ``msg_``;
# a publishable key: ``pk_``, ``phc_``); a value opening with one is never taken without a cue.
_PUBLIC_PREFIXES = word_set(
    """sha sha1 sha224 sha256 sha384 sha512 md5 h1 blake2b git commit rev build run job cache
    blob chunk layer image pod node tmp temp file id uid uuid guid trace span req request
    sess session msg message evt event obj object chatcmpl cmpl resp response call toolu
    tool batch thread asst step ft pk phc pub public cus ch pi prod price sub inv acct"""
)
# Words after which a long random value is an id, an address or a digest, not a secret.
_PUBLIC_WORDS = word_set("""id ids sid oid cid address addr wallet tx txid""")
# ``user / password`` on a line that speaks of logging in (either side of the pair).
_PAIR_BEFORE = re.compile(r"(?:^|[\s(\[])[`'\"]?[\w.@+-]{1,64}[`'\"]?[ \t]+/[ \t]+[`'\"]?$")
_LOGIN = re.compile(
    r"(?i)\blog[ -]?in|\bsign[ -]?in|\bcreds?\b|credential|\baccount|ログイン|サインイン|アカウント"
)
# A password as the argument after a user's name: ``net user <name> <pw>``,
# ``add_user <name> <pw>``, ``useradd <name> <pw>``.
_USER_NAME_BEFORE = re.compile(
    r"(?i)(?:^|[\s\"'`])(?:user|add_?user|useradd|adduser|create_?user|change_?password"
    r"|set_?password)[ \t]+[\"']?[\w.@-]{1,64}[\"']?[ \t]+[\"']?$"
)
# A Markdown table's rows and the line under its header.
_TABLE_RULE = re.compile(r"[ \t]*\|?(?:[ \t]*:?-{3,}:?[ \t]*\|)+[ \t]*(?::?-{3,}:?[ \t]*)?")
_TABLE_ROWS_BACK = 200
# ``user:pw`` right after a credential word, whatever the length (``creds 94ab:3c28``): the
# word says the pair is a credential, so a short or hex value counts too.
# It opens with the colon, a literal ``re`` jumps to; the user is read back from there.
_CUED_PAIR = re.compile(rf":(?P<value>[{_VALUE_CHARS}]{{6,{_MAX_LEN}}}+)(?![:@])")
_PAIR_USER = re.compile(r"(?<![\w.@:/-])[\w.+-][\w.@+-]{0,63}$")
# A port, alone or before a path (``db:5432``, ``db:5432/app``): the pair is a host's.
_PORT = re.compile(r"\d{1,5}(?:/.*)?")
_LETTER = re.compile(r"[A-Za-z]")
_ONE_CASE_RUN = re.compile(r"[a-z]{5,}|[A-Z]{5,}")
_INNER_VERSION = re.compile(r"\d+\.\d+\.\d+")
# A quoted string with no space in it, and the characters a run is made of. Brackets,
# braces and commas say code, a template or a list (``f"{user}:{pw}"``, ``"a.py,sha256=..."``).
_QUOTED = re.compile(
    rf"(?P<q>[\"'])(?P<value>[^\s\"'\\{{}}()\[\]<>,]{{{_MIN_LEN},{_MAX_LEN}}})(?P=q)"
)
_VALUE_ONLY = re.compile(rf"[{_VALUE_CHARS}]*")
_BASE64_BODY = re.compile(r"[A-Za-z0-9+/]+|[A-Za-z0-9_-]+")
# A literal passed to a client, login, connect, auth or credentials call (``Client('AC..',
# '<token>')``, ``ftp.login('u', '<pw>')``, Rust's ``Credentials::new(u.to_owned(), "<pw>"``):
# the callee is the cue.
_CALL_BEFORE = re.compile(
    r"(?i)(?:client|login|connect|auth|credentials?)[\w.:]*[ \t]*\("
    r"(?:(?:[^()\n]|\(\))*,)?[ \t]*[\"']$"
)
# The same call with its arguments on lines of their own (``Cluster.connect(\n url,\n
# "user",\n "<pw>"``): a user's literal, then the value, each opening its line.
_CALL_LINES_BEFORE = re.compile(
    r"(?i)(?:client|login|connect|auth)[\w.]*[ \t]*\((?:\s*[^()\s][^()\n]{0,120},){0,3}"
    r"\s*[\"'][\w.@+-]{1,64}[\"'],[ \t]*\n[ \t]*[\"']$"
)
_CALL_WINDOW = 200


def entropy(value: str) -> float:
    """Shannon entropy of ``value``'s characters, in bits per character."""
    n = len(value)
    return -sum(c / n * math.log2(c / n) for c in Counter(value).values())


def _alphabet(value: str, lower: int, upper: int, digit: int, symbol: int) -> int:
    """How many characters the value was likely drawn from: 16 for hex (22 for hex of both
    cases), else its classes'."""
    if not symbol and _HEX.fullmatch(value):
        return 22 if lower and upper else 16
    return 26 * bool(lower) + 26 * bool(upper) + 10 * bool(digit) + 16 * bool(symbol)


@memo_short
def randomness(value: str) -> str | None:
    """``"mixed"`` for a random-looking value mixing cases with digits or symbols,
    ``"one_case"`` for a long one of a single letter case interleaved with digits (hex,
    base36: only after a strong cue), None for anything else."""
    n = len(value)
    if n < _MIN_LEN or n > _MAX_LEN:
        return None
    lower = upper = digit = symbol = 0
    for ch in value:
        if "a" <= ch <= "z":
            lower += 1
        elif "A" <= ch <= "Z":
            upper += 1
        elif "0" <= ch <= "9":
            digit += 1
        else:
            symbol += 1
    if not digit and not symbol:
        return None
    # The most entropy a value of this length and alphabet can have; a random value comes
    # close, a word with a number (``release2024``) or a repeated pattern does not.
    top = math.log2(min(n, _alphabet(value, lower, upper, digit, symbol)))
    if entropy(value) < 0.75 * top:
        return None
    if lower and upper and not (not symbol and _HEX.fullmatch(value)):
        return "mixed"
    letters = lower + upper
    if n >= 16 and digit >= 3 and letters >= 3 and _alternations(value) >= 4:
        return "one_case"
    return None


def _alternations(value: str) -> int:
    """How often a letter follows a digit or a digit a letter (``a1b2`` -> 3)."""
    kinds = ["d" if c.isdigit() else "a" if c.isalpha() else "" for c in value]
    kinds = [k for k in kinds if k]
    return sum(1 for a, b in itertools.pairwise(kinds) if a != b)


@memo_short
def _camel_words(value: str) -> bool:
    """Whether ``value`` is CamelCase words (``AbstractSingletonProxy``, ``HTTPResponse2``):
    every hump two letters or more, digit runs short. A split, not a regex, so a long
    random run costs one pass."""
    parts = _CAMEL.findall(value)
    if "".join(parts) != value:
        return False
    # One case cut by digits three times or more (``zjuiw5srqh2omw7skh``) is a base36 draw:
    # names number a word or two (``utf8``, ``sha256sum``), not every few letters.
    if not any(c.isupper() for c in value) and sum(1 for p in parts if p.isdigit()) >= 3:
        return False
    for i, p in enumerate(parts):
        if p.isdigit():
            if len(p) > 4:
                return False
        elif len(p) < 2:
            # One capital before a word is an acronym's end (``Affine2DBase``).
            nxt = parts[i + 1] if i + 1 < len(parts) else ""
            if not (p.isupper() and nxt[:1].isupper() and nxt[1:2].islower()):
                return False
    return True


def _code_name(name: str) -> bool:
    """A name as code writes it: lowercase, snake, dotted or CamelCase words."""
    if not _NAME_DOTTED.fullmatch(name):
        return False
    return name.lower() == name or "_" in name or "." in name or _camel_words(name)


def names_a_thing(value: str) -> bool:
    """A snake or constant name, a version, a file name or a UUID: what a value names even
    after a cue that makes the next token a value (``word_passwords``)."""
    return bool(
        _SNAKE.fullmatch(value)
        or _VERSION.fullmatch(value)
        or _UUID.search(value)
        or _EXTENSION.search(value)
    )


@memo_short
def _not_a_value(value: str) -> bool:
    """Paths, file names, versions, UUIDs, code names and placeholders: never a secret here."""
    return _camel_words(value.rstrip("!?")) or not_a_worded_value(value)


@memo_short
def not_a_worded_value(value: str) -> bool:
    """:func:`_not_a_value` but for words run together with digits (``lanmei2026dong``,
    ``getUser2``), which after a password word and its verb are the password."""
    if MARKER_PREFIX in value or is_placeholder(value) or _PUBLIC_SHAPE.fullmatch(value):
        return True
    if value.startswith("eyJ") and encoded_data(value):
        return True
    if value.startswith(("/", "~", "./", "../", "$", "=")) or names_a_thing(value):
        return True
    # A path, not base64 (whose ``+`` and ``=`` padding no path has).
    if value.count("/") >= 2 and "+" not in value and not value.endswith("="):
        return True
    if _RANGES.search(value):
        return True
    # A dotted name (``settings.API_KEY``, ``.Values.apiKey``, ``torch.float16``); one ending
    # in four digits is a passphrase (``Ember.pepper5228``): code seldom numbers so high.
    name = _CONVERSION.sub("", value.lstrip(".*"))
    if _DOTTED.fullmatch(name) and not _FOUR_DIGITS.search(value):
        return True
    # Words joined by marks with no digit (``dagster-webserver``, ``.Values.apiKey``).
    if not any(c.isdigit() for c in value) and _WORDS_JOINED.fullmatch(value):
        return True
    return bool(_NAMING.search(value))


def _word_kind(word: str) -> str | None:
    if word in NOT_SECRET_WORDS:
        return None
    kind = _CUE_WORDS.get(word)
    if kind:
        return kind
    if len(word) >= 3 and not _VOWELS.search(word):
        kind = _skeleton_kind(word)
        if kind:
            return kind
    for part, kind in _CUE_INSIDE:
        if part in word:
            return kind
    for suffix, kind in _CUE_SUFFIX:
        if word.endswith(suffix) and len(word) > len(suffix):
            return kind
    return None


# Credential words without their vowels: a name written short drops them (``crd``, ``tkn``,
# ``pswd``, ``scrt``), keeping the first two letters.
_VOWELS = re.compile(r"[aeiouy]")
_SKELETONS = {
    _VOWELS.sub("", w): kind
    for w, kind in (
        ("password", "password"),
        ("passphrase", "password"),
        ("secret", "secret"),
        ("credential", "secret"),
        ("credentials", "secret"),
        ("token", "token"),
    )
}


# Where a text may hold one (for :func:`_present_cues`): a vowel-less word opening as one.
_HEADS = "|".join(sorted({k[:2] for k in _SKELETONS}))
_SKELETON_HEAD = re.compile(f"(?<![a-z])(?:{_HEADS})[b-df-hj-np-tv-xz]+(?![a-z])")


def _skeleton_kind(word: str) -> str | None:
    """The kind of the credential word ``word`` abbreviates: its letters in the word's
    consonants in order, the first two kept (``crd`` of credential; ``prd`` is no password)."""
    for skeleton, kind in _SKELETONS.items():
        if word[:2] != skeleton[:2]:
            continue
        at = 0
        for ch in word:
            at = skeleton.find(ch, at) + 1
            if at == 0:
                break
        else:
            return kind
    return None


@memo_short
def name_cue(name: str) -> str | None:
    """The kind a name (``myApiKeyProd``, ``X_auth_tok``, ``htpasswd``) cues, if any."""
    words = [w.lower() for w in _CAMEL.findall(name)]
    if not words or any(w in _VETO_WORDS for w in words) or words[-2:] == ["site", "key"]:
        return None  # a captcha's site key (``data-sitekey``, ``siteKey``) is public
    if words[-3:] in KEY_ID_NAMES:
        return "api_key"
    if len(words) > 1 and words[-1] in DESCRIPTOR_WORDS:
        return None
    for i, word in enumerate(words):
        kind = _word_kind(word)
        if kind == "api_key" and i > 0 and words[i - 1] in DATA_KEY_WORDS:
            continue
        if kind:
            return kind
    return None


def _words_cue(before: str) -> str | None:
    """A credential word among the last names before the value (links not counted)."""
    names = [n for n in _NAME.findall(before) if n.lower() not in _LINKS]
    back = names[-_NAMES_BACK:]
    if any(w.lower() in _VETO_WORDS for n in back for w in _CAMEL.findall(n)):
        return None
    for name in reversed(back):
        kind = name_cue(name)
        if kind:
            return kind
    return None


def _ja_cue(before: str) -> str | None:
    """The kind of the last Japanese or other-language credential word before the value,
    with only what :data:`_JA_GAP` (or :data:`WORLD_GAP`) allows between."""
    best: tuple[int, str] | None = None
    for cues, gap in ((_JA_CUES, _JA_GAP), (WORLD_CUES, WORLD_GAP)):
        for word, kind in cues:
            at = before.rfind(word)
            found = at >= 0 and gap.fullmatch(before, at + len(word))
            if found and (best is None or at > best[0]):
                best = (at, kind)
    return best[1] if best else None


def _colon_cue(before: str, after: str) -> bool:
    """The value is the last field of a credentials line: ``host:port:db:user:<v>`` (two or
    more fields before it), or ``user:<v>`` quoted or followed by ``@host``."""
    match = _COLON_FIELDS.search(before)
    if match is None or after.startswith(":"):
        return False
    fields = match.group(1).split(":")[:-1]
    if any(f.lower() in _NOT_USER_FIELDS for f in fields):
        return False
    if len(fields) >= 2:
        return True
    opener = before[match.start(1) - 1 : match.start(1)]
    return after.startswith("@") or (opener in "'\"`" and opener != "" and after[:1] == opener)


# A value alone on the line after a command printing a file (``cat config/master.key``):
# the file's name is the cue (``master.key``, ``db_password.txt``, ``api-token``).
_PRINT_FILE = re.compile(
    r"(?:^|[\s$>#])(?:cat|type|more|less|head|tail|bat|Get-Content|gc)[ \t]+(?:-\S+[ \t]+)*"
    r"[\"']?(?:[^\s\"']*[/\\])?(?P<name>[^\s/\\\"']+)[\"']?[ \t]*$"
)


# A line that ends with a value's marker and a shell's line continuation (``TOKEN=[...]\``).
_CONTINUED_MARKER = re.compile(re.escape(MARKER_PREFIX) + r"(\w+)\]\\$")
# A chat line's speaker (``田中: ``, ``user: ``, ``[10:42] mika: ``).
_SPEAKER = re.compile(r"[ \t]*(?:\[[\d:]{4,8}\][ \t]*)?[^\s:：]{1,20}[ \t]*[:：][ \t]*")
# A line that is a value's marker and nothing else, after its speaker's label: a value sent
# in two messages (a chat cuts long ones), whose rest the same speaker sends next, or on the
# message's next line. A YAML key's line (``secret: [...]``) above another key's random value
# is no such pair.
_MARKER_LINE = re.compile(
    f"(?P<speaker>{_SPEAKER.pattern})?" + re.escape(MARKER_PREFIX) + r"(\w+)\][ \t]*"
)
# A line that ends with a name and a colon (or nothing): the name, for the value below it.
_ENDING_WORD = re.compile(r"([A-Za-z][A-Za-z0-9_]*)[ \t]*:?[ \t]*$")


def _file_cue(text: str, start: int) -> str | None:
    """The kind the printed file's name cues when the value opens its line (see above), or
    that the line before cues by ending with a credential word (``my token:``,
    ``アクセストークン（長期）は``)."""
    line_start = text.rfind("\n", 0, start) + 1
    lead = text[line_start:start]
    if line_start == 0 or (lead.strip() and not _SPEAKER.fullmatch(lead)):
        return None
    prev_start = text.rfind("\n", 0, line_start - 1) + 1
    previous = text[prev_start : line_start - 1][-_WINDOW:]
    # A value cut by a shell's line continuation (``TOKEN=abc\`` then ``def``) or sent in two
    # messages: its first part is taken already, the rest goes with it.
    continued = _CONTINUED_MARKER.search(previous)
    if continued:
        return continued.group(1)
    sent = _MARKER_LINE.fullmatch(previous)
    if sent and lead.strip() in ("", (sent.group("speaker") or "").strip()):
        return sent.group(2)
    if lead.strip():
        return None
    ending = _ENDING_WORD.search(previous)
    if ending and (kind := name_cue(ending.group(1))):
        return kind
    if not previous.isascii() and (kind := _ja_cue(previous.rstrip())):
        return kind
    match = _PRINT_FILE.search(text, prev_start, line_start - 1)
    if match is None:
        return None
    parts = [p for p in re.split(r"[._-]+", match.group("name")) if p]
    if any(w.lower() in _VETO_WORDS for p in parts for w in _CAMEL.findall(p)):
        return None
    return next((k for p in parts if (k := name_cue(p))), None)


def _line_before(text: str, start: int) -> str:
    line_start = text.rfind("\n", 0, start) + 1
    return text[max(line_start, start - _WINDOW) : start]


# Every credential word holds one of these (lower-cased), so a text without any has no word
# cue anywhere: looked for once a text, not once a value (substring tests of the lowered
# text; one case-insensitive alternation costs several times more).
_ALL_STEMS = {*_CUE_WORDS, *(part for part, _ in _CUE_INSIDE), *(s for s, _ in _CUE_SUFFIX)}
_WORD_STEMS = tuple(sorted(s for s in _ALL_STEMS if not any(o != s and o in s for o in _ALL_STEMS)))


def _present_cues(text: str) -> tuple[bool, bool]:
    """Whether ``text`` holds a credential word's stem at all, and a Japanese cue at all."""
    lowered = text.lower()
    words = any(stem in lowered for stem in _WORD_STEMS) or bool(_SKELETON_HEAD.search(lowered))
    others = not text.isascii() or any(w in lowered for w in _ASCII_WORLD_CUES)
    return words, others and any(word in text for word, _ in (*_JA_CUES, *WORLD_CUES))


# An OpenPGP key's id (16 hex digits) on a line about gpg: it names a key, public or secret.
_PGP_LINE = re.compile(r"(?i)\b(?:gpg|pgp|openpgp|gnupg|key ?id)\b")
# The last marker on the line before a value (its kind), or the rescan's word for one.
_SPENT = re.compile(
    r"(?s:.*)(?:" + re.escape(MARKER_PREFIX) + r"([^\]\s]{1,64})\]|(?<!\[)\bREDACTED\b(?!:))"
)
# What joins the parts of one value (``<id>:<secret>``, ``<key>.<sig>``).
_GLUE = frozenset({"", ":", ".", "/", "-", "_", "+", "="})
_LIST_MARKS = " \t,;|\"'"


def _cue(
    text: str,
    start: int,
    end: int,
    value: str,
    grade: str,
    present: tuple[bool, bool] = (True, True),
) -> str | None:
    """The marker kind of the cue before ``text[start:end]``, or None without one. A
    one-case value (hex, base36) needs a credential word: a flag or a colon line is too
    weak a sign beside a commit or a digest. ``present`` is :func:`_present_cues` of
    ``text``: the word and Japanese cues are not looked for where the text has none."""
    before = _line_before(text, start)
    if _PGP_LINE.search(before) and PGP_KEY_ID.fullmatch(value):
        return None  # ``gpg: key 3AA5C34371567BD2: public key imported``: a key's name
    # A cue is spent on the value it named: past a marker (``DB_PSWD=[REDACTED:password]
    # id=<hex>``) the words before it cue nothing, the marker's own word least of all.
    # An export's rescan reads each marker as the word ``REDACTED`` (``exports/proof.py``),
    # and must find what the export's scrub found: the word spends the cue as well.
    spent = _SPENT.search(before)
    if spent is not None:
        # Glued on (``Bearer [REDACTED:bearer_token]:<hex>``): the same value's rest; after
        # a comma alone (``tokens: [REDACTED:token], <v>``), the next of a list.
        rest = before[spent.end() :]
        if rest in _GLUE or not rest.strip(_LIST_MARKS):
            return spent.group(1) or "secret"
        before = rest
    after = text[end : end + 1]
    kind = (_words_cue(before) if present[0] else None) or (_ja_cue(before) if present[1] else None)
    if kind is None and (not before.strip() or _SPEAKER.fullmatch(before)):
        kind = _file_cue(text, start)
    if kind and (grade == "mixed" or kind != "signature"):
        return kind
    line_start = text.rfind("\n", 0, start) + 1
    # The call's literal opens right before the value (``$`` also matches before a last
    # newline): no quote there, no call to look for.
    quoted = text[max(0, start - 2) : start].rstrip("\n")[-1:] in ('"', "'")
    if quoted and _CALL_BEFORE.search(text, max(line_start, start - _CALL_WINDOW), start):
        return "token"
    if quoted and _CALL_LINES_BEFORE.search(text, max(0, start - _CALL_WINDOW), start):
        return "password"
    if grade != "mixed":
        if _data_key_cue(before, value):
            return "api_key"
        # Hex or one-case: a signature or digest line (``Signature: 8a47...``) is public; a
        # table column headed by a credential word is not.
        kind = _table_cue(text, start)
        return kind if kind in ("password", "secret", "token", "api_key") else None
    if _FLAG_BEFORE.search(before) or _USER_FLAG.search(before):
        return "password"
    if _colon_cue(before, after):
        return "password"
    if _USER_NAME_BEFORE.search(before):
        return "password"
    if _PAIR_BEFORE.search(before):
        line_start, line_end = _line_at(text, start)
        if _LOGIN.search(text, line_start, line_end):
            return "password"
    return _table_cue(text, start)


# Inside a password hash in crypt's or PHC's form (``$argon2id$v=19$m=...,p=4$<salt>$<hash>``):
# the salt and the hash are random, yet the string alone is a format's example or a stored
# hash; after its user's name the ``password_hash`` rule has taken it already.
_IN_HASH = re.compile(r"\$(?:2[aby]|1|5|6|y|apr1|argon2(?:id|i|d)|scrypt|7)\$[^\s\"'`:]*\Z")


# One case of letters and digits, some letters past ``f``: no hex digest, and a draw.
_BASE36_DRAW = re.compile(r"(?=[a-z0-9]*[g-z])[a-z0-9]{24,64}|(?=[A-Z0-9]*[G-Z])[A-Z0-9]{24,64}")


def _data_key_cue(before: str, value: str) -> bool:
    """``routing_key: <draw>`` (PagerDuty's events key): a data key's name (``routing_key``,
    ``partition_key``) holds a name, an id or a digest, so it is no cue, unless the value is a
    base36 draw, which is none of these."""
    names = _NAME.findall(before)[-1:]
    words = [w.lower() for n in names for w in _CAMEL.findall(n)]
    return (
        len(words) >= 2
        and words[-1] == "key"
        and words[-2] in DATA_KEY_WORDS
        and not any(w in _VETO_WORDS or w in _PUBLIC_WORDS for w in words)
        and _BASE36_DRAW.fullmatch(value) is not None
        and sum(c.isdigit() for c in value) >= 4
        and _near_random(value)
    )


def _in_pem_block(text: str, start: int) -> bool:
    begin = text.rfind("-----BEGIN", 0, start)
    return begin >= 0 and text.rfind("-----END", begin, start) < 0


def _public_context(text: str, start: int) -> bool:
    """Whether the words right before ``start`` say a public value follows (a digest, a
    key's type, an id), or ``start`` is inside a PEM block or a password hash."""
    before = _line_before(text, start)
    if _PUBLIC_BEFORE.search(before):
        return True
    names = _NAME.findall(before)[-_NAMES_BACK:]
    words = [w.lower() for n in names for w in _CAMEL.findall(n)]
    if any(w in _VETO_WORDS or w in _PUBLIC_WORDS for w in words):
        return True
    if _IN_HASH.search(text, max(0, start - 96), start):
        return True
    return _in_pem_block(text, start)


# Public values a random draw's shape: an EVM address (``0x`` and 40 hex digits, in
# EIP-55's mixed case), IPFS content ids (CIDv0 ``Qm...``, CIDv1 ``bafy...``), and a
# publishable key (Stripe's and PAY.JP's ``pk_live_``/``pk_test_``, PostHog's project key
# ``phc_``), which pages embed.
_PUBLIC_SHAPE = re.compile(
    r"0x[0-9a-fA-F]{40}|Qm[1-9A-HJ-NP-Za-km-z]{44}|baf[a-z2-7]{50,}|" + PUBLIC_TOKEN.pattern
)


@memo_short
def strong(value: str) -> bool:
    """Whether ``value`` is random enough to be a credential wherever it stands (the
    module doc): 32 characters or more drawn from both cases and digits, or a short issuer
    word before a long random body, with the entropy such a draw has; not base64 of text."""
    n = len(value)
    if n < _STRONG_LEN or n > _MAX_LEN:
        return False
    if value.startswith("eyJ") and value.count(".") == 2 and published_jwt(value):
        return False
    # The cheap tests first: most long runs (hex digests, ids) fail on their classes.
    lower, upper, digit, _ = _classes(value)
    mixed = lower >= 2 and upper >= 2 and digit >= 2
    prefixed = _PREFIXED.fullmatch(value)
    if not mixed and prefixed is None:
        return False
    # A version inside (``pkg@0.5.0#pkg-0.5.0.dist-info``) says a name, not a draw.
    if value.startswith("AAAA") or _INNER_VERSION.search(value) or _encoded_text(value):
        return False
    head = _HEAD_WORD.match(value)
    if head and head.group(1).lower() in _PUBLIC_PREFIXES:
        return False
    if prefixed:
        body = prefixed.group(2)
        if not _not_a_value(body) and randomness(body) is not None and _near_random(body):
            return True
    if not mixed or _not_a_value(value):
        return False
    return _near_random(value)


def _near_random(value: str) -> bool:
    """Whether ``value``'s entropy is near what a draw of its length from its alphabet has
    on average (a word-made or repetitive value falls well short)."""
    size = _alphabet(value, *_classes(value))
    if entropy(value) < _STRONG_RATIO * _expected_entropy(len(value), size):
        return False
    # An alphabet written out (``ABC...xyz0123``) has every character once, as random as
    # entropy can tell; a draw seldom puts one character right after its predecessor.
    steps = sum(1 for a, b in itertools.pairwise(value.lower()) if ord(b) - ord(a) == 1)
    if steps * 4 >= len(value):
        return False
    # Words (``pkg_name-2.6.0.dist-info/METADATA``): a random draw of both cases seldom runs
    # five letters of one case, words do; over a third of the value in such runs is words.
    worded = sum(len(w) for w in _ONE_CASE_RUN.findall(value))
    return worded * 3 < len(value)


@functools.lru_cache(maxsize=1024)
def _expected_entropy(n: int, size: int) -> float:
    """The mean Shannon entropy (bits per character) of ``n`` characters drawn uniformly
    from ``size``: each character's count is binomial, so the mean of ``c log c`` is a sum."""
    p = 1 / size
    mean = sum(
        math.comb(n, j) * p**j * (1 - p) ** (n - j) * j * math.log2(j) for j in range(1, n + 1)
    )
    return math.log2(n) - size * mean / n


def _encoded_text(value: str) -> bool:
    """Whether ``value`` is base64 of printable text (``echo <b64> | base64 -d``), ASCII or
    UTF-8: encoded words, not a random draw (whose bytes are almost never all printable)."""
    body = value.rstrip("=")
    if not _BASE64_BODY.fullmatch(body):
        return False
    try:
        decoded = base64.b64decode(body + "=" * (-len(body) % 4), validate=True)
    except (binascii.Error, ValueError):
        return False
    if not decoded:
        return False
    if all(0x20 <= b < 0x7F or b in (9, 10, 13) for b in decoded):
        return True
    # Text in any script (a Japanese CSV): random bytes are almost never valid UTF-8.
    try:
        words = decoded.decode("utf-8")
    except UnicodeDecodeError:
        return False
    return all(c.isprintable() or c in "\t\r\n" for c in words)


_CREDENTIAL_KEY = re.compile(r"(?i)pass|secret|token|key|auth|cred|sig|session|cookie")


def encoded_data(value: str) -> bool:
    """Whether ``value`` is base64 of a JSON object none of whose keys names a credential
    (``eyJwYWdlIjogM30`` is ``{"page": 3}``): a pagination cursor, a preferences cookie, a
    state parameter, written so a server reads it back, not drawn."""
    if not value.startswith("eyJ") or not _encoded_text(value):
        return False
    body = value.rstrip("=")
    try:
        data = json.loads(base64.b64decode(body + "=" * (-len(body) % 4)))
    except ValueError:
        return False
    return isinstance(data, dict) and not any(_CREDENTIAL_KEY.search(str(k)) for k in data)


def _classes(value: str) -> tuple[int, int, int, int]:
    """How many lower-case letters, capitals, digits and other characters ``value`` has."""
    lower = sum(1 for c in value if "a" <= c <= "z")
    upper = sum(1 for c in value if "A" <= c <= "Z")
    digit = sum(1 for c in value if "0" <= c <= "9")
    return lower, upper, digit, len(value) - lower - upper - digit


def _line_at(text: str, start: int) -> tuple[int, int]:
    """The bounds of the line holding ``start``."""
    line_start = text.rfind("\n", 0, start) + 1
    line_end = text.find("\n", start)
    return line_start, len(text) if line_end < 0 else line_end


def _table_cue(text: str, start: int) -> str | None:
    """In a Markdown table row, the kind its column's header names (``| password |``)."""
    line_start = text.rfind("\n", 0, start) + 1
    row = text[line_start:start]
    if not row.lstrip().startswith("|"):
        return None
    column = row.count("|")
    at = line_start
    for _ in range(_TABLE_ROWS_BACK):
        if at == 0:
            return None
        previous = text.rfind("\n", 0, at - 1) + 1
        line = text[previous : at - 1]
        if _TABLE_RULE.fullmatch(line):
            if previous == 0:
                return None
            header = text[text.rfind("\n", 0, previous - 1) + 1 : previous - 1]
            cells = header.split("|")
            if column >= len(cells) or _PUBLIC_WORDS & word_set(cells[column].lower()):
                return None
            return _words_cue(cells[column])
        if not line.lstrip().startswith("|"):
            return None
        at = previous
    return None


def _cued_pairs(text: str, counts: Counter[str], take: Callable[[str], bool]) -> str:
    """``user:pw`` right after a credential word: the pair's value, short or one-case."""
    if ":" not in text:
        return text
    out: list[str] = []
    last = 0
    for match in _CUED_PAIR.finditer(text):
        colon = match.start()
        user = _PAIR_USER.search(text, max(0, colon - 65), colon)
        value = match.group("value").rstrip(_TRAILING)
        if (
            user is None
            or len(value) < 6
            or not _DIGIT.search(value)
            or not _LETTER.search(value)
            or _PORT.fullmatch(value)
            or user.group(0).lower() in _NOT_USER_FIELDS
            or _not_a_value(value)
            or not take(value)
        ):
            continue
        kind = _words_cue(_line_before(text, user.start()))
        if kind is None or kind == "signature":
            continue
        counts["password"] += 1
        out += [text[last : colon + 1], marker("password")]
        last = colon + 1 + len(value)
    return "".join(out) + text[last:] if out else text


class Backstop:
    """Finds cued random values in text that the rules have already scrubbed."""

    def __init__(self, take: Callable[[str], bool] = lambda value: True) -> None:
        # ``take``: the scrubber's say on a found value (its allowlist).
        self._take = take

    def _value(
        self,
        text: str,
        match: re.Match[str],
        counts: Counter[str],
        present: tuple[bool, bool] = (True, True),
    ) -> tuple[str, str] | None:
        """The run's replacement and its kind, or None when it holds no cued value."""
        raw = match.group(0)
        # Most runs are names and words: without a digit, a value must mix cases.
        if (raw.islower() or raw.isupper()) and not _DIGIT.search(raw):
            return None
        start = match.start()
        trimmed = _trimmed(raw, text, start)
        end = start + len(trimmed)
        # ``name=value`` in one run (``myApiKeyProd=...``, ``-Dx.keyStorePassword=...``,
        # ``sig=...``): the name is the cue. ``-pVALUE``: the flag is.
        candidates: list[tuple[int, str | None]] = []
        whole = True
        eq = trimmed.find("=")
        if 0 < eq < len(trimmed) - 1:
            head = trimmed[:eq].lstrip("-")
            kind = name_cue(head.rsplit(".", 1)[-1]) if head else None
            candidates.append((start + eq + 1, kind))
            # ``key=value`` in code or a query is a name and its value, not one token;
            # ``RVkfC35tp=hi`` (a random head) is one password.
            whole = not _code_name(head)
        pct = trimmed.find("%")
        if 0 < pct < len(trimmed) - 1 and _USER_FLAG_BEFORE.search(_line_before(text, start)):
            candidates.append((start + pct + 1, "password"))
        glued = _GLUED_FLAG.match(trimmed)
        if glued and (start == 0 or text[start - 1].isspace()):
            candidates.append((start + 2, "password"))
        # A run right after a backslash opens with an escape's letter (``\x45xt...``,
        # ``\nDB_PASSWORD=...``): only its ``name=value`` split is a value.
        if whole and not (start and text[start - 1] == "\\"):
            # Whole first: ``SRyIS*a%=6IOw`` is one password, not a name and a value.
            candidates.insert(0, (start, None))
        if text[end : end + 1] == "(":
            return None  # a call: ``SecretStr(value)`` is code
        for at, kind in candidates:
            value = text[at:end]
            if not self._take(value):
                continue
            grade = randomness(value)
            if grade is None or _not_a_value(value):
                # Only a token random enough to be its own cue, standing whole.
                if kind is not None or at != start or not self._strong(text, at, value):
                    continue
                kind = "token"
            elif kind is None:
                kind = _cue(text, at, end, value, grade, present)
                if kind is None:
                    if not self._strong(text, at, value):
                        continue
                    kind = "token"
            elif grade != "mixed" and at != start and text[at - 2 : at] in ("-p", "-P"):
                continue
            counts[kind] += 1
            return kind, text[start:at] + marker(kind) + text[end : match.end()]
        return None

    @staticmethod
    def _strong(text: str, at: int, value: str) -> bool:
        return strong(value) and not _public_context(text, at)

    def _urls(self, text: str, counts: Counter[str]) -> str:
        if "://" not in text:
            return text

        def url(match: re.Match[str]) -> str:
            whole = match.group(0)
            head, _, rest = whole.partition("://")
            cut = len(rest)
            for stop in "?#":
                at = rest.find(stop)
                if at >= 0:
                    cut = min(cut, at)
            host, _, path = rest[:cut].partition("/")
            segments = path.split("/")
            hooked = _HOOK_SEGMENT.search(host.split(".", 1)[0]) is not None
            changed = False
            for i, segment in enumerate(segments):
                value = segment
                # Telegram's /bot<token>/: the word and the token in one segment.
                if hooked or segment[:3].lower() == "bot":
                    value = segment[3:] if segment[:3].lower() == "bot" and not hooked else value
                    if hooked or value != segment:
                        short = _SHORT_HOOK_TOKEN.fullmatch(value) is not None
                        random = randomness(value) is not None and not _camel_words(value)
                        if (
                            (random or short)
                            and not _UUID.search(value)
                            and not _EXTENSION.search(value)
                            and not is_placeholder(value)
                            and self._take(value)
                        ):
                            counts["webhook_token"] += 1
                            segments[i] = segment[: len(segment) - len(value)] + marker(
                                "webhook_token"
                            )
                            changed = True
                            continue
                # A token standing whole as a segment (``/feeds/<token>/team.ics``), unless
                # the segment before names content addressing (``/ipfs/<cid>``).
                after_public = i > 0 and segments[i - 1].lower() in _PUBLIC_SEGMENTS
                if not after_public and self._take(segment) and strong(segment):
                    counts["token"] += 1
                    segments[i] = marker("token")
                    changed = True
                    continue
                hooked = hooked or _HOOK_SEGMENT.search(segment) is not None
            if not changed:
                return whole
            return f"{head}://{host}/{'/'.join(segments)}{rest[cut:]}"

        return _URL.sub(url, text)

    def _quoted(self, text: str, counts: Counter[str]) -> str:
        """A quoted value holding a mark that ends a run (``value="ab&cd"``, ``'x:y@z'``):
        the marks inside the quotes are the value's own, so it is judged whole."""
        if '"' not in text and "'" not in text:
            return text

        present = _present_cues(text)

        def quoted(match: re.Match[str]) -> str:
            value = match.group("value")
            if _VALUE_ONLY.fullmatch(value):
                return match.group(0)  # the runs see it whole already
            grade = randomness(value)
            if grade is None or _not_a_value(value) or not self._take(value):
                return match.group(0)
            start, end = match.span("value")
            kind = _cue(text, start, end, value, grade, present)
            if kind is None:
                return match.group(0)
            counts[kind] += 1
            return match.group("q") + marker(kind) + match.group("q")

        return _QUOTED.sub(quoted, text)

    def scrub(self, text: str, counts: Counter[str]) -> str:
        """``text`` with every cued random value replaced; ``counts`` gains one per marker."""
        text = self._quoted(self._urls(text, counts), counts)
        text = _cued_pairs(text, counts, self._take)
        found = self._values(text, counts)
        # A value this pass took can be the cue of another (a token's rest on the line after
        # it): once more over what it left, so a second scrub finds nothing the first did not.
        return self._values(found, counts) if found != text else found

    def _values(self, text: str, counts: Counter[str]) -> str:
        out: list[str] = []
        last = 0
        kind = ""
        present = _present_cues(text)
        for match in _VALUE.finditer(text):
            # ``<id>:<secret>`` (an FCM server key): the part after a taken value's colon.
            joined = out and match.start() == last + 1 and text[last] == ":"
            if joined and randomness(match.group(0)) and not _not_a_value(match.group(0)):
                counts[kind] += 1
                out += [text[last : match.start()], marker(kind)]
                last = match.end()
                continue
            replaced = self._value(text, match, counts, present)
            if replaced is not None:
                kind = replaced[0]
                out += [text[last : match.start()], replaced[1]]
                last = match.end()
        return "".join(out) + text[last:] if out else text


__all__ = [
    "Backstop",
    "encoded_data",
    "entropy",
    "name_cue",
    "names_a_thing",
    "not_a_worded_value",
    "randomness",
    "strong",
]

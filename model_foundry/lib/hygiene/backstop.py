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
  words (``password``, ``pwd``, ``tok``, ``apiKey``, ``keyStorePassword``, ``パスワード``),
  a password flag (``-p``/``-P``, attached or not), the last field of a colon-separated
  credentials line (``host:port:db:user:<pw>``, ``'user:<pw>'``, ``user:<pw>@host``),
  ``-U user%<pw>``, or, in a URL, a path segment after a webhook/hook/token/bot segment.

What training needs stays: git SHAs, digests and UUIDs (hex or one-case values are taken only
after a credential word or a hook segment, and words naming a digest veto the cue), versions,
paths, file names, code identifiers (snake, camel, dotted), placeholders and our markers.
The whole value becomes a marker of the kind its cue names (``password``, ``token``,
``secret``, ``api_key``, ``webhook_token``).
"""

from __future__ import annotations

import itertools
import math
import re
from collections import Counter
from collections.abc import Callable

from model_foundry.lib.hygiene.names import DATA_KEY_WORDS, DESCRIPTOR_WORDS, NOT_SECRET_WORDS
from model_foundry.lib.hygiene.placeholders import MARKER_PREFIX, is_placeholder, marker, word_set

# A value: a run of the characters passwords and tokens are made of. ``:`` and ``@`` end it
# (they split credential lines and ``user@host``), ``?``/``&`` end a query's pairs, and
# brackets, quotes and commas are the text around it.
_VALUE_CHARS = r"A-Za-z0-9!#$%*+\-./=^_~"
_VALUE = re.compile(rf"[{_VALUE_CHARS}]{{10,}}")
# Shortest and longest values considered: shorter is a word or a port, longer is a blob
# (a PEM body, a data URI) that other rules decide.
_MIN_LEN = 10
_MAX_LEN = 256
# How far back (characters, same line) a cue may stand, and how many names may separate it
# from the value: ``password for the backup box is X`` is a cue, a word three clauses ago is not.
_WINDOW = 48
_NAMES_BACK = 3

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
_CUE_SUFFIX = (("pass", "password"), ("pwd", "password"), ("key", "api_key"))
# A name with one of these is about a digest, an id or a public value, not a secret.
_VETO_WORDS = word_set(
    """hash hashes digest checksum sha sha1 sha224 sha256 sha384 sha512 md5 crc commit rev
    revision fingerprint integrity public pub etag uuid guid nonce"""
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
)
_JA_GAP = re.compile(r"[^A-Za-z0-9\n]{0,12}(?:ID|Id|id)?[^A-Za-z0-9\n]{0,4}")
# A password flag right before the value (``-p X``, ``-P X``, ``-p=X``) or glued to it
# (``-pX``); ``-U``/``-u``/``--user`` with ``user%pw`` or ``user:pw``.
_FLAG_BEFORE = re.compile(r"(?:^|\s)-[pP](?:[ \t]+|=)[\"']?$")
_GLUED_FLAG = re.compile(r"-[pP](?=[^-])")
_USER_FLAG = re.compile(r"(?:^|\s)(?:-[uU]|--user(?:name)?)[ \t=]+[\"']?[\w.@-]{1,64}[%:]$")
# The same flag before a run that holds ``user%pw`` whole (``%`` is a value character).
_USER_FLAG_BEFORE = re.compile(r"(?:^|\s)(?:-[uU]|--user(?:name)?)[ \t=]+[\"']?$")
# The fields of a colon-separated credentials line before the value, from a boundary.
_COLON_FIELDS = re.compile(r"(?:^|[\s'\"`=(,\[>])((?:[\w.*-]{1,128}:){1,6})$")
_NOT_USER_FIELDS = word_set(
    """http https ftp ftps ws wss file data mailto urn git ssh sha1 sha224 sha256 sha384
    sha512 md5 arxiv doi isbn tel sip std"""
)
# Where a value ends: a colon right after it is one more field (``host:5432``), a dot ends a
# sentence, a comma a list.
_TRAILING = ".,"
# URLs and the path segments after which a segment is a token.
_URL = re.compile(r"\bhttps?://[^\s\"'<>`)\]]+")
_HOOK_SEGMENT = re.compile(
    r"(?i)hook|token|^bot$|^incoming|^push$|^catch$|^trigger|^notify$|^callback$"
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


def entropy(value: str) -> float:
    """Shannon entropy of ``value``'s characters, in bits per character."""
    n = len(value)
    return -sum(c / n * math.log2(c / n) for c in Counter(value).values())


def _alphabet(value: str, lower: int, upper: int, digit: int, symbol: int) -> int:
    """How many characters the value was likely drawn from: 16 for hex, else its classes'."""
    if not symbol and not (lower and upper) and _HEX.fullmatch(value):
        return 16
    return 26 * bool(lower) + 26 * bool(upper) + 10 * bool(digit) + 16 * bool(symbol)


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
    if lower and upper:
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


def _camel_words(value: str) -> bool:
    """Whether ``value`` is CamelCase words (``AbstractSingletonProxy``, ``HTTPResponse2``):
    every hump two letters or more, digit runs short. A split, not a regex, so a long
    random run costs one pass."""
    parts = _CAMEL.findall(value)
    if "".join(parts) != value:
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


def _not_a_value(value: str) -> bool:
    """Paths, file names, versions, UUIDs, code names and placeholders: never a secret here."""
    if MARKER_PREFIX in value or is_placeholder(value):
        return True
    if value.startswith(("/", "~", "./", "../", "$", "=")):
        return True
    if value.count("/") >= 2 or _EXTENSION.search(value):
        return True
    if _UUID.search(value) or _VERSION.fullmatch(value):
        return True
    if _SNAKE.fullmatch(value) or _camel_words(value.rstrip("!?")) or _RANGES.search(value):
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
    for part, kind in _CUE_INSIDE:
        if part in word:
            return kind
    for suffix, kind in _CUE_SUFFIX:
        if word.endswith(suffix) and len(word) > len(suffix):
            return kind
    return None


def name_cue(name: str) -> str | None:
    """The kind a name (``myApiKeyProd``, ``X_auth_tok``, ``htpasswd``) cues, if any."""
    words = [w.lower() for w in _CAMEL.findall(name)]
    if not words or any(w in _VETO_WORDS for w in words):
        return None
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
    best: tuple[int, str] | None = None
    for word, kind in _JA_CUES:
        at = before.rfind(word)
        found = at >= 0 and _JA_GAP.fullmatch(before, at + len(word))
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


def _line_before(text: str, start: int) -> str:
    line_start = text.rfind("\n", 0, start) + 1
    return text[max(line_start, start - _WINDOW) : start]


def _cue(text: str, start: int, end: int, value: str, grade: str) -> str | None:
    """The marker kind of the cue before ``text[start:end]``, or None without one. A
    one-case value (hex, base36) needs a credential word: a flag or a colon line is too
    weak a sign beside a commit or a digest."""
    before = _line_before(text, start)
    after = text[end : end + 1]
    kind = _words_cue(before) or _ja_cue(before)
    if kind and (grade == "mixed" or kind != "signature"):
        return kind
    if grade != "mixed":
        # Hex or one-case: a signature or digest line (``Signature: 8a47...``) is public.
        return None
    if _FLAG_BEFORE.search(before) or _USER_FLAG.search(before):
        return "password"
    if _colon_cue(before, after):
        return "password"
    return None


class Backstop:
    """Finds cued random values in text that the rules have already scrubbed."""

    def __init__(self, take: Callable[[str], bool] = lambda value: True) -> None:
        # ``take``: the scrubber's say on a found value (its allowlist).
        self._take = take

    def _value(
        self, text: str, match: re.Match[str], counts: Counter[str]
    ) -> tuple[str, str] | None:
        """The run's replacement and its kind, or None when it holds no cued value."""
        raw = match.group(0)
        # Most runs are names and words: without a digit, a value must mix cases.
        if (raw.islower() or raw.isupper()) and not _DIGIT.search(raw):
            return None
        start = match.start()
        trimmed = raw.rstrip(_TRAILING)
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
            grade = randomness(value)
            if grade is None or _not_a_value(value) or not self._take(value):
                continue
            if kind is None:
                kind = _cue(text, at, end, value, grade)
                if kind is None:
                    continue
            elif grade != "mixed" and at != start and text[at - 2 : at] in ("-p", "-P"):
                continue
            counts[kind] += 1
            return kind, text[start:at] + marker(kind) + text[end : match.end()]
        return None

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
                        grade = randomness(value)
                        if (
                            grade is not None
                            and not _UUID.search(value)
                            and not _EXTENSION.search(value)
                            and not is_placeholder(value)
                            and not _camel_words(value)
                            and self._take(value)
                        ):
                            counts["webhook_token"] += 1
                            segments[i] = segment[: len(segment) - len(value)] + marker(
                                "webhook_token"
                            )
                            changed = True
                            continue
                hooked = hooked or _HOOK_SEGMENT.search(segment) is not None
            if not changed:
                return whole
            return f"{head}://{host}/{'/'.join(segments)}{rest[cut:]}"

        return _URL.sub(url, text)

    def scrub(self, text: str, counts: Counter[str]) -> str:
        """``text`` with every cued random value replaced; ``counts`` gains one per marker."""
        text = self._urls(text, counts)
        out: list[str] = []
        last = 0
        kind = ""
        for match in _VALUE.finditer(text):
            # ``<id>:<secret>`` (an FCM server key): the part after a taken value's colon.
            joined = out and match.start() == last + 1 and text[last] == ":"
            if joined and randomness(match.group(0)) and not _not_a_value(match.group(0)):
                counts[kind] += 1
                out += [text[last : match.start()], marker(kind)]
                last = match.end()
                continue
            replaced = self._value(text, match, counts)
            if replaced is not None:
                kind = replaced[0]
                out += [text[last : match.start()], replaced[1]]
                last = match.end()
        return "".join(out) + text[last:] if out else text


__all__ = ["Backstop", "entropy", "name_cue", "randomness"]

"""Values whose name says they are secret: ``DB_PASSWORD=...``, ``"api_key": "..."``,
``--token X``.

A name is split into words (``_``, ``-``, ``.``, camelCase). It is secret when a word holds
``password``/``passwd``/``passphrase``, ``token``, ``secret``, ``credential``/``creds`` or
``auth``, when it ends in ``pass``/``pwd`` or in the word ``key`` (``*_KEY``, ``apiKey``),
or when it starts with ``private``, case-insensitive. Three kinds of exceptions keep
ordinary data intact:

- words that merely contain those letters: ``tokens`` (``max_tokens``), ``tokenizer``,
  ``author``, ``authority``, ``bypass``, ``compass``;
- a last word that describes the secret instead of holding it: ``TOKEN_URL``,
  ``PASSWORD_FILE``, ``token_type``, ``auth_method``, ``api_key_id``, ``token_count``;
- keys of data rather than of locks: ``primary_key``, ``sort_key``, ``request_key``,
  ``public_key`` and the like, and the shell's own ``PWD``/``OLDPWD`` (like ``PATH`` and
  ``HOME``, which never match).

A value is replaced only when it is not a placeholder (see ``placeholders``), not a number
(except for passwords), not a flag, path or URL (other rules look inside those), and, where
it stands unquoted in code, not an identifier (``token=token``, ``password: str``).
"""

from __future__ import annotations

import functools
import re
from collections import Counter

from model_foundry.lib.hygiene.placeholders import PLAIN_VALUES, is_placeholder, marker, word_set
from model_foundry.lib.hygiene.rules import PUBLIC_TOKEN, looks_random

_WORDS = re.compile(r"[A-Z]+(?![a-z])|[A-Z]?[a-z]+|[0-9]+")

_NOT_SECRET_WORDS = word_set(
    """tokens tokenizer tokenizers tokenize tokenized tokenizing tokenization detokenize
    author authors authored authoring authorship authority authorities authoritative
    bypass compass surpass trespass overpass underpass passage passenger passive passthrough
    keyword keywords keyboard keys keyframe keyframes monkey turkey hotkey"""
)
_DESCRIPTORS = word_set(
    """url uri urls endpoint endpoints host hostname port path paths file files dir directory
    type types kind method methods mode scheme schemes header headers name names id ids
    count counts len length size limit limits max min expiry expires expiration ttl timeout
    provider providers version format style required enabled disabled prefix suffix
    stdin env var variable field param params policy rotation hint label hash hashes
    algorithm algo usage index position offset store helper helpers source database command
    cmd prompt ref"""
)
_DATA_KEYS = word_set(
    """primary sort partition foreign cache idempotency dedup request group hash row object
    lookup unique composite join shard routing message event cursor page state record index
    range cluster prompt public dataset version task job map dict item entry node sample
    order natural surrogate dedupe schema column table registry hotkey"""
)
# The shell's OLDPWD is a folder; PWD is one too, but also ODBC's password field (``Pwd=``):
# a path value is never taken (``value_is_secret``), so PWD needs no exception.
_SHELL_NAMES = frozenset({"oldpwd"})
# Secret when the value looks random: a session, cookie or signature is a bearer credential,
# but the words also name settings (``session: default``, ``cookie: strict``).
WEAK_KINDS = frozenset({"session", "cookie", "signature"})
_KEY_COMPOUNDS = ("api", "access", "secret", "private", "master", "signing", "encryption")


def _words(name: str) -> list[str]:
    return [w.lower() for w in _WORDS.findall(name)]


def _word_kind(word: str, last: bool) -> str | None:
    if word in _NOT_SECRET_WORDS:
        return None
    if "password" in word or "passwd" in word or "passphrase" in word or "passcode" in word:
        return "password"
    if last and (word.endswith("pass") or word.endswith("pwd") or word in ("pw", "psk")):
        return "password"  # psk: a Wi-Fi network's pre-shared key (wpa_supplicant, hostapd)
    if "token" in word or "auth" in word or word == "bearer":
        return "token"
    if "secret" in word or "credential" in word or word == "creds":
        return "secret"
    if word.endswith("key") and word[:-3] in _KEY_COMPOUNDS:
        return "api_key"
    if "session" in word and word != "sessions":
        return "session"
    if "cookie" in word and word != "cookies":
        return "cookie"
    if word == "signature":
        return "signature"
    return None


# An access key's id is half its credential (AWS's, R2's ``access_key_id``), and a service
# account's ``private_key_id`` names its key: taken as keys, though ``id`` describes.
KEY_ID_NAMES = (["access", "key", "id"], ["private", "key", "id"], ["secret", "key", "id"])


# Credential words of other languages than English and Japanese, matched as written
# (lowercase, and capitalised where a sentence opens with them): in a key's name
# (``{"пароль": X}``), and before a value in text (the backstop and the word pass say what
# may stand between).
WORLD_CUES = (
    *((w, "password") for w in (
        "mot de passe", "Mot de passe", "contraseña", "Contraseña", "passwort", "Passwort",
        "kennwort", "Kennwort", "senha", "Senha", "wachtwoord", "Wachtwoord", "hasło",
        "Hasło", "lösenord", "Lösenord", "şifre", "Şifre", "пароль", "Пароль", "密码",
        "密碼", "口令", "비밀번호", "암호", "mật khẩu", "Mật khẩu", "salasana", "Salasana",
        "heslo", "Heslo", "jelszó", "Jelszó", "passord", "Passord", "adgangskode",
        "Adgangskode", "kata sandi", "Kata sandi", "parolă", "Parolă", "lozinka", "Lozinka",
        "κωδικός", "Κωδικός", "รหัสผ่าน",
    )),
    *((w, "token") for w in ("токен", "Токен", "令牌", "토큰")),
    *((w, "secret") for w in ("密钥", "秘钥", "金鑰", "ключ", "Ключ")),
)  # fmt: skip
_ASCII_WORLD_NAMES = {w.lower(): kind for w, kind in WORLD_CUES if w.isascii() and " " not in w}
# Japanese credential words a key's name may hold (``"パスワード": X``, ``初期パスワード``).
_JA_NAME_CUES = (
    ("パスワード", "password"),
    ("パスフレーズ", "password"),
    ("暗証番号", "password"),
    ("合言葉", "password"),
    ("トークン", "token"),
    ("シークレット", "secret"),
    ("秘密鍵", "secret"),
)


_SCHEMES = frozenset({"bearer", "token", "basic", "apikey", "key"})
# A framework's prefix for values it puts in the browser's code: public by its own rules
# (``NEXT_PUBLIC_SUPABASE_ANON_KEY``); a provider's secret under one is still taken by its rule.
_PUBLIC_PREFIX = re.compile(r"(?i)^(?:next|expo|nuxt|vite|gatsby)_public_|^public_")


@functools.lru_cache(maxsize=8192)  # keys repeat (content, path, command): decide each once
def secret_name_kind(name: str) -> str | None:
    """The marker kind for a value stored under ``name`` (``password``, ``token``,
    ``secret``, ``api_key``), or None when the name says nothing secret."""
    if not name.isascii():
        for word, kind in (*_JA_NAME_CUES, *WORLD_CUES):
            if word in name:
                return kind
    words = _words(name)
    if not words or name.lower() in _SHELL_NAMES or _PUBLIC_PREFIX.match(name):
        return None
    if words[-3:] in KEY_ID_NAMES:
        return "api_key"
    if len(words) > 1 and words[-1] in _DESCRIPTORS:
        return None
    # Helm's ``existingSecret`` (``existingSecretPasswordKey``) names a Kubernetes Secret
    # that holds the value, never the value.
    if words[:2] == ["existing", "secret"]:
        return None
    for word in words:
        if word in _ASCII_WORLD_NAMES:
            return _ASCII_WORLD_NAMES[word]  # ``Kennwort:``, ``senha=``
    if name.isupper() and len(words) > 1 and words[-1] == "pat":
        return "token"  # a personal access token (GITHUB_PAT); a lone ``pat`` is a pattern
    # kubeconfig's client-key-data holds a private key in base64 (its certificate-data does
    # not: a certificate is public).
    if words[-2:] == ["key", "data"]:
        return "private_key"
    if words[:3] == ["aws", "secret", "access"]:
        return "aws_secret_access_key"
    for i, word in enumerate(words):
        kind = _word_kind(word, last=i == len(words) - 1)
        if kind:
            return kind
    if len(words) > 1 and words[-1] == "key" and words[-2] not in _DATA_KEYS:
        return "api_key"
    if words[0] == "private" and len(words) > 1:
        return "secret"
    return None


# Names in code: ``tokenizer.encode``, ``win32api.RegEnumKey`` (dotted, digits allowed),
# ``rc4_key_st`` (snake case), ``Token``. A password is seldom lowercase words joined by _.
_DOTTED = re.compile(r"[A-Za-z_]\w*(?:\.[A-Za-z_]\w*)+")
_IDENTIFIER = re.compile(
    r"[A-Za-z_][A-Za-z_]*(?:\.[A-Za-z_]\w*)*(?:\(\))?|[A-Z][a-zA-Z]*"
    r"|[A-Za-z_]\w*(?:\.[A-Za-z_]\w*)+|[a-z][a-z0-9]*(?:_[a-z0-9]+)+"
)


def value_is_secret(kind: str, value: str, *, unquoted: bool = False) -> bool:
    """Whether ``value`` under a secret name should go (see the module doc)."""
    # A trailing comma ends an argument in code (``authkey=None,``), not the value.
    text = value.strip().rstrip(",;")
    if len(text) < (3 if kind == "password" else 6):
        return False
    if is_placeholder(text) or text.lower() in PLAIN_VALUES or PUBLIC_TOKEN.fullmatch(text):
        return False
    # An auth scheme before a reference (``Bearer $env:API_TOKEN``, ``Token ${TOKEN}``).
    scheme, _, rest = text.partition(" ")
    if rest and scheme.lower() in _SCHEMES and is_placeholder(rest):
        return False
    # A number, but not a 256-bit key written in hex (``PRIVATE_KEY=0x<64 hex digits>``).
    if re.fullmatch(r"-?\d+(?:\.\d+)?|0x[0-9a-fA-F]{1,63}", text) and kind != "password":
        return False
    # An attribute read (``self._authkey``, ``settings.API_TOKEN``) names the value, quoted
    # or not; a dotted token (``sk.eyJ1...``) is long and mixed, and goes.
    if _DOTTED.fullmatch(text) and not _long_mixed(text):
        return False
    if text.startswith(("-", "/", "./", "~/", "http://", "https://")) and not _base64_key(text):
        return False
    if not unquoted:
        return True
    if " " in text or "(" in text:
        return False
    # A vendor's token prefix marks a token however little follows it: a token cut short
    # (a reason or preview cut at its length limit) is no variable a person named.
    if _TOKEN_PREFIX.match(text):
        return True
    # Code names a variable (``token=tokenizer.encode``); a dotted token (``sk.eyJ1...``)
    # is no name a person wrote.
    return not _IDENTIFIER.fullmatch(text) or _long_mixed(text)


_BASE64_KEY = re.compile(r"/[A-Za-z0-9+/]{19,}={0,2}")


def _base64_key(text: str) -> bool:
    """A base64 key that opens with ``/`` (a WireGuard ``PrivateKey``: 32 bytes, 44
    characters), not a path: base64's alphabet and length, padded or long, few ``/`` (a
    draw of 44 holds one on average) and random-looking between them."""
    return (
        _BASE64_KEY.fullmatch(text) is not None
        and len(text) % 4 == 0
        and (text.endswith("=") or len(text) >= 40)
        and text.count("/") <= 4
        and looks_random(text.replace("/", ""))
    )


# Hugging Face, GitHub, GitLab, OpenAI-style, Slack, npm and PyPI token prefixes.
_TOKEN_PREFIX = re.compile(r"(?:hf_|gh[pousr]_|github_pat_|glpat-|sk-|xox[abprs]-|npm_|pypi-)\w")


def _long_mixed(value: str) -> bool:
    return (
        len(value) >= 20
        and bool(re.search(r"[0-9]", value))
        and bool(re.search(r"[A-Za-z]", value))
    )


_NAME = r"[A-Za-z_][A-Za-z0-9_.-]{0,62}"
# A type annotation: ``str``, ``Optional[str]``, ``str | None``.
_TYPE = r"[A-Za-z_][\w.]{0,30}(?:\[[\w., ]{1,40}\])?(?:[ \t]*\|[ \t]*[A-Za-z_][\w.]{0,30})?"


def _patterns(escaped: bool) -> tuple[re.Pattern[str], ...]:
    """The six name patterns. ``escaped``: also for a text holding a JSON-escaped document
    (``DB_HOST=db\\nDB_PASSWORD=...``), where a name may start right after an escaped break
    or tab and a line ends before one. Built twice because the alternation slows every
    search, and only a text holding ``\\n``, ``\\r`` or ``\\t`` needs them."""
    # Where a name may start: after no name character (or after an escaped break).
    start = r"(?:(?<![\w.-])|(?<=\\[nrt]))" if escaped else r"(?<![\w.-])"
    # A line's start and end.
    sol = r"(?:^|(?<=\\n))" if escaped else "^"
    eol = r"(?:$|(?=\\+[rn]))" if escaped else "$"
    # One character of an unquoted value: no space, and no backslash that starts an escaped
    # break or quote or continues the line (the value ends there; a lone backslash inside a
    # password stays).
    vchar = r"(?:[^\s\\]|\\(?![nrt\\\"'\r\n]))"
    return (
        # "name": "value", name = 'value', name: "value", name => "value"; quotes may be
        # escaped (\"name\": \"value\") when a JSON document sits inside a string. A
        # subscript (``config["SECRET_KEY"] = "v"``) and a type (``pw: str = "v"``, a
        # parameter's default) may stand between the name and the value.
        re.compile(
            rf"""{start}(?P<name>{_NAME})\\?["']?\]?\s*(?::[ \t]*{_TYPE}[ \t]*=|=>|:=|[:=])\s*"""
            rf"""(?P<q>\\?["'])"""
            rf"""(?P<value>[^"'\\\r\n]{{1,512}})(?P=q)"""
        ),
        # Shell and .env lines: NAME=value or export NAME=value. The value ends at a space:
        # what follows is the command it is set for (``PGPASSWORD=x psql ...``) and stays.
        re.compile(
            rf"(?m){sol}(?P<lead>[ \t]*(?:export[ \t]+|set[ \t]+|ENV[ \t]+)?)(?P<name>{_NAME})="
            rf"(?P<value>[^\s\"'\\]{vchar}*)"
        ),
        # YAML and HTTP header lines: name: value.
        re.compile(
            rf"(?m){sol}(?P<lead>[ \t]*(?:-[ \t]+)?)(?P<name>{_NAME}):[ \t]+"
            rf"(?P<value>[^\s\"'#{{\[|>\\][^\r\n#]*?)[ \t]*{eol}"
        ),
        # Inline: a query string (?token=...&), a command's environment (TOKEN=... cmd), an
        # INI or TOML line (``aws_secret_access_key = ...``, spaces around ``=``). Possessive
        # and not before a call or subscript: ``password = getpass.getpass()`` is code.
        re.compile(
            rf"{start}(?P<name>{_NAME})[ \t]*=[ \t]*"
            r"(?P<value>[^\s\"'`&;,<>()\[\]{}\\]{3,512}+)(?![(\[])"
        ),
        # A config directive alone on its line, name and value split by blanks (redis.conf's
        # ``requirepass``, nginx, sshd and the like): code has more on such a line.
        re.compile(
            rf"(?m){sol}[ \t]*(?P<name>{_NAME})[ \t]+(?P<value>[^\s\"'`#=:;{{}}]{vchar}*)"
            rf"[ \t]*;?[ \t]*{eol}"
        ),
        # Mid-line name: value (a header quoted in prose): only a value that looks random.
        re.compile(
            rf"{start}(?P<name>{_NAME}):[ \t]*(?P<value>[A-Za-z0-9._~+/=-]{{16,512}})"
            r"(?![A-Za-z0-9._~+/=-])"
        ),
    )


_ESCAPE = re.compile(r"\\[nrt]")
# A name and its value as two attributes of one element: .NET's and NuGet's ``<add
# key="ClearTextPassword" value="..."/>``, Spring's ``<property name="password" value="..."/>``.
_ATTRIBUTE_PAIR = re.compile(
    rf"""(?<![\w-])(?:key|name)\s*=\s*(?P<q0>["'])(?P<name>{_NAME})(?P=q0)\s+value\s*=\s*"""
    rf"""(?P<q>["'])(?P<value>[^"'\r\n]{{1,512}})(?P=q)"""
)
# A value converted as it is assigned: Go's ``jwtKey = []byte("...")``, Python's
# ``SECRET = b"..."`` or ``bytes("...")``, JavaScript's ``Buffer.from("...")``.
_CONVERTED = re.compile(
    rf"""(?<![\w.-])(?P<name>{_NAME})\s*(?::=|=)\s*"""
    r"""(?:\[\]byte\(|bytes\(|str\(|String\(|Buffer\.from\(|b(?=["']))\s*"""
    r"""(?P<q>["'`])(?P<value>[^"'`\\\r\n]{1,512})(?P=q)"""
)
# What every match of ``_CONVERTED`` holds.
_CONVERSION_MARKS = ("byte(", "bytes(", "str(", "String(", "Buffer.from(", 'b"', "b'")
# A YAML block scalar (``bearer: >-`` then indented lines) whose lines are one token cut in
# pieces, no spaces in any: a token folded to fit a line width.
_BLOCK_SCALAR = re.compile(
    rf"(?m)^(?P<indent>[ \t]*)(?:-[ \t]+)?(?P<name>{_NAME}):[ \t]*[>|][-+]?[ \t]*\n"
    r"(?P<value>(?:(?P=indent)[ \t]+[^\s#]+[ \t]*(?:\n|$))+)"
)


def _sub_block_scalars(text: str, counts: Counter[str]) -> str:
    def repl(match: re.Match[str]) -> str:
        kind = secret_name_kind(match.group("name"))
        value = match.group("value")
        joined = "".join(value.split())
        if kind is None or is_placeholder(joined) or not looks_random(joined):
            return match.group(0)
        counts[kind] += 1
        lead = value[: len(value) - len(value.lstrip(" \t"))]
        end = "\n" if value.endswith("\n") else ""
        return match.group(0)[: match.start("value") - match.start()] + lead + marker(kind) + end

    return _BLOCK_SCALAR.sub(repl, text) if ": >" in text or ": |" in text else text


_PLAIN_PATTERNS = _patterns(escaped=False)
# An assignment quoted whole (systemd's ``Environment="NAME=a b c"``, ``--env "NAME=..."``):
# the value runs to the closing quote, spaces and all, unless it holds another assignment
# (``"token=[SCRUBBED] expires_in=3600"``: pairs, each judged on its own) or opens with a
# placeholder's bracket or a variable's sign.
_QUOTED_ASSIGNMENT = re.compile(
    rf"""(?P<q>["'])(?P<name>{_NAME})=(?P<value>(?![\[<{{$*])[^"'=\r\n]{{1,512}})(?P=q)"""
)
# C's ``#define SECRET_PASS "..."`` (an Arduino sketch's secrets header): name, blanks, a
# quoted string.
_DEFINE = re.compile(
    rf"""#define[ \t]+(?P<name>{_NAME})[ \t]+(?P<q>\\?")(?P<value>[^"\\\r\n]{{1,512}})(?P=q)"""
)
_ESCAPED_PATTERNS = _patterns(escaped=True)
# A flag and its value: quoted, the value runs to the closing quote, spaces and all (``gpg
# --passphrase "seven quiet lanterns"``); bare, to the first blank, and never a flag itself
# (``--batch --passphrase X``: ``--batch`` takes no value).
_FLAG = re.compile(
    r"(?<![\w-])(?P<name>--?[A-Za-z][A-Za-z0-9-]{1,40})(?:=|[ \t]+)(?P<q>[\"'])?"
    r"(?P<value>(?(q)[^\"'\r\n]{3,512}|[^\s\"'`-][^\s\"'`]{2,511}))(?(q)(?P=q))"
)
_FLAG_WORDS = re.compile(
    r"(?i)token|passw|passphrase|passcode|pass$|pwd$|secret|api-?key|credential|auth|private"
)
_PIN_FLAG = re.compile(r"(?i)^(?:(?:new|old|current|user|admin|so|management)-)?(?:pin|puk)$")


def _strongly_random(value: str) -> bool:
    """For the weak kinds: long, and letters mixed with digits (``http.cookies``, ``strict``
    and ``default`` are settings; a session id is not a word)."""
    return (
        len(value) >= 8
        and looks_random(value)
        and bool(re.search(r"[0-9]", value))
        and bool(re.search(r"[A-Za-z]", value))
    )


def _replace_value(match: re.Match[str], kind: str, counts: Counter[str]) -> str:
    start, end = match.span("value")
    counts[kind] += 1
    base = match.start()
    whole = match.group(0)
    return whole[: start - base] + marker(kind) + whole[end - base :]


# psql's interpolation of a variable as a quoted literal: `` :'name'`` (or ``:"name"``).
_PSQL_VARIABLE = re.compile(r"\s:['\"]")


def _sub(
    pattern: re.Pattern[str],
    text: str,
    counts: Counter[str],
    unquoted: bool,
    random_only: bool = False,
    strict: bool = False,
) -> str:
    """``random_only``: the value must look random; ``strict``: random beyond doubt, as for
    the weak kinds (a shape that prose has too, such as a line opening with a name)."""

    def repl(match: re.Match[str]) -> str:
        kind = secret_name_kind(match.group("name"))
        value = match.group("value")
        if kind is None and "=" in value:
            # ``Environment=DOPPLER_TOKEN=...`` (systemd), ``--env=NAME=...``: the value is
            # an assignment of its own, which this match would otherwise step over.
            inner = _sub(pattern, value, counts, unquoted, random_only, strict)
            start, end = match.span("value")
            whole, base = match.group(0), match.start()
            return whole[: start - base] + inner + whole[end - base :]
        if kind is None or not value_is_secret(kind, value, unquoted=unquoted):
            return match.group(0)
        at = match.start("value")
        if _PSQL_VARIABLE.fullmatch(text, max(0, at - 3), at) and value.isidentifier():
            return match.group(0)  # ``PASSWORD :'ro_password'``: psql puts a variable there
        if random_only and not looks_random(value):
            return match.group(0)
        if (strict or kind in WEAK_KINDS) and not _strongly_random(value):
            return match.group(0)
        return _replace_value(match, kind, counts)

    return pattern.sub(repl, text)


def _sub_flags(text: str, counts: Counter[str]) -> str:
    def repl(match: re.Match[str]) -> str:
        flag = match.group("name").lstrip("-")
        kind = secret_name_kind(flag) if _FLAG_WORDS.search(flag) else None
        if kind is None and _PIN_FLAG.search(flag):
            kind = "password"  # ``--pin``, ``--new-pin``, ``--puk`` (ykman, gpg-card)
        quoted = bool(match.group("q"))
        if kind is None or not value_is_secret(kind, match.group("value"), unquoted=False):
            return match.group(0)
        if not quoted and re.fullmatch(r"\$.*|[a-z]+", match.group("value")):
            return match.group(0)
        if kind in WEAK_KINDS and not _strongly_random(match.group("value")):
            return match.group(0)
        return _replace_value(match, kind, counts)

    return _FLAG.sub(repl, text)


# Every name secret_name_kind accepts holds one of these, lower-cased ("apiKey" -> "apikey"):
# a text without any has no secret name, and the six patterns need not walk it.
_NAME_HINTS = (
    "pass",
    "pw",
    "psk",
    "pat",
    "-pin",
    "-puk",
    "token",
    "auth",
    "secret",
    "cred",
    "key",
    "private",
    "session",
    "cookie",
    "signature",
    # Other languages' words for a password without an English hint in them.
    *sorted({w for w in _ASCII_WORLD_NAMES if not any(h in w for h in ("pass", "pw"))}),
)
# The same for a text with other scripts: looked for only where the text is not ASCII.
_NAME_HINTS_OTHER = tuple(
    sorted({w.lower() for w, _ in WORLD_CUES if not w.isascii()} | {w for w, _ in _JA_NAME_CUES})
)


def scrub_named(text: str, counts: Counter[str]) -> str:
    """Replace every value whose name (key, variable, flag) says it is secret."""
    lowered = text.lower()
    if not any(hint in lowered for hint in _NAME_HINTS) and (
        lowered.isascii() or not any(hint in lowered for hint in _NAME_HINTS_OTHER)
    ):
        return text
    quoted, env_line, colon_line, inline, space_line, inline_colon = (
        _ESCAPED_PATTERNS if _ESCAPE.search(text) else _PLAIN_PATTERNS
    )
    text = _sub_block_scalars(text, counts)
    # These two walk the text only where what they need stands in it (a quarter more of
    # this function's time otherwise, on the corpora's texts).
    if any(mark in text for mark in _CONVERSION_MARKS):
        text = _sub(_CONVERTED, text, counts, unquoted=False)
    if "value" in text:
        text = _sub(_ATTRIBUTE_PAIR, text, counts, unquoted=False)
    text = _sub(quoted, text, counts, unquoted=False)
    if "=" in text:
        text = _sub(_QUOTED_ASSIGNMENT, text, counts, unquoted=False)
    if "#define" in text:
        text = _sub(_DEFINE, text, counts, unquoted=False)
    text = _sub(env_line, text, counts, unquoted=False)
    text = _sub(colon_line, text, counts, unquoted=True)
    text = _sub(inline, text, counts, unquoted=True)
    text = _sub(space_line, text, counts, unquoted=True, strict=True)
    text = _sub(inline_colon, text, counts, unquoted=False, random_only=True)
    return _sub_flags(text, counts)


# The word lists, for the backstop's own reading of names (``backstop.name_cue``).
NOT_SECRET_WORDS = _NOT_SECRET_WORDS
DESCRIPTOR_WORDS = _DESCRIPTORS
DATA_KEY_WORDS = _DATA_KEYS

__all__ = [
    "DATA_KEY_WORDS",
    "DESCRIPTOR_WORDS",
    "KEY_ID_NAMES",
    "NOT_SECRET_WORDS",
    "WEAK_KINDS",
    "WORLD_CUES",
    "scrub_named",
    "secret_name_kind",
    "value_is_secret",
]

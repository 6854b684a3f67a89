"""Word passwords: a value the cue alone makes one.

A password of letters (``correcthorsebattery``, ``BlueHarbor``), or of a word with digits or
marks (``Wintergarten8``), looks like a word, so the backstop's randomness test
(:mod:`~model_foundry.lib.hygiene.backstop`) never takes it.
It is taken here only after a cue that makes the next token a value (:data:`_WORD_CUES`):

- a password file's one line of output (``cat .vault_pass``);
- a long password flag (``--password X``, ``-storepass X``) or a tool's own password
  argument: ``sshpass -p X``, ``<tool> login ... -p X`` (docker, az, oc), ``mysql -pX``,
  ``zip -P X``, ``redis-cli -a X``, ``ldapsearch -w X``, ``curl -u user:X``,
  ``lftp -u user,X``, ``net use \\\\host\\share X``, ``net user name X``,
  ``sqlplus user/X@db`` (and rman, expdp, impdp, ``SQL> connect user/X``), an expect
  script's ``send "X\\r"`` after a password prompt, ``-U user%X``, ``'user:X' | chpasswd``,
  ``htpasswd -b file user X``;
- a password key whose value ends the statement (``password: X``, ``pwd=X;``), or stands
  as a shell word or a query's pair (``vault login password=X``, ``?user=u&password=X&``),
  an XML element (``<password>X</password>``), SQL's ``IDENTIFIED BY 'X'`` and
  ``PASSWORD 'X'``;
- ``user:X@host``, a ``.pgpass`` or ``.netrc`` line;
- prose: ``the password is X`` (then a clause's end), ``user pi, password X``
  (``user is pi, pass is X``),
  ``login: admin / X``, and Japanese ``パスワードは X``, ``パスワード: X``,
  ``パスワード（X）``, ``pwは X``.

Six characters or more opening with a letter, not in capitals, not a placeholder, a mode or
a status word (``required``, ``incorrect``); with a digit or a mark, not a code name, a
version, a file name or a UUID either. After a prose cue the word must also not be an English
function word, an adjective or participle (``stored``, ``visible``), a noun that compounds
with password (``policy``, ``manager``) or a password manager's or service's name.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Callable

from model_foundry.lib.hygiene.backstop import (
    _NAMING,
    _NOT_USER_FIELDS,
    name_cue,
    names_a_thing,
    not_a_worded_value,
)
from model_foundry.lib.hygiene.names import DESCRIPTOR_WORDS, WORLD_CUES
from model_foundry.lib.hygiene.placeholders import (
    is_placeholder,
    marker,
    replace_spans,
    says_placeholder,
    word_set,
)

# The value: a letter, then letters, digits or marks (not a path's, a host's or an
# interpolation's, nor ``=``, which joins a name to its value), then the end of the token
# (a sentence's full stop may follow). The backstop takes only random-looking values, so a
# word with digits (``Wintergarten8``) after one of these cues is taken here.
_WORD = r"(?P<value>[A-Za-z][A-Za-z0-9!#%&*+\-?^_~]{5,63})"
_WORD_END = r"(?=$|[\s\"'`,;)}\]]|\.(?:\s|$))"
# A tool's flags must be on its own command line: no pipe, ``;`` or ``&`` between.
_SAME_COMMAND = r"[^\n|;&]{0,200}?[ \t]"
_QUOTE = r"[\"']?"
_CUED_WORD = rf"{_QUOTE}{_WORD}{_QUOTE}{_WORD_END}"
# A quoted value after a cue that quotes it: whatever stands between the quotes, spaces
# included (a passphrase), from 6 to 64 characters.
_PHRASE = r"(?P<value>[^\s\"'][^\"'\n]{4,62}[^\s\"'])"
# In Japanese brackets: a value of ASCII letters, digits and symbols, or a passphrase of
# hiragana words; not the kanji and katakana of a screen's or a button's name
# (``パスワードは「設定画面」から変更``).
_JA_BRACKETED = r"(?P<value>[!-~]{6,64}|[ぁ-ゖー]+(?:[ \u3000][ぁ-ゖー]+)+)"
# Where a key opens: a line (indented, a list item, ``export``), or after a brace or comma.
_KEY_START = r"(?:^[ \t]*(?:[-*][ \t]+|export[ \t]+|set[ \t]+)?|[{,(\[][ \t]*)"
# A value in prose ends its clause, or a preposition or conjunction follows it.
_CLAUSE_END = (
    r"(?=[ \t]*[.,;:!?)](?:\s|$)|[ \t]*$|[ \t]+\("
    r"|[ \t]+(?:until|till|for|and|but|so|on|at|from|since)\b)"
)
# In Japanese: a bracket, a particle of copula, not one of place (``Bitwarden に保存``);
# ``X になりました`` (it is X now) is a copula's に, not a place's.
_JA_END = r"(?![A-Za-z0-9_!#$%&*+\-/=^~@:]|\.\S)(?![ \t]*(?:に(?!なり|なっ|変)|を|へ|から|の|が))"
# Words that follow ``password is`` in prose about passwords rather than in a password.
_PROSE_WORDS = word_set(
    """the that this these those not also only still never always usually often rarely now
    then there here what which where when just very too quite really being either neither
    correct right same different long short simple easy hard complex secure valid unique
    visible empty blank optional mandatory necessary enough sensitive case known personal
    policy policies rules requirements manager managers field fields hash hashes hashing
    length strength expiry rotation change changes recovery protection complexity history
    reuse login logins prompt prompts dialog screen page form vault file files store"""
)
# Password managers and services a password is said to be kept in or sent by.
_SERVICE_WORDS = word_set(
    """keepass keepassxc bitwarden lastpass onepassword dashlane keychain passbolt
    google microsoft slack teams outlook github gitlab okta azure signal whatsapp"""
)
_PROSE_SUFFIXES = (
    "ed", "ing", "ly", "able", "ible", "ive", "ous", "ful", "less", "ment", "tion", "sion",
    "ness", "ity",
)  # fmt: skip
# (words one of which the text must hold, or a pattern it must hold, then the cue's pattern):
# cheap to skip when none is there.
# A .pgpass line's port field: ``:`` alone is in most texts, and the line's pattern, tried
# from every word, costs more than all the others together.
_PORT_FIELD = re.compile(r":(?:\d{1,5}|\*):")
# Other languages' words for a password, as written (``Kennwort``, ``mot de passe``).
_WORLD_PASSWORD = tuple(w for w, kind in WORLD_CUES if kind == "password")
_WORD_CUES: tuple[tuple[tuple[str, ...] | re.Pattern[str], re.Pattern[str]], ...] = tuple(
    (hints, re.compile(pattern, re.MULTILINE))
    for hints, pattern in (
        # --password X, --db-password=X, -storepass X (the flag's name is checked too).
        (
            ("pass", "pwd", "pswd", "pwrd"),
            rf"(?:^|[\s\"'])--?(?P<name>[A-Za-z][\w-]{{0,40}})(?:[ \t]+|=){_CUED_WORD}",
        ),
        # A passphrase quoted after a password flag, spaces and all (``--passphrase 'a b c'``),
        # or given as a file the shell makes of it (``--password-file <(echo 'a b c')``).
        (
            ("pass",),
            # A ``-file`` flag's value is a path, unless the shell writes the file.
            r"(?:^|[ \t])--?(?P<name>[A-Za-z][\w-]{0,40}?)(?:(?:-file)?(?:[ \t]+|=)"
            r"<\((?:echo|printf)[ \t]+(?:-n[ \t]+)?|[ \t]+|=)"
            rf"(?P<q>[\"']){_PHRASE}(?P=q)",
        ),
        # ssh-keygen's old (-P) and new (-N) passphrases.
        (("ssh-keygen",), rf"\bssh-keygen{_SAME_COMMAND}-P[ \t]+(?P<q>[\"']){_PHRASE}(?P=q)"),
        (("ssh-keygen",), rf"\bssh-keygen{_SAME_COMMAND}-N[ \t]+(?P<q>[\"']){_PHRASE}(?P=q)"),
        # Tools whose short flag takes the password, attached or not.
        (
            ("sshpass", "mongo", "login"),
            r"\b(?:sshpass|mongosh|mongo|[\w-]+[ \t]+login)"
            rf"{_SAME_COMMAND}-p[ \t]*{_CUED_WORD}",
        ),
        # The same, a passphrase quoted: ``sshpass -p 'two words'``.
        (
            ("sshpass", "mongo", "login"),
            r"\b(?:sshpass|mongosh|mongo|[\w-]+[ \t]+login)"
            rf"{_SAME_COMMAND}-p[ \t]*(?P<q>[\"']){_PHRASE}(?P=q)",
        ),
        (("sqlcmd", "zip"), rf"\b(?:sqlcmd|zip|unzip){_SAME_COMMAND}-P[ \t]*{_CUED_WORD}"),
        (("redis-cli",), rf"\bredis-cli{_SAME_COMMAND}-a[ \t]+{_CUED_WORD}"),
        (("ldap",), rf"\bldap\w+{_SAME_COMMAND}-w[ \t]+{_CUED_WORD}"),
        # mysql and 7z read ``-p X`` as a database or a file: only ``-pX`` is the password.
        (
            ("mysql", "mariadb", "7z"),
            rf"\b(?:mysql\w*|mariadb\w*|7za?){_SAME_COMMAND}-p{_CUED_WORD}",
        ),
        (("%",), rf"(?:^|\s)(?:-U|--user)[ \t]+[\w.@-]{{1,64}}%{_WORD}{_WORD_END}"),
        # Any tool given a user and a password on one command line: ``-u name ... -P X``,
        # ``--username name --pass X``, Windows' ``/u:name /p:X``. The user option is what
        # makes the short flag a password's (``-p 2222`` alone is a port, ``-P`` a path).
        (
            ("-u", "--user", "/u:", "-l "),
            r"(?:^|[ \t])(?:-[uUl]|--user(?:name)?|--login|/u(?:ser)?:)[ \t=]?[\"']?[\w.@\\-]{1,64}"
            # ``--password-stdin`` is its own flag, not ``--pass`` and a value.
            rf"[\"']?{_SAME_COMMAND}(?:-[pP]|--pass(?:word)?(?![\w-])|/p(?:ass(?:word)?)?:)"
            rf"(?:[ \t]+|=)?{_CUED_WORD}",
        ),
        # The same with a quoted passphrase (``mosquitto_pub -u sensor -P 'two words'``).
        (
            ("-u", "--user", "/u:", "-l "),
            r"(?:^|[ \t])(?:-[uUl]|--user(?:name)?|--login|/u(?:ser)?:)[ \t=]?[\"']?[\w.@\\-]{1,64}"
            rf"[\"']?{_SAME_COMMAND}(?:-[pP]|--pass(?:word)?(?![\w-])|/p(?:ass(?:word)?)?:)"
            rf"(?:[ \t]+|=)?(?P<q>[\"']){_PHRASE}(?P=q)",
        ),
        # A config line of a name and its quoted value, no ``=`` or ``:`` (a game server's
        # ``rcon_password "X"``, Apache's and many daemons' directives).
        (
            ("pass", "pwd", "pswd", "pwrd"),
            r"^[ \t]*(?P<key>[A-Za-z_][\w.-]{0,63})[ \t]+(?P<q>[\"'])"
            r"(?P<value>[^\s\"'][^\"'\n]{2,62}[^\s\"'])(?P=q)[ \t;]*(?://[^\n]*|#[^\n]*)?$",
        ),
        (("chpasswd",), rf"[\w.-]{{1,64}}:{_WORD}{_QUOTE}[ \t]*\|[ \t]*(?:sudo[ \t]+)?chpasswd\b"),
        # A password key whose value ends the statement: ``password: X``, ``"pwd": "X",``,
        # ``pass=X  # comment`` (a ``#`` right after it is the value's own).
        (
            ("pass", "pwd", "pswd", "pwrd"),
            rf"{_KEY_START}{_QUOTE}(?P<key>[A-Za-z_][\w.-]{{0,63}}){_QUOTE}[ \t]*(?::=|[:=])[ \t]*"
            rf"{_QUOTE}{_WORD}{_QUOTE}(?:[ \t]*(?=[,;}})\]]|$)|[ \t]+(?=#))",
        ),
        # user:X@host (a URL's userinfo without its scheme).
        (
            ("@",),
            rf"(?<![\w/:.@%+-])(?P<user>[A-Za-z_][\w.+-]{{0,63}}):{_WORD}@"
            r"(?=[A-Za-z0-9-]+(?:\.[A-Za-z0-9-]+)+|localhost\b|\[)",
        ),
        # A .pgpass line, inside a sentence too: host:port:db:user:X.
        (
            _PORT_FIELD,
            r"(?<![\w.:/-])[\w.*-]{1,128}:(?:\d{1,5}|\*):[\w.*-]{1,128}:[\w.@*-]{1,64}:"
            rf"{_WORD}(?![\w:@]){_WORD_END}",
        ),
        (("machine",), rf"\bmachine[ \t]+\S+\s+login\s+\S+\s+password[ \t]+{_WORD}{_WORD_END}"),
        (
            ("htpasswd",),
            # ``-n`` prints the line instead of writing a file: user and password only.
            r"\bhtpasswd[ \t]+(?:-\w+[ \t]+)*?-\w*b\w*[ \t]+(?:-\w+[ \t]+)*(?:\S+[ \t]+)?\S+[ \t]+"
            rf"{_CUED_WORD}",
        ),
        # curl -u user:X, lftp -u user,X (the tools' documented user[:,]password argument).
        (
            ("curl", "lftp"),
            rf"\b(?:curl|lftp){_SAME_COMMAND}(?:-u|--user)[ \t]+[\"']?[\w.@\\-]{{1,64}}[:,]"
            rf"{_CUED_WORD}",
        ),
        # Windows: net use [drive] \\host\share X [/user:...], net user name X [/add].
        (
            ("net",),
            r"(?i:\bnet[ \t]+use)[ \t]+(?:[A-Za-z]:[ \t]+|\*[ \t]+)?\\\\\S+[ \t]+"
            # The password may follow the user too: ``\\host\share /user:DOM\name X``.
            r"(?:/(?i:user|u):\S+[ \t]+)?"
            rf"{_QUOTE}{_WORD}{_QUOTE}(?=[ \t]+/|[ \t]*$)",
        ),
        (
            ("net",),
            r"(?i:\bnet[ \t]+user)[ \t]+[\"']?[\w.@\\-]{1,64}[\"']?[ \t]+"
            # A dot may join its words (``Quokka.Marmalade7``): no file is given here.
            rf"{_QUOTE}(?P<value>[A-Za-z][A-Za-z0-9!#%&*+\-?^_~.]{{5,63}}){_QUOTE}"
            r"(?=[ \t]+/|[ \t]*$)",
        ),
        # Oracle's connect strings: sqlplus user/X@db, rman target user/X, SQL> connect u/X.
        (
            ("sqlplus", "sqlldr", "rman", "expdp", "impdp", "dgmgrl"),
            r"\b(?:sqlplus|sqlldr|rman|expdp|impdp|dgmgrl)(?:[ \t]+-\w+)*"
            r"(?:[ \t]+(?i:target|catalog|auxiliary|userid)=?)?"
            rf"[ \t]+[\"']?[\w.$#-]{{1,64}}/{_WORD}(?=@|[\s\"']|$)",
        ),
        # ``connect u/X`` alone on its line (a statement, not prose), or before ``@db``.
        (
            ("conn",),
            r"^[ \t]*(?:SQL>[ \t]*)?(?i:conn|connect)[ \t]+[\w.$#-]{1,64}/"
            rf"{_WORD}(?=@|[ \t]*;?[ \t]*$)",
        ),
        # A password file shown: ``cat .vault_pass`` (or ``db_password.txt``, ``~/.token``;
        # the credential word ends its name, so ``token_usage.log`` is no such file) and its
        # one line of output.
        (
            ("cat",),
            r"(?m)\bcat[ \t]+[\"']?(?:\S*/)?[\w.-]*"
            r"(?i:pass(?:word|wd)?|pwd|secrets?|tokens?)(?:\.txt)?"
            r"[\"']?[ \t]*\n"
            rf"[ \t]*{_WORD}[ \t]*$",
        ),
        # An expect script answering a password prompt: expect "password:" / send "X\r".
        (
            ("send",),
            r"\bexpect[ \t][^\n]*(?i:pass|pwd)[^\n]*\n[ \t]*send[ \t]+(?:--[ \t]+)?"
            # Quoted or braced, spaces and all (``send "granite owl sleeps\r"``).
            r"[\"{](?P<value>[^\s\"\\{}][^\"\\\n{}]{4,62}[^\s\"\\{}])(?:\\[rn])?[\"}]",
        ),
        # A password key as a shell word or a query's pair: ``vault login password=X``,
        # ``?user=u&password=X&ssl=true``, systemd's ``Environment=DB_PASSWORD=X``.
        (
            ("pass", "pwd", "pswd", "pwrd"),
            rf"(?:^|(?<=[\s?&;'\"=]))(?P<key>[A-Za-z_][\w.-]{{0,63}})={_QUOTE}{_WORD}{_QUOTE}"
            r"(?=$|[\s&#;,)\]}]|\.(?:\s|$))",
        ),
        # A name and its value as two fields of one object: Postman's and a HAR's
        # ``{"key": "password", "value": X}``, Kubernetes' ``- name: DB_PASSWORD`` then
        # ``value: X``; no other name between.
        (
            ("pass", "pwd", "pswd", "pwrd"),
            r"(?i:[\"']?(?:key|name)[\"']?)[ \t]*[:=][ \t]*[\"']?(?P<key>[A-Za-z_][\w.-]{0,63})"
            r"[\"']?(?:(?!(?i:[\"']?(?:key|name)[\"']?[ \t]*[:=]))[^{}\[\]]){0,120}?"
            rf"(?i:[\"']?value[\"']?)[ \t]*[:=][ \t]*{_QUOTE}{_WORD}{_QUOTE}"
            r"(?=[ \t]*(?:[,}\n]|$))",
        ),
        # An XML element: <password>X</password>, <ns:Password attr="">X</ns:Password>.
        (
            ("pass", "pwd", "pswd", "pwrd"),
            r"<(?P<key>[A-Za-z_][\w.:-]{0,63})(?:[ \t][^<>\n]{0,200})?>[ \t]*"
            rf"{_WORD}[ \t]*</(?P=key)>",
        ),
        # SQL: IDENTIFIED BY 'X', CREATE USER u PASSWORD 'X' (the quotes delimit the value,
        # a passphrase too).
        (
            ("identified", "password"),
            rf"(?i:\bidentified[ \t]+by|\bpassword)[ \t]+(?P<q>['\"]){_PHRASE}(?P=q)",
        ),
        # PowerShell: ConvertTo-SecureString "X" -AsPlainText.
        (
            ("securestring",),
            r"(?i:\bConvertTo-SecureString)[ \t]+(?:-String[ \t]+)?"
            rf"(?P<q>['\"]){_PHRASE}(?P=q)",
        ),
        # Prose: the password is X; user pi, password X; login: admin / X.
        (
            ("passw", "passphrase", "pw"),
            r"(?i:\b(?:password|passphrase|passwd|pw))(?P<prose>)"
            # ``password for the staging admin is X``: a short phrase saying whose.
            r"(?:[ \t]+(?i:for|of|on|to)(?:[ \t]+[\w.@-]{1,40}){1,8}?)?[ \t]+(?i:is|was)[ \t]+"
            rf"{_QUOTE}{_WORD}{_QUOTE}{_CLAUSE_END}",
        ),
        # The same, quoted: whatever the quotes hold (``the password is "four words in
        # lowercase"``).
        (
            ("passw", "passphrase", "pw"),
            r"(?i:\b(?:password|passphrase|passwd|pw))(?P<prose>)"
            r"(?:[ \t]+(?i:for|of|on|to)(?:[ \t]+[\w.@-]{1,40}){1,8}?)?[ \t]+(?i:is|was)"
            rf"[ \t]*:?[ \t]+(?P<q>[\"']){_PHRASE}(?P=q)",
        ),
        (
            ("user", "login", "account"),
            r"(?i:\b(?:user(?:name)?|login|account))(?:[ \t]+(?i:is|was))?"
            r"[ \t]+[`'\"]?[\w.@+-]{1,64}[`'\"]?[ \t]*"
            r"[,;/][ \t]*(?:(?i:and)[ \t]+)?(?i:password|passwd|pw|pass)(?P<prose>)"
            rf"(?:[ \t]+(?i:is|was))?[ \t]*[:=]?[ \t]+{_QUOTE}{_WORD}{_QUOTE}{_CLAUSE_END}",
        ),
        (
            ("log", "cred"),
            r"(?i:\blog[ -]?in|\bcreds?|\bcredentials)(?P<prose>)"
            r"(?:[ \t]+(?i:is|are|was|were)|[ \t]*[:=])[ \t]*[`'\"]?[\w.@+-]{1,64}[`'\"]?"
            rf"[ \t]*/[ \t]*{_CUED_WORD}",
        ),
        # Japanese: パスワードは X, パスワード: X, パスワード（X）, pwは X.
        (
            ("パスワード", "パスフレーズ", "暗証", "合言葉", "pw", "pass"),
            # A JSON key's quotes may be escaped (a tool call's ``\"パスワード\": \"X\"``).
            r"(?:(?:パスワード|パスフレーズ|暗証番号|合言葉)(?:\\?[\"'])?"
            r"[ \t]*(?:は|が|:|：|=|＝|（|\(|「|『)"
            r"|(?<![A-Za-z])(?i:pw|pass)[ \t]*(?:は|：|（|「|『))(?P<prose>)"
            rf"[ \t]*(?:\\?[\"']|[「『（(])?[ \t]*{_WORD}{_JA_END}",
        ),
        # Japanese brackets a short phrase away: パスワードは「X」, パスフレーズ、ひらがなで「X」.
        (
            ("パスワード", "パスフレーズ", "暗証", "合言葉"),
            r"(?:パスワード|パスフレーズ|暗証番号|合言葉)(?P<prose>)[^\n「『]{0,24}?[「『][ \t]*"
            rf"{_JA_BRACKETED}[ \t]*[」』]",
        ),
        # A phrase of any script in brackets, then a copula: パスワードは「夕立のあとの虹」です.
        # A button's or a screen's name in brackets (``「再設定」から``) has no copula after it.
        (
            ("パスワード", "パスフレーズ", "暗証", "合言葉"),
            r"(?:パスワード|パスフレーズ|暗証番号|合言葉)(?P<prose>)(?P<phrase>)は[^\n「『]{0,20}?[「『]"
            r"(?P<value>[^\s「」『』][^\n「」『』]{0,38}[^\s「」『』])[」』](?=です|でした|だ|。|$)",
        ),
        # A password sent in parts, each bracketed after its part's name: 前半「X」, 後半「Y」,
        # where a password or token word stands in the lines before (:data:`_PARTS_CUE`).
        (
            ("前半", "後半", "half"),
            r"(?:前半|後半|(?i:first half|second half))(?P<prose>)(?P<phrase>)(?P<parts>)"
            r"[ \t]*[:：]?[ \t]*"
            r"[「『\"'](?P<value>[^\s「」『』\"']{3,64})[」』\"']",
        ),
        # Other languages' prose, a short phrase saying whose between the password word and
        # its verb: ``a senha do Wi-Fi do escritório é X``, ``der WLAN-Schlüssel lautet X``,
        # ``le mot de passe de la box est « X »``. Unquoted, the value holds a digit or a
        # mark (``est incorrect`` is prose); quoted, whatever the quotes hold.
        (
            (*(w.lower() for w in _WORLD_PASSWORD), "schlüssel"),
            rf"(?:{'|'.join(_WORLD_PASSWORD)}"
            r"|WLAN-Schlüssel|Schlüssel)(?![_A-Za-z-])(?P<prose>)"
            r"(?:[ \t]+[\w.@-]{1,40}){0,6}?,?[ \t]+"
            r"(?:c'est|é|è|est|es|ist|lautet|är|jest|là|is|je|on|er|adalah)[ \t]*:?[ \t]+"
            r"(?P<q>[\"'«„“][ \t]*)?(?P<value>(?(q)[^\s\"'»“”][^\"'»“”\n]{4,62}[^\s\"'»“”]"
            # Letters of any alphabet (``Crêpe-Soleil-42``).
            r"|(?=[^\s,;]*[0-9!#$%&*+?@^~])[^\W\d_](?:[^\W_]|[!#%&*+\-?^_~]){5,63}))"
            rf"(?(q)[ \t]*[\"'»“”]|{_CLAUSE_END})",
        ),
        # Other languages' password words, then a short phrase saying whose and a colon:
        # ``Пароль от базы на стенде: X``, ``mot de passe du compte est : X``.
        (
            tuple(w.lower() for w in _WORLD_PASSWORD),
            # Not joined to more of a name (``kennwort_hint``: the key's rule judges that).
            rf"(?:{'|'.join(_WORLD_PASSWORD)})(?![_A-Za-z-])"
            r"(?P<prose>)"
            rf"[^\n:=：]{{0,32}}?[ \t]*[:=：][ \t]*{_CUED_WORD}",
        ),
    )
)
# A password's or token's word within this many characters before its parts.
_PARTS_CUE = re.compile(r"(?i)パスワード|パスフレーズ|トークン|password|passphrase|token")
_PARTS_BACK = 200
_HINTS = frozenset(h for hints, _ in _WORD_CUES if not isinstance(hints, re.Pattern) for h in hints)
# Words after a password key or flag that say what it is, not what it holds.
_STATUS_WORDS = word_set(
    """incorrect invalid wrong expired missing unknown unset hidden masked generated random
    prompt prompted ask asked provided supplied secure strong weak reset changed mismatch
    omitted redacted protected encrypted hashed plaintext plain stored saved ignored"""
)


def _word_password(value: str) -> bool:
    """Whether a word value after a strong cue can be a password (see the module)."""
    low = value.lower()
    # A strong cue stands before it: a capitalised word with digits (``Wintergarten8``) is the
    # password, not a class name; a code name, a version, a file or a UUID is not.
    if not value.isalpha() and names_a_thing(value):
        return False
    return not (
        value.isupper()
        or is_placeholder(value)
        or low in DESCRIPTOR_WORDS
        or low in _STATUS_WORDS
        or _NAMING.search(value)
    )


def _prose_word(value: str) -> bool:
    """Whether a word after a prose cue is prose (see the module), not a password."""
    low = value.lower()
    if low in _PROSE_WORDS or low in _SERVICE_WORDS:
        return True
    return value.islower() and low.endswith(_PROSE_SUFFIXES)


def word_passwords(text: str, counts: Counter[str], take: Callable[[str], bool]) -> str:
    """Letters-only passwords right after a cue that makes them a value."""
    lower = text.lower()
    # Each hint looked for once, not once per cue naming it.
    present = {h for h in _HINTS if h in lower}
    spans: list[tuple[int, int]] = []
    for hints, pattern in _WORD_CUES:
        if isinstance(hints, re.Pattern):
            if hints.search(text) is None:
                continue
        elif present.isdisjoint(hints):
            continue
        for match in pattern.finditer(text):
            value = match.group("value")
            named = match.groupdict()
            if "name" in named and name_cue(named["name"]) != "password":
                continue
            if "key" in named and name_cue(named["key"].rsplit(".", 1)[-1]) != "password":
                continue
            if "user" in named and named["user"].lower() in _NOT_USER_FIELDS:
                continue
            # A phrase (spaces in it) stood between quotes: the quotes make it a value.
            if "prose" in named and " " not in value and _prose_word(value):
                continue
            if value.startswith("$"):  # a variable the string interpolates
                continue
            if "parts" in named and not _PARTS_CUE.search(
                text, max(0, match.start() - _PARTS_BACK), match.start()
            ):
                continue  # ``the first half "Setup" covers...``: a part of no password
            # A bracketed phrase then a copula: any script, only a placeholder's words stop it.
            kept = says_placeholder(value) if "phrase" in named else not _word_password(value)
            if not kept and take(value):
                spans.append(match.span("value"))
    return replace_spans(text, spans, "password", counts)


# A password word in any of the languages the cues know, then what makes the next token its
# value: ``:``, ``=``, ``is``, Japanese ``は``, and maybe a quote or bracket.
_PASSWORD_WORDS = (
    *("password", "passwd", "passphrase", "pass word", "pwd", "pw", "kennwort", "passwort"),
    *("mot de passe", "contraseña", "senha", "wachtwoord", "hasło", "lösenord", "şifre"),
    *("пароль", "パスワード", "パスフレーズ", "合言葉", "暗証番号", "密码", "비밀번호"),
    "mật khẩu",
)
_MIXED_CUE = re.compile(
    # Joined to no ASCII name (``mypassword``); a CJK word may stand before (``无线密码``).
    rf"(?i)(?<![A-Za-z0-9_-])(?:{'|'.join(map(re.escape, _PASSWORD_WORDS))})"
    # ``is`` and the other languages' copulas: es, est, ist, é, è, är, jest, là, 是, 는/은;
    # or only a blank before another script's word (``логин admin, пароль Бурундук_2026``).
    r"(?:[ \t]*(?:[:=：]|(?:is|es|est|ist|är|jest)\b|[éè](?!\w)|là(?!\w)|是|は|는|은)"
    r"[ \t]*[\"'「(（]?|[ \t]+(?=[^\x00-\x7f]))"
    # Letters with digits or marks, up to a blank, a quote or a bracket, or a sentence's end;
    # or another script's word then 2 digits or more (``하늘빛2026!``, ``青山绿水2026``,
    # ``바다고양이77``): digits first, or one, are a date or a rule (``2024年3月``,
    # ``最低8文字``), and figures that run on into a word (``10文字``) no value.
    r"(?P<value>(?=[^\s\"'」)）]*[A-Za-z])(?=[^\s\"'」)）]*[0-9!#$%&*+?@^~])"
    r"[A-Za-z0-9!#$%&*+\-./=?@^_~]{6,64}?"
    r"|(?=[^\x00-\x7f])[^\W\d_]{2,16}[_.-]?[0-9]{2,8}[!#$%&*+?@^~]{0,3})"
    r"(?=[.,;:!?]?(?:[\s\"'」)）]|$))"
)


def mixed_passwords(text: str, counts: Counter[str], take: Callable[[str], bool]) -> str:
    """A password of letters with digits or marks right after a password word and ``:``,
    ``=``, ``is`` or ``は``, wherever it stands on its line (``# password: sakura-mochi-77
    (for the client)``): the backstop takes only random-looking values, the name rules only
    a value that ends its line. Paths, versions, references and code names stay."""
    lower = text.lower()
    if len(lower) != len(text):  # a letter lowered to another length: positions move
        lower = text
    # Tried only where a password word starts (as ``secrets._prose`` does): the pattern,
    # tried from every position, cost a tenth of all scrubbing time on code.
    starts = sorted({at for word in _PASSWORD_WORDS for at in find_all(lower, word)})
    out: list[str] = []
    last = 0
    for at in starts:
        if at < last:
            continue
        match = _MIXED_CUE.match(text, at)
        if match is None:
            continue
        value = match.group("value")
        # Another script's word with its digits (the pattern's second shape): its ASCII is
        # only the digits, too few to judge as a draw, so only a placeholder's words stop it.
        other = not value.isascii()
        if (says_placeholder(value) if other else not_a_worded_value(value)) or not take(value):
            continue
        if value.startswith(("http", "$", "%")):
            continue
        counts["password"] += 1
        out += [text[last : match.start("value")], marker("password")]
        last = match.end("value")
    return "".join(out) + text[last:] if out else text


def find_all(text: str, word: str) -> list[int]:
    found: list[int] = []
    at = text.find(word)
    while at >= 0:
        found.append(at)
        at = text.find(word, at + 1)
    return found


__all__ = ["find_all", "mixed_passwords", "word_passwords"]

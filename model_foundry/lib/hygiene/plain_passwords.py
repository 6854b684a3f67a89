"""Plain-word passwords in prose: a value of letters only, which neither the backstop (it is
no random draw) nor the word cues (they want digits, marks or quotes) take.

After a password word of any language the cues know and its verb (``is``, ``c'est``, ``è``,
``on``, ``je``, ``lautet``, ...) or a colon, the rest of the clause is the password when it
is one of these:

- one run of letters joined by ``_`` or ``-`` (``hérisson_éléphant``, ``moonlit-kettle``) or
  a word no common list of :data:`words.LATIN` and :data:`words.MORE` holds (``çilekağacı``,
  ``pöllökuusi``): a made-up word, not ``incorrect`` or ``stored``;
- two to five words said with a remark on how to type them (``gelato alla nocciola, tutto
  minuscolo``; ``..., no spaces``), or each capitalised (``Sparrow Tuesday Pickle``), or two
  to four in lowercase that end the line, none a function word (``girasole blu duemila``);
- a run of single letters, digits or kana spelled out with one separator
  (``M-A-R-Z-I-P-A-N-9-1``, ``ひ・ま・わ・り``, ``1-5-8-9-0-9``) within 80 characters after a
  password's or a code's word.

A colon after an English password word in code (``password: str``, ``password: user_pw``)
is a type or a variable: there, only another script's letters make a value.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Callable

from model_foundry.lib.hygiene.names import DESCRIPTOR_WORDS, WORLD_CUES
from model_foundry.lib.hygiene.placeholders import replace_spans, says_placeholder, word_set
from model_foundry.lib.hygiene.word_passwords import find_all
from model_foundry.lib.words import LATIN, MORE, known_word

_WORLD = tuple(sorted({w.lower() for w, kind in WORLD_CUES if kind == "password"}, key=len))
_ENGLISH = ("password", "passwd", "passphrase", "pw", "pwd", "pass", "code word", "codeword")
# Japanese password words: quoted or bracketed values only (the word passes take the rest).
_JAPANESE = ("パスワード", "パスフレーズ", "暗証番号", "合言葉")
# A bank's or a family's code word, in the languages that say it so.
_CODE_WORDS = ("кодовое слово", "mot de code", "codewort", "kennwort", "palabra clave")
# A phrase's words (a chat app's or a vault's recovery phrase): three to eleven in lowercase
# after its colon; twelve and more are a wallet's (``secrets.seed_phrases``).
_PHRASE_WORDS = ("security phrase", "recovery phrase", "secret phrase", "passphrase")
_LOWER_WORDS = re.compile(r"[a-z]{3,12}(?:[ \t]+[a-z]{3,12}){2,10}")
_ALTERNATIVES = "|".join(map(re.escape, (*_WORLD[::-1], *_CODE_WORDS, *_PHRASE_WORDS, *_ENGLISH)))
_CUE = re.compile(
    rf"(?i)(?<![\w-])(?P<word>{_ALTERNATIVES})"
    # A short phrase saying whose (``della VPN``, ``du Wi-Fi invités,``), then the verb.
    r"(?:[ \t]+[^\s.:;!?=]{1,40}){0,6}?[ \t]*,?[ \t]*"
    # ``est :`` (French puts a blank before its colon); a dash (``кодовое слово — X``).
    r"(?:(?P<verb>c'est|ist|is|was|est|es|è|é|är|er|on|je|jest|là|lautet|adalah|είναι)"
    r"(?:[ \t]+(?:now|currently|temporarily))?[ \t]*:?[ \t]+"
    r"|(?P<colon>[:：—–])[ \t]*)"
)
# Languages that say it without a verb, the word inflected (``modemin şifresi X, büyük harf
# yok``): one word, then a remark on how to type it (``şifre sormaz.`` is a verb).
_BARE = re.compile(
    rf"(?i)(?<![\w-])(?:{'|'.join(map(re.escape, _WORLD[::-1]))})[^\W\d_]{{0,3}}[ \t]+"
    r"(?P<value>[^\W\d_]{6,40}(?:[_-][^\W\d_]{2,40}){0,4})(?=[ \t]*(?:[,;!?\n]|\.(?:\s|$)|$))"
)
# The rest of the clause: up to a comma, a sentence's end, a bracket or the line's end.
_CLAUSE = re.compile(
    r"[^\s\"'«»„“”「」(),.;!?][^\n\"'«»„“”「」(),;!?]{2,60}?"
    r"(?=[ \t]*(?:[,;!?(\n\"'»“”」—]|\.(?:\s|$)|$))"
)
# A word of any alphabet with two digits or more (``σύκο2029``).
_WORD_DIGITS = re.compile(r"[^\W\d_]{3,30}[_.-]?\d{2,8}")
_JOINED = re.compile(r"[^\W\d_]{2,}(?:[_-][^\W\d_]{2,}){1,4}")
_LETTERS = re.compile(r"[^\W\d_]{6,40}")
_TITLE_WORDS = re.compile(r"[A-Z][a-z]{2,15}(?:[ \t]+[A-Z][a-z]{2,15}){1,4}")
_PHRASE = re.compile(r"[^\W\d_]{2,20}(?:[ \t]+[^\W\d_]{1,20}){1,4}")
_LINE_END = re.compile(r"[ \t]*(?:\n|\.(?:\s|$)|!|—|$)")
# A remark on how to type what came before: its case, its spaces, its accents.
_REMARK = re.compile(
    r"(?i)[ \t]*[,(–-]?[ \t]*(?:all |tutto |tout |todo |alles |tudo )?"
    r"(?:lower[ -]?case|upper[ -]?case|capitals?|no spaces?|without spaces|with spaces|one word"
    r"|case[ -]sensitive|minuscol\w*|maiuscol\w*|minúscul\w*|mayúscul\w*|minuscules?"
    r"|majuscules?|klein\w*|groß\w*|küçük harf|büyük harf|małymi|wielkimi|accents?|akzente?"
    r"|có dấu cách|không dấu|viết thường|viết hoa|mit leerzeichen|con espacios|sin espacios"
    r"|com espaços|sem espaços|小文字|大文字|スペースなし|半角|全角)"
)
# Prose after a password's verb: what a password is like, not what it is.
_PROSE = word_set(
    """the that this these those not also only still never always usually often now then
    there here what which where when just very too quite really being either correct right
    same different long short simple easy hard complex secure valid unique visible empty blank
    optional mandatory necessary enough sensitive case known personal incorrect invalid wrong
    expired missing unknown required stored saved changed reset hidden masked generated
    random weak strong protected encrypted hashed shared set"""
)
# A spelled value: 4 or more single characters with one separator between.
_SPELLED = re.compile(
    r"(?<![\w・·.-])(?:[A-Za-z0-9ぁ-ゖァ-ヺ](?P<sep>[-・·. ]))"
    r"(?:[A-Za-z0-9ぁ-ゖァ-ヺ](?P=sep)){2,30}[A-Za-z0-9ぁ-ゖァ-ヺ](?![\w・·-])"
)
# The words before a spelled value (``letter by letter: ...``, ``the PIN is 4-0-7-1``).
_SPELL_WORDS = (
    *("password", "passcode", "pw", "pin", "code", "letter by letter", "one by one", "spell"),
    *("mot de passe", "contraseña", "passwort", "kennwort", "パスワード", "暗証", "一文字ずつ"),
    "コード",
)  # fmt: skip
# A spelled value starts within this many characters after its cue.
_SPELL_BACK = 80
# The cues' words, lower-cased: where the cue patterns are tried.
_CUE_WORDS = (*_WORLD, *_CODE_WORDS, *_PHRASE_WORDS, *_ENGLISH, *_JAPANESE)
# Words of a phrase said plainly (``girasole blu duemila``): none among a language's
# commonest, which prose about a password holds (``on the fridge``, ``not working``).
_FUNCTION_WORDS = 300
_PLAIN_WORDS = re.compile(r"[^\W\d_]{3,20}(?:[ \t]+[^\W\d_]{3,20}){1,3}")


# A value quoted or bracketed a short phrase after another language's password word, the word
# inflected (English code quotes names: ``input('password')``, ``click 'Reset password'``)
# (``Sunucu şifresi: 'X'``, ``비밀번호는 'X' 입니다``, ``パスワードを「X」に変更``); a bracket then
# に, で, です or a sentence's end, not から (a button's name, ``「再設定」から``).
_WORLD_ALTERNATIVES = "|".join(map(re.escape, (*_WORLD[::-1], *_CODE_WORDS, *_JAPANESE)))
_QUOTED = re.compile(
    # Not past a closing bracket: the word stood in another (``「パスワードを表示」「ログイン」``).
    rf"(?i)(?<![\w-])(?:{_WORLD_ALTERNATIVES})[^\W\d_]{{0,3}}[^\n'\"「『«„“」』»”]{{0,24}}?"
    r"(?:(?P<q>['\"«„“])(?P<value>[^\n'\"«»„“”]{3,64}?)['\"»“”]"
    r"|[「『](?P<ja>[^\n「」『』]{2,40})[」』](?=[ \t]*(?:に|で|です|でした|だ|（|\(|、|。|$)))"
)
# ``reset the admin pw to X``, ``changed my password to X``.
_SET_TO = re.compile(
    r"(?i)\b(?:set|reset|changed?|updated?|rotated?)\b[^\n.]{0,30}?"
    r"\b(?:password|passwd|pw|passcode|passphrase)[ \t]+to[ \t]+"
    r"(?P<value>[^\s,;]{6,64}?)(?=[ \t]*(?:[,;!?\n]|\.(?:\s|$)|$|[ \t]+(?:for|and|until|so)\b))"
)
# Digits said as words (``the alarm code is eight three one six five``).
_DIGIT_WORDS = re.compile(
    r"(?i)\b(?:zero|oh|one|two|three|four|five|six|seven|eight|nine)"
    r"(?:[ \t,-]+(?:zero|oh|one|two|three|four|five|six|seven|eight|nine)){3,11}\b"
)


def _taken(value: str, take: Callable[[str], bool]) -> bool:
    """A value found is taken unless it says it is a placeholder or the scrubber allows it."""
    return not says_placeholder(value) and take(value)


def _quoted_value(text: str, at: int, take: Callable[[str], bool]) -> list[tuple[int, int]]:
    quoted = _QUOTED.match(text, at)
    if quoted is None:
        return []
    group = "value" if quoted.group("value") else "ja"
    value = quoted.group(group)
    return [quoted.span(group)] if value.lower() not in _PROSE and _taken(value, take) else []


def _plain(value: str, colon: bool, phrase: bool, remarked: bool, ends_line: bool = False) -> bool:
    """Whether the clause ``value`` after a password's verb or colon is a plain password
    (``remarked``: a remark on how to type it follows; ``ends_line``: its line or sentence
    ends after it)."""
    words = value.split()
    first = re.split(r"[\s_-]", value, maxsplit=1)[0].lower()
    if first in _PROSE or first in DESCRIPTOR_WORDS:
        return False
    if remarked and _PHRASE.fullmatch(value):
        return True
    if len(words) == 1:
        if colon and value.isascii():
            return False  # code's ``password: str``, ``pw: user_pw``
        if _JOINED.fullmatch(value) or _WORD_DIGITS.fullmatch(value):
            return True
        return bool(_LETTERS.fullmatch(value)) and not known_word(value, LATIN + MORE)
    if phrase:  # after its colon only: ``a passphrase of four words is preferred`` is prose
        return colon and _LOWER_WORDS.fullmatch(value) is not None
    if colon:
        return False
    if _TITLE_WORDS.fullmatch(value):
        return True
    return (
        ends_line
        and value.islower()
        and _PLAIN_WORDS.fullmatch(value) is not None
        and not any(known_word(w, LATIN + MORE, _FUNCTION_WORDS) for w in words)
    )


def plain_passwords(text: str, counts: Counter[str], take: Callable[[str], bool]) -> str:
    """Plain-word and spelled-out passwords in prose (see the module)."""
    lower = text.lower()
    if len(lower) != len(text):  # a letter lowered to another length: positions move
        lower = text
    # Tried only where a cue's word starts, as ``word_passwords.mixed_passwords`` does: the
    # patterns, tried from every position, cost more than all the rest of this pass.
    starts = sorted({at for word in _CUE_WORDS for at in find_all(lower, word)})
    spells = sorted(
        {
            at + len(w)
            for w in _SPELL_WORDS
            for at in find_all(lower, w)
            if not (w.isascii() and at and lower[at - 1].isalpha())  # ``unicode``, ``spin``
        }
    )
    if not starts and not spells:
        return text
    spans: list[tuple[int, int]] = []
    for at in starts:
        if (cue := _CUE.match(text, at)) is not None:
            spans += _clause_value(text, cue, take)
        spans += _quoted_value(text, at, take)
        bare = _BARE.match(text, at)
        if bare is not None and _bare_value(text, bare, take):
            spans.append(bare.span("value"))
    if starts and " to " in lower:  # a password word stands in the text
        for found in _SET_TO.finditer(text):
            value = found.group("value")
            if value.lower() not in _PROSE and _taken(value, take):
                spans.append(found.span("value"))
    for end in spells:
        said = _DIGIT_WORDS.match(text, end + len(text[end:]) - len(text[end:].lstrip(" :is")))
        if said is not None and take(said.group(0)):
            spans.append(said.span())
        for spelled in _SPELLED.finditer(text[end : end + _SPELL_BACK]):
            if take(spelled.group(0)):
                spans.append((end + spelled.start(), end + spelled.end()))
    return replace_spans(text, spans, "password", counts)


def _clause_value(
    text: str, cue: re.Match[str], take: Callable[[str], bool]
) -> list[tuple[int, int]]:
    clause = _CLAUSE.match(text, cue.end())
    if clause is None:
        return []
    value = clause.group(0).strip()
    remarked = _REMARK.match(text, clause.end()) is not None
    phrase = cue.group("word").lower() in _PHRASE_WORDS
    ends_line = _LINE_END.match(text, clause.end()) is not None
    plain = _plain(value, cue.group("colon") is not None, phrase, remarked, ends_line)
    if plain and _taken(value, take):
        return [(clause.start(), clause.start() + len(value))]
    return []


def _bare_value(text: str, bare: re.Match[str], take: Callable[[str], bool]) -> bool:
    value = bare.group("value")
    remarked = _REMARK.match(text, bare.end()) is not None
    plain = remarked and _plain(value, colon=False, phrase=False, remarked=False)
    return plain and _taken(value, take)


__all__ = ["plain_passwords"]
